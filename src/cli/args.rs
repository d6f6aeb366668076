//! Flags shared by several subcommands, declared once and flattened into each command's `Args`
//! (`#[command(flatten)]`), the way jj and ripgrep share theirs.

use std::path::PathBuf;

use anyhow::Result;

use super::{At, FromArg};

/// The session a command reads.
#[derive(Debug, Clone, clap::Args)]
pub struct SessionArgs {
    /// Session directory, journal.jsonl path, Claude Code / Codex / pi transcript, or a session id
    /// under --root.
    pub session: String,
    #[command(flatten)]
    pub read: ReadArgs,
}

/// How a session is found and read: only on the commands that read one.
#[derive(Debug, Clone, Default, clap::Args)]
pub struct ReadArgs {
    /// Treat a torn last line as an error instead of a warning.
    #[arg(long)]
    pub strict: bool,
    /// Folder where bare session ids are looked up.
    #[arg(long, env = "CTXJ_ROOT", value_name = "DIR")]
    pub root: Option<PathBuf>,
    #[command(flatten)]
    pub format: FormatArgs,
}

/// `--from`: the input format.
#[derive(Debug, Clone, Default, clap::Args)]
pub struct FormatArgs {
    /// Input format: auto (detected from the content) or one of the formats below.
    #[arg(long, value_enum, default_value_t = FromArg::Auto, value_name = "FORMAT")]
    pub from: FromArg,
}

/// `--at rev N | turn K`: which state of the journal a command looks at.
#[derive(Debug, Clone, Default, clap::Args)]
pub struct AtArgs {
    /// Position: `rev N` (after records 1..N) or `turn K` (the request of the K-th turn).
    #[arg(long, num_args = 2, value_names = ["rev|turn", "N"], allow_hyphen_values = true)]
    pub at: Vec<String>,
}

impl AtArgs {
    /// Every `--at` pair given, in order.
    pub fn all(&self) -> Result<Vec<At>> {
        Ok(At::parse_pairs(&self.at)?)
    }

    /// The one position given, if any; more than one is a usage error.
    pub fn one(&self) -> Result<Option<At>> {
        let all = self.all()?;
        anyhow::ensure!(all.len() <= 1, "--at is given {} times; this command takes one position", all.len());
        Ok(all.into_iter().next())
    }
}

/// How a command prints its result.
#[derive(Debug, Clone, Default, clap::Args)]
pub struct OutputArgs {
    /// Print the result as JSON (for scripts); see docs/json.md for the shapes.
    #[arg(long)]
    pub json: bool,
}

/// `--encoding`: the tokenizer to count with.
#[derive(Debug, Clone, Default, clap::Args)]
pub struct EncodingArgs {
    /// Tokenizer encoding: o200k_base or cl100k_base (default: the session's, else o200k_base).
    #[arg(long, value_name = "NAME")]
    pub encoding: Option<String>,
}

/// `--prices`, `--window` and `--provider-breaks`: the price table, the context window requests are checked
/// against, and whether simulations replay the recorded cache losses.
#[derive(Debug, Clone, Default, clap::Args)]
pub struct PricesArgs {
    /// LiteLLM model_prices_and_context_window.json to price with (its max_input_tokens and
    /// prompt_cache_min_tokens also give the context window and the cache minimum).
    #[arg(long, value_name = "FILE")]
    pub prices: Option<PathBuf>,
    /// Context window in tokens (default: the journal's ctx_window, else the model's); requests
    /// above it are flagged.
    #[arg(long, value_name = "TOKENS", value_parser = clap::value_parser!(u64).range(1..))]
    pub window: Option<u64>,
    #[command(flatten)]
    pub breaks: ProviderBreaksArgs,
}

/// `--provider-breaks` (on `cache`, `turns`, `report`).
#[derive(Debug, Clone, Default, clap::Args)]
pub struct ProviderBreaksArgs {
    /// replay (default): every simulated strategy repeats, at the same turns, the cache losses the
    /// provider recorded that no request change explains (causes provider, ttl, and
    /// system_or_tools without a system record); ignore: the simulated cache keeps what its model
    /// keeps.
    #[arg(long, value_name = "MODE", value_parser = ["replay", "ignore"], default_value = "replay")]
    pub provider_breaks: String,
}

impl ProviderBreaksArgs {
    /// `--provider-breaks`.
    pub fn get(&self) -> ctxj_core::cache::ProviderBreaks {
        match self.provider_breaks.as_str() {
            "ignore" => ctxj_core::cache::ProviderBreaks::Ignore,
            _ => ctxj_core::cache::ProviderBreaks::Replay,
        }
    }
}

/// `--format` values.
#[derive(Debug, Clone, Copy, PartialEq, Eq, clap::ValueEnum)]
pub enum FormatArg {
    Table,
    Json,
    Ndjson,
    Csv,
}

/// How a command that prints rows prints them: a table fitted to the terminal, or
/// machine-readable rows (docs/json.md).
#[derive(Debug, Clone, Default, clap::Args)]
pub struct RowsArgs {
    /// Same as --format json.
    #[arg(long, conflicts_with = "format")]
    pub json: bool,
    /// table (fitted to the terminal), json (one document), ndjson (one row a line) or csv.
    #[arg(long, value_enum, value_name = "FORMAT")]
    pub format: Option<FormatArg>,
    /// Plain ASCII table borders.
    #[arg(long)]
    pub ascii: bool,
}

