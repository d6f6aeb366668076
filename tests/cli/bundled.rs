//! The bundled synthetic transcripts (`sample-journals/transcripts/`, written by
//! `examples/gen_transcripts.rs`): the committed files are the generator's output, they have the
//! shapes the README promises (checked on the raw lines, not through ctxj), every read command
//! takes them, and `ctxj usage` equals ccusage 20.0.24 on them (`tests/data/ccusage/bundled-*`).

use std::collections::{BTreeMap, HashSet};
use std::path::{Path, PathBuf};

use serde_json::Value;

use crate::common::*;

#[allow(dead_code, clippy::all)]
#[path = "../../examples/gen_transcripts.rs"]
mod gen_transcripts;

fn root() -> PathBuf {
    repo().join("sample-journals").join("transcripts")
}

/// Every file under `dir`, sorted.
fn files_under(dir: &Path) -> Vec<PathBuf> {
    let mut v: Vec<PathBuf> = walkdir::WalkDir::new(dir)
        .into_iter()
        .flatten()
        .filter(|e| e.file_type().is_file())
        .map(|e| e.into_path())
        .collect();
    v.sort();
    v
}

fn transcripts() -> Vec<PathBuf> {
    files_under(&root()).into_iter().filter(|p| p.extension().is_some_and(|x| x == "jsonl")).collect()
}

fn lines(path: &Path) -> Vec<Value> {
    std::fs::read_to_string(path).unwrap().lines().map(|l| serde_json::from_str(l).unwrap()).collect()
}

/// The one `.jsonl` directly in `dir`.
fn only_jsonl(dir: &Path) -> PathBuf {
    let v: Vec<PathBuf> = std::fs::read_dir(dir)
        .unwrap()
        .map(|e| e.unwrap().path())
        .filter(|p| p.is_file() && p.extension().is_some_and(|x| x == "jsonl"))
        .collect();
    assert_eq!(v.len(), 1, "{}: {v:?}", dir.display());
    v[0].clone()
}

fn claude_main() -> PathBuf {
    only_jsonl(&root().join("claude-code/projects/-home-user-demo"))
}

fn codex_rollout() -> PathBuf {
    only_jsonl(&root().join("codex/sessions/2026/03/14"))
}

fn pi_session() -> PathBuf {
    only_jsonl(&root().join("pi/sessions/--home-user-demo--"))
}

fn ccusage(name: &str) -> Value {
    serde_json::from_slice(&std::fs::read(repo().join("tests/data/ccusage").join(name)).unwrap()).unwrap()
}

fn stdout(args: &[&str], path: &Path) -> String {
    let out = ctxj().args(args).arg(path).output().unwrap();
    assert!(
        out.status.success(),
        "ctxj {args:?} {}: exit {:?}\n{}",
        path.display(),
        out.status.code(),
        String::from_utf8_lossy(&out.stderr)
    );
    String::from_utf8(out.stdout).unwrap()
}

#[test]
fn the_generator_reproduces_the_committed_transcripts() {
    let out = tempfile::tempdir().unwrap();
    gen_transcripts::generate_all(out.path()).unwrap();
    let rel = |dir: &Path| -> Vec<(PathBuf, Vec<u8>)> {
        files_under(dir)
            .into_iter()
            .map(|p| (p.strip_prefix(dir).unwrap().to_path_buf(), std::fs::read(&p).unwrap()))
            .collect()
    };
    let (committed, generated) = (rel(&root()), rel(out.path()));
    let names = |v: &[(PathBuf, Vec<u8>)]| v.iter().map(|(p, _)| p.clone()).collect::<Vec<_>>();
    assert_eq!(names(&committed), names(&generated), "different files (run `cargo run --example gen_transcripts`)");
    for ((p, a), (_, b)) in committed.iter().zip(&generated) {
        assert!(a == b, "{}: the generator's output differs from the committed file", p.display());
    }
}

