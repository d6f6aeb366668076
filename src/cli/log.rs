//! `ctxj log`: one row per record — what it did to the projection, and the size after it.

use std::io::Write;

use anyhow::Result;

use ctxj::render::log::{rows, text, write_streamed, LogDoc};
use ctxj::render::rows::write_output;

use super::args::{RowsArgs, SessionArgs};
use super::{Ctx, EXIT_OK};

/// List every record with what it did to the projection.
///
/// Columns: rev, time, kind, effect (e.g. "elided call_3, call_5 (−41,220 chars)" or
/// "mirror r2 rejected: assistant text changed"), then blocks and chars of the projection after it.
/// The table fits the terminal (COLUMNS): time, then blocks go first; the effect is cut in the
/// middle. --format json|ndjson|csv prints the records as rows (docs/json.md, `ctxj.log/1`).
///
/// Examples:
///   ctxj log sample-journals/long-elision
///   ctxj log sample-journals/compaction --json
///   ctxj log sample-journals/long-elision --format csv
///   ctxj log sample-journals/transcripts/pi
#[derive(Debug, clap::Args)]
#[command(verbatim_doc_comment)]
pub struct Args {
    #[command(flatten)]
    pub session: SessionArgs,
    #[command(flatten)]
    pub output: RowsArgs,
}

pub fn run(args: Args, ctx: &Ctx) -> Result<u8> {
    let (_, journal) = ctx.load(&args.session.session)?;
    let mut out = super::stdout();
    let session = journal.path.display().to_string();
    let format = args.output.format();
    // JSON and NDJSON are written record by record (issue 21: a million records).
    match write_streamed(&mut out, format, &session, &journal) {
        Some(written) => written?,
        None => {
            let doc = LogDoc::new(session, rows(&journal));
            write_output(&mut out, format, &doc, &doc.records, || text(&doc.records, args.output.layout()))?;
        }
    }
    out.flush()?;
    Ok(EXIT_OK)
}

super::session_command!(Args);
