//! `ctxj show`: the projection at a revision or turn, as text or canonical JSON; with
//! `--strategy`, the request another strategy would have sent at a turn.

use std::io::Write;

use anyhow::Result;

use ctxj::journal::{Body, Journal, Session};
use ctxj::projection::{projection_at, Block};
use ctxj::render::projection::Extra;
use ctxj::render::style::Paint;
use ctxj::strategy::{self, strategy_view, Strategy};

use super::args::{AtArgs, OutputArgs, SessionArgs};
use super::{At, Ctx, EXIT_OK};

/// Show what the provider received: the projection at a revision or turn.
///
/// Without --at, the projection after the last record. `--at rev N` is the state after records
/// 1..N; `--at turn K` is the request of the K-th assistant record, byte for byte.
///
/// With --strategy NAME, the request that strategy would have sent at turn K (default: the last
/// turn), replayed over the raw conversation; blocks it changed are tagged ([truncated],
/// [elided (turn 5)], [summary (turn 9)], …). `ctxj diff --help` lists the strategy names.
///
/// --json prints the canonical bytes followed by one newline; without that newline their SHA-256
/// is the turn's prompt_sha256 (the last example; on macOS use `shasum -a 256`).
///
/// Examples:
///   ctxj show sample-journals/bugfix-todo --at turn 9
///   ctxj show sample-journals/bugfix-todo -s age-truncate-500-keep-3 --at turn 9
///   ctxj show sample-journals/long-elision --at rev 12
///   ctxj show sample-journals/spill-attach --expand
///   ctxj show sample-journals/transcripts/codex --at turn 2
///   ctxj show sample-journals/bugfix-todo --at turn 3 --json | tr -d '\n' | sha256sum
#[derive(Debug, clap::Args)]
#[command(verbatim_doc_comment)]
pub struct Args {
    #[command(flatten)]
    pub session: SessionArgs,
    #[command(flatten)]
    pub at: AtArgs,
    /// --json: exactly the canonical JSON bytes (spec §4) plus a newline.
    #[command(flatten)]
    pub output: OutputArgs,
    /// Inline spill files of results (read-only, confined to the session directory).
    #[arg(long, conflicts_with = "json")]
    pub expand: bool,
    /// Replay this strategy (e.g. truncate-500, age-truncate-500-keep-3, compact-at-12000-structured).
    #[arg(short = 's', long, value_name = "NAME")]
    pub strategy: Option<String>,
}

pub fn run(args: Args, ctx: &Ctx) -> Result<u8> {
    let strategy = args.strategy.as_deref().map(strategy::parse).transpose()?;
    let (session, journal) = ctx.load(&args.session.session)?;
    let mut at = args.at.one()?;
    if strategy.as_ref().is_some_and(Strategy::is_recorded) && at.is_none() && !journal.turns.is_empty() {
        at = Some(At::Turn(journal.turns.len()));
    }
    let paint = Paint::new(ctx.color);
    let expand = |b: &Block| spill_text(&session, &journal, b);
    let extra: Option<Extra<'_>> = if args.expand { Some(&expand) } else { None };
    let (canonical, text) = match strategy.filter(|s| !s.is_recorded()) {
        Some(s) => {
            let v = strategy_view(&journal, &s, at)?;
            let canonical = v.canonical();
            let text = (!args.output.json).then(|| ctxj::render::show::view(&journal, &v, &canonical, &paint, extra));
            (canonical, text)
        }
        None => {
            let p = projection_at(&journal, at)?;
            let text = (!args.output.json).then(|| ctxj::render::show::projection(&journal, at, &p, &paint, extra));
            (if args.output.json { p.canonical() } else { Vec::new() }, text)
        }
    };
    let mut out = super::stdout();
    match text {
        Some(t) => out.write_all(t.as_bytes())?,
        None => {
            out.write_all(&canonical)?;
            out.write_all(b"\n")?;
        }
    }
    out.flush()?;
    Ok(EXIT_OK)
}

/// The spill file of a result block, for `--expand`: its content, or why it is not shown.
fn spill_text(session: &Session, journal: &Journal, b: &Block) -> Option<String> {
    let Block::Result { call, .. } = b else { return None };
    let idx = *journal.results.get(call)?;
    let Body::Result(r) = &journal.records[idx].body else { return None };
    let spill = r.spill.as_deref()?;
    Some(match session.read_confined(spill) {
        Ok(bytes) => format!("── spill {} ({} bytes) ──\n{}", spill, bytes.len(), String::from_utf8_lossy(&bytes)),
        Err(e) => format!("── spill {spill}: not shown: {e} ──"),
    })
}
