//! The experiment manifest (`ctxj experiment`, `report --experiment`): arbitrary text through
//! `Manifest::parse`, and a manifest that parses through the whole `experiment::run` in a small
//! fixture folder (three runs of three formats, a `latest -> .` and an `up -> ..` link, a name that
//! is not UTF-8). No panic (overflow checks on); each arm's runs are distinct files (deduplicated
//! by identity, issue 31), every run belongs to an arm, the resamples never exceed the asked, the
//! result serialises.
//!
//! Paths that leave the fixture (absolute, `~`, `..`) are not run — they name the fuzzing
//! machine's files, not the manifest's logic — and a manifest with no `resamples` gets 100, so one
//! execution stays in milliseconds (the bound on resamples × runs has its own unit test).
#![no_main]

use std::path::PathBuf;
use std::sync::OnceLock;

use ctxj_core::experiment::{self, Manifest, Options};
use libfuzzer_sys::fuzz_target;

fn fixture() -> &'static PathBuf {
    static DIR: OnceLock<PathBuf> = OnceLock::new();
    DIR.get_or_init(|| {
        let d = std::env::temp_dir().join(format!("ctxj-fuzz-manifest-{}", std::process::id()));
        let _ = std::fs::remove_dir_all(&d);
        let runs = d.join("runs");
        for (dir, bytes) in [
            ("a-1", &include_bytes!("../../tests/data/report/hostile/journal.jsonl")[..]),
            ("a-2", &include_bytes!("../../tests/data/hostile/result-unknown-call/journal.jsonl")[..]),
        ] {
            std::fs::create_dir_all(runs.join(dir)).unwrap();
            std::fs::write(runs.join(dir).join("journal.jsonl"), bytes).unwrap();
        }
        let codex = include_bytes!(
            "../../tests/data/import/codex-versions/rollout-2026-10-01T12-00-00-019d0000-0000-7000-8000-0000000000d0.jsonl"
        );
        std::fs::write(runs.join("b-1.jsonl"), codex).unwrap();
        #[cfg(unix)]
        {
            use std::os::unix::ffi::OsStrExt;
            std::os::unix::fs::symlink(".", runs.join("latest")).unwrap();
            std::os::unix::fs::symlink("..", runs.join("up")).unwrap();
            let odd = std::ffi::OsStr::from_bytes(b"b-\xff.jsonl");
            std::fs::write(runs.join(odd), codex).unwrap();
        }
        d
    })
}

fn stays_inside(p: &str) -> bool {
    !p.starts_with(['/', '~', '\\']) && !p.contains("..") && !p.contains(':') && !p.contains('\0')
}

fuzz_target!(|data: &[u8]| {
    let Ok(text) = std::str::from_utf8(data) else { return };
    let m = match Manifest::parse("fuzz.toml", text) {
        Ok(m) => m,
        Err(e) => {
            let _ = e.to_string();
            return;
        }
    };
    assert!(m.arms.iter().any(|a| a.label == m.reference()));
    let inside = m.arms.iter().flat_map(|a| &a.sessions).all(|s| stays_inside(s))
        && m.prices.as_ref().is_none_or(|p| stays_inside(&p.to_string_lossy()));
    if !inside || m.resamples.is_some_and(|r| r > 1000) {
        return;
    }
    let text = if m.resamples.is_none() { format!("resamples = 100\n{text}") } else { text.to_string() };
    if Manifest::parse("fuzz.toml", &text).is_err() {
        return;
    }
    let path = fixture().join("experiment.toml");
    std::fs::write(&path, &text).unwrap();
    match experiment::run(&path, &Options::default()) {
        Ok(x) => {
            assert!(x.resamples <= m.resamples.unwrap_or(100));
            for arm in &m.arms {
                let runs: Vec<_> = x.runs.iter().filter(|r| r.arm == arm.label).collect();
                let ids: Vec<_> =
                    runs.iter().map(|r| experiment::manifest::identity(&fixture().join(&r.session))).collect();
                for (i, id) in ids.iter().enumerate() {
                    assert!(id.is_none() || !ids[..i].contains(id), "arm {:?}: a run counted twice", arm.label);
                }
            }
            assert!(x.runs.iter().all(|r| m.arms.iter().any(|a| a.label == r.arm)));
            let _ = serde_json::to_string(&x).unwrap();
        }
        Err(e) => {
            let _ = e.to_string();
        }
    }
});
