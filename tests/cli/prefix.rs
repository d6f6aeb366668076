//! Issue 14 items 1–2: the unrecorded system prompt + tool schemas of imported sessions, and the
//! affine calibration (slope × counted + offset) that fits them.

use std::path::{Path, PathBuf};

use serde_json::Value;

use crate::common::{ctxj, repo, sample, shared_corpus, shared_samples};

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

/// Median, p90 and worst |calibrated error| allowed, in percent.
type Limits = (f64, f64, f64);

/// Shared transcripts that cannot meet a target, each with why (docs/tokens-and-cache.md,
/// "Calibration on every shared transcript") and ceilings at today's figures (median, p90, worst),
/// so that they cannot get worse unnoticed. `None`: not measurable.
const CALIBRATION_EXCEPTIONS: &[(&str, Option<Limits>)] = &[
    // hand-written fixture: its usage figures are not a provider's (25, 45, 78, 25, 45 prompt
    // tokens while the conversation grows from 20 to 489 counted tokens)
    ("claude-code/projects/claude-code-log/representative_messages.jsonl", None),
    // 11 measured turns, so p90 is the second worst: turn 2 (no slope yet) and turn 4 (a 35k jump
    // on a slope learnt from three turns)
    (
        "claude-code/projects/spotter/4d5611e5-241a-462a-8d15-5122611a9569/subagents/agent-a2898e3.jsonl",
        Some((1.0, 5.5, 7.5)),
    ),
    // 8 measured turns, so p90 is the worst: turn 3 adds 18k counted tokens on a slope learnt from
    // two turns 265 tokens apart (clamped at 2.0)
    (
        "claude-code/projects/spotter/fa812bfe-b295-4cca-9c2f-fdf01028cb46/subagents/agent-aa84377.jsonl",
        Some((1.0, 40.0, 40.0)),
    ),
    // turn 11: +27k tokens for 6.7k counted with 3,456 read from cache (the unrecorded tool
    // schemas changed with the reasoning effort); nothing in the rollout sizes it. Turn 12 on are
    // re-anchored (issue 28 item 5). It is also a new task's first call, which drops the 2.4k
    // tokens of the first task's reasoning (docs/tokens-and-cache.md, "Reasoning the agent sends
    // back"): −31.7 % → −35.2 %, while the median and p90 fell to 0.09 % / 0.81 %
    (
        "codex/sessions/2026/02/23/rollout-2026-02-23T12-54-34-019c8a59-e9dd-71f0-9ae3-4079fe9726a9.jsonl",
        Some((0.1, 1.0, 35.5)),
    ),
];

/// Issue 14's targets (turns 2 onwards: median ≤ 1 %, p90 ≤ 3 %, worst ≤ 25 %) on EVERY shared
/// real transcript of ≥ 5 turns (Claude Code projects with their subagent files, Codex, pi), the
/// same figures `scripts/calibration` prints; the exceptions above are held to their ceilings.
#[test]
#[cfg_attr(
    not(ctxj_has_samples),
    ignore = "needs ../shared/samples (fails under CI=true; once it is there, `touch build.rs`)"
)]
fn calibration_meets_the_targets_on_every_shared_sample() {
    let d = shared_samples();
    let mut measured = Vec::new();
    for f in crate::common::files_under(&d, "jsonl") {
        let name = f.strip_prefix(&d).unwrap().to_string_lossy().into_owned();
        let exception = CALIBRATION_EXCEPTIONS.iter().find(|(n, _)| *n == name).map(|(_, c)| *c);
        if exception == Some(None) {
            continue;
        }
        let rows = json(&["tokens", "--per-turn", "--json"], &f);
        if rows["turns"].as_array().expect("rows").len() < 5 {
            continue;
        }
        let (median, p90, worst, _) = stats(&f);
        let (m, p, w) = exception.flatten().unwrap_or((1.0, 3.0, 25.0));
        assert!(
            median <= m && p90 <= p && worst <= w,
            "{name}: median {median:.2} p90 {p90:.2} worst {worst:.2} (limits {m} / {p} / {w})"
        );
        measured.push(name);
    }
    for (name, _) in CALIBRATION_EXCEPTIONS {
        assert!(d.join(name).is_file(), "stale exception: {name}");
    }
    assert!(measured.len() >= 12, "{measured:?}");
    for agent in ["claude-code/", "codex/", "pi/", "/subagents/"] {
        assert!(measured.iter().any(|n| n.contains(agent)), "no {agent} file measured: {measured:?}");
    }
}

