//! Issue 28 item 4 (+29): `usage` prices the model names other agents' logs carry, at the
//! first-party LiteLLM entry ccusage 20.0.24 resolves them to. SYNTHETIC fixtures, one per agent,
//! in each agent's own schema; the expected costs are the LiteLLM 1.110.2 rates times the counts
//! (checked against ccusage on the real logs these names come from: docs/tokens-and-cache.md §4).

use std::path::Path;

use serde_json::Value;

use crate::common::*;

/// `usage --agent X --by session --json` over `dir` (read as the agent's data folder): each
/// session's key with its cost and unpriced calls.
fn sessions(agent: &str, dir: &Path) -> Vec<(String, Option<f64>, u64)> {
    let out = ctxj()
        .args(["usage", "--agent", agent, "--by", "session", "--json", "--timezone", "UTC"])
        .arg(dir)
        .env("HOME", dir)
        .output()
        .unwrap();
    assert!(out.status.success(), "{agent}: {}", String::from_utf8_lossy(&out.stderr));
    let v: Value = serde_json::from_slice(&out.stdout).unwrap();
    let rows = v["rows"].as_array().unwrap().iter();
    rows.map(|r| {
        (r["key"].as_str().unwrap().to_string(), r["cost_usd"].as_f64(), r["unpriced_calls"].as_u64().unwrap())
    })
    .collect()
}

/// The cost of the session whose key ends with `id`, asserting every call was priced.
fn cost(rows: &[(String, Option<f64>, u64)], id: &str) -> f64 {
    let (k, c, unpriced) = rows.iter().find(|(k, ..)| k.ends_with(id)).unwrap_or_else(|| panic!("no {id}: {rows:?}"));
    assert_eq!(*unpriced, 0, "{k}: unpriced calls");
    c.unwrap_or_else(|| panic!("{k}: no cost"))
}

fn close(ours: f64, want: f64, what: &str) {
    assert!((ours - want).abs() <= 1e-10, "{what}: {ours} vs {want}");
}

fn write(p: &Path, lines: &[&str]) {
    std::fs::create_dir_all(p.parent().unwrap()).unwrap();
    std::fs::write(p, lines.join("\n") + "\n").unwrap();
}

