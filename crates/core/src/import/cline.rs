//! Cline histories → journal-v1 records: the SDK store (Cline ≥ 4.0,
//! `~/.cline/data/sessions/<id>/<id>.messages.json`) and the legacy extension task
//! (`tasks/<id>/api_conversation_history.json`, the layout Roo Code and old Kilo Code share).
//!
//! Both are one JSON document rewritten whole, with Anthropic-style content blocks:
//! * SDK `{version, sessionId, messages: [...], system_prompt}` (writer
//!   `sdk/packages/core/src/session/stores/session-manifest-store.ts` of cline/cline): the
//!   `system_prompt` becomes a `system` record **as sent** (tool schemas are not stored); assistant
//!   messages carry `modelInfo.id` and `metrics {inputTokens, outputTokens, cacheReadTokens,
//!   cacheWriteTokens}`, where `inputTokens` already includes the cache (prompt = `inputTokens`);
//!   a `<id>.compaction.json` beside it (the compacted list, its first message marked
//!   `metadata.kind: "compaction"`) becomes a `compact` record at the end whose summary is that
//!   first message's text and whose first kept record is the first later message also imported;
//! * legacy: an array of `{role, content, modelInfo: {modelId}, metrics: {tokens: {prompt,
//!   completion, cached}}}` where `prompt` excludes the cache reads (prompt = `prompt + cached`);
//!   it records no system prompt and no timestamps.
//!
//! Blocks: `text` → text; `file {path, content}` → a text part `<file path>\n<content>` (the exact
//! wrapping Cline sends is not recorded, so this is an estimate of its size); `tool_use` → calls;
//! `tool_result` → `result`; `image` → attachment; `thinking` is counted as unrepresented.

use std::path::{Path, PathBuf};
use std::sync::Arc;

use serde_json::{Map, Value};

use super::content::{walk, Calls, Piece, CLAUDE};
use super::{f, s, u, Builder, Format, ImageRule, ImportError, ImportReport, Imported};
use crate::journal::reader::parse_json;
use crate::journal::{
    AssistantRec, Body, CompactRec, JournalError, JournalErrorKind, ResultRec, SessionRec, SystemRec, Usage, UserRec,
};

pub fn read(path: &Path, bytes: &[u8]) -> Result<Imported, ImportError> {
    let mut report = ImportReport::new(Format::Cline, path);
    let v = parse_json(bytes).map_err(|kind| JournalError::at(path, 1, 0, kind, &bytes[..bytes.len().min(200)]))?;
    report.lines = memchr::memchr_iter(b'\n', bytes).count() + 1;
    let (doc, msgs): (Map<String, Value>, Vec<Value>) = match v {
        Value::Array(a) => (Map::new(), a),
        Value::Object(mut o) => {
            let m = match o.remove("messages") {
                Some(Value::Array(a)) => a,
                _ => Vec::new(),
            };
            (o, m)
        }
        _ => return Err(JournalError::at(path, 1, 0, JournalErrorKind::NotAnObject, b"").into()),
    };
    let model = msgs.iter().find_map(model_of);
    let id = s(&doc, "sessionId").map(str::to_string).unwrap_or_else(|| {
        let p = path.parent().and_then(Path::file_name).map(|n| n.to_string_lossy().into_owned());
        p.unwrap_or_default()
    });
    let mut b = Builder::new();
    let first_ts = msgs.iter().find_map(ts_of);
    b.push(
        first_ts.as_deref(),
        1,
        0,
        Body::Session(SessionRec {
            id,
            model: model.clone(),
            harness: Some("cline".into()),
            encoding: None,
            ctx: None,
        }),
    );
    match s(&doc, "system_prompt") {
        Some(sp) => {
            b.push(first_ts.as_deref(), 1, 0, Body::System(SystemRec { text: Arc::from(sp), tools: None }));
            report.missing = vec!["tool schemas".into()];
        }
        None => report.missing = vec!["system prompt".into(), "tool schemas".into()],
    }
    let mut r = Reader { b, report, files: Vec::new(), calls: Calls::default(), model, revs: Vec::new() };
    for m in &msgs {
        match m.as_object() {
            Some(o) => r.message(o),
            None => r.report.skip("non-object message"),
        }
    }
    if let Some(c) = compaction_beside(path) {
        r.compaction(&c);
    }
    let Reader { b, mut report, files, .. } = r;
    report.ts_clamped = b.clamped;
    Ok(Imported { journal: b.finish(path), report, files })
}

/// `<id>.compaction.json` beside `<id>.messages.json`, parsed (`None` when absent or unreadable).
fn compaction_beside(path: &Path) -> Option<Value> {
    let name = path.file_name()?.to_str()?;
    let stem = name.strip_suffix(".messages.json")?;
    let p: PathBuf = path.with_file_name(format!("{stem}.compaction.json"));
    let bytes = crate::journal::input::read_regular(&p).ok()?;
    parse_json(&bytes).ok()
}

