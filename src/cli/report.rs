//! `ctxj report`: write a self-contained HTML report of a session (charts, comparison table,
//! decision timeline, turn browser). The data comes from `ctxj_core::report::build`, the page from
//! `ctxj::render::html`; this file resolves the arguments and writes the file.

use std::io::Write;
use std::path::{Path, PathBuf};

use anyhow::{Context as _, Result};

use ctxj::render::html::{write_page, Spill};
use ctxj_core::cache::{self, CacheModel};
use ctxj_core::report::{self, Options, TurnRange, DEFAULT_TEXT_CAP};
use ctxj_core::strategy::{self, Strategy};

use super::args::{EncodingArgs, OutputArgs, SessionArgs, SummarizerArgs};
use super::{Ctx, EXIT_OK};

/// Strategies shown when no --strategy is given.
const DEFAULT_STRATEGIES: [&str; 2] = ["recorded", "baseline"];

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
pub struct Args {
    #[command(flatten)]
    pub session: SessionArgs,
    /// A strategy to replay (repeatable; default: recorded and baseline).
    #[arg(short = 's', long = "strategy", value_name = "NAME")]
    pub strategies: Vec<String>,
    /// Prompt-cache model (default: from the session's model).
    #[arg(long, value_name = "MODEL", value_parser = ["ideal", "openai", "anthropic", "gemini"])]
    pub cache: Option<String>,
    /// LiteLLM model_prices_and_context_window.json to price with (default: the built-in table).
    #[arg(long, value_name = "FILE")]
    pub prices: Option<PathBuf>,
    #[command(flatten)]
    pub breaks: super::args::ProviderBreaksArgs,
    #[command(flatten)]
    pub encoding: EncodingArgs,
    /// Where to write the HTML file (never inside the session directory).
    #[arg(short = 'o', long = "output", value_name = "FILE", required = true)]
    pub output: PathBuf,
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
    #[command(flatten)]
    pub summarizer: SummarizerArgs,
}

pub fn run(args: Args, ctx: &Ctx) -> Result<u8> {
    if args.experiment {
        let json = args.output_format.json;
        return super::experiment::report(&args.session.session, &args.strategies, &args.output, json);
    }
    let (session, journal) = ctx.load(&args.session.session)?;
    let mut notes = Vec::new();
    let strategies: Vec<Strategy> = if args.strategies.is_empty() {
        let mut v = Vec::new();
        for name in DEFAULT_STRATEGIES {
            match strategy::parse(name) {
                Ok(s) => v.push(s),
                Err(e) => notes.push(format!("Default strategy `{name}` skipped: {e}")),
            }
        }
        v
    } else {
        let mut v: Vec<Strategy> = Vec::new();
        for name in &args.strategies {
            let s = strategy::parse(name).map_err(anyhow::Error::new)?;
            if v.iter().any(|x| x.name == s.name) {
                anyhow::bail!("--strategy {name} is given twice");
            }
            v.push(s);
        }
        v
    };
    let output = check_output(&args.output, &session.dir)?;
    let cache = args.cache.as_deref().map(CacheModel::parse).transpose()?;
    let prices = args.prices.as_deref().map(|p| load_prices(Some(p), ctx)).transpose()?;
    let turns = match (args.turns, args.last) {
        (Some((a, b)), _) => TurnRange::Range(a, b),
        (None, Some(n)) => TurnRange::Last(n),
        (None, None) => TurnRange::All,
    };
    let encoding = args.encoding.encoding.clone();
    let provider_breaks = args.breaks.get();
    let opts = Options { text_cap: args.text_cap, cache, prices, encoding, notes, turns, provider_breaks };
    let sum = args.summarizer.get();
    let strategies: Vec<Strategy> = strategies.into_iter().map(|s| s.with_summarizer(sum.clone())).collect();
    // The turn browser's views go to temporary files as they are built, and the page is
    // written piece by piece: neither is held whole in memory.
    let mut spill = Spill::new(strategies.iter().map(|s| s.name.clone()).collect()).context("a temporary file")?;
    let data = super::progress::with_progress(|p| {
        report::build_streaming(&journal, &strategies, &opts, p, Some(&mut |s, v| spill.push(s, &v)))
    })?;
    SummarizerArgs::check(&sum)?;
    spill.finish().context("writing the turn browser to a temporary file")?;
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

/// The `--prices` table (else the built-in one): its unknown keys named in a warning, or an error
/// under `--strict`. Shared by `report` and `cache`.
pub(super) fn load_prices(path: Option<&Path>, ctx: &Ctx) -> Result<cache::PriceTable> {
    let t = cache::load_table_checked(path, ctx.read.strict)?;
    if let Some(keys) = t.unknown_list() {
        let msg = format!("--prices {}: unknown key(s) ignored: {keys}", t.source);
        eprintln!("warning: {}", ctxj_core::text::escape_line(&msg));
    }
    Ok(t)
}
