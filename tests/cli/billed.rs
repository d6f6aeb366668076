//! The session as billed (`cache`'s `as billed` row and `--json` `recorded` object): the
//! provider's own usage priced per message, reconciled with `ctxj usage`, and the recorded cache
//! breaks with each of their causes.

use std::path::{Path, PathBuf};

use serde_json::Value;

use crate::common::{ctxj, files_under, repo, session_with, shared_corpus, shared_samples};

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
#[cfg_attr(
    not(ctxj_has_samples),
    ignore = "needs ../shared/samples (fails under CI=true; once it is there, `touch build.rs`)"
)]
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
#[cfg_attr(
    not(ctxj_has_samples),
    ignore = "needs ../shared/samples (fails under CI=true; once it is there, `touch build.rs`)"
)]
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

fn bundled_pi() -> PathBuf {
    repo().join("sample-journals/transcripts/pi")
}

fn stdout_of(args: &[&str], path: &Path) -> String {
    let out = ctxj().args(args).arg(path).output().unwrap();
    assert!(out.status.success(), "{args:?}: {}", String::from_utf8_lossy(&out.stderr));
    String::from_utf8(out.stdout).unwrap()
}

#[test]
fn cache_window_flags_every_request_over_it() {
    let v = json_of(&["cache", "-s", "baseline", "--window", "3000", "--json"], &bundled_pi());
    assert_eq!(v["limits"]["window"], serde_json::json!({"tokens": 3000, "source": "flag"}));
    let s = &v["strategies"][0];
    let turns = json_of(&["cache", "-s", "baseline", "--window", "3000", "--json", "--per-turn"], &bundled_pi())
        ["strategies"][0]["turns"]
        .clone();
    let over: Vec<u64> = turns
        .as_array()
        .unwrap()
        .iter()
        .filter(|t| t["over_window"] == true)
        .map(|t| {
            assert!(t["prompt"].as_u64().unwrap() > 3000, "{t}");
            t["turn"].as_u64().unwrap()
        })
        .collect();
    assert!(!over.is_empty() && over.len() < turns.as_array().unwrap().len(), "{over:?}");
    assert_eq!(s["summary"]["limits"]["over_window"], over.len());
    assert_eq!(s["summary"]["limits"]["first_over_window"], over[0]);
    let peak = s["summary"]["peak_prompt"].as_f64().unwrap();
    assert_eq!(s["summary"]["limits"]["peak_vs_window"].as_f64(), Some(peak / 3000.0));
    let text = stdout_of(&["cache", "-s", "baseline", "--window", "3000"], &bundled_pi());
    let want = format!(
        "baseline: over the 3,000-token context window of anthropic/claude-sonnet-4-5 (--window): {} of 13 requests",
        over.len()
    );
    assert!(text.contains(&want), "{text}");
}

#[test]
fn the_window_defaults_to_the_model_and_is_silent_when_no_request_exceeds_it() {
    let v = json_of(&["cache", "--json"], &bundled_pi());
    assert_eq!(v["limits"]["window"], serde_json::json!({"tokens": 200000, "source": "builtin"}));
    assert_eq!(v["limits"]["cache_min"], serde_json::json!({"tokens": 1024, "source": "builtin"}));
    assert_eq!(v["strategies"][0]["summary"]["limits"]["over_window"], 0);
    assert!(!stdout_of(&["cache"], &bundled_pi()).contains("context window"));
}

#[test]
fn a_window_of_zero_or_text_is_a_usage_error() {
    for w in ["0", "big"] {
        let out = ctxj().args(["cache", "--window", w]).arg(bundled_pi()).output().unwrap();
        assert_eq!(out.status.code(), Some(2), "--window {w}");
    }
}

#[test]
fn a_litellm_file_gives_the_window_and_the_cache_minimum() {
    let d = tempfile::tempdir().unwrap();
    let prices = d.path().join("prices.json");
    std::fs::write(
        &prices,
        r#"{"claude-sonnet-4-5": {"input_cost_per_token": 3e-06, "output_cost_per_token": 1.5e-05,
            "max_input_tokens": 2500, "prompt_cache_min_tokens": 2048}}"#,
    )
    .unwrap();
    let args = ["cache", "-s", "baseline", "--json", "--prices", prices.to_str().unwrap()];
    let v = json_of(&args, &bundled_pi());
    assert_eq!(v["limits"]["window"], serde_json::json!({"tokens": 2500, "source": "prices"}));
    assert_eq!(v["limits"]["cache_min"], serde_json::json!({"tokens": 2048, "source": "prices"}));
    assert!(v["strategies"][0]["summary"]["limits"]["over_window"].as_u64().unwrap() > 0);
}