#[test]
fn every_transcript_is_small_and_well_formed() {
    let files = transcripts();
    assert_eq!(files.len(), 5, "{files:?}");
    for f in &files {
        let size = std::fs::metadata(f).unwrap().len();
        assert!(size < 150_000, "{}: {size} bytes", f.display());
        for (i, l) in lines(f).iter().enumerate() {
            assert!(l.is_object(), "{}:{}", f.display(), i + 1);
            for ts in [&l["timestamp"], &l["payload"]["timestamp"]] {
                if let Some(ts) = ts.as_str() {
                    // RFC 3339, milliseconds, Z: 2026-03-13T09:12:31.821Z
                    assert!(
                        ts.len() == 24
                            && ts.ends_with('Z')
                            && &ts[19..20] == "."
                            && chrono::DateTime::parse_from_rfc3339(ts).is_ok(),
                        "{}:{}: timestamp {ts}",
                        f.display(),
                        i + 1
                    );
                }
            }
        }
    }
    let readme = std::fs::read_to_string(root().join("README.md")).unwrap();
    assert!(readme.contains("SYNTHETIC") && readme.contains("cargo run --example gen_transcripts"));
}

#[test]
fn every_transcript_reads_with_every_command() {
    for f in transcripts() {
        for cmd in [&["show"][..], &["show", "--json"], &["log"], &["validate"], &["cache"], &["turns"], &["tokens"]] {
            let out = stdout(cmd, &f);
            assert!(!out.trim().is_empty(), "ctxj {cmd:?} {}: no output", f.display());
        }
        let tmp = tempfile::tempdir().unwrap();
        let html = tmp.path().join("r.html");
        let out = ctxj().arg("report").arg(&f).arg("-o").arg(&html).output().unwrap();
        assert!(out.status.success(), "report {}: {}", f.display(), String::from_utf8_lossy(&out.stderr));
        let page = std::fs::read_to_string(&html).unwrap();
        assert!(page.starts_with("<!DOCTYPE html>") || page.starts_with("<!doctype html>"), "{}", f.display());
        let session = tmp.path().join("imported");
        let out = ctxj().arg("import").arg(&f).arg("--out").arg(&session).output().unwrap();
        assert!(out.status.success(), "import {}: {}", f.display(), String::from_utf8_lossy(&out.stderr));
        stdout(&["validate"], &session);
    }
}

#[test]
fn imports_keep_the_models_compactions_and_calls() {
    // (transcript, models the log must name, compactions, tool calls)
    let cases = [
        (claude_main(), vec!["claude-sonnet-4-5-20250929", "claude-opus-4-5-20251101"], 1, 22),
        (codex_rollout(), vec!["gpt-5.3-codex"], 1, 8),
        (pi_session(), vec!["anthropic/claude-sonnet-4-5", "openai/gpt-5.1-codex"], 1, 9),
    ];
    for (f, models, compactions, calls) in cases {
        let tmp = tempfile::tempdir().unwrap();
        let out = ctxj().arg("import").arg(&f).arg("--out").arg(tmp.path()).arg("--json").output().unwrap();
        assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
        let report: Value = serde_json::from_slice(&out.stdout).unwrap();
        assert_eq!(report["report"]["dropped"]["calls"], 0, "{}", f.display());
        // The session record, `model` records and assistant records name the models.
        let journal = std::fs::read_to_string(tmp.path().join("journal.jsonl")).unwrap();
        for m in &models {
            assert!(journal.contains(&format!("\"{m}\"")), "{}: the imported session does not name {m}", f.display());
        }
        let recs: Vec<Value> = std::fs::read_to_string(tmp.path().join("journal.jsonl"))
            .unwrap()
            .lines()
            .map(|l| serde_json::from_str(l).unwrap())
            .collect();
        let kind = |k: &str| recs.iter().filter(|r| r["kind"] == k).count();
        assert_eq!(kind("compact"), compactions, "{}", f.display());
        let n_calls: usize = recs.iter().filter_map(|r| r["calls"].as_array()).map(Vec::len).sum();
        assert_eq!(n_calls, calls, "{}: tool calls", f.display());
    }
}

