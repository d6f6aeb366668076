//! Shared helpers for the integration tests.
#![allow(dead_code)]

use std::path::{Path, PathBuf};

use assert_cmd::Command;

/// The `ctxj` binary with a hermetic environment.
pub fn ctxj() -> Command {
    let mut c = Command::cargo_bin("ctxj").expect("binary built");
    c.env_remove("CTXJ_ROOT").env_remove("NO_COLOR").env_remove("CLICOLOR_FORCE").env("COLUMNS", "200");
    c
}

/// The repository root.
pub fn repo() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR"))
}

/// A bundled sample journal directory.
pub fn sample(name: &str) -> PathBuf {
    repo().join("sample-journals").join(name)
}

/// Names of every bundled sample (directories holding journal.jsonl).
pub fn samples() -> Vec<String> {
    let mut v: Vec<String> = std::fs::read_dir(repo().join("sample-journals"))
        .map(|rd| {
            rd.filter_map(|e| e.ok())
                .filter(|e| e.path().join("journal.jsonl").is_file())
                .map(|e| e.file_name().to_string_lossy().into_owned())
                .collect()
        })
        .unwrap_or_default();
    v.sort();
    v
}

/// `../shared/samples`, when present; tests that need it print a notice and return otherwise.
pub fn shared_samples() -> Option<PathBuf> {
    let p = repo().join("..").join("shared").join("samples");
    if p.is_dir() {
        Some(p)
    } else {
        eprintln!("notice: ../shared/samples is absent; skipping");
        None
    }
}

/// Writes `journal.jsonl` with `content` into a fresh temporary session directory.
pub fn session_with(content: &str) -> tempfile::TempDir {
    let d = tempfile::tempdir().unwrap();
    std::fs::write(d.path().join("journal.jsonl"), content).unwrap();
    d
}

/// Every file under `dir` with its bytes and mtime, for "never writes" checks.
pub fn snapshot(dir: &Path) -> Vec<(PathBuf, Vec<u8>, std::time::SystemTime)> {
    let mut out = Vec::new();
    let mut stack = vec![dir.to_path_buf()];
    while let Some(d) = stack.pop() {
        for e in std::fs::read_dir(&d).unwrap().flatten() {
            let p = e.path();
            let m = std::fs::symlink_metadata(&p).unwrap();
            if m.is_dir() {
                stack.push(p);
            } else if m.is_file() {
                out.push((p.clone(), std::fs::read(&p).unwrap(), m.modified().unwrap()));
            }
        }
    }
    out.sort_by(|a, b| a.0.cmp(&b.0));
    out
}
