//! `ctxj sessions`: every session found in a folder, of any format, with its size and cache use.

use std::io::Write;
use std::path::PathBuf;

use anyhow::Result;

use ctxj::render::sessions::sessions_table;
use ctxj::text::escape_line;
use ctxj::usage::summarize_folder;

use super::args::{FormatArgs, OutputArgs};
use super::{Ctx, EXIT_OK};

/// List the sessions found in a folder (ctxj journals, Claude Code, Codex and pi transcripts).
///
/// One row per session: start time, model, turns, provider-reported prompt tokens, the cached
/// share of them, compactions, and side sessions (Claude Code sidechains and subagent files are
/// rows of their own, listed under their parent). Any path shown can be given to every read
/// command (show, log, tokens, cache, …). Your own sessions: ~/.claude/projects, ~/.codex/sessions,
/// ~/.pi/agent/sessions.
///
/// Examples:
///   ctxj sessions sample-journals/transcripts
///   ctxj sessions sample-journals/transcripts/codex --json
///   ctxj sessions sample-journals/transcripts/pi --from pi
#[derive(Debug, clap::Args)]
#[command(verbatim_doc_comment)]
pub struct Args {
    /// Folder to search (recursively).
    pub folder: PathBuf,
    #[command(flatten)]
    pub output: OutputArgs,
    #[command(flatten)]
    pub format: FormatArgs,
}

pub fn run(args: Args, ctx: &Ctx) -> Result<u8> {
    anyhow::ensure!(args.folder.is_dir(), "{}: not a folder", escape_line(&args.folder.display().to_string()));
    let rows = summarize_folder(&args.folder, ctx.from);
    let mut out = super::stdout();
    if args.output.json {
        writeln!(out, "{}", serde_json::to_string_pretty(&serde_json::json!({ "sessions": rows }))?)?;
        out.flush()?;
        return Ok(EXIT_OK);
    }
    write!(out, "{}", sessions_table(&rows, &args.folder.display().to_string()))?;
    out.flush()?;
    Ok(EXIT_OK)
}