fn model_of(m: &Value) -> Option<String> {
    let mi = m.get("modelInfo")?;
    mi.get("id").or_else(|| mi.get("modelId")).and_then(Value::as_str).map(str::to_string)
}

/// A message's `ts` (Unix milliseconds) as RFC 3339.
fn ts_of(m: &Value) -> Option<String> {
    ts_ms(m.get("ts"))
}

fn ts_ms(v: Option<&Value>) -> Option<String> {
    let ms = v.and_then(Value::as_i64)?;
    chrono::DateTime::from_timestamp_millis(ms).map(|d| d.to_rfc3339_opts(chrono::SecondsFormat::Millis, true))
}

struct Reader {
    b: Builder,
    report: ImportReport,
    files: Vec<(String, crate::journal::Text)>,
    calls: Calls,
    model: Option<String>,
    /// (message id, rev of its first record) of every imported message.
    revs: Vec<(String, u64)>,
}

impl Reader {
    fn push(&mut self, m: &Map<String, Value>, body: Body) -> u64 {
        let t = ts_ms(m.get("ts"));
        self.b.push(t.as_deref(), 1, 0, body)
    }

    fn message(&mut self, m: &Map<String, Value>) {
        let next = self.b.next_rev();
        match s(m, "role").unwrap_or("") {
            "user" => self.user(m),
            "assistant" => self.assistant(m),
            other => self.report.skip(format!("message role {other:?}")),
        }
        if self.b.next_rev() > next {
            if let Some(id) = s(m, "id") {
                self.revs.push((id.to_string(), next));
            }
        }
    }

    fn user(&mut self, m: &Map<String, Value>) {
        let mut texts = Vec::new();
        let mut images = Vec::new();
        let mut results = Vec::new();
        for (kind, piece) in walk(m.get("content"), &CLAUDE) {
            match piece {
                Piece::Text(t) => texts.push(t.to_string()),
                Piece::Result(r) => results.push(r),
                Piece::Image(img) => images.push(img),
                // Read below, in order.
                Piece::Other if kind == "file" => {}
                _ => self.report.lose(format!("user block {kind}")),
            }
        }
        // `file` blocks, in order, as text parts.
        for blk in m.get("content").and_then(Value::as_array).into_iter().flatten() {
            if blk.get("type").and_then(Value::as_str) == Some("file") {
                let path = blk.get("path").and_then(Value::as_str).unwrap_or("");
                let content = blk.get("content").and_then(Value::as_str).unwrap_or("");
                texts.push(format!("{path}\n{content}"));
                self.report
                    .note("file blocks are counted as their path and content (Cline's own wrapping is not recorded)");
            }
        }
        for r in results {
            let call = r.get("tool_use_id").and_then(Value::as_str).unwrap_or("");
            let Some(tool) =
                self.calls.answer(call, &mut self.report, "tool_result without its call", "second tool_result")
            else {
                continue;
            };
            let text = super::claude_code::content_text(r.get("content"), &mut self.report);
            let is_error = r.get("is_error").and_then(Value::as_bool).filter(|e| *e);
            self.push(m, Body::Result(ResultRec::whole(call.to_string(), tool, text, is_error)));
        }
        if texts.is_empty() && images.is_empty() {
            return;
        }
        let uid = self.b.unique_id(s(m, "id").unwrap_or("u"));
        let att = super::attach(
            &mut self.b,
            &uid,
            images,
            Some(ImageRule::Anthropic),
            &mut texts,
            &mut self.files,
            &mut self.report,
        );
        self.push(m, Body::User(UserRec { id: uid, text: Arc::from(texts.join("\n\n")), attachments: att }));
    }

    fn assistant(&mut self, m: &Map<String, Value>) {
        let mut texts = Vec::new();
        let mut calls = Vec::new();
        for (kind, piece) in walk(m.get("content"), &CLAUDE) {
            match piece {
                Piece::Text(t) => texts.push(t.to_string()),
                Piece::Call { id, name, args } => {
                    calls.extend(self.calls.add(&mut self.b, id, name, args, &mut self.report, "duplicate tool_use id"))
                }
                Piece::Thinking => self.report.lose("thinking block"),
                _ => self.report.lose(format!("assistant block {kind}")),
            }
        }
        let usage = m.get("metrics").and_then(Value::as_object).and_then(usage_of);
        let this = model_of(&Value::Object(m.clone()));
        let model = this.clone().filter(|x| Some(x) != self.model.as_ref());
        if this.is_some() {
            self.model = this;
        }
        let aid = self.b.unique_id(s(m, "id").unwrap_or("a"));
        let rec =
            AssistantRec { id: aid, text: Arc::from(texts.join("\n\n")), calls, model, usage, prompt_sha256: None };
        self.push(m, Body::Assistant(rec));
    }

