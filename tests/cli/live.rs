//! `ctxj statusline` and `ctxj watch` driven as the harnesses drive them: Claude Code's JSON on
//! stdin with a transcript growing between runs, and a watcher following appends in real time.

use std::io::{BufRead as _, Write as _};
use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

use crate::common::{ctxj, hermetic, shared_corpus, shared_samples};

/// One Claude Code assistant line: call `i` at minute `min`, prompt `read + write + 3`.
fn cc_call(i: usize, min: u32, read: u64, write: u64) -> String {
    format!(
        r#"{{"type":"assistant","parentUuid":null,"sessionId":"s1","uuid":"u{i}","requestId":"r{i}","timestamp":"2026-05-01T10:{min:02}:00Z","message":{{"id":"m{i}","model":"claude-sonnet-4-5","usage":{{"input_tokens":3,"cache_creation_input_tokens":{write},"cache_read_input_tokens":{read},"output_tokens":500}}}}}}"#
    ) + "\n"
}

/// A project folder with one session of `calls` growing calls; (tempdir, transcript, cache dir).
fn session(calls: usize) -> (tempfile::TempDir, PathBuf, PathBuf) {
    let d = tempfile::tempdir().unwrap();
    let proj = d.path().join("projects").join("-p");
    std::fs::create_dir_all(&proj).unwrap();
    let t = proj.join("s1.jsonl");
    let text: String = (0..calls).map(|i| cc_call(i, i as u32, 20_000 + 10_000 * i as u64, 10_000)).collect();
    std::fs::write(&t, text).unwrap();
    let cache = d.path().join("cache");
    (d, t, cache)
}

