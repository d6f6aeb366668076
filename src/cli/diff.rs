//! `ctxj diff`: two projections side by side — two strategies at one turn, two revisions or
//! turns of the recorded projection, or a strategy against the recorded request. A block-level
//! summary first, then a unified diff of the rendered projections. Exit 0 equal, 1 different.

use std::io::Write;

use anyhow::Result;

use ctxj::render::style::Paint;
use ctxj_core::journal::Journal;
use ctxj_core::strategy::{self, recorded_view, strategy_view_with_progress, Strategy, View};
use ctxj_core::tokens::Estimator;

use ctxj::render::rows::write_output;

use super::args::{AtArgs, RowsArgs, SessionArgs};
use super::resolve::{EncodingArgs, StrategyArgs};
use super::{At, Ctx, EXIT_FINDINGS, EXIT_OK};

/// Diff two projections: strategies, revisions or turns.
///
/// Each side is a strategy (--strategy NAME) or a position (--at rev N | --at turn K):
///   two --strategy, at most one --at turn K   both strategies at turn K (default: the last turn)
///   two --at, no --strategy                  the recorded projection at both positions
///   one --at, no --strategy                  that position against the end of the journal
///   one --strategy, no/one --at              the recorded request against the strategy's (same turn)
///   one --strategy, two --at                 that strategy at both turns
///   two --strategy, two --at                 each strategy at its position, in order
///
/// Output: one summary line (the only line when the sides are equal), the blocks only on one
/// side and the blocks whose text changed (ids, chars, delta), then a unified diff of the rendered
/// projections. Exit status like diff(1): 0 equal, 1 different, 2 error. --format json prints
/// all of it (docs/json.md, `ctxj.diff/1`); ndjson and csv print the blocks that differ.
///
/// Strategy names: recorded, baseline, truncate-N, age-truncate-N-keep-K, mid-truncate-N,
/// sliding-N[-pin], per-tool-keep-K, elide-keep-K, elide-B-T-keep-K,
/// compact-at-N[t][-structured][-repeat|-chain], tiered, tiered-fast.
///
/// Examples:
///   ctxj diff sample-journals/bugfix-todo -s baseline -s truncate-500 --at turn 9
///   ctxj diff sample-journals/long-elision --at rev 40 --at rev 41
///   ctxj diff sample-journals/bugfix-todo --strategy truncate-500 --stat
///   ctxj diff sample-journals/bugfix-todo --strategy compact-at-12000-structured --json
#[derive(Debug, clap::Args)]
#[command(verbatim_doc_comment)]
#[command(mut_arg("strategies", |a| a.help("A side replayed with this strategy (give it twice for two strategies)")))]
pub struct Args {
    #[command(flatten)]
    pub session: SessionArgs,
    #[command(flatten)]
    pub strategy: StrategyArgs,
    /// A side's position (give it twice for two positions).
    #[command(flatten)]
    pub at: AtArgs,
    /// The block-level summary only, no text diff.
    #[arg(long)]
    pub stat: bool,
    /// Diff the whole rendered requests even when they are long (by default, past 20,000 lines
    /// only the blocks that differ are diffed, each cut at 2,000 lines, with a note saying so).
    #[arg(long, conflicts_with = "stat")]
    pub full: bool,
    #[command(flatten)]
    pub encoding: EncodingArgs,
    #[command(flatten)]
    pub output: RowsArgs,
}

/// What one side is.
enum Side {
    Recorded(Option<At>),
    Replay(Strategy, Option<At>),
}

fn sides(strategies: &[Strategy], at: &[At]) -> Result<(Side, Side)> {
    use Side::*;
    let s = |i: usize, a: Option<At>| Replay(strategies[i].clone(), a);
    let recorded = Strategy::recorded;
    Ok(match (strategies.len(), at.len()) {
        (0, 0) => anyhow::bail!("diff needs two sides: --strategy NAME and/or --at rev N | --at turn K (see --help)"),
        (0, 1) => (Recorded(Some(at[0])), Recorded(None)),
        (0, 2) => (Recorded(Some(at[0])), Recorded(Some(at[1]))),
        (1, 0) => (Replay(recorded(), None), s(0, None)),
        (1, 1) => (Replay(recorded(), Some(at[0])), s(0, Some(at[0]))),
        (1, 2) => (s(0, Some(at[0])), s(0, Some(at[1]))),
        (2, 0) => (s(0, None), s(1, None)),
        (2, 1) => (s(0, Some(at[0])), s(1, Some(at[0]))),
        (2, 2) => (s(0, Some(at[0])), s(1, Some(at[1]))),
        _ => anyhow::bail!("diff compares two sides: at most two --strategy and two --at"),
    })
}

fn resolve(journal: &Journal, side: Side, est: &dyn Estimator) -> Result<View> {
    match side {
        Side::Recorded(at) => Ok(recorded_view(journal, at)?),
        Side::Replay(s, at) => {
            let what = format!("replaying {}, turn", s.name);
            Ok(super::progress::with_progress_of(&what, |p| strategy_view_with_progress(journal, &s, est, at, p))?)
        }
    }
}

pub fn run(args: Args, ctx: &Ctx) -> Result<u8> {
    let at = args.at.all()?;
    let replays = args.strategy.as_given(ctx.cache.as_deref());
    let (ls, rs) = sides(&replays.strategies, &at)?;
    let (_, journal) = ctx.load(&args.session.session)?;
    let est = args.encoding.estimator(&journal, ctx)?;
    let l = resolve(&journal, ls, &est)?;
    let r = resolve(&journal, rs, &est)?;
    replays.check()?;
    let d = strategy::compare(&l, &r);
    let text_diff = (!d.equal && !args.stat).then(|| ctxj::render::diff::text_diff(&l, &r, args.full));
    let mut out = super::stdout();
    let doc = ctxj::render::diff::doc(&d, text_diff.as_ref());
    write_output(&mut out, args.output.format(), &doc, &ctxj::render::diff::rows(&doc), || {
        ctxj::render::diff::text(&d, text_diff.as_ref(), &Paint::new(ctx.color))
    })?;
    out.flush()?;
    Ok(if d.equal { EXIT_OK } else { EXIT_FINDINGS })
}

super::session_command!(Args);
