//! `ctxj sessions`: every session found in the agents' folders (or the paths given), of any
//! format, with its size, cost and cache use.

use std::io::Write;
use std::path::PathBuf;

use anyhow::Result;

use ctxj::render::rows::write_output;
use ctxj::render::sessions::{sessions_table, SessionsDoc};
use ctxj::render::style::Paint;
use ctxj_core::usage::summarize_folder_with_progress;
use ctxj_core::usage::time::zone;

use super::args::{
    agent_files, agent_parser, default_roots, paths_or_defaults, FormatArgs, Importable, OrderArg, RowsArgs,
};
use super::{Ctx, EXIT_OK};

/// List the sessions found: ctxj journals and the logs of every agent `ctxj usage` reads.
///
/// With no path, reads every agent log folder that exists (the folders of `ctxj usage`) and
/// names them on stderr. A session of an agent whose requests ctxj imports (Claude Code, Codex,
/// pi, OpenCode, Kilo, Gemini CLI, Qwen Code, Kimi Code, Cline, OpenClaw) is listed with the path
/// a read command opens; the others (Copilot, Hermes, Goose, …, and logs no importer reads such as
/// Kimi CLI's legacy wire.jsonl: see docs/importing.md) with the role `usage only` and a note:
/// their cost and tokens are `ctxj usage`'s, but read commands cannot replay them. With a path
/// and `--agent X` for an agent other than Claude Code, Codex and pi, the path is X's data
/// folder. One row per session: start (local time), duration, agent, models,
/// turns, provider-reported prompt tokens, cost at the built-in prices, cache hit, compactions,
/// and side sessions (Claude Code sidechains and subagent files are rows of their own, listed
/// under their parent), most expensive first (--order asc: cheapest first). Any path shown, the
/// session id or a unique prefix of it, and `project/session` can be given to every read command
/// (show, log, cache, …), with --root naming the folder listed (default: the agents' folders).
///
/// Examples:
///   ctxj sessions sample-journals/transcripts
///   ctxj sessions sample-journals/transcripts --agent codex --format json
///   ctxj sessions sample-journals/transcripts/pi --from pi
///   ctxj sessions ~/.gemini/tmp --agent gemini --format json
#[derive(Debug, clap::Args)]
#[command(verbatim_doc_comment)]
pub struct Args {
    /// Folders to search (recursively); default: the agents' folders.
    pub folders: Vec<PathBuf>,
    /// Only this agent's sessions.
    #[arg(long, value_parser = agent_parser(), value_name = "AGENT")]
    pub agent: Option<ctxj_core::usage::Agent>,
    /// IANA time zone for start times (default: $TZ, else the system's).
    #[arg(long, value_name = "ZONE")]
    pub timezone: Option<String>,
    /// Sort by cost, most expensive first (desc, the default) or cheapest first (asc); side
    /// sessions stay under their parent.
    #[arg(long, value_enum, value_name = "ORDER")]
    pub order: Option<OrderArg>,
    #[command(flatten)]
    pub output: RowsArgs,
    #[command(flatten)]
    pub format: FormatArgs,
}

pub fn run(args: Args, ctx: &Ctx) -> Result<u8> {
    let usage_only = args.agent.is_some_and(|a| a.format().is_none());
    // Transcript folders (read by import) and the usage-only agents' files (read by `usage`).
    let (folders, mut usage_files) = if args.folders.is_empty() {
        let roots = default_roots(args.agent, Importable::Any)?;
        let folders: Vec<PathBuf> = roots.into_iter().filter(|r| r.agent.format().is_some()).map(|r| r.path).collect();
        (folders, ctxj_core::usage::discover(&[], args.agent))
    } else if usage_only {
        (Vec::new(), agent_files(&args.folders, args.agent)?)
    } else {
        (paths_or_defaults(&args.folders, args.agent)?, Default::default())
    };
    usage_files.retain(|a, _| a.format().is_none());
    for f in &folders {
        anyhow::ensure!(f.is_dir(), "{}: not a folder", ctxj_core::text::escape_line(&f.display().to_string()));
    }
    let tz = zone(args.timezone.as_deref())?;
    let bar = super::progress::Shared::new("reading session");
    let mut rows: Vec<_> =
        folders.iter().flat_map(|f| summarize_folder_with_progress(f, ctx.from, &|d, t| bar.tick(d, t))).collect();
    drop(bar);
    if let Some(a) = args.agent {
        rows.retain(|r| r.agent == a.name());
    }
    rows.extend(ctxj_core::usage::sessions::summarize_usage_only(&usage_files));
    ctxj_core::usage::sessions::order_by_cost(&mut rows, args.order.map_or(Default::default(), OrderArg::order));
    let doc = SessionsDoc::new(rows);
    let mut out = super::stdout();
    write_output(&mut out, args.output.format(), &doc, &doc.sessions, || {
        let bases: Vec<String> = folders.iter().map(|f| f.display().to_string()).collect();
        sessions_table(&doc.sessions, &bases, tz, args.output.layout(), &Paint::new(ctx.color))
    })?;
    out.flush()?;
    Ok(EXIT_OK)
}

impl super::Cmd for Args {
    fn reading(&self) -> Option<super::args::ReadArgs> {
        Some(super::args::ReadArgs { format: self.format.clone(), ..Default::default() })
    }

    fn machine_output(&self) -> bool {
        self.output.machine()
    }

    fn run(self, ctx: &super::Ctx) -> anyhow::Result<u8> {
        run(self, ctx)
    }
}
