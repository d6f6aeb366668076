//! `ctxj cache`: strategies compared through a prompt-cache model (spec `strategies.md` §4–§6):
//! peak prompt, new and cached input, hit rate, cost, cost against `baseline`, cache breaks and
//! the first breaks of each strategy explained.

use std::io::{IsTerminal, Write};
use std::time::{Duration, Instant};

use anyhow::{Context as _, Result};
use comfy_table::{Cell, CellAlignment};
use serde_json::json;

use ctxj::cache::{self, CacheModel, PriceTable, Simulation};
use ctxj::journal::Journal;
use ctxj::render::format::thousands;
use ctxj::strategy::Strategy;
use ctxj::text::escape_line;
use ctxj::tokens::{estimator_for, TiktokenEstimator};

use super::show::parse_strategy;
use super::{Ctx, EXIT_OK};
use ctxj::render::style::Paint;

/// Compare strategies by prompt-cache hits and cost.
///
/// Each strategy is replayed turn by turn; every request goes through a prompt-cache model and is
/// priced. Columns: turns, peak prompt tokens, new (uncached) input, cached input, hit rate
/// (cached / prompt), cost, cost relative to `baseline`, and cache breaks (turns whose request
/// does not start with the whole previous request). The first breaks of each strategy are then
/// explained: the first differing block (numbered from 1, as in `ctxj show`) and what changed it.
///
/// Tokens are raw tiktoken estimates (the same unit for every strategy). Output tokens are the
/// recorded completion_tokens, else the estimate of the turn's assistant block. Without
/// --strategy: recorded and baseline. --cache defaults from the model slug (claude → anthropic,
/// gpt-/o1… → openai, gemini → gemini, else ideal). Prices: a built-in dated table, or LiteLLM's
/// model_prices_and_context_window.json with --prices.
///
/// Examples:
///   ctxj cache sample-journals/bugfix-todo
///   ctxj cache sample-journals/bugfix-todo --strategy baseline --strategy sliding-8 --cache ideal
///   ctxj cache sample-journals/long-elision --strategy recorded --per-turn --model openai/gpt-4.1
///   ctxj cache my-session --prices model_prices_and_context_window.json --json
#[derive(Debug, clap::Args)]
#[command(verbatim_doc_comment)]
pub struct Args {
    /// Session directory, journal.jsonl path, or session id under --root.
    pub session: String,
    /// A strategy to compare (repeatable; default: recorded and baseline).
    #[arg(long = "strategy", value_name = "NAME")]
    pub strategies: Vec<String>,
    /// Cache model: ideal, openai, anthropic or gemini (default: from the model slug).
    #[arg(long, value_name = "MODEL")]
    pub cache: Option<String>,
    /// Price (and default cache model) as this model slug instead of the session's.
    #[arg(long, value_name = "SLUG")]
    pub model: Option<String>,
    /// LiteLLM model_prices_and_context_window.json to price with.
    #[arg(long, value_name = "FILE")]
    pub prices: Option<std::path::PathBuf>,
    /// Per-turn prompt / cached / new / write / output / cost for each strategy, then its total.
    #[arg(long)]
    pub per_turn: bool,
    /// How many cache breaks to explain per strategy.
    #[arg(long, value_name = "N", default_value_t = 3)]
    pub breaks: usize,
    /// Tokenizer encoding: o200k_base or cl100k_base (default: the session's, else o200k_base).
    #[arg(long, value_name = "E")]
    pub encoding: Option<String>,
    /// Machine-readable output.
    #[arg(long)]
    pub json: bool,
}

/// Runs `f` with a progress callback that draws a bar on stderr once the work has taken more
/// than about a second, and only when stderr is a terminal.
pub(crate) fn with_progress<T>(total: usize, f: impl FnOnce(&mut dyn FnMut(usize, usize)) -> T) -> T {
    let tty = std::io::stderr().is_terminal();
    let start = Instant::now();
    let mut bar: Option<indicatif::ProgressBar> = None;
    let mut cb = |done: usize, total: usize| {
        if !tty {
            return;
        }
        if bar.is_none() && start.elapsed() > Duration::from_secs(1) && done < total {
            let b = indicatif::ProgressBar::new(total as u64);
            if let Ok(style) =
                indicatif::ProgressStyle::with_template("{spinner} replaying turn {pos}/{len} {wide_bar} {eta}")
            {
                b.set_style(style);
            }
            bar = Some(b);
        }
        if let Some(b) = &bar {
            b.set_position(done as u64);
        }
    };
    let _ = total;
    let r = f(&mut cb);
    if let Some(b) = bar {
        b.finish_and_clear();
    }
    r
}

