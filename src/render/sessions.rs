//! The `ctxj sessions` table: one row per session found under a folder.

use crate::render::format::thousands;
use crate::render::style::table;
use crate::text::escape_line;
use crate::usage::SessionSummary;

/// The table and its count line; paths are shown relative to `base` (the folder searched), side
/// sessions indented under their parent.
pub fn sessions_table(rows: &[SessionSummary], base: &str) -> String {
    let short = |s: &str| s.strip_prefix(base).map(|x| x.trim_start_matches('/')).unwrap_or(s).to_string();
    let mut t = table(&["session", "format", "start", "model", "turns", "prompt tok", "cached", "compactions", "side"]);
    for r in rows {
        let name = match &r.parent {
            Some(_) => format!("  └ {} ({})", short(&r.spec), r.role),
            None => short(&r.spec),
        };
        if let Some(e) = &r.error {
            let mut row = vec![escape_line(&name), r.format.to_string(), format!("error: {}", escape_line(e))];
            row.resize(9, String::new());
            t.add_row(row);
            continue;
        }
        t.add_row(vec![
            escape_line(&name),
            r.format.to_string(),
            escape_line(r.start.as_deref().unwrap_or("-")),
            escape_line(r.model.as_deref().unwrap_or("-")),
            thousands(r.turns as u64),
            thousands(r.prompt_tokens),
            r.cached_share.map_or("-".into(), |x| format!("{:.1}%", x * 100.0)),
            r.compactions.to_string(),
            r.side_sessions.to_string(),
        ]);
    }
    format!("{t}\n{} session(s)\n", rows.len())
}
