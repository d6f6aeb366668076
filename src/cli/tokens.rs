//! `ctxj tokens`: where the tokens of a request go (system prompt, tool schemas, user text,
//! assistant text, call arguments, results per tool, attachments, summaries, notices), the budget
//! settings in force and the distance to the budget; with `--per-turn`, raw and calibrated
//! estimates against the provider's `prompt_tokens`.

use std::collections::BTreeMap;
use std::io::Write;

use anyhow::Result;
use comfy_table::{Cell, CellAlignment};
use serde_json::json;

use ctxj::cache::{self, CacheModel};
use ctxj::journal::{CtxSettings, Journal};
use ctxj::projection::{block::canonical_value, Block, Replayer};
use ctxj::render::format::{signed_thousands, thousands};
use ctxj::text::escape_line;
use ctxj::tokens::calibrate::{apply, error_pct};
use ctxj::tokens::{calibrator_for, estimator_for, Calibrator, Estimator, TiktokenEstimator};

use super::{At, Ctx, EXIT_OK};
use ctxj::render::style::Paint;
use ctxj::strategy::{parse as parse_strategy, recorded_view, strategy_view};

/// Token breakdown of a request, the budget in force, and estimate accuracy per turn.
///
/// Counts are exact tiktoken counts (encode_ordinary; --encoding, else the session's `encoding`,
/// else o200k_base) with the spec's framing: 4 per block, 3 per request. The calibrated figure
/// multiplies by the recency-weighted ratio of the provider's prompt_tokens to the raw estimate of
/// earlier recorded turns. Parts the journal does not hold are shown as "not recorded".
///
/// Without --at: the state after the last record (recorded) or the last turn (--strategy).
/// With --per-turn: per turn the raw estimate, the calibrated one, the provider's prompt_tokens
/// and both errors.
///
/// Examples:
///   ctxj tokens sample-journals/bugfix-todo
///   ctxj tokens sample-journals/long-elision --at turn 12
///   ctxj tokens sample-journals/bugfix-todo --strategy sliding-8 --encoding cl100k_base
///   ctxj tokens sample-journals/long-elision --per-turn --json
#[derive(Debug, clap::Args)]
#[command(verbatim_doc_comment)]
pub struct Args {
    /// Session directory, journal.jsonl path, or session id under --root.
    pub session: String,
    /// Which state: `rev N` (after records 1..N) or `turn K` (the request of turn K).
    #[arg(long, num_args = 2, value_names = ["rev|turn", "N"])]
    pub at: Vec<String>,
    /// Replay this strategy instead of the recorded projection.
    #[arg(long, value_name = "NAME")]
    pub strategy: Option<String>,
    /// One row per turn: raw and calibrated estimates against the provider's prompt_tokens.
    #[arg(long)]
    pub per_turn: bool,
    /// Tokenizer encoding: o200k_base or cl100k_base (default: the session's, else o200k_base).
    #[arg(long, value_name = "E")]
    pub encoding: Option<String>,
    /// Machine-readable output.
    #[arg(long)]
    pub json: bool,
}

/// One line of the breakdown.
struct Part {
    name: String,
    tokens: Option<u64>,
    items: usize,
}

