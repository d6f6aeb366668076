//! Hostile and broken input (issue 8): every case of `tests/data/hostile/` (plus the large ones
//! generated here) × every read command. See `tests/data/hostile/README.md` for the cases and
//! `docs/reliability.md` for the promises checked:
//!
//! * the documented exit code: 0 (with the expected warning where the spec tolerates the damage),
//!   1 for findings or differences, 2 with ONE message naming the file, line and byte offset when
//!   the input is unusable;
//! * never exit 101, never "panicked", never killed by a signal, never slower than [`TIMEOUT`];
//! * never a raw control character from the journal on stdout or stderr (text views escape them;
//!   `--json` output is exact JSON, whose escaping covers the C0 controls);
//! * never a write into the session directory (bytes and mtimes before and after).
//!
//! The table of commands is data: every command listed gets every check (there is no escape
//! hatch for unfinished commands).

use std::path::{Path, PathBuf};
use std::process::Output;
use std::time::{Duration, Instant};

use crate::common::*;

/// A command that runs longer than this fails the test instead of blocking CI.
const TIMEOUT: Duration = Duration::from_secs(120);

/// What the journal reader makes of a case.
#[derive(Debug, Clone, Copy)]
enum Read {
    /// Parses cleanly.
    Ok,
    /// Parses, with a warning on stderr containing this text.
    Warn(&'static str),
    /// Unusable: exit 2, one message naming the file, this line and this byte offset.
    Unusable { line: usize, offset: u64 },
}

/// One corpus case and what every command must do with it.
struct Case {
    name: &'static str,
    read: Read,
    /// `validate` must report findings (exit 1) for this case.
    findings: bool,
    /// The case is a foreign transcript (Claude Code): `import`/`usage` must read it (exit 0).
    foreign: bool,
}

const fn case(name: &'static str, read: Read, findings: bool) -> Case {
    Case { name, read, findings, foreign: false }
}

/// The committed corpus. Expected behaviour per case: see tests/data/hostile/README.md.
const CASES: &[Case] = &[
    case("torn-last-line", Read::Warn("torn last line ignored"), false),
    case("invalid-json-mid", Read::Unusable { line: 3, offset: 292 }, false),
    case("non-utf8", Read::Unusable { line: 3, offset: 292 }, false),
    case("nul-raw", Read::Unusable { line: 3, offset: 292 }, false),
    case("nul-escaped", Read::Ok, false),
    case("crlf", Read::Ok, false),
    case("empty", Read::Warn("holds no records"), true),
    case("only-newlines", Read::Warn("holds no records"), true),
    case("rev-gap", Read::Warn("rev"), true),
    case("rev-duplicate", Read::Warn("rev"), true),
    case("rev-reversal", Read::Warn("rev"), true),
    case("ts-backwards", Read::Ok, true),
    case("result-before-call", Read::Ok, true),
    case("result-unknown-call", Read::Ok, true),
    case("duplicate-ids", Read::Ok, true),
    case("second-session", Read::Ok, true),
    case("mirror-draft-not-json", Read::Ok, true),
    case("mirror-stale-base", Read::Ok, true),
    case("spill-dotdot", Read::Ok, true),
    case("spill-absolute", Read::Ok, true),
    case("spill-symlink", Read::Ok, true),
    case("deep-args", Read::Unusable { line: 4, offset: 378 }, false),
    case("ansi-output", Read::Ok, true),
    case("arith-extremes", Read::Warn("rev"), true),
    // Every command loads a Claude Code transcript directly (format detection); junk lines are
    // skipped and counted in one note.
    Case { name: "claude-code-junk", read: Read::Warn("skipped 7 record(s)"), findings: false, foreign: true },
];

/// How a command's exit code follows from the case.
#[derive(Debug, Clone, Copy, PartialEq)]
enum Role {
    /// Reads the journal and reports: 0 (warning allowed), 2 when unusable.
    Reader,
    /// `validate`: 1 when the case has findings, else 0; 2 when unusable.
    Validator,
    /// `audit` and `diff`: 0 or 1 on a readable journal (decisions may or may not be wrong,
    /// sides may differ); 2 when unusable.
    Judge,
    /// `import` / `usage`: foreign transcripts. Exit 0 on the Claude Code case; on a journal-v1
    /// case any documented code (0, 1, 2) — they are not its input format.
    Foreign,
    /// Reads the case as something else than a session (`budget --config`): any documented code.
    Any,
}

/// One command line to run against every case. `{s}` is the session directory (its journal file
/// for a foreign case), `{d}` the directory always, `{j}` its journal file, `{out}` a fresh
/// directory outside the session, `{m}` an experiment manifest there naming the session.
struct Cmd {
    args: &'static [&'static str],
    role: Role,
    /// Stdout must be one exact JSON document.
    json: bool,
}

const fn cmd(args: &'static [&'static str], role: Role, json: bool) -> Cmd {
    Cmd { args, role, json }
}

const CMDS: &[Cmd] = &[
    cmd(&["show", "{s}"], Role::Reader, false),
    cmd(&["show", "{s}", "--json"], Role::Reader, true),
    cmd(&["show", "{s}", "--expand"], Role::Reader, false),
    cmd(&["show", "{s}", "--at", "turn", "1"], Role::Reader, false),
    cmd(&["log", "{s}"], Role::Reader, false),
    cmd(&["log", "{s}", "--json"], Role::Reader, true),
    cmd(&["diff", "{s}", "--strategy", "recorded", "--strategy", "baseline"], Role::Judge, false),
    cmd(&["diff", "{s}", "--strategy", "recorded", "--strategy", "baseline", "--json"], Role::Judge, true),
    cmd(&["tokens", "{s}"], Role::Reader, false),
    cmd(&["tokens", "{s}", "--json"], Role::Reader, true),
    cmd(&["cache", "{s}", "--strategy", "recorded", "--strategy", "baseline"], Role::Reader, false),
    cmd(&["cache", "{s}", "--strategy", "recorded", "--json"], Role::Reader, true),
    cmd(&["validate", "{s}"], Role::Validator, false),
    cmd(&["validate", "{s}", "--json"], Role::Validator, true),
    cmd(&["audit", "{s}"], Role::Judge, false),
    cmd(&["audit", "{s}", "--json"], Role::Judge, true),
    cmd(&["import", "{j}", "--out", "{out}"], Role::Foreign, false),
    cmd(&["usage", "{j}", "--json"], Role::Foreign, true),
    // Issue 31: the commands the matrix missed.
    cmd(&["turns", "{s}"], Role::Reader, false),
    cmd(&["turns", "{s}", "--json"], Role::Reader, true),
    cmd(&["report", "{s}", "-o", "{out}/r.html"], Role::Reader, false),
    cmd(&["export", "{j}", "--format", "csv"], Role::Foreign, false),
    cmd(&["sessions", "{d}", "--json"], Role::Foreign, true),
    // `budget` reads no session: the case is its `--config` file.
    cmd(&["budget", "--model", "claude-sonnet-4-5", "--config", "{j}"], Role::Any, false),
    // The manifest (written outside the session) names the session as its one arm.
    cmd(&["experiment", "{m}"], Role::Foreign, false),
    // The live and prescriptive commands (issues 33 and 34): `tune` replays the case, `watch
    // --once` folds it once, `statusline --state` is handed the case as a state file.
    cmd(&["tune", "{s}"], Role::Foreign, false),
    cmd(&["tune", "{s}", "--format", "json"], Role::Foreign, true),
    cmd(&["watch", "{s}", "--once", "--format", "ndjson"], Role::Foreign, false),
    cmd(&["statusline", "--state", "{j}"], Role::Any, false),
];

