//! `ctxj validate`: check a journal and every mirror revision, clear and request hash against the
//! rules of journal-v1 (rule ids: `docs/rules.md`).

use std::io::Write;

use anyhow::Result;
use serde_json::json;

use ctxj::check::{validate, Counts, Finding, Severity};
use ctxj::text::escape_line;

use super::{Ctx, EXIT_FINDINGS, EXIT_OK};
use ctxj::render::style::Paint;

/// Check a journal against the rules: integrity, mirror revisions (R1–R6), clears, request hashes.
///
/// Each finding has a severity (error / warning / info), the rev and line of its record, a rule
/// id (see docs/rules.md) and a one-line message. Exit 0 when there is no error (and, with
/// `--deny warnings`, no warning), 1 otherwise, 2 when the journal cannot be read.
///
/// Examples:
///   ctxj validate sample-journals/long-elision
///   ctxj validate my-session --root ~/.harness/sessions --deny warnings
///   ctxj validate journal.jsonl --json | jq '.findings[] | select(.severity=="error")'
#[derive(Debug, clap::Args)]
#[command(verbatim_doc_comment)]
pub struct Args {
    /// Session directory, journal.jsonl path, or session id under --root.
    pub session: String,
    /// One JSON object {session, findings, errors, warnings, infos} instead of a table.
    #[arg(long)]
    pub json: bool,
    /// Also fail (exit 1) on findings of this severity.
    #[arg(long, value_enum, value_name = "LEVEL")]
    pub deny: Option<Deny>,
}

/// Severities `--deny` can turn into failures.
#[derive(Debug, Clone, Copy, PartialEq, Eq, clap::ValueEnum)]
pub enum Deny {
    Warnings,
}

/// Exit code for `counts` under `deny`.
pub fn exit_code(counts: Counts, deny: Option<Deny>) -> u8 {
    if counts.errors > 0 || (deny == Some(Deny::Warnings) && counts.warnings > 0) {
        EXIT_FINDINGS
    } else {
        EXIT_OK
    }
}

/// One finding as JSON.
pub fn finding_json(f: &Finding) -> serde_json::Value {
    json!({"severity": f.severity.as_str(), "rev": f.rev, "line": f.line, "rule": f.rule,
           "block": f.block, "message": f.message})
}

/// The findings as a table (journal text escaped), or `None` when there are none.
pub fn findings_table(findings: &[Finding], paint: &Paint) -> Option<comfy_table::Table> {
    if findings.is_empty() {
        return None;
    }
    let mut t = ctxj::render::style::table(&["severity", "rev", "line", "rule", "block", "message"]);
    for f in findings {
        let sev = match f.severity {
            Severity::Error => paint.red("error"),
            Severity::Warning => paint.yellow("warning"),
            Severity::Info => paint.dim("info"),
        };
        t.add_row(vec![
            sev,
            f.rev.to_string(),
            f.line.to_string(),
            f.rule.to_string(),
            f.block.as_deref().map(escape_line).unwrap_or_default(),
            escape_line(&f.message),
        ]);
    }
    Some(t)
}

/// "2 errors, 1 warning, 0 info".
pub fn summary(c: Counts) -> String {
    let s = |n: usize, w: &str| format!("{n} {w}{}", if n == 1 { "" } else { "s" });
    format!("{}, {}, {} info", s(c.errors, "error"), s(c.warnings, "warning"), c.infos)
}

pub fn run(args: Args, ctx: &Ctx) -> Result<u8> {
    let (session, journal) = ctx.load(&args.session)?;
    let findings = validate(&journal, Some(&session.dir));
    let counts = Counts::of(&findings);
    let mut out = super::stdout();
    if args.json {
        let v = json!({
            "session": journal.path.display().to_string(),
            "findings": findings.iter().map(finding_json).collect::<Vec<_>>(),
            "errors": counts.errors, "warnings": counts.warnings, "infos": counts.infos,
        });
        serde_json::to_writer(&mut out, &v)?;
        out.write_all(b"\n")?;
    } else {
        let paint = Paint::new(ctx.color);
        if let Some(t) = findings_table(&findings, &paint) {
            writeln!(out, "{t}")?;
        }
        let verdict = if exit_code(counts, args.deny) == EXIT_OK { paint.green("ok") } else { paint.red("failed") };
        writeln!(
            out,
            "validate {}: {} — {} record(s), {} turn(s)",
            escape_line(&journal.path.display().to_string()),
            verdict,
            journal.records.len(),
            journal.turns.len()
        )?;
        writeln!(out, "{}", summary(counts))?;
    }
    out.flush()?;
    Ok(exit_code(counts, args.deny))
}