/// The corpus files that do not meet the targets yet, with today's figures as ceilings (issue
/// 28 item 5 is open on them: docs/tokens-and-cache.md, "Calibration on every shared
/// transcript"), so that they cannot get worse unnoticed.
const CORPUS_CALIBRATION_CEILINGS: &[(&str, Limits)] = &[
    // turn 11: −31.8 %, the provider counts 29.7k more for 159 more counted tokens (content the
    // format does not record); nothing before it sizes that. Turn 12 on are re-anchored.
    ("claude-code/projects/spotter-2/8463c716-a2ea-4c14-9efa-87158ebd9f20.jsonl", (0.2, 0.8, 32.0)),
    (
        "claude-code/projects/spotter-2/8463c716-a2ea-4c14-9efa-87158ebd9f20/subagents/agent-a7be2f0.jsonl",
        (1.1, 3.0, 3.0),
    ),
    // 17 measured turns, p90 is the second worst (turns 16-17: 4-6 %)
    (
        "claude-code/projects/spotter-subagent-only/6c2214d7-b87e-4432-8e41-22ba294ea584/subagents/agent-afc096d.jsonl",
        (1.0, 4.5, 6.5),
    ),
    // 6 measured turns of Codex 0.66: turn 4 +3.0 % (+5.2 % before the carried reasoning)
    (
        "codex/sessions/2025/12/09/rollout-2025-12-09T19-55-16-019b04ae-b1c6-7c72-a134-a4c2de66058c.jsonl",
        (1.0, 3.1, 3.1),
    ),
];

/// Issue 28: the same targets on every Claude Code, Codex and pi transcript of the shared corpus
/// with ≥ 5 turns (`scripts/calibration` prints the same rows); the files above are held to
/// their ceilings.
#[test]
#[cfg_attr(
    not(ctxj_has_corpus),
    ignore = "needs ../shared/corpus (fails under CI=true; once it is there, `touch build.rs`)"
)]
fn calibration_meets_the_targets_on_every_corpus_transcript() {
    let d = shared_corpus();
    let mut measured = Vec::new();
    for agent in ["claude-code", "codex", "pi"] {
        for f in crate::common::files_under(&d.join(agent), "jsonl") {
            let name = f.strip_prefix(&d).unwrap().to_string_lossy().into_owned();
            let rows = json(&["tokens", "--per-turn", "--json"], &f);
            let turns = rows["turns"].as_array().expect("rows");
            if turns.len() < 5 || turns.iter().all(|t| t["prompt_tokens"].is_null()) {
                continue;
            }
            let (median, p90, worst, _) = stats(&f);
            let ceiling = CORPUS_CALIBRATION_CEILINGS.iter().find(|(n, _)| *n == name).map(|(_, c)| *c);
            let (m, p, w) = ceiling.unwrap_or((1.0, 3.0, 25.0));
            assert!(
                median <= m && p90 <= p && worst <= w,
                "{name}: median {median:.2} p90 {p90:.2} worst {worst:.2} (limits {m} / {p} / {w})"
            );
            measured.push(name);
        }
    }
    for (name, _) in CORPUS_CALIBRATION_CEILINGS {
        assert!(d.join(name).is_file(), "stale ceiling: {name}");
    }
    // Issue 28 item 5: the rewrite's turn is said to be extrapolated, and the next call is
    // re-anchored on it (it was −15.3 % with the step read as a slope).
    let rewrite =
        CORPUS_CALIBRATION_CEILINGS.iter().find(|(n, _)| n.ends_with("/8463c716-a2ea-4c14-9efa-87158ebd9f20.jsonl"));
    let f = d.join(rewrite.expect("8463c716 is held to a ceiling").0);
    let rows = json(&["tokens", "--per-turn", "--json"], &f);
    let t = rows["turns"].as_array().expect("rows");
    assert_eq!(t[10]["turn"], 11);
    assert_eq!((t[9]["extrapolated"].as_bool(), t[10]["extrapolated"].as_bool()), (Some(false), Some(true)));
    assert_eq!(t[11]["extrapolated"], false);
    assert!(t[11]["calibrated_error_pct"].as_f64().unwrap().abs() < 1.0, "{}", t[11]);
    let text = String::from_utf8(ctxj().args(["tokens", "--per-turn"]).arg(&f).output().unwrap().stdout).unwrap();
    assert!(text.contains("* extrapolated (") && text.contains("turns 11,"), "{text}");
    assert!(measured.len() >= 12, "{measured:?}");
}

