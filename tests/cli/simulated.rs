//! Issue 14 items 4–5: the simulated strategies against the session as billed — each turn priced
//! and cached at the model that answered it, the provider's unexplained cache losses replayed
//! (`--provider-breaks`), the simulated `recorded` cost within 5 % of the billed one — and
//! `sessions` costing a file as `usage` does.

use std::path::{Path, PathBuf};

use serde_json::Value;

use crate::common::{ctxj, files_under, repo, shared_corpus, shared_samples};

fn json_of(args: &[&str], path: &Path) -> Value {
    let out = ctxj().args(args).arg(path).output().unwrap();
    assert!(out.status.success(), "{args:?} {}: {}", path.display(), String::from_utf8_lossy(&out.stderr));
    serde_json::from_slice(&out.stdout).unwrap()
}

/// The bundled Claude Code transcript: Sonnet 4.5, then Opus 4.5 from turn 25.
fn sonnet_to_opus() -> PathBuf {
    repo().join(
        "sample-journals/transcripts/claude-code/projects/-home-user-demo/d597cea3-543d-431a-9de6-c68f0abb00fb.jsonl",
    )
}

fn gap_pct(sim: f64, billed: f64) -> f64 {
    100.0 * (sim - billed) / billed
}

/// $ of one turn at a price ($/M: input, read, write, output).
fn at(t: &Value, p: (f64, f64, f64, f64)) -> f64 {
    let n = |k: &str| t[k].as_u64().unwrap() as f64;
    ((n("new") - n("cache_write")) * p.0 + n("cache_read") * p.1 + n("cache_write") * p.2 + n("output") * p.3) / 1e6
}

/// Regression (issue 14): the simulated strategies priced the whole Sonnet→Opus run at Sonnet's
/// price, $0.35 against $0.52 billed.
#[test]
fn sonnet_to_opus_transcript_simulates_within_five_percent_each_turn_at_its_model() {
    let f = sonnet_to_opus();
    let c = json_of(&["cache", "--json", "--per-turn", "--strategy", "recorded", "--strategy", "sliding-4"], &f);
    let models = c["environment"]["models"].as_array().unwrap();
    assert_eq!(models.len(), 2, "{models:?}");
    assert!(models[0].as_str().unwrap().contains("sonnet") && models[1].as_str().unwrap().contains("opus"));
    let billed = c["recorded"]["cost"].as_f64().unwrap();
    for s in c["strategies"].as_array().unwrap() {
        let sim = s["summary"]["cost"].as_f64().unwrap();
        let name = s["summary"]["strategy"].as_str().unwrap();
        if name == "recorded" {
            assert!(gap_pct(sim, billed).abs() <= 5.0, "simulated ${sim:.4} vs billed ${billed:.4}");
        }
        let turns = s["turns"].as_array().unwrap();
        const SONNET: (f64, f64, f64, f64) = (3.0, 0.3, 3.75, 15.0);
        const OPUS: (f64, f64, f64, f64) = (5.0, 0.5, 6.25, 25.0);
        // Turns whose write is conversation only (the prefix was read): the 5-minute rate.
        for t in turns.iter().filter(|t| t["cache_read"].as_u64().unwrap() > 15_000) {
            let k = t["turn"].as_u64().unwrap();
            let want = at(t, if k >= 25 { OPUS } else { SONNET });
            let got = t["cost"].as_f64().unwrap();
            assert!((got - want).abs() < 1e-9, "{name} turn {k}: ${got} vs ${want} at its own model");
        }
        // The switch finds Opus's cache cold, as the provider did (turn 25: model_switch).
        let t25 = &turns[24];
        assert_eq!(t25["cache_read"], 0, "{name}: {t25}");
    }
    // `--model` prices every turn as that model: one model, no per-turn list.
    let forced = json_of(&["cache", "--json", "--strategy", "recorded", "--model", "claude-opus-4-5"], &f);
    assert_eq!(forced["environment"]["models"], Value::Array(vec![]));
    assert!(forced["strategies"][0]["summary"]["cost"].as_f64().unwrap() > billed);
}

