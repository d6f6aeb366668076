//! Gemini CLI chats (`~/.gemini/tmp/<project>/chats/session-*.json[l]`, subagents under
//! `chats/<parent session>/<id>.jsonl`) → journal-v1 records.
//!
//! Two generations, both written by `packages/core/src/services/chatRecordingService.ts`:
//! * legacy (before 0.40): one JSON object `{sessionId, projectHash, startTime, lastUpdated,
//!   messages: [...]}` rewritten whole;
//! * JSONL (≥ 0.40): a metadata line, then message records appended whenever they change (the
//!   **last record of an id wins**, in the place of its first), `{"$set": {...}}` metadata updates
//!   (a `$set.messages` is a checkpoint that **replaces the whole list**: compression, rollback)
//!   and `{"$rewindTo": id}`, which drops that message and every later one.
//!
//! Mapping (the folded list, in order): `user` → `user` (text parts; inline images become
//! attachments); `gemini` → `assistant` (text, `toolCalls[]` → calls, `tokens` → usage: prompt =
//! `input` (Gemini's `promptTokenCount`, cache included), cached = `cached`, completion =
//! `output + thoughts`), then one `result` per tool call that holds its `result` parts;
//! `info`/`error`/`warning` are shown to the user only and skipped. A `$set.messages` checkpoint
//! becomes a `compact` record whose summary is the text of the new list (nothing of the old list
//! is kept), followed by nothing else from it: the records after it are the list's later changes.
//! Gemini CLI records neither the system instruction nor the tool declarations: both are reported
//! missing (the replay estimates them as for Claude Code).

use std::collections::HashMap;
use std::path::Path;
use std::sync::Arc;

use serde_json::{Map, Value};

use super::content::Calls;
use super::parts::{self, split};
use super::{f, parse_lines, s, u, Builder, Format, ImportError, ImportReport, Imported, Line};
use crate::journal::reader::parse_json;
use crate::journal::{AssistantRec, Body, CompactRec, JournalError, JournalErrorKind, SessionRec, UserRec};

/// One message of the folded list: the record and where its last version was read.
struct Msg {
    obj: Map<String, Value>,
    no: usize,
    offset: u64,
}

/// What the file folds to: metadata, and the events in order (messages and checkpoints).
enum Event {
    Msg(Msg),
    /// A `$set.messages` checkpoint: the messages it sets.
    Checkpoint {
        no: usize,
        offset: u64,
        messages: Vec<Value>,
        ts: Option<String>,
    },
}

pub fn read(path: &Path, bytes: &[u8]) -> Result<Imported, ImportError> {
    let mut report = ImportReport::new(Format::GeminiCli, path);
    report.missing = vec!["system prompt".into(), "tool schemas".into()];
    let (meta, events) =
        if is_whole_json(bytes) { legacy(path, bytes, &mut report)? } else { fold(path, bytes, &mut report)? };
    let mut b = Builder::new();
    let first_model = events.iter().find_map(|e| match e {
        Event::Msg(m) => s(&m.obj, "model").map(str::to_string),
        Event::Checkpoint { .. } => None,
    });
    let id = s(&meta, "sessionId")
        .map(str::to_string)
        .unwrap_or_else(|| path.file_stem().map(|s| s.to_string_lossy().into_owned()).unwrap_or_default());
    b.push(
        s(&meta, "startTime"),
        1,
        0,
        Body::Session(SessionRec {
            id,
            model: first_model.clone(),
            harness: Some("gemini-cli".into()),
            encoding: None,
            ctx: None,
        }),
    );
    let mut r = Reader { b, report, files: Vec::new(), calls: Calls::default(), model: first_model };
    for e in events {
        match e {
            Event::Msg(m) => r.message(&m),
            Event::Checkpoint { no, offset, messages, ts } => r.checkpoint(no, offset, &messages, ts.as_deref()),
        }
    }
    let Reader { b, mut report, files, .. } = r;
    report.ts_clamped = b.clamped;
    Ok(Imported { journal: b.finish(path), report, files })
}

