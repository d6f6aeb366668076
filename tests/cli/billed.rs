//! The session as billed (`cache`'s `as billed` row and `--json` `recorded` object): the
//! provider's own usage priced per message, reconciled with `ctxj usage`, and the recorded cache
//! breaks with each of their causes.

use std::path::{Path, PathBuf};

use serde_json::Value;

use crate::common::{ctxj, files_under, repo, session_with, shared_samples};

fn json_of(args: &[&str], path: &Path) -> Value {
    let out = ctxj().args(args).arg(path).output().unwrap();
    assert!(out.status.success(), "{args:?} {}: {}", path.display(), String::from_utf8_lossy(&out.stderr));
    serde_json::from_slice(&out.stdout).unwrap()
}

fn recorded(path: &Path) -> Value {
    json_of(&["cache", "--json"], path)["recorded"].clone()
}

fn causes(r: &Value) -> Vec<(u64, String)> {
    r["breaks"]
        .as_array()
        .unwrap()
        .iter()
        .map(|b| (b["turn"].as_u64().unwrap(), b["cause"].as_str().unwrap().to_string()))
        .collect()
}

fn cents(x: f64) -> i64 {
    (x * 100.0).round() as i64
}

/// `cache`'s billed cost equals `usage`'s for the same Claude Code file, to the cent.
fn billed_equals_usage(path: &Path) {
    let usage = json_of(&["usage", "--json"], path)["totals"]["cost_usd"].as_f64();
    let billed = recorded(path)["cost"].as_f64();
    assert_eq!(billed.map(cents), usage.map(cents), "{}: billed {billed:?} vs usage {usage:?}", path.display());
}

fn bundled_claude() -> PathBuf {
    repo().join(
        "sample-journals/transcripts/claude-code/projects/-home-user-demo/d597cea3-543d-431a-9de6-c68f0abb00fb.jsonl",
    )
}

/// A journal of calls: (seconds, model, prompt, read, write), each after a user message, with
/// `between[i]` (raw records) written before call i.
fn journal(calls: &[(u32, &str, u64, u64, u64)], between: &[(usize, &str)]) -> String {
    let mut l = vec![
        r#"{"rev":1,"ts":"2026-11-29T10:00:00Z","kind":"session","id":"s","model":"claude-opus-4-6"}"#.to_string()
    ];
    let ts = |x: u32| format!("2026-11-29T10:{:02}:{:02}Z", x / 60, x % 60);
    for (i, &(s, m, p, r, w)) in calls.iter().enumerate() {
        for (_, raw) in between.iter().filter(|(at, _)| *at == i) {
            l.push(raw.replace("REV", &(l.len() + 1).to_string()).replace("TS", &ts(s)));
        }
        l.push(format!(
            r#"{{"rev":{},"ts":"{}","kind":"user","id":"u{i}","text":"question {i}"}}"#,
            l.len() + 1,
            ts(s)
        ));
        l.push(format!(
            r#"{{"rev":{},"ts":"{}","kind":"assistant","id":"a{i}","text":"answer {i}","model":"{m}","usage":{{"prompt_tokens":{p},"cached_tokens":{r},"cache_write_tokens":{w},"completion_tokens":100}}}}"#,
            l.len() + 1,
            ts(s + 2)
        ));
    }
    l.join("\n") + "\n"
}

const OPUS: &str = "claude-opus-4-6";

#[test]
fn bundled_claude_code_breaks_are_ttl_compaction_and_model_switch() {
    let r = recorded(&bundled_claude());
    let c: Vec<String> = causes(&r).into_iter().map(|(_, c)| c).collect();
    assert_eq!(c, ["ttl", "compaction", "model_switch"]);
    for b in r["breaks"].as_array().unwrap() {
        assert!(b["rewritten_tokens"].as_u64().unwrap() > 0 && b["cost"].as_f64().unwrap() > 0.0, "{b}");
    }
    assert_eq!(r["models"].as_array().unwrap().len(), 2, "sonnet, then opus after /model");
    assert!(r["unknown"].as_array().unwrap().is_empty());
}

#[test]
fn billed_cost_equals_usage_on_the_bundled_transcript() {
    billed_equals_usage(&bundled_claude());
}

