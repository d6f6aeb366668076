//! Kimi Code wire logs (`~/.kimi-code/sessions/<ws>/<session>/agents/<agent>/wire.jsonl`) →
//! journal-v1 records.
//!
//! The writer (MoonshotAI/kimi-code, `packages/agent-core/src/agent/records/types.ts`) appends one
//! typed record per line; the log is written so that each request can be rebuilt:
//! * `config.update {systemPrompt}` → a `system` record with the prompt **as sent**, and the tool
//!   schemas of the latest `llm.tools_snapshot {tools}` when they are a JSON array (a snapshot whose
//!   `tools` is not an array, such as a trimmed fixture, is reported and left out);
//! * `context.append_message {message: {role, content: [{type: text, text}], toolCalls}}` → `user`
//!   (or `assistant` for an appended assistant message);
//! * the loop events of one step (`context.append_loop_event`: `step.begin`, `content.part`
//!   text/think, `tool.call {toolCallId, name, args}`, `tool.result {toolCallId, result}`,
//!   `step.end {usage}`) → one `assistant` record (text, calls, usage: prompt = `inputOther +
//!   inputCacheRead + inputCacheCreation`, cached = `inputCacheRead`, cache write =
//!   `inputCacheCreation`, completion = `output`), then its `result` records;
//! * `context.apply_compaction {contextSummary, tokensBefore, tokensAfter}` → `compact` (the
//!   summary text as sent); `context.clear` → `compact` with an empty summary;
//! * `llm.request` gives the model (`modelAlias`), `usage.record` repeats `step.end`'s usage (not
//!   counted twice); every other record type is skipped and counted.

use std::path::Path;
use std::sync::Arc;

use serde_json::{Map, Value};

use super::content::Calls;
use super::{f, parse_lines, s, u, Builder, Format, ImportError, ImportReport, Imported, Line};
use crate::journal::{
    AssistantRec, Body, Call, CompactRec, ModelRec, ResultRec, SessionRec, SystemRec, Usage, UserRec,
};

/// Record types of Kimi Code's wire log (for detection).
pub(crate) const RECORD_TYPES: &[&str] = &[
    "config.update",
    "turn.prompt",
    "tools.set_active_tools",
    "llm.request",
    "llm.tools_snapshot",
    "usage.record",
    "context.append_message",
    "context.append_loop_event",
    "context.apply_compaction",
    "context.clear",
    "context.undo",
    "full_compaction.begin",
    "full_compaction.complete",
];

/// One step being read: text, calls and the results that came before its `step.end`.
#[derive(Default)]
struct Step {
    texts: Vec<String>,
    calls: Vec<Call>,
    results: Vec<(Line, Body)>,
    at: Option<(usize, u64, Option<String>)>,
}

pub fn read(path: &Path, bytes: &[u8]) -> Result<Imported, ImportError> {
    let mut report = ImportReport::new(Format::KimiCode, path);
    let lines = parse_lines(path, bytes, &mut report)?;
    let model = lines.iter().find_map(|l| {
        (s(&l.obj, "type") == Some("llm.request")).then(|| s(&l.obj, "modelAlias").or(s(&l.obj, "model"))).flatten()
    });
    let model = model.map(str::to_string);
    let id = session_id(path);
    let mut b = Builder::new();
    let first = lines.first();
    b.push(
        first.and_then(|l| ts(&l.obj)).as_deref(),
        first.map_or(0, |l| l.no),
        first.map_or(0, |l| l.offset),
        Body::Session(SessionRec {
            id,
            model: model.clone(),
            harness: Some("kimi-code".into()),
            encoding: None,
            ctx: None,
        }),
    );
    let mut r =
        Reader { b, report, calls: Calls::default(), model, tools: None, step: None, system_seen: false, prompt: None };
    for l in &lines {
        r.line(l);
    }
    r.end_step(None);
    if !r.system_seen {
        r.report.missing.push("system prompt".into());
    }
    if r.tools.is_none() {
        r.report.missing.push("tool schemas".into());
    }
    let Reader { b, mut report, .. } = r;
    report.ts_clamped = b.clamped;
    Ok(Imported { journal: b.finish(path), report, files: Vec::new() })
}

