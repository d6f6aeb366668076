//! `ctxj tokens`: where the tokens of a request go (system prompt, tool schemas, user text,
//! assistant text, call arguments, results per tool, attachments, summaries, notices), the budget
//! settings in force and the distance to the budget; with `--per-turn`, raw and calibrated
//! estimates against the provider's `prompt_tokens`.

use std::io::Write;

use anyhow::Result;

use ctxj::render::style::Paint;
use ctxj::render::tokens as render;
use ctxj_core::cache::{self, CacheModel};
use ctxj_core::check::context::context_view;
use ctxj_core::check::Harness;
use ctxj_core::journal::Journal;
use ctxj_core::projection::Replayer;
use ctxj_core::strategy::{calibrator_for, new_calibrator, prefix_unrecorded, recorded_turns, RecordedTurn, Strategy};
use ctxj_core::tokens::breakdown::{RequestTokens, TurnEstimate};
use ctxj_core::tokens::TiktokenEstimator;

use ctxj::render::rows::write_output;

use super::args::{AtArgs, HarnessArgs, RowsArgs, SessionArgs};
use super::resolve::{EncodingArgs, StrategyArgs};
use super::{At, Ctx, EXIT_OK};
use ctxj_core::strategy::{recorded_view, strategy_view};

/// Token breakdown of a request, the budget in force, and estimate accuracy per turn.
///
/// Counts are exact tiktoken counts (encode_ordinary; --encoding, else the session's `encoding`,
/// else o200k_base) with the spec's framing: 4 per block, 3 per request. The calibrated figure
/// multiplies by the recency-weighted ratio of the provider's prompt_tokens to the raw estimate of
/// earlier recorded turns. Parts the journal does not hold are shown as "not recorded".
///
/// Then the request as Claude Code's /context shows it: percent of the window, the pressure
/// level (50%/80%, or the tiers of the harness profile, --harness), "≈ N k until" the next
/// elision or auto-compact, the parts sorted by size with their counts, and hints (which tool
/// results dominate; what elide-keep-K or ctx clear would free).
///
/// Without --at: the state after the last record (recorded) or the last turn (--strategy).
/// With --per-turn: per turn the raw estimate, the calibrated one, the provider's prompt_tokens
/// and both errors. Tables fit the terminal (COLUMNS). --format json|ndjson|csv: the rows are the
/// breakdown's parts, with --per-turn the turns (docs/json.md, `ctxj.tokens/1`,
/// `ctxj.tokens.per-turn/1`).
///
/// Examples:
///   ctxj tokens sample-journals/bugfix-todo
///   ctxj tokens sample-journals/long-elision --at turn 12
///   ctxj tokens sample-journals/bugfix-todo -s sliding-8 --encoding cl100k_base
///   ctxj tokens sample-journals/long-elision --per-turn --json
///   ctxj tokens sample-journals/transcripts/claude-code --harness claude-code
///   ctxj tokens sample-journals/bugfix-todo --format csv
#[derive(Debug, clap::Args)]
#[command(verbatim_doc_comment)]
#[command(mut_arg("strategies", |a| a.help("Replay this strategy instead of the recorded projection")))]
#[command(mut_arg("harness", |a| a.help(
    "The profile whose window, tiers and auto-cleanup point the /context view uses (ctxj, claude-code, \
     command-code, veles, opencode, gemini-cli, qwen-code, cline, kimi-code, pi, pi-agent; default: the journal's `harness`)"
)))]
pub struct Args {
    #[command(flatten)]
    pub session: SessionArgs,
    #[command(flatten)]
    pub at: AtArgs,
    #[command(flatten)]
    pub strategy: StrategyArgs,
    /// One row per turn: raw and calibrated estimates against the provider's prompt_tokens.
    #[arg(long)]
    pub per_turn: bool,
    #[command(flatten)]
    pub encoding: EncodingArgs,
    #[command(flatten)]
    pub output: RowsArgs,
    #[command(flatten)]
    pub harness: HarnessArgs,
}

