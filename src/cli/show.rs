//! `ctxj show`: the projection at a revision or turn, as text or canonical JSON; with
//! `--strategy`, the request another strategy would have sent at a turn.

use std::io::Write;

use anyhow::Result;

use ctxj::render::projection::Extra;
use ctxj::render::style::Paint;
use ctxj_core::journal::input::READ_CAP;
use ctxj_core::journal::{Body, Journal, Session};
use ctxj_core::projection::{projection_at, Block};
use ctxj_core::strategy::{strategy_view, Strategy};

use super::args::{AtArgs, OutputArgs, SessionArgs};
use super::resolve::{EncodingArgs, StrategyArgs};
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
#[command(mut_arg("strategies", |a| a.help(
    "Replay this strategy (e.g. truncate-500, age-truncate-500-keep-3, compact-at-12000-structured)"
)))]
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
    #[command(flatten)]
    pub strategy: StrategyArgs,
    #[command(flatten)]
    pub encoding: EncodingArgs,
}

pub fn run(args: Args, ctx: &Ctx) -> Result<u8> {
    let replays = args.strategy.as_given(ctx.cache.as_deref());
    let strategy = replays.one()?;
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
            let est = args.encoding.estimator(&journal, ctx)?;
            let v = strategy_view(&journal, &s, &est, at)?;
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
    replays.check()?;
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

/// The spill file of a result block, for `--expand`: its content (the first MiB, then how many
/// bytes were not read), a hex dump excerpt and its type when it is binary, or why it is not
/// shown.
fn spill_text(session: &Session, journal: &Journal, b: &Block) -> Option<String> {
    let Block::Result { call, .. } = b else { return None };
    let idx = *journal.results.get(call)?;
    let Body::Result(r) = &journal.records[idx].body else { return None };
    let spill = r.spill.as_deref()?;
    let c = match session.read_confined(spill, READ_CAP) {
        Ok(c) => c,
        Err(e) => return Some(format!("── spill {spill}: not shown: {e} ──")),
    };
    let more = match c.more() {
        0 => String::new(),
        n => format!("\n── … {n} bytes more (not read) ──"),
    };
    Some(match spill_as_text(&c.bytes, c.more() > 0) {
        Some(text) => format!("── spill {spill} ({} bytes) ──\n{text}{more}", c.total),
        None => format!(
            "── spill {spill} ({} bytes, binary: {}; first {} bytes) ──\n{}{more}",
            c.total,
            binary_type(&c.bytes),
            c.bytes.len().min(HEX_BYTES),
            hex_dump(&c.bytes[..c.bytes.len().min(HEX_BYTES)])
        ),
    })
}

/// Bytes of a binary spill shown as hex.
const HEX_BYTES: usize = 256;

/// The text of a spill, or `None` when it is binary (a NUL byte or invalid UTF-8; a character
/// cut by the read cap does not count).
fn spill_as_text(bytes: &[u8], cut: bool) -> Option<&str> {
    if bytes.contains(&0) {
        return None;
    }
    match std::str::from_utf8(bytes) {
        Ok(s) => Some(s),
        Err(e) if cut && e.error_len().is_none() => std::str::from_utf8(&bytes[..e.valid_up_to()]).ok(),
        Err(_) => None,
    }
}

/// A guess at what binary bytes are, from their magic number.
fn binary_type(b: &[u8]) -> &'static str {
    const MAGIC: &[(&[u8], &str)] = &[
        (b"\x89PNG", "PNG image"),
        (b"\xff\xd8\xff", "JPEG image"),
        (b"GIF8", "GIF image"),
        (b"%PDF", "PDF document"),
        (b"\x1f\x8b", "gzip data"),
        (b"PK\x03\x04", "zip archive"),
        (b"\x7fELF", "ELF executable"),
    ];
    MAGIC.iter().find(|(m, _)| b.starts_with(m)).map_or("binary data", |(_, t)| t)
}

/// `offset  hex bytes  |ascii|`, 16 bytes a line.
fn hex_dump(b: &[u8]) -> String {
    let mut out = String::new();
    for (i, row) in b.chunks(16).enumerate() {
        let hex: Vec<String> = row.iter().map(|x| format!("{x:02x}")).collect();
        let ascii: String =
            row.iter().map(|&x| if x.is_ascii_graphic() || x == b' ' { x as char } else { '.' }).collect();
        out.push_str(&format!("{:08x}  {:<47}  |{ascii}|\n", i * 16, hex.join(" ")));
    }
    out
}

impl super::Cmd for Args {
    fn reading(&self) -> Option<super::args::ReadArgs> {
        Some(self.session.read.clone())
    }

    fn machine_output(&self) -> bool {
        self.output.json
    }

    fn run(self, ctx: &super::Ctx) -> anyhow::Result<u8> {
        run(self, ctx)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn binary_spill_is_a_hex_dump_never_replacement_characters() {
        let png = b"\x89PNG\r\n\x1a\n\0\0\0\rIHDR";
        assert_eq!(spill_as_text(png, false), None);
        assert_eq!(binary_type(png), "PNG image");
        let d = hex_dump(png);
        assert!(d.starts_with("00000000  89 50 4e 47 0d 0a 1a 0a 00 00 00 0d 49 48 44 52  |.PNG........IHDR|"), "{d}");
        assert!(!d.contains('\u{fffd}'));
    }

    #[test]
    fn a_character_cut_by_the_cap_keeps_the_spill_text() {
        assert_eq!(spill_as_text("ab\u{e9}".as_bytes().split_at(3).0, true), Some("ab"));
        assert_eq!(spill_as_text(b"ab\xff", false), None);
    }
}
