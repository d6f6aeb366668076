//! Shared helpers for the integration tests.
#![allow(dead_code)]

use std::path::{Path, PathBuf};

use assert_cmd::Command;

/// The `ctxj` binary with a hermetic environment (see [`hermetic`]).
pub fn ctxj() -> Command {
    let mut c = std::process::Command::new(env!("CARGO_BIN_EXE_ctxj"));
    hermetic(&mut c);
    Command::from_std(c)
}

/// Gives a process the one environment every test process runs in: the user's is cleared
/// (`CTXJ_ROOT`, `NO_COLOR`, `CLICOLOR_FORCE`, `CTXJ_NO_MMAP`, `LANG`, …), `PATH` is kept (to find
/// python3, chromium, bash), `TZ=UTC`, `HOME` is an empty folder under the target dir,
/// `COLUMNS=200`, python writes no `__pycache__` into the repository and no persistent token memo
/// is kept (`CTXJ_NO_CACHE=1`). Output goes to a pipe, so colour stays off unless a test asks for it.
pub fn hermetic(c: &mut std::process::Command) -> &mut std::process::Command {
    c.env_clear()
        .env("PATH", std::env::var_os("PATH").unwrap_or_default())
        .env("TZ", "UTC")
        .env("HOME", home())
        .env("COLUMNS", "200")
        .env("PYTHONDONTWRITEBYTECODE", "1")
        // No persistent token memo: each run counts from scratch (tests/cli/memo.rs turns it on).
        .env("CTXJ_NO_CACHE", "1")
}

/// The test processes' `HOME`: an empty folder of this test binary's own (never the user's).
fn home() -> &'static Path {
    static HOME: std::sync::OnceLock<PathBuf> = std::sync::OnceLock::new();
    HOME.get_or_init(|| {
        let h = PathBuf::from(env!("CARGO_TARGET_TMPDIR")).join("ctxj-test-home");
        std::fs::create_dir_all(&h).expect("create the test HOME");
        h
    })
}

/// Why a test input is missing, as a panic: reached when a test that needs it runs anyway
/// (under `CI=true`, where build.rs never lets it be ignored, or with `--include-ignored`).
fn missing(what: &str, install: &str) -> ! {
    panic!(
        "{what} is missing: this test needs it ({install}). Outside CI the test is ignored when build.rs \
         finds it absent (after installing it, `touch build.rs` to probe again); under CI=true it must exist."
    )
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

/// The real transcripts: `$CTXJ_SHARED_SAMPLES` (e.g. when running from a worktree), else
/// `../shared/samples`. Tests using it carry
/// `#[cfg_attr(not(ctxj_has_samples), ignore = "needs ../shared/samples (fails under CI=true; once it is there, `touch build.rs`)")]`.
pub fn shared_samples() -> PathBuf {
    let p = std::env::var_os("CTXJ_SHARED_SAMPLES")
        .map(PathBuf::from)
        .unwrap_or_else(|| repo().join("..").join("shared").join("samples"));
    if !p.is_dir() {
        missing(
            &format!("{} (the shared samples)", p.display()),
            "set CTXJ_SHARED_SAMPLES or check out shared/ beside the repo",
        );
    }
    p
}

/// The second set of real transcripts, in each agent's home layout, with ccusage 20.0.24's output
/// in `ccusage/`: `$CTXJ_SHARED_CORPUS`, else `../shared/corpus`. Tests using it carry
/// `#[cfg_attr(not(ctxj_has_corpus), ignore = "needs ../shared/corpus (fails under CI=true; once it is there, `touch build.rs`)")]`.
pub fn shared_corpus() -> PathBuf {
    let p = std::env::var_os("CTXJ_SHARED_CORPUS")
        .map(PathBuf::from)
        .unwrap_or_else(|| repo().join("..").join("shared").join("corpus"));
    if !p.is_dir() {
        missing(
            &format!("{} (the shared corpus)", p.display()),
            "set CTXJ_SHARED_CORPUS or check out shared/ beside the repo",
        );
    }
    p
}

/// `python3`, checked to run. Tests using it carry
/// `#[cfg_attr(not(ctxj_has_python), ignore = "needs python3 (fails under CI=true; once it is there, `touch build.rs`)")]`.
pub fn python3() -> &'static str {
    let ok = hermetic(&mut std::process::Command::new("python3"))
        .arg("--version")
        .output()
        .is_ok_and(|o| o.status.success());
    if !ok {
        missing("python3", "apt-get install -y python3");
    }
    "python3"
}