pub fn run(args: Args, ctx: &Ctx) -> Result<u8> {
    let replays = args.strategy.as_given(ctx.cache.as_deref());
    let strategy = replays.one()?;
    let (_, journal) = ctx.load(&args.session.session)?;
    let est = args.encoding.estimator(&journal, ctx)?;
    let at = args.at.one()?;
    let paint = Paint::new(ctx.color);
    let (format, layout) = (args.output.format(), args.output.layout());
    let mut out = super::stdout();
    if args.per_turn {
        anyhow::ensure!(at.is_none(), "--per-turn covers every turn; drop --at");
        let s = strategy.unwrap_or_else(Strategy::recorded);
        let rows = per_turn(&journal, &s, &est);
        let doc = render::per_turn_doc(&s.name, est.encoding().name(), &rows);
        write_output(&mut out, format, &doc, &doc.turns, || {
            render::per_turn_text(&s.name, est.encoding().name(), &rows, &paint, layout)
        })?;
    } else {
        let (r, blocks) = request(&journal, strategy.as_ref(), at, &est)?;
        let harness = args.harness.harness.unwrap_or_else(|| Harness::detect(&journal));
        let view = context_view(&journal, &r, &blocks, &est, harness);
        let mut doc = render::request_doc(&r);
        doc.context = Some(view.clone());
        write_output(&mut out, format, &doc, &doc.parts, || {
            render::request_text(&r, &paint, layout) + &render::context_text(&view, &paint, layout)
        })?;
    }
    replays.check()?;
    out.flush()?;
    Ok(EXIT_OK)
}

/// The request at `at` (recorded, or `strategy`'s), counted and calibrated.
fn request(
    journal: &Journal,
    strategy: Option<&Strategy>,
    at: Option<At>,
    est: &TiktokenEstimator,
) -> Result<(RequestTokens, Vec<ctxj_core::projection::Block>)> {
    let view = match strategy {
        Some(s) => strategy_view(journal, s, est, at)?,
        None => recorded_view(journal, at)?,
    };
    // The record position the view stands before, and the turn whose request it is (if any).
    let (end, turn) = match (at, strategy) {
        (Some(At::Turn(k)), _) => (journal.turns[k - 1], Some(k)),
        (Some(At::Rev(n)), _) => (journal.prefix_len_at_rev(n), None),
        (None, Some(_)) => (journal.turns.last().copied().unwrap_or(journal.records.len()), Some(journal.turns.len())),
        (None, None) => (journal.records.len(), None),
    };
    // The next turn the state would be sent on: turn K itself, else the turns before `end` + 1.
    let next_turn = turn.unwrap_or_else(|| journal.turns.iter().filter(|&&i| i < end).count() + 1);
    let cal = calibrator_for(journal, est);
    let mut settings = Replayer::new(journal);
    settings.advance_to(end);
    let (model, ctx) = (settings.model.clone(), settings.ctx.clone());
    let r = RequestTokens::new(view.label, est.encoding().name(), model, &view.blocks, est, &cal, next_turn, ctx);
    Ok((r, view.blocks))
}

/// Every turn of `s`'s replay: raw estimate, calibrated estimate, provider figure.
fn per_turn(journal: &Journal, s: &Strategy, est: &TiktokenEstimator) -> Vec<TurnEstimate> {
    if prefix_unrecorded(journal) {
        // The cache simulation of an imported session counts in provider tokens with the prefix
        // included; the fit needs the raw counts: one recorded replay, then the strategy's.
        return per_turn_raw(journal, s, est);
    }
    let opts = cache::Options::plain(CacheModel::Ideal, None);
    let sim = super::progress::with_progress(|p| cache::simulate(journal, s, est, opts, p));
    // The recorded replay's prompts are the recorded turns' raw estimates: calibrate from them
    // rather than replaying the journal a second time.
    let cal = if s.is_recorded() {
        let mut c = new_calibrator(journal);
        for t in &sim.turns {
            c.observe(t.turn, t.recorded_prompt, t.prompt);
        }
        c
    } else {
        calibrator_for(journal, est)
    };
    sim.turns.iter().map(|t| TurnEstimate::new(t.turn, t.prompt, t.recorded_prompt, &cal)).collect()
}

/// [`per_turn`] from raw counts: the recorded turns, or `s`'s replay counted request by request.
fn per_turn_raw(journal: &Journal, s: &Strategy, est: &TiktokenEstimator) -> Vec<TurnEstimate> {
    let rec = recorded_turns(journal, est);
    let mut cal = new_calibrator(journal);
    rec.iter().for_each(|t| t.feed(&mut cal));
    let sampled = |turn: usize| rec.get(turn - 1).is_some_and(|t| t.server_tool_calls > 0);
    if s.is_recorded() {
        let row = |t: &RecordedTurn| TurnEstimate::new(t.turn, t.raw, t.prompt_tokens, &cal).sampled(sampled(t.turn));
        return rec.iter().map(row).collect();
    }
    let mut rows = Vec::with_capacity(rec.len());
    ctxj_core::strategy::replay(journal, s, est, |r| {
        let raw = ctxj_core::tokens::request_tokens(est, r.blocks.iter());
        let prompt = rec.get(r.turn - 1).and_then(|t| t.prompt_tokens);
        rows.push(TurnEstimate::new(r.turn, raw, prompt, &cal).sampled(sampled(r.turn)));
    });
    rows
}

super::session_command!(Args);
