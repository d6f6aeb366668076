//! The output of `ctxj cache`: the heading, the prices line, one row per strategy, the recorded
//! hit rate, the first cache breaks explained and, with `--per-turn`, a table per strategy; or
//! all of it as JSON.

use std::fmt::Write as _;

use comfy_table::{Cell, CellAlignment, Table};
use serde_json::json;

use crate::cache::{CacheModel, Comparison, Simulation};
use crate::journal::Journal;
use crate::render::format::{money_or_na as money, percent, thousands};
use crate::render::style::{table, Paint};
use crate::text::escape_line;

/// What to show besides the summary.
#[derive(Debug, Clone, Copy)]
pub struct Shown {
    /// The per-turn tables (and per-turn figures in JSON).
    pub per_turn: bool,
    /// How many cache breaks to explain per strategy.
    pub breaks: usize,
}

/// The JSON object of `ctxj cache --json`.
pub fn json(c: &Comparison, shown: Shown) -> serde_json::Value {
    let p = &c.pricing;
    json!({
        "model": p.slug,
        "cache": p.cache,
        "cache_from_slug": p.cache_from_slug,
        "encoding": c.encoding.name(),
        "memo": { "hits": c.memo.hits, "misses": c.memo.misses, "hit_rate": c.memo.hit_rate(),
                  "bytes_tokenized": c.memo.bytes_tokenized, "stored": c.memo.stored },
        "recorded": c.billed,
        "prices": { "source": p.table.source, "model": p.priced.as_ref().map(|(n, _)| n), "price": p.priced.as_ref().map(|(_, p)| p) },
        "strategies": c.sims.iter().map(|s| json!({
            "summary": s.summary,
            "cost_vs_baseline": c.vs_baseline(s),
            "breaks": s.breaks,
            "turns": if shown.per_turn { json!(s.turns) } else { serde_json::Value::Null },
        })).collect::<Vec<_>>(),
    })
}

/// The human output of `ctxj cache`.
pub fn text(c: &Comparison, journal: &Journal, shown: Shown, paint: &Paint) -> String {
    let mut out = heading(c, journal, paint);
    out.push_str(&prices_line(c));
    let _ = writeln!(out, "{}", summary_table(c));
    out.push_str(&recorded_rate(c));
    out.push_str(&super::cache_billed::line(&c.billed));
    for s in &c.sims {
        out.push_str(&breaks(s, shown.breaks, paint));
    }
    out.push_str(&super::cache_billed::breaks(&c.billed, shown.breaks, paint));
    if shown.per_turn {
        for s in &c.sims {
            let _ = writeln!(out, "\n{} — per turn:", paint.bold(&escape_line(&s.summary.strategy)));
            let _ = writeln!(out, "{}", per_turn_table(s, anthropic(c)));
        }
        // The footnote explains the "~" mark, so only when a row carries one.
        if c.sims.iter().any(|s| s.turns.iter().any(|t| !t.output_recorded)) {
            out.push_str("(~ = output estimated from the assistant block; no completion_tokens recorded)\n");
        }
    }
    out
}

fn anthropic(c: &Comparison) -> bool {
    c.pricing.cache == CacheModel::Anthropic
}

fn right(s: String) -> Cell {
    Cell::new(s).set_alignment(CellAlignment::Right)
}

fn heading(c: &Comparison, journal: &Journal, paint: &Paint) -> String {
    format!(
        "{} · {} · cache {}{} · {}\n",
        paint.bold(&escape_line(&journal.session().map(|s| s.id.clone()).unwrap_or_default())),
        super::format::count(journal.turns.len(), "turn", "turns"),
        c.pricing.cache,
        if c.pricing.cache_from_slug { " (from the model slug)" } else { "" },
        c.encoding
    )
}

fn prices_line(c: &Comparison) -> String {
    let p = &c.pricing;
    match (&p.priced, p.slug.as_deref()) {
        (Some((n, price)), slug) => format!(
            "prices: {} as {} ({}): input ${}/M, cached ${}/M, write {}, output ${}/M\n",
            escape_line(slug.unwrap_or("")),
            escape_line(n),
            escape_line(&p.table.source),
            price.input,
            price.cached_rate(),
            if anthropic(c) { format!("${}/M", price.write_rate()) } else { "–".to_string() },
            price.output
        ),
        (None, Some(s)) => format!(
            "prices: no price for {} in the {} (pass --model or --prices); costs n/a\n",
            escape_line(s),
            escape_line(&p.table.source)
        ),
        (None, None) => "prices: the journal records no model (pass --model); costs n/a\n".to_string(),
    }
}