/// Commands whose positional `--at turn 1` needs a first turn: skipped where none exists.
fn needs_turn(c: &Cmd) -> bool {
    c.args.windows(2).any(|w| w == ["--at", "turn"])
}

fn data() -> PathBuf {
    repo().join("tests").join("data").join("hostile")
}

/// Copies a committed case into a fresh temporary session directory (so that a misbehaving
/// command could never damage the repository) and adds what cannot be committed.
fn materialize(name: &str) -> tempfile::TempDir {
    let d = tempfile::tempdir().unwrap();
    let src = data().join(name).join("journal.jsonl");
    std::fs::copy(&src, d.path().join("journal.jsonl")).unwrap();
    if name == "spill-symlink" {
        // The spill `c1.out/stdout` is a symlink that leads out of the session directory.
        std::fs::create_dir(d.path().join("c1.out")).unwrap();
        #[cfg(unix)]
        std::os::unix::fs::symlink("/etc/passwd", d.path().join("c1.out").join("stdout")).unwrap();
    }
    d
}

/// Runs ctxj with a timeout; the outcome, or a failure message when it hung.
fn run(args: &[String]) -> Result<Output, String> {
    let start = Instant::now();
    let out = ctxj().args(args).timeout(TIMEOUT).output().map_err(|e| format!("cannot run: {e}"))?;
    if out.status.code().is_none() && start.elapsed() >= TIMEOUT {
        return Err(format!("timed out after {TIMEOUT:?}"));
    }
    Ok(out)
}

/// The first raw control character that must never reach a terminal, with its position.
/// Text views: C0 but `\n`/`\t`, DEL, C1. JSON: checked separately (exact JSON).
fn raw_control(s: &str, json: bool) -> Option<(usize, char)> {
    s.char_indices().find(|&(_, c)| {
        let c0 = (c as u32) < 0x20 && c != '\n' && c != '\t';
        c0 || (!json && (c == '\u{7f}' || ('\u{80}'..='\u{9f}').contains(&c)))
    })
}

/// Checks the promises every command keeps on every input. Returns stdout/stderr as text.
fn universal(what: &str, out: &Output, json_stdout: bool, failures: &mut Vec<String>) -> (String, String) {
    let stdout = String::from_utf8_lossy(&out.stdout).into_owned();
    let stderr = String::from_utf8_lossy(&out.stderr).into_owned();
    let mut fail = |m: String| failures.push(format!("{what}: {m}\n  stderr: {}", excerpt(&stderr)));
    match out.status.code() {
        None => fail(format!("killed by a signal ({:?})", out.status)),
        Some(101) => fail("exit 101 (a panic)".into()),
        Some(c) if c > 2 => fail(format!("undocumented exit code {c}")),
        _ => {}
    }
    if stderr.contains("panicked") || stdout.contains("panicked") {
        fail("printed \"panicked\"".into());
    }
    if std::str::from_utf8(&out.stderr).is_err() {
        fail("stderr is not UTF-8".into());
    }
    if let Some((i, c)) = raw_control(&stderr, false) {
        fail(format!("raw control {c:?} in stderr at byte {i}"));
    }
    if out.status.code() == Some(0) || out.status.code() == Some(1) {
        if json_stdout {
            if let Err(e) = serde_json::from_slice::<serde_json::Value>(&out.stdout) {
                fail(format!("--json stdout is not one JSON document: {e}; stdout: {}", excerpt(&stdout)));
            }
        }
        if std::str::from_utf8(&out.stdout).is_err() && !json_stdout {
            fail("stdout is not UTF-8".into());
        }
    }
    if let Some((i, c)) = raw_control(&stdout, json_stdout) {
        fail(format!("raw control {c:?} in stdout at byte {i}: {}", excerpt(&stdout[i.saturating_sub(40)..])));
    }
    (stdout, stderr)
}

fn excerpt(s: &str) -> String {
    let e: String = s.chars().take(300).collect();
    format!("{e:?}")
}

/// Checks the exit code (and the message of exit 2) against what the case and role expect.
fn expected(what: &str, c: &Case, role: Role, out: &Output, stderr: &str, failures: &mut Vec<String>) {
    let code = out.status.code().unwrap_or(-1);
    let mut fail = |m: String| failures.push(format!("{what}: {m}\n  stderr: {}", excerpt(stderr)));
    if role == Role::Any {
        return;
    }
    if role == Role::Foreign {
        if c.foreign && code != 0 {
            fail(format!("exit {code}, expected 0 (a foreign transcript with junk lines is read, junk skipped)"));
        }
        return;
    }
    match c.read {
        Read::Unusable { line, offset } => {
            if code != 2 {
                fail(format!("exit {code}, expected 2 (unusable input)"));
                return;
            }
            let errors = stderr.lines().filter(|l| l.starts_with("error:")).count();
            if errors != 1 {
                fail(format!("{errors} `error:` lines, expected one message"));
            }
            if !stderr.contains("journal.jsonl") {
                fail("the message does not name the file".into());
            }
            if !(stderr.contains(&format!(":{line} ")) || stderr.contains(&format!("line {line}"))) {
                fail(format!("the message does not name line {line}"));
            }
            if !stderr.contains(&format!("byte {offset}")) {
                fail(format!("the message does not name byte offset {offset}"));
            }
        }
        Read::Ok | Read::Warn(_) => {
            let allowed: &[i32] = match role {
                Role::Reader => &[0],
                Role::Validator if c.findings => &[1],
                Role::Validator => &[0],
                // `diff` compares turn requests: with no turn there is nothing to compare, and
                // saying so (exit 2, one message) is as fair as "equal".
                Role::Judge if !has_turn(c) => &[0, 1, 2],
                Role::Judge => &[0, 1],
                Role::Foreign | Role::Any => unreachable!(),
            };
            if !allowed.contains(&code) {
                fail(format!("exit {code}, expected one of {allowed:?}"));
            }
            if code == 2 && stderr.lines().filter(|l| l.starts_with("error:")).count() != 1 {
                fail("exit 2 without exactly one `error:` message".into());
            }
            if let Read::Warn(w) = c.read {
                if !stderr.contains(w) {
                    fail(format!("no warning containing {w:?}"));
                }
            }
        }
    }
}

fn expand(args: &[&str], session: &Path, out: &Path, foreign: bool) -> Vec<String> {
    args.iter()
        .map(|a| match *a {
            // A session directory is always read as a ctxj journal (spec §1); a foreign
            // transcript is named by its file, whose format is detected from its content.
            "{s}" if foreign => session.join("journal.jsonl").display().to_string(),
            "{s}" => session.display().to_string(),
            "{j}" => session.join("journal.jsonl").display().to_string(),
            "{d}" => session.display().to_string(),
            "{out}" => out.join("imported").display().to_string(),
            "{out}/r.html" => out.join("r.html").display().to_string(),
            "{m}" => {
                let target = if foreign { session.join("journal.jsonl") } else { session.to_path_buf() };
                let m = out.join("experiment.toml");
                let text = format!("[[arm]]\nlabel = \"a\"\nsessions = [{:?}]\n", target.display().to_string());
                std::fs::write(&m, text).unwrap();
                m.display().to_string()
            }
            a => a.to_string(),
        })
        .collect()
}