/// `session_<id>` of `…/session_<id>/agents/<agent>/wire.jsonl` (with `/<agent>` unless main),
/// else the file stem.
fn session_id(path: &Path) -> String {
    let parts: Vec<String> = path.iter().map(|p| p.to_string_lossy().into_owned()).collect();
    let n = parts.len();
    if n >= 4 && parts[n - 3] == "agents" {
        let agent = &parts[n - 2];
        return if agent == "main" { parts[n - 4].clone() } else { format!("{}/{agent}", parts[n - 4]) };
    }
    path.file_stem().map(|s| s.to_string_lossy().into_owned()).unwrap_or_default()
}

/// The record's time (`time`, or the metadata's `created_at`: Unix milliseconds) as RFC 3339.
fn ts(o: &Map<String, Value>) -> Option<String> {
    let ms = o.get("time").or_else(|| o.get("created_at")).and_then(Value::as_i64)?;
    chrono::DateTime::from_timestamp_millis(ms).map(|d| d.to_rfc3339_opts(chrono::SecondsFormat::Millis, true))
}

struct Reader {
    b: Builder,
    report: ImportReport,
    calls: Calls,
    model: Option<String>,
    /// The tool schemas of the latest snapshot, when they are an array.
    tools: Option<Arc<Value>>,
    step: Option<Step>,
    system_seen: bool,
    /// The latest system prompt.
    prompt: Option<crate::journal::Text>,
}

impl Reader {
    fn push(&mut self, l: &Line, body: Body) {
        let t = ts(&l.obj);
        self.b.push(t.as_deref(), l.no, l.offset, body);
    }

    fn line(&mut self, l: &Line) {
        let o = &l.obj;
        match s(o, "type").unwrap_or("") {
            "config.update" => match s(o, "systemPrompt") {
                Some(text) => {
                    self.system_seen = true;
                    let text: crate::journal::Text = Arc::from(text);
                    self.prompt = Some(text.clone());
                    let rec = SystemRec { text, tools: self.tools.clone() };
                    self.push(l, Body::System(rec));
                }
                None => self.report.skip("config.update without systemPrompt"),
            },
            "llm.tools_snapshot" => {
                let tools = match o.get("tools") {
                    Some(Value::String(t)) => serde_json::from_str::<Value>(t).ok(),
                    Some(v) => Some(v.clone()),
                    None => None,
                };
                match tools.filter(Value::is_array) {
                    Some(t) => {
                        let t = Arc::new(t);
                        if self.tools.as_ref() != Some(&t) {
                            self.tools = Some(t.clone());
                            // The prompt stays; the schemas sent with it change.
                            if let Some(text) = self.prompt.clone() {
                                self.push(l, Body::System(SystemRec { text, tools: Some(t) }));
                            }
                        }
                    }
                    None => self
                        .report
                        .note("an llm.tools_snapshot holds no schema array (trimmed?): tool schemas left out"),
                }
            }
            "llm.request" => {
                let m = s(o, "modelAlias").or(s(o, "model")).map(str::to_string);
                if let Some(m) = m.filter(|m| Some(m) != self.model.as_ref()) {
                    self.model = Some(m.clone());
                    self.push(l, Body::Model(ModelRec { model: m, ctx: None }));
                }
                if s(o, "kind") == Some("compaction") {
                    self.report.skip("llm.request of a compaction (its answer is the compaction summary)");
                }
            }
            "context.append_message" => self.message(l),
            "context.append_loop_event" => self.event(l),
            "context.apply_compaction" => {
                self.end_step(None);
                let summary = s(o, "contextSummary").or(s(o, "summary")).unwrap_or("");
                let rec = compact(summary, self.b.next_rev(), f(u(o, "tokensBefore")), f(u(o, "tokensAfter")));
                self.push(l, Body::Compact(rec));
            }
            "context.clear" => {
                self.end_step(None);
                let rec = compact("", self.b.next_rev(), None, None);
                self.push(l, Body::Compact(rec));
            }
            "context.undo" => {
                self.report.skip("context.undo");
                self.report.note("a context.undo is not replayed: the records it undid stay in the journal");
            }
            "" => self.report.skip("line without a type"),
            other => self.report.skip(other.to_string()),
        }
    }