#[test]
fn requests_below_the_cache_minimum_are_counted() {
    // claude-opus-4-6 caches nothing below 4,096 tokens; these requests are a few dozen.
    let d = session_with(&journal(&[(0, OPUS, 3_000, 0, 0), (10, OPUS, 3_100, 0, 0)], &[]));
    let v = json_of(&["cache", "--json", "--per-turn"], d.path());
    assert_eq!(v["limits"]["cache_min"], serde_json::json!({"tokens": 4096, "source": "builtin"}));
    for s in v["strategies"].as_array().unwrap() {
        assert_eq!(s["summary"]["limits"]["below_cache_min"], 2, "{s}");
        assert!(s["turns"].as_array().unwrap().iter().all(|t| t["below_cache_min"] == true));
    }
    let text = stdout_of(&["cache"], d.path());
    assert!(
        text.contains("recorded: below the 4,096-token minimum cacheable prompt of claude-opus-4-6 (built-in list): 2 of 2 requests"),
        "{text}"
    );
}

#[test]
fn turns_json_carries_the_recorded_break_and_the_window_per_turn() {
    let doc = json_of(&["turns", "--json"], &bundled_claude());
    let rows = doc["turns"].as_array().unwrap();
    let breaks: Vec<(u64, &str)> = rows
        .iter()
        .filter(|r| !r["recorded_break"].is_null())
        .map(|r| (r["turn"].as_u64().unwrap(), r["recorded_break"]["cause"].as_str().unwrap()))
        .collect();
    assert_eq!(breaks, [(17, "ttl"), (20, "compaction"), (25, "model_switch")]);
    for r in rows {
        assert!(r["prompt_tokens"].as_u64().unwrap() > 0 && r["over_window"] == false, "{r}");
        if let Some(b) = r["recorded_break"].as_object() {
            assert!(b["rewritten_tokens"].as_u64().unwrap() > 0 && b["cost"].as_f64().unwrap() > 0.0, "{r}");
        }
    }
    let cached = recorded(&bundled_claude());
    assert_eq!(cached["breaks"][0]["cost"], rows[16]["recorded_break"]["cost"], "the same break as cache's");
    let base = json_of(&["turns", "-s", "baseline", "--json"], &bundled_claude());
    assert!(
        base["turns"].as_array().unwrap().iter().all(|r| r["recorded_break"].is_null()),
        "only the recorded replay"
    );
}

#[test]
fn turns_window_marks_the_rows_over_it() {
    let text = stdout_of(&["turns", "-s", "baseline", "--window", "3000"], &bundled_pi());
    let marked = text.lines().filter(|l| l.contains("over the window (")).count();
    let rows = json_of(&["turns", "-s", "baseline", "--window", "3000", "--json"], &bundled_pi());
    let over = rows["turns"].as_array().unwrap().iter().filter(|r| r["over_window"] == true).count();
    assert!(over > 0 && marked == over, "{text}");
    assert!(text.contains(&format!("{over} requests over the 3,000-token context window")), "{text}");
}

#[test]
#[cfg_attr(
    not(ctxj_has_samples),
    ignore = "needs ../shared/samples (fails under CI=true; once it is there, `touch build.rs`)"
)]
fn baseline_on_the_pi_sample_exceeds_the_200k_window() {
    let f = shared_samples().join("pi/sessions/--Users-badlogic-workspaces-pi-mono--/before-compaction.jsonl");
    let v = json_of(&["cache", "--json"], &f);
    assert_eq!(v["limits"]["window"]["tokens"], 200_000);
    let s = |name: &str| {
        v["strategies"].as_array().unwrap().iter().find(|s| s["summary"]["strategy"] == name).unwrap()["summary"]
            .clone()
    };
    assert_eq!(s("recorded")["limits"]["over_window"], 0, "the real requests fit");
    let base = s("baseline");
    assert!(base["limits"]["over_window"].as_u64().unwrap() > 100, "{base}");
    assert!(base["limits"]["peak_vs_window"].as_f64().unwrap() > 1.5, "{base}");
}

