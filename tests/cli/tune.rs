//! Issue 34: `ctxj tune`. Retention on a hand-made session whose needed-and-dropped events are
//! known; the named points of every harness; the sweep over the shared transcripts.

use serde_json::Value;

use crate::common::*;

/// Five reads of ~1,400 tokens each (turns 1–5), an edit of the first file (turn 6: demands the
/// read of turn 1), a second read of the fifth file (turn 7: demands the read of turn 5), an
/// answer (turn 8).
fn fixture() -> String {
    let mut lines = vec![
        r#"{"rev":1,"ts":"2026-11-29T14:00:00.000Z","kind":"session","id":"tune-fixture","model":"anthropic/claude-sonnet-4-5","harness":"fixture","ctx":{"ctx_window":10000}}"#.to_string(),
        r#"{"rev":2,"ts":"2026-11-29T14:00:00.000Z","kind":"system","text":"You edit files."}"#.to_string(),
        r#"{"rev":3,"ts":"2026-11-29T14:00:01.000Z","kind":"user","id":"u_1","text":"Fix the bug."}"#.to_string(),
    ];
    let mut rev = 4;
    let mut push = |kind: &str, body: String, lines: &mut Vec<String>| {
        lines.push(format!(r#"{{"rev":{rev},"ts":"2026-11-29T14:00:{:02}.000Z","kind":"{kind}",{body}}}"#, rev % 60));
        rev += 1;
    };
    let files = ["a", "b", "c", "d", "e"];
    for (i, f) in files.iter().enumerate() {
        let k = i + 1;
        push(
            "assistant",
            format!(
                r#""id":"a_{k}","text":"","calls":[{{"id":"call_{k}","tool":"read_file","args":{{"path":"src/{f}.ts"}}}}]"#
            ),
            &mut lines,
        );
        let text: Vec<String> = (0..700).map(|w| format!("{f}{w}")).collect();
        push("result", format!(r#""call":"call_{k}","tool":"read_file","text":"{}""#, text.join(" ")), &mut lines);
    }
    push(
        "assistant",
        r#""id":"a_6","text":"","calls":[{"id":"call_6","tool":"write_file","args":{"path":"src/a.ts","content":"fixed"}}]"#.into(),
        &mut lines,
    );
    push("result", r#""call":"call_6","tool":"write_file","text":"ok""#.into(), &mut lines);
    push(
        "assistant",
        r#""id":"a_7","text":"","calls":[{"id":"call_7","tool":"read_file","args":{"path":"src/e.ts"}}]"#.into(),
        &mut lines,
    );
    push("result", r#""call":"call_7","tool":"read_file","text":"e again""#.into(), &mut lines);
    push("assistant", r#""id":"a_8","text":"Done."#.to_string() + "\"", &mut lines);
    lines.join("\n") + "\n"
}

fn tune_json(args: &[&str]) -> Value {
    let out = ctxj().arg("tune").args(args).args(["--format", "json"]).output().unwrap();
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
    serde_json::from_slice(&out.stdout).unwrap()
}

fn config(doc: &Value, name: &str) -> usize {
    let configs = doc["configs"].as_array().unwrap();
    configs.iter().position(|c| c["name"] == name).unwrap_or_else(|| panic!("no config {name}: {configs:?}"))
}

#[test]
fn retention_on_a_fixture_with_known_needed_and_dropped_events() {
    let d = session_with(&fixture());
    let doc = tune_json(&[d.path().to_str().unwrap(), "--harness", "journal"]);
    assert_eq!(doc["schema"], "ctxj.tune/1");
    let s = &doc["sessions"][0];
    // Two demands: turn 6 needs call_1 (src/a.ts), turn 7 needs call_5 (src/e.ts); same size.
    assert_eq!(s["demands"], 2, "{s}");
    let demanded = s["demanded_tokens"].as_u64().unwrap();
    // No management keeps both.
    let none = &s["scores"][config(&doc, "journal-none")];
    assert_eq!(none["kept"], demanded);
    assert_eq!(none["dropped"].as_array().unwrap().len(), 0);
    // Budget 3,000, target 2,100, keep 3: the read of turn 1 is elided before turn 6 needs it,
    // the read of turn 5 is among the last three results when turn 7 needs it.
    let tight = &s["scores"][config(&doc, "journal-3k-keep-3")];
    let dropped = tight["dropped"].as_array().unwrap();
    assert_eq!(dropped.len(), 1, "{tight}");
    assert_eq!(dropped[0]["turn"], 6);
    assert_eq!(dropped[0]["source_call"], "call_1");
    assert_eq!(dropped[0]["source_turn"], 1);
    assert_eq!(dropped[0]["artifact"], "src/a.ts");
    assert!(dropped[0]["now"].as_str().unwrap().starts_with("elided"), "{}", dropped[0]);
    let kept = tight["kept"].as_u64().unwrap();
    assert_eq!(kept + dropped[0]["tokens"].as_u64().unwrap(), demanded);
    let r = kept as f64 / demanded as f64;
    assert!((0.45..0.55).contains(&r), "two reads of the same size: {r}");
    // The re-fetch penalty charges the dropped read plus a call at the context of turn 6.
    assert!(tight["refetch_tokens"].as_u64().unwrap() > dropped[0]["tokens"].as_u64().unwrap());
    // The artifact trail: the one edited file's read is gone in the last request.
    assert_eq!(tight["trail_files"], 1);
    assert_eq!(tight["trail_kept"], 0);
    assert_eq!(none["trail_kept"], 1);
}

#[test]
fn penalty_zero_prices_cost_only_and_bad_penalties_are_usage_errors() {
    let d = session_with(&fixture());
    let doc = tune_json(&[d.path().to_str().unwrap(), "--harness", "journal", "--penalty", "0"]);
    for p in doc["points"].as_array().unwrap() {
        assert_eq!(p["penalty"], 0.0);
        assert_eq!(p["effective"], p["cost"]);
    }
    ctxj().args(["tune", d.path().to_str().unwrap(), "--penalty", "-1"]).assert().code(2);
}

#[test]
fn the_table_names_the_recommendation_and_says_the_scores_are_proxies() {
    let d = session_with(&fixture());
    let out = ctxj().args(["tune", d.path().to_str().unwrap(), "--harness", "api"]).output().unwrap();
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
    let text = String::from_utf8(out.stdout).unwrap();
    assert!(text.contains("recommended:") && text.contains("paste:"), "{text}");
    assert!(text.contains("Task success is not measured offline"), "{text}");
    assert!(text.contains("keep-3 (Anthropic default)") && text.contains("masking M=10"), "{text}");
    let csv =
        ctxj().args(["tune", d.path().to_str().unwrap(), "--harness", "api", "--format", "csv"]).output().unwrap();
    let csv = String::from_utf8(csv.stdout).unwrap();
    assert!(csv.lines().next().unwrap().starts_with("config,knob,paste,settable"), "{csv}");
    assert!(csv.contains("context_management"), "{csv}");
}

/// Every harness's sweep over the shared transcripts: its named points, unmanaged replays keep
/// every demanded token, the recorded replay is compared with the bill on every priced session.
#[test]
#[cfg_attr(
    not(ctxj_has_samples),
    ignore = "needs ../shared/samples (fails under CI=true; once it is there, `touch build.rs`)"
)]
fn sweeps_over_the_shared_transcripts_carry_the_named_points() {
    let root = shared_samples();
    for (dir, harness, default, off) in [
        ("claude-code/projects", "claude-code", "cc-default", "cc-off"),
        ("codex/sessions", "codex", "codex-default", ""),
        ("pi/sessions", "pi", "pi-reserve-16384", ""),
    ] {
        let doc = tune_json(&[root.join(dir).to_str().unwrap()]);
        assert_eq!(doc["harness"], harness);
        let named: Vec<&str> = doc["configs"].as_array().unwrap().iter().filter_map(|c| c["named"].as_str()).collect();
        assert!(named.iter().any(|n| n.contains("harness default")), "{harness}: {named:?}");
        assert!(named.iter().any(|n| n.contains("masking M=10")), "{harness}: {named:?}");
        config(&doc, default);
        for s in doc["sessions"].as_array().unwrap() {
            if s["billed_cost"].as_f64().is_some_and(|b| b > 0.0) {
                assert!(s["fidelity"].is_number(), "{harness}: {s}");
            }
            if !off.is_empty() {
                let o = &s["scores"][config(&doc, off)];
                assert_eq!(o["kept"], o["demanded"], "{harness}: unmanaged replay dropped something: {o}");
            }
        }
        assert!(doc["recommendation"]["paste"].is_string(), "{harness}: {}", doc["recommendation"]);
    }
}

/// The sessions whose recorded replay misses the bill by more than 5 %, with the band
/// `docs/tune.md` ("The baseline against the bill") gives and why: every one is billed under the
/// $0.05 floor, and each gap has a cause the record cannot tell the replay.
const FIDELITY_KNOWN: &[(&str, f64, f64)] = &[
    // $0.0002, 2 calls: a hand-made DAG fixture of claude-code-log. Both calls bill
    // `input_tokens: 10` and no cache fields, though the second request repeats the first and
    // appends to it (17 → 25 counted tokens) and a Claude Code request carries a system prompt and
    // tools thousands of tokens long: usage no provider bills.
    ("claude-code-log/dag_compact_after_rewind_preserved.jsonl", 25.0, 40.0),
    // $0.0018: hand-written figures. With no cache read or write anywhere, Anthropic's
    // `input_tokens` is the whole prompt, yet call 3 bills 85 after call 2 billed 200 for a
    // request call 3 repeats and extends; the one priced call (4) bills 168 for 445 counted.
    ("claude-code-log/edge_cases.jsonl", 40.0, 55.0),
    // None else since issue 34: Codex `019b04ae` (−23 %: OpenAI read only the 3,072-token prefix at
    // calls 2, 4, 5 and 6, each loss under the break tolerance) replays the losses the record shows.
];

/// Issue 34's first done-when line: on every shared transcript (samples and corpus, Claude Code,
/// Codex, pi) the replay of the recorded behaviour — the baseline of every point — is within 5 %
/// of the bill, or inside its documented band; and it is the very replay `ctxj cache` simulates
/// as `recorded` (one implementation: `cache::simulate_observed` with the billed environment).
#[test]
#[cfg_attr(
    not(all(ctxj_has_samples, ctxj_has_corpus)),
    ignore = "needs ../shared/samples and ../shared/corpus (fails under CI=true; once they are there, `touch build.rs`)"
)]
fn recorded_replay_is_within_five_percent_of_billed_on_every_shared_session() {
    let (samples, corpus) = (shared_samples(), shared_corpus());
    let mut misses = Vec::new();
    for (agent, dir) in [("claude-code", "projects"), ("codex", "sessions"), ("pi", "sessions")] {
        let roots = [samples.join(agent).join(dir), corpus.join(agent).join(dir)];
        let doc = tune_json(&[roots[0].to_str().unwrap(), roots[1].to_str().unwrap(), "--harness", agent]);
        let sessions = doc["sessions"].as_array().unwrap();
        let mut priced = 0;
        for s in sessions {
            let path = s["path"].as_str().unwrap();
            let (Some(billed), Some(fid)) = (s["billed_cost"].as_f64(), s["fidelity"].as_f64()) else {
                continue;
            };
            priced += 1;
            let gap = 100.0 * fid;
            match FIDELITY_KNOWN.iter().find(|(k, _, _)| path.ends_with(k)) {
                Some((_, lo, hi)) => assert!((*lo..=*hi).contains(&gap), "{path}: {gap:+.1} % left its band"),
                None if gap.abs() > 5.0 => misses.push(format!("{path}: billed ${billed:.4}, replayed {gap:+.1} %")),
                None => {}
            }
            // The baseline is `cache`'s simulated `recorded`, to the last digit.
            let c = ctxj().args(["cache", "--json", "--strategy", "recorded", path]).output().unwrap();
            let c: Value = serde_json::from_slice(&c.stdout).unwrap();
            assert_eq!(c["strategies"][0]["summary"]["cost"], s["recorded_cost"], "{path}");
            assert_eq!(c["recorded"]["cost"], s["billed_cost"], "{path}");
        }
        if agent == "claude-code" {
            // The half trigger beside the D2 memo's −39.4 … −45.7 % input (docs/tune.md): Σ prompt
            // tokens of `cc-half` against `cc-default` over the sessions with a recorded compaction.
            let (half, default, recorded) =
                (config(&doc, "cc-half"), config(&doc, "cc-default"), config(&doc, "recorded"));
            let compacted = sessions.iter().filter(|s| s["scores"][recorded]["compactions"].as_u64() > Some(0));
            let sum = |i: usize| compacted.clone().map(|s| s["scores"][i]["prompt"].as_f64().unwrap()).sum::<f64>();
            let cut = 100.0 * (sum(half) / sum(default) - 1.0);
            assert!((-50.0..=-35.0).contains(&cut), "half trigger: {cut:+.1} % input against the default");
        }
        let want = match agent {
            "claude-code" => 35,
            "codex" => 6,
            _ => 5,
        };
        assert!(priced >= want, "{agent}: {priced} priced sessions");
    }
    assert!(misses.is_empty(), "recorded replay outside 5 % of the bill:\n{}", misses.join("\n"));
}