    fn message(&mut self, l: &Line) {
        let Some(m) = l.obj.get("message").and_then(Value::as_object) else {
            self.report.skip("context.append_message without a message");
            return;
        };
        let text = texts(m.get("content"));
        match s(m, "role").unwrap_or("") {
            "user" => {
                self.end_step(None);
                let id = self.b.unique_id(&format!("u{}", l.no));
                self.push(l, Body::User(UserRec { id, text: Arc::from(text), attachments: Vec::new() }));
            }
            "assistant" => {
                self.end_step(None);
                let id = self.b.unique_id(&format!("a{}", l.no));
                let rec = AssistantRec {
                    id,
                    text: Arc::from(text),
                    calls: Vec::new(),
                    model: None,
                    usage: None,
                    prompt_sha256: None,
                };
                self.push(l, Body::Assistant(rec));
            }
            other => self.report.skip(format!("message role {other:?}")),
        }
    }

    fn event(&mut self, l: &Line) {
        let Some(e) = l.obj.get("event").and_then(Value::as_object) else {
            self.report.skip("loop event without an event");
            return;
        };
        match s(e, "type").unwrap_or("") {
            "step.begin" => {
                self.end_step(None);
                self.step = Some(Step { at: Some((l.no, l.offset, ts(&l.obj))), ..Default::default() });
            }
            "content.part" => {
                let part = e.get("part").and_then(Value::as_object);
                match part.and_then(|p| s(p, "type")) {
                    Some("text") => {
                        let t = part.and_then(|p| s(p, "text")).unwrap_or("").to_string();
                        self.step.get_or_insert_with(Step::default).texts.push(t);
                    }
                    Some("think") => self.report.lose("think part"),
                    _ => self.report.lose("other content part"),
                }
            }
            "tool.call" => {
                let id = s(e, "toolCallId").or(s(e, "uuid")).unwrap_or("");
                let args = e.get("args").cloned().unwrap_or(Value::Object(Map::new()));
                let call = self.calls.add(
                    &mut self.b,
                    id,
                    s(e, "name").unwrap_or("?"),
                    args,
                    &mut self.report,
                    "duplicate tool.call",
                );
                self.step.get_or_insert_with(Step::default).calls.extend(call);
            }
            "tool.result" => {
                let id = s(e, "toolCallId").or(s(e, "parentUuid")).unwrap_or("").to_string();
                let Some(tool) =
                    self.calls.answer(&id, &mut self.report, "tool.result without its call", "second tool.result")
                else {
                    return;
                };
                let res = e.get("result");
                let (text, err) = match res {
                    Some(Value::Object(r)) => match (r.get("output"), r.get("error")) {
                        (Some(Value::String(o)), _) => (o.clone(), None),
                        (_, Some(Value::String(x))) => (x.clone(), Some(true)),
                        _ => (Value::Object(r.clone()).to_string(), None),
                    },
                    Some(Value::String(t)) => (t.clone(), None),
                    Some(v) => (v.to_string(), None),
                    None => (String::new(), None),
                };
                let err = err.or_else(|| res.and_then(|r| r.get("isError")).and_then(Value::as_bool).filter(|x| *x));
                let body = Body::Result(ResultRec::whole(id, tool, text, err));
                match self.step.as_mut() {
                    Some(st) => st.results.push((l.clone(), body)),
                    None => self.push(l, body),
                }
            }
            "step.end" => {
                let usage = e.get("usage").and_then(Value::as_object).map(|us| {
                    let g = |k| u(us, k).unwrap_or(0);
                    let (other, read, write) = (g("inputOther"), g("inputCacheRead"), g("inputCacheCreation"));
                    Usage {
                        prompt_tokens: Some(other + read + write),
                        cached_tokens: Some(read),
                        completion_tokens: Some(g("output")),
                        cache_write_tokens: Some(write),
                        ..Default::default()
                    }
                });
                self.end_step(Some((l, usage)));
            }
            other => self.report.skip(format!("loop event {other}")),
        }
    }

