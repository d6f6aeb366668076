//! Issue 30's done-when: `validate`, `audit`, `show` and `budget` give one answer per decision, on
//! every journal of `tests/data/` (the invalid ones included: each breaks one rule) and of
//! `sample-journals/`:
//!
//! * **input**: a file one command cannot read, none of them reads (exit 2 from all three, or from
//!   none);
//! * **validate → audit**: each `validate` finding (error or warning) about a decision record —
//!   the rules of `check::audit::DECISION_RULES` — is on that decision's `audit` row and among
//!   `audit`'s findings (one verdict: `audit` runs `validate`'s implementation);
//! * **audit → show**: a mirror `audit` shows as not applied (rejected, or `mirror-uncommitted`)
//!   leaves `show`'s request unchanged across its rev, and a decision that leaves `show`'s
//!   request unchanged saves nothing in `audit`;
//! * **audit → budget**: under a profile with a budget (`ctxj`, `pi-agent`), the settings each
//!   `session`/`model` record declares, written as a harness TOML (journal-v1 §6), make
//!   `ctxj budget` exit 1 exactly where `audit` reports `budget-over-window` at that record.

use std::path::{Path, PathBuf};

use rayon::prelude::*;
use serde_json::Value;

use crate::common::*;

/// Every journal: `.jsonl` files under `tests/data/` and `sample-journals/` (a directory's
/// `journal.jsonl` included). Transcripts of other agents are read through their importers by all
/// commands alike, so they are in too.
fn journals() -> Vec<PathBuf> {
    let mut v = files_under(&repo().join("tests/data"), "jsonl");
    v.extend(files_under(&repo().join("sample-journals"), "jsonl"));
    v
}

fn rel(p: &Path) -> String {
    p.strip_prefix(repo()).unwrap_or(p).display().to_string()
}

/// `ctxj <args> <path>`: exit code and stdout.
fn run(args: &[&str], path: &Path) -> (i32, Vec<u8>) {
    let out = ctxj().args(args).arg(path).output().unwrap();
    (out.status.code().unwrap_or_else(|| panic!("{args:?} {}: killed", rel(path))), out.stdout)
}

fn json(bytes: &[u8], what: &str) -> Value {
    serde_json::from_slice(bytes).unwrap_or_else(|e| panic!("{what}: not JSON ({e})"))
}

/// `(rule, rev)` of the findings of a `validate`/`audit` document, info left out.
fn findings(v: &Value) -> Vec<(String, u64)> {
    v["findings"]
        .as_array()
        .map(|a| {
            a.iter()
                .filter(|f| f["severity"] != "info")
                .map(|f| (f["rule"].as_str().unwrap_or("").to_string(), f["rev"].as_u64().unwrap_or(0)))
                .collect()
        })
        .unwrap_or_default()
}

/// What is wrong with one journal, if anything.
fn disagreements(path: &Path) -> Vec<String> {
    let name = rel(path);
    let mut out = Vec::new();
    let (vc, vj) = run(&["validate", "--json"], path);
    let (ac, aj) = run(&["audit", "--json"], path);
    let (sc, _) = run(&["show"], path);
    let unreadable = [vc, ac, sc].map(|c| c == 2);
    if unreadable.iter().any(|x| *x) {
        if !unreadable.iter().all(|x| *x) {
            out.push(format!(
                "{name}: exit codes validate {vc}, audit {ac}, show {sc}: one reads what another refuses"
            ));
        }
        return out;
    }
    let (v, a) = (json(&vj, &format!("validate {name}")), json(&aj, &format!("audit {name}")));
    let audit_findings = findings(&a);
    let rows: Vec<&Value> = a["decisions"].as_array().map(|d| d.iter().collect()).unwrap_or_default();
    // validate → audit: a decision's validate finding is on its row
    for (rule, rev) in findings(&v) {
        if !ctxj_core::check::audit::DECISION_RULES.contains(&rule.as_str()) {
            continue;
        }
        let Some(row) = rows.iter().find(|d| d["rev"].as_u64() == Some(rev)) else { continue };
        let on_row = row["verdicts"]
            .as_object()
            .is_some_and(|o| o.values().flat_map(|x| x.as_array().into_iter().flatten()).any(|x| *x == *rule));
        if !on_row || !audit_findings.contains(&(rule.clone(), rev)) {
            out.push(format!("{name}: validate's {rule} at rev {rev} is not on audit's decision row"));
        }
    }
    // audit → show: what audit calls not applied, show does not apply
    let show_at = |rev: u64| run(&["show", "--json", "--at", "rev", &rev.to_string()], path);
    for row in &rows {
        let rev = row["rev"].as_u64().unwrap_or(0);
        let verdicts = row["verdicts"].to_string();
        let what = row["what"].as_str().unwrap_or("");
        let not_applied =
            row["kind"] == "mirror" && (what.contains("rejected") || verdicts.contains("\"mirror-uncommitted\""));
        if row["kind"] != "mirror" || rev < 2 {
            continue;
        }
        let (before, after) = (show_at(rev - 1), show_at(rev));
        if before.0 != 0 || after.0 != 0 {
            out.push(format!("{name}: show --at rev {} / rev {rev} exit {} / {}", rev - 1, before.0, after.0));
            continue;
        }
        let unchanged = before.1 == after.1;
        if not_applied && !unchanged {
            out.push(format!("{name}: audit shows the mirror at rev {rev} as not applied ({what}), show applies it"));
        }
        if unchanged && row["saved"].as_i64() != Some(0) {
            out.push(format!(
                "{name}: show's request is unchanged across rev {rev}, audit says it saved {}",
                row["saved"]
            ));
        }
    }
    // audit → budget: the declared settings, as a harness config
    if matches!(a["harness"].as_str(), Some("ctxj" | "pi-agent")) {
        out.extend(budget_disagreements(path, &name, &audit_findings));
    }
    out
}

