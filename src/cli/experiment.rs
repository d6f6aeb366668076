//! `ctxj experiment <manifest>`: real runs of several strategies side by side, with intervals.

use std::io::Write;
use std::path::PathBuf;

use anyhow::Result;

use ctxj::render::experiment::{rows, table};
use ctxj::render::rows::{write_rows, OutputFormat};
use ctxj_core::experiment::{self, Options};

use super::args::RowsArgs;
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
    #[arg(long, value_name = "STRATEGY", num_args = 1..)]
    pub replay: Vec<String>,
    /// Every measure's interval and contrast as a second table.
    #[arg(long)]
    pub detail: bool,
    /// Bootstrap seed (default: the manifest's `seed`, else a fixed one).
    #[arg(long, value_name = "N")]
    pub seed: Option<u64>,
    #[command(flatten)]
    pub output: RowsArgs,
}

pub fn run(args: Args, _ctx: &Ctx) -> Result<u8> {
    let e = experiment::run(&args.manifest, &Options { replay: args.replay.clone(), seed: args.seed })?;
    let mut out = super::stdout();
    match args.output.format() {
        OutputFormat::Table => write!(out, "{}", table(&e, args.detail, args.output.layout()))?,
        f => write_rows(&mut out, f, &e, &rows(&e))?,
    }
    out.flush()?;
    Ok(EXIT_OK)
}

/// `ctxj report --experiment <manifest> -o FILE`: the experiment as a self-contained HTML page,
/// with `replay` strategies as replay rows. Never written inside a session directory nor over the
/// manifest.
pub fn report(manifest: &str, replay: &[String], output: &std::path::Path, json: bool) -> Result<u8> {
    use anyhow::Context as _;
    let manifest = std::path::Path::new(manifest);
    let e = experiment::run(manifest, &Options { replay: replay.to_vec(), seed: None })?;
    let html = ctxj::render::experiment_html::render(&e);
    let parent = output.parent().filter(|p| !p.as_os_str().is_empty()).unwrap_or(std::path::Path::new("."));
    let parent =
        parent.canonicalize().with_context(|| format!("--output {}: its folder does not exist", output.display()))?;
    ctxj_core::journal::session::guard_not_in_session(&parent, true)
        .with_context(|| format!("--output {}", output.display()))?;
    ctxj_core::journal::session::write_guarded(output, html.as_bytes(), &[manifest])
        .with_context(|| format!("writing {}", output.display()))?;
    let mut out = super::stdout();
    if json {
        let doc = serde_json::json!({"path": output.display().to_string(), "bytes": html.len(),
                                     "arms": e.arms.len(), "runs": e.runs.len()});
        writeln!(out, "{doc}")?;
    } else {
        writeln!(
            out,
            "wrote {} ({} bytes): {} arms, {} runs",
            output.display(),
            html.len(),
            e.arms.len(),
            e.runs.len()
        )?;
    }
    out.flush()?;
    Ok(EXIT_OK)
}