/// Runs every command on one materialized session.
fn run_all(c: &Case, dir: &Path, cmds: &[&Cmd], failures: &mut Vec<String>) {
    let before = snapshot(dir);
    for cmd in cmds {
        if needs_turn(cmd) && !has_turn(c) {
            continue;
        }
        let outdir = tempfile::tempdir().unwrap();
        let args = expand(cmd.args, dir, outdir.path(), c.foreign);
        let what = format!("[{}] ctxj {}", c.name, cmd.args.join(" "));
        let out = match run(&args) {
            Ok(o) => o,
            Err(e) => {
                failures.push(format!("{what}: {e}"));
                continue;
            }
        };
        let (stdout, stderr) = universal(&what, &out, cmd.json, failures);
        if c.name.starts_with("spill-") && (stdout.contains("root:x:0") || stderr.contains("root:x:0")) {
            failures.push(format!("{what}: printed the content of /etc/passwd"));
        }
        expected(&what, c, cmd.role, &out, &stderr, failures);
    }
    if snapshot(dir) != before {
        failures.push(format!("[{}] the session directory changed", c.name));
    }
}

fn has_turn(c: &Case) -> bool {
    !matches!(c.read, Read::Unusable { .. } | Read::Warn("holds no records"))
}

fn report(failures: Vec<String>) {
    assert!(failures.is_empty(), "{} failure(s):\n{}", failures.len(), failures.join("\n"));
}

#[test]
fn corpus_readme_lists_every_case() {
    let readme = std::fs::read_to_string(data().join("README.md")).unwrap();
    let mut on_disk: Vec<String> = std::fs::read_dir(data())
        .unwrap()
        .flatten()
        .filter(|e| e.path().is_dir())
        .map(|e| e.file_name().to_string_lossy().into_owned())
        .collect();
    on_disk.sort();
    let mut listed: Vec<String> = CASES.iter().map(|c| c.name.to_string()).collect();
    listed.sort();
    assert_eq!(on_disk, listed, "every corpus directory has an expectation in CASES, and back");
    for c in CASES {
        assert!(readme.contains(&format!("`{}`", c.name)), "README.md does not describe `{}`", c.name);
    }
}

#[test]
fn every_case_times_every_command() {
    let mut failures = Vec::new();
    let cmds: Vec<&Cmd> = CMDS.iter().collect();
    for c in CASES {
        let d = materialize(c.name);
        run_all(c, d.path(), &cmds, &mut failures);
    }
    report(failures);
}

#[test]
fn strict_turns_a_torn_last_line_into_an_error_with_its_position() {
    let d = materialize("torn-last-line");
    for sub in ["show", "log"] {
        let out = run(&[sub.into(), "--strict".into(), d.path().display().to_string()]).unwrap();
        let mut failures = Vec::new();
        let (_, stderr) = universal(sub, &out, false, &mut failures);
        let c = case("torn-last-line", Read::Unusable { line: 7, offset: 863 }, false);
        expected(sub, &c, Role::Reader, &out, &stderr, &mut failures);
        assert!(stderr.contains("torn write"), "{stderr}");
        report(failures);
    }
}

#[test]
fn crlf_reads_exactly_like_lf() {
    let crlf = materialize("crlf");
    let lf = session_with(&std::fs::read_to_string(crlf.path().join("journal.jsonl")).unwrap().replace("\r\n", "\n"));
    let a = ctxj().args(["show", "--json"]).arg(crlf.path()).output().unwrap();
    let b = ctxj().args(["show", "--json"]).arg(lf.path()).output().unwrap();
    assert!(a.status.success() && b.status.success());
    assert_eq!(a.stdout, b.stdout);
}

#[test]
fn escaped_terminal_sequences_stay_visible_as_text() {
    // Escaping must not drop the hostile text: the user sees what the tool printed, defanged.
    let d = materialize("ansi-output");
    let out = ctxj().arg("show").arg(d.path()).output().unwrap();
    let s = String::from_utf8(out.stdout).unwrap();
    assert!(s.contains("\\e]52;c;ZWNobyBwd25lZA=="), "OSC 52 shown escaped: {s}");
    assert!(s.contains("innocent\\rmalicious overwrite"), "\\r shown escaped: {s}");
    assert!(s.contains("\\u{202e}"), "bidi override shown escaped: {s}");
}

/// Regression test: `show --expand` blocked forever opening a spill that is a FIFO planted in
/// the session directory (it is inside the session, so confinement alone let it through).
#[cfg(unix)]
#[test]
fn spill_that_is_a_fifo_does_not_hang_show_expand() {
    let d = tempfile::tempdir().unwrap();
    std::fs::copy(data().join("spill-symlink").join("journal.jsonl"), d.path().join("journal.jsonl")).unwrap();
    std::fs::create_dir(d.path().join("c1.out")).unwrap();
    let fifo = d.path().join("c1.out").join("stdout");
    assert!(std::process::Command::new("mkfifo").arg(&fifo).status().unwrap().success());
    let out = ctxj().args(["show", "--expand"]).arg(d.path()).timeout(Duration::from_secs(30)).output().unwrap();
    assert_eq!(out.status.code(), Some(0), "{out:?}");
    assert!(String::from_utf8_lossy(&out.stdout).contains("not a regular file"));
}

#[test]
fn spill_escapes_are_refused_by_show_expand() {
    for name in ["spill-dotdot", "spill-absolute", "spill-symlink"] {
        let d = materialize(name);
        let out = ctxj().args(["show", "--expand"]).arg(d.path()).output().unwrap();
        assert_eq!(out.status.code(), Some(0), "{name}");
        let s = String::from_utf8(out.stdout).unwrap();
        assert!(s.contains("refused"), "{name}: the refusal is shown: {s}");
        assert!(!s.contains("root:"), "{name}: /etc/passwd was read: {s}");
    }
}

// ---------------------------------------------------------------------------------------------
// Large inputs, generated at test time.

fn base_lines() -> String {
    std::fs::read_to_string(data().join("crlf").join("journal.jsonl")).unwrap().replace("\r\n", "\n")
}

