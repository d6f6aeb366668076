//! `ctxj usage`: token and cost totals of Claude Code logs, counted the way ccusage counts them,
//! plus cache-hit rate and compactions.

use std::io::Write;
use std::path::PathBuf;

use anyhow::Result;
use clap::ValueEnum;

use ctxj::render::usage::usage_table;
use ctxj::text::escape_line;
use ctxj::usage::{claude_files, usage, By};

use super::args::OutputArgs;
use super::{Ctx, EXIT_OK};

/// Token and cost totals of Claude Code logs, with cache-hit rate and compactions.
///
/// Counting follows ccusage: one count per message.id + requestId (the non-sidechain copy wins,
/// then the larger total), subagent files count toward their parent session. Lines written with
/// a space after the colon, which ccusage skips, are counted here and shown in --json as
/// not_counted_by_ccusage. Costs come from the built-in price table (1-hour cache writes at 2x
/// input, no long-context tiers); calls of a model it does not know are left out and marked *.
///
/// Your own: ctxj usage ~/.claude/projects.
///
/// Examples:
///   ctxj usage sample-journals/transcripts/claude-code
///   ctxj usage sample-journals/transcripts --by day
///   ctxj usage sample-journals/transcripts/claude-code --by model --json
#[derive(Debug, clap::Args)]
#[command(verbatim_doc_comment)]
pub struct Args {
    /// Claude Code transcripts or folders holding them (searched recursively).
    #[arg(required = true)]
    pub paths: Vec<PathBuf>,
    /// Group rows by session, day (UTC) or model.
    #[arg(long, value_enum, default_value_t = ByArg::Session)]
    pub by: ByArg,
    #[command(flatten)]
    pub output: OutputArgs,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
pub enum ByArg {
    Session,
    Day,
    Model,
}

pub fn run(args: Args, _ctx: &Ctx) -> Result<u8> {
    for p in &args.paths {
        anyhow::ensure!(p.exists(), "{}: no such file or folder", escape_line(&p.display().to_string()));
    }
    let by = match args.by {
        ByArg::Session => By::Session,
        ByArg::Day => By::Day,
        ByArg::Model => By::Model,
    };
    let files = claude_files(&args.paths);
    anyhow::ensure!(!files.is_empty(), "no Claude Code transcript found in the given paths");
    let r = usage(&files, by);
    let mut out = super::stdout();
    if args.output.json {
        writeln!(out, "{}", serde_json::to_string_pretty(&r)?)?;
        out.flush()?;
        return Ok(EXIT_OK);
    }
    write!(out, "{}", usage_table(&r, by))?;
    out.flush()?;
    Ok(EXIT_OK)
}