/// The breakdown of a request's blocks by what they hold.
fn breakdown(blocks: &[Block], est: &dyn Estimator) -> (Vec<Part>, BTreeMap<String, (u64, usize)>, u64) {
    let mut sys: Option<u64> = None;
    let mut tools: Option<u64> = None;
    let mut sums: BTreeMap<&str, (u64, usize)> = BTreeMap::new();
    let mut per_tool: BTreeMap<String, (u64, usize)> = BTreeMap::new();
    let mut add = |k: &'static str, n: u64| {
        let e = sums.entry(k).or_default();
        e.0 += n;
        e.1 += 1;
    };
    for b in blocks {
        let framed = 4 + est.count(b.text());
        match b {
            Block::System { tools: t, .. } => {
                sys = Some(sys.unwrap_or(0) + framed);
                if let Some(t) = t {
                    tools = Some(tools.unwrap_or(0) + est.count(&canonical_value(t)));
                }
            }
            Block::Summary { .. } => add("summaries", framed),
            Block::User { .. } => add("user text", framed),
            Block::Attachment { .. } => add("attachments", framed),
            Block::Notice { .. } => add("notices", framed),
            Block::Assistant { calls, .. } => {
                add("assistant text", framed);
                for c in calls {
                    add("call arguments", est.count(&c.tool) + est.count(&canonical_value(&c.args)));
                }
            }
            Block::Result { tool, .. } => {
                add("tool results", framed);
                let e = per_tool.entry(tool.clone()).or_default();
                e.0 += framed;
                e.1 += 1;
            }
        }
    }
    let get = |k: &str| sums.get(k).copied().unwrap_or((0, 0));
    let mut parts = vec![
        Part { name: "system prompt".into(), tokens: sys, items: usize::from(sys.is_some()) },
        Part { name: "tool schemas".into(), tokens: tools, items: usize::from(tools.is_some()) },
    ];
    for k in ["user text", "assistant text", "call arguments", "tool results", "attachments", "summaries", "notices"] {
        let (n, items) = get(k);
        parts.push(Part { name: k.into(), tokens: Some(n), items });
    }
    parts.push(Part { name: "request framing".into(), tokens: Some(3), items: 1 });
    let total = parts.iter().filter_map(|p| p.tokens).sum();
    (parts, per_tool, total)
}

/// The settings and model in force at a record position (before record `end`).
fn settings_at(journal: &Journal, end: usize) -> (Option<String>, CtxSettings) {
    let mut r = Replayer::new(journal);
    r.advance_to(end);
    (r.model.clone(), r.ctx.clone())
}

fn pct(n: u64, total: u64) -> String {
    if total == 0 {
        "–".into()
    } else {
        format!("{:.1}%", n as f64 / total as f64 * 100.0)
    }
}

fn opt_thousands(v: Option<u64>) -> String {
    v.map_or_else(|| "not recorded".to_string(), thousands)
}