/// A journal whose 7th record is one result line of about `n` bytes of text built by `fill`.
fn with_big_result(text: &str) -> tempfile::TempDir {
    let mut s = base_lines();
    s.push_str(r#"{"rev":7,"ts":"2026-11-29T10:00:06Z","kind":"assistant","id":"a3","text":"","calls":[{"id":"c9","tool":"run","args":{"command":"cat big"}}]}"#);
    s.push('\n');
    let rec = serde_json::json!({"rev":8,"ts":"2026-11-29T10:00:07Z","kind":"result","call":"c9","tool":"run","text":text,"bytes":text.len()});
    s.push_str(&rec.to_string());
    s.push('\n');
    session_with(&s)
}

#[test]
fn a_100_mb_single_line_every_command() {
    // 100 MB of text with a terminal escape every 64 KiB, in one JSON line.
    let mut text = String::with_capacity(100 << 20);
    let chunk = format!("{}\x1b[2J\n", "x".repeat((64 << 10) - 5));
    while text.len() + chunk.len() <= 100 << 20 {
        text.push_str(&chunk);
    }
    let d = with_big_result(&text);
    drop(text);
    let c = case("huge-line", Read::Ok, false);
    // One run per command (the first listed variant of each), to keep the test's time sane.
    let mut seen = std::collections::HashSet::new();
    let cmds: Vec<&Cmd> = CMDS.iter().filter(|c| seen.insert(c.args[0])).collect();
    let mut failures = Vec::new();
    run_all(&c, d.path(), &cmds, &mut failures);
    report(failures);
}

#[test]
fn a_one_million_space_tool_result_every_command() {
    let d = with_big_result(&" ".repeat(1_000_000));
    let c = case("million-spaces", Read::Ok, false);
    let cmds: Vec<&Cmd> = CMDS.iter().collect();
    let mut failures = Vec::new();
    run_all(&c, d.path(), &cmds, &mut failures);
    report(failures);
}

#[test]
fn a_journal_appended_to_while_it_is_read() {
    use std::io::Write;
    // Start from a journal of a few MB (mapped), and keep appending records in a thread while
    // each command runs: every command sees a consistent prefix (a torn tail at most).
    let d = tempfile::tempdir().unwrap();
    let path = d.path().join("journal.jsonl");
    let mut s = base_lines();
    let mut rev = 6;
    let filler = "y".repeat(2000);
    while s.len() < (4 << 20) {
        rev += 1;
        s.push_str(&format!(
            "{{\"rev\":{rev},\"ts\":\"2026-11-29T10:00:07Z\",\"kind\":\"notice\",\"id\":\"n{rev}\",\"text\":\"{filler}\"}}\n"
        ));
    }
    std::fs::write(&path, &s).unwrap();
    let stop = std::sync::Arc::new(std::sync::atomic::AtomicBool::new(false));
    let writer = {
        let (stop, path) = (stop.clone(), path.clone());
        std::thread::spawn(move || {
            let mut f = std::fs::OpenOptions::new().append(true).open(&path).unwrap();
            let mut rev = rev;
            while !stop.load(std::sync::atomic::Ordering::Relaxed) {
                rev += 1;
                // Written in two parts, so that readers sometimes see a torn last line.
                let line = format!(
                    "{{\"rev\":{rev},\"ts\":\"2026-11-29T10:00:08Z\",\"kind\":\"notice\",\"id\":\"n{rev}\",\"text\":\"\\u001b]52;c;eA==\\u0007 appended\"}}\n"
                );
                let (a, b) = line.split_at(line.len() / 2);
                f.write_all(a.as_bytes()).unwrap();
                f.flush().unwrap();
                std::thread::sleep(Duration::from_micros(300));
                f.write_all(b.as_bytes()).unwrap();
            }
        })
    };
    let mut failures = Vec::new();
    for cmd in CMDS.iter().filter(|c| !matches!(c.role, Role::Foreign | Role::Any)) {
        let out_dir = tempfile::tempdir().unwrap();
        let args = expand(cmd.args, d.path(), out_dir.path(), false);
        let what = format!("[appended] ctxj {}", cmd.args.join(" "));
        match run(&args) {
            Ok(out) => {
                let (_, stderr) = universal(&what, &out, cmd.json, &mut failures);
                if !matches!(out.status.code(), Some(0) | Some(1)) {
                    failures.push(format!("{what}: exit {:?}: {}", out.status.code(), excerpt(&stderr)));
                }
            }
            Err(e) => failures.push(format!("{what}: {e}")),
        }
    }
    stop.store(true, std::sync::atomic::Ordering::Relaxed);
    writer.join().unwrap();
    report(failures);
}

/// Regression test for the SIGBUS crash (`docs/reliability.md`): `ctxj log` on a 32 MB journal
/// that is truncated while ctxj has it mapped was killed by SIGBUS (exit 135 in a shell).
#[test]
fn a_journal_truncated_while_mapped_is_not_a_sigbus() {
    let d = tempfile::tempdir().unwrap();
    let mut s = base_lines();
    let filler = "z".repeat(4000);
    let mut rev = 6;
    while s.len() < (32 << 20) {
        rev += 1;
        s.push_str(&format!(
            "{{\"rev\":{rev},\"ts\":\"2026-11-29T10:00:07Z\",\"kind\":\"notice\",\"id\":\"n{rev}\",\"text\":\"{filler}\"}}\n"
        ));
    }
    let mut failures = Vec::new();
    for (i, delay_ms) in [0u64, 5, 20, 60, 150, 400].into_iter().enumerate() {
        for sub in ["log", "show"] {
            let path = d.path().join("journal.jsonl");
            std::fs::write(&path, &s).unwrap();
            let mut child = hermetic(&mut std::process::Command::new(env!("CARGO_BIN_EXE_ctxj")))
                .args([sub, "--json"])
                .arg(&path)
                .stdout(std::process::Stdio::null())
                .stderr(std::process::Stdio::piped())
                .spawn()
                .unwrap();
            std::thread::sleep(Duration::from_millis(delay_ms));
            // Cut mid-line, to a different length each time.
            std::fs::OpenOptions::new().write(true).open(&path).unwrap().set_len(100_000 + i as u64 * 7).unwrap();
            let start = Instant::now();
            let status = loop {
                if let Some(st) = child.try_wait().unwrap() {
                    break st;
                }
                if start.elapsed() > TIMEOUT {
                    let _ = child.kill();
                    break child.wait().unwrap();
                }
                std::thread::sleep(Duration::from_millis(10));
            };
            let mut stderr = String::new();
            std::io::Read::read_to_string(&mut child.stderr.take().unwrap(), &mut stderr).unwrap();
            let what = format!("{sub} truncated after {delay_ms} ms");
            match status.code() {
                Some(0) | Some(2) => {}
                other => failures.push(format!("{what}: status {other:?} ({status:?}); stderr {}", excerpt(&stderr))),
            }
            if stderr.contains("panicked") {
                failures.push(format!("{what}: panicked: {}", excerpt(&stderr)));
            }
        }
    }
    report(failures);
}

// ---------------------------------------------------------------------------------------------
// Wrong and hostile input, round two (issues 15 and 21). Each test is named after the case.

fn code(out: &Output) -> Option<i32> {
    out.status.code()
}

fn stderr(out: &Output) -> String {
    String::from_utf8_lossy(&out.stderr).into_owned()
}

fn stdout(out: &Output) -> String {
    String::from_utf8_lossy(&out.stdout).into_owned()
}

/// A session whose result `c1` spills to `c1.out/stdout` (the file is left to the test).
fn spill_session() -> tempfile::TempDir {
    let d = tempfile::tempdir().unwrap();
    std::fs::copy(data().join("spill-symlink").join("journal.jsonl"), d.path().join("journal.jsonl")).unwrap();
    std::fs::create_dir(d.path().join("c1.out")).unwrap();
    d
}

fn s(p: &Path) -> String {
    p.display().to_string()
}

#[test]
fn forced_from_that_does_not_match_is_exit_2_naming_expected_and_found() {
    let j = s(&sample("bugfix-todo"));
    for (cmd, from, expected) in [("validate", "pi", "a pi transcript"), ("show", "codex", "a Codex transcript")] {
        let out = run(&[cmd.into(), j.clone(), "--from".into(), from.into()]).unwrap();
        assert_eq!(code(&out), Some(2), "{cmd} --from {from}: {out:?}");
        let e = stderr(&out);
        assert!(e.contains(expected) && e.contains("the content is a ctxj journal"), "{e}");
        assert!(stdout(&out).is_empty(), "no empty success printed: {}", stdout(&out));
    }
}

#[test]
fn a_transcript_with_no_record_of_the_forced_format_is_an_error() {
    let d = tempfile::tempdir().unwrap();
    let f = d.path().join("t.jsonl");
    std::fs::write(&f, "{\"x\":1}\n{\"y\":2}\n").unwrap();
    let out = run(&["show".into(), s(&f), "--from".into(), "pi".into()]).unwrap();
    assert_eq!(code(&out), Some(2), "{out:?}");
    assert!(stderr(&out).contains("not one record read as pi from 2 line(s)"), "{}", stderr(&out));
    // An empty file stays a warning (documented).
    std::fs::write(d.path().join("journal.jsonl"), "").unwrap();
    let out = run(&["show".into(), s(d.path())]).unwrap();
    assert_eq!(code(&out), Some(0), "{out:?}");
    assert!(stderr(&out).contains("holds no records"));
}

#[cfg(unix)]
#[test]
fn non_regular_inputs_are_refused_before_reading() {
    let d = tempfile::tempdir().unwrap();
    let fifo = d.path().join("fifo.jsonl");
    assert!(std::process::Command::new("mkfifo").arg(&fifo).status().unwrap().success());
    std::fs::create_dir_all(d.path().join("dir-session").join("journal.jsonl")).unwrap();
    let cases: Vec<(Vec<String>, &str)> = vec![
        (vec!["show".into(), "/dev/zero".into()], "a character device"),
        (vec!["validate".into(), s(&fifo)], "a FIFO"),
        (vec!["show".into(), s(&d.path().join("dir-session").join("journal.jsonl"))], "no session found"),
        (vec!["show".into(), s(&fifo), "--from".into(), "pi".into()], "a FIFO"),
        (vec!["cache".into(), s(&sample("bugfix-todo")), "--prices".into(), "/dev/zero".into()], "a character device"),
        (vec!["budget".into(), "--model".into(), "x".into(), "--config".into(), s(&fifo)], "a FIFO"),
    ];
    for (args, want) in cases {
        let out = run(&args).unwrap();
        assert_eq!(code(&out), Some(2), "{args:?}: {out:?}");
        assert!(stderr(&out).contains(want), "{args:?}: {}", stderr(&out));
    }
}

#[test]
fn broken_pipe_keeps_the_exit_code_of_the_result() {
    // A diff far larger than a pipe buffer, read by `head -c 10`: ctxj meets EPIPE and must
    // still exit 1 (differences), quietly.
    let text: String = (0..20_000).map(|i| format!("line {i} of a long tool output\n")).collect();
    let d = with_big_result(&text);
    let next = r#"{"rev":9,"ts":"2026-11-29T10:00:08Z","kind":"assistant","id":"a4","text":"done"}"#;
    let j = d.path().join("journal.jsonl");
    std::fs::write(&j, std::fs::read_to_string(&j).unwrap() + next + "\n").unwrap();
    let script = r#""$0" diff "$1" --strategy recorded --strategy truncate-100 | head -c 10 >/dev/null; echo "rc=${PIPESTATUS[0]}""#;
    let out = hermetic(&mut std::process::Command::new("bash"))
        .args(["-c", script, env!("CARGO_BIN_EXE_ctxj")])
        .arg(d.path())
        .output()
        .unwrap();
    assert_eq!(stdout(&out).trim(), "rc=1", "{out:?}");
    assert!(!stderr(&out).contains("error"), "quiet: {}", stderr(&out));
}

/// Bug: stdout that cannot be written (`/dev/full`: no space left) exited 2, "usage or input
/// error", though neither was wrong; it is an internal failure now (exit 3, one message).
#[cfg(target_os = "linux")]
#[test]
fn regression_an_unwritable_stdout_exited_as_a_usage_error() {
    for args in [vec!["show", "--json"], vec!["turns", "--json"], vec!["log"]] {
        let full = std::fs::OpenOptions::new().write(true).open("/dev/full").unwrap();
        let mut c = std::process::Command::new(env!("CARGO_BIN_EXE_ctxj"));
        let out = hermetic(&mut c).args(&args[..1]).arg(sample("bugfix-todo")).args(&args[1..]).stdout(full).output();
        let out = out.unwrap();
        assert_eq!(code(&out), Some(3), "{args:?}: {out:?}");
        assert!(stderr(&out).contains("writing the output"), "{args:?}: {}", stderr(&out));
    }
}

#[test]
fn binary_spill_under_expand_is_a_hex_dump_with_size_and_type() {
    let d = spill_session();
    let mut png = b"\x89PNG\r\n\x1a\n\0\0\0\rIHDR".to_vec();
    png.resize(2 << 20, 0xab);
    std::fs::write(d.path().join("c1.out").join("stdout"), &png).unwrap();
    let out = run(&["show".into(), s(d.path()), "--expand".into()]).unwrap();
    assert_eq!(code(&out), Some(0), "{out:?}");
    let o = stdout(&out);
    assert!(o.contains("(2097152 bytes, binary: PNG image; first 256 bytes)"), "{o}");
    assert!(o.contains("00000000  89 50 4e 47"), "{o}");
    assert!(o.contains("1048576 bytes more (not read)"), "{o}");
    assert!(!o.contains('\u{fffd}'), "no replacement characters");
}

#[cfg(unix)]
#[test]
fn a_sparse_gigabyte_spill_is_read_only_up_to_the_cap() {
    let d = spill_session();
    let f = std::fs::File::create(d.path().join("c1.out").join("stdout")).unwrap();
    f.set_len(1 << 30).unwrap();
    let out = run(&["show".into(), s(d.path()), "--expand".into()]).unwrap();
    assert_eq!(code(&out), Some(0), "{out:?}");
    let o = stdout(&out);
    assert!(o.contains("(1073741824 bytes, binary: binary data"), "{o}");
    assert!(o.contains(&format!("{} bytes more (not read)", (1u64 << 30) - (1 << 20))), "{o}");
}

#[test]
fn root_finds_a_session_by_its_id_as_well_as_its_folder() {
    let root = s(&repo().join("sample-journals"));
    for spec in ["bugfix-todo", "0b7e4f2a-bugfix-todo"] {
        let out = run(&["show".into(), spec.into(), "--root".into(), root.clone()]).unwrap();
        assert_eq!(code(&out), Some(0), "{spec}: {out:?}");
        assert!(stdout(&out).starts_with("session 0b7e4f2a-bugfix-todo"), "{spec}");
    }
}

#[test]
fn arithmetic_extremes_rev_at_u64_max_is_a_finding_not_a_wrap() {
    let d = materialize("arith-extremes");
    let out = run(&["validate".into(), s(d.path())]).unwrap();
    assert_eq!(code(&out), Some(1), "{out:?}");
    let o = stdout(&out);
    assert!(o.contains("the largest rev there is"), "{o}");
    assert!(!o.contains("revs 0.."), "no wrapped range: {o}");
}

#[test]
fn budget_target_is_70_percent_of_a_huge_budget() {
    let d = tempfile::tempdir().unwrap();
    let f = d.path().join("h.toml");
    std::fs::write(&f, "context_budget = 9223372036854775807\n").unwrap();
    let out = run(&["budget".into(), "--model".into(), "x".into(), "--config".into(), s(&f), "--json".into()]).unwrap();
    // 2^63 − 1 is above ctx_window − context_reserve: the error `audit` calls budget-over-window (exit 1).
    assert_eq!(code(&out), Some(1), "{out:?}");
    // 70 % of 2^63 - 1, rounded down (a wrapped `budget * 7` once gave 10 %).
    assert!(stdout(&out).contains("6456360425798343064"), "{}", stdout(&out));
}

#[test]
fn budget_config_that_is_not_a_harness_config_is_refused_and_unknown_keys_are_named() {
    let cargo = s(&repo().join("Cargo.toml"));
    let out = run(&["budget".into(), "--model".into(), "x".into(), "--config".into(), cargo]).unwrap();
    assert_eq!(code(&out), Some(2), "{out:?}");
    assert!(stderr(&out).contains("not a harness configuration") && stderr(&out).contains("`package`"));
    let d = tempfile::tempdir().unwrap();
    let f = d.path().join("h.toml");
    std::fs::write(&f, "context_budget = 1000\ncolour = 1\n").unwrap();
    let args = |strict: bool| {
        let mut a: Vec<String> = vec!["budget".into(), "--model".into(), "x".into(), "--config".into(), s(&f)];
        if strict {
            a.push("--strict".into());
        }
        a
    };
    let out = run(&args(false)).unwrap();
    assert_eq!(code(&out), Some(0), "{out:?}");
    assert!(stderr(&out).contains("unknown key(s) ignored: `colour`"), "{}", stderr(&out));
    let out = run(&args(true)).unwrap();
    assert_eq!(code(&out), Some(2), "{out:?}");
}

/// A Claude Code transcript whose user message holds an inline PNG (imported as an attachment).
fn transcript_with_image(dir: &Path) -> PathBuf {
    let t = dir.join("t.jsonl");
    let lines = [
        r#"{"type":"user","uuid":"u1","parentUuid":null,"sessionId":"s","timestamp":"2026-01-01T00:00:00Z","message":{"role":"user","content":[{"type":"text","text":"look"},{"type":"image","source":{"type":"base64","media_type":"image/png","data":"iVBORw0KGgo="}}]}}"#,
        r#"{"type":"assistant","uuid":"a1","parentUuid":"u1","sessionId":"s","requestId":"r","timestamp":"2026-01-01T00:00:01Z","message":{"id":"m1","model":"claude-x","role":"assistant","content":[{"type":"text","text":"ok"}],"usage":{"input_tokens":1,"output_tokens":1}}}"#,
    ];
    std::fs::write(&t, lines.join("\n") + "\n").unwrap();
    t
}

#[cfg(unix)]
#[test]
fn import_force_never_overwrites_the_source_through_a_symlink_or_hard_link() {
    let d = tempfile::tempdir().unwrap();
    let t = transcript_with_image(d.path());
    let before = std::fs::read(&t).unwrap();
    let out_dir = d.path().join("out");
    std::fs::create_dir(&out_dir).unwrap();
    std::os::unix::fs::symlink(&t, out_dir.join("journal.jsonl")).unwrap();
    let args = vec!["import".into(), s(&t), "--out".into(), s(&out_dir), "--force".into()];
    let out = run(&args).unwrap();
    assert_eq!(code(&out), Some(2), "{out:?}");
    assert!(stderr(&out).contains("symbolic link"), "{}", stderr(&out));
    std::fs::remove_file(out_dir.join("journal.jsonl")).unwrap();
    std::fs::hard_link(&t, out_dir.join("journal.jsonl")).unwrap();
    let out = run(&args).unwrap();
    assert_eq!(code(&out), Some(2), "{out:?}");
    assert!(stderr(&out).contains("one of the inputs"), "{}", stderr(&out));
    assert_eq!(std::fs::read(&t).unwrap(), before, "the source is intact");
}

#[cfg(unix)]
#[test]
fn import_never_writes_through_a_planted_attachment_link() {
    let d = tempfile::tempdir().unwrap();
    let t = transcript_with_image(d.path());
    let out_dir = d.path().join("out");
    let args = vec!["import".into(), s(&t), "--out".into(), s(&out_dir), "--force".into()];
    assert_eq!(code(&run(&args).unwrap()), Some(0));
    let att = walk(&out_dir).into_iter().find(|p| p.extension().is_some_and(|e| e == "png")).expect("an attachment");
    let victim = d.path().join("victim");
    std::fs::write(&victim, "precious").unwrap();
    std::fs::remove_file(&att).unwrap();
    std::os::unix::fs::symlink(&victim, &att).unwrap();
    let out = run(&args).unwrap();
    assert_eq!(code(&out), Some(2), "{out:?}");
    assert_eq!(std::fs::read_to_string(&victim).unwrap(), "precious");
}

fn walk(dir: &Path) -> Vec<PathBuf> {
    snapshot(dir).into_iter().map(|(p, _, _)| p).collect()
}

#[test]
fn import_out_below_a_session_directory_is_refused_before_creating_anything() {
    let d = tempfile::tempdir().unwrap();
    let t = transcript_with_image(d.path());
    let session = materialize("crlf");
    let target = session.path().join("sub").join("deeper");
    let before = snapshot(session.path());
    let out = run(&["import".into(), s(&t), "--out".into(), s(&target)]).unwrap();
    assert_eq!(code(&out), Some(2), "{out:?}");
    assert!(stderr(&out).contains("inside the session directory"), "{}", stderr(&out));
    assert_eq!(snapshot(session.path()), before, "nothing created in the session");
}

#[cfg(unix)]
#[test]
fn report_through_a_dangling_link_into_a_session_is_refused() {
    let session = materialize("crlf");
    let d = tempfile::tempdir().unwrap();
    let link = d.path().join("link.html");
    std::os::unix::fs::symlink(session.path().join("r.html"), &link).unwrap();
    let before = snapshot(session.path());
    let out = run(&["report".into(), s(session.path()), "-o".into(), s(&link)]).unwrap();
    assert_eq!(code(&out), Some(2), "{out:?}");
    assert_eq!(snapshot(session.path()), before, "nothing created in the session");
}

#[cfg(unix)]
#[test]
fn journal_symlinked_outside_the_session_does_not_leak_an_excerpt() {
    let d = tempfile::tempdir().unwrap();
    std::fs::write(d.path().join("secret"), "SECRET-TOKEN=hunter2, not JSON\n").unwrap();
    std::fs::create_dir(d.path().join("s")).unwrap();
    std::os::unix::fs::symlink("../secret", d.path().join("s").join("journal.jsonl")).unwrap();
    let out = run(&["show".into(), s(&d.path().join("s"))]).unwrap();
    assert_eq!(code(&out), Some(2), "{out:?}");
    assert!(stderr(&out).contains(":1 (byte 0)"), "the position is still given: {}", stderr(&out));
    assert!(!stderr(&out).contains("hunter2"), "{}", stderr(&out));
}

#[test]
fn nul_tail_is_reported_as_zero_fill_not_a_torn_line() {
    let mut bytes = base_lines().into_bytes();
    bytes.resize(bytes.len() + (3 << 20), 0);
    let d = tempfile::tempdir().unwrap();
    std::fs::write(d.path().join("journal.jsonl"), &bytes).unwrap();
    let out = run(&["show".into(), s(d.path())]).unwrap();
    assert_eq!(code(&out), Some(0), "{out:?}");
    assert!(stderr(&out).contains("NUL bytes of zero fill"), "{}", stderr(&out));
    assert!(!stderr(&out).contains("torn"), "{}", stderr(&out));
    let out = run(&["show".into(), s(d.path()), "--strict".into()]).unwrap();
    assert_eq!(code(&out), Some(2), "{out:?}");
}

#[test]
fn a_line_of_three_million_values_is_refused_with_a_clear_error() {
    let mut text = base_lines();
    let arr = vec!["1"; 3_000_000].join(",");
    text.push_str(&format!(
        r#"{{"rev":7,"ts":"2026-11-29T10:00:06Z","kind":"assistant","id":"a3","text":"","calls":[{{"id":"c9","tool":"run","args":{{"a":[{arr}]}}}}]}}"#
    ));
    text.push('\n');
    let d = session_with(&text);
    let out = run(&["show".into(), s(d.path())]).unwrap();
    assert_eq!(code(&out), Some(2), "{out:?}");
    assert!(stderr(&out).contains("more than 2000000 JSON values"), "{}", stderr(&out));
}

// ---------------------------------------------------------------------------------------------
// Races (issue 21): the confinement swap, live.

/// A thread that swaps two paths with `renameat2(RENAME_EXCHANGE)` until dropped.
#[cfg(target_os = "linux")]
struct Swapper {
    stop: std::sync::Arc<std::sync::atomic::AtomicBool>,
    swaps: std::sync::Arc<std::sync::atomic::AtomicU64>,
    thread: Option<std::thread::JoinHandle<()>>,
}

#[cfg(target_os = "linux")]
impl Swapper {
    fn start(a: PathBuf, b: PathBuf) -> Swapper {
        use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
        let stop = std::sync::Arc::new(AtomicBool::new(false));
        let swaps = std::sync::Arc::new(AtomicU64::new(0));
        let (st, sw) = (stop.clone(), swaps.clone());
        let thread = std::thread::spawn(move || {
            use rustix::fs::{renameat_with, RenameFlags, CWD};
            while !st.load(Ordering::Relaxed) {
                renameat_with(CWD, &a, CWD, &b, RenameFlags::EXCHANGE).expect("renameat2(RENAME_EXCHANGE)");
                sw.fetch_add(1, Ordering::Relaxed);
            }
        });
        Swapper { stop, swaps, thread: Some(thread) }
    }

    /// Stops the thread; how many swaps it made.
    fn finish(mut self) -> u64 {
        self.stop.store(true, std::sync::atomic::Ordering::Relaxed);
        self.thread.take().expect("running").join().expect("the swapper did not panic");
        self.swaps.load(std::sync::atomic::Ordering::Relaxed)
    }
}

/// `d/s` is a session whose result `c1` spills to `c1.out/stdout` ("inside"); `d/outside/stdout`
/// holds a secret; `d/s/swap` is a symlink to `../outside`, to be exchanged with `c1.out`.
#[cfg(target_os = "linux")]
fn swap_race_session() -> (tempfile::TempDir, PathBuf) {
    let d = tempfile::tempdir().unwrap();
    let s = d.path().join("s");
    std::fs::create_dir_all(s.join("c1.out")).unwrap();
    std::fs::copy(data().join("spill-symlink").join("journal.jsonl"), s.join("journal.jsonl")).unwrap();
    std::fs::write(s.join("c1.out").join("stdout"), "inside-the-session\n").unwrap();
    std::fs::create_dir(d.path().join("outside")).unwrap();
    std::fs::write(d.path().join("outside").join("stdout"), "SECRET-OUTSIDE\n").unwrap();
    std::os::unix::fs::symlink("../outside", s.join("swap")).unwrap();
    (d, s)
}

/// Regression test (issue 21, "confinement race"): a writer swapping `c1.out/` with a symlink to
/// `../outside` made 63 of 300 `show --expand` runs print the outside file (the path was checked,
/// then reopened by name). Now the open is made beneath a descriptor of the session directory:
/// at least 200 runs under a live swap, until both outcomes (the inside file shown, the spill
/// refused) have been seen, and not one print of the outside file.
#[cfg(target_os = "linux")]
#[test]
fn confinement_swap_race_show_expand_never_prints_the_outside_file() {
    let (_d, sess) = swap_race_session();
    let swapper = Swapper::start(sess.join("c1.out"), sess.join("swap"));
    let (mut runs, mut shown, mut refused) = (0u32, 0u32, 0u32);
    while runs < 200 || (shown == 0 || refused == 0) && runs < 2_000 {
        runs += 1;
        let out = ctxj().args(["show", "--expand"]).arg(&sess).timeout(Duration::from_secs(60)).output().unwrap();
        let o = stdout(&out);
        assert_eq!(code(&out), Some(0), "run {runs}: {out:?}");
        assert!(!o.contains("SECRET-OUTSIDE"), "run {runs} printed the outside file:\n{o}");
        shown += u32::from(o.contains("inside-the-session"));
        refused += u32::from(o.contains("not shown"));
    }
    let swaps = swapper.finish();
    assert!(
        swaps > 0 && shown > 0 && refused > 0,
        "the race was not live: {swaps} swaps, {shown} shown, {refused} refused"
    );
    eprintln!("{runs} runs under {swaps} swaps: {shown} shown, {refused} refused, 0 outside");
}

/// The same swap while `report`, `import` and `validate` read the session: none of them reads a
/// spill or attachment file's content (only `show --expand` does), and none may start to: the
/// outside file appears in no output and nothing is written into the session.
#[cfg(target_os = "linux")]
#[test]
fn confinement_swap_race_report_import_and_validate_never_read_outside() {
    let (d, sess) = swap_race_session();
    let html = d.path().join("r.html");
    let out_dir = d.path().join("imported");
    let swapper = Swapper::start(sess.join("c1.out"), sess.join("swap"));
    for i in 0..20 {
        let cmds: [Vec<String>; 3] = [
            vec!["report".into(), s(&sess), "-o".into(), s(&html)],
            vec!["import".into(), s(&sess), "--out".into(), s(&out_dir), "--force".into()],
            vec!["validate".into(), s(&sess), "--json".into()],
        ];
        for args in cmds {
            let out = run(&args).unwrap();
            assert!(matches!(code(&out), Some(0 | 1)), "{i}: {args:?}: {out:?}");
            assert!(!stdout(&out).contains("SECRET-OUTSIDE") && !stderr(&out).contains("SECRET-OUTSIDE"), "{args:?}");
        }
        for f in walk(&out_dir).into_iter().chain([html.clone()]) {
            let bytes = std::fs::read(&f).unwrap();
            assert!(
                memchr::memmem::find(&bytes, b"SECRET-OUTSIDE").is_none(),
                "{} holds the outside file",
                f.display()
            );
        }
    }
    assert!(swapper.finish() > 0);
    let names: Vec<String> = walk(&sess).iter().map(|p| s(p.strip_prefix(&sess).unwrap())).collect();
    assert!(
        names.iter().all(|n| n == "journal.jsonl" || n.ends_with("stdout")),
        "nothing written into the session: {names:?}"
    );
}

// ---------------------------------------------------------------------------------------------
// Importer complexity (issue 21): the shapes of `scripts/hostile-gen` at N and 2N, checked for
// structure (what is imported), not time; `scripts/bench` times them and `scripts/hostile-repro`
// runs them at the issue's sizes.

/// `ctxj import` of `text` (a transcript named `name`); the records of the written journal.
fn imported_records(name: &str, text: &str) -> Vec<serde_json::Value> {
    let d = tempfile::tempdir().unwrap();
    std::fs::write(d.path().join(name), text).unwrap();
    let out = run(&["import".into(), s(&d.path().join(name)), "--out".into(), s(&d.path().join("o"))]).unwrap();
    assert_eq!(code(&out), Some(0), "{out:?}");
    let j = std::fs::read_to_string(d.path().join("o").join("journal.jsonl")).unwrap();
    j.lines().map(|l| serde_json::from_str(l).unwrap()).collect()
}

fn count_kind(records: &[serde_json::Value], kind: &str) -> usize {
    records.iter().filter(|r| r["kind"] == kind).count()
}

const CC_BOUNDARY: &str = r#"{"type":"system","subtype":"compact_boundary","uuid":"bK","sessionId":"s","timestamp":"2026-01-01T00:00:01Z","compactMetadata":{"trigger":"auto"}}"#;

fn codex_message(text: &str) -> String {
    format!(r#"{{"type":"message","role":"user","content":[{{"type":"input_text","text":"{text}"}}]}}"#)
}

fn codex_head(n: usize) -> String {
    let mut t = String::from(r#"{"timestamp":"2026-01-01T00:00:00Z","type":"session_meta","payload":{"id":"T"}}"#);
    t.push('\n');
    for k in 0..n {
        let m = codex_message(&format!("message {k}"));
        t.push_str(&format!(r#"{{"timestamp":"2026-01-01T00:00:01Z","type":"response_item","payload":{m}}}"#));
        t.push('\n');
    }
    t
}

/// Regression test (issue 21, "Claude Code reader quadratic"): parentless `compact_boundary`
/// lines — one after a single user line, then a summary — import as one compact record each,
/// at N and 2N.
#[test]
fn cc_parentless_compact_boundaries_at_n_and_2n_keep_their_structure() {
    for n in [500, 1_000] {
        let mut t = String::from(
            r#"{"type":"user","uuid":"u0","sessionId":"s","timestamp":"2026-01-01T00:00:00Z","message":{"role":"user","content":"hi"}}"#,
        );
        t.push('\n');
        for k in 0..n {
            t.push_str(&CC_BOUNDARY.replace("bK", &format!("b{k}")));
            t.push('\n');
        }
        t.push_str(r#"{"type":"user","uuid":"sum","sessionId":"s","isCompactSummary":true,"timestamp":"2026-01-01T00:00:02Z","message":{"role":"user","content":"the summary"}}"#);
        t.push('\n');
        let r = imported_records("boundaries.jsonl", &t);
        assert_eq!((count_kind(&r, "compact"), count_kind(&r, "user")), (n, 1), "n = {n}");
    }
}

/// The linked variant: N user lines each continuing from a parentless boundary placed after all
/// of them, so each boundary searches back for the newest conversation line not on the chain.
#[test]
fn cc_boundaries_continuing_from_earlier_lines_at_n_and_2n_keep_every_line() {
    for n in [500, 1_000] {
        let mut t = String::new();
        for k in 0..n {
            let parent = if k == 0 { "null".to_string() } else { format!("\"b{}\"", k - 1) };
            t.push_str(&format!(
                r#"{{"type":"user","uuid":"c{k}","parentUuid":{parent},"sessionId":"s","timestamp":"2026-01-01T00:00:00Z","message":{{"role":"user","content":"turn {k}"}}}}"#
            ));
            t.push('\n');
        }
        for k in 0..n {
            t.push_str(&CC_BOUNDARY.replace("bK", &format!("b{k}")));
            t.push('\n');
        }
        let r = imported_records("linked.jsonl", &t);
        assert_eq!((count_kind(&r, "user"), count_kind(&r, "compact")), (n, n), "n = {n}");
    }
}

/// Regression test (issue 21, "Codex reader quadratic"): N messages and one `compacted` whose
/// replacement_history holds N items matching none of them: nothing kept, N users added after
/// the compaction, at N and 2N.
#[test]
fn codex_unmatched_replacement_history_at_n_and_2n_keeps_its_structure() {
    for n in [1_000, 2_000] {
        let mut t = codex_head(n);
        let hist: Vec<String> = (0..n).map(|k| codex_message(&format!("unmatched {k}"))).collect();
        t.push_str(&format!(
            r#"{{"timestamp":"2026-01-01T00:00:02Z","type":"compacted","payload":{{"message":"sum","replacement_history":[{}]}}}}"#,
            hist.join(",")
        ));
        t.push('\n');
        let r = imported_records("rollout-h.jsonl", &t);
        assert_eq!(count_kind(&r, "user"), 2 * n, "n = {n}");
        let compact = r.iter().find(|x| x["kind"] == "compact").expect("a compact record");
        assert_eq!(compact["kept"], serde_json::json!([]), "n = {n}");
    }
}

/// Regression test (issue 21): N messages then N `compacted` lines, each keeping one earlier
/// message. Matching used to index every earlier block again for each compaction (O(N²)); the
/// index is now kept as blocks are written. Each compaction keeps exactly its message, at N and
/// 2N.
#[test]
fn codex_many_compactions_each_keep_their_message_at_n_and_2n() {
    for n in [1_000, 2_000] {
        let mut t = codex_head(n);
        for k in 0..n {
            let m = codex_message(&format!("message {k}"));
            t.push_str(&format!(
                r#"{{"timestamp":"2026-01-01T00:00:02Z","type":"compacted","payload":{{"message":"sum {k}","replacement_history":[{m},{m}]}}}}"#
            ));
            t.push('\n');
        }
        let r = imported_records("rollout-c.jsonl", &t);
        let users: Vec<&serde_json::Value> = r.iter().filter(|x| x["kind"] == "user").collect();
        // The second copy of each message matches nothing earlier: it is added as a user.
        assert_eq!(users.len(), 2 * n, "n = {n}");
        let compacts: Vec<&serde_json::Value> = r.iter().filter(|x| x["kind"] == "compact").collect();
        assert_eq!(compacts.len(), n);
        for (k, c) in compacts.iter().enumerate() {
            assert_eq!(c["kept"], serde_json::json!([users[k]["id"]]), "n = {n}, compaction {k}");
        }
    }
}

/// Regression test (issue 21, integer overflow in the usage readers): a Claude Code transcript
/// with u64::MAX in every usage field of four calls. `usage` summed the fields unchecked (exit 101
/// with overflow checks on, a wrapped total in release), and so did `sessions`; the sums now
/// saturate at u64::MAX.
#[test]
fn usage_and_sessions_saturate_u64_max_usage_instead_of_wrapping() {
    let d = tempfile::tempdir().unwrap();
    let dir = d.path().join("projects").join("p");
    std::fs::create_dir_all(&dir).unwrap();
    let max = u64::MAX;
    std::fs::write(dir.join("s.jsonl"), cc_max_usage_transcript(4)).unwrap();
    for cmd in ["usage", "sessions"] {
        let out = run(&[cmd.into(), s(d.path()), "--format".into(), "json".into()]).unwrap();
        assert_eq!(code(&out), Some(0), "{cmd}: {out:?}");
        assert!(stdout(&out).contains(&max.to_string()), "{cmd}: the sums saturate at u64::MAX: {}", stdout(&out));
    }
}

/// Issue 31 (found reproducing the Spark job's u64::MAX case): `export` on a transcript with
/// `u64::MAX` usage panicked ("attempt to add with overflow" in the cache model's prompt size:
/// framing + the calibrated blocks) with overflow checks on, and wrapped in release. The prompt
/// sizes saturate; the rows carry `u64::MAX` as recorded.
#[test]
fn regression_export_of_u64_max_usage_overflowed_the_cache_model() {
    let d = tempfile::tempdir().unwrap();
    let dir = d.path().join("projects").join("p");
    std::fs::create_dir_all(&dir).unwrap();
    std::fs::write(dir.join("s.jsonl"), cc_max_usage_transcript(3)).unwrap();
    for extra in [&["--format", "ndjson", "-s", "sliding-8"][..], &["--format", "csv"], &["--format", "otlp-json"]] {
        let mut args = vec!["export".to_string(), s(d.path())];
        args.extend(extra.iter().map(|a| a.to_string()));
        let out = run(&args).unwrap();
        assert_eq!(code(&out), Some(0), "{extra:?}: {out:?}");
        assert!(!stdout(&out).is_empty(), "{extra:?}");
    }
}
