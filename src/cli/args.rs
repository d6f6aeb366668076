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
    /// Input format: auto (detected from the content), claude-code, codex, pi or ctxj.
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

/// `--no-cache`: the persistent token memo (global: every command accepts it).
#[derive(Debug, Clone, Default, clap::Args)]
pub struct CacheArgs {
    /// Keep no token counts between runs: neither read nor write the token memo in
    /// $CTXJ_CACHE_DIR/tokens (default: the user's cache folder, e.g. ~/.cache/ctxj/tokens).
    #[arg(long, global = true, env = "CTXJ_NO_CACHE", hide_env_values = true, value_parser = clap::builder::FalseyValueParser::new())]
    pub no_cache: bool,
}

impl CacheArgs {
    /// Chooses the process's persistent token memo (`ctxj::tokens::memo`); a folder inside a
    /// session directory is refused with a warning and the run keeps no memo.
    pub fn apply(&self) {
        let dir = if self.no_cache { None } else { ctxj::tokens::memo::Dir::default_location() };
        let dir = dir.and_then(|d| match ctxj::tokens::memo::Dir::new(&d) {
            Ok(d) => Some(d),
            Err(e) => {
                eprintln!("warning: token memo not used: {}", super::escape_line(&e.to_string()));
                None
            }
        });
        ctxj::tokens::memo::use_dir(dir);
    }
}