/// Regression (unseen sweep 2, Codex Desktop 0.118–0.142 rollouts): a `session_meta` with
/// `dynamic_tools` (the app's few extra tools) made the session look as if it recorded its tool
/// schemas, so it got the ratio calibration and no prefix — while Codex's built-in tools, sent
/// with every request, are never recorded. After a compaction the ratio fit missed by −42 % and
/// the simulated `recorded` cost by −18 … −42 %.
#[test]
fn regression_codex_dynamic_tools_made_the_unrecorded_prefix_look_recorded() {
    let d = tempfile::tempdir().unwrap();
    let f = d.path().join("rollout-2026-04-01T00-00-00-019d0000-0000-7000-8000-00000000d710.jsonl");
    let mut lines = vec![
        r#"{"timestamp":"2026-04-01T00:00:00.000Z","type":"session_meta","payload":{"id":"019d0000-0000-7000-8000-00000000d710","cwd":"/repo","originator":"Codex Desktop","cli_version":"0.118.0","source":"vscode","model_provider":"openai","base_instructions":{"text":"You are Codex."},"dynamic_tools":[{"name":"automation_update","description":"Render an automation card.","inputSchema":{"type":"object","properties":{}}}]}}"#.to_string(),
        r#"{"timestamp":"2026-04-01T00:00:00.100Z","type":"turn_context","payload":{"model":"gpt-5.4"}}"#.into(),
    ];
    // Each call: a user message of ~500 counted tokens; the provider counts them plus 12,000
    // tokens of built-in tool schemas and instructions the rollout does not hold.
    let mut total = 0;
    for i in 0..8u64 {
        let text = format!("step {i}: {}", "read the parser module and list what it drops. ".repeat(50));
        lines.push(format!(
            r#"{{"timestamp":"2026-04-01T00:0{i}:01.000Z","type":"response_item","payload":{{"type":"message","role":"user","content":[{{"type":"input_text","text":"{text}"}}]}}}}"#
        ));
        lines.push(format!(
            r#"{{"timestamp":"2026-04-01T00:0{i}:02.000Z","type":"response_item","payload":{{"type":"message","role":"assistant","content":[{{"type":"output_text","text":"noted {i}"}}]}}}}"#
        ));
        let input = 12_000 + 510 * (i + 1);
        total += input;
        lines.push(format!(
            r#"{{"timestamp":"2026-04-01T00:0{i}:03.000Z","type":"event_msg","payload":{{"type":"token_count","info":{{"total_token_usage":{{"input_tokens":{total}}},"last_token_usage":{{"input_tokens":{input},"cached_input_tokens":0,"output_tokens":5}}}}}}}}"#
        ));
    }
    std::fs::write(&f, lines.join("\n") + "\n").unwrap();
    let rows = json(&["tokens", "--per-turn", "--json"], &f);
    let last = rows["turns"].as_array().unwrap().last().unwrap().clone();
    assert!(last["prefix"].as_u64().unwrap() > 8_000, "the built-in tools are an unrecorded prefix: {last}");
    let (median, _, worst, _) = stats(&f);
    assert!(median <= 1.0 && worst <= 25.0, "{median} {worst}");
}