#[test]
fn regression_models_ccusage_prices_were_left_unpriced() {
    let d = tempfile::tempdir().unwrap();

    // Claude Code served by MiniMax-M2.1 through an Anthropic-compatible endpoint:
    // `minimax/MiniMax-M2.1` 0.3 / 0.03 read / 0.375 write / 1.2 output.
    let cc = d.path().join("claude/projects/-p");
    write(
        &cc.join("s-minimax.jsonl"),
        &[
            r#"{"type":"assistant","timestamp":"2026-03-08T10:00:00.000Z","sessionId":"s-minimax","requestId":"req_1","uuid":"u1","parentUuid":null,"message":{"id":"msg_1","type":"message","role":"assistant","model":"MiniMax-M2.1","content":[{"type":"text","text":"ok"}],"usage":{"input_tokens":1000,"output_tokens":100,"cache_creation_input_tokens":1000,"cache_read_input_tokens":10000}}}"#,
        ],
    );
    close(cost(&sessions("claude-code", &d.path().join("claude")), "s-minimax"), 0.001095, "MiniMax-M2.1");

    // Codex through Ollama's cloud: `kimi-k2.5:cloud` is Moonshot's `kimi-k2.5`, 0.6 / 3.
    let codex = d.path().join("codex/sessions/2026/04/19");
    write(
        &codex.join("rollout-2026-04-19T22-04-58-019da910-1d2d-7883-b552-6e3adf8a4ed9.jsonl"),
        &[
            r#"{"timestamp":"2026-04-19T22:04:58.000Z","type":"session_meta","payload":{"id":"019da910-1d2d-7883-b552-6e3adf8a4ed9","timestamp":"2026-04-19T22:04:58.000Z","cwd":"/w","originator":"codex_cli_rs","cli_version":"0.120.0","model_provider":"ollama"}}"#,
            r#"{"timestamp":"2026-04-19T22:05:00.000Z","type":"turn_context","payload":{"cwd":"/w","model":"kimi-k2.5:cloud"}}"#,
            r#"{"timestamp":"2026-04-19T22:05:10.000Z","type":"event_msg","payload":{"type":"token_count","info":{"total_token_usage":{"input_tokens":1000,"cached_input_tokens":0,"output_tokens":100,"reasoning_output_tokens":0,"total_tokens":1100},"last_token_usage":{"input_tokens":1000,"cached_input_tokens":0,"output_tokens":100,"reasoning_output_tokens":0,"total_tokens":1100}}}}"#,
        ],
    );
    close(
        cost(&sessions("codex", &d.path().join("codex")), "019da910-1d2d-7883-b552-6e3adf8a4ed9"),
        0.0009,
        "kimi-k2.5:cloud",
    );

    // Gemini CLI on `gemini-3-flash-preview`: 0.5 / 0.05 read / 3 output (thoughts as output).
    let gemini = d.path().join("gemini/tmp/0f3c/chats");
    write(
        &gemini.join("session-2026-11-01T10-00-prev.jsonl"),
        &[
            r#"{"sessionId":"g-preview","projectHash":"0f3c","startTime":"2026-11-01T10:00:00Z","kind":"main"}"#,
            r#"{"id":"m1","timestamp":"2026-11-01T10:00:05Z","type":"gemini","model":"gemini-3-flash-preview","tokens":{"input":12000,"output":800,"cached":10000,"thoughts":200,"tool":0,"total":13000}}"#,
        ],
    );
    // ccusage's Gemini input is the prompt less what was cached.
    close(
        cost(&sessions("gemini", &d.path().join("gemini")), "g-preview"),
        (2000.0 * 0.5 + 10000.0 * 0.05 + 1000.0 * 3.0) / 1e6,
        "gemini-3-flash-preview",
    );

    // Kimi: `kimi-for-coding` served K2.5 (0.6 / 0.1 / 3) until 2026-04-20T15:28:10.072Z and K2.6
    // (0.95 / 0.16 / 4) after; Kimi Code's `moonshot-ai/kimi-k2.7-code` is 0.95 / 0.19 / 4.
    let kimi = d.path().join("kimi");
    for (session, secs) in [("before", 1_776_600_000.0), ("after", 1_776_800_000.0)] {
        let l = format!(
            r#"{{"timestamp":{secs},"message":{{"type":"StatusUpdate","payload":{{"message_id":"m-{session}","token_usage":{{"input_other":1000,"output":100,"input_cache_read":10000,"input_cache_creation":0}}}}}}}}"#
        );
        write(&kimi.join(format!("sessions/g1/{session}/wire.jsonl")), &[&l]);
    }
    write(
        &kimi.join("sessions/wd/code1/agents/main/wire.jsonl"),
        &[
            r#"{"type":"usage.record","model":"kimi-code/moonshot-ai/kimi-k2.7-code","usage":{"inputOther":1000,"output":100,"inputCacheRead":10000},"usageScope":"turn","time":1780000000000}"#,
        ],
    );
    let rows = sessions("kimi", &kimi);
    close(cost(&rows, "before"), (1000.0 * 0.6 + 10000.0 * 0.1 + 100.0 * 3.0) / 1e6, "kimi-for-coding (K2.5)");
    close(cost(&rows, "after"), (1000.0 * 0.95 + 10000.0 * 0.16 + 100.0 * 4.0) / 1e6, "kimi-for-coding (K2.6)");
    close(cost(&rows, "code1"), (1000.0 * 0.95 + 10000.0 * 0.19 + 100.0 * 4.0) / 1e6, "kimi-k2.7-code");

    // Hermes on the Gemini API's `-latest` aliases (provider `gemini`), reasoning priced as output.
    let hermes = d.path().join("hermes");
    std::fs::create_dir_all(&hermes).unwrap();
    let c = rusqlite::Connection::open(hermes.join("state.db")).unwrap();
    c.execute_batch(
        "CREATE TABLE sessions (id TEXT PRIMARY KEY, model TEXT, billing_provider TEXT, started_at REAL,
           message_count INTEGER, input_tokens INTEGER, output_tokens INTEGER, cache_read_tokens INTEGER,
           cache_write_tokens INTEGER, reasoning_tokens INTEGER, estimated_cost_usd REAL, actual_cost_usd REAL);
         INSERT INTO sessions VALUES ('h-flash', 'gemini-flash-latest', 'gemini', 1783400000, 2, 5365, 250, 0, 0, 0, 0.0, NULL);
         INSERT INTO sessions VALUES ('h-lite', 'gemini-flash-lite-latest', 'gemini', 1783400100, 2, 300183, 2558, 438962, 0, 10, 0.0, NULL);",
    )
    .unwrap();
    drop(c);
    let rows = sessions("hermes", &hermes);
    // Both real sessions' costs as ccusage 20.0.24 reported them (unseen Hermes store).
    close(cost(&rows, "h-flash"), 0.00496125, "gemini-flash-latest");
    close(cost(&rows, "h-lite"), 0.10961876 + 10.0 * 2.5 / 1e6, "gemini-flash-lite-latest");
}
