//! `validate` and `audit` as tables, text and JSON (the shapes of docs/json.md).

use comfy_table::Table;
use serde_json::{json, Value};

use super::format::thousands;
use super::style::{table, Paint};
use crate::check::audit::{aspect, Aspect};
use crate::check::{AuditReport, Counts, Decision, Finding, Severity};
use crate::text::escape_line;

/// One finding as JSON.
pub fn finding_json(f: &Finding) -> Value {
    json!({"severity": f.severity.as_str(), "rev": f.rev, "line": f.line, "rule": f.rule,
           "block": f.block, "message": f.message})
}

/// The findings as a table (journal text escaped), or `None` when there are none.
pub fn findings_table(findings: &[Finding], paint: &Paint) -> Option<Table> {
    if findings.is_empty() {
        return None;
    }
    let mut t = table(&["severity", "rev", "line", "rule", "block", "message"]);
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

/// `validate --json` of the journal at `session`.
pub fn validate_json(session: &str, findings: &[Finding]) -> Value {
    let counts = Counts::of(findings);
    json!({
        "session": session,
        "findings": findings.iter().map(finding_json).collect::<Vec<_>>(),
        "errors": counts.errors, "warnings": counts.warnings, "infos": counts.infos,
    })
}

/// `validate` as text: the findings, the verdict (`ok` when the command exits 0) and the counts.
pub fn validate_text(
    session: &str,
    records: usize,
    turns: usize,
    findings: &[Finding],
    ok: bool,
    paint: &Paint,
) -> String {
    let mut out = String::new();
    if let Some(t) = findings_table(findings, paint) {
        out += &format!("{t}\n");
    }
    let verdict = if ok { paint.green("ok") } else { paint.red("failed") };
    out += &format!(
        "validate {}: {} — {} record(s), {} turn(s)\n{}\n",
        escape_line(session),
        verdict,
        records,
        turns,
        summary(Counts::of(findings))
    );
    out
}

/// The rules of aspect `a` that decision `d` broke.
fn verdict(report: &AuditReport, d: &Decision, a: Aspect) -> Vec<&'static str> {
    let mut v: Vec<&'static str> =
        d.findings.iter().map(|&i| report.findings[i].rule).filter(|r| aspect(r) == a).collect();
    v.dedup();
    v
}

/// "~41,300", "~−1,200".
fn approx(n: i64) -> String {
    if n < 0 {
        format!("~−{}", thousands(n.unsigned_abs()))
    } else {
        format!("~{}", thousands(n as u64))
    }
}

/// `audit --json` of the journal at `session`.
pub fn audit_json(session: &str, report: &AuditReport) -> Value {
    let counts = Counts::of(&report.findings);
    let decisions: Vec<_> = report
        .decisions
        .iter()
        .map(|d| {
            let v = |a| verdict(report, d, a);
            json!({"rev": d.rev, "line": d.line, "kind": d.kind, "what": d.what,
                   "before": d.before, "after": d.after,
                   "recorded_before": d.recorded_before, "recorded_after": d.recorded_after,
                   "saved": d.saved, "total": d.total,
                   "verdicts": {"trigger": v(Aspect::Trigger), "restraint": v(Aspect::Restraint),
                                "outcome": v(Aspect::Outcome), "habit": v(Aspect::Habit)}})
        })
        .collect();
    json!({
        "session": session,
        "harness": report.harness.name(),
        "decisions": decisions,
        "total_saved": report.total_saved,
        "findings": report.findings.iter().map(finding_json).collect::<Vec<_>>(),
        "errors": counts.errors, "warnings": counts.warnings, "infos": counts.infos,
    })
}

/// One verdict cell: the rules broken, "ok" when the aspect applies and nothing broke, else "—".
fn verdict_cell(report: &AuditReport, d: &Decision, a: Aspect, paint: &Paint) -> String {
    let v = verdict(report, d, a);
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
}

/// One row per decision.
fn decisions_table(report: &AuditReport, paint: &Paint) -> Table {
    let mut t = table(&[
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
        let cell = |a| verdict_cell(report, d, a, paint);
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
    t
}

/// `audit` as text.
pub fn audit_text(session: &str, report: &AuditReport, paint: &Paint) -> String {
    let mut out = if report.decisions.is_empty() {
        "no cleanup decisions in this journal\n".to_string()
    } else {
        format!("{}\n", decisions_table(report, paint))
    };
    if let Some(t) = findings_table(&report.findings, paint) {
        out += &format!("{t}\n");
    }
    out += &format!(
        "audit {} ({} rules): {} decision(s); saved {} tokens (total {} this session)\n{}\n",
        escape_line(session),
        report.harness,
        report.decisions.len(),
        approx(report.total_saved),
        approx(report.total_saved),
        summary(Counts::of(&report.findings))
    );
    out
}
