//! The persistent token memo (issue 20): a second run counts nothing it counted before, gives the
//! same figures, `--no-cache` / `CTXJ_NO_CACHE` turn it off, a damaged file is ignored, and it is
//! never written inside a session directory.

use std::path::Path;

use serde_json::Value;

use crate::common::{ctxj, sample, snapshot};

const STRATS: [&str; 6] = ["--strategy", "recorded", "--strategy", "baseline", "--strategy", "truncate-200"];

/// `ctxj cache <bugfix-todo> --json` with the memo in `dir` (or none with `extra` = --no-cache).
fn cache_run(dir: &Path, extra: &[&str]) -> Value {
    let out = ctxj()
        .env_remove("CTXJ_NO_CACHE")
        .env("CTXJ_CACHE_DIR", dir)
        .arg("cache")
        .arg(sample("bugfix-todo"))
        .args(STRATS)
        .arg("--json")
        .args(extra)
        .output()
        .unwrap();
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
    serde_json::from_slice(&out.stdout).unwrap()
}

fn memo_file(dir: &Path) -> std::path::PathBuf {
    dir.join("tokens").join("o200k_base.v2.bin")
}

/// The figures without the memo's own counters.
fn figures(v: &Value) -> Value {
    let mut v = v.clone();
    v.as_object_mut().unwrap().remove("memo");
    v
}

#[test]
fn a_second_run_tokenizes_nothing_and_agrees() {
    let dir = tempfile::tempdir().unwrap();
    let cold = cache_run(dir.path(), &[]);
    assert!(cold["memo"]["misses"].as_u64().unwrap() > 0);
    assert_eq!(cold["memo"]["stored"], 0);
    assert!(memo_file(dir.path()).is_file(), "the first run saved its counts");
    let warm = cache_run(dir.path(), &[]);
    assert_eq!(warm["memo"]["misses"], 0, "{}", warm["memo"]);
    assert_eq!(warm["memo"]["bytes_tokenized"], 0);
    assert_eq!(warm["memo"]["stored"], cold["memo"]["misses"], "each text counted cold is answered from disk once");
    assert_eq!(warm["memo"]["hits"], cold["memo"]["hits"]);
    assert_eq!(figures(&warm), figures(&cold));
    // A warm run adds nothing, so it leaves the file alone.
    let before = snapshot(dir.path());
    cache_run(dir.path(), &[]);
    assert_eq!(snapshot(dir.path()), before);
}

#[test]
fn no_cache_neither_reads_nor_writes() {
    let dir = tempfile::tempdir().unwrap();
    let off = cache_run(dir.path(), &["--no-cache"]);
    assert!(!dir.path().join("tokens").exists(), "--no-cache wrote a memo");
    cache_run(dir.path(), &[]);
    let again = cache_run(dir.path(), &["--no-cache"]);
    assert_eq!(again["memo"], off["memo"], "--no-cache read the memo");
    // The environment variable does the same.
    let out = ctxj().env("CTXJ_CACHE_DIR", dir.path()).arg("tokens").arg(sample("compaction")).output().unwrap();
    assert!(out.status.success());
    assert!(!dir.path().join("tokens").join("cl100k_base.v2.bin").exists());
    assert_eq!(std::fs::read_dir(dir.path().join("tokens")).unwrap().count(), 1);
}

#[test]
fn a_damaged_memo_is_ignored_and_replaced() {
    let dir = tempfile::tempdir().unwrap();
    let cold = cache_run(dir.path(), &[]);
    let f = memo_file(dir.path());
    let mut bytes = std::fs::read(&f).unwrap();
    bytes.truncate(bytes.len() - 7);
    std::fs::write(&f, &bytes).unwrap();
    let again = cache_run(dir.path(), &[]);
    assert_eq!(again["memo"], cold["memo"], "a torn file counts as no file");
    assert_eq!(figures(&again), figures(&cold));
    assert_eq!(cache_run(dir.path(), &[])["memo"]["misses"], 0, "the torn file was replaced");
    std::fs::write(&f, b"garbage").unwrap();
    assert_eq!(figures(&cache_run(dir.path(), &[])), figures(&cold));
}

#[test]
fn never_inside_a_session_directory() {
    let session = tempfile::tempdir().unwrap();
    std::fs::copy(sample("bugfix-todo").join("journal.jsonl"), session.path().join("journal.jsonl")).unwrap();
    let before = snapshot(session.path());
    let out = ctxj()
        .env_remove("CTXJ_NO_CACHE")
        .env("CTXJ_CACHE_DIR", session.path().join("cache"))
        .arg("tokens")
        .arg(session.path())
        .output()
        .unwrap();
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(err.contains("warning: token memo not used") && err.contains("inside the session directory"), "{err}");
    assert_eq!(snapshot(session.path()), before, "wrote into the session directory");
}

#[test]
fn the_default_location_is_the_user_cache_folder() {
    let home = tempfile::tempdir().unwrap();
    let out = ctxj()
        .env_remove("CTXJ_NO_CACHE")
        .env("HOME", home.path())
        .arg("tokens")
        .arg(sample("bugfix-todo"))
        .output()
        .unwrap();
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
    assert!(memo_file(&home.path().join(".cache").join("ctxj")).is_file());
    let xdg = tempfile::tempdir().unwrap();
    let out = ctxj()
        .env_remove("CTXJ_NO_CACHE")
        .env("XDG_CACHE_HOME", xdg.path())
        .arg("tokens")
        .arg(sample("bugfix-todo"))
        .output()
        .unwrap();
    assert!(out.status.success());
    assert!(memo_file(&xdg.path().join("ctxj")).is_file());
}
