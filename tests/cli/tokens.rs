//! `ctxj tokens`, `ctxj cache`, `ctxj budget` (issue 4).

use serde_json::Value;

use crate::common::{ctxj, sample, samples, session_with};

fn json_of(out: &[u8]) -> Value {
    serde_json::from_slice(out).expect("valid JSON output")
}

/// A journal whose one tool result is a million spaces (plain tiktoken overflows its stack on
/// that), plus a model switch before turn 2.
fn million_spaces() -> String {
    let spaces = " ".repeat(1_000_000);
    [
        r#"{"rev":1,"ts":"2026-11-29T10:00:00Z","kind":"session","id":"spaces","model":"anthropic/claude-sonnet-4-5","ctx":{"ctx_window":200000,"context_budget":100000,"context_reserve":8192,"context_target":70000,"keep_results":5}}"#.to_string(),
        r#"{"rev":2,"ts":"2026-11-29T10:00:00Z","kind":"system","text":"You are a coding agent."}"#.into(),
        r#"{"rev":3,"ts":"2026-11-29T10:00:01Z","kind":"user","id":"u1","text":"print the file"}"#.into(),
        r#"{"rev":4,"ts":"2026-11-29T10:00:02Z","kind":"assistant","id":"a1","text":"","calls":[{"id":"c1","tool":"read","args":{"path":"blank.txt"}}],"usage":{"prompt_tokens":40,"completion_tokens":12}}"#.into(),
        format!(r#"{{"rev":5,"ts":"2026-11-29T10:00:03Z","kind":"result","call":"c1","tool":"read","text":"{spaces}","bytes":1000000}}"#),
        r#"{"rev":6,"ts":"2026-11-29T10:00:04Z","kind":"model","model":"openai/gpt-5","ctx":{"ctx_window":400000,"context_budget":200000,"context_reserve":8192,"context_target":140000,"keep_results":5}}"#.into(),
        r#"{"rev":7,"ts":"2026-11-29T10:00:05Z","kind":"assistant","id":"a2","text":"It is blank."}"#.into(),
    ]
    .join("\n")
        + "\n"
}

#[test]
fn a_million_space_result_is_counted_without_a_crash() {
    let d = session_with(&million_spaces());
    let out = ctxj().args(["tokens", "--json"]).arg(d.path()).output().unwrap();
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
    let j = json_of(&out.stdout);
    let results = j["parts"].as_array().unwrap().iter().find(|p| p["part"] == "tool results").unwrap();
    // 122 pieces of 8192 spaces (64 tokens each) + 576 spaces (5 tokens), + 4 framing.
    assert_eq!(results["tokens"], 122 * 64 + 5 + 4);
    let out =
        ctxj().args(["cache", "--strategy", "baseline", "--strategy", "truncate-200"]).arg(d.path()).output().unwrap();
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
    let out = ctxj().args(["tokens", "--per-turn"]).arg(d.path()).output().unwrap();
    assert!(out.status.success());
}

#[test]
fn settings_follow_a_runtime_model_switch() {
    let d = session_with(&million_spaces());
    let at = |turn: &str| {
        let out = ctxj().args(["tokens", "--json", "--at", "turn", turn]).arg(d.path()).output().unwrap();
        assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
        json_of(&out.stdout)
    };
    let (t1, t2) = (at("1"), at("2"));
    assert_eq!(
        (t1["model"].as_str(), t1["settings"]["context_budget"].as_u64()),
        (Some("anthropic/claude-sonnet-4-5"), Some(100_000))
    );
    assert_eq!(
        (t2["model"].as_str(), t2["settings"]["context_budget"].as_u64()),
        (Some("openai/gpt-5"), Some(200_000))
    );
    // Turn 1's estimate calibrates turn 2: multiplier = 40 / raw(turn 1).
    let raw1 = t1["raw"].as_f64().unwrap();
    assert!((t2["multiplier"].as_f64().unwrap() - 40.0 / raw1).abs() < 1e-9);
}

#[test]
fn parts_the_journal_lacks_are_not_recorded() {
    let d = session_with(concat!(
        r#"{"rev":1,"ts":"2026-11-29T10:00:00Z","kind":"session","id":"imp","model":"claude-opus-4-5"}"#,
        "\n",
        r#"{"rev":2,"ts":"2026-11-29T10:00:01Z","kind":"user","id":"u1","text":"hi"}"#,
        "\n",
        r#"{"rev":3,"ts":"2026-11-29T10:00:02Z","kind":"assistant","id":"a1","text":"hello"}"#,
        "\n"
    ));
    let out = ctxj().args(["tokens"]).arg(d.path()).output().unwrap();
    assert!(out.status.success());
    let s = String::from_utf8(out.stdout).unwrap();
    assert!(s.lines().any(|l| l.contains("system prompt") && l.contains("not recorded")), "{s}");
    assert!(s.lines().any(|l| l.contains("tool schemas") && l.contains("not recorded")), "{s}");
    assert!(s.contains("budget: not recorded"), "{s}");
    let out = ctxj().args(["tokens", "--json"]).arg(d.path()).output().unwrap();
    let j = json_of(&out.stdout);
    assert_eq!(j["parts"][0]["tokens"], Value::Null);
    assert_eq!(j["parts"][0]["recorded"], false);
    // user (4 + 1) + assistant (4 + 1) + framing 3.
    assert_eq!(j["raw"], 13);
}

#[test]
fn breakdown_parts_add_up_to_the_total() {
    for name in samples() {
        let out = ctxj().args(["tokens", "--json"]).arg(sample(&name)).output().unwrap();
        assert!(out.status.success(), "{name}: {}", String::from_utf8_lossy(&out.stderr));
        let j = json_of(&out.stdout);
        let sum: u64 = j["parts"].as_array().unwrap().iter().filter_map(|p| p["tokens"].as_u64()).sum();
        assert_eq!(Some(sum), j["raw"].as_u64(), "{name}");
        let by_tool: u64 = j["results_by_tool"].as_array().unwrap().iter().map(|t| t["tokens"].as_u64().unwrap()).sum();
        let results = j["parts"].as_array().unwrap().iter().find(|p| p["part"] == "tool results").unwrap();
        assert_eq!(Some(by_tool), results["tokens"].as_u64(), "{name}");
    }
}

#[test]
fn per_turn_totals_add_up_to_the_summary_row() {
    for name in samples() {
        for cache in ["openai", "anthropic"] {
            let out = ctxj()
                .args(["cache", "--per-turn", "--json", "--cache", cache, "--model", "anthropic/claude-sonnet-4-5"])
                .args(["--strategy", "recorded", "--strategy", "baseline"])
                .arg(sample(&name))
                .output()
                .unwrap();
            assert!(out.status.success(), "{name}: {}", String::from_utf8_lossy(&out.stderr));
            let j = json_of(&out.stdout);
            for s in j["strategies"].as_array().unwrap() {
                let m = &s["summary"];
                let turns = s["turns"].as_array().unwrap();
                for k in ["prompt", "cache_read", "new", "cache_write", "output"] {
                    let sum: u64 = turns.iter().map(|t| t[k].as_u64().unwrap()).sum();
                    assert_eq!(Some(sum), m[k].as_u64(), "{name} {cache} {k}");
                }
                let cost: f64 = turns.iter().map(|t| t["cost"].as_f64().unwrap()).sum();
                assert!((cost - m["cost"].as_f64().unwrap()).abs() < 1e-9, "{name} {cache} cost");
                let peak = turns.iter().map(|t| t["prompt"].as_u64().unwrap()).max().unwrap_or(0);
                assert_eq!(Some(peak), m["peak_prompt"].as_u64());
                let breaks = turns.iter().filter(|t| t["break"] == true).count() as u64;
                assert_eq!(Some(breaks), m["breaks"].as_u64());
                assert_eq!(
                    m["new"].as_u64().unwrap() + m["cache_read"].as_u64().unwrap(),
                    m["prompt"].as_u64().unwrap()
                );
            }
            // The table's total row shows the same figures.
            let out = ctxj()
                .args(["cache", "--per-turn", "--cache", cache, "--strategy", "baseline"])
                .arg(sample(&name))
                .output()
                .unwrap();
            assert!(out.status.success());
        }
    }
}

#[test]
fn baseline_hits_the_ideal_cache_at_least_as_well_as_sliding() {
    let names = samples();
    assert!(!names.is_empty(), "sample-journals/ holds samples");
    for name in names {
        let out = ctxj()
            .args(["cache", "--json", "--cache", "ideal", "--strategy", "baseline", "--strategy", "sliding-8"])
            .arg(sample(&name))
            .output()
            .unwrap();
        assert!(out.status.success(), "{name}: {}", String::from_utf8_lossy(&out.stderr));
        let j = json_of(&out.stdout);
        let rate = |i: usize| j["strategies"][i]["summary"]["cache_hit"].as_f64().unwrap();
        assert!(rate(0) >= rate(1), "{name}: baseline {} < sliding-8 {}", rate(0), rate(1));
        // Baseline only ever appends: no cache break.
        assert_eq!(j["strategies"][0]["summary"]["breaks"], 0, "{name}");
    }
}

#[test]
fn cache_table_snapshot() {
    let out = ctxj()
        .args(["cache", "--strategy", "recorded", "--strategy", "baseline", "--strategy", "sliding-8"])
        .arg(sample("bugfix-todo"))
        .output()
        .unwrap();
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
    insta::assert_snapshot!("cache_bugfix_todo", String::from_utf8(out.stdout).unwrap());
    let out = ctxj()
        .args(["cache", "--per-turn", "--cache", "openai", "--model", "gpt-4.1"])
        .arg(sample("long-elision"))
        .output()
        .unwrap();
    assert!(out.status.success());
    insta::assert_snapshot!("cache_long_elision_per_turn", String::from_utf8(out.stdout).unwrap());
}

#[test]
fn tokens_table_snapshot() {
    let out = ctxj().args(["tokens"]).arg(sample("bugfix-todo")).output().unwrap();
    assert!(out.status.success());
    insta::assert_snapshot!("tokens_bugfix_todo", String::from_utf8(out.stdout).unwrap());
    let out = ctxj()
        .args(["tokens", "--per-turn", "--encoding", "cl100k_base"])
        .arg(sample("long-elision"))
        .output()
        .unwrap();
    assert!(out.status.success());
    insta::assert_snapshot!("tokens_long_elision_per_turn", String::from_utf8(out.stdout).unwrap());
}

#[test]
fn prices_from_a_litellm_file() {
    let d = tempfile::tempdir().unwrap();
    let p = d.path().join("prices.json");
    std::fs::write(
        &p,
        r#"{"claude-sonnet-4-5": {"input_cost_per_token": 1e-06, "output_cost_per_token": 0,
            "cache_read_input_token_cost": 0, "cache_creation_input_token_cost": 1e-06}}"#,
    )
    .unwrap();
    let out = ctxj()
        .args(["cache", "--json", "--strategy", "baseline", "--prices"])
        .arg(&p)
        .arg(sample("bugfix-todo"))
        .output()
        .unwrap();
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
    let j = json_of(&out.stdout);
    let m = &j["strategies"][0]["summary"];
    // $1 per million uncached (written) tokens, cached and output free.
    let want = m["new"].as_f64().unwrap() / 1e6;
    assert!((m["cost"].as_f64().unwrap() - want).abs() < 1e-12);
    std::fs::write(&p, "not json").unwrap();
    ctxj().args(["cache", "--prices"]).arg(&p).arg(sample("bugfix-todo")).assert().code(2);
}

