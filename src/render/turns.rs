//! The output of `ctxj turns`: a table of turns fitted to the terminal, or the `ctxj.turns/1`
//! document.

use crate::render::fit::{fit, Column, Layout};
use crate::render::format::{count, money_or_na, thousands};
use crate::render::style::Paint;
use ctxj_core::cache::marks::{Marks, TurnMark};
use ctxj_core::report::turns::{Change, TurnRow};
use ctxj_core::text::escape_line;

/// One turn of `ctxj.turns/1`: the row and its marks (`prompt_tokens`, `over_window`,
/// `recorded_break`) as one flat object.
#[derive(Debug, Clone, serde::Serialize, schemars::JsonSchema)]
pub struct MarkedTurn {
    #[serde(flatten)]
    pub row: TurnRow,
    #[serde(flatten)]
    pub mark: Option<TurnMark>,
}

/// `ctxj turns --format json`: the strategy replayed and one row per turn (the rows of `ndjson`
/// and `csv`).
#[derive(Debug, Clone, serde::Serialize, schemars::JsonSchema)]
pub struct TurnsDoc {
    /// `ctxj.turns/1`.
    pub schema: &'static str,
    pub strategy: String,
    pub turns: Vec<MarkedTurn>,
}

impl TurnsDoc {
    /// The document of `rows`, each with its turn's marks when given.
    pub fn new(strategy: String, rows: Vec<TurnRow>, marks: Option<&Marks>) -> TurnsDoc {
        let turns =
            rows.into_iter().map(|row| MarkedTurn { mark: marks.and_then(|m| m.at(row.turn)).cloned(), row }).collect();
        TurnsDoc { schema: "ctxj.turns/1", strategy, turns }
    }
}

/// `N requests over the 200,000-token context window of M (source)`, when any shown row is.
fn over_window(turns: &[MarkedTurn], marks: Option<&Marks>) -> String {
    let (Some(m), Some(w)) = (marks, marks.and_then(|m| m.limits.window)) else { return String::new() };
    let n = turns.iter().filter(|t| t.mark.as_ref().is_some_and(|m| m.over_window)).count();
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

/// The change column of one turn: how it relates to the previous request, then its marks.
fn change(t: &MarkedTurn, paint: &Paint) -> (String, bool) {
    let mut rewritten = false;
    let change = match &t.row.change {
        Change::First => "first request".to_string(),
        Change::Appended { appended: 0 } => "identical".to_string(),
        Change::Appended { appended } => format!("appended {appended}"),
        Change::Rewritten { block, id, why } => {
            rewritten = true;
            paint.yellow(&format!("prefix rewritten at block {block} ({}): {}", escape_line(id), escape_line(why)))
        }
    };
    let change = match t.mark.as_ref().and_then(|m| m.recorded_break.as_ref()) {
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
    let change = match t.mark.as_ref().filter(|m| m.over_window) {
        Some(m) => format!("{change} · {}", paint.red(&format!("over the window ({})", thousands(m.prompt_tokens)))),
        None => change,
    };
    (change, rewritten)
}

/// The table with its title and the count of rewrites; the marks flag the requests over the
/// context window and, on the recorded replay, the turns where the provider's cache read fell
/// short (the recorded cache breaks). A replayed compaction's summarizer request gets a `Σ` row
/// before its turn. The table fits `layout`: rev goes first, then blocks; the change is cut in
/// the middle.
pub fn text(doc: &TurnsDoc, marks: Option<&Marks>, paint: &Paint, layout: Layout) -> String {
    let columns = [
        Column::number("turn", 0),
        Column::number("rev", 2),
        Column::number("blocks", 1),
        Column::number("chars", 0),
        Column::number("as billed", 0),
        Column::prose("change against the previous request", 0),
    ];
    let mut cells = Vec::with_capacity(doc.turns.len());
    let mut rewrites = 0;
    for t in &doc.turns {
        let r = &t.row;
        if let Some(m) = &r.summarizer {
            let what = format!(
                "summarizer request: {} block(s) + instruction in ({} chars), summary out ({} chars)",
                m.summarized,
                thousands(m.input_chars as u64),
                thousands(m.summary_chars as u64)
            );
            cells.push(vec![format!("{} Σ", r.turn), String::new(), String::new(), String::new(), String::new(), what]);
        }
        let (change, rewritten) = change(t, paint);
        rewrites += usize::from(rewritten);
        cells.push(vec![
            r.turn.to_string(),
            r.rev.to_string(),
            thousands(r.blocks as u64),
            thousands(r.chars as u64),
            t.mark.as_ref().and_then(|m| m.billed_usd).map_or_else(|| "-".into(), crate::render::format::usd),
            change,
        ]);
    }
    // The billed cost is the recorded session's: no column when no turn shown has one.
    let billed = doc.turns.iter().any(|t| t.mark.as_ref().is_some_and(|m| m.billed_usd.is_some()));
    let mut columns = columns.to_vec();
    if !billed {
        columns.remove(4);
        cells.iter_mut().for_each(|c| {
            c.remove(4);
        });
    }
    // Only the breaks of the turns shown (`--at` may narrow the rows).
    let shown = doc.turns.iter().filter(|t| t.mark.as_ref().is_some_and(|m| m.recorded_break.is_some())).count();
    let recorded = if shown == 0 {
        String::new()
    } else {
        format!(" · {} (ctxj cache explains them)", count(shown, "recorded cache break", "recorded cache breaks"))
    };
    let n = doc.turns.len();
    format!(
        "{}\n{}\n{} in {}{recorded}{}\n",
        paint.bold(&format!("strategy {} · {}", escape_line(&doc.strategy), count(n, "turn", "turns"))),
        fit(&columns, &cells, layout),
        count(rewrites, "prefix rewrite", "prefix rewrites"),
        count(n, "turn", "turns"),
        over_window(&doc.turns, marks)
    )
}
