//! The bundled sample journals and the reader's edge cases, end to end through the binary.
//!
//! The turn hashes are recomputed here with `sha2` from the bytes `show --json` prints and
//! compared with the `prompt_sha256` read straight from each raw journal line, so a bug shared by
//! the generator and the projection code cannot hide.

use std::path::{Path, PathBuf};

use serde_json::Value;
use sha2::{Digest, Sha256};

use crate::common::*;

#[allow(dead_code, clippy::all)]
#[path = "../../examples/gen_samples.rs"]
mod gen_samples;

/// The samples the issue asks for; every one must be present.
const EXPECTED: &[&str] = &["bugfix-todo", "long-elision"];

fn journal_lines(dir: &Path) -> Vec<Value> {
    let text = std::fs::read_to_string(dir.join("journal.jsonl")).unwrap();
    text.lines().filter(|l| !l.trim().is_empty()).map(|l| serde_json::from_str(l).unwrap()).collect()
}

fn hex(bytes: &[u8]) -> String {
    bytes.iter().map(|b| format!("{b:02x}")).collect()
}

fn all_samples() -> Vec<String> {
    let names = samples();
    for e in EXPECTED {
        assert!(names.iter().any(|n| n == e), "sample-journals/{e} is missing (found {names:?})");
    }
    names
}

#[test]
fn every_turn_of_every_sample_hashes_to_its_prompt_sha256() {
    let mut checked = 0;
    for name in all_samples() {
        let dir = sample(&name);
        let mut turn = 0;
        for rec in journal_lines(&dir) {
            if rec["kind"] != "assistant" {
                continue;
            }
            turn += 1;
            let want = rec["prompt_sha256"].as_str().unwrap_or_else(|| panic!("{name} turn {turn}: no prompt_sha256"));
            let usage = &rec["usage"];
            for f in ["prompt_tokens", "cached_tokens", "completion_tokens"] {
                assert!(usage[f].is_u64(), "{name} turn {turn}: usage.{f} missing");
            }
            assert!(usage["cached_tokens"].as_u64() <= usage["prompt_tokens"].as_u64());
            let out = ctxj().args(["show", "--at", "turn", &turn.to_string(), "--json"]).arg(&dir).output().unwrap();
            assert!(out.status.success(), "{name} turn {turn}: {}", String::from_utf8_lossy(&out.stderr));
            let body = out.stdout.strip_suffix(b"\n").expect("--json ends with a newline");
            assert!(!body.ends_with(b"\n"), "exactly one trailing newline");
            assert_eq!(hex(&Sha256::digest(body)), want, "{name} turn {turn}");
            checked += 1;
        }
        assert!(turn > 0, "{name} has no turns");
    }
    assert!(checked >= 10);
}

#[test]
fn show_and_log_work_on_every_sample() {
    for name in all_samples() {
        let dir = sample(&name);
        let last = journal_lines(&dir).len();
        for args in [vec!["show"], vec!["show", "--expand"], vec!["log"], vec!["log", "--json"]] {
            let out = ctxj().args(&args).arg(&dir).output().unwrap();
            assert!(out.status.success(), "{name} {args:?}: {}", String::from_utf8_lossy(&out.stderr));
            assert!(!out.stdout.is_empty());
            assert!(
                out.stderr.is_empty(),
                "{name} {args:?}: unexpected stderr {}",
                String::from_utf8_lossy(&out.stderr)
            );
        }
        let log = String::from_utf8(ctxj().arg("log").arg(&dir).output().unwrap().stdout).unwrap();
        for kind in ["session", "system", "user", "assistant", "result"] {
            assert!(log.contains(kind), "{name}: log lists no {kind} record");
        }
        ctxj().args(["show", "--at", "rev", &last.to_string()]).arg(&dir).assert().success();
        ctxj()
            .args(["show", "--at", "rev", &(last + 1).to_string()])
            .arg(&dir)
            .assert()
            .code(2)
            .stderr(predicates::str::contains(format!("revs 1..{last}")));
    }
}

#[test]
fn rev_past_the_end_is_exit_2() {
    ctxj().args(["show", "--at", "rev", "100000"]).arg(sample("bugfix-todo")).assert().code(2);
    ctxj().args(["show", "--at", "turn", "100000"]).arg(sample("bugfix-todo")).assert().code(2);
}

