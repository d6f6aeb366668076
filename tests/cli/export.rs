//! Issue 18: `ctxj export` — one row per billed request whose totals equal `ctxj usage`'s, CSV
//! with one header, OTLP JSON traces with deterministic ids and GenAI attributes, simulated
//! strategies, the `--agent` filter and the committed JSON Schema.

use std::path::{Path, PathBuf};

use serde_json::Value;

use crate::common::*;

fn transcripts() -> PathBuf {
    repo().join("sample-journals").join("transcripts")
}

fn out(args: &[&str], path: &Path) -> String {
    let o = ctxj().current_dir(repo()).args(args).arg(path).output().unwrap();
    assert!(o.status.success(), "{args:?}: {}", String::from_utf8_lossy(&o.stderr));
    String::from_utf8(o.stdout).unwrap()
}

fn rows(args: &[&str], path: &Path) -> Vec<Value> {
    out(args, path).lines().map(|l| serde_json::from_str(l).unwrap()).collect()
}

/// The export's recorded totals against `usage --json`'s: calls, the four token counts, cost.
fn totals_equal_usage(path: &Path) {
    let usage: Value = serde_json::from_str(&out(&["usage", "--json"], path)).unwrap();
    let t = &usage["totals"];
    let rows: Vec<Value> = rows(&["export"], path).into_iter().filter(|r| r["strategy"] == "recorded").collect();
    let sum = |f: &str| rows.iter().map(|r| r[f].as_u64().unwrap()).sum::<u64>();
    assert_eq!(rows.len() as u64, t["calls"].as_u64().unwrap(), "{}", path.display());
    assert_eq!(sum("input_tokens"), t["input"].as_u64().unwrap());
    assert_eq!(sum("output_tokens"), t["output"].as_u64().unwrap());
    assert_eq!(sum("cache_write_tokens"), t["cache_creation"].as_u64().unwrap());
    assert_eq!(sum("cache_read_tokens"), t["cache_read"].as_u64().unwrap());
    let cost: f64 = rows.iter().filter_map(|r| r["cost_usd"].as_f64()).sum();
    assert!((cost - t["cost_usd"].as_f64().unwrap()).abs() < 1e-6, "{cost} vs {}", t["cost_usd"]);
    for r in &rows {
        assert_eq!(r["schema"], "ctxj.export/1");
        let p = r["prompt_tokens_recorded"].as_u64().unwrap();
        let parts = ["input_tokens", "cache_read_tokens", "cache_write_tokens"].map(|f| r[f].as_u64().unwrap());
        assert_eq!(p, parts.iter().sum::<u64>(), "{r}");
    }
}

#[test]
fn totals_equal_usage_on_the_bundled_transcripts() {
    totals_equal_usage(&transcripts());
    for agent in ["claude-code", "codex", "pi"] {
        totals_equal_usage(&transcripts().join(agent));
    }
}

#[test]
#[cfg_attr(
    not(ctxj_has_samples),
    ignore = "needs ../shared/samples (fails under CI=true; once it is there, `touch build.rs`)"
)]
fn totals_equal_usage_on_the_real_transcripts() {
    let shared = shared_samples();
    totals_equal_usage(&shared);
    // Nearly every billed call maps to a reconstructed request (a compaction call does not).
    let rows = rows(&["export"], &shared);
    let joined = rows.iter().filter(|r| !r["prompt_tokens_estimated"].is_null()).count();
    assert!(joined * 100 >= rows.len() * 95, "{joined} of {} rows joined", rows.len());
}

#[test]
fn rows_carry_side_sessions_breaks_and_compactions() {
    let rows = rows(&["export"], &transcripts());
    let sub: Vec<&Value> = rows.iter().filter(|r| r["session"] == "agent-a8abcfd").collect();
    assert_eq!(sub.len(), 5);
    assert!(sub.iter().all(|r| r["parent_session"] == "d597cea3-543d-431a-9de6-c68f0abb00fb"));
    let causes: Vec<&str> = rows.iter().filter_map(|r| r["break_cause"].as_str()).collect();
    assert!(causes.contains(&"ttl") && causes.contains(&"compaction"), "{causes:?}");
    assert!(rows.iter().any(|r| r["compaction"] == true));
    let providers: Vec<&str> = rows.iter().filter_map(|r| r["provider"].as_str()).collect();
    assert!(providers.contains(&"anthropic") && providers.contains(&"openai"), "{providers:?}");
    // Turns count from 1 in each session.
    assert_eq!(sub.iter().map(|r| r["turn"].as_u64().unwrap()).collect::<Vec<_>>(), [1, 2, 3, 4, 5]);
}

