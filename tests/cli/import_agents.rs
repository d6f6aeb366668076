//! Issue 29, the content side: every content-bearing transcript of `../shared/corpus` from the
//! agents beyond Claude Code, Codex and pi (Gemini CLI, Qwen Code, Kimi Code, Cline, OpenClaw)
//! is recognised, imports, validates clean and has its request hashes reproduced by `show` for
//! every turn; the recorded usage equals the sums taken from the raw files; files ctxj does not
//! import get an answer saying what they are, never a JSON error on a valid file.

use std::path::{Path, PathBuf};

use serde_json::Value;

use crate::common::{ctxj, shared_corpus};
use ctxj_core::import::Format;

/// The content-bearing corpus files and the format each must be detected as.
fn content_files(c: &Path) -> Vec<(PathBuf, Format)> {
    let mut out = Vec::new();
    let mut add = |dir: &str, keep: &dyn Fn(&str) -> bool, f: Format| {
        for e in walkdir::WalkDir::new(c.join(dir)).sort_by_file_name().into_iter().flatten() {
            let name = e.file_name().to_string_lossy().into_owned();
            if e.file_type().is_file() && keep(&name) {
                out.push((e.path().to_path_buf(), f));
            }
        }
    };
    add("gemini", &|n| n.starts_with("session-"), Format::GeminiCli);
    add("qwen", &|n| n.ends_with(".jsonl"), Format::QwenCode);
    add("kimi-code", &|n| n == "wire.jsonl", Format::KimiCode);
    add("cline", &|n| n.ends_with(".messages.json") || n == "api_conversation_history.json", Format::Cline);
    add("openclaw", &|n| n.contains(".jsonl"), Format::Pi);
    out
}

fn raw(path: &Path) -> Value {
    serde_json::from_slice(&std::fs::read(path).unwrap()).unwrap()
}

fn raw_lines(path: &Path) -> Vec<Value> {
    let text = std::fs::read_to_string(path).unwrap();
    text.lines().filter(|l| !l.trim().is_empty()).filter_map(|l| serde_json::from_str(l).ok()).collect()
}

fn n(v: &Value, k: &str) -> u64 {
    v.get(k).and_then(Value::as_u64).unwrap_or(0)
}

/// Σ prompt tokens the agent recorded, taken from the raw file by the agent's own field rules
/// (Gemini: `tokens.input + tokens.tool` of `gemini` messages, the last record of an id; Kimi Code:
/// `inputOther + inputCacheRead + inputCacheCreation` of turn-scope `usage.record`s; Cline SDK:
/// `metrics.inputTokens`; legacy Cline: `metrics.tokens.prompt + cached`).
fn raw_prompt_sum(path: &Path, f: Format) -> Option<u64> {
    match f {
        Format::GeminiCli => {
            let msgs: Vec<Value> = if path.extension().is_some_and(|e| e == "json") {
                raw(path)["messages"].as_array().unwrap().clone()
            } else {
                let mut by_id: Vec<(String, Value)> = Vec::new();
                for l in raw_lines(path) {
                    let Some(id) = l.get("id").and_then(Value::as_str).map(str::to_string) else { continue };
                    match by_id.iter_mut().find(|(i, _)| *i == id) {
                        Some(slot) => slot.1 = l,
                        None => by_id.push((id, l)),
                    }
                }
                by_id.into_iter().map(|x| x.1).collect()
            };
            let g = msgs.iter().filter(|m| m["type"] == "gemini").filter_map(|m| m.get("tokens"));
            Some(g.map(|t| n(t, "input") + n(t, "tool")).sum())
        }
        Format::KimiCode => Some(
            raw_lines(path)
                .iter()
                .filter(|l| l["type"] == "usage.record" && l["usageScope"] == "turn")
                .map(|l| {
                    n(&l["usage"], "inputOther")
                        + n(&l["usage"], "inputCacheRead")
                        + n(&l["usage"], "inputCacheCreation")
                })
                .sum(),
        ),
        Format::Cline => {
            let v = raw(path);
            let msgs = v.as_array().cloned().or_else(|| v["messages"].as_array().cloned()).unwrap();
            Some(
                msgs.iter()
                    .filter_map(|m| m.get("metrics"))
                    .map(|m| match m.get("tokens") {
                        Some(t) => n(t, "prompt") + n(t, "cached"),
                        None => n(m, "inputTokens"),
                    })
                    .sum(),
            )
        }
        _ => None,
    }
}