/// A synthetic pair of calls whose second read nothing 20 s later with the request an append: a
/// `provider` break; the simulation repeats it unless `--provider-breaks ignore`.
#[test]
fn recorded_provider_losses_are_replayed_unless_ignored() {
    let d = tempfile::tempdir().unwrap();
    let f = d.path().join("j.jsonl");
    let big = "lorem ipsum dolor sit amet ".repeat(800);
    let lines = [
        r#"{"rev":1,"ts":"2026-11-29T10:00:00Z","kind":"session","id":"s","model":"claude-opus-4-6"}"#.to_string(),
        format!(r#"{{"rev":2,"ts":"2026-11-29T10:00:00Z","kind":"system","text":"{big}"}}"#),
        r#"{"rev":3,"ts":"2026-11-29T10:00:01Z","kind":"user","id":"u1","text":"one"}"#.into(),
        r#"{"rev":4,"ts":"2026-11-29T10:00:02Z","kind":"assistant","id":"a1","text":"x","usage":{"prompt_tokens":5000,"cached_tokens":0,"cache_write_tokens":5000,"completion_tokens":1}}"#.into(),
        r#"{"rev":5,"ts":"2026-11-29T10:00:20Z","kind":"user","id":"u2","text":"two"}"#.into(),
        r#"{"rev":6,"ts":"2026-11-29T10:00:22Z","kind":"assistant","id":"a2","text":"y","usage":{"prompt_tokens":5010,"cached_tokens":0,"cache_write_tokens":5010,"completion_tokens":1}}"#.into(),
    ];
    std::fs::write(&f, lines.join("\n") + "\n").unwrap();
    let replay = json_of(&["cache", "--json", "--per-turn", "--strategy", "recorded"], &f);
    let breaks = replay["recorded"]["breaks"].as_array().unwrap();
    assert_eq!(breaks.len(), 1);
    assert_eq!(breaks[0]["environment"], true, "{breaks:?}");
    assert_eq!(replay["environment"]["provider_breaks"], "replay");
    assert_eq!(replay["environment"]["replayed_turns"], serde_json::json!([2]));
    let ignore =
        json_of(&["cache", "--json", "--per-turn", "--strategy", "recorded", "--provider-breaks", "ignore"], &f);
    assert_eq!(ignore["environment"]["replayed"], 0);
    let read = |v: &Value| v["strategies"][0]["turns"][1]["cache_read"].as_u64().unwrap();
    assert!(read(&ignore) > 1024, "the simulated cache keeps the system prompt: {}", read(&ignore));
    assert_eq!(read(&replay), 0, "the provider's loss is repeated");
    let cost = |v: &Value| v["strategies"][0]["summary"]["cost"].as_f64().unwrap();
    assert!(cost(&replay) > cost(&ignore));
    let text = ctxj().args(["cache", "--strategy", "recorded"]).arg(&f).output().unwrap();
    let text = String::from_utf8_lossy(&text.stdout);
    assert!(text.contains("1 recorded cache loss(es) that no request change explains replayed"), "{text}");
    let bad = ctxj().args(["cache", "--provider-breaks", "sometimes"]).arg(&f).output().unwrap();
    assert_eq!(bad.status.code(), Some(2));
}

/// The shared samples whose simulated `recorded` cost still misses the billed one by more than
/// 5 %, with the band the docs give (docs/tokens-and-cache.md, "Simulated against billed").
const KNOWN_GAPS: &[(&str, f64, f64)] = &[
    // Hand-written fixture: 168 prompt tokens recorded for 445 counted, one call of four priced.
    ("claude-code-log/edge_cases.jsonl", 40.0, 55.0),
];

/// Every priced shared sample: the plain simulated `recorded` cost within 5 % of the billed cost
/// (the provider's unexplained losses replayed, as by default), or inside its documented band.
#[test]
#[cfg_attr(
    not(ctxj_has_samples),
    ignore = "needs ../shared/samples (fails under CI=true; once it is there, `touch build.rs`)"
)]
fn simulated_recorded_cost_is_within_five_percent_of_billed_on_every_shared_sample() {
    let root = shared_samples();
    let mut checked = 0;
    for f in files_under(&root, "jsonl") {
        let c = json_of(&["cache", "--json", "--strategy", "recorded"], &f);
        let (Some(sim), Some(billed)) =
            (c["strategies"][0]["summary"]["cost"].as_f64(), c["recorded"]["cost"].as_f64())
        else {
            continue;
        };
        let gap = gap_pct(sim, billed);
        let name = f.display().to_string();
        match KNOWN_GAPS.iter().find(|(k, _, _)| name.ends_with(k)) {
            Some((_, lo, hi)) => assert!((*lo..=*hi).contains(&gap), "{name}: {gap:+.1} % left its band"),
            None => assert!(gap.abs() <= 5.0, "{name}: simulated ${sim:.3} vs billed ${billed:.3} ({gap:+.1} %)"),
        }
        checked += 1;
    }
    assert!(checked >= 18, "{checked} priced samples");
}

/// The corpus files whose simulated `recorded` cost misses the billed one by more than 5 %, with
/// their band (docs/tokens-and-cache.md, "Simulated against billed").
const CORPUS_KNOWN_GAPS: &[(&str, f64, f64)] = &[
    // None since issue 34: agent-aac57f5 (−7.7 %, Claude Code's marker before the last 2,326
    // input tokens of call 2) replays the uncached tail the record shows.
];