fn money(v: Option<f64>) -> String {
    match v {
        Some(x) if x >= 100.0 => format!("${x:.0}"),
        Some(x) if x >= 1.0 => format!("${x:.2}"),
        Some(x) => format!("${x:.4}"),
        None => "n/a".into(),
    }
}

fn rate(r: f64) -> String {
    format!("{:.1}%", r * 100.0)
}

fn vs(cost: Option<f64>, base: Option<f64>) -> Option<f64> {
    match (cost, base) {
        (Some(c), Some(b)) if b > 0.0 => Some(c / b),
        _ => None,
    }
}

pub fn run(args: Args, ctx: &Ctx) -> Result<u8> {
    let mut names = args.strategies.clone();
    if names.is_empty() {
        names = vec!["recorded".into(), "baseline".into()];
    }
    let strategies: Vec<Strategy> = names.iter().map(|n| parse_strategy(n)).collect::<Result<_>>()?;
    let forced_cache = args.cache.as_deref().map(CacheModel::parse).transpose()?;
    let table = match &args.prices {
        Some(p) => {
            let bytes = std::fs::read(p).with_context(|| format!("reading --prices {}", p.display()))?;
            PriceTable::from_litellm(&p.display().to_string(), &bytes)?
        }
        None => PriceTable::builtin(),
    };
    let (_, journal) = ctx.load(&args.session)?;
    let est = estimator_for(&journal, args.encoding.as_deref())?;
    let slug = args.model.clone().or_else(|| journal.session().and_then(|s| s.model.clone()));
    let cache_model =
        forced_cache.unwrap_or_else(|| slug.as_deref().map(CacheModel::for_slug).unwrap_or(CacheModel::Ideal));
    let priced = slug.as_deref().and_then(|s| table.lookup(s)).map(|(n, p)| (n.to_string(), p));
    let opts = cache::Options { cache: cache_model, price: priced.as_ref().map(|(_, p)| *p) };

    let total_turns = journal.turns.len() * (strategies.len() + 1);
    // The strategies replay one after the other and share the estimator's memo. In parallel
    // they met the same new texts at the same turn and tokenized them twice, and on two cores
    // they were no faster but took ~45% more memory (docs/performance.md).
    let sims: Vec<Simulation> = with_progress(total_turns, |p| {
        let mut done = 0;
        strategies
            .iter()
            .map(|s| {
                let base = done;
                let r = cache::simulate(&journal, s, &est, opts, |d, _| p(base + d, total_turns));
                done += journal.turns.len();
                r
            })
            .collect()
    });
    // Cost relative to baseline: replay it too when it was not asked for.
    let base_cost = match sims.iter().find(|s| s.summary.strategy == "baseline") {
        Some(b) => b.summary.cost,
        None if opts.price.is_some() => {
            let b = parse_strategy("baseline")?;
            cache::simulate(&journal, &b, &est, opts, |_, _| {}).summary.cost
        }
        None => None,
    };
    render(
        &args,
        ctx,
        &journal,
        &est,
        slug.as_deref(),
        cache_model,
        forced_cache.is_none(),
        &table,
        priced,
        &sims,
        base_cost,
    )
}