#[test]
fn usage_errors_exit_2() {
    ctxj().args(["tokens", "--encoding", "p50k_base"]).arg(sample("bugfix-todo")).assert().code(2);
    ctxj().args(["cache", "--cache", "lru"]).arg(sample("bugfix-todo")).assert().code(2);
    ctxj().args(["cache", "--strategy", "nonsense-3"]).arg(sample("bugfix-todo")).assert().code(2);
    ctxj().args(["tokens", "--at", "turn", "999"]).arg(sample("bugfix-todo")).assert().code(2);
}

#[test]
fn budget_explains_every_rule() {
    let d = tempfile::tempdir().unwrap();
    let p = d.path().join("harness.toml");
    std::fs::write(
        &p,
        r#"
ctx_window = 1000000
context_budget = 150000
context_reserve = 8192
context_target = 0
keep_results = 5

[models."vendor/"]
ctx_window = 200000

[models."vendor/model"]
context_budget = 500000
context_target = 350000
"#,
    )
    .unwrap();
    let out = ctxj().args(["budget", "--json", "--model", "vendor/model-x", "--config"]).arg(&p).output().unwrap();
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
    let j = json_of(&out.stdout);
    assert_eq!(j["profile"], "vendor/model");
    let v =
        |k: &str| j["settings"].as_array().unwrap().iter().find(|s| s["key"] == k).unwrap()["value"].as_u64().unwrap();
    assert_eq!(v("ctx_window"), 1_000_000, "the longest profile only");
    assert_eq!(v("context_budget"), 150_000, "the explicit top-level budget beats the profile");
    assert_eq!(v("context_target"), 105_000, "350000 ≥ 150000: replaced by 70%");
    assert_eq!(j["problems"].as_array().unwrap().len(), 1);
    let out = ctxj()
        .current_dir(d.path())
        .args(["budget", "--model", "vendor/model-x", "--config", "harness.toml"])
        .output()
        .unwrap();
    insta::assert_snapshot!("budget_conflict", String::from_utf8(out.stdout).unwrap());
    std::fs::write(&p, "ctx_window = -5\n").unwrap();
    ctxj().args(["budget", "--model", "m", "--config"]).arg(&p).assert().code(2);
    ctxj().args(["budget", "--model", "m", "--config"]).arg(d.path().join("missing.toml")).assert().code(2);
}