#[test]
fn sessions_lists_the_subagent_and_the_compaction_call_under_their_parent() {
    let v: Value = serde_json::from_str(&stdout(&["sessions", "--json"], &root())).unwrap();
    let rows = v["sessions"].as_array().unwrap();
    assert_eq!(rows.len(), 5, "{v}");
    let main = claude_main();
    let main_row = rows.iter().find(|r| r["role"] == "main" && r["agent"] == "claude-code").unwrap();
    assert_eq!(main_row["side_sessions"], 2);
    assert_eq!(main_row["compactions"], 1);
    assert_eq!(main_row["model"], "claude-sonnet-4-5-20250929");
    for role in ["subagent", "compaction call"] {
        let side = rows.iter().find(|r| r["role"] == role).unwrap_or_else(|| panic!("no {role} row: {v}"));
        assert!(side["parent"].as_str().unwrap().ends_with(main.file_name().unwrap().to_str().unwrap()));
    }
    let sub = rows.iter().find(|r| r["role"] == "subagent").unwrap();
    assert_eq!(sub["model"], "claude-haiku-4-5-20251001");
    let codex = rows.iter().find(|r| r["agent"] == "codex").unwrap();
    assert_eq!(codex["model"], "gpt-5.3-codex");
    assert_eq!(codex["compactions"], 1);
    let pi = rows.iter().find(|r| r["agent"] == "pi").unwrap();
    assert_eq!(pi["compactions"], 1);
    let table = stdout(&["sessions"], &root());
    assert!(table.contains("(subagent)") && table.contains("(compaction call)"), "{table}");
}

#[test]
fn sessions_names_the_pi_model() {
    let v: Value = serde_json::from_str(&stdout(&["sessions", "--json"], &root())).unwrap();
    let pi = v["sessions"].as_array().unwrap().iter().find(|r| r["agent"] == "pi").unwrap().clone();
    assert_eq!(pi["model"], "anthropic/claude-sonnet-4-5", "{pi}");
}

/// ccusage's per-model or per-session token figures: input, output, cache creation, cache read.
fn ccusage_tokens(row: &Value) -> [u64; 4] {
    let n = |f: &str| row[f].as_u64().unwrap();
    [n("inputTokens"), n("outputTokens"), n("cacheCreationTokens"), n("cacheReadTokens")]
}

fn ctxj_tokens(row: &Value) -> [u64; 4] {
    let n = |f: &str| row[f].as_u64().unwrap();
    [n("input"), n("output"), n("cache_creation"), n("cache_read")]
}

#[test]
fn usage_equals_ccusage_on_the_bundled_claude_code_session() {
    let dir = root().join("claude-code");
    for (by, file, list, key) in [
        ("session", "bundled-claude-session.json", "sessions", "sessionId"),
        ("day", "bundled-claude-daily.json", "daily", "date"),
    ] {
        let v: Value = serde_json::from_str(&stdout(&["usage", "--json", "--by", by], &dir)).unwrap();
        let reference = ccusage(file);
        let theirs = reference[list].as_array().unwrap();
        let ours = v["rows"].as_array().unwrap();
        assert_eq!(ours.len(), theirs.len(), "--by {by}");
        for (o, t) in ours.iter().zip(theirs) {
            assert!(
                o["key"].as_str().unwrap().ends_with(t[key].as_str().unwrap()),
                "--by {by}: {} vs {}",
                o["key"],
                t[key]
            );
            assert_eq!(ctxj_tokens(o), ccusage_tokens(t), "--by {by} {}", o["key"]);
            let (a, b) = (o["cost_usd"].as_f64().unwrap(), t["totalCost"].as_f64().unwrap());
            assert!((a - b).abs() <= 1e-9 * b.max(1.0), "--by {by}: cost {a} vs ccusage {b}");
        }
        assert_eq!(v["totals"]["calls"], 34, "28 main + 5 subagent + 1 compaction call");
    }
}

#[test]
fn usage_reads_the_codex_and_pi_transcripts() {
    for (dir, file) in
        [(root().join("codex"), "bundled-codex-session.json"), (root().join("pi/sessions"), "bundled-pi-session.json")]
    {
        let v: Value = serde_json::from_str(&stdout(&["usage", "--json"], &dir)).unwrap();
        let theirs = ccusage(file);
        assert_eq!(ctxj_tokens(&v["totals"]), ccusage_tokens(&theirs["totals"]), "{}", dir.display());
    }
}

