//! `ctxj report`: write a self-contained HTML report of a session (charts, comparison table,
//! decision timeline, turn browser). The data comes from `ctxj_core::report::build`, the page from
//! `ctxj::render::html`; this file resolves the arguments and writes the file.

use std::io::Write;
use std::path::{Path, PathBuf};

use anyhow::{Context as _, Result};

use ctxj::render::html::{write_page, Spill};
use ctxj_core::report::{self, Options, TurnRange, DEFAULT_TEXT_CAP};

use super::args::{OutputArgs, SessionArgs};
use super::resolve::{EncodingArgs, PricingArgs, StrategyArgs};
use super::{Ctx, EXIT_OK};

/// Write a self-contained HTML report of a session.
///
/// One HTML file with inline CSS and SVG (no network access needed to view it): the session
/// header, three charts per turn (prompt size, cumulative cost, cache-hit rate) with one line per
/// strategy, the strategy comparison table, the journal's cleanup decisions marked on the
/// prompt-size chart, and a turn browser with each request's blocks and its diff to the previous
/// request. Everything taken from the journal is HTML-escaped; block text is capped per block.
/// Sections whose data this build cannot compute say "not available in this build".
///
/// The report is never written inside the session directory.
///
/// Examples:
///   ctxj report sample-journals/bugfix-todo -o /tmp/report.html
///   ctxj report sample-journals/bugfix-todo -s baseline -s truncate-500 -o /tmp/report.html
///   ctxj report long-elision --root sample-journals --cache anthropic -o /tmp/long-elision.html
///   ctxj report sample-journals/transcripts/pi -s recorded -s sliding-8 -o /tmp/pi.html
///   ctxj report --experiment sample-journals/experiment-bugfix/experiment.toml -o /tmp/exp.html
///   ctxj report sample-journals/long-elision --turns 10..20 -o /tmp/turns-10-20.html
#[derive(Debug, clap::Args)]
#[command(verbatim_doc_comment)]
#[command(mut_arg("strategies", |a| a.help("A strategy to replay (repeatable; default: recorded and baseline)")))]
pub struct Args {
    #[command(flatten)]
    pub session: SessionArgs,
    #[command(flatten)]
    pub strategy: StrategyArgs,
    #[command(flatten)]
    pub pricing: PricingArgs,
    #[command(flatten)]
    pub encoding: EncodingArgs,
    /// Where to write the HTML file (never inside the session directory; default:
    /// `ctxj-report-<session>.html`, or `ctxj-experiment-<manifest>.html`, in the current folder).
    #[arg(short = 'o', long = "output", value_name = "FILE")]
    pub output: Option<PathBuf>,
    /// Characters of text inlined per block in the turn browser.
    #[arg(long, value_name = "CHARS", default_value_t = DEFAULT_TEXT_CAP, value_parser = clap::builder::RangedU64ValueParser::<usize>::new().range(1..))]
    pub text_cap: usize,
    /// Only these turns in the turn browser, A..B (from 1, both included; the charts and tables
    /// still cover every turn).
    #[arg(long, value_name = "A..B", value_parser = parse_turns, conflicts_with = "last")]
    pub turns: Option<(usize, usize)>,
    /// Only the last N turns in the turn browser (the charts and tables still cover every turn).
    #[arg(long, value_name = "N", value_parser = clap::builder::RangedU64ValueParser::<usize>::new().range(1..))]
    pub last: Option<usize>,
    /// --json: what was written (path, bytes, strategies, turns) instead of a line of text.
    #[command(flatten)]
    pub output_format: OutputArgs,
    /// Read SESSION as an experiment manifest and draw the experiment: per-arm bars with
    /// intervals, per-run dots, per-turn curves per run (docs/experiments.md); -s adds replays.
    #[arg(long)]
    pub experiment: bool,
}

pub fn run(args: Args, ctx: &Ctx) -> Result<u8> {
    if args.experiment {
        let json = args.output_format.json;
        let tokenizer = args.encoding.tokenizer(ctx)?;
        let names: Vec<String> = args.strategy.strategies.iter().map(|s| s.name.clone()).collect();
        let stem = Path::new(&args.session.session).file_stem().map(|s| s.to_string_lossy().into_owned());
        let output = args.output.clone().unwrap_or_else(|| default_output("experiment", stem.as_deref()));
        return experiment_report(&args.session.session, &names, tokenizer, &output, json);
    }
    let replays = args.strategy.list(ctx.cache.as_deref())?;
    let table = args.pricing.table(ctx)?;
    let (session, journal) = ctx.load(&args.session.session)?;
    let name = journal.session().map(|s| s.id.clone()).filter(|id| !id.is_empty());
    let name = name.or_else(|| session.dir.file_name().map(|n| n.to_string_lossy().into_owned()));
    let output = args.output.clone().unwrap_or_else(|| default_output("report", name.as_deref()));
    let output = check_output(&output, &session.dir)?;
    let turns = match (args.turns, args.last) {
        (Some((a, b)), _) => TurnRange::Range(a, b),
        (None, Some(n)) => TurnRange::Last(n),
        (None, None) => TurnRange::All,
    };
    let pricing = Some(args.pricing.pricing(&journal, table));
    let opts = Options {
        text_cap: args.text_cap,
        pricing,
        tokenizer: args.encoding.tokenizer(ctx)?,
        notes: Vec::new(),
        turns,
    };
    let strategies = &replays.strategies;
    // The turn browser's views go to temporary files as they are built, and the page is
    // written piece by piece: neither is held whole in memory.
    let mut spill =
        Spill::new(strategies.iter().map(|s| s.name.clone()).collect()).context(super::Internal("a temporary file"))?;
    let data = super::progress::with_progress(|p| {
        report::build_streaming(&journal, strategies, &opts, p, Some(&mut |s, v| spill.push(s, &v)))
    })?;
    replays.check()?;
    spill.finish().context(super::Internal("writing the turn browser to a temporary file"))?;
    let mut bytes = 0;
    ctxj_core::journal::session::write_guarded_with(&output, &[&session.journal_path], &mut |w| {
        bytes = write_page(w, &data, &mut spill)?;
        Ok(())
    })
    .with_context(|| format!("writing {}", output.display()))?;

    let mut out = super::stdout();
    let written = ctxj::render::html::Written::new(&output, bytes as usize, &data);
    if args.output_format.json {
        writeln!(out, "{}", serde_json::to_string(&written)?)?;
    } else {
        writeln!(out, "{}", written.text())?;
    }
    out.flush()?;
    Ok(EXIT_OK)
}

