//! The output of `ctxj cache`: the heading, the prices line, one row per strategy, the recorded
//! hit rate, the first cache breaks explained and, with `--per-turn`, a table per strategy; or
//! all of it as JSON.

use std::fmt::Write as _;

use serde::Serialize;

use crate::render::cache_wire::{BilledDoc, CacheBreakDoc};
use crate::render::cache_words::divergence;
use crate::render::fit::{fit, Column, Layout};
use crate::render::format::{money_or_na as money, percent, thousands};
use crate::render::style::Paint;
use ctxj_core::cache::billed::Billed;
use ctxj_core::cache::{CacheModel, Comparison, Limits, Price, Simulation, Summary, TurnFigures};
use ctxj_core::journal::Journal;
use ctxj_core::text::escape_line;

/// What to show besides the summary.
#[derive(Debug, Clone, Copy)]
pub struct Shown {
    /// The per-turn tables (and per-turn figures in JSON).
    pub per_turn: bool,
    /// How many cache breaks to explain per strategy.
    pub breaks: usize,
}

/// `ctxj cache --format json`: the pricing, the session as billed and one entry per strategy.
#[derive(Debug, Clone, Serialize, schemars::JsonSchema)]
pub struct CacheDoc {
    /// `ctxj.cache/1`.
    pub schema: &'static str,
    /// The model slug priced, if any.
    pub model: Option<String>,
    pub cache: CacheModel,
    pub cache_from_slug: bool,
    pub encoding: String,
    pub memo: MemoDoc,
    /// The session as the provider billed it.
    pub recorded: BilledDoc,
    /// What every simulated strategy shares with the provider's record: each turn's model, the
    /// recorded cache losses replayed (`--provider-breaks`), the lifetime the provider showed.
    pub environment: ctxj_core::cache::EnvironmentSummary,
    /// The context window and cache minimum the requests were checked against.
    pub limits: Limits,
    pub prices: PricesDoc,
    pub strategies: Vec<StrategyDoc>,
}

/// The tokenizer memo's figures.
#[derive(Debug, Clone, Serialize, schemars::JsonSchema)]
pub struct MemoDoc {
    pub hits: u64,
    pub misses: u64,
    pub hit_rate: f64,
    pub bytes_tokenized: u64,
    /// Answers that came from the persistent token memo of earlier runs.
    pub stored: u64,
}

/// The price table used and the slug's entry in it.
#[derive(Debug, Clone, Serialize, schemars::JsonSchema)]
pub struct PricesDoc {
    pub source: String,
    pub model: Option<String>,
    pub price: Option<Price>,
}

/// One strategy: its summary, its cost against baseline, its cache breaks and (`--per-turn`) its
/// turns.
#[derive(Debug, Clone, Serialize, schemars::JsonSchema)]
pub struct StrategyDoc {
    pub summary: Summary,
    pub cost_vs_baseline: Option<f64>,
    pub breaks: Vec<CacheBreakDoc>,
    /// `null` without `--per-turn`.
    pub turns: Option<Vec<TurnFigures>>,
}

/// A row of `cache --format ndjson|csv`: a strategy's summary (without `--per-turn`).
#[derive(Debug, Clone, Serialize, schemars::JsonSchema)]
pub struct CacheRow {
    #[serde(flatten)]
    pub summary: Summary,
    pub cost_vs_baseline: Option<f64>,
}

/// A row of `cache --per-turn --format ndjson|csv`: one turn of one strategy.
#[derive(Debug, Clone, Serialize, schemars::JsonSchema)]
pub struct CacheTurnRow {
    pub strategy: String,
    #[serde(flatten)]
    pub turn: TurnFigures,
}