/// `ctxj budget` on the settings each `session`/`model` record declares vs `audit`'s
/// `budget-over-window` at that record (judged where the journal declares a budget).
fn budget_disagreements(path: &Path, name: &str, audit_findings: &[(String, u64)]) -> Vec<String> {
    let mut out = Vec::new();
    let Ok(text) = std::fs::read_to_string(path) else { return out };
    let recs: Vec<Value> = text.lines().filter_map(|l| serde_json::from_str(l).ok()).collect();
    let mut model = String::from("vendor/model");
    let dir = tempfile::tempdir().unwrap();
    for r in &recs {
        if let Some(m) = r["model"].as_str() {
            model = m.to_string();
        }
        let (Some("session" | "model"), Some(ctx), Some(rev)) =
            (r["kind"].as_str(), r["ctx"].as_object(), r["rev"].as_u64())
        else {
            continue;
        };
        // a TOML integer is an i64: settings beyond it (the hostile `arith-extremes`) have no
        // harness config to compare with
        if ctx.values().any(|v| v.as_u64().is_some_and(|n| i64::try_from(n).is_err())) {
            continue;
        }
        let toml: String = ctx.iter().filter_map(|(k, v)| Some(format!("{k} = {}\n", v.as_u64()?))).collect();
        let cfg = dir.path().join(format!("rev-{rev}.toml"));
        std::fs::write(&cfg, toml).unwrap();
        let o = ctxj().args(["budget", "--json", "--model", &model, "--config"]).arg(&cfg).output().unwrap();
        let code = o.status.code().unwrap_or(-1);
        let audit_says = audit_findings.contains(&("budget-over-window".to_string(), rev));
        if (code == 1) != audit_says || !matches!(code, 0 | 1) {
            out.push(format!(
                "{name}: the settings of rev {rev} ({}): budget exits {code}, audit {} budget-over-window",
                Value::Object(ctx.clone()),
                if audit_says { "reports" } else { "does not report" }
            ));
        }
    }
    out
}

#[test]
fn validate_audit_show_and_budget_agree_on_every_decision_of_every_journal() {
    let files = journals();
    assert!(files.len() >= 120, "only {} journals found", files.len());
    let wrong: Vec<String> = files.par_iter().flat_map(|f| disagreements(f)).collect();
    assert!(wrong.is_empty(), "{} disagreement(s):\n{}", wrong.len(), wrong.join("\n"));
}

/// Issue 30: `ctxj budget` and `audit` judged a budget above `ctx_window − context_reserve` with
/// two implementations; for a journal that records no `ctx_window`, `budget` assumed journal-v1
/// §6's default window (1,000,000) and reported the error while `audit` judged nothing.
#[test]
fn regression_budget_and_audit_disagreed_on_a_budget_without_a_recorded_window() {
    let d = tempfile::tempdir().unwrap();
    let base = std::fs::read_to_string(repo().join("tests/data/valid/check-base/journal.jsonl")).unwrap();
    let first = base.lines().next().unwrap();
    let mut s: Value = serde_json::from_str(first).unwrap();
    s["ctx"] = serde_json::json!({"context_budget": 995_000, "context_target": 600});
    let j = d.path().join("journal.jsonl");
    std::fs::write(&j, base.replacen(first, &s.to_string(), 1)).unwrap();
    let wrong = disagreements(&j);
    assert!(wrong.is_empty(), "{wrong:?}");
    let (code, out) = run(&["audit", "--json"], &j);
    assert_eq!(code, 1, "{}", String::from_utf8_lossy(&out));
    assert!(findings(&json(&out, "audit")).contains(&("budget-over-window".into(), 1)));
}