/// Whether the bytes are one JSON document (the legacy format) rather than JSON lines: the first
/// non-blank line is not a whole JSON object by itself.
pub(crate) fn is_whole_json(bytes: &[u8]) -> bool {
    let first = bytes.split(|&c| c == b'\n').find(|l| !l.iter().all(u8::is_ascii_whitespace)).unwrap_or(b"");
    let t = first.trim_ascii();
    t.starts_with(b"{") && serde_json::from_slice::<serde::de::IgnoredAny>(t).is_err()
}

/// The legacy whole-file JSON: metadata and the `messages` array (line numbers are the line each
/// message starts on).
fn legacy(
    path: &Path,
    bytes: &[u8],
    report: &mut ImportReport,
) -> Result<(Map<String, Value>, Vec<Event>), ImportError> {
    let v = parse_json(bytes).map_err(|kind| JournalError::at(path, 1, 0, kind, &bytes[..bytes.len().min(200)]))?;
    report.lines = bytecount_lines(bytes);
    let Value::Object(mut meta) = v else {
        return Err(JournalError::at(path, 1, 0, JournalErrorKind::NotAnObject, b"").into());
    };
    let msgs = match meta.remove("messages") {
        Some(Value::Array(a)) => a,
        _ => Vec::new(),
    };
    let events = msgs
        .into_iter()
        .filter_map(|m| match m {
            Value::Object(obj) => Some(Event::Msg(Msg { obj, no: 1, offset: 0 })),
            _ => {
                report.skip("non-object message");
                None
            }
        })
        .collect();
    Ok((meta, events))
}

fn bytecount_lines(bytes: &[u8]) -> usize {
    memchr::memchr_iter(b'\n', bytes).count() + usize::from(!bytes.ends_with(b"\n") && !bytes.is_empty())
}

/// Folds the JSONL generation: replace-by-id, `$set`, `$set.messages`, `$rewindTo`.
fn fold(path: &Path, bytes: &[u8], report: &mut ImportReport) -> Result<(Map<String, Value>, Vec<Event>), ImportError> {
    let lines = parse_lines(path, bytes, report)?;
    let mut meta = Map::new();
    let mut events: Vec<Event> = Vec::new();
    // Position in `events` of each live message id.
    let mut at: HashMap<String, usize> = HashMap::new();
    for Line { no, offset, obj } in lines {
        if let Some(target) = obj.get("$rewindTo") {
            let target = target.as_str().unwrap_or("");
            match at.get(target).copied() {
                Some(pos) => {
                    for e in events.drain(pos..) {
                        if let Event::Msg(m) = e {
                            at.remove(s(&m.obj, "id").unwrap_or(""));
                            report.dropped.turns += usize::from(s(&m.obj, "type") == Some("gemini"));
                        }
                    }
                    report.branches += 1;
                }
                None => report.skip("$rewindTo an unknown id"),
            }
            continue;
        }
        if let Some(set) = obj.get("$set").and_then(Value::as_object) {
            for (k, v) in set {
                if k == "messages" {
                    if let Value::Array(a) = v {
                        at.clear();
                        let ts = s(set, "lastUpdated").map(str::to_string);
                        events.push(Event::Checkpoint { no, offset, messages: a.clone(), ts });
                    }
                } else {
                    meta.insert(k.clone(), v.clone());
                }
            }
            continue;
        }
        match (s(&obj, "id"), s(&obj, "type")) {
            (Some(id), Some(_)) => {
                let id = id.to_string();
                let m = Msg { obj, no, offset };
                match at.get(&id) {
                    Some(&pos) => events[pos] = Event::Msg(m),
                    None => {
                        at.insert(id, events.len());
                        events.push(Event::Msg(m));
                    }
                }
            }
            _ if obj.contains_key("sessionId") => meta.extend(obj),
            _ => report.skip("line without id and type"),
        }
    }
    Ok((meta, events))
}

/// The state of one Gemini CLI import.
struct Reader {
    b: Builder,
    report: ImportReport,
    files: Vec<(String, crate::journal::Text)>,
    calls: Calls,
    model: Option<String>,
}

