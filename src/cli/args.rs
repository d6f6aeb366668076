//! Flags shared by several subcommands, declared once and flattened into each command's `Args`
//! (`#[command(flatten)]`), the way jj and ripgrep share theirs.

use std::path::PathBuf;

use anyhow::Result;

use super::{At, FromArg};

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
    #[arg(long, num_args = 2, value_names = ["rev|turn", "N"], allow_hyphen_values = true)]
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

/// `--order asc|desc`: the direction of a listing's sort.
#[derive(Debug, Clone, Copy, PartialEq, Eq, clap::ValueEnum)]
pub enum OrderArg {
    Asc,
    Desc,
}

impl OrderArg {
    pub fn order(self) -> ctxj_core::usage::report::Order {
        match self {
            OrderArg::Asc => ctxj_core::usage::report::Order::Asc,
            OrderArg::Desc => ctxj_core::usage::report::Order::Desc,
        }
    }
}

/// The agent logs `usage` and `export` read: paths, else the agents' default folders.
#[derive(Debug, Clone, Default, clap::Args)]
pub struct LogArgs {
    /// Transcripts or folders holding them (searched recursively); default: the agents' folders.
    pub paths: Vec<PathBuf>,
    /// Only this agent's logs (with a path: read the path as this agent's data folder).
    #[arg(long, value_parser = agent_parser(), value_name = "AGENT")]
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
        let paths = paths_or_defaults(&self.paths, self.agent)?;
        let files = ctxj_core::usage::transcripts(&paths, agent);
        anyhow::ensure!(!files.is_empty(), "no Claude Code, Codex or pi transcript found in the given paths");
        Ok(files)
    }
}

/// `--agent`: any agent of `ctxj usage` by name (ccusage's `claude` too).
pub fn agent_parser() -> impl clap::builder::TypedValueParser<Value = ctxj_core::usage::Agent> {
    use clap::builder::TypedValueParser;
    let names: Vec<&'static str> = ctxj_core::usage::Agent::ALL.iter().map(|a| a.name()).chain(["claude"]).collect();
    clap::builder::PossibleValuesParser::new(names)
        .map(|n| ctxj_core::usage::Agent::by_name(&n).expect("a listed name"))
}

/// The paths given, else the default folders that exist (named on stderr); an error when there
/// is nothing to read.
/// Only the folders of agents whose transcripts ctxj imports (Claude Code, Codex, pi).
pub fn paths_or_defaults(paths: &[PathBuf], agent: Option<ctxj_core::usage::Agent>) -> Result<Vec<PathBuf>> {
    check_paths(paths)?;
    if !paths.is_empty() {
        return Ok(paths.to_vec());
    }
    Ok(default_roots(agent, true)?.into_iter().map(|r| r.path).collect())
}

fn check_paths(paths: &[PathBuf]) -> Result<()> {
    for p in paths {
        anyhow::ensure!(
            p.exists(),
            "{}: no such file or folder",
            ctxj_core::text::escape_line(&p.display().to_string())
        );
    }
    Ok(())
}

/// The existing default folders of `agent` (or of every agent), named on stderr.
pub fn default_roots(
    agent: Option<ctxj_core::usage::Agent>,
    transcripts_only: bool,
) -> Result<Vec<ctxj_core::usage::Root>> {
    let mut roots = ctxj_core::usage::existing_default_roots(agent);
    roots.retain(|r| !transcripts_only || r.agent.format().is_some());
    anyhow::ensure!(
        !roots.is_empty(),
        "no agent log folder found (~/.claude/projects, ~/.codex/sessions, ~/.pi/agent/sessions, the other agents' \
         folders or their environment overrides; see `ctxj usage --help`); give a path"
    );
    for r in &roots {
        let note = if r.agent.spec().read_supported { "" } else { " (not read yet: format not supported)" };
        eprintln!(
            "reading {} logs in {}{note}",
            r.agent.name(),
            ctxj_core::text::escape_line(&r.path.display().to_string())
        );
    }
    Ok(roots)
}

/// The log files to read, by agent: `paths` (read as `agent`'s data folder for an agent with
/// its own layout), else every existing default folder; an error when none is found.
pub fn agent_files(
    paths: &[PathBuf],
    agent: Option<ctxj_core::usage::Agent>,
) -> Result<std::collections::BTreeMap<ctxj_core::usage::Agent, Vec<PathBuf>>> {
    check_paths(paths)?;
    if paths.is_empty() {
        default_roots(agent, false)?;
    }
    let files = ctxj_core::usage::discover(paths, agent);
    anyhow::ensure!(
        !files.is_empty(),
        "no agent log found in the given paths (for another agent's folder add --agent NAME)"
    );
    Ok(files)
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
    /// command-code, veles, opencode, gemini-cli, qwen-code, cline, kimi-code, pi; docs/rules.md
    /// "Harness profiles").
    #[arg(long, value_name = "NAME")]
    pub harness: Option<ctxj_core::check::Harness>,
}

/// `--no-cache`: the persistent token memo (global: every command accepts it).
#[derive(Debug, Clone, Default, clap::Args)]
pub struct CacheArgs {
    /// Keep nothing between runs: neither read nor write the token memo ($CTXJ_CACHE_DIR/tokens;
    /// default: the user's cache folder, e.g. ~/.cache/ctxj/tokens) nor the summarizer's answers
    /// (summaries/).
    #[arg(long, global = true, env = "CTXJ_NO_CACHE", hide_env_values = true, value_parser = clap::builder::FalseyValueParser::new())]
    pub no_cache: bool,
}

impl CacheArgs {
    /// The cache folder of the run (`$CTXJ_CACHE_DIR`, else the user's): `None` under
    /// `--no-cache` / `CTXJ_NO_CACHE` — then no cache is read or written (token memo, summaries).
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
