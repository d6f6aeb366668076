//! `ctxj audit`: one row per cleanup decision with its verdicts and savings, then the findings.

use std::io::Write;

use anyhow::Result;

use ctxj::render::check::{audit_doc, audit_text};
use ctxj::render::rows::write_output;
use ctxj::render::style::Paint;
use ctxj_core::check::{audit_as, Counts};

use super::args::{DenyArgs, HarnessArgs, RowsArgs, SessionArgs};
use super::resolve::EncodingArgs;
use super::Ctx;

/// Judge every cleanup decision (elide, clear, mirror, compact) and total what it saved.
///
/// One row per decision: ctxj's calibrated token estimate before and after it, the tokens saved
/// and the running total ("saved ~41,300 tokens (total ~112,000 this session)"), and a verdict on
/// its trigger, restraint and outcome — "ok", or the ids of the rules it broke (docs/rules.md).
/// A decision `validate` finds invalid carries that finding. Then every finding, including the
/// decisions that should have happened and did not (a request over the budget with no elision,
/// a missing or needless invitation, a mirror without `ctx commit`, …). The rules are those of
/// the harness that wrote the journal (its `harness` field: ctxj, claude-code, command-code,
/// veles, or an imported agent's: opencode, gemini-cli, qwen-code, cline, kimi-code, pi,
/// codex), or of `--harness`. Exit 0 when there is no error (and, with `--deny warnings`, no
/// warning), 1 otherwise, 2 when the journal cannot be read.
/// The tables fit the terminal (COLUMNS); --format json|ndjson|csv prints the decisions as rows,
/// the findings in the JSON document (docs/json.md, `ctxj.audit/1`).
///
/// Examples:
///   ctxj audit sample-journals/long-elision
///   ctxj audit long-elision --root sample-journals --deny warnings
///   ctxj audit sample-journals/compaction/journal.jsonl --json
///   ctxj audit sample-journals/compaction --harness veles
///   ctxj audit sample-journals/long-elision --format csv
#[derive(Debug, clap::Args)]
#[command(verbatim_doc_comment)]
pub struct Args {
    #[command(flatten)]
    pub session: SessionArgs,
    #[command(flatten)]
    pub output: RowsArgs,
    #[command(flatten)]
    pub deny: DenyArgs,
    #[command(flatten)]
    pub harness: HarnessArgs,
    #[command(flatten)]
    pub encoding: EncodingArgs,
}

pub fn run(args: Args, ctx: &Ctx) -> Result<u8> {
    let (_, journal) = ctx.load(&args.session.session)?;
    let est = args.encoding.estimator(&journal, ctx)?;
    let report =
        super::progress::with_progress_of("auditing record", |p| audit_as(&journal, &est, args.harness.harness, p));
    let path = journal.path.display().to_string();
    let doc = audit_doc(&path, &report);
    let mut out = super::stdout();
    write_output(&mut out, args.output.format(), &doc, &doc.decisions, || {
        audit_text(&path, &report, &Paint::new(ctx.color), args.output.layout())
    })?;
    out.flush()?;
    Ok(args.deny.exit_code(Counts::of(&report.findings)))
}

super::session_command!(Args);