/// Chromium: `$CTXJ_BROWSER`, else `chromium` or `chromium-browser` on `PATH`. Tests using it carry
/// `#[cfg_attr(not(ctxj_has_chromium), ignore = "needs chromium (fails under CI=true; once it is there, `touch build.rs`)")]`.
pub fn chromium() -> PathBuf {
    let found = std::env::var_os("CTXJ_BROWSER").map(PathBuf::from).or_else(|| {
        let path = std::env::var_os("PATH")?;
        std::env::split_paths(&path)
            .flat_map(|d| ["chromium", "chromium-browser"].map(|b| d.join(b)))
            .find(|p| p.is_file())
    });
    found.unwrap_or_else(|| missing("chromium", "apt-get install -y chromium"))
}

/// Every file under `dir` (recursively) whose extension is `ext`, sorted.
pub fn files_under(dir: &Path, ext: &str) -> Vec<PathBuf> {
    let mut v: Vec<PathBuf> = walkdir::WalkDir::new(dir)
        .into_iter()
        .flatten()
        .filter(|e| e.file_type().is_file() && e.path().extension().is_some_and(|x| x == ext))
        .map(|e| e.into_path())
        .collect();
    v.sort();
    v
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

/// A Claude Code transcript of `n` billed calls with `u64::MAX` in every usage field (what
/// `scripts/hostile-gen cc-max-usage` writes), for the arithmetic-extremes tests.
pub fn cc_max_usage_transcript(n: usize) -> String {
    let max = u64::MAX;
    let mut t = String::from(
        r#"{"type":"user","uuid":"u0","parentUuid":null,"sessionId":"s","timestamp":"2026-01-01T00:00:00Z","message":{"role":"user","content":"hi"}}"#,
    );
    t.push('\n');
    for k in 0..n {
        let parent = if k == 0 { "u0".to_string() } else { format!("a{}", k - 1) };
        t.push_str(&format!(
            r#"{{"type":"assistant","uuid":"a{k}","parentUuid":"{parent}","sessionId":"s","requestId":"r{k}","timestamp":"2026-01-01T00:00:{:02}Z","message":{{"id":"m{k}","model":"claude-sonnet-4-5","role":"assistant","content":[{{"type":"text","text":"ok"}}],"usage":{{"input_tokens":{max},"output_tokens":{max},"cache_creation_input_tokens":{max},"cache_read_input_tokens":{max},"cache_creation":{{"ephemeral_1h_input_tokens":{max}}}}}}}}}"#,
            k % 60
        ));
        t.push('\n');
    }
    t
}

/// An integer attribute of an OTLP span as a receiver handed it back (`tests/cli/phoenix.rs`,
/// `tests/cli/otlp_receiver.rs`); a missing one fails the test naming it.
pub fn span_int(span: &serde_json::Value, key: &str) -> u64 {
    span["attributes"][key].as_u64().unwrap_or_else(|| panic!("{key} missing: {span}"))
}

/// `usage --json`'s token totals: input, cache read, cache write, output.
pub fn usage_tokens(total: &serde_json::Value) -> [u64; 4] {
    ["input", "cache_read", "cache_creation", "output"]
        .map(|k| total[k].as_u64().unwrap_or_else(|| panic!("no {k} in {total}")))
}
