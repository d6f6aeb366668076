//! Issue 30: every journal the repository ships as an example of good behaviour — each bundled
//! sample under `sample-journals/` (the generated journals, the experiment runs, the synthetic
//! agent transcripts) and each journal under `tests/data/valid/` — audits clean under the profile
//! its own `harness` field names, warnings denied, and `validate`, `audit` and `show` agree on it
//! (the same exit code, 0). A generator or rule change that breaks this fails here by file.

use std::path::{Path, PathBuf};

use serde_json::Value;

use crate::common::*;

/// Bundled journals known not to audit clean yet, with the reason; kept honest by
/// [`the_known_unclean_runs_are_still_unclean`] (fix one, and that test asks to drop its row).
/// Empty since issue 30's leftovers: the experiment runs follow their strategy and are judged
/// by the `pi-agent` profile their `harness` field names (not by journal-v1's budget rules).
const NOT_YET_CLEAN: &[&str] = &[];

/// Every `.jsonl` under `sample-journals/` and `tests/data/valid/` (directories holding a
/// `journal.jsonl` included: their journal is one of the files), but [`NOT_YET_CLEAN`].
fn bundled_journals() -> Vec<PathBuf> {
    let mut v = files_under(&repo().join("sample-journals"), "jsonl");
    v.extend(files_under(&repo().join("tests/data/valid"), "jsonl"));
    v.retain(|f| !NOT_YET_CLEAN.contains(&rel(f).as_str()));
    v
}

fn rel(p: &Path) -> String {
    p.strip_prefix(repo()).unwrap_or(p).display().to_string()
}

/// The exit code of `ctxj <args> <path>`.
fn code(args: &[&str], path: &Path) -> i32 {
    let out = ctxj().args(args).arg(path).output().unwrap();
    out.status.code().unwrap_or_else(|| panic!("{args:?} {}: killed", rel(path)))
}

#[test]
fn every_bundled_journal_audits_clean_under_its_own_profile() {
    let files = bundled_journals();
    assert!(files.len() >= 20, "only {} bundled journals found", files.len());
    let mut dirty = Vec::new();
    for f in &files {
        let out = ctxj().args(["audit", "--json", "--deny", "warnings"]).arg(f).output().unwrap();
        let v: Value = serde_json::from_slice(&out.stdout)
            .unwrap_or_else(|e| panic!("audit {}: not JSON ({e}): {}", rel(f), String::from_utf8_lossy(&out.stderr)));
        let found: Vec<String> = v["findings"]
            .as_array()
            .unwrap()
            .iter()
            .filter(|x| x["severity"] != "info")
            .map(|x| format!("{} {} rev {}", x["severity"], x["rule"], x["rev"]))
            .collect();
        assert!(v["harness"].is_string(), "audit {}: names no profile", rel(f));
        if out.status.code() != Some(0) || !found.is_empty() {
            dirty.push(format!("{} ({} rules): {found:?}", rel(f), v["harness"].as_str().unwrap_or("?")));
        }
    }
    assert!(dirty.is_empty(), "bundled journals that do not audit clean:\n{}", dirty.join("\n"));
}

#[test]
fn validate_audit_and_show_agree_on_every_bundled_journal() {
    let mut disagree = Vec::new();
    for f in bundled_journals() {
        let codes = [
            ("validate", code(&["validate", "--deny", "warnings"], &f)),
            ("audit", code(&["audit", "--deny", "warnings"], &f)),
            ("show", code(&["show"], &f)),
        ];
        if codes.iter().any(|(_, c)| *c != 0) {
            disagree.push(format!("{}: {codes:?}", rel(&f)));
        }
    }
    assert!(disagree.is_empty(), "validate / audit / show exit codes (all 0 expected):\n{}", disagree.join("\n"));
}

/// Issue 30: the bundled Veles sample cut before assistant blocks (3 × `compact-cut-boundary`
/// under its own profile); seed 002 cuts only at a user message.
#[test]
fn regression_veles_sample_cut_before_an_assistant_block() {
    let out = ctxj().args(["audit", "--json"]).arg(sample("compaction")).output().unwrap();
    let v: Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(v["harness"], "veles");
    let compacts = v["decisions"].as_array().unwrap().iter().filter(|d| d["kind"] == "compact").count();
    assert!(compacts >= 3, "{compacts} compactions");
    assert!(!v["findings"].as_array().unwrap().iter().any(|f| f["rule"] == "compact-cut-boundary"), "{v}");
}

#[test]
fn the_known_unclean_runs_are_still_unclean() {
    for f in NOT_YET_CLEAN {
        let path = repo().join(f);
        assert!(path.is_file(), "{f} is gone: drop it from NOT_YET_CLEAN");
        assert_ne!(
            code(&["audit", "--deny", "warnings"], &path),
            0,
            "{f} audits clean now: drop it from NOT_YET_CLEAN"
        );
    }
}

/// Issue 30: the experiment runs were judged by the `ctxj` profile's budget (`elide-trigger`,
/// `compact-trigger` at "200000"); under `pi-agent` the strategy in the `harness` field sets the
/// threshold, so the same compaction is early for `compact-at-50000` and on time for
/// `compact-at-12000`.
#[test]
fn regression_experiment_runs_judged_by_a_budget_their_harness_does_not_have() {
    let run = repo().join("sample-journals/experiment-bugfix/runs/compact-at-12000-structured-1/journal.jsonl");
    let text = std::fs::read_to_string(&run).unwrap();
    let d = tempfile::tempdir().unwrap();
    let early = d.path().join("journal.jsonl");
    std::fs::write(&early, text.replacen("compact-at-12000-structured)", "compact-at-50000-structured)", 1)).unwrap();
    let audit = |p: &Path| -> Value {
        let out = ctxj().args(["audit", "--json", "--deny", "warnings"]).arg(p).output().unwrap();
        serde_json::from_slice(&out.stdout).unwrap()
    };
    let rules = |v: &Value| -> Vec<String> {
        v["findings"].as_array().unwrap().iter().map(|f| f["rule"].as_str().unwrap().to_string()).collect()
    };
    let (on_time, early) = (audit(&run), audit(&early));
    assert_eq!(on_time["harness"], "pi-agent");
    assert!(rules(&on_time).is_empty(), "{on_time}");
    assert_eq!(rules(&early), ["compact-trigger"], "{early}");
}
