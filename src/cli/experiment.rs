//! `ctxj experiment <manifest>`: real runs of several strategies side by side, with intervals.

use std::io::Write;
use std::path::PathBuf;

use anyhow::Result;

use ctxj::render::experiment::{rows, table};
use ctxj::render::rows::{write_rows, OutputFormat};
use ctxj_core::experiment::{self, Options};

use super::args::RowsArgs;
use super::resolve::EncodingArgs;
use super::{Ctx, EXIT_OK};

/// Compare real runs of several context strategies side by side, with uncertainty.
///
/// The manifest (TOML) names arms — a label and the sessions of its runs, by path or glob
/// relative to the manifest, in any format ctxj reads — the reference arm, and optionally
/// per-session outcomes, a model to price unlabelled turns with, a LiteLLM price table, and the
/// bootstrap's seed and resamples (docs/experiments.md). Per arm: runs, passes (from the
/// manifest, else the journal's last `outcome` record), and mean ± sd of cost, turns, prompt
/// tokens, peak prompt, cache hit rate, cache breaks, compactions and wall time as billed, each
/// with a seeded bootstrap 95% interval and its contrast with the reference (a ratio for cost, a
/// difference otherwise); then one verdict line per arm that claims no more than the intervals.
/// --replay adds counterfactual rows: the reference arm's runs replayed under a strategy, marked
/// as replays (they keep the recorded trajectory and cannot pass or fail).
///
/// Examples:
///   ctxj experiment sample-journals/experiment-bugfix/experiment.toml
///   ctxj experiment sample-journals/experiment-bugfix/experiment.toml --replay truncate-500
///   ctxj experiment sample-journals/experiment-bugfix/experiment.toml --detail --format csv
#[derive(Debug, clap::Args)]
#[command(verbatim_doc_comment)]
pub struct Args {
    /// The experiment manifest (TOML).
    pub manifest: PathBuf,
    /// Strategies to replay over the reference arm's runs (repeatable, or several after one flag).
    #[arg(
        long,
        value_name = "STRATEGY",
        num_args = 1..,
        value_parser = super::offer::words(ctxj_core::strategy::completion_words),
        hide_possible_values = true
    )]
    pub replay: Vec<String>,
    /// Every measure's interval and contrast as a second table.
    #[arg(long)]
    pub detail: bool,
    /// Bootstrap seed (default: the manifest's `seed`, else a fixed one).
    #[arg(long, value_name = "N")]
    pub seed: Option<u64>,
    #[command(flatten)]
    pub encoding: EncodingArgs,
    #[command(flatten)]
    pub output: RowsArgs,
}

pub fn run(args: Args, ctx: &Ctx) -> Result<u8> {
    let tokenizer = args.encoding.tokenizer(ctx)?;
    let e = experiment::run(&args.manifest, &Options { replay: args.replay.clone(), seed: args.seed, tokenizer })?;
    let mut out = super::stdout();
    match args.output.format() {
        OutputFormat::Table => write!(out, "{}", table(&e, args.detail, args.output.layout()))?,
        f => write_rows(&mut out, f, &e, &rows(&e))?,
    }
    out.flush()?;
    Ok(EXIT_OK)
}

impl super::Cmd for Args {
    fn machine_output(&self) -> bool {
        self.output.machine()
    }

    fn run(self, ctx: &super::Ctx) -> anyhow::Result<u8> {
        run(self, ctx)
    }
}