#[test]
#[cfg_attr(
    not(ctxj_has_samples),
    ignore = "needs ../shared/samples (fails under CI=true; once it is there, `touch build.rs`)"
)]
fn codex_redacted_rollout_calibrates_within_the_median_and_p90_targets() {
    // Every text of the shared (sanitised) rollouts is a `[REDACTED_TEXT len=N sha=…]` marker;
    // counted as the N characters it replaced, the affine fit meets median ≤ 1 % and p90 ≤ 3 %.
    let f = shared_samples()
        .join("codex/sessions/2026/02/23/rollout-2026-02-23T12-54-34-019c8a59-e9dd-71f0-9ae3-4079fe9726a9.jsonl");
    let text = stdout_of(&["tokens", "--per-turn"], &f);
    // 285 turns after the first with usage, less the calls that ran web searches (their
    // `prompt_tokens` sums several sampling steps: no calibrated error).
    let sampled = (text.lines().find(|l| l.starts_with("server-side tool calls")))
        .map_or(0, |l| l.rsplit("): turn").next().unwrap_or("").split(',').count());
    let over = format!("calibrated |error| over {} turns", 285 - sampled);
    let line = text.lines().find(|l| l.starts_with(&over)).unwrap_or_else(|| panic!("{over}\n{text}"));
    let pct = |key: &str| -> f64 {
        let at = line.find(key).unwrap() + key.len();
        line[at..].split('%').next().unwrap().trim().parse().unwrap()
    };
    assert!(pct("median") <= 1.0 && pct("p90") <= 3.0, "{line}");
}