impl Reader {
    fn message(&mut self, m: &Msg) {
        let o = &m.obj;
        match s(o, "type").unwrap_or("") {
            "user" => self.user(m),
            "gemini" => self.gemini(m),
            other @ ("info" | "error" | "warning") => self.report.skip(format!("{other} message (shown, not sent)")),
            other => self.report.skip(format!("message type {other:?}")),
        }
    }

    fn user(&mut self, m: &Msg) {
        let p = split(m.obj.get("content"), &mut self.report);
        let mut texts = p.texts;
        if !p.calls.is_empty() || !p.responses.is_empty() {
            self.report.lose("function part in a user message");
        }
        let uid = self.b.unique_id(s(&m.obj, "id").unwrap_or("u"));
        let rule = self.model.as_deref().and_then(super::ImageRule::for_model);
        let att = super::attach(&mut self.b, &uid, p.images, rule, &mut texts, &mut self.files, &mut self.report);
        let rec = UserRec { id: uid, text: Arc::from(texts.join("\n")), attachments: att };
        self.b.push(s(&m.obj, "timestamp"), m.no, m.offset, Body::User(rec));
    }

    fn gemini(&mut self, m: &Msg) {
        let o = &m.obj;
        let p = split(o.get("content"), &mut self.report);
        if o.get("thoughts").and_then(Value::as_array).is_some_and(|t| !t.is_empty()) {
            self.report.lose("thoughts");
        }
        let aid = self.b.unique_id(s(o, "id").unwrap_or("a"));
        let tool_calls: Vec<&Map<String, Value>> =
            o.get("toolCalls").and_then(Value::as_array).into_iter().flatten().filter_map(Value::as_object).collect();
        let mut fc = p.calls;
        for tc in &tool_calls {
            let args = tc.get("args").cloned().unwrap_or(Value::Object(Map::new()));
            fc.push((s(tc, "id").unwrap_or("").to_string(), s(tc, "name").unwrap_or("?").to_string(), args));
        }
        let calls = parts::calls(&mut self.b, &mut self.calls, &aid, fc, &mut self.report);
        let usage = o.get("tokens").and_then(Value::as_object).and_then(|t| {
            let g = |k| u(t, k).unwrap_or(0);
            parts::usage(g("input") + g("tool"), g("cached"), g("output"), g("thoughts"))
        });
        let this = s(o, "model").map(str::to_string);
        let model = this.clone().filter(|x| Some(x) != self.model.as_ref());
        if this.is_some() {
            self.model = this;
        }
        let rec = AssistantRec { id: aid, text: Arc::from(p.texts.join("")), calls, model, usage, prompt_sha256: None };
        self.b.push(s(o, "timestamp"), m.no, m.offset, Body::Assistant(rec));
        // Each tool call's result is the function response sent with the next request.
        let mut pending = Vec::new();
        for tc in tool_calls {
            let resp = split(tc.get("result"), &mut self.report).responses;
            let resp = if resp.is_empty() {
                let id = s(tc, "id").unwrap_or("").to_string();
                let status = s(tc, "status").unwrap_or("");
                let out = tc.get("resultDisplay").cloned().unwrap_or(Value::Null);
                if status.is_empty() && out.is_null() {
                    self.report.skip("tool call without a result");
                    continue;
                }
                vec![(id, s(tc, "name").unwrap_or("?").to_string(), serde_json::json!({"output": out}))]
            } else {
                resp
            };
            for body in parts::results(&mut self.calls, &mut pending, resp, &mut self.report) {
                self.b.push(s(tc, "timestamp").or(s(o, "timestamp")), m.no, m.offset, body);
            }
        }
    }