#[test]
fn strategies_add_simulated_rows_and_agent_filters() {
    let rows = rows(&["export", "--agent", "codex", "-s", "sliding-8", "-s", "recorded"], &transcripts());
    assert!(rows.iter().all(|r| r["agent"] == "codex"));
    let recorded = rows.iter().filter(|r| r["strategy"] == "recorded").count();
    let sliding: Vec<&Value> = rows.iter().filter(|r| r["strategy"] == "sliding-8").collect();
    assert_eq!(recorded, 12, "`-s recorded` adds nothing: recorded rows are always there");
    // 12 since the compaction call (a billed token_count before `compacted`) is a turn (issue 28).
    assert_eq!(sliding.len(), 12, "one per reconstructed turn");
    assert!(sliding.iter().all(|r| r["prompt_tokens_recorded"].is_null() && r["prompt_tokens_estimated"].is_u64()));
    let o = ctxj().current_dir(repo()).args(["export", "-s", "nope"]).arg(transcripts()).output().unwrap();
    assert_eq!(o.status.code(), Some(2));
}

#[test]
fn csv_has_one_header_and_a_row_per_request() {
    let csv = out(&["export", "--format", "csv"], &transcripts());
    let lines: Vec<&str> = csv.lines().collect();
    assert!(lines[0].starts_with("schema,session,agent,project,source,parent_session,turn,timestamp,model"));
    assert_eq!(lines.iter().filter(|l| l.starts_with("schema,")).count(), 1);
    assert_eq!(lines.len(), 1 + 60);
}

#[test]
fn codex_rows_snapshot() {
    let csv = out(&["export", "--format", "csv"], Path::new("sample-journals/transcripts/codex"));
    insta::assert_snapshot!(csv);
}

fn attrs(span: &Value) -> std::collections::BTreeMap<String, Value> {
    span["attributes"]
        .as_array()
        .unwrap()
        .iter()
        .map(|a| (a["key"].as_str().unwrap().to_string(), a["value"].clone()))
        .collect()
}