/// A copy of a sample's journal with `edit` applied to its text, in a fresh session dir.
fn edited(name: &str, edit: impl FnOnce(String) -> String) -> tempfile::TempDir {
    let text = std::fs::read_to_string(sample(name).join("journal.jsonl")).unwrap();
    session_with(&edit(text))
}

#[test]
fn torn_last_line_is_a_warning_and_an_error_with_strict() {
    let text = std::fs::read_to_string(sample("bugfix-todo").join("journal.jsonl")).unwrap();
    let lines = text.lines().count();
    let offset = text.len();
    let d = session_with(&format!("{text}{{\"rev\":{},\"ts\":\"2026-11-29T14:10:0", lines + 1));
    let full = ctxj().args(["show", "--json"]).arg(sample("bugfix-todo")).output().unwrap();
    ctxj()
        .args(["show", "--json"])
        .arg(d.path())
        .assert()
        .success()
        .stdout(full.stdout)
        .stderr(predicates::str::contains("warning"))
        .stderr(predicates::str::contains(format!("line {}", lines + 1)));
    ctxj()
        .args(["--strict", "show"])
        .arg(d.path())
        .assert()
        .code(2)
        .stderr(predicates::str::contains(format!(":{} (byte {offset})", lines + 1)))
        .stderr(predicates::str::contains("torn"));
}

#[test]
fn bad_line_in_the_middle_names_line_and_offset() {
    let text = std::fs::read_to_string(sample("bugfix-todo").join("journal.jsonl")).unwrap();
    let mut lines: Vec<&str> = text.lines().collect();
    let offset: usize = lines[..6].iter().map(|l| l.len() + 1).sum();
    lines[6] = "{\"rev\":7,\"ts\":\"2026-11-29T14:02:17.482Z\",\"kind\":\"result\",\"call\":";
    let d = session_with(&(lines.join("\n") + "\n"));
    for cmd in ["show", "log"] {
        ctxj()
            .arg(cmd)
            .arg(d.path())
            .assert()
            .code(2)
            .stdout("")
            .stderr(predicates::str::contains(format!("journal.jsonl:7 (byte {offset})")));
    }
    // A record that violates its kind's schema is an invalid line too.
    let mut lines: Vec<&str> = text.lines().collect();
    lines[6] = "{\"rev\":7,\"ts\":\"2026-11-29T14:02:17.482Z\",\"kind\":\"result\",\"tool\":\"read_file\"}";
    let d = session_with(&(lines.join("\n") + "\n"));
    ctxj()
        .arg("show")
        .arg(d.path())
        .assert()
        .code(2)
        .stderr(predicates::str::contains(format!("journal.jsonl:7 (byte {offset})")));
}

/// Inserts a record of an unknown kind after line `at` and renumbers the revs after it.
fn with_unknown_kind(text: &str, at: usize) -> String {
    let mut out = String::new();
    for (i, l) in text.lines().enumerate() {
        let mut v: Value = serde_json::from_str(l).unwrap();
        if i >= at {
            v["rev"] = Value::from(v["rev"].as_u64().unwrap() + 1);
        }
        out.push_str(&serde_json::to_string(&v).unwrap());
        out.push('\n');
        if i + 1 == at {
            out.push_str(&format!(
                "{{\"rev\":{},\"ts\":{},\"kind\":\"telemetry\",\"gpu\":\"h100\",\"latency_ms\":1234}}\n",
                at + 1,
                v["ts"]
            ));
        }
    }
    out
}