/// Inserts the cache-write column (Anthropic only) at `at`.
fn with_write<T>(mut v: Vec<T>, at: usize, write: Option<T>) -> Vec<T> {
    if let Some(w) = write {
        v.insert(at, w);
    }
    v
}

fn summary_table(c: &Comparison) -> Table {
    let anth = anthropic(c);
    let header =
        ["strategy", "turns", "peak prompt", "new input", "cached input", "hit rate", "cost", "vs baseline", "breaks"];
    let mut t = table(&with_write(header.to_vec(), 5, anth.then_some("cache write")));
    for s in &c.sims {
        let m = &s.summary;
        let row = vec![
            Cell::new(escape_line(&m.strategy)),
            right(thousands(m.turns as u64)),
            right(thousands(m.peak_prompt)),
            right(thousands(m.new)),
            right(thousands(m.cached)),
            right(percent(m.hit_rate)),
            right(money(m.cost)),
            right(c.vs_baseline(s).map_or_else(|| "n/a".into(), |r| format!("{r:.2}×"))),
            right(thousands(m.breaks as u64)),
        ];
        t.add_row(with_write(row, 5, anth.then(|| right(thousands(m.write)))));
    }
    if let Some(row) = super::cache_billed::row(c, anth) {
        t.add_row(row);
    }
    t
}

fn recorded_rate(c: &Comparison) -> String {
    let Some(first) = c.sims.first().filter(|s| s.summary.recorded_hit_rate.is_some()) else {
        return String::new();
    };
    let m = &first.summary;
    let same: Vec<String> = (c.sims.iter())
        .filter_map(|s| {
            s.summary
                .simulated_hit_rate_same_turns
                .map(|r| format!("{} {}", escape_line(&s.summary.strategy), percent(r)))
        })
        .collect();
    format!(
        "recorded hit rate (usage.cached_tokens, {} turns): {} · simulated on the same turns: {}\n",
        m.recorded_turns,
        percent(m.recorded_hit_rate.unwrap_or(0.0)),
        same.join(", ")
    )
}

fn breaks(s: &Simulation, n: usize, paint: &Paint) -> String {
    if s.breaks.is_empty() || n == 0 {
        return String::new();
    }
    let mut out = format!("\n{} — cache breaks ({}):\n", paint.bold(&escape_line(&s.summary.strategy)), s.breaks.len());
    for b in s.breaks.iter().take(n) {
        let _ = writeln!(
            out,
            "  turn {}: prefix diverged at block {} ({}): {}",
            b.turn,
            b.block,
            escape_line(&b.was.to_string()),
            escape_line(&b.reason)
        );
    }
    if s.breaks.len() > n {
        let _ = writeln!(out, "  … {} more (--breaks N)", s.breaks.len() - n);
    }
    out
}

fn per_turn_table(s: &Simulation, anth: bool) -> Table {
    let h = ["turn", "prompt", "cached", "new", "output", "cost", "break"];
    let mut t = table(&with_write(h.to_vec(), 4, anth.then_some("write")));
    for x in &s.turns {
        let row = vec![
            right(x.turn.to_string()),
            right(thousands(x.prompt)),
            right(thousands(x.cached)),
            right(thousands(x.new)),
            right(format!("{}{}", thousands(x.output), if x.output_recorded { "" } else { "~" })),
            right(money(x.cost)),
            Cell::new(if x.is_break { "break" } else { "" }),
        ];
        t.add_row(with_write(row, 4, anth.then(|| right(thousands(x.write)))));
    }
    let m = &s.summary;
    let row = vec![
        Cell::new("total"),
        right(thousands(m.prompt)),
        right(thousands(m.cached)),
        right(thousands(m.new)),
        right(thousands(m.output)),
        right(money(m.cost)),
        Cell::new(format!("{}", m.breaks)),
    ];
    t.add_row(with_write(row, 4, anth.then(|| right(thousands(m.write)))));
    t
}