impl RowsArgs {
    pub fn format(&self) -> ctxj::render::rows::OutputFormat {
        use ctxj::render::rows::OutputFormat as F;
        match (self.json, self.format) {
            (true, _) | (_, Some(FormatArg::Json)) => F::Json,
            (_, Some(FormatArg::Ndjson)) => F::Ndjson,
            (_, Some(FormatArg::Csv)) => F::Csv,
            _ => F::Table,
        }
    }

    /// Whether the output is machine-readable (JSON, NDJSON, CSV) rather than a table.
    pub fn machine(&self) -> bool {
        self.format() != ctxj::render::rows::OutputFormat::Table
    }

    /// The table layout: `COLUMNS`, else the width of the terminal stdout is, else no limit.
    pub fn layout(&self) -> ctxj::render::fit::Layout {
        let width = std::env::var("COLUMNS")
            .ok()
            .and_then(|c| c.trim().parse::<usize>().ok())
            .filter(|&w| w > 0)
            .or_else(|| terminal_size::terminal_size().map(|(w, _)| w.0 as usize));
        ctxj::render::fit::Layout { width, ascii: self.ascii }
    }
}

/// `--summarizer CMD` of the commands that replay strategies (show, diff, turns, cache, report).
#[derive(Debug, Clone, clap::Args)]
pub struct SummarizerArgs {
    /// Ask CMD (run with `sh -c`) for each replayed compaction's summary instead of the
    /// deterministic template: the summarizer request as JSON on stdin, the summary on stdout
    /// (docs/summarizer.md). Answers are cached by content hash in the user's cache folder
    /// ($CTXJ_CACHE_DIR, else ~/.cache/ctxj), in summaries/.
    #[arg(long, value_name = "CMD")]
    pub summarizer: Option<String>,
    /// Seconds one summary may take before the command (its whole process group) is killed; at
    /// least 1 (`--summarizer-timeout 0` is refused).
    #[arg(long, value_name = "SECS", default_value_t = 120, requires = "summarizer",
          value_parser = clap::value_parser!(u64).range(1..))]
    pub summarizer_timeout: u64,
}

impl SummarizerArgs {
    /// The summarizer, when `--summarizer` is given.
    pub fn get(&self) -> Option<std::sync::Arc<ctxj_core::strategy::summarizer::Summarizer>> {
        let t = std::time::Duration::from_secs(self.summarizer_timeout);
        self.summarizer.as_deref().map(|c| std::sync::Arc::new(ctxj_core::strategy::summarizer::Summarizer::new(c, t)))
    }

    /// The summarizer's first failure as an error (checked before anything is printed).
    pub fn check(with: &Option<std::sync::Arc<ctxj_core::strategy::summarizer::Summarizer>>) -> Result<()> {
        match with.as_ref().and_then(|s| s.take_error()) {
            Some(e) => Err(anyhow::Error::new(e)),
            None => Ok(()),
        }
    }
}

/// The agent logs `usage` and `export` read: paths, else the agents' default folders.
#[derive(Debug, Clone, Default, clap::Args)]
pub struct LogArgs {
    /// Transcripts or folders holding them (searched recursively); default: the agents' folders.
    pub paths: Vec<PathBuf>,
    /// Only this agent's logs (with a path: read the path as this agent's data folder).
    #[arg(long, value_parser = super::usage::agent_parser(), value_name = "AGENT")]
    pub agent: Option<ctxj_core::usage::Agent>,
}

impl LogArgs {
    /// The transcripts to read, by format (the default folders named on stderr); an error when
    /// there is none, or when `--agent` names an agent whose log holds no requests to import.
    pub fn files(&self) -> Result<std::collections::BTreeMap<ctxj_core::import::Format, Vec<PathBuf>>> {
        if let Some(a) = self.agent.filter(|a| a.format().is_none()) {
            anyhow::bail!(
                "{} logs hold usage counters, not the requests ctxj imports; `ctxj usage --agent {}` and \
                 `ctxj sessions --agent {}` read them",
                a.spec().label,
                a.name(),
                a.name()
            );
        }
        let agent = self.agent.and_then(ctxj_core::usage::Agent::format);
        let paths = super::usage::paths_or_defaults(&self.paths, self.agent)?;
        let files = ctxj_core::usage::transcripts(&paths, agent);
        anyhow::ensure!(!files.is_empty(), "no Claude Code, Codex or pi transcript found in the given paths");
        Ok(files)
    }
}

/// `--no-cache`: the persistent token memo (global: every command accepts it).
#[derive(Debug, Clone, Default, clap::Args)]
pub struct CacheArgs {
    /// Keep no token counts between runs: neither read nor write the token memo in
    /// $CTXJ_CACHE_DIR/tokens (default: the user's cache folder, e.g. ~/.cache/ctxj/tokens).
    #[arg(long, global = true, env = "CTXJ_NO_CACHE", hide_env_values = true, value_parser = clap::builder::FalseyValueParser::new())]
    pub no_cache: bool,
}

impl CacheArgs {
    /// Chooses the process's persistent token memo (`ctxj_core::tokens::memo`); a folder inside a
    /// session directory is refused with a warning and the run keeps no memo.
    pub fn apply(&self) {
        let dir = if self.no_cache { None } else { ctxj_core::tokens::memo::Dir::default_location() };
        let dir = dir.and_then(|d| match ctxj_core::tokens::memo::Dir::new(&d) {
            Ok(d) => Some(d),
            Err(e) => {
                eprintln!("warning: token memo not used: {}", ctxj_core::text::escape_line(&e.to_string()));
                None
            }
        });
        ctxj_core::tokens::memo::use_dir(dir);
    }
}
