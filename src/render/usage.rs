//! The `ctxj usage` table: token and cost totals per session, day or model, then notes on what
//! the totals leave out.

use std::fmt::Write as _;

use crate::render::format::thousands;
use crate::render::style::table;
use crate::text::escape_line;
use crate::usage::{By, UsageReport};

/// The table (rows then the totals row) and its notes.
pub fn usage_table(r: &UsageReport, by: By) -> String {
    let first = match by {
        By::Session => "session",
        By::Day => "day (UTC)",
        By::Model => "model",
    };
    let mut t = table(&[
        first,
        "calls",
        "input",
        "output",
        "cache create",
        "cache read",
        "total",
        "cost $",
        "cache hit",
        "compactions",
    ]);
    let pct = |x: Option<f64>| x.map_or("-".to_string(), |v| format!("{:.1}%", v * 100.0));
    let usd = |x: Option<f64>, unpriced: usize| match (x, unpriced) {
        (None, _) => "?".to_string(),
        (Some(v), 0) => format!("{v:.2}"),
        (Some(v), _) => format!("{v:.2}*"),
    };
    for row in r.rows.iter().chain(std::iter::once(&r.totals)) {
        t.add_row(vec![
            escape_line(&row.key),
            thousands(row.entries as u64),
            thousands(row.tokens.input),
            thousands(row.tokens.output),
            thousands(row.tokens.cache_creation),
            thousands(row.tokens.cache_read),
            thousands(row.total_tokens),
            usd(row.cost_usd, row.unpriced_calls),
            pct(row.cache_hit_rate),
            if by == By::Model { "-".into() } else { row.compactions.to_string() },
        ]);
    }
    let mut out = format!("{t}\n{} file(s), {} duplicate line(s) counted once\n", r.files.len(), r.duplicates);
    if !r.unpriced.is_empty() {
        let _ = writeln!(
            out,
            "* leaves out {} call(s) of models without a price: {}",
            r.totals.unpriced_calls,
            escape_line(&r.unpriced.join(", "))
        );
    }
    if !r.totals.not_counted_by_ccusage.is_zero() {
        let _ = writeln!(
            out,
            "{} token(s) come from lines written with a space after the colon, which ccusage does not count",
            thousands(r.totals.not_counted_by_ccusage.total())
        );
    }
    out
}