/// Distinct (message.id, requestId) requests of a Claude Code file, in order, with the usage
/// of their last line (the one with the final `output_tokens`).
fn claude_requests(path: &Path) -> Vec<(String, Value, Value)> {
    let mut order: Vec<(String, String)> = Vec::new();
    let mut last: BTreeMap<(String, String), (String, Value, Value)> = BTreeMap::new();
    for l in lines(path) {
        if l["type"] != "assistant" {
            continue;
        }
        let k = (l["message"]["id"].as_str().unwrap().to_string(), l["requestId"].as_str().unwrap().to_string());
        if !last.contains_key(&k) {
            order.push(k.clone());
        }
        last.insert(
            k,
            (
                l["timestamp"].as_str().unwrap().to_string(),
                l["message"]["model"].clone(),
                l["message"]["usage"].clone(),
            ),
        );
    }
    order.into_iter().map(|k| last.remove(&k).unwrap()).collect()
}

#[test]
fn claude_code_usage_follows_the_documented_cache_model() {
    let main = claude_main();
    let raw = lines(&main);
    let reqs = claude_requests(&main);
    assert!((25..=40).contains(&reqs.len()), "{} API calls", reqs.len());
    let ms = |t: &str| chrono::DateTime::parse_from_rfc3339(t).unwrap().timestamp_millis();
    let u = |v: &Value, f: &str| v[f].as_u64().unwrap();
    let boundary = raw.iter().position(|l| l["subtype"] == "compact_boundary").expect("a compact_boundary");
    assert_eq!(raw[boundary]["compactMetadata"]["trigger"], "manual");
    assert!(raw[boundary]["parentUuid"].is_null() && raw[boundary]["logicalParentUuid"].is_string());
    assert_eq!(raw[boundary + 1]["isCompactSummary"], true);
    let boundary_ts = ms(raw[boundary]["timestamp"].as_str().unwrap());
    let mut breaks = Vec::new();
    for (i, (ts, model, usage)) in reqs.iter().enumerate() {
        let (read, write) = (u(usage, "cache_read_input_tokens"), u(usage, "cache_creation_input_tokens"));
        let split = &usage["cache_creation"];
        assert_eq!(u(split, "ephemeral_5m_input_tokens") + u(split, "ephemeral_1h_input_tokens"), write);
        let prompt = u(usage, "input_tokens") + read + write;
        assert!(prompt > 18_000, "request {i}: prompt {prompt} below the unrecorded prefix");
        if i == 0 {
            assert_eq!((read, u(split, "ephemeral_1h_input_tokens")), (0, 18_000), "first request");
            continue;
        }
        let (pts, pmodel, prev) = &reqs[i - 1];
        let chained = u(prev, "cache_read_input_tokens") + u(prev, "cache_creation_input_tokens");
        if read == chained {
            continue;
        }
        let gap = ms(ts) - ms(pts);
        let why = if model != pmodel {
            assert_eq!((read, u(split, "ephemeral_1h_input_tokens")), (0, 18_000), "model switch");
            "model switch"
        } else if ms(pts) < boundary_ts && boundary_ts < ms(ts) {
            assert_eq!(read, 18_000, "after the compaction");
            "compaction"
        } else {
            assert!(gap > 5 * 60 * 1000, "request {i}: cache read {read} != {chained} without a break");
            assert_eq!(read, 18_000, "after the idle gap");
            "idle gap"
        };
        breaks.push(why);
    }
    assert_eq!(breaks, ["idle gap", "compaction", "model switch"]);
    // Streamed content-block splits: several lines per request, a partial output_tokens first.
    let mut per_request: BTreeMap<String, Vec<u64>> = BTreeMap::new();
    for l in raw.iter().filter(|l| l["type"] == "assistant") {
        per_request
            .entry(l["requestId"].as_str().unwrap().to_string())
            .or_default()
            .push(l["message"]["usage"]["output_tokens"].as_u64().unwrap());
    }
    assert!(per_request.values().any(|o| o.len() > 1 && o[0] < *o.last().unwrap()), "no streamed split");
    for kind in ["progress", "file-history-snapshot"] {
        assert!(raw.iter().any(|l| l["type"] == kind), "no {kind} line");
    }
    // The side files.
    let side = main.with_extension("").join("subagents");
    let sub = lines(&only_jsonl_matching(&side, "agent-a", "agent-acompact-"));
    assert!(sub
        .iter()
        .all(|l| l["isSidechain"] == true && l["agentId"].is_string() && l["sessionId"] == raw[1]["sessionId"]));
    let compact = lines(&only_jsonl_matching(&side, "agent-acompact-", ""));
    let reqs_c: Vec<&Value> = compact.iter().filter(|l| l["type"] == "assistant").collect();
    assert_eq!(reqs_c.len(), 1, "one compaction call");
    let (_, _, before) = reqs.iter().rev().find(|(t, _, _)| ms(t) < boundary_ts).unwrap();
    assert_eq!(
        reqs_c[0]["message"]["usage"]["cache_read_input_tokens"].as_u64().unwrap(),
        u(before, "cache_read_input_tokens") + u(before, "cache_creation_input_tokens"),
        "the compaction call reads the cached conversation"
    );
}