#[test]
fn regression_budget_and_audit_agree_on_a_budget_above_the_window() {
    // The settings of tests/data/invalid/budget-over-window.jsonl: `audit` calls them an error, so
    // `budget` on the same settings reports it and exits 1; one setting less, both are clean.
    let d = tempfile::tempdir().unwrap();
    let p = d.path().join("harness.toml");
    std::fs::write(&p, "ctx_window = 4000\ncontext_budget = 3600\ncontext_reserve = 500\ncontext_target = 600\n")
        .unwrap();
    let out = ctxj().args(["budget", "--json", "--model", "vendor/model-x", "--config"]).arg(&p).output().unwrap();
    assert_eq!(out.status.code(), Some(1), "{}", String::from_utf8_lossy(&out.stderr));
    let j = json_of(&out.stdout);
    assert!(
        j["problems"].as_array().unwrap().iter().any(|x| x.as_str().unwrap().contains("budget-over-window")),
        "{j}"
    );
    let journal = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/data/invalid/budget-over-window.jsonl");
    ctxj().args(["audit", "--harness", "ctxj"]).arg(&journal).assert().code(1);
    std::fs::write(&p, "ctx_window = 4000\ncontext_budget = 3500\ncontext_reserve = 500\ncontext_target = 600\n")
        .unwrap();
    ctxj().args(["budget", "--model", "vendor/model-x", "--config"]).arg(&p).assert().code(0);
}
