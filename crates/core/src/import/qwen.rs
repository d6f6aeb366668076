//! Qwen Code chats (`~/.qwen/projects/<project>/chats/<session>.jsonl`) → journal-v1 records.
//!
//! The writer (`packages/core/src/services/chatRecordingService.ts` of QwenLM/qwen-code) appends
//! `ChatRecord`s `{uuid, parentUuid, sessionId, timestamp, type: user|assistant|tool_result|system,
//! subtype?, message?: Content, usageMetadata?, model?, isSidechain?, systemPayload?}`; `message`
//! is the Gemini API `Content` "in the exact format needed for API calls".
//!
//! Mapping:
//! * the conversation is the `parentUuid` chain from the last `user`/`assistant`/`tool_result`
//!   (or `chat_compression`) record back to its root, as for Claude Code; a record written again
//!   under the same `uuid` replaces the earlier one; records off the chain (a `rewind`'s abandoned
//!   branch) are counted as other branches; sidechain records (`isSidechain`) are left out;
//! * `user` → `user` (text parts, inline images as attachments); `assistant` → `assistant` (text,
//!   `functionCall` parts → calls, `usageMetadata` → usage: prompt = `promptTokenCount`, which
//!   includes the cache, cached = `cachedContentTokenCount`, completion = `candidatesTokenCount +
//!   thoughtsTokenCount`); `tool_result` → one `result` per `functionResponse` part;
//! * `system/chat_compression` → `compact` whose summary is the text of
//!   `systemPayload.compressedHistory` (the exact post-compression history); other system
//!   subtypes (`ui_telemetry`, `attribution_snapshot`, `rewind`, `custom_title`, …) are skipped
//!   and counted.
//!
//! Current writers store neither the system prompt nor the tool declarations: both are reported
//! missing.

use std::collections::{HashMap, HashSet};
use std::path::Path;
use std::sync::Arc;

use serde_json::{Map, Value};

use super::content::Calls;
use super::parts::{self, split};
use super::{parse_lines, s, u, Builder, Format, ImportError, ImportReport, Imported, Line};
use crate::journal::{AssistantRec, Body, CompactRec, SessionRec, UserRec};

/// Record types that carry conversation (a leaf must be one of them).
fn conversational(o: &Map<String, Value>) -> bool {
    matches!(s(o, "type"), Some("user" | "assistant" | "tool_result"))
        || (s(o, "type") == Some("system") && s(o, "subtype") == Some("chat_compression"))
}

pub fn read(path: &Path, bytes: &[u8]) -> Result<Imported, ImportError> {
    let mut report = ImportReport::new(Format::QwenCode, path);
    report.missing = vec!["system prompt".into(), "tool schemas".into()];
    let lines = parse_lines(path, bytes, &mut report)?;
    let side = |l: &Line| l.obj.get("isSidechain").and_then(Value::as_bool) == Some(true);
    let sidechain = lines.iter().filter(|l| side(l)).count();
    if sidechain > 0 {
        report.note(format!("{sidechain} sidechain (subagent) record(s) left out"));
        report.dropped.turns += lines.iter().filter(|l| side(l) && s(&l.obj, "type") == Some("assistant")).count();
    }
    // The last version of each uuid.
    let mut last: HashMap<&str, usize> = HashMap::new();
    for (i, l) in lines.iter().enumerate().filter(|(_, l)| !side(l)) {
        if let Some(id) = s(&l.obj, "uuid") {
            last.insert(id, i);
        }
    }
    let leaf = lines
        .iter()
        .enumerate()
        .rev()
        .find(|(i, l)| !side(l) && conversational(&l.obj) && s(&l.obj, "uuid").is_none_or(|id| last[id] == *i))
        .map(|(i, _)| i);
    let mut chain = Vec::new();
    let mut seen = HashSet::new();
    let mut cur = leaf;
    while let Some(i) = cur {
        if !seen.insert(i) {
            report.note("parentUuid cycle broken");
            break;
        }
        chain.push(i);
        cur = s(&lines[i].obj, "parentUuid").and_then(|p| last.get(p).copied());
    }
    chain.reverse();
    let on: HashSet<usize> = chain.iter().copied().collect();
    let off: Vec<&Line> = last.values().filter(|i| !on.contains(i)).map(|&i| &lines[i]).collect();
    if off.iter().any(|l| conversational(&l.obj)) {
        report.branches += 1;
        report.dropped.turns += off.iter().filter(|l| s(&l.obj, "type") == Some("assistant")).count();
    }
    let head = lines.first().map(|l| &l.obj);
    let id = head
        .and_then(|h| s(h, "sessionId"))
        .map(str::to_string)
        .unwrap_or_else(|| path.file_stem().map(|s| s.to_string_lossy().into_owned()).unwrap_or_default());
    let model = chain.iter().find_map(|&i| {
        (s(&lines[i].obj, "type") == Some("assistant")).then(|| s(&lines[i].obj, "model").map(str::to_string)).flatten()
    });
    let mut b = Builder::new();
    let first = chain.first().map(|&i| &lines[i]);
    b.push(
        first.and_then(|l| s(&l.obj, "timestamp")),
        first.map_or(0, |l| l.no),
        first.map_or(0, |l| l.offset),
        Body::Session(SessionRec {
            id,
            model: model.clone(),
            harness: Some("qwen-code".into()),
            encoding: None,
            ctx: None,
        }),
    );
    let mut r = Reader { b, report, files: Vec::new(), calls: Calls::default(), model, pending: Vec::new() };
    for &i in &chain {
        r.record(&lines[i]);
    }
    let Reader { b, mut report, files, .. } = r;
    report.ts_clamped = b.clamped;
    Ok(Imported { journal: b.finish(path), report, files })
}

