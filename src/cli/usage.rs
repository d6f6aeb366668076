//! `ctxj usage`: token and cost totals of every agent ccusage reads (eighteen, plus Cline),
//! counted the way ccusage counts them, plus cache-hit rate and compactions.

use std::io::Write;

use anyhow::Result;
use clap::ValueEnum;

use ctxj::render::rows::write_output_streamed;
use ctxj::render::style::Paint;
use ctxj::render::usage::write_usage_table;
use ctxj_core::usage::{usage, By, Options};

use super::args::{agent_files, LogArgs, OrderArg, RowsArgs, WindowArgs};
use super::{Ctx, EXIT_OK};

/// Token and cost totals of every agent's logs, with cache-hit rate and compactions.
///
/// With no path, reads every agent log folder that exists and sums them (like `ccusage daily`):
/// Claude Code ($CLAUDE_CONFIG_DIR, ~/.claude/projects), Codex ($CODEX_HOME: sessions and
/// archived_sessions), pi ($PI_AGENT_DIR), OpenCode ($OPENCODE_DATA_DIR), Kilo ($KILO_DATA_DIR),
/// Gemini CLI ($GEMINI_DATA_DIR), Qwen Code ($QWEN_DATA_DIR), Kimi ($KIMI_DATA_DIR), OpenClaw
/// ($OPENCLAW_DIR), Hermes ($HERMES_HOME), Goose ($GOOSE_PATH_ROOT), Copilot CLI ($COPILOT_HOME),
/// Amp ($AMP_DATA_DIR), Droid ($DROID_SESSIONS_DIR), Codebuff ($CODEBUFF_DATA_DIR), Grok
/// ($GROK_HOME), Antigravity ($ANTIGRAVITY_DATA_DIR), ZCode ($ZCODE_HOME), Cline ($CLINE_DIR), and
/// names them on stderr. With a path and `--agent X` for
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
///   ctxj usage sample-journals/transcripts --by block --agent claude-code
///   ctxj usage sample-journals/transcripts --by project --order asc --no-cost
///   ctxj usage sample-journals/transcripts --by day --last 1
#[derive(Debug, clap::Args)]
#[command(verbatim_doc_comment)]
pub struct Args {
    #[command(flatten)]
    pub logs: LogArgs,
    /// Group rows by session, project, day, week (starting Sunday), month, model, or block
    /// (ccusage's 5-hour billing windows, as `ccusage blocks`: docs/usage.md).
    #[arg(long, value_enum, default_value_t = ByArg::Session)]
    pub by: ByArg,
    /// Only the N groups with the latest calls (e.g. `--by day --last 7`); totals are theirs.
    #[arg(long, value_name = "N", value_parser = clap::value_parser!(u64).range(1..))]
    pub last: Option<u64>,
    /// Sort direction: sessions, projects (and, with --order, models) by cost, most expensive
    /// first by default; days, weeks, months and blocks by time, oldest first by default.
    #[arg(long, value_enum, value_name = "ORDER")]
    pub order: Option<OrderArg>,
    /// Leave the cost column out of the table (tokens only); JSON, NDJSON and CSV keep it.
    #[arg(long)]
    pub no_cost: bool,
    /// Per-model rows under each group.
    #[arg(long)]
    pub breakdown: bool,
    #[command(flatten)]
    pub window: WindowArgs,
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
    Project,
    Block,
}

pub fn run(args: Args, ctx: &Ctx) -> Result<u8> {
    let by = match args.by {
        ByArg::Session => By::Session,
        ByArg::Day => By::Day,
        ByArg::Week => By::Week,
        ByArg::Month => By::Month,
        ByArg::Model => By::Model,
        ByArg::Project => By::Project,
        ByArg::Block => By::Block,
    };
    let (tz, window) = args.window.window()?;
    let files = agent_files(&args.logs.paths, args.logs.agent)?;
    let week_start = args.start_of_week.weekday();
    let (last, order) = (args.last.map(|n| n as usize), args.order.map(OrderArg::order));
    let r = usage(&files, &Options { by, tz, window, breakdown: args.breakdown, week_start, last, order });
    let mut out = super::stdout();
    let paint = Paint::new(ctx.color);
    let table = |o: &mut dyn Write| write_usage_table(&r, args.output.layout(), !args.no_cost, &paint, o);
    write_output_streamed(&mut out, args.output.format(), &r, &r.rows, table)?;
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
