//! `ctxj turns`: one row per turn of a strategy's replay — blocks, characters, and what changed
//! against the previous request (appended only, or the prefix rewritten at a block), so cache
//! stability is visible without a model of the provider.

use std::io::Write;

use anyhow::Result;

use ctxj::render::style::Paint;
use ctxj_core::cache;

use ctxj::render::rows::write_output;
use ctxj::render::turns::{text, TurnsDoc};
use ctxj_core::report::turns::Rows;

use super::args::{AtArgs, RowsArgs, SessionArgs};
use super::resolve::{EncodingArgs, PricingArgs, StrategyArgs};
use super::{At, Ctx, EXIT_OK};

/// One row per turn: the request's blocks and characters, and how it relates to the previous one.
///
/// "appended N" means the request starts with the whole previous request (a prompt cache can
/// serve that prefix); "rewritten at block i (id)" means the prefix changed there, with what the
/// strategy did to that block ("truncated", "elided (turn 5)", "summary (turn 9)", …) or
/// "dropped" when the block left the request. Block numbers count from 1, as in `ctxj show`.
/// On the recorded replay, turns where the provider's own usage shows a cache break (the read
/// fell short of what the previous call left) are marked "recorded cache break: CAUSE" with the
/// tokens written again and their cost; `ctxj cache` explains them. Requests above the model's
/// context window (the journal's ctx_window, else the model's; --window overrides) are marked
/// "over the window". --json rows carry prompt_tokens, over_window and recorded_break.
///
/// `--at turn K` prints the row of turn K only; `--at rev N` the rows of the turns sent within
/// records 1..N. The table fits the terminal (COLUMNS; the change is cut in the middle);
/// --format json|ndjson|csv prints the turns as rows (docs/json.md, `ctxj.turns/1`).
///
/// Examples:
///   ctxj turns sample-journals/bugfix-todo --strategy sliding-8
///   ctxj turns sample-journals/bugfix-todo -s age-truncate-500-keep-3 --json
///   ctxj turns sample-journals/long-elision --at turn 12
///   ctxj turns sample-journals/transcripts/pi -s baseline --window 3000
///   ctxj turns sample-journals/bugfix-todo --format ndjson
#[derive(Debug, clap::Args)]
#[command(verbatim_doc_comment)]
#[command(mut_arg("strategies", |a| a
    .help("The strategy to replay (default: recorded, the journal's own projection)")
    .default_value("recorded")))]
pub struct Args {
    #[command(flatten)]
    pub session: SessionArgs,
    #[command(flatten)]
    pub strategy: StrategyArgs,
    #[command(flatten)]
    pub at: AtArgs,
    #[command(flatten)]
    pub pricing: PricingArgs,
    #[command(flatten)]
    pub encoding: EncodingArgs,
    #[command(flatten)]
    pub output: RowsArgs,
}

pub fn run(args: Args, ctx: &Ctx) -> Result<u8> {
    let replays = args.strategy.as_given(ctx.cache.as_deref());
    let s = replays.one()?.unwrap_or_else(ctxj_core::strategy::Strategy::recorded);
    let at = args.at.one()?;
    let table = args.pricing.table(ctx)?;
    let (_, journal) = ctx.load(&args.session.session)?;
    if let Some(at) = at {
        at.check(&journal)?;
    }
    // One replay: the rows, the prompt sizes against the window and, on the recorded replay (the
    // journal's own requests), where the provider's cache broke.
    let est = args.encoding.estimator(&journal, ctx)?;
    let pricing = args.pricing.pricing(&journal, table);
    let mut rows = Rows::new(&journal);
    let marks = super::progress::with_progress(|p| {
        cache::marks::marks_observed(&journal, &s, &est, &pricing, p, |r| rows.push(r))
    });
    replays.check()?;
    let mut rows = rows.finish();
    if let Some(at) = at {
        rows.retain(|r| match at {
            At::Turn(k) => r.turn == k,
            At::Rev(n) => r.rev <= n,
        });
    }
    let doc = TurnsDoc::new(s.name.clone(), rows, Some(&marks));
    let mut out = super::stdout();
    write_output(&mut out, args.output.format(), &doc, &doc.turns, || {
        text(&doc, Some(&marks), &Paint::new(ctx.color), args.output.layout())
    })?;
    out.flush()?;
    Ok(EXIT_OK)
}

super::session_command!(Args);