#[test]
fn unknown_kind_is_kept_listed_and_ignored_by_show() {
    let d = edited("bugfix-todo", |t| with_unknown_kind(&t, 8));
    let log = ctxj().arg("log").arg(d.path()).output().unwrap();
    assert!(log.status.success());
    assert!(String::from_utf8_lossy(&log.stdout).contains("telemetry"));
    let log_json = ctxj().args(["log", "--json"]).arg(d.path()).output().unwrap();
    assert!(String::from_utf8_lossy(&log_json.stdout).contains("telemetry"));
    // Every turn's request is unchanged: the recorded hashes still match.
    let mut turn = 0;
    for rec in journal_lines(d.path()) {
        if rec["kind"] == "assistant" {
            turn += 1;
            let out =
                ctxj().args(["show", "--at", "turn", &turn.to_string(), "--json"]).arg(d.path()).output().unwrap();
            assert!(out.status.success());
            assert_eq!(hex(&Sha256::digest(out.stdout.strip_suffix(b"\n").unwrap())), rec["prompt_sha256"]);
        }
    }
    // The projection at the unknown record equals the one just before it.
    let a = ctxj().args(["show", "--json", "--at", "rev", "8"]).arg(d.path()).output().unwrap();
    let b = ctxj().args(["show", "--json", "--at", "rev", "9"]).arg(d.path()).output().unwrap();
    assert_eq!(a.stdout, b.stdout);
}

const SECRET: &str = "TOP-SECRET-OUTSIDE-THE-SESSION";

fn spill_session(root: &Path, spill: &str) -> PathBuf {
    let dir = root.join("sess");
    std::fs::create_dir_all(&dir).unwrap();
    let lines = [
        r#"{"rev":1,"ts":"2026-11-29T10:00:00Z","kind":"session","id":"s","model":"vendor/m"}"#.to_string(),
        r#"{"rev":2,"ts":"2026-11-29T10:00:01Z","kind":"user","id":"u_1","text":"go"}"#.to_string(),
        r#"{"rev":3,"ts":"2026-11-29T10:00:02Z","kind":"assistant","id":"a_1","text":"","calls":[{"id":"call_1","tool":"run","args":{"command":"cat x"}}]}"#.to_string(),
        serde_json::json!({"rev":4,"ts":"2026-11-29T10:00:03Z","kind":"result","call":"call_1","tool":"run",
            "text":format!("head\n[full output: {spill}]"),"bytes":9000,"spill":spill})
        .to_string(),
    ];
    std::fs::write(dir.join("journal.jsonl"), lines.join("\n") + "\n").unwrap();
    dir
}

#[test]
fn spill_paths_escaping_the_session_are_refused() {
    let root = tempfile::tempdir().unwrap();
    std::fs::write(root.path().join("secret.txt"), SECRET).unwrap();
    let mut cases = vec![
        ("../secret.txt".to_string(), SECRET),
        ("../../etc/passwd".to_string(), "root:"),
        ("/etc/passwd".to_string(), "root:"),
        (root.path().join("secret.txt").display().to_string(), SECRET),
    ];
    #[cfg(unix)]
    {
        let d = root.path().join("sess").join("call_1.out");
        std::fs::create_dir_all(&d).unwrap();
        std::os::unix::fs::symlink(root.path().join("secret.txt"), d.join("stdout")).unwrap();
        cases.push(("call_1.out/stdout".to_string(), SECRET));
        std::os::unix::fs::symlink(root.path(), root.path().join("sess").join("up")).unwrap();
        cases.push(("up/secret.txt".to_string(), SECRET));
    }
    for (spill, secret) in cases {
        let dir = spill_session(root.path(), &spill);
        let before = snapshot(&dir);
        let out = ctxj().args(["show", "--expand"]).arg(&dir).output().unwrap();
        let stdout = String::from_utf8_lossy(&out.stdout);
        assert!(!stdout.contains(secret), "{spill}: content leaked:\n{stdout}");
        assert!(!String::from_utf8_lossy(&out.stderr).contains(secret), "{spill}: content leaked to stderr");
        assert!(stdout.contains("refused") || !out.status.success(), "{spill}: no refusal shown:\n{stdout}");
        assert_eq!(before, snapshot(&dir));
    }
    // A spill inside the session is inlined.
    let dir = spill_session(root.path(), "call_1.out/inside");
    std::fs::write(dir.join("call_1.out/inside"), "INSIDE-THE-SESSION").unwrap();
    ctxj()
        .args(["show", "--expand"])
        .arg(&dir)
        .assert()
        .success()
        .stdout(predicates::str::contains("INSIDE-THE-SESSION"));
}

