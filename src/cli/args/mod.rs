//! Flags shared by several subcommands, declared once and flattened into each command's `Args`
//! (`#[command(flatten)]`), the way jj and ripgrep share theirs: here the session, reading,
//! position, output, `--deny`, `--harness` and `--no-cache` groups; the row output and sort
//! order in [`rows`], the agent logs in [`logs`].

use std::path::PathBuf;

use anyhow::Result;

use super::{At, FromArg};

mod logs;
mod rows;

pub use logs::{agent_files, agent_parser, default_roots, paths_or_defaults, Importable, LogArgs};
pub use rows::{OrderArg, RowsArgs};

/// `--since`/`--until`/`--timezone`: the billed calls a usage report or an export covers.
#[derive(Debug, Clone, Default, clap::Args)]
pub struct WindowArgs {
    /// Only calls from this date (2026-03-14, 20260314) or RFC 3339 time on.
    #[arg(long, value_name = "WHEN")]
    pub since: Option<String>,
    /// Only calls up to this date (inclusive) or RFC 3339 time.
    #[arg(long, value_name = "WHEN")]
    pub until: Option<String>,
    /// IANA time zone for dates (default: $TZ, else the system's).
    #[arg(long, value_name = "ZONE")]
    pub timezone: Option<String>,
}

impl WindowArgs {
    /// The time zone and the window (one that ends before it starts is an error).
    pub fn window(&self) -> Result<(chrono_tz::Tz, ctxj_core::usage::time::Window)> {
        let tz = ctxj_core::usage::time::zone(self.timezone.as_deref())?;
        Ok((tz, ctxj_core::usage::time::Window::parse(self.since.as_deref(), self.until.as_deref(), tz)?))
    }
}

/// The session a command reads.
#[derive(Debug, Clone, clap::Args)]
pub struct SessionArgs {
    /// Session directory, journal.jsonl path, Claude Code / Codex / pi transcript, or any name
    /// `ctxj sessions` lists: the path as shown, the session id or a unique id prefix,
    /// `project/session` (looked up under --root, else the agents' folders).
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
    /// Folder where session ids, id prefixes and listed paths are looked up (searched
    /// recursively; default: the agents' log folders, e.g. ~/.claude/projects).
    #[arg(long, env = "CTXJ_ROOT", hide_env_values = true, value_name = "DIR")]
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
    #[arg(
        long,
        num_args = 2,
        value_names = ["rev|turn", "N"],
        allow_hyphen_values = true,
        value_parser = super::offer::words(super::offer::at_keywords),
        hide_possible_values = true
    )]
    pub at: Vec<String>,
}

/// The hint for `--at N` (a bare number where `rev N` or `turn K` belongs), when `argv` holds
/// one: clap's own message ("2 values required") does not say what to write.
pub fn at_hint(argv: &[std::ffi::OsString]) -> Option<String> {
    let args: Vec<&str> = argv.iter().map(|a| a.to_str().unwrap_or("")).collect();
    args.iter().enumerate().find_map(|(i, a)| {
        let value = match a.strip_prefix("--at=") {
            Some(v) => v,
            None if *a == "--at" => args.get(i + 1)?,
            None => return None,
        };
        ctxj_core::projection::At::hint(value)
    })
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

/// `--deny`: findings that also fail the command (`validate`, `audit`).
#[derive(Debug, Clone, Default, clap::Args)]
pub struct DenyArgs {
    /// Also fail (exit 1) on findings of this severity.
    #[arg(long, value_enum, value_name = "LEVEL")]
    pub deny: Option<Deny>,
}

/// Severities `--deny` can turn into failures.
#[derive(Debug, Clone, Copy, PartialEq, Eq, clap::ValueEnum)]
pub enum Deny {
    Warnings,
}

impl DenyArgs {
    /// Exit code for `counts`: findings (1) when there is an error, or a warning under
    /// `--deny warnings`; else 0.
    pub fn exit_code(&self, counts: ctxj_core::check::Counts) -> u8 {
        if counts.errors > 0 || (self.deny == Some(Deny::Warnings) && counts.warnings > 0) {
            super::EXIT_FINDINGS
        } else {
            super::EXIT_OK
        }
    }
}

/// `--harness NAME`: the harness profile to judge by (`audit`) or view through (`tokens`).
#[derive(Debug, Clone, Default, clap::Args)]
pub struct HarnessArgs {
    /// Judge by this harness's profile instead of the journal's own (ctxj, claude-code,
    /// command-code, veles, opencode, gemini-cli, qwen-code, cline, kimi-code, pi, codex, pi-agent;
    /// docs/rules.md "Harness profiles").
    #[arg(long, value_name = "NAME")]
    pub harness: Option<ctxj_core::check::Harness>,
}

/// `--no-cache`: the persistent token memo (global: every command accepts it).
#[derive(Debug, Clone, Default, clap::Args)]
pub struct CacheArgs {
    /// Keep nothing between runs: neither read nor write the token memo ($CTXJ_CACHE_DIR/tokens;
    /// default: the user's cache folder, e.g. ~/.cache/ctxj/tokens), the summarizer's answers
    /// (summaries/) or the live state of `statusline` and `watch` (live/).
    #[arg(long, global = true, env = "CTXJ_NO_CACHE", hide_env_values = true, value_parser = clap::builder::FalseyValueParser::new())]
    pub no_cache: bool,
}

impl CacheArgs {
    /// The cache folder of the run (`$CTXJ_CACHE_DIR`, else the user's): `None` under
    /// `--no-cache` / `CTXJ_NO_CACHE` — then no cache is read or written (token memo, summaries,
    /// live state).
    pub fn base(&self) -> Option<std::path::PathBuf> {
        if self.no_cache {
            None
        } else {
            ctxj_core::journal::cache_dir::default_base()
        }
    }

    /// The run's persistent token memo (`ctxj_core::tokens::memo`), flushed by `main` at the end;
    /// a folder inside a session directory is refused with a warning and the run keeps no memo.
    pub fn store(&self) -> Option<std::sync::Arc<ctxj_core::tokens::memo::Store>> {
        let dir = self.base().and_then(|d| match ctxj_core::tokens::memo::Dir::new(&d) {
            Ok(d) => Some(d),
            Err(e) => {
                eprintln!("warning: token memo not used: {}", ctxj_core::text::escape_line(&e.to_string()));
                None
            }
        });
        dir.map(|d| std::sync::Arc::new(ctxj_core::tokens::memo::Store::new(d)))
    }
}