    /// The compaction file: a `compact` at the end, keeping from the first message it shares.
    fn compaction(&mut self, c: &Value) {
        let Some(list) = c.get("messages").and_then(Value::as_array) else { return };
        let Some(first) = list.first() else { return };
        if first.get("metadata").and_then(|m| m.get("kind")).and_then(Value::as_str) != Some("compaction") {
            return;
        }
        let summary: Vec<String> = walk(first.get("content"), &CLAUDE)
            .into_iter()
            .filter_map(|(_, p)| if let Piece::Text(t) = p { Some(t.to_string()) } else { None })
            .collect();
        let next = self.b.next_rev();
        let kept = list[1..]
            .iter()
            .filter_map(|m| m.get("id").and_then(Value::as_str))
            .find_map(|id| self.revs.iter().find(|(r, _)| r == id).map(|(_, rev)| *rev));
        let meta = first.get("metadata").and_then(Value::as_object);
        let before =
            meta.and_then(|m| m.get("usageBefore")).and_then(Value::as_object).and_then(|u2| u(u2, "inputTokens"));
        let rec = CompactRec {
            trigger: meta
                .and_then(|m| s(m, "reason"))
                .map(|r| if r.contains("manual") { "manual" } else { "auto" }.to_string()),
            instruction: None,
            summary: Arc::from(summary.join("\n\n")),
            first_kept: Some(kept.unwrap_or(next)),
            kept: None,
            mode: None,
            fallback: None,
            tokens_before: f(before),
            tokens_after: None,
            usage: None,
        };
        let t = ts_of(first);
        self.b.push(t.as_deref(), 1, 0, Body::Compact(rec));
        self.report.note("the compaction file beside the session is read as a compaction after its last message");
    }
}

/// SDK `metrics {inputTokens (cache included), outputTokens, cacheReadTokens, cacheWriteTokens}`
/// or legacy `metrics.tokens {prompt (cache excluded), completion, cached}`.
fn usage_of(m: &Map<String, Value>) -> Option<Usage> {
    if let Some(t) = m.get("tokens").and_then(Value::as_object) {
        let (p, c, o) = (u(t, "prompt").unwrap_or(0), u(t, "cached").unwrap_or(0), u(t, "completion").unwrap_or(0));
        return (p + c + o > 0).then_some(Usage {
            prompt_tokens: Some(p + c),
            cached_tokens: Some(c),
            completion_tokens: Some(o),
            ..Default::default()
        });
    }
    let (i, o) = (u(m, "inputTokens").unwrap_or(0), u(m, "outputTokens").unwrap_or(0));
    let (cr, cw) = (u(m, "cacheReadTokens").unwrap_or(0), u(m, "cacheWriteTokens").unwrap_or(0));
    (i + o > 0).then_some(Usage {
        prompt_tokens: Some(i.max(cr + cw)),
        cached_tokens: Some(cr),
        completion_tokens: Some(o),
        cache_write_tokens: Some(cw),
        ..Default::default()
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn sdk_messages_with_system_prompt_calls_and_results() {
        let text = br#"{"version":1,"sessionId":"s1","system_prompt":"You are Cline.","messages":[
 {"id":"m1","role":"user","ts":1783376868634,"content":[{"type":"text","text":"edit it"},{"type":"file","path":"a.ts","content":"x"}]},
 {"id":"m2","role":"assistant","ts":1783376873493,"content":[{"type":"text","text":"ok"},{"type":"tool_use","id":"t1","name":"editor","input":{}}],
  "modelInfo":{"id":"anthropic/claude-opus-4.8-fast"},"metrics":{"inputTokens":100,"outputTokens":5,"cacheReadTokens":60,"cacheWriteTokens":0}},
 {"id":"m3","role":"user","ts":1783376873501,"content":[{"type":"tool_result","tool_use_id":"t1","content":"done"}]}]}"#;
        let im = read(Path::new("s1.messages.json"), text).unwrap();
        let kinds: Vec<&str> = im.journal.records.iter().map(|r| r.body.kind()).collect();
        assert_eq!(kinds, vec!["session", "system", "user", "assistant", "result"]);
        let Body::Assistant(a) = &im.journal.records[3].body else { unreachable!() };
        assert_eq!(a.usage.as_ref().unwrap().prompt_tokens, Some(100));
        assert_eq!(im.report.missing, vec!["tool schemas"]);
        assert_eq!(
            usage_of(serde_json::json!({"tokens":{"prompt":19,"completion":1,"cached":100}}).as_object().unwrap())
                .unwrap()
                .prompt_tokens,
            Some(119)
        );
    }
}
