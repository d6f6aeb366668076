//! `ctxj show`: the projection at a revision or turn, as text or canonical JSON; with
//! `--strategy`, the request another strategy would have sent at a turn.

use std::io::Write;

use anyhow::Result;

use ctxj::journal::{Body, Journal, Session};
use ctxj::projection::block::{canonical_of, sha256_hex};
use ctxj::projection::{request_at_turn, state_at_rev, Block, Projection};
use ctxj::render::format::thousands;
use ctxj::render::projection::{write_block, write_projection, Extra, Style};
use ctxj::strategy::{self, Origin, Strategy};
use ctxj::text::escape_line;
use ctxj::tokens::{estimator_for, Estimator};

use super::{At, Ctx, EXIT_OK};
use ctxj::render::style::Paint;

/// Show what the provider received: the projection at a revision or turn.
///
/// Without --at, the projection after the last record. `--at rev N` is the state after records
/// 1..N; `--at turn K` is the request of the K-th assistant record, byte for byte.
///
/// With --strategy NAME, the request that strategy would have sent at turn K (default: the last
/// turn), replayed over the raw conversation; blocks it changed are tagged ([truncated],
/// [elided (turn 5)], [summary (turn 9)], …). `ctxj diff --help` lists the strategy names.
///
/// Examples:
///   ctxj show sample-journals/bugfix-todo --at turn 9
///   ctxj show sample-journals/bugfix-todo --strategy age-truncate-500-keep-3 --at turn 9
///   ctxj show sample-journals/long-elision --at rev 12
///   ctxj show sample-journals/spill-attach --expand
///   ctxj show sample-journals/bugfix-todo --at turn 3 --json | head -c -1 | sha256sum
#[derive(Debug, clap::Args)]
#[command(verbatim_doc_comment)]
pub struct Args {
    /// Session directory, journal.jsonl path, or session id under --root.
    pub session: String,
    /// Position: `rev N` or `turn K`.
    #[arg(long, num_args = 2, value_names = ["rev|turn", "N"])]
    pub at: Vec<String>,
    /// Print exactly the canonical JSON bytes (spec §4) plus a newline.
    #[arg(long, conflicts_with = "expand")]
    pub json: bool,
    /// Inline spill files of results (read-only, confined to the session directory).
    #[arg(long)]
    pub expand: bool,
    /// Replay this strategy (e.g. truncate-500, age-truncate-500-keep-3, compact-at-12000-structured).
    #[arg(long, value_name = "NAME")]
    pub strategy: Option<String>,
}

/// The estimator strategies count tokens with: tiktoken with the session's `encoding`, else
/// `o200k_base` (spec §3).
pub(crate) fn estimator(journal: &Journal) -> Result<Box<dyn Estimator>> {
    Ok(Box::new(estimator_for(journal, None)?))
}

/// Parses a strategy name; the error lists the families.
pub(crate) fn parse_strategy(name: &str) -> Result<Strategy> {
    Ok(strategy::parse(name)?)
}

/// One side of a comparison or view: a request (or state) with how its blocks came to be.
pub(crate) struct View {
    /// What it is, e.g. "recorded · turn 9" or "truncate-500 · turn 9".
    pub label: String,
    pub blocks: Vec<Block>,
    pub origins: Vec<Origin>,
}

impl View {
    pub fn chars(&self) -> usize {
        self.blocks.iter().map(Block::chars).sum()
    }
    pub fn canonical(&self) -> Vec<u8> {
        canonical_of(self.blocks.iter())
    }
}

/// The recorded projection at `at` (None: after the last record) as a [`View`].
pub(crate) fn recorded_view(journal: &Journal, at: Option<At>) -> Result<View> {
    let p = projection_at(journal, at)?;
    let pos = at.map_or_else(|| format!("rev {} (end)", journal.last_rev()), At::describe);
    Ok(View {
        label: format!("recorded · {pos}"),
        blocks: p.blocks().cloned().collect(),
        origins: strategy::recorded_origins(&p).collect(),
    })
}

/// The request of `strategy` at `at` (a turn; None: the last turn) as a [`View`].
pub(crate) fn strategy_view(journal: &Journal, s: &Strategy, at: Option<At>) -> Result<View> {
    if s.is_recorded() {
        let at = at.or_else(|| (!journal.turns.is_empty()).then_some(At::Turn(journal.turns.len())));
        let mut v = recorded_view(journal, at)?;
        v.label = v.label.replacen("recorded", &s.name, 1);
        return Ok(v);
    }
    let k = match at {
        Some(At::Rev(n)) => {
            anyhow::bail!("--strategy {} replays turns, not revisions: use --at turn K (not rev {n})", s.name)
        }
        Some(a @ At::Turn(k)) => {
            a.check(journal)?;
            k
        }
        None => journal.turns.len(),
    };
    anyhow::ensure!(k >= 1, "the journal has no turns (no assistant record), so there is no request to replay");
    let est = estimator(journal)?;
    let (blocks, origins) = strategy::request_at(journal, s, est.as_ref(), k).expect("turn checked above");
    Ok(View { label: format!("{} · turn {k}", s.name), blocks, origins })
}

