//! The output of `ctxj turns`: a table of turns, or a JSON array.

use comfy_table::{Cell, CellAlignment};

use crate::cache::Billed;
use crate::render::format::{count, thousands};
use crate::render::style::{table, Paint};
use crate::report::turns::{Change, TurnRow};
use crate::text::escape_line;

/// The JSON array (one line, no newline).
pub fn json(rows: &[TurnRow]) -> serde_json::Result<String> {
    serde_json::to_string(rows)
}

/// The table with its title and the count of rewrites; `billed` (the recorded replay of a
/// journal with usage) marks the turns where the provider's cache read fell short.
pub fn text(strategy: &str, rows: &[TurnRow], billed: Option<&Billed>, paint: &Paint) -> String {
    let mut t = table(&["turn", "rev", "blocks", "chars", "change against the previous request"]);
    let mut rewrites = 0;
    let right = |s: String| Cell::new(s).set_alignment(CellAlignment::Right);
    for r in rows {
        if let Some(m) = &r.summarizer {
            let what = format!(
                "summarizer request: {} block(s) + instruction in ({} chars), summary out ({} chars)",
                m.summarized,
                thousands(m.input_chars as u64),
                thousands(m.summary_chars as u64)
            );
            t.add_row(vec![
                right(format!("{} Σ", r.turn)),
                right(String::new()),
                right(String::new()),
                right(String::new()),
                Cell::new(what),
            ]);
        }
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
        t.add_row(vec![
            right(r.turn.to_string()),
            right(r.rev.to_string()),
            right(r.blocks.to_string()),
            right(thousands(r.chars as u64)),
            Cell::new(change),
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
        "{}\n{t}\n{} in {}{recorded}\n",
        paint.bold(&format!("strategy {} · {}", escape_line(strategy), count(rows.len(), "turn", "turns"))),
        count(rewrites, "prefix rewrite", "prefix rewrites"),
        count(rows.len(), "turn", "turns")
    )
}
