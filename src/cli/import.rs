//! `ctxj import`: write a Claude Code, Codex or pi transcript as a journal-v1 session.

use std::io::Write;
use std::path::PathBuf;

use anyhow::{Context as _, Result};

use ctxj_core::import::write::write_session;
use ctxj_core::text::escape_line;

use ctxj::render::import::ImportDoc;
use ctxj::render::rows::write_output;
use ctxj_core::import::write::Written;

use super::args::{ReadArgs, RowsArgs};
use super::{Ctx, EXIT_OK};

/// Import a Claude Code, Codex or pi transcript as a journal-v1 session.
///
/// The transcript's format is detected from its content (force it with --from).
/// Every assistant record gets the prompt_sha256 of its recorded request, so the result passes
/// `ctxj validate`. What the format does not record (system prompt, tool schemas) stays absent
/// and is listed in the report. An existing session is never overwritten without --force, and
/// nothing is ever written into the transcript's own folder. --format json prints the import
/// report (docs/json.md, `ctxj.import/1`); ndjson and csv print one summary row (format,
/// journal written, records, turns, files, bytes).
///
/// Examples:
///   ctxj import sample-journals/transcripts/codex -o /tmp/ctxj-codex
///   ctxj import sample-journals/transcripts/pi -o /tmp/ctxj-pi --json
///   ctxj import sample-journals/transcripts/pi -o /tmp/ctxj-pi --force --from pi
#[derive(Debug, clap::Args)]
#[command(verbatim_doc_comment)]
pub struct Args {
    /// Transcript file (`file.jsonl#agentId` for an inline sidechain).
    pub transcript: String,
    /// Session directory to write (created when absent).
    #[arg(short = 'o', long = "output", alias = "out", value_name = "DIR")]
    pub out: PathBuf,
    /// Overwrite an existing journal.jsonl in --output.
    #[arg(long)]
    pub force: bool,
    #[command(flatten)]
    pub output: RowsArgs,
    #[command(flatten)]
    pub read: ReadArgs,
}

/// The one row of `ctxj import --format ndjson|csv`.
#[derive(serde::Serialize)]
struct Row<'a> {
    format: &'a str,
    #[serde(flatten)]
    written: &'a Written,
}

pub fn run(args: Args, ctx: &Ctx) -> Result<u8> {
    let l = ctx.load_full(&args.transcript)?;
    let w = write_session(&args.out, &l.journal, &l.files, &l.session.journal_path, args.force)
        .with_context(|| format!("writing {}", args.out.display()))?;
    let doc = ImportDoc { schema: "ctxj.import/1", format: l.format.name().to_string(), written: w, report: l.report };
    let w = &doc.written;
    let mut out = super::stdout();
    write_output(&mut out, args.output.format(), &doc, &[Row { format: &doc.format, written: w }], || {
        format!(
            "wrote {} ({} records, {} turns, {} attachment file(s)) from {} transcript {}\n",
            escape_line(&w.journal.display().to_string()),
            w.records,
            w.turns,
            w.files,
            l.format,
            escape_line(&args.transcript)
        )
    })?;
    out.flush()?;
    Ok(EXIT_OK)
}

impl super::Cmd for Args {
    fn reading(&self) -> Option<super::args::ReadArgs> {
        Some(self.read.clone())
    }

    fn machine_output(&self) -> bool {
        self.output.machine()
    }

    fn run(self, ctx: &super::Ctx) -> anyhow::Result<u8> {
        run(self, ctx)
    }
}
