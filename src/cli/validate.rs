//! `ctxj validate`: check a journal and every mirror revision, clear and request hash against the
//! rules of journal-v1 (rule ids: `docs/rules.md`).

use std::io::Write;

use anyhow::Result;

use ctxj::render::check::{validate_doc, validate_text};
use ctxj::render::rows::write_output;
use ctxj::render::style::Paint;
use ctxj_core::check::{validate, Counts};

use super::args::{DenyArgs, RowsArgs, SessionArgs};
use super::{Ctx, EXIT_OK};

/// Check a journal against the rules: integrity, mirror revisions (R1–R6), clears, request hashes.
///
/// Each finding has a severity (error / warning / info), the rev and line of its record, a rule
/// id (see docs/rules.md) and a one-line message. Exit 0 when there is no error (and, with
/// `--deny warnings`, no warning), 1 otherwise, 2 when the journal cannot be read. The table fits
/// the terminal (COLUMNS); --format json|ndjson|csv prints the findings as rows (docs/json.md,
/// `ctxj.validate/1`).
///
/// Examples:
///   ctxj validate sample-journals/long-elision
///   ctxj validate long-elision --root sample-journals --deny warnings
///   ctxj validate sample-journals/compaction/journal.jsonl --json
///   ctxj validate sample-journals/long-elision --format csv
#[derive(Debug, clap::Args)]
#[command(verbatim_doc_comment)]
pub struct Args {
    #[command(flatten)]
    pub session: SessionArgs,
    #[command(flatten)]
    pub output: RowsArgs,
    #[command(flatten)]
    pub deny: DenyArgs,
}

pub fn run(args: Args, ctx: &Ctx) -> Result<u8> {
    let loaded = ctx.load_full(&args.session.session)?;
    // An imported transcript holds its attachments inline (written only by `import`): there is
    // no file beside it to check.
    let dir = loaded.report.is_none().then_some(loaded.session.dir.as_path());
    let journal = loaded.journal;
    let findings = validate(&journal, dir);
    let code = args.deny.exit_code(Counts::of(&findings));
    let path = journal.path.display().to_string();
    let doc = validate_doc(&path, &findings);
    let mut out = super::stdout();
    write_output(&mut out, args.output.format(), &doc, &doc.findings, || {
        let (paint, layout) = (Paint::new(ctx.color), args.output.layout());
        validate_text(&path, journal.records.len(), journal.turns.len(), &findings, code == EXIT_OK, &paint, layout)
    })?;
    out.flush()?;
    Ok(code)
}

super::session_command!(Args);