/// The document of `ctxj cache`.
pub fn doc(c: &Comparison, shown: Shown) -> CacheDoc {
    let p = &c.pricing;
    CacheDoc {
        schema: "ctxj.cache/1",
        model: p.slug.clone(),
        cache: p.cache,
        cache_from_slug: p.cache_from_slug,
        encoding: c.encoding.name().to_string(),
        memo: MemoDoc {
            hits: c.memo.hits,
            misses: c.memo.misses,
            hit_rate: c.memo.hit_rate(),
            bytes_tokenized: c.memo.bytes_tokenized,
            stored: c.memo.stored,
        },
        recorded: BilledDoc::from(&c.billed),
        environment: c.environment.clone(),
        limits: p.limits.clone(),
        prices: PricesDoc {
            source: p.table.source.clone(),
            model: p.priced.as_ref().map(|(n, _)| n.clone()),
            price: p.priced.as_ref().map(|(_, p)| *p),
        },
        strategies: (c.sims.iter())
            .map(|s| StrategyDoc {
                summary: s.summary.clone(),
                cost_vs_baseline: c.vs_baseline(s),
                breaks: s.breaks.iter().map(CacheBreakDoc::from).collect(),
                turns: shown.per_turn.then(|| s.turns.clone()),
            })
            .collect(),
    }
}

/// The summary rows (one per strategy).
pub fn rows(d: &CacheDoc) -> Vec<CacheRow> {
    (d.strategies.iter())
        .map(|s| CacheRow { summary: s.summary.clone(), cost_vs_baseline: s.cost_vs_baseline })
        .collect()
}

/// The per-turn rows (every turn of every strategy, in order).
pub fn turn_rows(d: &CacheDoc) -> Vec<CacheTurnRow> {
    (d.strategies.iter())
        .flat_map(|s| {
            let name = &s.summary.strategy;
            s.turns.iter().flatten().map(|t| CacheTurnRow { strategy: name.clone(), turn: t.clone() })
        })
        .collect()
}

