//! `ctxj sessions`: every session found in a folder, of any format, with its size and cache use.

use std::io::Write;
use std::path::PathBuf;

use anyhow::Result;

use ctxj::render::format::thousands;
use ctxj::text::escape_line;
use ctxj::usage::summarize_folder;

use super::{Ctx, EXIT_OK};
use ctxj::render::style::table;

/// List the sessions found in a folder (ctxj journals, Claude Code, Codex and pi transcripts).
///
/// One row per session: start time, model, turns, provider-reported prompt tokens, the cached
/// share of them, compactions, and side sessions (Claude Code sidechains and subagent files are
/// rows of their own, listed under their parent). Any path shown can be given to every read
/// command (show, log, tokens, cache, …).
///
/// Examples:
///   ctxj sessions ~/.claude/projects
///   ctxj sessions ~/.codex/sessions --json
///   ctxj sessions ~/.pi/agent/sessions --from pi
#[derive(Debug, clap::Args)]
#[command(verbatim_doc_comment)]
pub struct Args {
    /// Folder to search (recursively).
    pub folder: PathBuf,
    /// Print JSON instead of a table.
    #[arg(long)]
    pub json: bool,
}

pub fn run(args: Args, ctx: &Ctx) -> Result<u8> {
    anyhow::ensure!(args.folder.is_dir(), "{}: not a folder", escape_line(&args.folder.display().to_string()));
    let rows = summarize_folder(&args.folder, ctx.from);
    let mut out = super::stdout();
    if args.json {
        writeln!(out, "{}", serde_json::to_string_pretty(&serde_json::json!({ "sessions": rows }))?)?;
        out.flush()?;
        return Ok(EXIT_OK);
    }
    let base = args.folder.display().to_string();
    let short = |s: &str| s.strip_prefix(&base).map(|x| x.trim_start_matches('/')).unwrap_or(s).to_string();
    let mut t = table(&["session", "format", "start", "model", "turns", "prompt tok", "cached", "compactions", "side"]);
    for r in &rows {
        let name = match &r.parent {
            Some(_) => format!("  └ {} ({})", short(&r.spec), r.role),
            None => short(&r.spec),
        };
        if let Some(e) = &r.error {
            t.add_row(vec![
                escape_line(&name),
                r.format.to_string(),
                format!("error: {}", escape_line(e)),
                String::new(),
                String::new(),
                String::new(),
                String::new(),
                String::new(),
                String::new(),
            ]);
            continue;
        }
        t.add_row(vec![
            escape_line(&name),
            r.format.to_string(),
            escape_line(r.start.as_deref().unwrap_or("-")),
            escape_line(r.model.as_deref().unwrap_or("-")),
            thousands(r.turns as u64),
            thousands(r.prompt_tokens),
            r.cached_share.map_or("-".into(), |x| format!("{:.1}%", x * 100.0)),
            r.compactions.to_string(),
            r.side_sessions.to_string(),
        ]);
    }
    writeln!(out, "{t}")?;
    writeln!(out, "{} session(s)", rows.len())?;
    out.flush()?;
    Ok(EXIT_OK)
}