#[test]
fn a_model_switch_is_priced_per_message() {
    // 10k plain input on opus ($5/M), then 10k on sonnet ($3/M); 100 output tokens each.
    let d = session_with(&journal(&[(0, OPUS, 10_000, 0, 0), (10, "claude-sonnet-4-5", 10_000, 0, 0)], &[]));
    let r = recorded(d.path());
    let want = (10_000.0 * 5.0 + 100.0 * 25.0 + 10_000.0 * 3.0 + 100.0 * 15.0) / 1e6;
    assert!((r["cost"].as_f64().unwrap() - want).abs() < 1e-12, "{r}");
    assert_eq!(r["models"], serde_json::json!(["claude-opus-4-6", "claude-sonnet-4-5"]));
}

#[test]
fn a_shortfall_after_an_append_is_a_provider_break() {
    let d = session_with(&journal(
        &[(0, OPUS, 30_000, 0, 30_000), (10, OPUS, 31_000, 30_000, 1_000), (15, OPUS, 32_000, 20_000, 12_000)],
        &[],
    ));
    let r = recorded(d.path());
    assert_eq!(causes(&r), [(3, "provider".to_string())]);
    let b = &r["breaks"][0];
    assert_eq!(b["rewritten_tokens"], 11_000);
    assert!((b["cost"].as_f64().unwrap() - 11_000.0 * (6.25 - 0.5) / 1e6).abs() < 1e-12);
    let text = ctxj().arg("cache").arg(d.path()).output().unwrap();
    let text = String::from_utf8(text.stdout).unwrap();
    assert!(text.contains("│ as billed"), "{text}");
    assert!(text.contains("turn 3: provider — read 20,000 of 31,000 expected; 11,000 tokens written again"), "{text}");
}

