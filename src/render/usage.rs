//! The `ctxj usage` table: token and cost totals per session, period or model (per-model rows
//! under each with `--breakdown`), then notes on what the totals leave out.

use std::io::{self, Write};

use crate::render::fit::{fit_to, Column, Layout};
use crate::render::format::{percent_or_dash, thousands, usd};
use crate::render::style::Paint;
use ctxj_core::text::escape_line;
use ctxj_core::usage::{Row, UsageReport};

/// The cost of `row`; an unknown (`?`) or partial (`*`) cost in yellow.
fn cost_cell(row: &Row, paint: &Paint) -> String {
    match (row.cost_usd, row.unpriced_calls) {
        // A gap between billing blocks: nothing to price.
        (None, _) if row.calls == 0 => "-".to_string(),
        (None, _) => paint.yellow("?"),
        (Some(v), 0) => usd(v),
        (Some(v), _) => paint.yellow(&format!("{}*", usd(v))),
    }
}

fn cells(row: &Row, key: String, by_model: bool, paint: &Paint) -> Vec<String> {
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
        cost_cell(row, paint),
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

/// The table (rows, per-model rows under each with `--breakdown`, then the totals row) and its
/// notes, fitted to `layout`, as a string ([`write_usage_table`]).
pub fn usage_table(r: &UsageReport, layout: Layout, with_cost: bool, paint: &Paint) -> String {
    let mut out = Vec::new();
    write_usage_table(r, layout, with_cost, paint, &mut out).expect("writing to memory does not fail");
    String::from_utf8(out).expect("the table is UTF-8")
}

/// Writes the table and its notes to `out`, streamed: the cells of a row are made when the table
/// needs them (`fit::fit_to`), so 50,000 sessions hold no 600,000 cells (issue 31). With colour on,
/// the totals row is bold, per-model rows are dim, unknown costs and the notes on what the totals
/// leave out are yellow and unreadable files red.
pub fn write_usage_table(
    r: &UsageReport,
    layout: Layout,
    with_cost: bool,
    paint: &Paint,
    out: &mut dyn Write,
) -> io::Result<()> {
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
    let cost_at = (!with_cost).then(|| columns.iter().position(|c| c.header == "cost")).flatten();
    let shown: Vec<Column> = columns.iter().enumerate().filter(|&(i, _)| Some(i) != cost_at).map(|(_, c)| *c).collect();
    let source = |f: &mut dyn FnMut(Vec<String>)| {
        let mut emit = |mut cells: Vec<String>| {
            if let Some(i) = cost_at {
                cells.remove(i);
            }
            f(cells)
        };
        for row in &r.rows {
            let key = match &row.block {
                Some(b) => block_key(b, tz),
                None => escape_line(&row.key),
            };
            emit(cells(row, key, by_model, paint));
            for sub in &row.breakdown {
                let mark = if layout.ascii { "-" } else { "└" };
                emit(cells(sub, paint.dim(&format!("  {mark} {}", escape_line(&sub.key))), true, paint));
            }
        }
        emit(cells(&r.totals, paint.bold("total"), by_model, paint));
    };
    fit_to(&shown, &source, layout, out)?;
    writeln!(
        out,
        "\n{} file(s), {} duplicate(s) counted once; dates in {}",
        r.files.len(),
        r.duplicates,
        escape_line(&r.timezone)
    )?;
    for u in &r.unreadable {
        let line = format!(
            "! not read (counted as nothing): {}: {}",
            escape_line(&u.path.display().to_string()),
            escape_line(&u.why)
        );
        writeln!(out, "{}", paint.red(&line))?;
    }
    if !r.unpriced.is_empty() {
        let line = format!(
            "* leaves out {} call(s) of models without a price: {}",
            r.totals.unpriced_calls,
            escape_line(&r.unpriced.join(", "))
        );
        writeln!(out, "{}", paint.yellow(&line))?;
    }
    if !r.totals.not_counted_by_ccusage.is_zero() {
        writeln!(
            out,
            "{} token(s) come from lines written with a space after the colon, which ccusage does not count",
            thousands(r.totals.not_counted_by_ccusage.total())
        )?;
    }
    if r.totals.double_counted_cache > 0 {
        writeln!(
            out,
            "{} cache token(s) are counted twice, as ccusage does: the agent's input already includes them \
             (Qwen, Cline, Codebuff; `double_counted_cache` in JSON)",
            thousands(r.totals.double_counted_cache)
        )?;
    }
    if r.totals.extra_tokens > 0 {
        writeln!(
            out,
            "total tokens include {} token(s) reported apart from the four counts (reasoning, thoughts, \
             a recorded total above them), priced as output except pi's, as ccusage does",
            thousands(r.totals.extra_tokens)
        )?;
    }
    Ok(())
}
