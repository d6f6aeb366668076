//! `ctxj synth`: generate a synthetic journal for benchmarks and scale tests (hidden).

use std::path::PathBuf;

use std::io::Write as _;

use anyhow::{Context as _, Result};

use ctxj::render::format::thousands;
use ctxj_core::synth::{generate, SynthOptions};

use super::{progress, Ctx, EXIT_OK};

/// Generate a synthetic journal (hidden; for benchmarks and scale tests).
///
/// Writes `DIR/journal.jsonl` (plus spill and attachment files) for a session of N turns,
/// deterministically from the seed: tool outputs from 200 B to 200 KB with occasional 5 MB ones,
/// repeated reads of the same files, shell and test output, auto-elisions, `ctx clear` actions,
/// mirror commits, compactions, a model switch; every assistant record carries `usage` and the
/// correct `prompt_sha256`. DIR must not exist or be empty.
///
/// Examples:
///   ctxj synth --turns 300 --seed 1 -o /tmp/synth-300
///   ctxj synth --turns 100 --seed 3 --size-mb 4 -o /tmp/synth-4m
///   ctxj synth --sessions 2000 --seed 1 -o /tmp/fleet    # many small Claude Code sessions
#[derive(Debug, clap::Args)]
#[command(verbatim_doc_comment)]
pub struct Args {
    /// Number of turns (assistant records).
    #[arg(long, default_value_t = 1000)]
    pub turns: usize,
    /// Seed of the generator: the same seed and options give the same bytes.
    #[arg(long, default_value_t = 1)]
    pub seed: u64,
    /// Scale tool outputs so that the journal is about this many MiB.
    #[arg(long, value_name = "MIB")]
    pub size_mb: Option<f64>,
    /// About this many mirror commits (the linear-mirror benchmark; default: about one step in 400).
    #[arg(long, value_name = "N")]
    pub mirrors: Option<usize>,
    /// Output directory (created; must not exist or be empty).
    #[arg(short = 'o', long = "output", alias = "out", value_name = "DIR")]
    pub out: PathBuf,
    /// Write this many small Claude Code transcripts (DIR/projects/…) instead of one journal.
    #[arg(long, value_name = "N")]
    pub sessions: Option<usize>,
    /// Print the statistics as JSON.
    #[arg(long)]
    pub json: bool,
}

pub fn run(args: Args, _ctx: &Ctx) -> Result<u8> {
    if let Some(n) = args.sessions {
        let stats = ctxj_core::synth::fleet(n, args.seed, &args.out)
            .with_context(|| format!("synth into {}", args.out.display()))?;
        let mut out = super::stdout();
        serde_json::to_writer(&mut out, &stats)?;
        writeln!(out)?;
        out.flush()?;
        return Ok(EXIT_OK);
    }
    if let Some(mb) = args.size_mb {
        anyhow::ensure!(mb.is_finite() && mb > 0.0, "--size-mb {mb}: must be a positive number");
    }
    let opts = SynthOptions { turns: args.turns, seed: args.seed, size_mb: args.size_mb, mirrors: args.mirrors };
    let pb = progress::bar(args.turns as u64, "turns");
    let stats = generate(&opts, &args.out, &mut |n| pb.set_position(n as u64))
        .with_context(|| format!("synth into {}", args.out.display()))?;
    pb.finish_and_clear();
    let mut out = super::stdout();
    if args.json {
        serde_json::to_writer(&mut out, &stats)?;
        writeln!(out)?;
    } else {
        let n = thousands;
        writeln!(
            out,
            "{}: {} turns, {} records, {} bytes; {} results ({} of 5 MB, {} spilled), {} attachments, {} elides, {} clears, {} mirrors accepted, {} rejected, {} compactions, {} notices; hashed {} request bytes of {}",
            ctxj_core::text::escape_line(&args.out.join("journal.jsonl").display().to_string()),
            n(stats.turns as u64),
            n(stats.records),
            thousands(stats.journal_bytes),
            n(stats.results),
            n(stats.big_outputs),
            n(stats.spills),
            n(stats.attachments),
            n(stats.elides),
            n(stats.clears),
            n(stats.mirrors_accepted),
            n(stats.mirrors_rejected),
            n(stats.compactions),
            n(stats.notices),
            thousands(stats.hashed_bytes),
            thousands(stats.request_bytes)
        )?;
    }
    out.flush()?;
    Ok(EXIT_OK)
}

impl super::Cmd for Args {
    fn run(self, ctx: &super::Ctx) -> anyhow::Result<u8> {
        run(self, ctx)
    }
}