/// The one `.jsonl` in `dir` whose name starts with `prefix` and not with `not` (when non-empty).
fn only_jsonl_matching(dir: &Path, prefix: &str, not: &str) -> PathBuf {
    let v: Vec<PathBuf> = std::fs::read_dir(dir)
        .unwrap()
        .map(|e| e.unwrap().path())
        .filter(|p| {
            let n = p.file_name().unwrap().to_str().unwrap();
            n.starts_with(prefix) && (not.is_empty() || !n.starts_with(not)) && n.ends_with(".jsonl")
        })
        .collect();
    assert_eq!(v.len(), 1, "{v:?}");
    v[0].clone()
}

/// Codex `token_count` infos that report a new request (ccusage's and ctxj's rule: skip
/// `info: null`, repeats of the previous total, and the all-zero estimate after a compaction).
fn codex_requests(path: &Path) -> (Vec<Value>, usize) {
    let mut out = Vec::new();
    let mut repeats = 0;
    let mut prev_total = Value::Null;
    for l in lines(path) {
        let p = &l["payload"];
        if l["type"] != "event_msg" || p["type"] != "token_count" || p["info"].is_null() {
            continue;
        }
        let total = p["info"]["total_token_usage"].clone();
        let last = &p["info"]["last_token_usage"];
        if total == prev_total {
            repeats += 1;
        } else if last["input_tokens"] != 0 {
            out.push(last.clone());
        }
        prev_total = total;
    }
    (out, repeats)
}

#[test]
fn codex_usage_follows_the_documented_cache_model() {
    let f = codex_rollout();
    let raw = lines(&f);
    let kinds: Vec<String> = raw
        .iter()
        .map(|l| match l["type"].as_str().unwrap() {
            "event_msg" | "response_item" => l["payload"]["type"].as_str().unwrap().to_string(),
            t => t.to_string(),
        })
        .collect();
    assert_eq!(kinds[0], "session_meta");
    for k in [
        "turn_context",
        "function_call",
        "function_call_output",
        "custom_tool_call",
        "reasoning",
        "compacted",
        "context_compacted",
    ] {
        assert!(kinds.iter().any(|x| x == k), "no {k}");
    }
    let compacted = kinds.iter().position(|k| k == "compacted").unwrap();
    assert_eq!(kinds[compacted + 1], "context_compacted");
    let (reqs, repeats) = codex_requests(&f);
    assert!(repeats >= 5, "{repeats} repeated token_count lines");
    let n = |v: &Value, k: &str| v[k].as_u64().unwrap();
    let mut breaks = 0;
    for w in reqs.windows(2) {
        let expect = (n(&w[0], "input_tokens") + n(&w[0], "output_tokens")) / 128 * 128;
        if n(&w[1], "cached_input_tokens") != expect {
            breaks += 1;
            assert!(n(&w[1], "cached_input_tokens") < n(&w[0], "cached_input_tokens"), "{w:?}");
        }
        assert!(n(&w[1], "reasoning_output_tokens") <= n(&w[1], "output_tokens"));
        assert_eq!(n(&w[1], "total_tokens"), n(&w[1], "input_tokens") + n(&w[1], "output_tokens"));
    }
    assert_eq!(breaks, 1, "only the compaction resets the cached prefix");
}