/// The state of one Qwen Code import.
struct Reader {
    b: Builder,
    report: ImportReport,
    files: Vec<(String, crate::journal::Text)>,
    calls: Calls,
    model: Option<String>,
    /// Calls not answered yet (id, tool), for responses without an id.
    pending: Vec<(String, String)>,
}

impl Reader {
    fn record(&mut self, l: &Line) {
        let o = &l.obj;
        let content = o.get("message").and_then(|m| m.get("parts"));
        match s(o, "type").unwrap_or("") {
            "user" => {
                let p = split(content, &mut self.report);
                let mut texts = p.texts;
                let uid = self.b.unique_id(s(o, "uuid").unwrap_or("u"));
                let rule = self.model.as_deref().and_then(super::ImageRule::for_model);
                let att =
                    super::attach(&mut self.b, &uid, p.images, rule, &mut texts, &mut self.files, &mut self.report);
                let rec = UserRec { id: uid, text: Arc::from(texts.join("\n")), attachments: att };
                self.b.push(s(o, "timestamp"), l.no, l.offset, Body::User(rec));
                if !p.responses.is_empty() {
                    self.results(l, p.responses);
                }
            }
            "assistant" => self.assistant(l, content),
            "tool_result" => {
                let p = split(content, &mut self.report);
                if p.responses.is_empty() {
                    self.report.skip("tool_result without a functionResponse");
                }
                self.results(l, p.responses);
            }
            "system" => match s(o, "subtype").unwrap_or("") {
                "chat_compression" => self.compression(l),
                sub => self.report.skip(format!("system/{sub}")),
            },
            other => self.report.skip(format!("type {other:?}")),
        }
    }

    fn assistant(&mut self, l: &Line, content: Option<&Value>) {
        let o = &l.obj;
        let p = split(content, &mut self.report);
        let aid = self.b.unique_id(s(o, "uuid").unwrap_or("a"));
        let fc = p.calls;
        let calls = parts::calls(&mut self.b, &mut self.calls, &aid, fc, &mut self.report);
        self.pending.extend(calls.iter().map(|c| (c.id.clone(), c.tool.clone())));
        let usage = o.get("usageMetadata").and_then(Value::as_object).and_then(|m| {
            let g = |k| u(m, k).unwrap_or(0);
            parts::usage(
                g("promptTokenCount"),
                g("cachedContentTokenCount"),
                g("candidatesTokenCount"),
                g("thoughtsTokenCount"),
            )
        });
        let this = s(o, "model").map(str::to_string);
        let model = this.clone().filter(|x| Some(x) != self.model.as_ref());
        if this.is_some() {
            self.model = this;
        }
        let rec = AssistantRec { id: aid, text: Arc::from(p.texts.join("")), calls, model, usage, prompt_sha256: None };
        self.b.push(s(o, "timestamp"), l.no, l.offset, Body::Assistant(rec));
    }

