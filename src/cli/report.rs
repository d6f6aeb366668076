//! `ctxj report`: write a self-contained HTML report of a session (charts, comparison table,
//! decision timeline, turn browser). The data comes from `ctxj::report::build`, the page from
//! `ctxj::report::render`; this file resolves the arguments and writes the file.

use std::io::Write;
use std::path::{Path, PathBuf};

use anyhow::{Context as _, Result};

use ctxj::cache::{CacheModel, PriceTable};
use ctxj::report::{self, Options, DEFAULT_TEXT_CAP};
use ctxj::strategy::{self, Strategy};

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
///   ctxj report sample-journals/bugfix-todo -o report.html
///   ctxj report sample-journals/bugfix-todo -s baseline -s truncate-500 -s age-truncate-500-keep-3 -o r.html
///   ctxj report my-session --root ~/.harness/sessions --cache anthropic -o /tmp/my-session.html
///   ctxj report sample-journals/long-elision --prices model_prices_and_context_window.json -o r.html
#[derive(Debug, clap::Args)]
#[command(verbatim_doc_comment)]
pub struct Args {
    /// Session directory, journal.jsonl path, or session id under --root.
    pub session: String,
    /// A strategy to replay (repeatable; default: recorded and baseline).
    #[arg(short = 's', long = "strategy", value_name = "NAME")]
    pub strategies: Vec<String>,
    /// Prompt-cache model: ideal, openai, anthropic or gemini (default: from the session's model).
    #[arg(long, value_name = "MODEL", value_parser = ["ideal", "openai", "anthropic", "gemini"])]
    pub cache: Option<String>,
    /// LiteLLM model_prices_and_context_window.json to price with (default: the built-in table).
    #[arg(long, value_name = "FILE")]
    pub prices: Option<PathBuf>,
    /// Tokenizer encoding: o200k_base or cl100k_base (default: the session's, else o200k_base).
    #[arg(long, value_name = "NAME")]
    pub encoding: Option<String>,
    /// Where to write the HTML file (never inside the session directory).
    #[arg(short = 'o', long = "output", value_name = "FILE", required = true)]
    pub output: PathBuf,
    /// Characters of text inlined per block in the turn browser.
    #[arg(long, value_name = "CHARS", default_value_t = DEFAULT_TEXT_CAP, value_parser = clap::builder::RangedU64ValueParser::<usize>::new().range(1..))]
    pub text_cap: usize,
    /// Print what was written as JSON (path, bytes, strategies, turns) instead of a line of text.
    #[arg(long)]
    pub json: bool,
}

pub fn run(args: Args, ctx: &Ctx) -> Result<u8> {
    let (session, journal) = ctx.load(&args.session)?;
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
    let prices = match &args.prices {
        Some(p) => {
            let bytes = std::fs::read(p).with_context(|| format!("reading --prices {}", p.display()))?;
            Some(PriceTable::from_litellm(&p.display().to_string(), &bytes)?)
        }
        None => None,
    };
    let opts = Options { text_cap: args.text_cap, cache, prices, encoding: args.encoding.clone(), notes };
    let data = report::build(&journal, &strategies, &opts)?;
    let html = report::render(&data);
    std::fs::write(&output, html.as_bytes()).with_context(|| format!("writing {}", output.display()))?;

    let mut out = super::stdout();
    let shown = ctxj::text::escape_line(&output.display().to_string());
    if args.json {
        let v = serde_json::json!({
            "output": output.display().to_string(),
            "bytes": html.len(),
            "strategies": data.strategies.iter().map(|s| s.name.clone()).collect::<Vec<_>>(),
            "turns": data.header.turns,
            "notes": data.notes,
        });
        writeln!(out, "{v}")?;
    } else {
        writeln!(
            out,
            "wrote {shown} ({} bytes): {} strategies, {} turns",
            ctxj::render::format::thousands(html.len() as u64),
            data.strategies.len(),
            data.header.turns
        )?;
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
    ctxj::journal::session::guard_write(&target, session_dir, ctxj::journal::session::Keep::Below)
        .with_context(|| format!("--output {}", output.display()))
}
