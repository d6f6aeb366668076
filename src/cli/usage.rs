//! `ctxj usage`: token and cost totals of every agent ccusage reads (eighteen, plus Cline),
//! counted the way ccusage counts them, plus cache-hit rate and compactions.

use std::collections::BTreeMap;
use std::io::Write;
use std::path::PathBuf;

use anyhow::Result;
use clap::ValueEnum;

use ctxj::render::rows::write_output;
use ctxj::render::usage::usage_table;
use ctxj_core::text::escape_line;
use ctxj_core::usage::time::{zone, Window};
use ctxj_core::usage::{usage, Agent, By, Options};

use super::args::{LogArgs, RowsArgs};
use super::{Ctx, EXIT_OK};

/// Token and cost totals of every agent's logs, with cache-hit rate and compactions.
///
/// With no path, reads every agent log folder that exists and sums them (like `ccusage daily`):
/// Claude Code ($CLAUDE_CONFIG_DIR, ~/.claude/projects), Codex ($CODEX_HOME: sessions and
/// archived_sessions), pi ($PI_AGENT_DIR), OpenCode ($OPENCODE_DATA_DIR), Kilo ($KILO_DATA_DIR),
/// Gemini CLI ($GEMINI_DATA_DIR), Qwen Code ($QWEN_DATA_DIR), Kimi ($KIMI_DATA_DIR), OpenClaw
/// ($OPENCLAW_DIR), Hermes ($HERMES_HOME), Goose ($GOOSE_PATH_ROOT), Copilot CLI ($COPILOT_HOME),
/// Amp ($AMP_DATA_DIR), Droid ($DROID_SESSIONS_DIR), Codebuff ($CODEBUFF_DATA_DIR), Grok
/// ($GROK_HOME), Cline ($CLINE_DIR), and names them on stderr. With a path and `--agent X` for
/// an agent other than Claude Code, Codex and pi, the path is read as that agent's data folder.
/// Counting follows ccusage 20.0.24 per agent (see docs/importing.md); each call is priced at
/// its own model (or the cost the agent recorded, where ccusage uses it). Calls of a model
/// without a price are left out of the cost and marked *.
///
/// Examples:
///   ctxj usage
///   ctxj usage --by day --timezone UTC
///   ctxj usage sample-journals/transcripts
///   ctxj usage sample-journals/transcripts --by day --since 2026-03-01 --timezone Europe/Paris
///   ctxj usage sample-journals/transcripts --agent codex --by month --breakdown
///   ctxj usage ~/.gemini/tmp --agent gemini --by day
///   ctxj usage --by week --start-of-week monday
///   ctxj usage sample-journals/transcripts/claude-code --by model --format csv
#[derive(Debug, clap::Args)]
#[command(verbatim_doc_comment)]
pub struct Args {
    #[command(flatten)]
    pub logs: LogArgs,
    /// Group rows by session, day, week (starting Sunday), month or model.
    #[arg(long, value_enum, default_value_t = ByArg::Session)]
    pub by: ByArg,
    /// Per-model rows under each group.
    #[arg(long)]
    pub breakdown: bool,
    /// Only calls from this date (2026-03-14, 20260314) or RFC 3339 time on.
    #[arg(long, value_name = "WHEN")]
    pub since: Option<String>,
    /// Only calls up to this date (inclusive) or RFC 3339 time.
    #[arg(long, value_name = "WHEN")]
    pub until: Option<String>,
    /// IANA time zone for dates (default: $TZ, else the system's).
    #[arg(long, value_name = "ZONE")]
    pub timezone: Option<String>,
    /// The first day of a week for `--by week` (ccusage's default: sunday).
    #[arg(long, value_enum, default_value_t = WeekdayArg::Sunday, value_name = "DAY")]
    pub start_of_week: WeekdayArg,
    #[command(flatten)]
    pub output: RowsArgs,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
pub enum WeekdayArg {
    Sunday,
    Monday,
    Tuesday,
    Wednesday,
    Thursday,
    Friday,
    Saturday,
}

impl WeekdayArg {
    pub fn weekday(self) -> ctxj_core::usage::time::Weekday {
        use ctxj_core::usage::time::Weekday::*;
        [Sun, Mon, Tue, Wed, Thu, Fri, Sat][self as usize]
    }
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
pub enum ByArg {
    Session,
    Day,
    Week,
    Month,
    Model,
}

/// `--agent`: any agent of `ctxj usage` by name (ccusage's `claude` too).
pub fn agent_parser() -> impl clap::builder::TypedValueParser<Value = Agent> {
    use clap::builder::TypedValueParser;
    let names: Vec<&'static str> = Agent::ALL.iter().map(|a| a.name()).chain(["claude"]).collect();
    clap::builder::PossibleValuesParser::new(names).map(|n| Agent::by_name(&n).expect("a listed name"))
}

/// The paths given, else the default folders that exist (named on stderr); an error when there
/// is nothing to read.
/// Only the folders of agents whose transcripts ctxj imports (Claude Code, Codex, pi).
pub fn paths_or_defaults(paths: &[PathBuf], agent: Option<Agent>) -> Result<Vec<PathBuf>> {
    check_paths(paths)?;
    if !paths.is_empty() {
        return Ok(paths.to_vec());
    }
    Ok(default_roots(agent, true)?.into_iter().map(|r| r.path).collect())
}

fn check_paths(paths: &[PathBuf]) -> Result<()> {
    for p in paths {
        anyhow::ensure!(p.exists(), "{}: no such file or folder", escape_line(&p.display().to_string()));
    }
    Ok(())
}

/// The existing default folders of `agent` (or of every agent), named on stderr.
pub fn default_roots(agent: Option<Agent>, transcripts_only: bool) -> Result<Vec<ctxj_core::usage::Root>> {
    let mut roots = ctxj_core::usage::existing_default_roots(agent);
    roots.retain(|r| !transcripts_only || r.agent.format().is_some());
    anyhow::ensure!(
        !roots.is_empty(),
        "no agent log folder found (~/.claude/projects, ~/.codex/sessions, ~/.pi/agent/sessions, the other agents' \
         folders or their environment overrides; see `ctxj usage --help`); give a path"
    );
    for r in &roots {
        let note = if r.agent.spec().read_supported { "" } else { " (not read yet: format not supported)" };
        eprintln!("reading {} logs in {}{note}", r.agent.name(), escape_line(&r.path.display().to_string()));
    }
    Ok(roots)
}

/// The log files to read, by agent: `paths` (read as `agent`'s data folder for an agent with
/// its own layout), else every existing default folder; an error when none is found.
pub fn agent_files(paths: &[PathBuf], agent: Option<Agent>) -> Result<BTreeMap<Agent, Vec<PathBuf>>> {
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

pub fn run(args: Args, _ctx: &Ctx) -> Result<u8> {
    let by = match args.by {
        ByArg::Session => By::Session,
        ByArg::Day => By::Day,
        ByArg::Week => By::Week,
        ByArg::Month => By::Month,
        ByArg::Model => By::Model,
    };
    let tz = zone(args.timezone.as_deref())?;
    let window = Window::parse(args.since.as_deref(), args.until.as_deref(), tz)?;
    let files = agent_files(&args.logs.paths, args.logs.agent)?;
    let week_start = args.start_of_week.weekday();
    let r = usage(&files, &Options { by, tz, window, breakdown: args.breakdown, week_start });
    let mut out = super::stdout();
    write_output(&mut out, args.output.format(), &r, &r.rows, || usage_table(&r, args.output.layout()))?;
    out.flush()?;
    Ok(EXIT_OK)
}
