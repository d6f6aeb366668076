//! `ctxj show`: the projection at a revision or turn, as text or canonical JSON.

use std::io::Write;

use anyhow::Result;

use ctxj::journal::{Body, Journal, Session};
use ctxj::projection::{request_at_turn, state_at_rev, Block, Projection};
use ctxj::render::projection::{write_projection, Style};
use ctxj::render::text::{escape_line, thousands};

use super::{At, Ctx, Paint, EXIT_OK};

/// Show what the provider received: the projection at a revision or turn.
///
/// Without --at, the projection after the last record. `--at rev N` is the state after records
/// 1..N; `--at turn K` is the request of the K-th assistant record, byte for byte.
///
/// Examples:
///   ctxj show sample-journals/bugfix-todo --at turn 9
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
    let (session, journal) = ctx.load(&args.session)?;
    let at = At::parse_pairs(&args.at)?;
    anyhow::ensure!(at.len() <= 1, "show takes one --at");
    let at = at.first().copied();
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
