//! `ctxj statusline`: Claude Code's status line (its JSON on stdin), or a `ctxj watch` state
//! rendered (`--state FILE`) for Codex and pi.

use std::io::{Read as _, Write as _};
use std::path::PathBuf;

use anyhow::{Context as _, Result};

use ctxj::render::live::{status_lines, StatusDoc};
use ctxj::render::style::Paint;
use ctxj_core::import::Format;
use ctxj_core::live::compact::Overrides;
use ctxj_core::live::{store, Inputs, Snapshot, StatusInput};
use ctxj_core::text::escape_line;

use super::{Ctx, EXIT_OK};

/// Print a status line: context against the compaction point, cache lifetime, dollars.
///
/// Reads Claude Code's status-line JSON on stdin (every field optional), follows the session's
/// transcript from where the previous run stopped (state kept in the user's cache folder, never
/// in the session's), and prints: model · context and % of the compaction point (`obs`: this
/// user's observed compactions for the model; `est`: Claude Code's documented rule with
/// CLAUDE_CODE_AUTO_COMPACT_WINDOW, CLAUDE_AUTOCOMPACT_PCT_OVERRIDE and `autoCompactWindow`) ·
/// calls left at the recent growth · cache lifetime and time to expiry with the cold re-write
/// cost · session $ (as `ctxj usage` bills it) · last and next call $. Absent figures are hidden.
///
/// In ~/.claude/settings.json: "statusLine": {"type": "command", "command": "ctxj statusline
/// --color always", "refreshInterval": 1}. For Codex and pi, `ctxj watch` writes a state file per
/// session that `ctxj statusline --state FILE` renders (tmux, starship, a pi extension).
///
/// Examples:
///   ctxj statusline --transcript sample-journals/transcripts/pi/sessions/*/*.jsonl
///   ctxj statusline --format json --transcript sample-journals/transcripts/codex/sessions/*/*/*/*
#[derive(Debug, clap::Args)]
#[command(verbatim_doc_comment)]
pub struct Args {
    /// Render this `ctxj watch` state file instead of reading stdin.
    #[arg(long, value_name = "FILE", conflicts_with = "transcript")]
    pub state: Option<PathBuf>,
    /// Follow this transcript (any agent) instead of stdin's `transcript_path`; stdin is not read.
    #[arg(long, value_name = "FILE")]
    pub transcript: Option<PathBuf>,
    /// Output: the line(s), or the JSON document (schema ctxj.statusline/1).
    #[arg(long, value_enum, default_value_t = StatusFormat::Line)]
    pub format: StatusFormat,
    /// Lines: 1, or 2 (context; cache and money). Default: 2 when $COLUMNS ≥ 140.
    #[arg(long, value_parser = clap::value_parser!(u8).range(1..=2))]
    pub lines: Option<u8>,
    /// The time to render at (RFC 3339; default now). For tests and replays.
    #[arg(long, hide = true, value_name = "TIME")]
    pub now: Option<String>,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, clap::ValueEnum)]
pub enum StatusFormat {
    Line,
    Json,
}

/// Now in Unix ms, or `--now`.
pub fn now_ms(flag: Option<&str>) -> Result<i64> {
    ctxj_core::live::now_ms(flag)
        .with_context(|| format!("--now {}: not an RFC 3339 time", escape_line(flag.unwrap_or_default())))
}

/// The snapshot of the session at `transcript`, its state resumed and saved in the cache folder
/// `cache` (`None`, under `--no-cache`: read from zero, nothing written). `agent`: the
/// transcript's agent when known (Claude Code's stdin), else detected.
pub fn follow(
    transcript: &std::path::Path,
    agent: Option<Format>,
    inp: Inputs,
    cache: Option<&std::path::Path>,
) -> Result<Snapshot> {
    let shown = escape_line(&transcript.display().to_string());
    let dir = store::dir(cache);
    let mut session = match &dir {
        Some(d) => store::load(d, transcript, agent),
        None => ctxj_core::live::LiveSession::open(transcript, agent),
    }?;
    // Settled after each look: a first run on a long transcript holds little of it at once.
    session.poll_settling().with_context(|| format!("reading {shown}"))?;
    let mut inp = inp;
    if let Some(d) = &dir {
        // The state is a cache: a failed write costs the next run a longer read, nothing else.
        let _ = store::save(d, &mut session);
        store::remember(d, session.observed());
        inp.observed = store::observed(d);
    }
    Ok(Snapshot::of(&session, &inp))
}

pub fn run(args: Args, ctx: &Ctx) -> Result<u8> {
    let now = now_ms(args.now.as_deref())?;
    let doc = if let Some(state) = &args.state {
        let bytes = ctxj_core::journal::input::read_regular(state)
            .with_context(|| format!("reading {}", escape_line(&state.display().to_string())))?;
        let mut doc = StatusDoc::read(&bytes)
            .with_context(|| format!("{}: not a ctxj watch state", escape_line(&state.display().to_string())))?;
        doc.snapshot = doc.snapshot.at(now);
        doc
    } else {
        let input = match &args.transcript {
            Some(_) => StatusInput::default(),
            None => {
                let mut buf = Vec::new();
                std::io::stdin().take(1 << 20).read_to_end(&mut buf).context("reading stdin")?;
                StatusInput::parse(&buf).context("stdin: not Claude Code's status-line JSON")?
            }
        };
        let (transcript, agent) = match &args.transcript {
            Some(t) => (Some(t.clone()), None),
            None => (input.transcript_path.as_ref().map(PathBuf::from), Some(Format::ClaudeCode)),
        };
        let inp = Inputs {
            now_ms: now,
            overrides: Overrides::from_user(),
            observed: Vec::new(),
            context: input.context(),
            reported_cause: input.last_miss_cause.clone(),
        };
        match transcript {
            Some(t) => {
                StatusDoc::new(follow(&t, agent, inp, ctx.cache.as_deref())?, input.model_name.clone(), input.cost_usd)
            }
            None => {
                // Nothing to follow yet: what the harness said is all there is.
                let name = input.model_name.clone().or(input.model_id.clone());
                let mut out = super::stdout();
                if let Some(n) = name.filter(|_| args.format == StatusFormat::Line) {
                    writeln!(out, "{}", escape_line(&n))?;
                }
                out.flush()?;
                return Ok(EXIT_OK);
            }
        }
    };
    let mut out = super::stdout();
    match args.format {
        StatusFormat::Json => {
            serde_json::to_writer_pretty(&mut out, &doc)?;
            writeln!(out)?;
        }
        StatusFormat::Line => {
            let wide =
                std::env::var("COLUMNS").ok().and_then(|c| c.trim().parse::<u32>().ok()).is_some_and(|c| c >= 140);
            let two = args.lines.map_or(wide, |n| n == 2);
            for l in status_lines(&doc, &Paint::new(ctx.color), two) {
                writeln!(out, "{l}")?;
            }
        }
    }
    out.flush()?;
    Ok(EXIT_OK)
}

impl super::Cmd for Args {
    fn machine_output(&self) -> bool {
        true
    }

    fn run(self, ctx: &super::Ctx) -> anyhow::Result<u8> {
        run(self, ctx)
    }
}