fn statusline(t: &Path, cache: &Path, extra: &[&str], stdin: Option<String>) -> assert_cmd::assert::Assert {
    let input =
        stdin.unwrap_or_else(|| format!(r#"{{"transcript_path":{},"unknown":{{"x":1}}}}"#, serde_json::json!(t)));
    ctxj()
        .env("CTXJ_CACHE_DIR", cache)
        .env_remove("CTXJ_NO_CACHE")
        .args(["statusline", "--now", "2026-05-01T10:06:30Z"])
        .args(extra)
        .write_stdin(input)
        .assert()
}

#[test]
fn statusline_shows_context_cache_and_dollars_and_hides_what_is_absent() {
    let (_d, t, cache) = session(6);
    let out = statusline(&t, &cache, &["--lines", "2"], None).success();
    let text = String::from_utf8(out.get_output().stdout.clone()).unwrap();
    insta::assert_snapshot!("statusline_two_lines", text);
    let out = statusline(&t, &cache, &["--format", "json"], None).success();
    let v: serde_json::Value = serde_json::from_slice(&out.get_output().stdout).unwrap();
    assert_eq!(v["schema"], "ctxj.statusline/1");
    assert_eq!(v["context"], 80_003);
    assert_eq!(v["compact_at"]["tokens"], 167_000, "Sonnet 4.5's 200k window by the documented rule");
    assert_eq!(v["cache"]["warm"], true);
    // No model name, no transcript: nothing but what the harness said, no zeros.
    let out = statusline(&t, &cache, &[], Some(r#"{"model":{"display_name":"Opus"}}"#.into())).success();
    assert_eq!(String::from_utf8_lossy(&out.get_output().stdout), "Opus\n");
}

#[test]
fn statusline_reads_only_what_was_appended_and_keeps_its_state_out_of_the_session() {
    let (d, t, cache) = session(3);
    statusline(&t, &cache, &[], None).success();
    let states: Vec<_> = std::fs::read_dir(cache.join("live")).unwrap().flatten().collect();
    assert_eq!(states.len(), 1, "one state file in the cache folder");
    let listed = |p: &Path| std::fs::read_dir(p).unwrap().count();
    assert_eq!(listed(t.parent().unwrap()), 1, "nothing written beside the transcript");
    // Append three calls, a torn fourth; then complete it.
    let mut f = std::fs::OpenOptions::new().append(true).open(&t).unwrap();
    for i in 3..6 {
        f.write_all(cc_call(i, i as u32, 20_000 + 10_000 * i as u64, 10_000).as_bytes()).unwrap();
    }
    let torn = cc_call(6, 6, 90_000, 10_000);
    f.write_all(&torn.as_bytes()[..40]).unwrap();
    let json = |a: assert_cmd::assert::Assert| -> serde_json::Value {
        serde_json::from_slice(&a.get_output().stdout).unwrap()
    };
    let v = json(statusline(&t, &cache, &["--format", "json"], None).success());
    assert_eq!((v["calls"].as_u64(), v["context"].as_u64()), (Some(6), Some(80_003)), "the torn line waits");
    f.write_all(&torn.as_bytes()[40..]).unwrap();
    let v = json(statusline(&t, &cache, &["--format", "json"], None).success());
    assert_eq!((v["calls"].as_u64(), v["context"].as_u64()), (Some(7), Some(100_003)));
    // The same figures as a run from zero and as `ctxj usage`.
    let fresh = json(statusline(&t, &d.path().join("other-cache"), &["--format", "json"], None).success());
    assert_eq!(v, fresh);
    let usage = ctxj().args(["usage", "--by", "session", "--format", "json"]).arg(d.path()).assert().success();
    let u: serde_json::Value = serde_json::from_slice(&usage.get_output().stdout).unwrap();
    assert_eq!(u["rows"][0]["cost_usd"], v["cost"]);
}

#[test]
fn statusline_refuses_what_is_not_json_and_renders_a_watch_state() {
    let (_d, t, cache) = session(2);
    statusline(&t, &cache, &[], Some("{not json".into())).code(2);
    let out = statusline(&t, &cache, &["--format", "json"], None).success();
    let state = cache.join("state.json");
    std::fs::write(&state, &out.get_output().stdout).unwrap();
    let a = ctxj()
        .env("CTXJ_CACHE_DIR", &cache)
        .env_remove("CTXJ_NO_CACHE")
        .args(["statusline", "--now", "2026-05-01T11:00:00Z", "--state"])
        .arg(&state)
        .assert()
        .success();
    let line = String::from_utf8_lossy(&a.get_output().stdout).into_owned();
    assert!(line.contains("cache 5m cold"), "the state's expiry is read again at render time: {line}");
}

/// Issue 33: the session $ of the status line is what `ctxj usage` bills, on every shared
/// Claude Code session (its subagents' files included).
#[test]
#[cfg_attr(
    not(ctxj_has_samples),
    ignore = "needs ../shared/samples (fails under CI=true; once it is there, `touch build.rs`)"
)]
#[cfg_attr(
    not(ctxj_has_corpus),
    ignore = "needs ../shared/corpus (fails under CI=true; once it is there, `touch build.rs`)"
)]
fn statusline_cost_equals_usage_on_every_shared_claude_code_session() {
    let cache = tempfile::tempdir().unwrap();
    let mut checked = 0;
    for base in [shared_samples(), shared_corpus()] {
        let projects = base.join("claude-code").join("projects");
        for proj in std::fs::read_dir(&projects).unwrap().flatten().map(|e| e.path()).filter(|p| p.is_dir()) {
            let usage = ctxj().args(["usage", "--by", "session", "--format", "json"]).arg(&proj).assert().success();
            let u: serde_json::Value = serde_json::from_slice(&usage.get_output().stdout).unwrap();
            for row in u["rows"].as_array().unwrap() {
                let key = row["key"].as_str().unwrap();
                let t = proj.join(format!("{}.jsonl", key.rsplit('/').next().unwrap()));
                if !t.is_file() {
                    continue;
                }
                let a = ctxj()
                    .env("CTXJ_CACHE_DIR", cache.path())
                    .env_remove("CTXJ_NO_CACHE")
                    .args(["statusline", "--format", "json", "--transcript"])
                    .arg(&t)
                    .assert()
                    .success();
                let v: serde_json::Value = serde_json::from_slice(&a.get_output().stdout).unwrap();
                // Equal to a nano-dollar: once a session is settled (`live::tally`), its calls'
                // dollars are added in another order than `usage` adds them (file by file).
                match (v["cost"].as_f64(), row["cost_usd"].as_f64()) {
                    (Some(live), Some(usage)) => {
                        assert!((live - usage).abs() < 1e-9, "{}: {live} against {usage}", t.display())
                    }
                    (live, usage) => assert_eq!(live, usage, "{}", t.display()),
                }
                checked += 1;
            }
        }
    }
    assert!(checked >= 10, "{checked} sessions checked");
}

