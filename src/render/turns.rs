//! The output of `ctxj turns`: a table of turns, or a JSON array.

use comfy_table::{Cell, CellAlignment};
use serde::Serialize;

use crate::cache::marks::{Marks, TurnMark};
use crate::render::format::{count, money_or_na, thousands};
use crate::render::style::{table, Paint};
use crate::report::turns::{Change, TurnRow};
use crate::text::escape_line;

/// A row with its marks (`prompt_tokens`, `over_window`, `recorded_break`) as one JSON object.
#[derive(Serialize)]
struct Marked<'a> {
    #[serde(flatten)]
    row: &'a TurnRow,
    #[serde(flatten)]
    mark: Option<&'a TurnMark>,
}

/// The JSON array (one line, no newline); each row carries its turn's marks when given.
pub fn json(rows: &[TurnRow], marks: Option<&Marks>) -> serde_json::Result<String> {
    let marked: Vec<Marked> = rows.iter().map(|row| Marked { row, mark: marks.and_then(|m| m.at(row.turn)) }).collect();
    serde_json::to_string(&marked)
}

/// `N requests over the 200,000-token context window of M (source)`, when any shown row is.
fn over_window(rows: &[TurnRow], marks: Option<&Marks>) -> String {
    let (Some(m), Some(w)) = (marks, marks.and_then(|m| m.limits.window)) else { return String::new() };
    let n = rows.iter().filter(|r| m.at(r.turn).is_some_and(|t| t.over_window)).count();
    if n == 0 {
        return String::new();
    }
    let of = m.limits.model.as_deref().map_or(String::new(), |s| format!(" of {}", escape_line(s)));
    format!(
        " · {} over the {}-token context window{of} ({})",
        count(n, "request", "requests"),
        thousands(w.tokens),
        w.source.describe()
    )
}

/// The table with its title and the count of rewrites; `marks` flag the requests over the
/// context window and, on the recorded replay, the turns where the provider's cache read fell
/// short (the recorded cache breaks).
pub fn text(strategy: &str, rows: &[TurnRow], marks: Option<&Marks>, paint: &Paint) -> String {
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
        let mark = marks.and_then(|m| m.at(r.turn));
        let change = match mark.and_then(|m| m.recorded_break.as_ref()) {
            Some(x) => format!(
                "{change} · {}",
                paint.yellow(&format!(
                    "recorded cache break: {} ({} tokens written again, {})",
                    x.cause.name(),
                    thousands(x.rewritten_tokens),
                    money_or_na(x.cost)
                ))
            ),
            None => change,
        };
        let change = match mark.filter(|m| m.over_window) {
            Some(m) => {
                format!("{change} · {}", paint.red(&format!("over the window ({})", thousands(m.prompt_tokens))))
            }
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
    let shown =
        marks.map_or(0, |m| rows.iter().filter(|r| m.at(r.turn).is_some_and(|t| t.recorded_break.is_some())).count());
    let recorded = if shown == 0 {
        String::new()
    } else {
        format!(" · {} (ctxj cache explains them)", count(shown, "recorded cache break", "recorded cache breaks"))
    };
    format!(
        "{}\n{t}\n{} in {}{recorded}{}\n",
        paint.bold(&format!("strategy {} · {}", escape_line(strategy), count(rows.len(), "turn", "turns"))),
        count(rewrites, "prefix rewrite", "prefix rewrites"),
        count(rows.len(), "turn", "turns"),
        over_window(rows, marks)
    )
}