/// Two calls 400 s apart on a long request; `one_hour`: every write a one-hour write (and the
/// second call reads the first one's back).
fn idle_session(one_hour: bool) -> tempfile::TempDir {
    let h = |w: u64| if one_hour { format!(r#","cache_write_1h_tokens":{w}"#) } else { String::new() };
    let long = "lorem ipsum dolor sit amet ".repeat(600);
    let lines = [
        r#"{"rev":1,"ts":"2026-11-29T10:00:00Z","kind":"session","id":"s","model":"claude-opus-4-6"}"#.to_string(),
        format!(r#"{{"rev":2,"ts":"2026-11-29T10:00:01Z","kind":"user","id":"u1","text":"{long}"}}"#),
        format!(
            r#"{{"rev":3,"ts":"2026-11-29T10:00:02Z","kind":"assistant","id":"a1","text":"ok","usage":{{"prompt_tokens":5000,"cached_tokens":0,"cache_write_tokens":5000{},"completion_tokens":10}}}}"#,
            h(5000)
        ),
        r#"{"rev":4,"ts":"2026-11-29T10:06:40Z","kind":"user","id":"u2","text":"more"}"#.to_string(),
        format!(
            r#"{{"rev":5,"ts":"2026-11-29T10:06:42Z","kind":"assistant","id":"a2","text":"done","usage":{{"prompt_tokens":5100,"cached_tokens":{},"cache_write_tokens":{}{},"completion_tokens":10}}}}"#,
            // What the provider read back: all of it within the hour, nothing after 5 minutes.
            if one_hour { 5000 } else { 0 },
            if one_hour { 100 } else { 5100 },
            h(if one_hour { 100 } else { 5100 })
        ),
    ];
    session_with(&(lines.join("\n") + "\n"))
}

#[test]
fn a_one_hour_session_is_simulated_with_the_one_hour_lifetime_and_price() {
    let sim = |one_hour: bool| {
        let d = idle_session(one_hour);
        json_of(&["cache", "-s", "recorded", "--json", "--per-turn"], d.path())["strategies"][0]["turns"].clone()
    };
    let (five, hour) = (sim(false), sim(true));
    assert_eq!(five[1]["cache_read"], 0, "400 s idle: the 5-minute entry is gone");
    assert!(hour[1]["cache_read"].as_u64().unwrap() > 1000, "the one-hour entry lives: {hour}");
    // Turn 1 writes everything: at 2 × input ($10/M) instead of 1.25 × ($6.25/M).
    let w = hour[0]["cache_write"].as_f64().unwrap();
    let out = hour[0]["output"].as_f64().unwrap();
    assert!((hour[0]["cost"].as_f64().unwrap() - (w * 10.0 + out * 25.0) / 1e6).abs() < 1e-9, "{hour}");
    assert!((five[0]["cost"].as_f64().unwrap() - (w * 6.25 + out * 25.0) / 1e6).abs() < 1e-9, "{five}");
}

#[test]
fn a_break_in_a_one_hour_session_costs_the_one_hour_write_price() {
    let calls = [(0, OPUS, 30_000, 0, 30_000), (10, OPUS, 31_000, 30_000, 1_000), (15, OPUS, 32_000, 20_000, 12_000)];
    let one_hour = journal(&calls, &[])
        .replace(r#""cache_write_tokens":12000"#, r#""cache_write_tokens":12000,"cache_write_1h_tokens":12000"#);
    let b = recorded(session_with(&one_hour).path())["breaks"][0].clone();
    assert_eq!((b["cause"].as_str(), b["rewritten_tokens"].as_u64()), (Some("provider"), Some(11_000)));
    assert!((b["cost"].as_f64().unwrap() - 11_000.0 * (10.0 - 0.5) / 1e6).abs() < 1e-12, "{b}");
}

#[test]
fn the_prefix_part_the_first_call_read_starts_warm_in_every_replay() {
    // An imported session (harness claude-code, no system record): its first call read 15,000
    // tokens of the unrecorded system prompt and tools from a cache warmed before it began.
    let lines = [
        r#"{"rev":1,"ts":"2026-11-29T10:00:00Z","kind":"session","id":"s","model":"claude-opus-4-6","harness":"claude-code"}"#,
        r#"{"rev":2,"ts":"2026-11-29T10:00:01Z","kind":"user","id":"u1","text":"fix the bug"}"#,
        r#"{"rev":3,"ts":"2026-11-29T10:00:02Z","kind":"assistant","id":"a1","text":"looking","usage":{"prompt_tokens":20000,"cached_tokens":15000,"cache_write_tokens":5000,"completion_tokens":10}}"#,
        r#"{"rev":4,"ts":"2026-11-29T10:00:03Z","kind":"user","id":"u2","text":"and the test"}"#,
        r#"{"rev":5,"ts":"2026-11-29T10:00:04Z","kind":"assistant","id":"a2","text":"done","usage":{"prompt_tokens":20010,"cached_tokens":20000,"cache_write_tokens":10,"completion_tokens":10}}"#,
    ];
    let d = session_with(&(lines.join("\n") + "\n"));
    let v = json_of(&["cache", "-s", "recorded", "-s", "baseline", "--json", "--per-turn"], d.path());
    for s in v["strategies"].as_array().unwrap() {
        let t = &s["turns"][0];
        assert!(t["unrecorded_prefix"].as_u64().unwrap() > 15_000, "{t}");
        assert_eq!(t["cache_read"], 15_000, "{}: {t}", s["summary"]["strategy"]);
    }
}

/// Regression (issue 28 item 3): a provider that reports no cache write (OpenAI, GLM through pi)
/// caches every prompt, so a call that reads nothing after one that read nothing is a break, and
/// so is the first call after a second compaction; a provider that shows no cache at all (no read
/// and no write anywhere: a local model) has no breaks.
#[test]
fn misses_after_a_miss_are_breaks_when_the_provider_reports_no_writes() {
    let calls = [
        (0, "gpt-5", 20_000, 0, 0),
        (10, "gpt-5", 21_000, 19_968, 0),
        (20, "gpt-5", 22_000, 0, 0),
        (30, "gpt-5", 23_000, 0, 0),
        (40, "gpt-5", 24_000, 22_912, 0),
    ];
    let d = session_with(&journal(&calls, &[]));
    let r = recorded(d.path());
    // Nothing at all was read: not even the prefix every call shares.
    let floor = "system_or_tools".to_string();
    assert_eq!(causes(&r), [(3, floor.clone()), (4, floor)], "{r}");
    assert_eq!(r["breaks"][1]["expected_read"], 22_000, "the previous call's whole prompt");
    let none = calls.map(|(t, m, p, _, _)| (t, m, p, 0, 0));
    let d = session_with(&journal(&none, &[]));
    assert_eq!(causes(&recorded(d.path())), []);
}

/// (prompt, read, write) of each assistant record of an imported transcript, `None` for a call
/// without usage.
fn usage_of_import(transcript: &Path) -> Vec<Option<(u64, u64, Option<u64>)>> {
    let d = tempfile::tempdir().unwrap();
    let out = ctxj().args(["import", "-o"]).arg(d.path()).arg(transcript).output().unwrap();
    assert!(out.status.success(), "{}: {}", transcript.display(), String::from_utf8_lossy(&out.stderr));
    let text = std::fs::read_to_string(d.path().join("journal.jsonl")).unwrap();
    text.lines()
        .map(|l| serde_json::from_str::<Value>(l).unwrap())
        .filter(|r| r["kind"] == "assistant")
        .map(|r| {
            let u = &r["usage"];
            Some((u["prompt_tokens"].as_u64()?, u["cached_tokens"].as_u64()?, u["cache_write_tokens"].as_u64()))
        })
        .collect()
}

/// Issue 28's criterion: every call whose cache read falls short of what the previous call left
/// (its read + write; its whole prompt while the provider has reported no write) by ≥ 10 % and
/// ≥ 2,048 tokens is a recorded break with a cause, on every Claude Code, Codex and pi transcript
/// of the shared samples and corpus.
#[test]
#[cfg_attr(
    not(ctxj_has_samples),
    ignore = "needs ../shared/samples (fails under CI=true; once it is there, `touch build.rs`)"
)]
#[cfg_attr(
    not(ctxj_has_corpus),
    ignore = "needs ../shared/corpus (fails under CI=true; once it is there, `touch build.rs`)"
)]
fn every_recorded_cache_loss_is_reported_with_a_cause_on_every_shared_transcript() {
    let (samples, corpus) = (shared_samples(), shared_corpus());
    let mut files = files_under(&samples, "jsonl");
    for agent in ["claude-code", "codex", "pi"] {
        files.extend(files_under(&corpus.join(agent), "jsonl"));
    }
    let mut found = 0;
    for f in &files {
        let calls = usage_of_import(f);
        let caches = calls.iter().flatten().any(|&(_, r, w)| r > 0 || w.unwrap_or(0) > 0);
        if !caches {
            continue;
        }
        let reported: std::collections::HashMap<u64, String> = causes(&recorded(f)).into_iter().collect();
        let (mut prev, mut writes) = (None::<u64>, false);
        for (i, c) in calls.iter().enumerate() {
            let Some((prompt, read, write)) = *c else { continue };
            if prompt == 0 {
                continue;
            }
            if let Some(expected) = prev {
                let short = expected.saturating_sub(read);
                if short >= 2_048 && short as f64 >= 0.1 * expected as f64 {
                    let turn = i as u64 + 1;
                    assert!(reported.contains_key(&turn), "{}: turn {turn} read {read} of {expected}", f.display());
                    found += 1;
                }
            }
            writes |= write.unwrap_or(0) > 0;
            // Below 4,096 tokens (the largest minimum cacheable prompt any provider documents) a
            // prompt may not have been cached at all.
            prev = match writes {
                true => Some(read + write.unwrap_or(0)),
                false if prompt >= 4_096 => Some(prompt),
                false => Some(read),
            };
        }
    }
    assert!(found >= 20, "{found} losses across {} files", files.len());
}