    /// Writes the step being read: its assistant record, then its results. `end` is the
    /// `step.end` line and its usage; a step without one (interrupted) has no usage.
    fn end_step(&mut self, end: Option<(&Line, Option<Usage>)>) {
        let Some(st) = self.step.take() else { return };
        if st.texts.is_empty() && st.calls.is_empty() && end.is_none() {
            self.report.skip("step without content or end");
            return;
        }
        let (no, offset, t) = match (&end, &st.at) {
            (Some((l, _)), _) => (l.no, l.offset, ts(&l.obj)),
            (None, Some((n, o, t))) => (*n, *o, t.clone()),
            (None, None) => (0, 0, None),
        };
        let usage = end.and_then(|(_, us)| us);
        let id = self.b.unique_id(&format!("a{no}"));
        let rec = AssistantRec {
            id,
            text: Arc::from(st.texts.join("")),
            calls: st.calls,
            model: None,
            usage,
            prompt_sha256: None,
        };
        self.b.push(t.as_deref(), no, offset, Body::Assistant(rec));
        for (l, body) in st.results {
            self.push(&l, body);
        }
    }
}

fn compact(summary: &str, next: u64, before: Option<f64>, after: Option<f64>) -> CompactRec {
    CompactRec {
        trigger: None,
        instruction: None,
        summary: Arc::from(summary),
        first_kept: Some(next),
        kept: None,
        mode: None,
        fallback: None,
        tokens_before: before,
        tokens_after: after,
        usage: None,
    }
}

/// The text parts of a Kimi message content (a string or `[{type: text, text}]`).
fn texts(content: Option<&Value>) -> String {
    match content {
        Some(Value::String(t)) => t.clone(),
        Some(Value::Array(a)) => a
            .iter()
            .filter(|p| p.get("type").and_then(Value::as_str) == Some("text"))
            .filter_map(|p| p.get("text").and_then(Value::as_str))
            .collect::<Vec<_>>()
            .join("\n"),
        _ => String::new(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_step_becomes_one_assistant_then_its_results_and_the_system_prompt_is_carried() {
        let text = r#"{"type":"metadata","protocol_version":"1.4","created_at":1785612803281}
{"type":"config.update","systemPrompt":"You are Kimi.","time":1785612803281}
{"type":"llm.tools_snapshot","hash":"h","tools":[{"name":"Bash"}],"time":1785612803282}
{"type":"context.append_message","message":{"role":"user","content":[{"type":"text","text":"run ls"}]},"time":1785612803290}
{"type":"context.append_loop_event","event":{"type":"step.begin","uuid":"s1","step":1},"time":1785612803300}
{"type":"llm.request","kind":"loop","model":"k","modelAlias":"moonshot-ai/k","time":1785612803301}
{"type":"context.append_loop_event","event":{"type":"content.part","part":{"type":"think","think":"t"}},"time":1785612803302}
{"type":"context.append_loop_event","event":{"type":"tool.call","toolCallId":"Bash_0","name":"Bash","args":{"command":"ls"}},"time":1785612803303}
{"type":"context.append_loop_event","event":{"type":"tool.result","toolCallId":"Bash_0","result":{"output":"a\n"}},"time":1785612803304}
{"type":"context.append_loop_event","event":{"type":"step.end","uuid":"s1","usage":{"inputOther":10,"output":2,"inputCacheRead":90,"inputCacheCreation":0}},"time":1785612803305}
{"type":"usage.record","model":"moonshot-ai/k","usage":{"inputOther":10,"output":2,"inputCacheRead":90,"inputCacheCreation":0},"usageScope":"turn","time":1785612803305}"#;
        let im = read(Path::new("s/session_1/agents/main/wire.jsonl"), text.as_bytes()).unwrap();
        let kinds: Vec<&str> = im.journal.records.iter().map(|r| r.body.kind()).collect();
        // The snapshot after the prompt re-sends the prompt with its schemas.
        assert_eq!(kinds, vec!["session", "system", "system", "user", "assistant", "result"]);
        assert!(matches!(&im.journal.records[2].body, Body::System(s) if s.tools.is_some()));
        let Body::Assistant(a) = &im.journal.records[4].body else { unreachable!() };
        let us = a.usage.as_ref().unwrap();
        assert_eq!((us.prompt_tokens, us.cached_tokens), (Some(100), Some(90)));
        assert_eq!(a.calls[0].id, "Bash_0");
        assert!(im.report.missing.is_empty(), "{:?}", im.report.missing);
        assert!(matches!(&im.journal.records[0].body, Body::Session(s) if s.id == "session_1"));
    }
}