#[test]
fn escape_sequences_in_a_tool_result_are_printed_escaped() {
    let evil = "ok\u{1b}[31mRED\u{1b}[0m \u{1b}]52;c;ZXZpbA==\u{7} \r\u{9b}2J bidi\u{202e}txt";
    let lines = [
        r#"{"rev":1,"ts":"2026-11-29T10:00:00Z","kind":"session","id":"s\u001b[2J","model":"vendor/m"}"#.to_string(),
        r#"{"rev":2,"ts":"2026-11-29T10:00:01Z","kind":"user","id":"u_1","text":"go"}"#.to_string(),
        r#"{"rev":3,"ts":"2026-11-29T10:00:02Z","kind":"assistant","id":"a_1","text":"","calls":[{"id":"call_1","tool":"run","args":{"command":"cat x"}}]}"#.to_string(),
        serde_json::json!({"rev":4,"ts":"2026-11-29T10:00:03Z","kind":"result","call":"call_1","tool":"run","text":evil,"bytes":40}).to_string(),
    ];
    let d = session_with(&(lines.join("\n") + "\n"));
    for args in [vec!["show"], vec!["show", "--expand"], vec!["log"], vec!["--color", "never", "show"]] {
        let out = ctxj().args(&args).arg(d.path()).output().unwrap();
        assert!(out.status.success());
        for bad in [&b"\x1b"[..], b"\x07", b"\r", "\u{9b}".as_bytes(), "\u{202e}".as_bytes()] {
            assert!(!out.stdout.windows(bad.len()).any(|w| w == bad), "{args:?}: raw {bad:?} in stdout");
        }
        if args.contains(&"show") {
            let s = String::from_utf8(out.stdout).unwrap();
            assert!(s.contains("\\e[31mRED"), "{args:?}: {s}");
        }
    }
    // --json is the canonical JSON: the escape is JSON-escaped, never raw.
    let out = ctxj().args(["show", "--json"]).arg(d.path()).output().unwrap();
    assert!(!out.stdout.contains(&0x1b));
    assert!(String::from_utf8(out.stdout).unwrap().contains("\\u001b[31mRED"));
}

#[test]
fn no_command_changes_the_session_directories() {
    let mut dirs: Vec<PathBuf> = all_samples().iter().map(|n| sample(n)).collect();
    let torn = edited("bugfix-todo", |t| t + "{\"rev\":99,\"kind\":");
    dirs.push(torn.path().to_path_buf());
    for dir in dirs {
        let before = snapshot(&dir);
        let runs: Vec<Vec<&str>> = vec![
            vec!["show"],
            vec!["show", "--json"],
            vec!["show", "--expand"],
            vec!["show", "--at", "rev", "3"],
            vec!["show", "--at", "turn", "2", "--json"],
            vec!["log"],
            vec!["log", "--json"],
            vec!["--strict", "show"],
        ];
        for args in runs {
            let _ = ctxj().args(&args).arg(&dir).output().unwrap();
        }
        let _ = ctxj().args(["show", "journal.jsonl"]).current_dir(&dir).output().unwrap();
        assert_eq!(before, snapshot(&dir), "{} changed", dir.display());
    }
}

/// Every file under `dir`, relative path → bytes.
fn files(dir: &Path) -> Vec<(PathBuf, Vec<u8>)> {
    snapshot(dir).into_iter().map(|(p, b, _)| (p.strip_prefix(dir).unwrap().to_path_buf(), b)).collect()
}

#[test]
fn the_generator_reproduces_the_committed_samples() {
    let out = tempfile::tempdir().unwrap();
    gen_samples::generate_all(out.path()).unwrap();
    let committed = repo().join("sample-journals");
    for name in all_samples() {
        let (a, b) = (files(&committed.join(&name)), files(&out.path().join(&name)));
        let names = |v: &[(PathBuf, Vec<u8>)]| v.iter().map(|(p, _)| p.clone()).collect::<Vec<_>>();
        assert_eq!(names(&a), names(&b), "{name}: different files");
        for ((p, x), (_, y)) in a.iter().zip(&b) {
            assert!(x == y, "{name}/{}: the generator's output differs from the committed file", p.display());
        }
    }
    let generated: Vec<String> =
        std::fs::read_dir(out.path()).unwrap().map(|e| e.unwrap().file_name().to_string_lossy().into_owned()).collect();
    for g in generated {
        assert!(committed.join(&g).join("journal.jsonl").is_file(), "sample {g} is not committed");
    }
}