/// Issue 30 item 4: a journal-v1 `compact` record had no usage, so a compaction arm never paid for
/// its summarizer call. `compact.usage` (a ctxj extension) is billed by `cache` at the model in
/// force, by the same rule as a turn's usage, without becoming a turn; a mistyped one makes the
/// line invalid for `validate`, as a request's would.
#[test]
fn regression_compact_record_without_a_priced_summarizer_call() {
    let usage =
        r#""usage":{"prompt_tokens":20000,"cached_tokens":4000,"cache_write_tokens":1000,"completion_tokens":100}"#;
    let compact = |u: &str| {
        format!(r#"{{"rev":REV,"ts":"TS","kind":"compact","trigger":"manual","summary":"so far","first_kept":REV{u}}}"#)
    };
    let calls = [(0, OPUS, 30_000, 0, 30_000), (10, OPUS, 8_000, 0, 8_000)];
    let plain = session_with(&journal(&calls, &[(1, &compact(""))]));
    let paid = session_with(&journal(&calls, &[(1, &compact(&format!(",{usage}")))]));
    let (a, b) = (recorded(plain.path()), recorded(paid.path()));
    let field = |v: &Value, k: &str| v[k].clone();
    assert_eq!(field(&a, "summarizer_calls"), 0, "{a}");
    assert_eq!(field(&b, "summarizer_calls"), 1, "{b}");
    assert_eq!(field(&a, "turns"), field(&b, "turns"), "the summarizer call is no turn");
    // the same rule as a turn: a turn with this usage costs what the summarizer call adds
    let turn = session_with(&journal(&[(0, OPUS, 20_000, 4_000, 1_000)], &[]));
    let one = recorded(turn.path());
    let extra = b["cost"].as_f64().unwrap() - a["cost"].as_f64().unwrap();
    let turn_cost = one["cost"].as_f64().unwrap();
    assert!((extra - b["summarizer_cost"].as_f64().unwrap()).abs() < 1e-9, "{b}");
    assert!((extra - turn_cost).abs() < 1e-9, "summarizer {extra} vs the same usage as a turn {turn_cost}");
    // mistyped: a validate error on that line, like a request's usage
    let bad = session_with(&journal(&calls, &[(1, &compact(r#","usage":{"prompt_tokens":"many"}"#))]));
    let out = ctxj().args(["validate", "--json"]).arg(bad.path()).output().unwrap();
    assert_ne!(out.status.code(), Some(0), "{}", String::from_utf8_lossy(&out.stdout));
}