/// `ctxj report --experiment <manifest> -o FILE`: the experiment as a self-contained HTML page,
/// with `replay` strategies as replay rows. Never written inside a session directory nor over the
/// manifest.
fn experiment_report(
    manifest: &str,
    replay: &[String],
    tokenizer: ctxj_core::tokens::Tokenizer,
    output: &std::path::Path,
    json: bool,
) -> Result<u8> {
    let manifest = std::path::Path::new(manifest);
    let e = ctxj_core::experiment::run(
        manifest,
        &ctxj_core::experiment::Options { replay: replay.to_vec(), seed: None, tokenizer },
    )?;
    let html = ctxj::render::experiment_html::render(&e);
    let parent = output.parent().filter(|p| !p.as_os_str().is_empty()).unwrap_or(std::path::Path::new("."));
    let parent =
        parent.canonicalize().with_context(|| format!("--output {}: its folder does not exist", output.display()))?;
    ctxj_core::journal::session::guard_not_in_session(&parent, true)
        .with_context(|| format!("--output {}", output.display()))?;
    // Never over an input: the manifest, the price table, any run's transcript (issue 31).
    let inputs: Vec<&std::path::Path> = e.inputs.iter().map(|p| p.as_path()).collect();
    ctxj_core::journal::session::write_guarded(output, html.as_bytes(), &inputs)
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

/// `ctxj-<kind>-<name>.html` in the current folder, the name kept to letters, digits and `._-`
/// (at most 80 characters) so that no session id can choose another folder.
fn default_output(kind: &str, name: Option<&str>) -> PathBuf {
    let name: String = name
        .unwrap_or("session")
        .chars()
        .map(|c| if c.is_ascii_alphanumeric() || matches!(c, '.' | '_' | '-') { c } else { '_' })
        .take(80)
        .collect();
    let name = name.trim_start_matches('.');
    PathBuf::from(format!("ctxj-{kind}-{}.html", if name.is_empty() { "session" } else { name }))
}

/// The absolute output path, refused when it would land inside the session directory (the
/// spec's "never writes into a session directory"), also through symlinks.
fn check_output(output: &Path, session_dir: &Path) -> Result<PathBuf> {
    let abs = if output.is_absolute() { output.to_path_buf() } else { std::env::current_dir()?.join(output) };
    let name = abs.file_name().with_context(|| format!("--output {}: not a file name", output.display()))?;
    anyhow::ensure!(!abs.is_dir(), "--output {}: is a directory", output.display());
    let parent = abs.parent().unwrap_or(Path::new("/"));
    let parent =
        parent.canonicalize().with_context(|| format!("--output {}: its folder does not exist", output.display()))?;
    let target = parent.join(name);
    ctxj_core::journal::session::guard_not_in_session(&parent, true)
        .with_context(|| format!("--output {}", output.display()))?;
    ctxj_core::journal::session::guard_write(&target, session_dir, ctxj_core::journal::session::Keep::Below)
        .with_context(|| format!("--output {}", output.display()))
}

/// `A..B` (turns from 1, both included, A ≤ B).
fn parse_turns(s: &str) -> std::result::Result<(usize, usize), String> {
    let (a, b) = s.split_once("..").ok_or_else(|| format!("`{s}`: expected A..B, e.g. 10..20"))?;
    let num =
        |x: &str| x.trim().parse::<usize>().map_err(|_| format!("`{s}`: expected A..B with turn numbers, e.g. 10..20"));
    let (a, b) = (num(a)?, num(b)?);
    if a == 0 || a > b {
        return Err(format!("`{s}`: turns count from 1 and A must not be after B"));
    }
    Ok((a, b))
}

impl super::Cmd for Args {
    fn reading(&self) -> Option<super::args::ReadArgs> {
        Some(self.session.read.clone())
    }

    fn machine_output(&self) -> bool {
        self.output_format.json
    }

    fn run(self, ctx: &super::Ctx) -> anyhow::Result<u8> {
        run(self, ctx)
    }
}