    fn results(&mut self, l: &Line, resp: Vec<(String, String, Value)>) {
        for body in parts::results(&mut self.calls, &mut self.pending, resp, &mut self.report) {
            self.b.push(s(&l.obj, "timestamp"), l.no, l.offset, body);
        }
    }

    /// `chat_compression`: the recorded post-compression history replaces the context.
    fn compression(&mut self, l: &Line) {
        let hist = l.obj.get("systemPayload").and_then(|p| p.get("compressedHistory"));
        let mut texts = Vec::new();
        for c in hist.and_then(Value::as_array).into_iter().flatten() {
            texts.extend(split(c.get("parts"), &mut self.report).texts);
        }
        let payload = l.obj.get("systemPayload").and_then(Value::as_object);
        let tok = |k: &str| payload.and_then(|p| u(p, k)).map(|x| x as f64);
        let next = self.b.next_rev();
        let rec = CompactRec {
            trigger: None,
            instruction: None,
            summary: Arc::from(texts.join("\n\n")),
            first_kept: Some(next),
            kept: None,
            mode: None,
            fallback: None,
            tokens_before: tok("originalTokenCount"),
            tokens_after: tok("newTokenCount"),
            usage: None,
        };
        self.b.push(s(&l.obj, "timestamp"), l.no, l.offset, Body::Compact(rec));
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn chain_from_the_last_conversational_record_with_replacement_and_results() {
        let text = r#"{"uuid":"1","parentUuid":null,"sessionId":"s","timestamp":"2026-01-01T00:00:00Z","type":"user","message":{"role":"user","parts":[{"text":"go"}]}}
{"uuid":"2","parentUuid":"1","sessionId":"s","timestamp":"2026-01-01T00:00:01Z","type":"assistant","model":"m","message":{"role":"model","parts":[{"text":"old branch"}]}}
{"uuid":"3","parentUuid":"1","sessionId":"s","timestamp":"2026-01-01T00:00:02Z","type":"system","subtype":"rewind","systemPayload":{"targetUuid":"1"}}
{"uuid":"4","parentUuid":"3","sessionId":"s","timestamp":"2026-01-01T00:00:03Z","type":"assistant","model":"m","message":{"role":"model","parts":[{"text":"t","thought":true}]}}
{"uuid":"4","parentUuid":"3","sessionId":"s","timestamp":"2026-01-01T00:00:03Z","type":"assistant","model":"m","message":{"role":"model","parts":[{"functionCall":{"id":"c","name":"ls","args":{}}}]},"usageMetadata":{"promptTokenCount":600,"candidatesTokenCount":5,"cachedContentTokenCount":50,"thoughtsTokenCount":2}}
{"uuid":"5","parentUuid":"4","sessionId":"s","timestamp":"2026-01-01T00:00:04Z","type":"tool_result","message":{"role":"user","parts":[{"functionResponse":{"id":"c","name":"ls","response":{"output":"a"}}}]}}
{"uuid":"6","parentUuid":"5","sessionId":"s","timestamp":"2026-01-01T00:00:05Z","type":"system","subtype":"ui_telemetry","systemPayload":{}}"#;
        let im = read(Path::new("x.jsonl"), text.as_bytes()).unwrap();
        let kinds: Vec<&str> = im.journal.records.iter().map(|r| r.body.kind()).collect();
        assert_eq!(kinds, vec!["session", "user", "assistant", "result"]);
        let Body::Assistant(a) = &im.journal.records[2].body else { unreachable!() };
        let us = a.usage.as_ref().unwrap();
        assert_eq!((us.prompt_tokens, us.cached_tokens, us.completion_tokens), (Some(600), Some(50), Some(7)));
        assert_eq!(im.report.branches, 1);
        assert_eq!(im.report.dropped.turns, 1);
    }
}