#[test]
#[cfg_attr(
    not(ctxj_has_corpus),
    ignore = "needs ../shared/corpus (fails under CI=true; once it is there, `touch build.rs`)"
)]
fn every_content_sample_imports_validates_and_show_reproduces_every_hash() {
    let c = shared_corpus();
    let files = content_files(&c);
    assert!(files.len() >= 13, "expected the corpus's content-bearing files, found {}", files.len());
    let out = tempfile::tempdir().unwrap();
    for (k, (f, want)) in files.iter().enumerate() {
        assert_eq!(ctxj_core::import::detect_file(f), Some(*want), "{}", f.display());
        let im = ctxj_core::import::import_file(f, *want, None).unwrap_or_else(|e| panic!("{}: {e}", f.display()));
        if let Some(sum) = raw_prompt_sum(f, *want) {
            let got: u64 = im
                .journal
                .records
                .iter()
                .filter_map(|r| match &r.body {
                    ctxj_core::journal::Body::Assistant(a) => a.usage.as_ref().and_then(|u| u.prompt_tokens),
                    _ => None,
                })
                .sum();
            assert_eq!(got, sum, "{}: Σ prompt tokens", f.display());
            assert!(sum > 0, "{}", f.display());
        }
        let dest = out.path().join(format!("s{k}"));
        ctxj().arg("import").arg(f).arg("--out").arg(&dest).assert().success();
        let v = ctxj().args(["validate", "--json"]).arg(&dest).output().unwrap();
        assert!(v.status.success(), "{}: {}", f.display(), String::from_utf8_lossy(&v.stdout));
        let v: Value = serde_json::from_slice(&v.stdout).unwrap();
        assert_eq!(v["errors"], 0, "{}", f.display());
        let jp = dest.join("journal.jsonl");
        let text = std::fs::read(&jp).unwrap();
        let j = ctxj_core::journal::parse_bytes(&jp, &text, Default::default()).unwrap();
        let recorded = |k: usize| match &j.records[j.turns[k - 1]].body {
            ctxj_core::journal::Body::Assistant(a) => a.prompt_sha256.clone().expect("every turn has prompt_sha256"),
            _ => unreachable!(),
        };
        assert!(!j.turns.is_empty(), "{}: no turns", f.display());
        ctxj_core::projection::for_each_request(&j, |k, _, p| {
            assert_eq!(recorded(k), p.sha256(), "{} turn {k}", f.display())
        });
        // `show` of the imported session (and of the transcript itself) gives the same bytes.
        for k in 1..=j.turns.len() {
            let shown = ctxj().args(["show", "--at", "turn", &k.to_string(), "--json"]).arg(&dest).output().unwrap();
            assert!(shown.status.success(), "{} turn {k}", f.display());
            let bytes = &shown.stdout[..shown.stdout.len() - 1];
            assert_eq!(ctxj_core::projection::block::sha256_hex(bytes), recorded(k), "{} turn {k}", f.display());
        }
        let last = j.turns.len().to_string();
        let direct = ctxj().args(["show", "--at", "turn", &last, "--json"]).arg(f).output().unwrap();
        assert!(direct.status.success(), "{}", f.display());
        assert_eq!(
            ctxj_core::projection::block::sha256_hex(&direct.stdout[..direct.stdout.len() - 1]),
            recorded(j.turns.len())
        );
    }
}

#[test]
#[cfg_attr(
    not(ctxj_has_corpus),
    ignore = "needs ../shared/corpus (fails under CI=true; once it is there, `touch build.rs`)"
)]
fn the_system_prompt_is_carried_where_the_log_records_it() {
    let c = shared_corpus();
    for (f, want) in content_files(&c) {
        let im = ctxj_core::import::import_file(&f, want, None).unwrap();
        let system = im.journal.records.iter().any(|r| matches!(r.body, ctxj_core::journal::Body::System(_)));
        let records_it = match want {
            Format::KimiCode => {
                raw_lines(&f).iter().any(|l| l["type"] == "config.update" && l.get("systemPrompt").is_some())
            }
            Format::Cline => raw(&f).get("system_prompt").is_some(),
            _ => false,
        };
        assert_eq!(system, records_it, "{}", f.display());
        assert_eq!(im.report.missing.iter().any(|m| m == "system prompt"), !records_it, "{}", f.display());
    }
}

#[test]
#[cfg_attr(
    not(ctxj_has_corpus),
    ignore = "needs ../shared/corpus (fails under CI=true; once it is there, `touch build.rs`)"
)]
fn agent_files_ctxj_does_not_import_are_named_not_json_errors() {
    let c = shared_corpus();
    let cases = [
        ("cline/data/sessions/1784094124598_rruoq/1784094124598_rruoq.json", "Cline session manifest"),
        ("cline/data/tasks/agentlogs-crud/task_metadata.json", "Cline task's metadata"),
        ("kimi/sessions/kimi-code-fixture/large-100msgs/context.jsonl", "Kimi CLI context log"),
        ("kimi/sessions/kimi-code-fixture/large-100msgs/wire.jsonl", "Kimi CLI wire log"),
        ("amp/threads/T-thread-a.json", "Amp thread"),
    ];
    for (rel, what) in cases {
        let out = ctxj().arg("log").arg(c.join(rel)).output().unwrap();
        let err = String::from_utf8_lossy(&out.stderr);
        assert_eq!(out.status.code(), Some(2), "{rel}: {err}");
        assert!(err.contains(what), "{rel}: {err}");
        assert!(!err.contains("invalid JSON") && !err.contains("missing field"), "{rel}: {err}");
    }
}

