//! Performance issue: the hidden `synth` generator as a command.

use crate::common::*;

#[test]
fn synth_writes_a_journal_whose_last_request_hash_matches_show() {
    let d = tempfile::tempdir().unwrap();
    let out = d.path().join("s");
    ctxj().args(["synth", "--turns", "60", "--seed", "5", "--json", "--out"]).arg(&out).assert().success();
    let journal = std::fs::read_to_string(out.join("journal.jsonl")).unwrap();
    let last = journal.lines().rev().find(|l| l.contains("\"kind\":\"assistant\"")).unwrap();
    let v: serde_json::Value = serde_json::from_str(last).unwrap();
    let recorded = v["prompt_sha256"].as_str().unwrap().to_string();
    let shown = ctxj().args(["show", "--at", "turn", "60", "--json"]).arg(&out).output().unwrap();
    assert!(shown.status.success());
    let body = &shown.stdout[..shown.stdout.len() - 1];
    assert_eq!(ctxj_core::projection::block::sha256_hex(body), recorded);
}

#[test]
fn synth_refuses_a_non_empty_directory_and_leaves_it_alone() {
    let d = tempfile::tempdir().unwrap();
    std::fs::write(d.path().join("keep.txt"), "x").unwrap();
    let before = snapshot(d.path());
    ctxj()
        .args(["synth", "--turns", "5", "--out"])
        .arg(d.path())
        .assert()
        .code(2)
        .stderr(predicates::str::contains("not an empty directory"));
    assert_eq!(snapshot(d.path()), before);
}

#[test]
fn synth_journals_validate_clean() {
    let d = tempfile::tempdir().unwrap();
    for seed in [6, 9] {
        let out = d.path().join(format!("s{seed}"));
        ctxj().args(["synth", "--turns", "400", "--seed", &seed.to_string(), "--out"]).arg(&out).assert().success();
        ctxj().arg("validate").arg(&out).assert().success().stdout(predicates::str::contains("0 errors, 0 warnings"));
    }
}

#[test]
fn synth_mirror_heavy_journals_validate_clean() {
    // `--mirrors M` (issue 20's linear-mirror benchmark): M commits, drafts checked by validate.
    let d = tempfile::tempdir().unwrap();
    let out = d.path().join("m");
    let made = ctxj()
        .args(["synth", "--turns", "240", "--seed", "5", "--mirrors", "40", "--size-mb", "1", "--json", "--out"])
        .arg(&out)
        .output()
        .unwrap();
    assert!(made.status.success());
    let stats: serde_json::Value = serde_json::from_slice(&made.stdout).unwrap();
    let commits = stats["mirrors_accepted"].as_u64().unwrap() + stats["mirrors_rejected"].as_u64().unwrap();
    assert!((36..=40).contains(&commits), "{stats}");
    ctxj().arg("validate").arg(&out).assert().success().stdout(predicates::str::contains("0 errors, 0 warnings"));
}