#[test]
fn otlp_is_one_trace_per_session_with_genai_attributes_and_stable_ids() {
    let text = out(&["export", "--format", "otlp-json", "-s", "baseline"], &transcripts());
    assert_eq!(text, out(&["export", "--format", "otlp-json", "-s", "baseline"], &transcripts()), "deterministic");
    let lines: Vec<Value> = text.lines().map(|l| serde_json::from_str(l).unwrap()).collect();
    assert_eq!(lines.len(), 5, "one trace per session file");
    let mut traces = std::collections::BTreeSet::new();
    let mut chats = 0;
    let mut tasks = 0;
    for l in &lines {
        let spans = l["resourceSpans"][0]["scopeSpans"][0]["spans"].as_array().unwrap();
        let root = &spans[0];
        assert!(root["name"].as_str().unwrap().starts_with("invoke_agent "));
        let tid = root["traceId"].as_str().unwrap();
        assert!(tid.len() == 32 && tid.bytes().all(|b| b.is_ascii_hexdigit()), "{tid}");
        let ra = attrs(root);
        assert!(ra.contains_key("ctxj.strategy.recorded.requests"), "{ra:?}");
        // A subagent is part of its parent session's trace, under a span of it.
        if ra.contains_key("ctxj.parent_session") {
            assert!(root["parentSpanId"].is_string(), "{root}");
        } else {
            assert!(root.get("parentSpanId").is_none());
            assert!(traces.insert(tid.to_string()), "trace ids differ between sessions");
        }
        for s in &spans[1..] {
            assert_eq!(s["traceId"], root["traceId"]);
            assert_eq!(s["spanId"].as_str().unwrap().len(), 16);
            if s["name"] == "execute_tool Task" {
                tasks += 1;
                continue;
            }
            chats += 1;
            assert_eq!(s["parentSpanId"], root["spanId"]);
            assert!(s["name"].as_str().unwrap().starts_with("chat "));
            let (start, end) = (&s["startTimeUnixNano"], &s["endTimeUnixNano"]);
            let (start, end) =
                (start.as_str().unwrap().parse::<u64>().unwrap(), end.as_str().unwrap().parse::<u64>().unwrap());
            assert!(start > 1_700_000_000_000_000_000 && start <= end);
            let a = attrs(s);
            let n = |k: &str| a[k]["intValue"].as_str().unwrap().parse::<u64>().unwrap();
            for k in ["gen_ai.operation.name", "gen_ai.provider.name", "gen_ai.request.model", "gen_ai.conversation.id"]
            {
                assert!(a[k]["stringValue"].is_string(), "{k}: {a:?}");
            }
            // input_tokens includes the cached and cache-written tokens.
            assert!(
                n("gen_ai.usage.input_tokens")
                    >= n("gen_ai.usage.cache_read.input_tokens") + n("gen_ai.usage.cache_creation.input_tokens")
            );
            assert_eq!(n("llm.token_count.prompt"), n("gen_ai.usage.input_tokens"));
            assert_eq!(a["openinference.span.kind"]["stringValue"], "LLM");
            assert!(a["ctxj.cost_usd"]["doubleValue"].is_f64());
            assert_eq!(a["llm.cost.total"], a["ctxj.cost_usd"]);
            assert_eq!(a["gen_ai.usage.cost"], a["ctxj.cost_usd"]);
        }
    }
    assert_eq!(tasks, 1, "the bundled Claude Code session starts one subagent");
    assert_eq!(chats, 60, "a chat span per recorded request, none for simulated ones");
}

#[test]
fn json_schema_names_every_field_of_a_row() {
    let schema: Value =
        serde_json::from_slice(&std::fs::read(repo().join("docs/schema/ctxj.export-1.json")).unwrap()).unwrap();
    let props: Vec<&String> = schema["properties"].as_object().unwrap().keys().collect();
    let row = &rows(&["export"], &transcripts())[0];
    let keys: Vec<&String> = row.as_object().unwrap().keys().collect();
    assert_eq!(keys, props);
    let required = schema["required"].as_array().unwrap();
    assert!(required.iter().any(|r| r == "input_tokens"));
}

