//! `ctxj usage`: token and cost totals of Claude Code logs, counted the way ccusage counts them,
//! plus cache-hit rate and compactions.

use std::io::Write;
use std::path::PathBuf;

use anyhow::Result;
use clap::ValueEnum;

use ctxj::render::format::thousands;
use ctxj::text::escape_line;
use ctxj::usage::{claude_files, usage, By};

use super::{Ctx, EXIT_OK};
use ctxj::render::style::table;

/// Token and cost totals of Claude Code logs, with cache-hit rate and compactions.
///
/// Counting follows ccusage: one count per message.id + requestId (the non-sidechain copy wins,
/// then the larger total), subagent files count toward their parent session. Lines written with
/// a space after the colon, which ccusage skips, are counted here and shown in --json as
/// not_counted_by_ccusage. Costs come from the built-in price table (1-hour cache writes at 2x
/// input, no long-context tiers); calls of a model it does not know are left out and marked *.
///
/// Examples:
///   ctxj usage ~/.claude/projects
///   ctxj usage ~/.claude/projects --by day
///   ctxj usage ~/.claude/projects/-home-me-app/4d5611e5.jsonl --by model --json
#[derive(Debug, clap::Args)]
#[command(verbatim_doc_comment)]
pub struct Args {
    /// Claude Code transcripts or folders holding them (searched recursively).
    #[arg(required = true)]
    pub paths: Vec<PathBuf>,
    /// Group rows by session, day (UTC) or model.
    #[arg(long, value_enum, default_value_t = ByArg::Session)]
    pub by: ByArg,
    /// Print JSON instead of a table.
    #[arg(long)]
    pub json: bool,
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
    if args.json {
        writeln!(out, "{}", serde_json::to_string_pretty(&r)?)?;
        out.flush()?;
        return Ok(EXIT_OK);
    }
    let first = match by {
        By::Session => "session",
        By::Day => "day (UTC)",
        By::Model => "model",
    };
    let mut t = table(&[
        first,
        "calls",
        "input",
        "output",
        "cache create",
        "cache read",
        "total",
        "cost $",
        "cache hit",
        "compactions",
    ]);
    let pct = |x: Option<f64>| x.map_or("-".to_string(), |v| format!("{:.1}%", v * 100.0));
    let usd = |x: Option<f64>, unpriced: usize| match (x, unpriced) {
        (None, _) => "?".to_string(),
        (Some(v), 0) => format!("{v:.2}"),
        (Some(v), _) => format!("{v:.2}*"),
    };
    for row in r.rows.iter().chain(std::iter::once(&r.totals)) {
        t.add_row(vec![
            escape_line(&row.key),
            thousands(row.entries as u64),
            thousands(row.tokens.input),
            thousands(row.tokens.output),
            thousands(row.tokens.cache_creation),
            thousands(row.tokens.cache_read),
            thousands(row.total_tokens),
            usd(row.cost_usd, row.unpriced_calls),
            pct(row.cache_hit_rate),
            if by == By::Model { "-".into() } else { row.compactions.to_string() },
        ]);
    }
    writeln!(out, "{t}")?;
    writeln!(out, "{} file(s), {} duplicate line(s) counted once", r.files.len(), r.duplicates)?;
    if !r.unpriced.is_empty() {
        writeln!(
            out,
            "* leaves out {} call(s) of models without a price: {}",
            r.totals.unpriced_calls,
            escape_line(&r.unpriced.join(", "))
        )?;
    }
    if !r.totals.not_counted_by_ccusage.is_zero() {
        writeln!(
            out,
            "{} token(s) come from lines written with a space after the colon, which ccusage does not count",
            thousands(r.totals.not_counted_by_ccusage.total())
        )?;
    }
    out.flush()?;
    Ok(EXIT_OK)
}