/// Issue 28: every Claude Code, Codex and pi transcript of the shared corpus billed at ≥ $0.05:
/// the simulated `recorded` cost within 5 % of the billed one, or inside its documented band.
#[test]
#[cfg_attr(
    not(ctxj_has_corpus),
    ignore = "needs ../shared/corpus (fails under CI=true; once it is there, `touch build.rs`)"
)]
fn simulated_recorded_cost_is_within_five_percent_of_billed_on_every_corpus_transcript() {
    let root = shared_corpus();
    let mut checked = Vec::new();
    for agent in ["claude-code", "codex", "pi"] {
        for f in files_under(&root.join(agent), "jsonl") {
            let c = json_of(&["cache", "--json", "--strategy", "recorded"], &f);
            let (Some(sim), Some(billed)) =
                (c["strategies"][0]["summary"]["cost"].as_f64(), c["recorded"]["cost"].as_f64())
            else {
                continue;
            };
            if billed < 0.05 {
                continue;
            }
            let gap = gap_pct(sim, billed);
            let name = f.display().to_string();
            match CORPUS_KNOWN_GAPS.iter().find(|(k, _, _)| name.ends_with(k)) {
                Some((_, lo, hi)) => assert!((*lo..=*hi).contains(&gap), "{name}: {gap:+.1} % left its band"),
                None => assert!(gap.abs() <= 5.0, "{name}: simulated ${sim:.3} vs billed ${billed:.3} ({gap:+.1} %)"),
            }
            checked.push(name);
        }
    }
    assert!(checked.len() >= 15, "{} priced corpus files billed at ≥ $0.05: {checked:?}", checked.len());
    for agent in ["/claude-code/", "/codex/", "/pi/"] {
        assert!(checked.iter().any(|n| n.contains(agent)), "no {agent} file checked");
    }
}

/// `sessions` costs each transcript as `usage` does (pi's recorded cost, Codex's counting), not
/// with a second pricing of the imported journal.
#[test]
fn sessions_cost_equals_usage_for_every_bundled_transcript() {
    let dir = repo().join("sample-journals/transcripts");
    let s = json_of(&["sessions", "--json"], &dir);
    let rows = s["sessions"].as_array().unwrap();
    assert!(rows.len() >= 5);
    for r in rows {
        let spec = r["spec"].as_str().unwrap();
        let usage = json_of(&["usage", "--json"], Path::new(spec));
        let want = usage["totals"]["cost_usd"].as_f64();
        let got = r["cost_usd"].as_f64();
        assert_eq!(got.map(|x| (x * 1e6).round()), want.map(|x| (x * 1e6).round()), "{spec}");
    }
}

/// A Claude Code transcript (documented format) whose first call reads 15,000 tokens its session
/// never wrote (a system prompt and tools other sessions keep warm), then, after 25 idle minutes,
/// reads 13,000: less than the one whole virtual block the unrecorded prefix starts with, by more
/// than the break tolerance.
fn warm_prefix_after_idle() -> (tempfile::TempDir, PathBuf) {
    let d = tempfile::tempdir().unwrap();
    let f = d.path().join("5a1e0000-0000-4000-8000-000000000001.jsonl");
    let mut lines = Vec::new();
    let mut parent = "null".to_string();
    // (seconds, cache read, cache write): a warm first call, three appends, 25 min idle.
    let calls = [(2, 15_000, 3_000), (10, 18_003, 120), (20, 18_123, 130), (30, 18_253, 125), (1_530, 13_000, 5_390)];
    for (i, (s, read, write)) in calls.iter().enumerate() {
        let ts = |s: i64| format!("2026-01-20T09:{:02}:{:02}Z", s / 60, s % 60);
        let text = format!("step {i}: {}", "check the parser and report what fails. ".repeat(10));
        lines.push(format!(
            r#"{{"type":"user","uuid":"u{i}","parentUuid":{parent},"sessionId":"S","timestamp":"{}","message":{{"role":"user","content":"{text}"}}}}"#,
            ts(s - 1)
        ));
        lines.push(format!(
            r#"{{"type":"assistant","uuid":"a{i}","parentUuid":"u{i}","sessionId":"S","requestId":"req_{i}","timestamp":"{}","message":{{"id":"msg_{i}","model":"claude-opus-4-5-20251101","content":[{{"type":"text","text":"done {i}"}}],"usage":{{"input_tokens":3,"cache_creation_input_tokens":{write},"cache_read_input_tokens":{read},"output_tokens":4}}}}}}"#,
            ts(*s)
        ));
        parent = format!("\"a{i}\"");
    }
    std::fs::write(&f, lines.join("\n") + "\n").unwrap();
    (d, f)
}

