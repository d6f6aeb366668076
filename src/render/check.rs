//! `validate` and `audit` as tables fitted to the terminal, text, and the typed documents of
//! docs/json.md (`ctxj.validate/1`, `ctxj.audit/1`).

use serde::Serialize;

use super::fit::{fit, Column, Layout};
use super::format::thousands;
use super::style::Paint;
use ctxj_core::check::audit::{aspect, Aspect};
use ctxj_core::check::{AuditReport, Counts, Decision, Finding, Severity};
use ctxj_core::text::escape_line;

/// One finding (journal text as written: JSON escapes it).
#[derive(Debug, Clone, Serialize, schemars::JsonSchema)]
pub struct FindingRow {
    /// `error`, `warning` or `info`.
    pub severity: String,
    pub rev: u64,
    pub line: usize,
    /// The rule id (docs/rules.md).
    pub rule: String,
    pub block: Option<String>,
    pub message: String,
}

impl FindingRow {
    pub fn of(f: &Finding) -> FindingRow {
        FindingRow {
            severity: f.severity.as_str().to_string(),
            rev: f.rev,
            line: f.line,
            rule: f.rule.to_string(),
            block: f.block.clone(),
            message: f.message.clone(),
        }
    }
}

/// The findings as a table fitted to `layout` (journal text escaped; the message is cut in the
/// middle, the block goes first), or `None` when there are none.
pub fn findings_table(findings: &[Finding], paint: &Paint, layout: Layout) -> Option<String> {
    if findings.is_empty() {
        return None;
    }
    let columns = [
        Column::text("severity", 0),
        Column::number("rev", 0),
        Column::number("line", 2),
        Column::text("rule", 0),
        Column::text("block", 1),
        Column::prose("message", 0),
    ];
    let rows: Vec<Vec<String>> = (findings.iter())
        .map(|f| {
            let sev = match f.severity {
                Severity::Error => paint.red("error"),
                Severity::Warning => paint.yellow("warning"),
                Severity::Info => paint.dim("info"),
            };
            vec![
                sev,
                f.rev.to_string(),
                f.line.to_string(),
                f.rule.to_string(),
                f.block.as_deref().map(escape_line).unwrap_or_default(),
                escape_line(&f.message),
            ]
        })
        .collect();
    Some(fit(&columns, &rows, layout))
}

/// "2 errors, 1 warning, 0 info".
pub fn summary(c: Counts) -> String {
    let s = |n: usize, w: &str| format!("{n} {w}{}", if n == 1 { "" } else { "s" });
    format!("{}, {}, {} info", s(c.errors, "error"), s(c.warnings, "warning"), c.infos)
}

/// `ctxj validate --format json`: the findings (the rows of `ndjson` and `csv`) and their counts.
#[derive(Debug, Clone, Serialize, schemars::JsonSchema)]
pub struct ValidateDoc {
    /// `ctxj.validate/1`.
    pub schema: &'static str,
    pub session: String,
    pub findings: Vec<FindingRow>,
    pub errors: usize,
    pub warnings: usize,
    pub infos: usize,
}

/// The document of `validate` on the journal at `session`.
pub fn validate_doc(session: &str, findings: &[Finding]) -> ValidateDoc {
    let counts = Counts::of(findings);
    ValidateDoc {
        schema: "ctxj.validate/1",
        session: session.to_string(),
        findings: findings.iter().map(FindingRow::of).collect(),
        errors: counts.errors,
        warnings: counts.warnings,
        infos: counts.infos,
    }
}

/// `validate` as text: the findings, the verdict (`ok` when the command exits 0) and the counts.
pub fn validate_text(
    session: &str,
    records: usize,
    turns: usize,
    findings: &[Finding],
    ok: bool,
    paint: &Paint,
    layout: Layout,
) -> String {
    let mut out = String::new();
    if let Some(t) = findings_table(findings, paint, layout) {
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

/// `ctxj audit --format json`: the cleanup decisions (the rows of `ndjson` and `csv`), the
/// tokens they saved, and every finding.
#[derive(Debug, Clone, Serialize, schemars::JsonSchema)]
pub struct AuditDoc {
    /// `ctxj.audit/1`.
    pub schema: &'static str,
    pub session: String,
    /// The harness profile whose rules were applied.
    pub harness: String,
    pub decisions: Vec<DecisionRow>,
    pub total_saved: i64,
    pub findings: Vec<FindingRow>,
    pub errors: usize,
    pub warnings: usize,
    pub infos: usize,
}

/// One cleanup decision and its verdicts.
#[derive(Debug, Clone, Serialize, schemars::JsonSchema)]
pub struct DecisionRow {
    #[serde(flatten)]
    pub decision: Decision,
    pub verdicts: Verdicts,
}

/// The rules a decision broke, per aspect (empty: none).
#[derive(Debug, Clone, Serialize, schemars::JsonSchema)]
pub struct Verdicts {
    pub trigger: Vec<String>,
    pub restraint: Vec<String>,
    pub outcome: Vec<String>,
    pub habit: Vec<String>,
}

/// The document of `audit` on the journal at `session`.
pub fn audit_doc(session: &str, report: &AuditReport) -> AuditDoc {
    let counts = Counts::of(&report.findings);
    let decisions = (report.decisions.iter())
        .map(|d| {
            let v = |a| verdict(report, d, a).into_iter().map(str::to_string).collect();
            DecisionRow {
                decision: d.clone(),
                verdicts: Verdicts {
                    trigger: v(Aspect::Trigger),
                    restraint: v(Aspect::Restraint),
                    outcome: v(Aspect::Outcome),
                    habit: v(Aspect::Habit),
                },
            }
        })
        .collect();
    AuditDoc {
        schema: "ctxj.audit/1",
        session: session.to_string(),
        harness: report.harness.name().to_string(),
        decisions,
        total_saved: report.total_saved,
        findings: report.findings.iter().map(FindingRow::of).collect(),
        errors: counts.errors,
        warnings: counts.warnings,
        infos: counts.infos,
    }
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

/// One row per decision, fitted to `layout` (the running total, then before/after go first;
/// `what` is cut in the middle).
fn decisions_table(report: &AuditReport, paint: &Paint, layout: Layout) -> String {
    let columns = [
        Column::number("rev", 0),
        Column::text("decision", 0),
        Column::prose("what", 0),
        Column::number("before", 2),
        Column::number("after", 2),
        Column::number("saved", 0),
        Column::number("total", 3),
        Column::text("trigger", 0),
        Column::text("restraint", 0),
        Column::text("outcome", 0),
        Column::text("DECIDED", 1),
    ];
    let rows: Vec<Vec<String>> = (report.decisions.iter())
        .map(|d| {
            let cell = |a| verdict_cell(report, d, a, paint);
            vec![
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
            ]
        })
        .collect();
    fit(&columns, &rows, layout)
}

/// `audit` as text.
pub fn audit_text(session: &str, report: &AuditReport, paint: &Paint, layout: Layout) -> String {
    let mut out = if report.decisions.is_empty() {
        "no cleanup decisions in this journal\n".to_string()
    } else {
        format!("{}\n", decisions_table(report, paint, layout))
    };
    if let Some(t) = findings_table(&report.findings, paint, layout) {
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