pub fn run(args: Args, ctx: &Ctx) -> Result<u8> {
    let strategy = args.strategy.as_deref().map(parse_strategy).transpose()?;
    let (_, journal) = ctx.load(&args.session)?;
    let est = estimator_for(&journal, args.encoding.as_deref())?;
    let at = At::parse_pairs(&args.at)?;
    anyhow::ensure!(at.len() <= 1, "tokens takes one --at");
    if args.per_turn {
        anyhow::ensure!(at.is_empty(), "--per-turn covers every turn; drop --at");
        return per_turn(&journal, strategy.as_ref(), &est, args.json, ctx);
    }
    let at = at.first().copied();
    let view = match &strategy {
        Some(s) => strategy_view(&journal, s, at)?,
        None => recorded_view(&journal, at)?,
    };
    // The record position the view stands before, and the turn whose request it is (if any).
    let (end, turn) = match (at, &strategy) {
        (Some(At::Turn(k)), _) => (journal.turns[k - 1], Some(k)),
        (Some(At::Rev(n)), _) => (journal.prefix_len_at_rev(n), None),
        (None, Some(_)) => (journal.turns.last().copied().unwrap_or(journal.records.len()), Some(journal.turns.len())),
        (None, None) => (journal.records.len(), None),
    };
    // The next turn the state would be sent on: turn K itself, else the turns before `end` + 1.
    let next_turn = turn.unwrap_or_else(|| journal.turns.iter().filter(|&&i| i < end).count() + 1);
    let (parts, per_tool, total) = breakdown(&view.blocks, &est);
    let cal = calibrator_for(&journal, &est);
    let mult = cal.multiplier(next_turn);
    let calibrated = apply(total, mult);
    let (model, s) = settings_at(&journal, end);
    let budget = s.context_budget.filter(|&b| b > 0);
    let window = s.ctx_window.filter(|&w| w > 0);
    let headroom = window.map(|w| w.saturating_sub(s.context_reserve.unwrap_or(0)));

    if args.json {
        let j = json!({
            "view": view.label,
            "encoding": est.encoding().name(),
            "model": model,
            "raw": total,
            "multiplier": mult,
            "calibrated": calibrated,
            "parts": parts.iter().map(|p| json!({
                "part": p.name, "tokens": p.tokens, "recorded": p.tokens.is_some(), "blocks": p.items,
                "share": p.tokens.map(|n| if total == 0 { 0.0 } else { n as f64 / total as f64 }),
            })).collect::<Vec<_>>(),
            "results_by_tool": per_tool.iter().map(|(t, (n, c))| json!({"tool": t, "tokens": n, "results": c})).collect::<Vec<_>>(),
            "settings": {
                "ctx_window": s.ctx_window, "context_budget": s.context_budget, "context_reserve": s.context_reserve,
                "context_target": s.context_target, "keep_results": s.keep_results,
            },
            "distance_to_budget": budget.map(|b| b as i64 - calibrated as i64),
            "distance_to_target": s.context_target.filter(|&t| t > 0).map(|t| t as i64 - calibrated as i64),
            "headroom": headroom.map(|h| h as i64 - calibrated as i64),
        });
        let mut out = super::stdout();
        writeln!(out, "{j}")?;
        out.flush()?;
        return Ok(EXIT_OK);
    }

    let paint = Paint::new(ctx.color);
    let mut out = super::stdout();
    writeln!(
        out,
        "{} · {} · {} blocks · {}",
        paint.bold(&escape_line(&view.label)),
        est.encoding(),
        view.blocks.len(),
        model.as_deref().map(escape_line).unwrap_or_else(|| "model not recorded".into())
    )?;
    let mut t = ctxj::render::style::table(&["part", "blocks", "tokens", "share"]);
    let right = |s: String| Cell::new(s).set_alignment(CellAlignment::Right);
    for p in &parts {
        t.add_row(vec![
            Cell::new(&p.name),
            right(if p.tokens.is_some() { thousands(p.items as u64) } else { String::new() }),
            right(opt_thousands(p.tokens)),
            right(p.tokens.map(|n| pct(n, total)).unwrap_or_default()),
        ]);
        if p.name == "tool results" {
            for (tool, (n, c)) in &per_tool {
                t.add_row(vec![
                    Cell::new(format!("  {}", escape_line(tool))),
                    right(thousands(*c as u64)),
                    right(thousands(*n)),
                    right(pct(*n, total)),
                ]);
            }
        }
    }
    t.add_row(vec![Cell::new("total (raw)"), right(String::new()), right(thousands(total)), right("100.0%".into())]);
    writeln!(out, "{t}")?;
    let mult_note = if cal.is_empty() {
        "no turn records prompt_tokens: multiplier 1.0".to_string()
    } else {
        format!("×{mult:.3} before turn {next_turn}")
    };
    writeln!(out, "calibrated estimate: {} ({mult_note})", thousands(calibrated))?;
    let mut s_t = ctxj::render::style::table(&["setting", "tokens", "distance (setting − calibrated)"]);
    let dist = |v: Option<u64>| v.map(|v| signed_thousands(v as i64 - calibrated as i64)).unwrap_or_default();
    s_t.add_row(vec![Cell::new("ctx_window"), right(opt_thousands(s.ctx_window)), right(String::new())]);
    s_t.add_row(vec![Cell::new("context_budget"), right(opt_thousands(s.context_budget)), right(dist(budget))]);
    s_t.add_row(vec![
        Cell::new("context_target"),
        right(opt_thousands(s.context_target)),
        right(dist(s.context_target.filter(|&t| t > 0))),
    ]);
    s_t.add_row(vec![Cell::new("context_reserve"), right(opt_thousands(s.context_reserve)), right(String::new())]);
    s_t.add_row(vec![Cell::new("window − reserve"), right(opt_thousands(headroom)), right(dist(headroom))]);
    s_t.add_row(vec![Cell::new("keep_results"), right(opt_thousands(s.keep_results)), right(String::new())]);
    writeln!(out, "{s_t}")?;
    match budget {
        Some(b) if calibrated > b => {
            writeln!(out, "{}", paint.red(&format!("over budget by {}", thousands(calibrated - b))))?
        }
        Some(b) => writeln!(out, "{}", paint.green(&format!("{} below budget", thousands(b - calibrated))))?,
        None => writeln!(out, "budget: not recorded")?,
    }
    out.flush()?;
    Ok(EXIT_OK)
}