/// Writes the human view of a request: block headers (tagged with what the strategy did) and
/// indented, escaped content.
/// Without `numbered`, headers carry no `[n]` (so a dropped block does not renumber the rest).
pub(crate) fn write_view(out: &mut String, v: &View, style: &dyn Style, numbered: bool, extra: Option<Extra<'_>>) {
    for (i, (b, o)) in v.blocks.iter().zip(&v.origins).enumerate() {
        let mut one = String::new();
        write_block(&mut one, i + 1, b, None, None, style);
        if !numbered {
            let prefix = format!("[{}] ", i + 1);
            if let Some(p) = one.find(&prefix) {
                one.replace_range(p..p + prefix.len(), "");
            }
        }
        if matches!(b, Block::Summary { .. }) && o.is_changed() {
            // write_block tags every summary "[summarized]"; say which pass wrote it instead.
            one = one.replacen("[summarized]", &format!("[{}]", o.describe()), 1);
        } else if o.is_changed() {
            let nl = one.find('\n').unwrap_or(one.len());
            one.insert_str(nl, &format!(" {}", style.marker(&format!("[{}]", o.describe()))));
        }
        out.push_str(&one);
        if let Some(f) = extra {
            if let Some(x) = f(b) {
                for line in ctxj::text::escape_block(&x).split('\n') {
                    out.push_str("    ");
                    out.push_str(line);
                    out.push('\n');
                }
            }
        }
    }
}

pub(crate) struct Painted<'a>(pub &'a Paint);
impl Style for Painted<'_> {
    fn header(&self, s: &str) -> String {
        self.0.bold(s)
    }
    fn marker(&self, s: &str) -> String {
        self.0.yellow(s)
    }
    fn dim(&self, s: &str) -> String {
        self.0.dim(s)
    }
}

/// The projection at `at` (default: after the last record).
pub fn projection_at(journal: &Journal, at: Option<At>) -> Result<Projection> {
    Ok(match at {
        None => state_at_rev(journal, u64::MAX),
        Some(a) => {
            a.check(journal)?;
            match a {
                At::Rev(n) => state_at_rev(journal, n),
                At::Turn(k) => request_at_turn(journal, k).expect("checked above"),
            }
        }
    })
}

pub fn run(args: Args, ctx: &Ctx) -> Result<u8> {
    let strategy = args.strategy.as_deref().map(parse_strategy).transpose()?;
    let (session, journal) = ctx.load(&args.session)?;
    let at = At::parse_pairs(&args.at)?;
    anyhow::ensure!(at.len() <= 1, "show takes one --at");
    let mut at = at.first().copied();
    if strategy.as_ref().is_some_and(Strategy::is_recorded) && at.is_none() && !journal.turns.is_empty() {
        at = Some(At::Turn(journal.turns.len()));
    }
    if let Some(s) = strategy.filter(|s| !s.is_recorded()) {
        return show_strategy(&args, ctx, &session, &journal, &s, at);
    }
    let p = projection_at(&journal, at)?;
    let mut out = super::stdout();
    if args.json {
        out.write_all(&p.canonical())?;
        out.write_all(b"\n")?;
        out.flush()?;
        return Ok(EXIT_OK);
    }
    let paint = Paint::new(ctx.color);
    let sid = journal.session().map_or("?", |s| s.id.as_str());
    let model = journal.session().and_then(|s| s.model.as_deref()).unwrap_or("?");
    let pos = at.map_or_else(|| format!("rev {} (end)", journal.last_rev()), At::describe);
    let mut s = String::new();
    s.push_str(&paint.bold(&format!(
        "session {} · {} · {} · {} blocks · {} chars · sha256 {}",
        escape_line(sid),
        escape_line(model),
        pos,
        p.len(),
        thousands(p.chars() as u64),
        &p.sha256()[..16]
    )));
    s.push('\n');
    if p.system.is_none() {
        s.push_str(&paint.dim("(no system prompt recorded in this journal)\n"));
    }
    let expand = |b: &Block| spill_text(&session, &journal, b);
    write_projection(&mut s, &p, &Painted(&paint), if args.expand { Some(&expand) } else { None });
    out.write_all(s.as_bytes())?;
    out.flush()?;
    Ok(EXIT_OK)
}

fn show_strategy(
    args: &Args,
    ctx: &Ctx,
    session: &Session,
    journal: &Journal,
    s: &Strategy,
    at: Option<At>,
) -> Result<u8> {
    let v = strategy_view(journal, s, at)?;
    let mut out = super::stdout();
    let canonical = v.canonical();
    if args.json {
        out.write_all(&canonical)?;
        out.write_all(b"\n")?;
        out.flush()?;
        return Ok(EXIT_OK);
    }
    let paint = Paint::new(ctx.color);
    let sid = journal.session().map_or("?", |s| s.id.as_str());
    let changed = v.origins.iter().filter(|o| o.is_changed()).count();
    let mut text = paint.bold(&format!(
        "session {} · strategy {} · {} blocks · {} chars · {} changed by the strategy · sha256 {}",
        escape_line(sid),
        escape_line(&v.label),
        v.blocks.len(),
        thousands(v.chars() as u64),
        changed,
        &sha256_hex(&canonical)[..16]
    ));
    text.push('\n');
    let expand = |b: &Block| spill_text(session, journal, b);
    write_view(&mut text, &v, &Painted(&paint), true, if args.expand { Some(&expand) } else { None });
    out.write_all(text.as_bytes())?;
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
