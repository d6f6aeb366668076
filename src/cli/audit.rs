//! `ctxj audit`: one row per cleanup decision with its verdicts and savings, then the findings.

use std::io::Write;

use anyhow::Result;
use serde_json::json;

use ctxj::check::audit::{aspect, Aspect};
use ctxj::check::{audit, AuditReport, Counts, Decision};
use ctxj::render::format::thousands;
use ctxj::text::escape_line;

use super::validate::{exit_code, finding_json, findings_table, summary, Deny};
use super::Ctx;
use ctxj::render::style::Paint;

/// Judge every cleanup decision (elide, clear, mirror, compact) and total what it saved.
///
/// One row per decision: ctxj's calibrated token estimate before and after it, the tokens saved
/// and the running total ("saved ~41,300 tokens (total ~112,000 this session)"), and a verdict on
/// its trigger, restraint and outcome — "ok", or the ids of the rules it broke (docs/rules.md).
/// Then every finding. Exit 0 when there is no error (and, with `--deny warnings`, no warning),
/// 1 otherwise, 2 when the journal cannot be read.
///
/// Examples:
///   ctxj audit sample-journals/long-elision
///   ctxj audit my-session --root ~/.harness/sessions --deny warnings
///   ctxj audit journal.jsonl --json | jq '.decisions[] | {rev, kind, saved}'
#[derive(Debug, clap::Args)]
#[command(verbatim_doc_comment)]
pub struct Args {
    /// Session directory, journal.jsonl path, or session id under --root.
    pub session: String,
    /// One JSON object {session, decisions, total_saved, findings, …} instead of tables.
    #[arg(long)]
    pub json: bool,
    /// Also fail (exit 1) on findings of this severity.
    #[arg(long, value_enum, value_name = "LEVEL")]
    pub deny: Option<Deny>,
}

fn verdict(report: &AuditReport, d: &Decision, a: Aspect) -> Vec<&'static str> {
    let mut v: Vec<&'static str> =
        d.findings.iter().map(|&i| report.findings[i].rule).filter(|r| aspect(r) == a).collect();
    v.dedup();
    v
}

fn approx(n: i64) -> String {
    if n < 0 {
        format!("~−{}", thousands(n.unsigned_abs()))
    } else {
        format!("~{}", thousands(n as u64))
    }
}

pub fn run(args: Args, ctx: &Ctx) -> Result<u8> {
    let (_, journal) = ctx.load(&args.session)?;
    let report = audit(&journal);
    let counts = Counts::of(&report.findings);
    let mut out = super::stdout();
    if args.json {
        let decisions: Vec<_> = report
            .decisions
            .iter()
            .map(|d| {
                let v = |a| verdict(&report, d, a);
                json!({"rev": d.rev, "line": d.line, "kind": d.kind, "what": d.what,
                       "before": d.before, "after": d.after,
                       "recorded_before": d.recorded_before, "recorded_after": d.recorded_after,
                       "saved": d.saved, "total": d.total,
                       "verdicts": {"trigger": v(Aspect::Trigger), "restraint": v(Aspect::Restraint),
                                    "outcome": v(Aspect::Outcome), "habit": v(Aspect::Habit)}})
            })
            .collect();
        let v = json!({
            "session": journal.path.display().to_string(),
            "decisions": decisions,
            "total_saved": report.total_saved,
            "findings": report.findings.iter().map(finding_json).collect::<Vec<_>>(),
            "errors": counts.errors, "warnings": counts.warnings, "infos": counts.infos,
        });
        serde_json::to_writer(&mut out, &v)?;
        out.write_all(b"\n")?;
    } else {
        let paint = Paint::new(ctx.color);
        if report.decisions.is_empty() {
            writeln!(out, "no cleanup decisions in this journal")?;
        } else {
            let mut t = ctxj::render::style::table(&[
                "rev",
                "decision",
                "what",
                "before",
                "after",
                "saved",
                "total",
                "trigger",
                "restraint",
                "outcome",
                "DECIDED",
            ]);
            for d in &report.decisions {
                let cell = |a: Aspect| {
                    let v = verdict(&report, d, a);
                    let applies = match a {
                        Aspect::Trigger => d.trigger_judged,
                        Aspect::Habit => matches!(d.kind, "clear" | "mirror"),
                        Aspect::Restraint => matches!(d.kind, "elide" | "clear"),
                        Aspect::Outcome => matches!(d.kind, "elide" | "mirror" | "compact"),
                    };
                    if !v.is_empty() {
                        paint.yellow(&v.join(", "))
                    } else if applies {
                        paint.green("ok")
                    } else {
                        paint.dim("—")
                    }
                };
                t.add_row(vec![
                    d.rev.to_string(),
                    d.kind.to_string(),
                    escape_line(&d.what),
                    thousands(d.before),
                    thousands(d.after),
                    approx(d.saved),
                    approx(d.total),
                    cell(Aspect::Trigger),
                    cell(Aspect::Restraint),
                    cell(Aspect::Outcome),
                    cell(Aspect::Habit),
                ]);
            }
            writeln!(out, "{t}")?;
        }
        if let Some(t) = findings_table(&report.findings, &paint) {
            writeln!(out, "{t}")?;
        }
        writeln!(
            out,
            "audit {}: {} decision(s); saved {} tokens (total {} this session)",
            escape_line(&journal.path.display().to_string()),
            report.decisions.len(),
            approx(report.total_saved),
            approx(report.total_saved),
        )?;
        writeln!(out, "{}", summary(counts))?;
    }
    out.flush()?;
    Ok(exit_code(counts, args.deny))
}
