//! The `ctxj usage` table: token and cost totals per session, period or model (per-model rows
//! under each with `--breakdown`), then notes on what the totals leave out.

use std::fmt::Write as _;

use crate::render::fit::{fit, Column, Layout};
use crate::render::format::{percent_or_dash, thousands, usd};
use ctxj_core::text::escape_line;
use ctxj_core::usage::{Row, UsageReport};

fn cost_cell(row: &Row) -> String {
    match (row.cost_usd, row.unpriced_calls) {
        // A gap between billing blocks: nothing to price.
        (None, _) if row.calls == 0 => "-".to_string(),
        (None, _) => "?".to_string(),
        (Some(v), 0) => usd(v),
        (Some(v), _) => format!("{}*", usd(v)),
    }
}

fn cells(row: &Row, key: String, by_model: bool) -> Vec<String> {
    vec![
        key,
        escape_line(&row.agents.join(",")),
        if by_model { "-".into() } else { escape_line(&row.models.join(", ")) },
        thousands(row.calls as u64),
        thousands(row.tokens.input),
        thousands(row.tokens.output),
        thousands(row.tokens.cache_creation),
        thousands(row.tokens.cache_read),
        thousands(row.total_tokens),
        cost_cell(row),
        percent_or_dash(row.cache_hit),
        if by_model { "-".into() } else { row.compactions.to_string() },
    ]
}

/// A billing window in `tz`: `2026-03-14 10:00–15:00`, `(active)` while open; a gap as
/// `(no calls) 15:20–2026-03-15 09:00`.
fn block_key(b: &ctxj_core::usage::report::BlockInfo, tz: chrono_tz::Tz) -> String {
    let local = |t: &str| crate::render::sessions::local_minutes(Some(t), tz);
    let (start, end) = (local(&b.start), local(&b.end));
    let end = match (start.split_once(' '), end.split_once(' ')) {
        (Some((d1, _)), Some((d2, hm))) if d1 == d2 => hm.to_string(),
        _ => end,
    };
    match (b.gap, b.active) {
        (true, _) => format!("(no calls) {start}–{end}"),
        (false, true) => format!("{start}–{end} (active)"),
        (false, false) => format!("{start}–{end}"),
    }
}

/// `columns` and `rows` without the column headed `header`.
fn without(columns: &[Column], rows: Vec<Vec<String>>, header: &str) -> (Vec<Column>, Vec<Vec<String>>) {
    let Some(i) = columns.iter().position(|c| c.header == header) else { return (columns.to_vec(), rows) };
    let mut columns = columns.to_vec();
    columns.remove(i);
    let rows = rows
        .into_iter()
        .map(|mut r| {
            if i < r.len() {
                r.remove(i);
            }
            r
        })
        .collect();
    (columns, rows)
}

/// The table (rows, per-model rows under each with `--breakdown`, then the totals row) and its
/// notes, fitted to `layout`.
pub fn usage_table(r: &UsageReport, layout: Layout, with_cost: bool) -> String {
    let first = match r.by {
        "session" => "session",
        "project" => "project",
        "block" => "block",
        "week" => "week of",
        "month" => "month",
        "model" => "model",
        _ => "day",
    };
    let columns = [
        if matches!(r.by, "session" | "project" | "block") { Column::name(first, 0) } else { Column::text(first, 0) },
        Column::text("agent", 3),
        Column::prose("models", 5),
        Column::number("calls", 4),
        Column::number("input", 0),
        Column::number("output", 0),
        Column::number("cache write", 2),
        Column::number("cache read", 1),
        Column::number("total tokens", 0),
        Column::number("cost", 0),
        Column::number("cache hit", 0),
        Column::number("compactions", 6),
    ];
    let by_model = r.by == "model";
    let tz: chrono_tz::Tz = r.timezone.parse().unwrap_or(chrono_tz::Tz::UTC);
    let mut rows = Vec::new();
    for row in &r.rows {
        let key = match &row.block {
            Some(b) => block_key(b, tz),
            None => escape_line(&row.key),
        };
        rows.push(cells(row, key, by_model));
        for sub in &row.breakdown {
            let mark = if layout.ascii { "-" } else { "└" };
            rows.push(cells(sub, format!("  {mark} {}", escape_line(&sub.key)), true));
        }
    }
    rows.push(cells(&r.totals, "total".into(), by_model));
    let (columns, rows) = if with_cost { (columns.to_vec(), rows) } else { without(&columns, rows, "cost") };
    let mut out = fit(&columns, &rows, layout);
    let _ = writeln!(
        out,
        "\n{} file(s), {} duplicate(s) counted once; dates in {}",
        r.files.len(),
        r.duplicates,
        escape_line(&r.timezone)
    );
    for u in &r.unreadable {
        let _ = writeln!(
            out,
            "! not read (counted as nothing): {}: {}",
            escape_line(&u.path.display().to_string()),
            escape_line(&u.why)
        );
    }
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
    if r.totals.double_counted_cache > 0 {
        let _ = writeln!(
            out,
            "{} cache token(s) are counted twice, as ccusage does: the agent's input already includes them \
             (Qwen, Cline, Codebuff; `double_counted_cache` in JSON)",
            thousands(r.totals.double_counted_cache)
        );
    }
    if r.totals.extra_tokens > 0 {
        let _ = writeln!(
            out,
            "total tokens include {} reasoning/thought token(s) reported apart, priced as output",
            thousands(r.totals.extra_tokens)
        );
    }
    out
}