/// Regression (unseen sweep 2, a Claude Code 2.1.12 session): after an idle gap the provider read
/// 14,015 of the system prompt and tools, kept warm by other requests, and the replay read 0 and
/// wrote the whole prompt again (+28 % over billed), because the read ended inside the first
/// virtual block of the unrecorded prefix and the simulator keeps only whole blocks.
#[test]
fn regression_replay_drops_a_provider_read_that_ends_inside_the_unrecorded_prefix() {
    let (_d, f) = warm_prefix_after_idle();
    let c = json_of(&["cache", "--json", "--per-turn", "--strategy", "recorded"], &f);
    assert_eq!(c["environment"]["replayed_turns"], serde_json::json!([5]), "{}", c["recorded"]);
    let t = &c["strategies"][0]["turns"][4];
    let read = t["cache_read"].as_u64().unwrap();
    assert_eq!(read, 13_000, "the replay keeps what the provider read: {t}");
    let (sim, billed) =
        (c["strategies"][0]["summary"]["cost"].as_f64().unwrap(), c["recorded"]["cost"].as_f64().unwrap());
    assert!(gap_pct(sim, billed).abs() < 5.0, "simulated {sim} vs billed {billed}");
}

/// A Claude Code transcript (documented format) on Sonnet whose first call reads 11,000 tokens
/// its session never wrote (the system prompt and tools other sessions keep warm), then a switch
/// to Opus (`/model`) whose first call also reads 11,000: Opus's cache of that prefix was warm from
/// other requests, the conversation after it was written.
fn warm_prefix_after_model_switch() -> (tempfile::TempDir, PathBuf) {
    let d = tempfile::tempdir().unwrap();
    let f = d.path().join("5a1e0000-0000-4000-8000-000000000002.jsonl");
    let mut lines = Vec::new();
    let mut parent = "null".to_string();
    // (seconds, model, cache read, cache write)
    let (s45, o41) = ("claude-sonnet-4-5-20250929", "claude-opus-4-1-20250805");
    let calls = [
        (2, s45, 11_000, 4_800),
        (10, s45, 15_800, 195),
        (20, s45, 15_995, 195),
        (30, o41, 11_000, 5_385),
        (40, o41, 16_385, 195),
        (50, o41, 16_580, 195),
    ];
    for (i, (s, model, read, write)) in calls.iter().enumerate() {
        let ts = |s: i64| format!("2026-01-20T09:{:02}:{:02}Z", s / 60, s % 60);
        let text = format!("step {i}: {}", "check the parser and report what fails. ".repeat(10));
        lines.push(format!(
            r#"{{"type":"user","uuid":"u{i}","parentUuid":{parent},"sessionId":"S","timestamp":"{}","message":{{"role":"user","content":"{text}"}}}}"#,
            ts(s - 1)
        ));
        lines.push(format!(
            r#"{{"type":"assistant","uuid":"a{i}","parentUuid":"u{i}","sessionId":"S","requestId":"req_{i}","timestamp":"{}","message":{{"id":"msg_{i}","model":"{model}","content":[{{"type":"text","text":"done {i}"}}],"usage":{{"input_tokens":3,"cache_creation_input_tokens":{write},"cache_read_input_tokens":{read},"output_tokens":4}}}}}}"#,
            ts(*s)
        ));
        parent = format!("\"a{i}\"");
    }
    std::fs::write(&f, lines.join("\n") + "\n").unwrap();
    (d, f)
}

/// Regression (unseen sweep 4, Claude Code 2.0.2 and 2.1.87 sessions switching Sonnet → Opus):
/// the first Opus call read the 11k-token system prompt and tools from Opus's cache, warm from
/// other requests, and the replay found Opus's cache cold and wrote the whole prompt again at
/// Opus's write price (+30 % and +35 % over billed).
#[test]
fn regression_first_call_after_a_model_switch_wrote_the_warm_prefix_again() {
    let (_d, f) = warm_prefix_after_model_switch();
    let c = json_of(&["cache", "--json", "--per-turn", "--strategy", "recorded"], &f);
    let t = &c["strategies"][0]["turns"][3];
    assert_eq!(t["cache_read"].as_u64().unwrap(), 11_000, "the replay reads what the provider read: {t}");
    let (sim, billed) =
        (c["strategies"][0]["summary"]["cost"].as_f64().unwrap(), c["recorded"]["cost"].as_f64().unwrap());
    assert!(gap_pct(sim, billed).abs() < 5.0, "simulated {sim} vs billed {billed}");
}
