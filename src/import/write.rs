//! Serialising a journal as a journal-v1 session directory (for `ctxj import`).
//!
//! Each record becomes one line with the keys `rev`, `ts`, `kind` first and the kind's fields in
//! the order of spec §2; optional fields that are absent stay absent. Every `assistant` record
//! gets the `prompt_sha256` of its request, computed with the recorded projection, so that
//! `ctxj validate` can check the written session. Attachment payloads the transcript held inline
//! are written under `<user-id>.att/`.

use std::path::{Path, PathBuf};

use serde_json::{Map, Value};

use crate::journal::session::{guard_write, Keep};
use crate::journal::{Body, CtxSettings, Journal, Record};
use crate::projection::{for_each_request, RequestHasher};

/// Why a session could not be written.
#[derive(Debug, thiserror::Error)]
pub enum WriteError {
    #[error("{0}: a session already exists there (journal.jsonl); pass --force to overwrite it")]
    Exists(String),
    #[error(transparent)]
    Refused(#[from] crate::journal::SessionError),
    #[error("{path}: {err}")]
    Io { path: String, err: std::io::Error },
}

/// What [`write_session`] wrote.
#[derive(Debug, Clone, Default, serde::Serialize)]
pub struct Written {
    pub journal: PathBuf,
    pub records: usize,
    pub turns: usize,
    pub files: usize,
    pub bytes: u64,
}

/// The journal as JSONL text, with `prompt_sha256` set on every assistant record.
pub fn to_jsonl(journal: &Journal) -> String {
    let mut sha = vec![None; journal.records.len()];
    let mut hasher = RequestHasher::default();
    for_each_request(journal, |_, idx, p| sha[idx] = Some(hasher.sha256(p)));
    let mut out = String::new();
    for (i, r) in journal.records.iter().enumerate() {
        let v = record_value(r, sha[i].as_deref());
        out.push_str(&serde_json::to_string(&v).expect("a Value always serialises"));
        out.push('\n');
    }
    out
}

/// Writes `journal` (and `files`: relative path, base64 payload) as a session in `dir`.
/// Refuses an existing `journal.jsonl` unless `force`, and the transcript's own folder always.
pub fn write_session(
    dir: &Path,
    journal: &Journal,
    files: &[(String, crate::journal::Text)],
    source: &Path,
    force: bool,
) -> Result<Written, WriteError> {
    let io = |p: &Path| {
        let path = p.display().to_string();
        move |err| WriteError::Io { path, err }
    };
    let source_dir = match source.parent() {
        Some(p) if !p.as_os_str().is_empty() => p,
        _ => Path::new("."),
    };
    guard_write(dir, source_dir, Keep::Exactly)?;
    let jpath = dir.join(crate::journal::session::JOURNAL_FILE);
    if jpath.exists() && !force {
        return Err(WriteError::Exists(dir.display().to_string()));
    }
    std::fs::create_dir_all(dir).map_err(io(dir))?;
    let text = to_jsonl(journal);
    std::fs::write(&jpath, &text).map_err(io(&jpath))?;
    let mut n = 0;
    for (rel, data) in files {
        // Names are built by the importers from ids; refuse anything that could leave `dir`.
        if rel.starts_with('/') || rel.contains('\\') || rel.split('/').any(|c| c == ".." || c == "." || c.is_empty()) {
            continue;
        }
        let Some(bytes) = super::base64_decode(data) else { continue };
        let p = dir.join(rel);
        if let Some(parent) = p.parent() {
            std::fs::create_dir_all(parent).map_err(io(parent))?;
        }
        std::fs::write(&p, bytes).map_err(io(&p))?;
        n += 1;
    }
    Ok(Written {
        journal: jpath,
        records: journal.records.len(),
        turns: journal.turns.len(),
        files: n,
        bytes: text.len() as u64,
    })
}

fn num(f: f64) -> Value {
    if f.fract() == 0.0 && (0.0..1e18).contains(&f) {
        Value::from(f as u64)
    } else {
        serde_json::Number::from_f64(f).map_or(Value::Null, Value::Number)
    }
}

fn ctx_value(c: &CtxSettings) -> Value {
    let mut m = Map::new();
    for (k, v) in [
        ("ctx_window", c.ctx_window),
        ("context_budget", c.context_budget),
        ("context_reserve", c.context_reserve),
        ("context_target", c.context_target),
        ("keep_results", c.keep_results),
    ] {
        if let Some(v) = v {
            m.insert(k.into(), Value::from(v));
        }
    }
    Value::Object(m)
}

/// One record as a JSON object in spec key order. `sha` overrides an assistant's `prompt_sha256`.
pub fn record_value(r: &Record, sha: Option<&str>) -> Value {
    let mut m = Map::new();
    m.insert("rev".into(), Value::from(r.rev));
    m.insert("ts".into(), Value::from(&*r.ts));
    m.insert("kind".into(), Value::from(r.kind()));
    let mut put = |k: &str, v: Value| {
        m.insert(k.to_string(), v);
    };
    match &r.body {
        Body::Session(s) => {
            put("id", s.id.clone().into());
            if let Some(x) = &s.model {
                put("model", x.clone().into());
            }
            if let Some(x) = &s.harness {
                put("harness", x.clone().into());
            }
            if let Some(x) = &s.encoding {
                put("encoding", x.clone().into());
            }
            if let Some(c) = &s.ctx {
                put("ctx", ctx_value(c));
            }
        }
        Body::System(s) => {
            put("text", Value::from(&*s.text));
            if let Some(t) = &s.tools {
                put("tools", (**t).clone());
            }
        }
        Body::Notice(n) => {
            put("id", n.id.clone().into());
            put("text", Value::from(&*n.text));
            if let Some(t) = &n.topic {
                put("topic", t.clone().into());
            }
        }
        Body::User(u) => {
            put("id", u.id.clone().into());
            put("text", Value::from(&*u.text));
            if !u.attachments.is_empty() {
                let a: Vec<Value> = u
                    .attachments
                    .iter()
                    .map(|a| {
                        let mut o = Map::new();
                        o.insert("id".into(), a.id.clone().into());
                        o.insert("path".into(), a.path.clone().into());
                        o.insert("bytes".into(), Value::from(a.bytes));
                        o.insert("preview".into(), Value::from(&*a.preview));
                        Value::Object(o)
                    })
                    .collect();
                put("attachments", Value::Array(a));
            }
        }
        Body::Assistant(a) => {
            put("id", a.id.clone().into());
            put("text", Value::from(&*a.text));
            if !a.calls.is_empty() {
                let c: Vec<Value> = a
                    .calls
                    .iter()
                    .map(|c| {
                        let mut o = Map::new();
                        o.insert("id".into(), c.id.clone().into());
                        o.insert("tool".into(), c.tool.clone().into());
                        o.insert("args".into(), (*c.args).clone());
                        Value::Object(o)
                    })
                    .collect();
                put("calls", Value::Array(c));
            }
            if let Some(x) = &a.model {
                put("model", x.clone().into());
            }
            if let Some(us) = &a.usage {
                let mut o = Map::new();
                for (k, v) in [
                    ("prompt_tokens", us.prompt_tokens),
                    ("cached_tokens", us.cached_tokens),
                    ("completion_tokens", us.completion_tokens),
                ] {
                    if let Some(v) = v {
                        o.insert(k.into(), Value::from(v));
                    }
                }
                put("usage", Value::Object(o));
            }
            if let Some(x) = sha.map(str::to_string).or_else(|| a.prompt_sha256.clone()) {
                put("prompt_sha256", x.into());
            }
        }
        Body::Result(res) => {
            put("call", res.call.clone().into());
            put("tool", res.tool.clone().into());
            put("text", Value::from(&*res.text));
            put("bytes", Value::from(res.bytes));
            if let Some(e) = res.is_error {
                put("is_error", e.into());
            }
            if let Some(s) = &res.spill {
                put("spill", s.clone().into());
            }
        }
        Body::Compact(c) => {
            if let Some(t) = &c.trigger {
                put("trigger", t.clone().into());
            }
            if let Some(t) = &c.instruction {
                put("instruction", t.clone().into());
            }
            put("summary", Value::from(&*c.summary));
            if let Some(k) = c.first_kept {
                put("first_kept", Value::from(k));
            }
            if let Some(k) = &c.kept {
                put("kept", k.iter().cloned().map(Value::from).collect::<Vec<_>>().into());
            }
            if let Some(x) = &c.mode {
                put("mode", x.clone().into());
            }
            if let Some(x) = c.fallback {
                put("fallback", x.into());
            }
            if let Some(x) = c.tokens_before {
                put("tokens_before", num(x));
            }
            if let Some(x) = c.tokens_after {
                put("tokens_after", num(x));
            }
        }
        Body::Model(mr) => {
            put("model", mr.model.clone().into());
            if let Some(c) = &mr.ctx {
                put("ctx", ctx_value(c));
            }
        }
        // Importers never produce these; kept minimal for completeness.
        Body::Elide(e) => {
            put("by", e.by.clone().unwrap_or_else(|| "auto".into()).into());
            put("calls", e.calls.iter().cloned().map(Value::from).collect::<Vec<_>>().into());
        }
        Body::Clear(c) => {
            put("cleared", c.cleared.iter().cloned().map(Value::from).collect::<Vec<_>>().into());
        }
        Body::Mirror(mi) => {
            put("mirror_rev", Value::from(mi.mirror_rev));
            put("base_rev", Value::from(mi.base_rev));
            put("status", mi.status.clone().into());
            put("draft", mi.draft.clone());
            put("service_calls", mi.service_calls.iter().cloned().map(Value::from).collect::<Vec<_>>().into());
        }
        Body::Unknown { .. } => {}
    }
    Value::Object(m)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::journal::{parse_bytes, ReadOptions};

    #[test]
    fn written_journal_reads_back_with_matching_hashes() {
        let src = r#"{"type":"user","uuid":"u1","parentUuid":null,"timestamp":"2026-01-01T00:00:00Z","message":{"role":"user","content":"hi"}}
{"type":"assistant","uuid":"a1","parentUuid":"u1","requestId":"r","timestamp":"2026-01-01T00:00:01Z","message":{"id":"m1","model":"c","content":[{"type":"tool_use","id":"t1","name":"Bash","input":{"command":"ls","n":1.50}}],"usage":{"input_tokens":1,"output_tokens":2}}}
{"type":"user","uuid":"r1","parentUuid":"a1","timestamp":"2026-01-01T00:00:02Z","message":{"role":"user","content":[{"type":"tool_result","tool_use_id":"t1","content":"x"}]}}
{"type":"assistant","uuid":"a2","parentUuid":"r1","requestId":"r2","timestamp":"2026-01-01T00:00:03Z","message":{"id":"m2","model":"c","content":[{"type":"text","text":"ok"}]}}
"#;
        let im = super::super::claude_code::read(Path::new("t.jsonl"), src.as_bytes(), None).unwrap();
        let text = to_jsonl(&im.journal);
        assert!(text.contains(r#""n":1.50"#), "numbers keep their text: {text}");
        let back = parse_bytes(Path::new("j"), text.as_bytes(), ReadOptions::default()).unwrap();
        assert_eq!(back.records.len(), im.journal.records.len());
        let mut n = 0;
        let mut h = RequestHasher::new();
        for_each_request(&back, |k, idx, p| {
            assert_eq!(h.sha256(p), p.sha256(), "incremental hash, turn {k}");
            let Body::Assistant(a) = &back.records[idx].body else { panic!() };
            assert_eq!(a.prompt_sha256.as_deref(), Some(p.sha256().as_str()), "turn {k}");
            n += 1;
        });
        assert_eq!(n, 2);
    }
}
