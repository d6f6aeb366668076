//! Issue 28 item 1: every billed Codex `token_count` reaches the request it bills, whatever the
//! rollout version writes first. What `cache` bills from the imported session (`recorded`) must
//! equal what `usage` counts from the raw lines with ccusage's rules, token for token and to the
//! cent, on the synthetic rollouts of three versions (`tests/data/import/codex-versions/`), the
//! bundled ones, `../shared/samples/codex` and `../shared/corpus/codex` (there also against
//! ccusage's own output); and every imported rollout still validates (request hashes included).

use std::path::{Path, PathBuf};

use serde_json::Value;

use crate::common::*;

fn versions() -> PathBuf {
    repo().join("tests/data/import/codex-versions")
}

fn json(args: &[&str], file: &Path) -> Value {
    let out = ctxj().args(args).arg(file).output().unwrap();
    assert!(out.status.success(), "{args:?} {}: {}", file.display(), String::from_utf8_lossy(&out.stderr));
    serde_json::from_slice(&out.stdout).unwrap()
}

fn rollouts(dir: &Path) -> Vec<PathBuf> {
    let v = files_under(dir, "jsonl");
    assert!(!v.is_empty(), "no rollout under {}", dir.display());
    v
}

/// `cache --json` `recorded` against `usage --json` totals for one rollout; returns the cost.
fn billed_equals_counted(f: &Path) -> f64 {
    let usage = &json(&["usage", "--json"], f)["totals"];
    let cache = json(&["cache", "--json"], f);
    let rec = &cache["recorded"];
    let n = |v: &Value| v.as_u64().unwrap_or(0);
    let name = f.display();
    assert_eq!(n(&rec["input"]), n(&usage["input"]), "{name}: input");
    assert_eq!(n(&rec["cache_read"]), n(&usage["cache_read"]), "{name}: cache read");
    assert_eq!(n(&rec["output"]), n(&usage["output"]), "{name}: output");
    let ours = rec["cost"].as_f64().unwrap_or(0.0);
    let counted = usage["cost_usd"].as_f64().unwrap_or(0.0);
    assert!((ours - counted).abs() < 1e-9, "{name}: billed {ours} vs counted {counted}");
    ours
}

fn imports_and_validates(files: &[PathBuf]) {
    let out = tempfile::tempdir().unwrap();
    for (k, f) in files.iter().enumerate() {
        let dest = out.path().join(format!("s{k}"));
        ctxj().arg("import").arg(f).arg("--out").arg(&dest).assert().success();
        let v = ctxj().args(["validate", "--json"]).arg(&dest).output().unwrap();
        assert!(v.status.success(), "{}: {}", f.display(), String::from_utf8_lossy(&v.stdout));
    }
}

#[test]
fn every_rollout_version_bills_each_token_count_once() {
    let files = rollouts(&versions());
    for f in &files {
        billed_equals_counted(f);
    }
    imports_and_validates(&files);
    for f in rollouts(&repo().join("sample-journals/transcripts/codex")) {
        billed_equals_counted(&f);
    }
}

#[test]
fn usage_first_rollouts_of_0_40_pair_every_call() {
    // Before the pairing by turn, none of the five calls got its usage (regression, issue 28).
    let f = files_under(&versions(), "jsonl").into_iter().find(|p| p.to_string_lossy().contains("0040.jsonl")).unwrap();
    let rec = &json(&["cache", "--json"], &f)["recorded"];
    assert_eq!(rec["turns"], 5);
    assert_eq!(rec["input"], 17_700 - 13_568);
    let report =
        json(&["import", "--json", "--out", tempfile::tempdir().unwrap().path().join("s").to_str().unwrap()], &f);
    let skipped = &report["report"]["skipped"];
    assert!(skipped.get("response without a token_count (turn kept, no usage)").is_none(), "{skipped}");
    assert_eq!(skipped["token_count repeating the previous total"], 1, "{skipped}");
}

#[test]
fn a_subagent_thread_of_0_142_bills_its_first_call() {
    let f = files_under(&versions(), "jsonl").into_iter().find(|p| p.to_string_lossy().contains("0142.jsonl")).unwrap();
    let rec = &json(&["cache", "--json"], &f)["recorded"];
    assert_eq!(rec["turns"], 3, "{rec}");
    assert_eq!(rec["input"], 5_200 + 380 + 296, "every call's uncached input");
}

#[test]
fn a_rollout_without_token_counts_keeps_its_calls_and_says_why_they_bill_nothing() {
    let f = files_under(&versions(), "jsonl").into_iter().find(|p| p.to_string_lossy().contains("00d0.jsonl")).unwrap();
    let report =
        json(&["import", "--json", "--out", tempfile::tempdir().unwrap().path().join("s").to_str().unwrap()], &f);
    assert_eq!(report["report"]["skipped"]["response without a token_count (turn kept, no usage)"], 2, "{report}");
    assert_eq!(billed_equals_counted(&f), 0.0);
}

#[test]
#[cfg_attr(
    not(ctxj_has_samples),
    ignore = "needs ../shared/samples (fails under CI=true; once it is there, `touch build.rs`)"
)]
fn the_shared_codex_samples_bill_what_usage_counts() {
    let files = rollouts(&shared_samples().join("codex"));
    for f in &files {
        billed_equals_counted(f);
    }
    imports_and_validates(&files);
}

#[test]
#[cfg_attr(
    not(ctxj_has_corpus),
    ignore = "needs ../shared/corpus (fails under CI=true; once it is there, `touch build.rs`)"
)]
fn the_corpus_codex_rollouts_bill_what_ccusage_bills_to_the_cent() {
    let corpus = shared_corpus();
    let theirs: Value =
        serde_json::from_slice(&std::fs::read(corpus.join("ccusage/codex-session.json")).unwrap()).unwrap();
    let files = rollouts(&corpus.join("codex"));
    for f in &files {
        let ours = billed_equals_counted(f);
        let stem = f.file_stem().unwrap().to_string_lossy().into_owned();
        let row = theirs["sessions"].as_array().unwrap().iter().find(|s| s["sessionFile"] == stem.as_str());
        let cost = row.unwrap_or_else(|| panic!("{stem}: not in ccusage's output"))["costUSD"].as_f64().unwrap();
        assert_eq!((ours * 100.0).round(), (cost * 100.0).round(), "{stem}: {ours} vs ccusage {cost}");
    }
    imports_and_validates(&files);
}

/// Regression (unseen sweep 2, Codex 0.119 subagent threads): the parent's `token_count`s a
/// forked thread's rollout starts with were billed to the thread (2.5× what ccusage bills).
#[test]
fn regression_forked_thread_billed_the_parents_copied_token_counts() {
    let f = files_under(&versions(), "jsonl").into_iter().find(|p| p.to_string_lossy().contains("f04c01")).unwrap();
    let rec = &json(&["cache", "--json"], &f)["recorded"];
    assert_eq!(rec["input"], 800 + 900, "only the thread's own calls: {rec}");
    let report =
        json(&["import", "--json", "--out", tempfile::tempdir().unwrap().path().join("s").to_str().unwrap()], &f);
    let skipped = &report["report"]["skipped"];
    assert_eq!(skipped["token_count copied from the parent thread (forked history)"], 3, "{skipped}");
}