    /// A `$set.messages` checkpoint: the history is replaced by the listed messages.
    fn checkpoint(&mut self, no: usize, offset: u64, messages: &[Value], ts: Option<&str>) {
        let mut texts = Vec::new();
        for m in messages {
            let content = m.get("content").or_else(|| m.get("parts"));
            texts.extend(split(content, &mut self.report).texts);
        }
        let next = self.b.next_rev();
        let rec = CompactRec {
            trigger: Some("auto".into()),
            instruction: None,
            summary: Arc::from(texts.join("\n\n")),
            first_kept: Some(next),
            kept: None,
            mode: None,
            fallback: None,
            tokens_before: f(None),
            tokens_after: None,
            usage: None,
        };
        self.report.note("a $set.messages checkpoint (compression or rollback) is read as a compaction to its text");
        self.b.push(ts, no, offset, Body::Compact(rec));
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn import(text: &str) -> Imported {
        read(Path::new("session-x.jsonl"), text.as_bytes()).unwrap()
    }

    #[test]
    fn last_record_of_an_id_wins_in_its_first_place_and_rewind_drops() {
        let im = import(
            r#"{"sessionId":"s","projectHash":"h","startTime":"2026-01-01T00:00:00Z","kind":"main"}
{"id":"u1","timestamp":"2026-01-01T00:00:01Z","type":"user","content":[{"text":"hi"}]}
{"id":"a1","timestamp":"2026-01-01T00:00:02Z","type":"gemini","content":"draft","model":"gemini-2.5-flash"}
{"id":"u2","timestamp":"2026-01-01T00:00:03Z","type":"user","content":"second"}
{"id":"a1","timestamp":"2026-01-01T00:00:02Z","type":"gemini","content":"final","model":"gemini-2.5-flash","tokens":{"input":100,"output":5,"cached":40,"thoughts":3,"tool":0,"total":108}}
{"id":"a2","timestamp":"2026-01-01T00:00:04Z","type":"gemini","content":"gone","tokens":{"input":1,"output":1}}
{"$rewindTo":"a2"}
{"$set":{"lastUpdated":"2026-01-01T00:00:05Z"}}"#,
        );
        let bodies: Vec<&Body> = im.journal.records.iter().map(|r| &r.body).collect();
        assert_eq!(bodies.len(), 4, "{bodies:?}");
        let Body::Assistant(a) = bodies[2] else { panic!("{:?}", bodies[2]) };
        assert_eq!(&*a.text, "final");
        let us = a.usage.as_ref().unwrap();
        assert_eq!((us.prompt_tokens, us.cached_tokens, us.completion_tokens), (Some(100), Some(40), Some(8)));
        assert!(matches!(bodies[3], Body::User(u) if &*u.text == "second"));
        assert_eq!(im.report.dropped.turns, 1);
    }

    #[test]
    fn legacy_json_with_tool_results() {
        let im = read(
            Path::new("session-x.json"),
            br#"{
  "sessionId": "s", "projectHash": "h", "startTime": "2026-01-01T00:00:00Z",
  "messages": [
    {"id": "u", "timestamp": "2026-01-01T00:00:01Z", "type": "user", "content": "go"},
    {"id": "a", "timestamp": "2026-01-01T00:00:02Z", "type": "gemini", "content": "", "model": "gemini-2.5-flash",
     "tokens": {"input": 10, "output": 2, "cached": 0, "thoughts": 0, "tool": 0, "total": 12},
     "toolCalls": [{"id": "c1", "name": "ls", "args": {}, "status": "success",
       "result": [{"functionResponse": {"id": "c1", "name": "ls", "response": {"output": "a.txt"}}}]}]},
    {"id": "i", "timestamp": "2026-01-01T00:00:03Z", "type": "info", "content": "note"}
  ]
}"#,
        )
        .unwrap();
        let kinds: Vec<&str> = im.journal.records.iter().map(|r| r.body.kind()).collect();
        assert_eq!(kinds, vec!["session", "user", "assistant", "result"]);
        assert!(matches!(&im.journal.records[3].body, Body::Result(r) if &*r.text == "a.txt"));
        assert!(is_whole_json(b"{\n \"a\": 1\n}"));
        assert!(!is_whole_json(b"{\"a\":1}\n{\"b\":2}"));
    }
}