#[allow(clippy::too_many_arguments)]
fn render(
    args: &Args,
    ctx: &Ctx,
    journal: &Journal,
    est: &TiktokenEstimator,
    slug: Option<&str>,
    cache_model: CacheModel,
    cache_default: bool,
    table: &PriceTable,
    priced: Option<(String, cache::Price)>,
    sims: &[Simulation],
    base_cost: Option<f64>,
) -> Result<u8> {
    let mut out = super::stdout();
    if args.json {
        let j = json!({
            "model": slug,
            "cache": cache_model,
            "cache_from_slug": cache_default,
            "encoding": est.encoding().name(),
            "memo": { "hits": est.stats().hits, "misses": est.stats().misses, "hit_rate": est.stats().hit_rate(),
                      "bytes_tokenized": est.stats().bytes_tokenized },
            "prices": { "source": table.source, "model": priced.as_ref().map(|(n, _)| n), "price": priced.as_ref().map(|(_, p)| p) },
            "strategies": sims.iter().map(|s| json!({
                "summary": s.summary,
                "cost_vs_baseline": vs(s.summary.cost, base_cost),
                "breaks": s.breaks,
                "turns": if args.per_turn { json!(s.turns) } else { serde_json::Value::Null },
            })).collect::<Vec<_>>(),
        });
        writeln!(out, "{j}")?;
        out.flush()?;
        return Ok(EXIT_OK);
    }
    let paint = Paint::new(ctx.color);
    let anth = cache_model == CacheModel::Anthropic;
    writeln!(
        out,
        "{} · {} turns · cache {}{} · {}",
        paint.bold(&escape_line(&journal.session().map(|s| s.id.clone()).unwrap_or_default())),
        journal.turns.len(),
        cache_model,
        if cache_default { " (from the model slug)" } else { "" },
        est.encoding()
    )?;
    match (&priced, slug) {
        (Some((n, p)), _) => writeln!(
            out,
            "prices: {} as {} ({}): input ${}/M, cached ${}/M, write {}, output ${}/M",
            escape_line(slug.unwrap_or("")),
            escape_line(n),
            escape_line(&table.source),
            p.input,
            p.cached_rate(),
            if anth { format!("${}/M", p.write_rate()) } else { "–".to_string() },
            p.output
        )?,
        (None, Some(s)) => writeln!(
            out,
            "prices: no price for {} in the {} (pass --model or --prices); costs n/a",
            escape_line(s),
            escape_line(&table.source)
        )?,
        (None, None) => writeln!(out, "prices: the journal records no model (pass --model); costs n/a")?,
    }
    let mut header = vec![
        "strategy",
        "turns",
        "peak prompt",
        "new input",
        "cached input",
        "hit rate",
        "cost",
        "vs baseline",
        "breaks",
    ];
    if anth {
        header.insert(5, "cache write");
    }
    let mut t = ctxj::render::style::table(&header);
    let right = |s: String| Cell::new(s).set_alignment(CellAlignment::Right);
    for s in sims {
        let m = &s.summary;
        let mut row = vec![
            Cell::new(escape_line(&m.strategy)),
            right(thousands(m.turns as u64)),
            right(thousands(m.peak_prompt)),
            right(thousands(m.new)),
            right(thousands(m.cached)),
            right(rate(m.hit_rate)),
            right(money(m.cost)),
            right(vs(m.cost, base_cost).map_or_else(|| "n/a".into(), |r| format!("{r:.2}×"))),
            right(thousands(m.breaks as u64)),
        ];
        if anth {
            row.insert(5, right(thousands(m.write)));
        }
        t.add_row(row);
    }
    writeln!(out, "{t}")?;
    if let Some(first) = sims.first().filter(|s| s.summary.recorded_hit_rate.is_some()) {
        let m = &first.summary;
        write!(
            out,
            "recorded hit rate (usage.cached_tokens, {} turns): {}",
            m.recorded_turns,
            rate(m.recorded_hit_rate.unwrap_or(0.0))
        )?;
        let sims_same: Vec<String> = sims
            .iter()
            .filter_map(|s| {
                s.summary
                    .simulated_hit_rate_same_turns
                    .map(|r| format!("{} {}", escape_line(&s.summary.strategy), rate(r)))
            })
            .collect();
        writeln!(out, " · simulated on the same turns: {}", sims_same.join(", "))?;
    }
    for s in sims {
        if s.breaks.is_empty() || args.breaks == 0 {
            continue;
        }
        writeln!(out, "\n{} — cache breaks ({}):", paint.bold(&escape_line(&s.summary.strategy)), s.breaks.len())?;
        for b in s.breaks.iter().take(args.breaks) {
            writeln!(
                out,
                "  turn {}: prefix diverged at block {} ({}): {}",
                b.turn,
                b.block,
                escape_line(&b.was.to_string()),
                escape_line(&b.reason)
            )?;
        }
        if s.breaks.len() > args.breaks {
            writeln!(out, "  … {} more (--breaks N)", s.breaks.len() - args.breaks)?;
        }
    }
    if args.per_turn {
        for s in sims {
            writeln!(out, "\n{} — per turn:", paint.bold(&escape_line(&s.summary.strategy)))?;
            let mut h = vec!["turn", "prompt", "cached", "new", "output", "cost", "break"];
            if anth {
                h.insert(4, "write");
            }
            let mut pt = ctxj::render::style::table(&h);
            for x in &s.turns {
                let mut row = vec![
                    right(x.turn.to_string()),
                    right(thousands(x.prompt)),
                    right(thousands(x.cached)),
                    right(thousands(x.new)),
                    right(format!("{}{}", thousands(x.output), if x.output_recorded { "" } else { "~" })),
                    right(money(x.cost)),
                    Cell::new(if x.is_break { "break" } else { "" }),
                ];
                if anth {
                    row.insert(4, right(thousands(x.write)));
                }
                pt.add_row(row);
            }
            let m = &s.summary;
            let mut row = vec![
                Cell::new("total"),
                right(thousands(m.prompt)),
                right(thousands(m.cached)),
                right(thousands(m.new)),
                right(thousands(m.output)),
                right(money(m.cost)),
                Cell::new(format!("{}", m.breaks)),
            ];
            if anth {
                row.insert(4, right(thousands(m.write)));
            }
            pt.add_row(row);
            writeln!(out, "{pt}")?;
        }
        writeln!(out, "(~ = output estimated from the assistant block; no completion_tokens recorded)")?;
    }
    out.flush()?;
    Ok(EXIT_OK)
}
