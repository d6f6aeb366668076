//! The output of `ctxj turns`: a table of turns fitted to the terminal, or the `ctxj.turns/1`
//! document.

use crate::cache::Billed;
use crate::render::fit::{fit, Column, Layout};
use crate::render::format::{count, thousands};
use crate::render::style::Paint;
use crate::report::turns::{Change, TurnRow};
use crate::text::escape_line;

/// `ctxj turns --format json`: the strategy replayed and one row per turn (the rows of `ndjson`
/// and `csv`).
#[derive(Debug, Clone, serde::Serialize, schemars::JsonSchema)]
pub struct TurnsDoc {
    /// `ctxj.turns/1`.
    pub schema: &'static str,
    pub strategy: String,
    pub turns: Vec<TurnRow>,
}

impl TurnsDoc {
    pub fn new(strategy: String, turns: Vec<TurnRow>) -> TurnsDoc {
        TurnsDoc { schema: "ctxj.turns/1", strategy, turns }
    }
}

/// The table with its title and the count of rewrites; `billed` (the recorded replay of a
/// journal with usage) marks the turns where the provider's cache read fell short.
/// The table fits `layout`: rev goes first, then blocks; the change is cut in the middle.
pub fn text(strategy: &str, rows: &[TurnRow], billed: Option<&Billed>, paint: &Paint, layout: Layout) -> String {
    let columns = [
        Column::number("turn", 0),
        Column::number("rev", 2),
        Column::number("blocks", 1),
        Column::number("chars", 0),
        Column::text("change against the previous request", 0),
    ];
    let mut cells = Vec::with_capacity(rows.len());
    let mut rewrites = 0;
    for r in rows {
        let change = match &r.change {
            Change::First => "first request".to_string(),
            Change::Appended { appended: 0 } => "identical".to_string(),
            Change::Appended { appended } => format!("appended {appended}"),
            Change::Rewritten { block, id, why } => {
                rewrites += 1;
                paint.yellow(&format!("prefix rewritten at block {block} ({}): {}", escape_line(id), escape_line(why)))
            }
        };
        let change = match billed.and_then(|b| b.break_at(r.turn)) {
            Some(x) => format!(
                "{change} · {}",
                paint.yellow(&format!(
                    "recorded cache break: {} ({} tokens written again)",
                    x.cause.name(),
                    thousands(x.rewritten_tokens)
                ))
            ),
            None => change,
        };
        cells.push(vec![
            r.turn.to_string(),
            r.rev.to_string(),
            thousands(r.blocks as u64),
            thousands(r.chars as u64),
            change,
        ]);
    }
    // Only the breaks of the turns shown (`--at` may narrow the rows).
    let shown = billed.map_or(0, |b| rows.iter().filter(|r| b.break_at(r.turn).is_some()).count());
    let recorded = if shown == 0 {
        String::new()
    } else {
        format!(" · {} (ctxj cache explains them)", count(shown, "recorded cache break", "recorded cache breaks"))
    };
    format!(
        "{}\n{}\n{} in {}{recorded}\n",
        paint.bold(&format!("strategy {} · {}", escape_line(strategy), count(rows.len(), "turn", "turns"))),
        fit(&columns, &cells, layout),
        count(rewrites, "prefix rewrite", "prefix rewrites"),
        count(rows.len(), "turn", "turns")
    )
}