/// The human output of `ctxj cache`.
pub fn text(c: &Comparison, journal: &Journal, shown: Shown, paint: &Paint, layout: Layout) -> String {
    let mut out = heading(c, journal, paint);
    out.push_str(&prices_line(c));
    let _ = writeln!(out, "{}", summary_table(c, layout));
    out.push_str(&recorded_rate(c));
    out.push_str(&summarizer_lines(c));
    out.push_str(&super::cache_billed::line(&c.billed));
    out.push_str(&super::cache_billed::environment(&c.environment));
    out.push_str(&super::cache_limits::lines(c, paint));
    for s in &c.sims {
        out.push_str(&breaks(s, shown.breaks, paint));
    }
    out.push_str(&super::cache_billed::breaks(&c.billed, shown.breaks, paint));
    if shown.per_turn {
        for s in &c.sims {
            let _ = writeln!(out, "\n{} — per turn:", paint.bold(&escape_line(&s.summary.strategy)));
            let _ = writeln!(out, "{}", per_turn_table(s, &c.billed, anthropic(c), layout));
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

/// "1.23×", or "n/a".
pub(super) fn ratio(r: Option<f64>) -> String {
    r.map_or_else(|| "n/a".into(), |r| format!("{r:.2}×"))
}

fn summary_table(c: &Comparison, layout: Layout) -> String {
    let anth = anthropic(c);
    let columns = [
        Column::text("strategy", 0),
        Column::number("turns", 5),
        Column::number("peak prompt", 3),
        Column::number("new input", 0),
        Column::number("cache read", 0),
        Column::number("cache write", 4),
        Column::number("cache hit", 0),
        Column::number("cost", 0),
        Column::number("vs baseline", 2),
        Column::number("breaks", 1),
    ];
    let mut rows: Vec<Vec<String>> = (c.sims.iter())
        .map(|s| {
            let m = &s.summary;
            vec![
                escape_line(&m.strategy),
                thousands(m.turns as u64),
                thousands(m.peak_prompt),
                thousands(m.new),
                thousands(m.cached),
                thousands(m.write),
                percent(m.hit_rate),
                money(m.cost),
                ratio(c.vs_baseline(s)),
                thousands(m.breaks as u64),
            ]
        })
        .collect();
    rows.extend(super::cache_billed::row(c));
    without_write(&columns, rows, anth, 5, layout)
}

/// The table of `columns`, without the cache-write column at `write` unless the model has cache
/// writes (Anthropic).
fn without_write(columns: &[Column], mut rows: Vec<Vec<String>>, anth: bool, write: usize, layout: Layout) -> String {
    let mut columns = columns.to_vec();
    if !anth {
        columns.remove(write);
        rows.iter_mut().for_each(|r| {
            r.remove(write);
        });
    }
    fit(&columns, &rows, layout)
}

/// One line per strategy whose compactions called the summarizer: its own requests, priced.
fn summarizer_lines(c: &Comparison) -> String {
    let mut out = String::new();
    for s in c.sims.iter().filter(|s| s.summary.summarizer.calls > 0) {
        let m = &s.summary.summarizer;
        let _ = writeln!(
            out,
            "{}: {} summarizer request(s) (Σ rows with --per-turn): {} prompt + {} output tokens, {} (in its cost)",
            escape_line(&s.summary.strategy),
            m.calls,
            thousands(m.prompt),
            thousands(m.output),
            money(m.cost)
        );
    }
    out
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
    let mut out = format!(
        "recorded cache hit (usage.cached_tokens, {} turns): {} · simulated on the same turns: {}\n",
        m.recorded_turns,
        percent(m.recorded_hit_rate.unwrap_or(0.0)),
        same.join(", ")
    );
    // Some turns carry no usage (a rollout without token counts, an aborted call): the billed
    // cost covers the others only, so say what each strategy costs on those.
    let partial = c
        .sims
        .iter()
        .any(|s| matches!((s.summary.cost, s.summary.cost_same_turns), (Some(a), Some(b)) if (a - b).abs() >= 0.005));
    if partial {
        let costs: Vec<String> = (c.sims.iter())
            .filter_map(|s| {
                s.summary.cost_same_turns.map(|v| format!("{} {}", escape_line(&s.summary.strategy), money(Some(v))))
            })
            .collect();
        let _ = writeln!(out, "cost on the turns with recorded usage (what the bill covers): {}", costs.join(", "));
    }
    out
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
            b.at.block,
            escape_line(&b.at.was.to_string()),
            escape_line(&divergence(&b.at))
        );
    }
    if s.breaks.len() > n {
        let _ = writeln!(out, "  … {} more (--breaks N)", s.breaks.len() - n);
    }
    out
}

fn per_turn_table(s: &Simulation, billed: &Billed, anth: bool, layout: Layout) -> String {
    let mut columns = vec![
        Column::number("turn", 0),
        Column::number("prompt", 0),
        Column::number("cache read", 0),
        Column::number("new", 0),
        Column::number("write", 3),
        Column::number("output", 2),
        Column::number("cost", 0),
        Column::text("break", 1),
    ];
    // The provider's cost of the same call beside the simulated one, when the log records usage.
    let as_billed: std::collections::HashMap<usize, f64> =
        billed.per_turn.iter().filter_map(|b| b.cost.map(|c| (b.turn, c))).collect();
    let with_billed = !as_billed.is_empty();
    if with_billed {
        columns.insert(7, Column::number("as billed", 1));
    }
    let mut rows: Vec<Vec<String>> = Vec::with_capacity(s.turns.len() + 1);
    let mut push = |mut row: Vec<String>, billed_cell: String| {
        if with_billed {
            row.insert(7, billed_cell);
        }
        rows.push(row);
    };
    for x in &s.turns {
        if let Some(f) = &x.summarizer {
            push(
                vec![
                    format!("{} Σ", x.turn),
                    thousands(f.prompt),
                    thousands(f.cached),
                    thousands(f.new),
                    thousands(f.write),
                    format!("{}~", thousands(f.output)),
                    money(f.cost),
                    "summarizer".into(),
                ],
                String::new(),
            );
        }
        push(
            vec![
                x.turn.to_string(),
                thousands(x.prompt),
                thousands(x.cached),
                thousands(x.new),
                thousands(x.write),
                format!("{}{}", thousands(x.output), if x.output_recorded { "" } else { "~" }),
                money(x.cost),
                if x.is_break { "break".into() } else { String::new() },
            ],
            as_billed.get(&x.turn).map_or_else(|| "-".into(), |c| money(Some(*c))),
        );
    }
    let m = &s.summary;
    push(
        vec![
            "total".into(),
            thousands(m.prompt),
            thousands(m.cached),
            thousands(m.new),
            thousands(m.write),
            thousands(m.output),
            money(m.cost),
            format!("{}", m.breaks),
        ],
        money(billed.cost),
    );
    without_write(&columns, rows, anth, 4, layout)
}
