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
