//! `ctxj log`: one row per record — what it did to the projection, and the size after it.

use std::io::Write;

use anyhow::Result;

use super::args::{OutputArgs, SessionArgs};
use super::{Ctx, EXIT_OK};

/// List every record with what it did to the projection.
///
/// Columns: rev, time, kind, effect (e.g. "elided call_3, call_5 (−41,220 chars)" or
/// "mirror r2 rejected: assistant text changed"), then blocks and chars of the projection after it.
///
/// Examples:
///   ctxj log sample-journals/long-elision
///   ctxj log sample-journals/compaction --json
///   ctxj log sample-journals/transcripts/pi
#[derive(Debug, clap::Args)]
#[command(verbatim_doc_comment)]
pub struct Args {
    #[command(flatten)]
    pub session: SessionArgs,
    /// --json: one JSON array of rows instead of a table.
    #[command(flatten)]
    pub output: OutputArgs,
}

pub fn run(args: Args, ctx: &Ctx) -> Result<u8> {
    let (_, journal) = ctx.load(&args.session.session)?;
    let mut out = super::stdout();
    if args.output.json {
        // Streamed row by row (issue 21: 1 M records held every row and the whole text at once).
        ctxj::render::log::write_json(&mut out, ctxj::render::log::Rows::new(&journal))?;
        writeln!(out)?;
    } else {
        writeln!(out, "{}", ctxj::render::log::text(&ctxj::render::log::rows(&journal)))?;
    }
    out.flush()?;
    Ok(EXIT_OK)
}