/// Codex: inputTokens = input − cached, cacheRead = cached, reasoning inside output; the
/// compaction request counts, the repeats and the estimate do not.
fn codex_matches_ccusage(path: &Path, file: &str) {
    let (reqs, _) = codex_requests(path);
    let sum = |k: &str| reqs.iter().map(|r| r[k].as_u64().unwrap()).sum::<u64>();
    let stem = path.file_stem().unwrap().to_str().unwrap();
    let reference = ccusage(file);
    let row = reference["sessions"].as_array().unwrap().iter().find(|s| s["sessionFile"] == stem).unwrap().clone();
    assert_eq!(
        [sum("input_tokens") - sum("cached_input_tokens"), sum("output_tokens"), 0, sum("cached_input_tokens")],
        ccusage_tokens(&row),
        "{stem}"
    );
    assert_eq!(sum("reasoning_output_tokens"), row["reasoningOutputTokens"].as_u64().unwrap(), "{stem}");
}

#[test]
#[cfg_attr(
    not(ctxj_has_samples),
    ignore = "needs ../shared/samples (fails under CI=true; once it is there, `touch build.rs`)"
)]
fn ccusage_reference_figures_match_the_shared_codex_rollouts() {
    let shared = shared_samples();
    let files = files_under(&shared.join("codex/sessions"));
    assert!(!files.is_empty());
    for p in files {
        codex_matches_ccusage(&p, "codex-session.json");
    }
}

#[test]
fn ccusage_reference_figures_match_the_raw_lines() {
    codex_matches_ccusage(&codex_rollout(), "bundled-codex-session.json");
    // pi: every assistant message in the file, abandoned branches included; cost = pi's own.
    let raw = lines(&pi_session());
    let assistants: Vec<&Value> =
        raw.iter().filter(|l| l["type"] == "message" && l["message"]["role"] == "assistant").collect();
    let sum = |k: &str| assistants.iter().map(|l| l["message"]["usage"][k].as_u64().unwrap()).sum::<u64>();
    let reference = ccusage("bundled-pi-session.json");
    let row = &reference["sessions"][0];
    assert_eq!([sum("input"), sum("output"), sum("cacheWrite"), sum("cacheRead")], ccusage_tokens(row));
    let cost: f64 = assistants.iter().map(|l| l["message"]["usage"]["cost"]["total"].as_f64().unwrap()).sum();
    assert!((cost - row["totalCost"].as_f64().unwrap()).abs() < 1e-12);
    assert_eq!(row["sessionId"].as_str().unwrap(), raw[0]["id"].as_str().unwrap());
}

#[test]
fn pi_session_is_v3_with_two_models_an_abandoned_branch_and_a_compaction() {
    let raw = lines(&pi_session());
    assert_eq!(raw[0]["type"], "session");
    assert_eq!(raw[0]["version"], 3);
    let name = pi_session().file_name().unwrap().to_str().unwrap().to_string();
    assert!(name.ends_with(&format!("_{}.jsonl", raw[0]["id"].as_str().unwrap())), "{name}");
    let entries = &raw[1..];
    let ids: HashSet<&str> = entries.iter().map(|e| e["id"].as_str().unwrap()).collect();
    assert_eq!(ids.len(), entries.len());
    for e in entries {
        let id = e["id"].as_str().unwrap();
        assert!(id.len() == 8 && id.chars().all(|c| c.is_ascii_hexdigit()), "{id}");
        assert!(e["parentId"].is_null() || ids.contains(e["parentId"].as_str().unwrap()));
    }
    let models: HashSet<&str> =
        entries.iter().filter(|e| e["type"] == "model_change").map(|e| e["modelId"].as_str().unwrap()).collect();
    assert_eq!(models.len(), 2, "{models:?}");
    let compaction = entries.iter().find(|e| e["type"] == "compaction").expect("a compaction");
    assert!(ids.contains(compaction["firstKeptEntryId"].as_str().unwrap()));
    // The leaf path (from the last entry) leaves exactly one user message + answer behind.
    let by_id: BTreeMap<&str, &Value> = entries.iter().map(|e| (e["id"].as_str().unwrap(), e)).collect();
    let mut on_path = HashSet::new();
    let mut cur = entries.last().unwrap()["id"].as_str();
    while let Some(id) = cur {
        on_path.insert(id);
        cur = by_id[id]["parentId"].as_str();
    }
    let off: Vec<&str> = entries
        .iter()
        .filter(|e| !on_path.contains(e["id"].as_str().unwrap()))
        .map(|e| e["message"]["role"].as_str().unwrap_or(""))
        .collect();
    assert_eq!(off, ["user", "assistant"], "the abandoned branch");
}