#[test]
fn an_idle_gap_past_the_lifetime_is_a_ttl_break() {
    let d = session_with(&journal(&[(0, OPUS, 30_000, 0, 30_000), (400, OPUS, 31_000, 0, 31_000)], &[]));
    assert_eq!(causes(&recorded(d.path())), [(2, "ttl".to_string())]);
    // The same gap inside the one-hour lifetime is not one: every write was a 1h write.
    let one_hour = journal(&[(0, OPUS, 30_000, 0, 30_000), (400, OPUS, 31_000, 0, 31_000)], &[])
        .replace(r#""cache_write_tokens":30000"#, r#""cache_write_tokens":30000,"cache_write_1h_tokens":30000"#);
    let d = session_with(&one_hour);
    assert_eq!(causes(&recorded(d.path())), [(2, "system_or_tools".to_string())], "not ttl: the 1h cache lives on");
    assert!(one_hour.contains("cache_write_1h_tokens"));
}

#[test]
fn a_compaction_record_between_calls_is_a_compaction_break() {
    let compact = r#"{"rev":REV,"ts":"TS","kind":"compact","trigger":"auto","summary":"the story so far"}"#;
    let d = session_with(&journal(&[(0, OPUS, 30_000, 0, 30_000), (10, OPUS, 8_000, 3_000, 5_000)], &[(1, compact)]));
    assert_eq!(causes(&recorded(d.path())), [(2, "compaction".to_string())]);
}

#[test]
fn a_changed_system_prompt_is_a_system_or_tools_break() {
    let system = r#"{"rev":REV,"ts":"TS","kind":"system","text":"you are a different agent now"}"#;
    let d = session_with(&journal(&[(0, OPUS, 30_000, 0, 30_000), (10, OPUS, 31_000, 5_000, 26_000)], &[(1, system)]));
    assert_eq!(causes(&recorded(d.path())), [(2, "system_or_tools".to_string())]);
}

#[test]
fn an_elided_result_is_a_prefix_change_naming_the_block() {
    let lines = [
        r#"{"rev":1,"ts":"2026-11-29T10:00:00Z","kind":"session","id":"s","model":"claude-opus-4-6"}"#,
        r#"{"rev":2,"ts":"2026-11-29T10:00:01Z","kind":"user","id":"u1","text":"read x"}"#,
        r#"{"rev":3,"ts":"2026-11-29T10:00:02Z","kind":"assistant","id":"a1","text":"","calls":[{"id":"c1","tool":"read","args":{"path":"x"}}],"usage":{"prompt_tokens":20000,"cached_tokens":0,"cache_write_tokens":20000,"completion_tokens":10}}"#,
        r#"{"rev":4,"ts":"2026-11-29T10:00:03Z","kind":"result","call":"c1","tool":"read","text":"a long file","bytes":11}"#,
        r#"{"rev":5,"ts":"2026-11-29T10:00:04Z","kind":"assistant","id":"a2","text":"ok","usage":{"prompt_tokens":30000,"cached_tokens":20000,"cache_write_tokens":10000,"completion_tokens":10}}"#,
        r#"{"rev":6,"ts":"2026-11-29T10:00:05Z","kind":"elide","by":"auto","calls":["c1"]}"#,
        r#"{"rev":7,"ts":"2026-11-29T10:00:06Z","kind":"user","id":"u2","text":"more"}"#,
        r#"{"rev":8,"ts":"2026-11-29T10:00:07Z","kind":"assistant","id":"a3","text":"done","usage":{"prompt_tokens":20500,"cached_tokens":19000,"cache_write_tokens":1500,"completion_tokens":10}}"#,
    ];
    let d = session_with(&(lines.join("\n") + "\n"));
    let r = recorded(d.path());
    assert_eq!(causes(&r), [(3, "prefix_change".to_string())]);
    assert_eq!(r["breaks"][0]["block"], 3, "the result, block 3 as `ctxj show` numbers it");
    assert!(r["breaks"][0]["detail"].as_str().unwrap().contains("result c1"), "{r}");
}

#[test]
fn ctxj_own_usage_leaves_cache_writes_unknown() {
    let r = recorded(&repo().join("sample-journals/bugfix-todo"));
    if r["turns"].as_u64().unwrap() > 0 {
        assert!(r["cache_write"].is_null(), "{r}");
        assert!(r["unknown"].as_array().unwrap().iter().any(|u| u == "cache_write"), "{r}");
    }
}

#[test]
#[cfg_attr(not(ctxj_has_samples), ignore = "needs ../shared/samples (fails under CI=true)")]
fn spotter_turn_44_is_a_provider_break() {
    let f = shared_samples().join("claude-code/projects/spotter/fa812bfe-b295-4cca-9c2f-fdf01028cb46.jsonl");
    let r = recorded(&f);
    let b = r["breaks"].as_array().unwrap().iter().find(|b| b["turn"] == 44).expect("a break at turn 44").clone();
    assert_eq!(b["cause"], "provider");
    assert_eq!(b["cache_read"], 21_496);
    assert!((56_000..=56_500).contains(&b["rewritten_tokens"].as_u64().unwrap()), "{b}");
    assert_eq!(cents(b["cost"].as_f64().unwrap()), 32, "{b}");
    assert_eq!(b["gap_seconds"].as_f64().map(f64::round), Some(5.0), "{b}");
}

#[test]
#[cfg_attr(not(ctxj_has_samples), ignore = "needs ../shared/samples (fails under CI=true)")]
fn billed_cost_equals_usage_on_every_shared_claude_code_file() {
    let files: Vec<PathBuf> = files_under(&shared_samples().join("claude-code"), "jsonl");
    assert!(files.len() >= 5);
    // Claude Code 1.0.x writes its sidechains inside the main file: `usage` counts the file's
    // calls, `cache` the main session's (its side sessions are sessions of their own).
    for f in files.into_iter().filter(|f| !f.ends_with("agentlogs/subagent.jsonl")) {
        billed_equals_usage(&f);
    }
}

#[test]
fn turns_marks_the_recorded_breaks() {
    let out = ctxj().arg("turns").arg(bundled_claude()).output().unwrap();
    let text = String::from_utf8(out.stdout).unwrap();
    for (turn, cause) in [(17, "ttl"), (20, "compaction"), (25, "model_switch")] {
        let row = text.lines().find(|l| l.starts_with(&format!("│ {turn:>4} "))).unwrap_or_else(|| panic!("{text}"));
        assert!(row.contains(&format!("recorded cache break: {cause}")), "{row}");
    }
    assert!(text.contains("3 recorded cache breaks"), "{text}");
    let other = ctxj().args(["turns", "--strategy", "baseline"]).arg(bundled_claude()).output().unwrap();
    assert!(!String::from_utf8(other.stdout).unwrap().contains("recorded cache break"), "only the recorded replay");
}