/// Issue 29 leftover: `export --agent gemini` (and every agent whose sessions ctxj imports) was
/// refused as if its log held "usage counters, not the requests". Now a Gemini CLI session file
/// (synthetic) and an OpenCode store of two sessions (the synthetic legacy session moved into a
/// store, then copied under a second id) export their rows, one session each, reconstructed, with
/// the totals of `usage --json` for the same files; the default folder's override is read with no
/// path; a usage-only agent (Hermes) is still refused, with a true message.
#[test]
fn regression_export_refused_importable_agents() {
    let d = tempfile::tempdir().unwrap();
    let chats = d.path().join("gemini/proj/chats");
    std::fs::create_dir_all(&chats).unwrap();
    std::fs::write(
        chats.join("session-2026-01-01T00-00-abcdef12.json"),
        r#"{
  "sessionId": "abcdef12", "projectHash": "h", "startTime": "2026-01-01T00:00:00Z",
  "messages": [
    {"id": "u1", "timestamp": "2026-01-01T00:00:01Z", "type": "user", "content": "hi"},
    {"id": "a1", "timestamp": "2026-01-01T00:00:02Z", "type": "gemini", "content": "hello", "model": "gemini-2.5-flash",
     "tokens": {"input": 1000, "output": 20, "cached": 0, "thoughts": 5, "tool": 0, "total": 1025}},
    {"id": "u2", "timestamp": "2026-01-01T00:00:03Z", "type": "user", "content": "and then?"},
    {"id": "a2", "timestamp": "2026-01-01T00:00:04Z", "type": "gemini", "content": "then this", "model": "gemini-2.5-flash",
     "tokens": {"input": 1100, "output": 30, "cached": 1000, "thoughts": 0, "tool": 0, "total": 1130}}
  ]
}"#,
    )
    .unwrap();
    let storage = repo().join("tests/data/import/opencode-legacy/storage");
    let (project, session) = ("0a1b2c3d4e5f60718293a4b5c6d7e8f901234567", "ses_4a0c1f2e3ffeAbCdEf012345");
    let store = d.path().join("opencode/opencode.db");
    std::fs::create_dir_all(store.parent().unwrap()).unwrap();
    crate::import_opencode::as_store(&storage, project, session, &store);
    rusqlite::Connection::open(&store)
        .unwrap()
        .execute_batch(&format!(
            "INSERT INTO session SELECT 'ses_second', project_id, NULL, title, version, time_created FROM session WHERE id = '{session}';
             INSERT INTO message SELECT id || 'b', 'ses_second', time_created, time_updated, data FROM message WHERE session_id = '{session}';
             INSERT INTO part SELECT id || 'b', message_id || 'b', 'ses_second', time_created, time_updated, data FROM part WHERE session_id = '{session}';"
        ))
        .unwrap();

    for (agent, dir, sessions) in [("gemini", "gemini", 1), ("opencode", "opencode", 2)] {
        let dir = d.path().join(dir);
        let rows = rows(&["export", "--agent", agent], &dir);
        assert!(!rows.is_empty(), "{agent}: no row");
        assert!(rows.iter().all(|r| r["agent"] == agent), "{agent}");
        let ids: std::collections::BTreeSet<&str> = rows.iter().map(|r| r["session"].as_str().unwrap()).collect();
        assert_eq!(ids.len(), sessions, "{agent}: {ids:?}");
        // Reconstructed: each session's calls join requests of its imported transcript (all but
        // a compaction call, which no turn stands for).
        for id in &ids {
            let of = rows.iter().filter(|r| r["session"] == *id);
            let joined = of.clone().filter(|r| !r["prompt_tokens_estimated"].is_null()).count();
            assert!(joined + 1 >= of.count() && joined > 0, "{agent} {id}: {rows:?}");
        }
        // Found by detection with no --agent, with `usage`'s totals.
        totals_equal_usage(&dir);
    }
    // With no path, the agent's default folder (here its environment override).
    let o =
        ctxj().args(["export", "--agent", "gemini"]).env("GEMINI_DATA_DIR", d.path().join("gemini")).output().unwrap();
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    assert_eq!(String::from_utf8_lossy(&o.stdout).lines().count(), 2);
    ctxj()
        .args(["export", "--agent", "hermes"])
        .arg(d.path())
        .assert()
        .code(2)
        .stderr(predicates::str::contains("Hermes Agent logs hold usage counters only"));
}