fn per_turn(
    journal: &Journal,
    strategy: Option<&ctxj::strategy::Strategy>,
    est: &TiktokenEstimator,
    json: bool,
    ctx: &Ctx,
) -> Result<u8> {
    let recorded = ctxj::strategy::Strategy::recorded();
    let s = strategy.unwrap_or(&recorded);
    let opts = cache::Options { cache: CacheModel::Ideal, price: None };
    let sim = super::progress::with_progress(|p| cache::simulate(journal, s, est, opts, p));
    // The recorded replay's prompts are the recorded turns' raw estimates: calibrate from them
    // rather than replaying the journal a second time.
    let cal = if s.is_recorded() {
        let mut c = Calibrator::new();
        for t in &sim.turns {
            c.observe(t.turn, t.recorded_prompt, t.prompt);
        }
        c
    } else {
        calibrator_for(journal, est)
    };
    struct Row {
        turn: usize,
        raw: u64,
        mult: f64,
        calibrated: u64,
        prompt: Option<u64>,
    }
    let rows: Vec<Row> = sim
        .turns
        .iter()
        .map(|t| {
            let mult = cal.multiplier(t.turn);
            Row { turn: t.turn, raw: t.prompt, mult, calibrated: apply(t.prompt, mult), prompt: t.recorded_prompt }
        })
        .collect();
    let mut out = super::stdout();
    if json {
        let items: Vec<_> = rows
            .iter()
            .map(|r| {
                json!({
                    "turn": r.turn, "raw": r.raw, "multiplier": r.mult, "calibrated": r.calibrated,
                    "prompt_tokens": r.prompt,
                    "raw_error_pct": r.prompt.and_then(|p| error_pct(r.raw, p)),
                    "calibrated_error_pct": r.prompt.and_then(|p| error_pct(r.calibrated, p)),
                })
            })
            .collect();
        writeln!(out, "{}", serde_json::Value::Array(items))?;
        out.flush()?;
        return Ok(EXIT_OK);
    }
    let paint = Paint::new(ctx.color);
    writeln!(out, "{} · {} · {} turns", paint.bold(&escape_line(&s.name)), est.encoding(), rows.len())?;
    let mut t = ctxj::render::style::table(&["turn", "raw", "×", "calibrated", "prompt_tokens", "raw err", "cal. err"]);
    let right = |s: String| Cell::new(s).set_alignment(CellAlignment::Right);
    let e = |v: Option<f64>| v.map(|x| format!("{x:+.1}%")).unwrap_or_else(|| "–".into());
    for r in &rows {
        t.add_row(vec![
            right(r.turn.to_string()),
            right(thousands(r.raw)),
            right(format!("{:.3}", r.mult)),
            right(thousands(r.calibrated)),
            right(r.prompt.map_or_else(|| "not recorded".into(), thousands)),
            right(e(r.prompt.and_then(|p| error_pct(r.raw, p)))),
            right(e(r.prompt.and_then(|p| error_pct(r.calibrated, p)))),
        ]);
    }
    writeln!(out, "{t}")?;
    let with: Vec<&Row> = rows.iter().filter(|r| r.prompt.is_some()).collect();
    if !with.is_empty() {
        let mean = |f: &dyn Fn(&Row) -> u64| {
            with.iter().filter_map(|r| error_pct(f(r), r.prompt.unwrap_or(0)).map(f64::abs)).sum::<f64>()
                / with.len() as f64
        };
        writeln!(
            out,
            "mean |error| over {} turns with prompt_tokens: raw {:.1}%, calibrated {:.1}%",
            with.len(),
            mean(&|r| r.raw),
            mean(&|r| r.calibrated)
        )?;
    }
    out.flush()?;
    Ok(EXIT_OK)
}