#[test]
fn valid_json_that_is_no_transcript_says_what_it_looked_like() {
    let d = tempfile::tempdir().unwrap();
    let doc = d.path().join("settings.json");
    std::fs::write(&doc, "{\n  \"theme\": \"dark\",\n  \"fontSize\": 12\n}\n").unwrap();
    let lines = d.path().join("events.jsonl");
    std::fs::write(&lines, "{\"event\":\"a\",\"n\":1}\n{\"event\":\"b\",\"n\":2}\n").unwrap();
    for (p, shape) in [(&doc, "a JSON object with keys theme, fontSize"), (&lines, "JSON lines")] {
        let out = ctxj().arg("log").arg(p).output().unwrap();
        let err = String::from_utf8_lossy(&out.stderr);
        assert_eq!(out.status.code(), Some(2), "{err}");
        assert!(err.contains(shape) && err.contains("not a transcript ctxj knows"), "{err}");
        assert!(!err.contains("invalid JSON") && !err.contains("missing field"), "{err}");
    }
    // A broken journal still gets the journal reader's answer, naming its bad line.
    let j = d.path().join("journal.jsonl");
    std::fs::write(&j, "{\"rev\":1,\"ts\":\"2026-01-01T00:00:00Z\",\"kind\":\"session\",\"id\":\"s\"}\n{\"rev\":2,\"ts\":\"2026-01-01T00:00:00Z\"}\n").unwrap();
    let out = ctxj().arg("log").arg(&j).output().unwrap();
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(err.contains(":2"), "{err}");
}

#[test]
fn a_gemini_session_is_named_with_its_format_when_forced_wrong() {
    let d = tempfile::tempdir().unwrap();
    let p = d.path().join("session-2026-01-01T00-00-abcdef12.json");
    std::fs::write(
        &p,
        r#"{
  "sessionId": "abcdef12", "projectHash": "h", "startTime": "2026-01-01T00:00:00Z",
  "messages": [
    {"id": "u", "timestamp": "2026-01-01T00:00:01Z", "type": "user", "content": "hi"},
    {"id": "a", "timestamp": "2026-01-01T00:00:02Z", "type": "gemini", "content": "hello", "model": "gemini-2.5-flash",
     "tokens": {"input": 10, "output": 2, "cached": 0, "thoughts": 0, "tool": 0, "total": 12}}
  ]
}"#,
    )
    .unwrap();
    ctxj().arg("turns").arg(&p).assert().success();
    let out = ctxj().args(["log", "--from", "codex"]).arg(&p).output().unwrap();
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(err.contains("a Gemini CLI session"), "{err}");
}

/// SYNTHETIC, Gemini CLI's legacy chat schema: a session holding only a `warning` message (a
/// hook failing at exit, seen in a real chat) was refused with "not one record read as gemini
/// … is --from right?", though its format was detected from its own content. It is a Gemini
/// CLI session with nothing to replay: it imports with no turns, the warning counted as skipped.
#[test]
fn regression_gemini_session_with_only_a_warning_was_refused() {
    let d = tempfile::tempdir().unwrap();
    let p = d.path().join("session-2026-02-03T04-09-aaaabbbb.json");
    std::fs::write(
        &p,
        r#"{"sessionId": "aaaabbbb-0000-0000-0000-000000000000", "projectHash": "h",
  "startTime": "2026-02-03T04:09:57.093Z", "lastUpdated": "2026-02-03T04:09:57.093Z",
  "messages": [{"id": "w", "timestamp": "2026-02-03T04:09:57.093Z", "type": "warning", "content": "Hook failed.\n"}]}"#,
    )
    .unwrap();
    let dest = d.path().join("out");
    let out = ctxj().arg("import").arg(&p).arg("-o").arg(&dest).output().unwrap();
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(out.status.success(), "{err}");
    assert!(err.contains("warning") && !err.contains("is --from right"), "{err}");
    ctxj().args(["validate"]).arg(&dest).assert().success();
    // A file of another format forced as gemini is still an error.
    let other = d.path().join("x.jsonl");
    std::fs::write(&other, "{\"x\":1}\n{\"y\":2}\n").unwrap();
    let out = ctxj().args(["show", "--from", "gemini"]).arg(&other).output().unwrap();
    assert_eq!(out.status.code(), Some(2), "{}", String::from_utf8_lossy(&out.stderr));
}
