//! The `ctxj sessions` table: one row per session found, side sessions under their parent.

use chrono_tz::Tz;

use crate::render::fit::{fit, Column, Layout};
use crate::render::format::{duration, percent_or_dash, thousands, usd_or_dash, DurationStyle};
use crate::render::style::Paint;
use ctxj_core::text::escape_line;
use ctxj_core::usage::time::instant;
use ctxj_core::usage::SessionSummary;

/// `ctxj sessions --format json`: one entry per session found (the rows of `ndjson` and `csv`).
#[derive(Debug, Clone, serde::Serialize, schemars::JsonSchema)]
pub struct SessionsDoc {
    /// `ctxj.sessions/1`.
    pub schema: &'static str,
    pub sessions: Vec<SessionSummary>,
}

impl SessionsDoc {
    pub fn new(sessions: Vec<SessionSummary>) -> SessionsDoc {
        SessionsDoc { schema: "ctxj.sessions/1", sessions }
    }
}

/// `2026-03-14 11:00` in `tz` (the text as written when it is no RFC 3339 time).
pub fn local_minutes(ts: Option<&str>, tz: Tz) -> String {
    match ts {
        None => "-".into(),
        Some(t) => {
            instant(t).map_or_else(|| escape_line(t), |d| d.with_timezone(&tz).format("%Y-%m-%d %H:%M").to_string())
        }
    }
}

/// The table and its count line; paths are shown relative to the folder among `bases` they are
/// under, side sessions indented (and dim, with colour on) under their parent, a session that could
/// not be read in red; times in `tz`.
pub fn sessions_table(rows: &[SessionSummary], bases: &[String], tz: Tz, layout: Layout, paint: &Paint) -> String {
    let short = |s: &str| {
        bases
            .iter()
            .find_map(|b| s.strip_prefix(b.as_str()).map(|x| x.trim_start_matches('/').to_string()))
            .unwrap_or_else(|| s.to_string())
    };
    let columns = [
        Column::name("session", 0),
        Column::text("start", 0),
        Column::number("duration", 4),
        Column::text("agent", 3),
        Column::prose("models", 5),
        Column::number("turns", 2),
        Column::number("prompt tokens", 0),
        Column::number("cost", 0),
        Column::number("cache hit", 0),
        Column::number("compactions", 6),
        Column::number("side", 1),
    ];
    let mut cells = Vec::new();
    for r in rows {
        let name = match &r.parent {
            Some(_) => paint.dim(&escape_line(&format!(
                "  {} {} ({})",
                if layout.ascii { "-" } else { "└" },
                short(&r.spec),
                r.role
            ))),
            None if r.role == ctxj_core::usage::sessions::USAGE_ONLY => {
                escape_line(&format!("{} ({})", short(&r.spec), r.role))
            }
            None => escape_line(&short(&r.spec)),
        };
        if let Some(e) = &r.error {
            let mut row = vec![name, paint.red(&format!("error: {}", escape_line(e)))];
            row.resize(columns.len(), String::new());
            cells.push(row);
            continue;
        }
        cells.push(vec![
            name,
            local_minutes(r.start.as_deref(), tz),
            r.duration_s.filter(|s| *s >= 0).map_or_else(|| "-".into(), |s| duration(s, DurationStyle::Compact)),
            r.agent.to_string(),
            escape_line(&if r.models.is_empty() {
                r.model.clone().unwrap_or_else(|| "-".into())
            } else {
                r.models.join(", ")
            }),
            thousands(r.turns as u64),
            thousands(r.prompt_tokens),
            usd_or_dash(r.cost_usd),
            percent_or_dash(r.cache_hit),
            r.compactions.to_string(),
            r.side_sessions.to_string(),
        ]);
    }
    format!("{}\n{} session(s); times in {}\n", fit(&columns, &cells, layout), rows.len(), escape_line(tz.name()))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn local_minutes_in_the_zone() {
        let tz: Tz = "Europe/Paris".parse().unwrap();
        assert_eq!(local_minutes(Some("2026-03-14T10:00:47.408Z"), tz), "2026-03-14 11:00");
    }
}
