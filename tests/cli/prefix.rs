//! Issue 14 items 1–2: the unrecorded system prompt + tool schemas of imported sessions, and the
//! affine calibration (slope × counted + offset) that fits them.

use std::path::{Path, PathBuf};

use serde_json::Value;

use crate::common::{ctxj, repo, sample, shared_samples};

fn json(args: &[&str], file: &Path) -> Value {
    let out = ctxj().args(args).arg(file).output().expect("runs ctxj");
    assert!(out.status.success(), "{args:?} {}: {}", file.display(), String::from_utf8_lossy(&out.stderr));
    serde_json::from_slice(&out.stdout).expect("JSON")
}

/// (median, p90, worst) of |calibrated error| over the turns after the first with prompt_tokens.
fn stats(file: &Path) -> (f64, f64, f64, usize) {
    let rows = json(&["tokens", "--per-turn", "--json"], file);
    let rows = rows["turns"].as_array().expect("rows");
    let first = rows.iter().position(|r| !r["prompt_tokens"].is_null()).expect("some prompt_tokens");
    let mut e: Vec<f64> =
        rows[first + 1..].iter().filter_map(|r| r["calibrated_error_pct"].as_f64()).map(f64::abs).collect();
    e.sort_by(f64::total_cmp);
    let rank = |q: f64| e[((q * e.len() as f64).ceil() as usize).clamp(1, e.len()) - 1];
    (rank(0.5), rank(0.9), e[e.len() - 1], rows.len())
}

fn bundled_claude_code() -> PathBuf {
    repo().join(
        "sample-journals/transcripts/claude-code/projects/-home-user-demo/d597cea3-543d-431a-9de6-c68f0abb00fb.jsonl",
    )
}

#[test]
fn an_imported_session_carries_its_inferred_prefix_in_tokens() {
    let f = bundled_claude_code();
    let r = json(&["tokens", "--json"], &f);
    let prefix = r["unrecorded_prefix"].as_u64().expect("an inferred prefix");
    assert!((10_000..30_000).contains(&prefix), "{prefix}");
    assert!(r["calibrated"].as_u64().unwrap() > r["raw"].as_u64().unwrap() + prefix / 2);
    let text = ctxj().arg("tokens").arg(&f).output().unwrap();
    let text = String::from_utf8(text.stdout).unwrap();
    assert!(text.contains("system prompt + tool schemas (not recorded) ≈ "), "{text}");
    assert!(text.contains("inferred from usage"), "{text}");
    // Every per-turn row after the first carries it; the fit meets the targets on this session.
    let rows = json(&["tokens", "--per-turn", "--json"], &f);
    assert!(rows["turns"].as_array().unwrap()[1..].iter().all(|r| r["prefix"].as_u64().unwrap() > 10_000));
    let (median, p90, worst, _) = stats(&f);
    assert!(median <= 1.0 && p90 <= 3.0 && worst <= 25.0, "{median} {p90} {worst}");
}

/// Regression (issue 14): the ratio calibrator turned 45 counted tokens against 26,061 reported
/// into ×579 for turn 2 (+2,337 %). The prefix is additive: turn 2 is within a few percent.
#[test]
fn turn_two_of_an_imported_session_is_not_multiplied_by_the_prefix() {
    let rows = json(&["tokens", "--per-turn", "--json"], &bundled_claude_code());
    let t2 = &rows["turns"].as_array().unwrap()[1];
    assert!(t2["multiplier"].as_f64().unwrap() < 2.0, "{t2}");
    assert!(t2["calibrated_error_pct"].as_f64().unwrap().abs() < 5.0, "{t2}");
}

#[test]
fn ctxj_journals_keep_the_ratio_calibration_and_no_prefix() {
    for s in ["bugfix-todo", "long-elision"] {
        let r = json(&["tokens", "--json"], &sample(s));
        assert!(r["unrecorded_prefix"].is_null(), "{s}");
        let rows = json(&["tokens", "--per-turn", "--json"], &sample(s));
        assert!(rows["turns"].as_array().unwrap().iter().all(|r| r["prefix"] == 0), "{s}");
        let cache = json(&["cache", "--per-turn", "--json"], &sample(s));
        assert!(!cache.to_string().contains("unrecorded_prefix"), "{s}");
    }
}

#[test]
fn every_replay_of_an_imported_session_carries_the_same_prefix() {
    let f = bundled_claude_code();
    let cache = json(
        &"cache --per-turn --json --strategy recorded --strategy baseline --strategy sliding-4"
            .split(' ')
            .collect::<Vec<_>>(),
        &f,
    );
    let strategies = cache["strategies"].as_array().expect("strategies");
    assert_eq!(strategies.len(), 3);
    let prefixes: Vec<u64> = strategies
        .iter()
        .flat_map(|s| s["turns"].as_array().unwrap().iter().map(|t| t["unrecorded_prefix"].as_u64().unwrap()))
        .collect();
    assert!(prefixes[0] > 10_000 && prefixes.iter().all(|&p| p == prefixes[0]), "{prefixes:?}");
    // The virtual block is cached like a system block: the second turn reads at least it.
    for s in strategies {
        let t = s["turns"].as_array().unwrap();
        assert!(t[1]["cache_read"].as_u64().unwrap() >= prefixes[0], "{}", s["summary"]["strategy"]);
    }
}

/// The targets on the real sessions of ≥ 5 turns that the journal can explain. Left out,
/// with the reason in docs/tokens-and-cache.md: the Codex sessions (their requests re-send
/// encrypted reasoning journal-v1 cannot hold) and subagents of ≤ 12 turns whose p90 is a single
/// early jump (spotter agent-a2898e3, agent-aa84377).
#[test]
#[cfg_attr(not(ctxj_has_samples), ignore = "needs ../shared/samples (fails under CI=true)")]
fn calibration_meets_the_targets_on_the_shared_samples() {
    let d = shared_samples();
    let cc = d.join("claude-code/projects");
    let sessions = [
        cc.join("spotter/fa812bfe-b295-4cca-9c2f-fdf01028cb46.jsonl"),
        cc.join("spotter/4d5611e5-241a-462a-8d15-5122611a9569.jsonl"),
        cc.join("spotter/fa812bfe-b295-4cca-9c2f-fdf01028cb46/subagents/agent-a93ccab.jsonl"),
        cc.join("spotter/subagent.jsonl"),
        cc.join("agentlogs/crud.jsonl"),
        cc.join("agentlogs/todos.jsonl"),
        d.join("pi/sessions/--Users-badlogic-workspaces-pi-mono--/large-session.jsonl"),
        d.join("pi/sessions/--Users-badlogic-workspaces-pi-mono--/before-compaction.jsonl"),
    ];
    for f in &sessions {
        let (median, p90, worst, turns) = stats(f);
        assert!(turns >= 5, "{}", f.display());
        assert!(
            median <= 1.0 && p90 <= 3.0 && worst <= 25.0,
            "{}: median {median} p90 {p90} worst {worst}",
            f.display()
        );
    }
}
