//! Conformance against an independent reading of the spec: `scripts/conformance/check.py` runs
//! the Python reference implementation (`ref.py`, written from journal-v1.md and strategies.md
//! alone) and compares its canonical request bytes with `ctxj show --json`, recorded and replayed,
//! on every turn. Needs `python3`: ignored when build.rs finds none, and failing under `CI=true`.

use std::path::{Path, PathBuf};
use std::process::Command;

use crate::common;

fn check(session: &Path, extra: &[&str]) {
    let exe = env!("CARGO_BIN_EXE_ctxj");
    let out = common::hermetic(&mut Command::new(common::python3()))
        .arg(common::repo().join("scripts/conformance/check.py"))
        .arg("--ctxj")
        .arg(exe)
        .args(extra)
        .arg(session)
        .output()
        .expect("run check.py");
    let stdout = String::from_utf8_lossy(&out.stdout);
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(out.status.success(), "ctxj diverges from the reference on {}:\n{stdout}\n{stderr}", session.display());
    assert!(stdout.contains(" 0 divergences"), "unexpected check.py output:\n{stdout}");
}

fn edge(name: &str) -> PathBuf {
    common::repo().join("tests/data/conformance").join(name)
}

#[test]
#[cfg_attr(not(ctxj_has_python), ignore = "needs python3 (fails under CI=true; once it is there, `touch build.rs`)")]
fn sample_bugfix_todo() {
    check(&common::sample("bugfix-todo"), &["--sha-fatal"]);
}

#[test]
#[cfg_attr(not(ctxj_has_python), ignore = "needs python3 (fails under CI=true; once it is there, `touch build.rs`)")]
fn sample_compaction() {
    check(&common::sample("compaction"), &["--sha-fatal"]);
}

#[test]
#[cfg_attr(not(ctxj_has_python), ignore = "needs python3 (fails under CI=true; once it is there, `touch build.rs`)")]
fn sample_long_elision() {
    check(&common::sample("long-elision"), &["--sha-fatal"]);
}

#[test]
#[cfg_attr(not(ctxj_has_python), ignore = "needs python3 (fails under CI=true; once it is there, `touch build.rs`)")]
fn sample_spill_attach() {
    check(&common::sample("spill-attach"), &["--sha-fatal"]);
}

#[test]
fn every_sample_is_covered() {
    let mut names = common::samples();
    names.sort();
    assert_eq!(
        names,
        ["bugfix-todo", "compaction", "long-elision", "spill-attach"],
        "add a conformance test for the new sample"
    );
}

#[test]
#[cfg_attr(not(ctxj_has_python), ignore = "needs python3 (fails under CI=true; once it is there, `touch build.rs`)")]
fn edge_unicode_markers() {
    check(&edge("unicode-markers"), &[]);
}

#[test]
#[cfg_attr(not(ctxj_has_python), ignore = "needs python3 (fails under CI=true; once it is there, `touch build.rs`)")]
fn edge_clears() {
    check(&edge("clears"), &[]);
}

#[test]
#[cfg_attr(not(ctxj_has_python), ignore = "needs python3 (fails under CI=true; once it is there, `touch build.rs`)")]
fn edge_mirror_late_service() {
    check(&edge("mirror-late-service"), &[]);
}

#[test]
#[cfg_attr(not(ctxj_has_python), ignore = "needs python3 (fails under CI=true; once it is there, `touch build.rs`)")]
fn edge_chain_then_mirror() {
    check(&edge("chain-then-mirror"), &[]);
}

#[test]
#[cfg_attr(not(ctxj_has_python), ignore = "needs python3 (fails under CI=true; once it is there, `touch build.rs`)")]
fn edge_strategies() {
    check(&edge("strategies-edges"), &[]);
}

#[test]
#[cfg_attr(not(ctxj_has_python), ignore = "needs python3 (fails under CI=true; once it is there, `touch build.rs`)")]
fn edge_lines() {
    check(&edge("lines-edges"), &[]);
}

#[test]
#[cfg_attr(not(ctxj_has_python), ignore = "needs python3 (fails under CI=true; once it is there, `touch build.rs`)")]
fn check_py_reports_a_divergence() {
    // The harness itself must be able to fail: a fake ctxj that prints `[]` for every request.
    let dir = tempfile::tempdir().unwrap();
    let fake = dir.path().join("fake-ctxj");
    std::fs::write(&fake, "#!/bin/sh\necho '[]'\n").unwrap();
    #[cfg(unix)]
    {
        use std::os::unix::fs::PermissionsExt;
        std::fs::set_permissions(&fake, std::fs::Permissions::from_mode(0o755)).unwrap();
    }
    let out = common::hermetic(&mut Command::new(common::python3()))
        .arg(common::repo().join("scripts/conformance/check.py"))
        .arg("--ctxj")
        .arg(&fake)
        .args(["--strategy", "baseline"])
        .arg(common::sample("bugfix-todo"))
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(1), "{}", String::from_utf8_lossy(&out.stdout));
    assert!(String::from_utf8_lossy(&out.stdout).contains("DIVERGENCE"));
}

#[test]
#[cfg_attr(not(ctxj_has_python), ignore = "needs python3 (fails under CI=true; once it is there, `touch build.rs`)")]
fn edge_summary_and_pause() {
    check(&edge("summary-and-pause"), &[]);
}

#[test]
#[cfg_attr(not(ctxj_has_python), ignore = "needs python3 (fails under CI=true; once it is there, `touch build.rs`)")]
fn edge_mirror_edits() {
    check(&edge("mirror-edits"), &[]);
}

#[test]
#[cfg_attr(not(ctxj_has_python), ignore = "needs python3 (fails under CI=true; once it is there, `touch build.rs`)")]
fn edge_pause_rule() {
    check(&edge("pause-rule"), &[]);
}