/// Issue 32: the spans carried no input or output text. `--include-content` puts each call's
/// text on its chat span (OpenInference `input.value`/`output.value`), with secrets redacted by
/// the one redaction rule and each text cut to 8,192 characters with a note; without it, and
/// on the rows' formats, nothing of the conversation leaves.
#[test]
fn regression_spans_carried_no_content_and_include_content_redacts_and_bounds_it() {
    let key = "sk-ant-api03-0123456789abcdefghijKLMNOP";
    let d = tempfile::tempdir().unwrap();
    let dir = d.path().join("projects/-home-user-demo");
    std::fs::create_dir_all(&dir).unwrap();
    let sid = "d597cea3-543d-431a-9de6-c68f0abb00fb";
    let text = std::fs::read_to_string(transcripts().join(format!("claude-code/projects/-home-user-demo/{sid}.jsonl")))
        .unwrap()
        .replacen("Find out why and fix it.", &format!("Find out why and fix it. Key: {key}. {}", "x".repeat(9000)), 1);
    std::fs::write(dir.join(format!("{sid}.jsonl")), text).unwrap();
    let chat = |args: &[&str]| -> Vec<std::collections::BTreeMap<String, Value>> {
        out(args, d.path())
            .lines()
            .flat_map(|l| {
                let v: Value = serde_json::from_str(l).unwrap();
                v["resourceSpans"][0]["scopeSpans"][0]["spans"].as_array().unwrap().clone()
            })
            .filter(|s| s["name"].as_str().unwrap().starts_with("chat"))
            .map(|s| attrs(&s).into_iter().map(|(k, v)| (k, v.as_object().unwrap().values().next().unwrap().clone())))
            .map(|a| a.collect())
            .collect()
    };
    let plain = chat(&["export", "--format", "otlp-json"]);
    assert!(plain.iter().all(|a| !a.contains_key("input.value") && !a.contains_key("output.value")));
    let with = chat(&["export", "--format", "otlp-json", "--include-content"]);
    assert_eq!(with.len(), plain.len());
    let first = &with[0];
    let input = first["input.value"].as_str().unwrap();
    assert!(input.starts_with("The test `test_due_dates` fails") && input.contains("Key: [REDACTED]."), "{input:.200}");
    assert!(!with.iter().any(|a| a.values().any(|v| v.to_string().contains("sk-ant"))), "a secret left");
    let note = input.rsplit_once("… [cut by ctxj: 8192 of ").map(|(_, n)| n);
    assert!(note.is_some_and(|n| n.ends_with(" characters sent]")), "{}", &input[input.len() - 80..]);
    assert_eq!(first["ctxj.content_cut"], true);
    assert!(first["output.value"].as_str().unwrap().contains("[call Bash] {\"command\":"), "{first:?}");
    assert!(with[1]["input.value"].as_str().unwrap().starts_with("[Bash result] "), "{:?}", with[1]);
    assert!(!with[1].contains_key("ctxj.content_cut"));
    // The rows' formats carry no text: the flag is refused there.
    let o = ctxj().args(["export", "--include-content"]).arg(d.path()).output().unwrap();
    assert_eq!(o.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&o.stderr).contains("--endpoint or --format otlp-json"));
}

/// Issue 32: `export` lacked flags its siblings have — `usage`'s `--since`/`--until`/`--timezone`.
/// The window selects the same calls as `usage`'s (equal totals), rows keep their unfiltered
/// turn numbers (so ids do not move), a session with no call inside is left out, and an
/// inverted window is an error.
#[test]
fn regression_export_lacked_the_date_window_of_usage() {
    let all = rows(&["export"], &transcripts());
    for (since, until) in [("2026-03-14", "2026-03-14"), ("2026-03-13", "2026-03-14"), ("20260315", "2026-12-31")] {
        let w = ["--since", since, "--until", until, "--timezone", "UTC"];
        let usage: Value =
            serde_json::from_str(&out(&[&["usage", "--json"][..], &w].concat(), &transcripts())).unwrap();
        let t = &usage["totals"];
        let rows = rows(&[&["export"][..], &w].concat(), &transcripts());
        assert!(!rows.is_empty() && rows.len() < all.len(), "{since}..{until}: {} rows", rows.len());
        assert_eq!(rows.len() as u64, t["calls"].as_u64().unwrap(), "{since}..{until}");
        let sum = |f: &str| rows.iter().map(|r| r[f].as_u64().unwrap()).sum::<u64>();
        assert_eq!(sum("input_tokens"), t["input"].as_u64().unwrap());
        assert_eq!(sum("cache_read_tokens"), t["cache_read"].as_u64().unwrap());
        let cost: f64 = rows.iter().filter_map(|r| r["cost_usd"].as_f64()).sum();
        assert!((cost - t["cost_usd"].as_f64().unwrap()).abs() < 1e-6);
        for r in &rows {
            assert!(all.contains(r), "a row changed under the window: {r}");
        }
    }
    let o =
        ctxj().args(["export", "--since", "2026-03-15", "--until", "2026-03-14"]).arg(transcripts()).output().unwrap();
    assert_eq!(o.status.code(), Some(2), "{}", String::from_utf8_lossy(&o.stderr));
}