/// `--no-cache` / `CTXJ_NO_CACHE` kept the token memo and summaries off but `statusline` still
/// wrote its live state: now it computes from the transcript each time and writes nothing.
#[test]
fn regression_statusline_kept_live_state_under_no_cache() {
    let (_d, t, cache) = session(3);
    let json = |a: assert_cmd::assert::Assert| -> serde_json::Value {
        serde_json::from_slice(&a.get_output().stdout).unwrap()
    };
    let input = format!(r#"{{"transcript_path":{}}}"#, serde_json::json!(t));
    let run = |env: Option<&str>, extra: &[&str]| {
        let mut c = ctxj();
        match env {
            Some(v) => c.env("CTXJ_NO_CACHE", v),
            None => c.env_remove("CTXJ_NO_CACHE"),
        };
        c.env("CTXJ_CACHE_DIR", &cache)
            .args(["statusline", "--format", "json", "--now", "2026-05-01T10:06:30Z"])
            .args(extra)
            .write_stdin(input.clone())
            .assert()
            .success()
    };
    let off = json(run(Some("1"), &[]));
    assert!(!cache.exists(), "nothing written under CTXJ_NO_CACHE");
    let flag = json(run(None, &["--no-cache"]));
    assert!(!cache.exists(), "nothing written under --no-cache");
    // Each run reads the whole transcript again: an append is seen without any state.
    let mut f = std::fs::OpenOptions::new().append(true).open(&t).unwrap();
    f.write_all(cc_call(3, 3, 50_000, 10_000).as_bytes()).unwrap();
    let grown = json(run(Some("1"), &[]));
    assert!(!cache.exists());
    assert_eq!((off["calls"].as_u64(), grown["calls"].as_u64()), (Some(3), Some(4)));
    assert_eq!(off, flag);
    // The same figures as a run that keeps its state.
    assert_eq!(json(run(None, &[])), grown);
    assert!(cache.join("live").is_dir(), "the state is kept without the flag");
}

/// `ctxj watch` prints a call's event after it is appended, and a cache break with its cause;
/// the time from append to event is bounded (generously: CI machines are loaded). `how`: the
/// flags choosing the file-system events path or the stat poll.
fn watch_follows_appends(how: &[&str]) {
    let (_d, t, cache) = session(2);
    let mut cmd = std::process::Command::new(env!("CARGO_BIN_EXE_ctxj"));
    hermetic(&mut cmd)
        .env("CTXJ_CACHE_DIR", &cache)
        .env_remove("CTXJ_NO_CACHE")
        .args(["watch", "--format", "ndjson", "--from-start", "--timeout", "30"])
        .args(how)
        .arg(&t)
        .stdout(std::process::Stdio::piped());
    let mut child = cmd.spawn().unwrap();
    let mut lines = std::io::BufReader::new(child.stdout.take().unwrap()).lines();
    // The transcript's times are long past: each new call is followed by a `cold` alert.
    let mut next = move || loop {
        let v: serde_json::Value = serde_json::from_str(&lines.next().unwrap().unwrap()).unwrap();
        if v["event"] != "cold" {
            return v;
        }
    };
    // The watcher has read what is there (and set up its watches before that look).
    assert_eq!(next()["call"], 1);
    assert_eq!(next()["call"], 2);
    let mut f = std::fs::OpenOptions::new().append(true).open(&t).unwrap();
    let appended = Instant::now();
    f.write_all(cc_call(2, 2, 40_000, 10_000).as_bytes()).unwrap();
    let first = next();
    let latency = appended.elapsed();
    assert_eq!((first["schema"].as_str(), first["event"].as_str()), (Some("ctxj.watch/1"), Some("call")));
    assert_eq!((first["call"].as_u64(), first["cache"].as_str()), (Some(3), Some("hit")));
    assert!(latency < Duration::from_secs(5), "append → event took {latency:?}");
    // The next call reads nothing back after an idle of more than five minutes.
    f.write_all(cc_call(3, 40, 0, 60_000).as_bytes()).unwrap();
    let (call, brk) = (next(), next());
    assert_eq!((call["event"].as_str(), call["cache"].as_str()), (Some("call"), Some("miss")));
    assert_eq!((brk["event"].as_str(), brk["cause"].as_str()), (Some("cache_break"), Some("ttl")));
    assert_eq!(brk["lost_tokens"], 50_000);
    let _ = child.kill();
    let _ = child.wait();
}

#[test]
fn watch_on_file_events_reports_appended_calls_and_breaks_as_they_happen() {
    watch_follows_appends(&[]);
}

#[test]
fn watch_polling_reports_appended_calls_and_breaks_as_they_happen() {
    watch_follows_appends(&["--poll", "--poll-ms", "20"]);
}

/// A Claude Code line: `kind` is `user`/`assistant`/`system`, `extra` more JSON fields.
fn cc_line(kind: &str, ts: &str, extra: &str) -> String {
    format!(r#"{{"type":"{kind}","sessionId":"s1","timestamp":"2026-05-01T10:{ts}Z"{extra}}}"#) + "\n"
}

fn cc_usage(id: &str, input: u64, write: u64, read: u64, out: u64) -> String {
    format!(
        r#","requestId":"r{id}","message":{{"id":"m{id}","model":"claude-sonnet-4-5","usage":{{"input_tokens":{input},"cache_creation_input_tokens":{write},"cache_read_input_tokens":{read},"output_tokens":{out}}}}}"#
    )
}

/// The compaction event carries the size after (the first call after it), the summarizer call's
/// cost (Claude Code's `subagents/agent-acompact-*.jsonl`) and the cache rebuild (that call's
/// writes), priced as `usage` prices them; a compaction no call followed is reported without
/// them once a minute has passed.
#[test]
fn watch_reports_a_compaction_with_its_size_after_summary_and_rebuild_cost() {
    let d = tempfile::tempdir().unwrap();
    let proj = d.path().join("projects").join("-p");
    std::fs::create_dir_all(proj.join("s1").join("subagents")).unwrap();
    let t = proj.join("s1.jsonl");
    let boundary = |ts: &str, pre: u64| {
        let meta = format!(r#","subtype":"compact_boundary","compactMetadata":{{"trigger":"auto","preTokens":{pre}}}"#);
        cc_line("system", ts, &meta)
    };
    let main = [
        cc_line("assistant", "00:00", &cc_usage("1", 3, 150_000, 0, 100)),
        cc_line("assistant", "01:00", &cc_usage("2", 3, 10_000, 150_000, 100)),
        boundary("04:00", 160_003),
        cc_line("assistant", "05:00", &cc_usage("3", 3, 30_000, 20_000, 100)),
        boundary("20:00", 52_000),
    ];
    std::fs::write(&t, main.concat()).unwrap();
    let summarizer = cc_line("assistant", "03:00", &(cc_usage("s", 3, 0, 160_000, 2_000) + r#","isSidechain":true"#));
    std::fs::write(proj.join("s1").join("subagents").join("agent-acompact-1f.jsonl"), summarizer).unwrap();
    let out = ctxj().args(["watch", "--once", "--from-start", "--format", "ndjson"]).arg(&t).assert().success();
    let events: Vec<serde_json::Value> = String::from_utf8_lossy(&out.get_output().stdout)
        .lines()
        .map(|l| serde_json::from_str(l).unwrap())
        .filter(|v: &serde_json::Value| v["event"] == "compaction")
        .collect();
    assert_eq!(events.len(), 2, "{events:?}");
    let (c, last) = (&events[0], &events[1]);
    assert_eq!((c["pre_tokens"].as_u64(), c["post_tokens"].as_u64()), (Some(160_003), Some(50_003)));
    // Sonnet 4.5: $3 input, $3.75 5-minute write, $0.30 read, $15 output per million.
    let close = |v: &serde_json::Value, x: f64| v.as_f64().is_some_and(|v| (v - x).abs() < 1e-9);
    assert!(close(&c["summary_cost"], (3.0 * 3.0 + 160_000.0 * 0.3 + 2_000.0 * 15.0) / 1e6), "{c}");
    assert!(close(&c["rebuild_cost"], 30_000.0 * 3.75 / 1e6), "{c}");
    assert_eq!(last["pre_tokens"], 52_000);
    assert!(last["post_tokens"].is_null() && last["summary_cost"].is_null() && last["rebuild_cost"].is_null());
}

/// The status line's last break names the cause the transcript's `message.diagnostics` or
/// Claude Code's `prompt_cache.last_miss_cause` reported, and ctxj's own stays in the JSON;
/// `watch`'s `cache_break` carries the transcript's.
#[test]
fn statusline_last_break_names_the_reported_cause() {
    let (_d, t, cache) = session(2);
    let diag = r#"},"diagnostics":{"cache_miss_reason":{"type":"system_changed","cache_missed_input_tokens":30000}}}}"#;
    let miss = cc_line("assistant", "02:00", &cc_usage("9", 3, 40_000, 0, 100)).replacen("}}}", diag, 1);
    std::fs::OpenOptions::new().append(true).open(&t).unwrap().write_all(miss.as_bytes()).unwrap();
    let v: serde_json::Value =
        serde_json::from_slice(&statusline(&t, &cache, &["--format", "json"], None).success().get_output().stdout)
            .unwrap();
    assert_eq!((v["last_break"]["call"].as_u64(), v["last_break"]["cause"].as_str()), (Some(3), None), "{v}");
    assert_eq!(v["last_break"]["reported_cause"], "system_changed");
    let out = ctxj().args(["watch", "--once", "--from-start", "--format", "ndjson"]).arg(&t).assert().success();
    let brk: Vec<serde_json::Value> = String::from_utf8_lossy(&out.get_output().stdout)
        .lines()
        .map(|l| serde_json::from_str(l).unwrap())
        .filter(|v: &serde_json::Value| v["event"] == "cache_break")
        .collect();
    assert_eq!(brk.len(), 1, "{brk:?}");
    assert_eq!((brk[0]["call"].as_u64(), brk[0]["reported_cause"].as_str()), (Some(3), Some("system_changed")));
    let input = format!(
        r#"{{"transcript_path":{},"prompt_cache":{{"warm":true,"last_miss_cause":{{"causes":["tools_changed"]}}}}}}"#,
        serde_json::json!(t)
    );
    let line = statusline(&t, &cache, &["--lines", "1"], Some(input.clone())).success();
    let text = String::from_utf8_lossy(&line.get_output().stdout).into_owned();
    assert!(text.contains("last break #3 tools_changed "), "agrees with ctxj's unexplained break: {text}");
    // The break came a minute after the call before: not an expiry, so this one differs.
    let input = input.replace("tools_changed", "ttl_expired_5m");
    let out = statusline(&t, &cache, &["--format", "json"], Some(input.clone())).success();
    let v: serde_json::Value = serde_json::from_slice(&out.get_output().stdout).unwrap();
    assert_eq!(v["last_break"]["reported_agrees"], false, "{v}");
    let line = statusline(&t, &cache, &["--lines", "1"], Some(input)).success();
    let text = String::from_utf8_lossy(&line.get_output().stdout).into_owned();
    assert!(text.contains("last break #3 ttl_expired_5m? "), "{text}");
    assert_eq!(brk[0]["reported_agrees"], true);
}

/// A new session file beside the followed one (Claude Code's `/clear`) is followed as soon as it
/// appears: on the events path its creation wakes the watcher, and its calls are reported.
#[test]
fn watch_follows_a_new_session_in_the_folder_on_file_events() {
    let (_d, t, cache) = session(2);
    let mut cmd = std::process::Command::new(env!("CARGO_BIN_EXE_ctxj"));
    hermetic(&mut cmd)
        .env("CTXJ_CACHE_DIR", &cache)
        .args(["watch", "--format", "ndjson", "--from-start", "--timeout", "30"])
        .arg(t.parent().unwrap())
        .stdout(std::process::Stdio::piped());
    let mut child = cmd.spawn().unwrap();
    let mut lines = std::io::BufReader::new(child.stdout.take().unwrap()).lines();
    let mut next_call = move || loop {
        let v: serde_json::Value = serde_json::from_str(&lines.next().unwrap().unwrap()).unwrap();
        if v["event"] == "call" {
            return v;
        }
    };
    assert_eq!(next_call()["call"], 1);
    assert_eq!(next_call()["call"], 2);
    let cleared = t.with_file_name("s2.jsonl");
    let started = Instant::now();
    std::fs::write(&cleared, cc_call(7, 50, 0, 20_000)).unwrap();
    let v = next_call();
    assert!(v["session"].as_str().is_some_and(|s| s.ends_with("s2.jsonl")), "{v}");
    assert!(started.elapsed() < Duration::from_secs(5), "found after {:?}", started.elapsed());
    let _ = child.kill();
    let _ = child.wait();
}
