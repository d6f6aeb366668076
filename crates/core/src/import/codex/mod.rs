//! OpenAI Codex rollouts (`sessions/YYYY/MM/DD/rollout-*.jsonl`) → journal-v1 records.
//!
//! Mapping (see `docs/importing.md`):
//! * `session_meta`: the session id; `base_instructions.text` → a `system` record (tool schemas
//!   are not recorded, except `dynamic_tools`, which become the system record's `tools`);
//! * `turn_context.model` → the session model, and a `model` record when it changes;
//! * `response_item` `message`: role `user` → `user`, `developer`/`system` → `notice` (topic
//!   `developer`), `assistant` → the text of the current response;
//! * `function_call` / `custom_tool_call` / `local_shell_call` → calls of the current response;
//!   their `*_output` items → `result` records;
//! * one response (one LLM call, one `assistant` record) is everything the model produced between
//!   two inputs; its usage is the `token_count` that bills it, paired by the rollout's turn
//!   structure for every rollout version (`pairing.rs`). `token_count` events with `info: null`,
//!   repeats of the previous total, and the zero-input estimate written after a compaction are
//!   skipped and counted; a billed `token_count` whose call left no item in the rollout becomes an
//!   empty `assistant` record carrying its usage;
//! * `compacted` with `replacement_history` → a `compact` record whose `kept` are the earlier
//!   blocks the history repeats (matched by role and text, newest copy first); items it adds are
//!   appended after it (user → `user`, developer → `notice`). Without `replacement_history`
//!   (legacy local compaction) nothing is kept.

use std::path::Path;
use std::sync::Arc;

use serde_json::{Map, Value};

mod compacted;
mod fork;
mod pairing;

pub use fork::ForkCopy;

/// The model a rollout that never names one ran: Codex wrote no `turn_context` (the only record
/// of the model) before ~0.40, and its default then was `gpt-5` (`codex-rs/core/src/config.rs`,
/// `OPENAI_DEFAULT_MODEL`). ccusage 20.0.24 prices such calls as `gpt-5` too (`isFallback`).
pub const LEGACY_DEFAULT_MODEL: &str = "gpt-5";

use compacted::{compacted, Seen};
use pairing::{Pairing, MODEL_ITEMS, TOOL_OUTPUTS, TURN_EVENTS};

use super::content::{walk, Calls, Piece, CODEX};
use super::{parse_lines, s, u, Builder, Format, ImportError, ImportReport, Imported};
use crate::journal::{AssistantRec, Body, Call, ModelRec, NoticeRec, ResultRec, SessionRec, SystemRec, Usage, UserRec};
use crate::tokens::redacted;

/// The response being assembled until its `token_count` (or the next input) arrives.
#[derive(Default)]
struct Pending {
    started: bool,
    texts: Vec<String>,
    calls: Vec<Call>,
    line: usize,
    offset: u64,
    ts: Option<String>,
    /// Hosted tool calls of the response (`web_search_call` items): the provider sampled it in
    /// several steps and its usage sums their inputs ([`Usage::server_tool_calls`]).
    server_tools: u64,
    /// The response has a `reasoning` item, which Codex keeps in its history and sends back
    /// ([`Usage::reasoning_tokens`]).
    reasoning: bool,
}

pub fn read(path: &Path, bytes: &[u8]) -> Result<Imported, ImportError> {
    let mut report = ImportReport::new(Format::Codex, path);
    report.missing = vec!["tool schemas".into()];
    let lines = normalize_legacy(parse_lines(path, bytes, &mut report)?, &mut report);
    let mut b = Builder::new();
    let model = header(path, &lines, &mut b, &mut report);
    let pairing = pairing::pair(&lines, model.clone(), &mut report);
    let mut r = Reader {
        b,
        report,
        files: Vec::new(),
        model,
        pending: Pending::default(),
        pairing,
        calls: Calls::default(),
        seen: Seen::default(),
        meta_seen: false,
        truncation: None,
    };
    for line in &lines {
        let Some(t) = s(&line.obj, "type") else {
            r.report.skip("line without a type");
            continue;
        };
        let p = payload(&line.obj);
        match t {
            "session_meta" => {
                if r.meta_seen {
                    r.report.skip("session_meta (repeated)");
                }
                r.meta_seen = true;
            }
            "turn_context" => r.turn_context(line, &p),
            "response_item" => r.response_item(line, &p),
            "event_msg" => match s(&p, "type").unwrap_or("") {
                "token_count" => r.token_count(line),
                t if TURN_EVENTS.contains(&t) => {
                    r.flush();
                    r.report.skip(format!("event_msg/{t}"));
                }
                other => r.report.skip(format!("event_msg/{other}")),
            },
            "compacted" => {
                r.flush();
                compacted(line, &p, &mut r.seen, &mut r.b, &mut r.report);
            }
            other => r.report.skip(other.to_string()),
        }
    }
    r.flush();
    let Reader { b, mut report, files, .. } = r;
    report.ts_clamped = b.clamped;
    Ok(Imported { journal: b.finish(path), report, files })
}

fn payload(o: &Map<String, Value>) -> Map<String, Value> {
    o.get("payload").and_then(Value::as_object).cloned().unwrap_or_default()
}

/// The `session` record (and the `system` record of the base instructions); returns the first
/// model of the rollout.
fn header(path: &Path, lines: &[super::Line], b: &mut Builder, report: &mut ImportReport) -> Option<String> {
    let meta = lines.iter().find(|l| s(&l.obj, "type") == Some("session_meta"));
    let first_model = lines
        .iter()
        .filter(|l| s(&l.obj, "type") == Some("turn_context"))
        .find_map(|l| l.obj.get("payload").and_then(|p| p.get("model")).and_then(Value::as_str).map(str::to_string));
    let (id, sys_text, tools, l0, o0, ts0) = match meta {
        Some(m) => {
            let p = payload(&m.obj);
            let id = s(&p, "id").map(str::to_string);
            let sys =
                p.get("base_instructions").and_then(|bi| bi.get("text")).and_then(Value::as_str).map(str::to_string);
            let tools = p.get("dynamic_tools").filter(|t| t.as_array().is_some_and(|a| !a.is_empty())).cloned();
            (id, sys, tools, m.no, m.offset, s(&m.obj, "timestamp").map(str::to_string))
        }
        None => (None, None, None, 0, 0, None),
    };
    if meta.is_none() {
        report.note("no session_meta line: no session id or base instructions");
    }
    let first_model = first_model.or_else(|| {
        let billed = lines.iter().any(|l| {
            l.obj.get("payload").and_then(|p| p.get("type")).and_then(Value::as_str) == Some("token_count")
        });
        billed.then(|| {
            report.note(format!(
                "no turn_context names the model (Codex before 0.40): priced as Codex's default then, {LEGACY_DEFAULT_MODEL}"
            ));
            LEGACY_DEFAULT_MODEL.to_string()
        })
    });
    if sys_text.is_none() {
        report.missing.insert(0, "system prompt".into());
    }
    let id = id.unwrap_or_else(|| path.file_stem().map(|s| s.to_string_lossy().into_owned()).unwrap_or_default());
    let session =
        SessionRec { id, model: first_model.clone(), harness: Some("codex".into()), encoding: None, ctx: None };
    b.push(ts0.as_deref(), l0, o0, Body::Session(session));
    if let Some(text) = sys_text {
        b.push(ts0.as_deref(), l0, o0, Body::System(SystemRec { text: Arc::from(text), tools: tools.map(Arc::new) }));
    }
    first_model
}

/// The state shared by the line handlers of one Codex import.
struct Reader {
    b: Builder,
    report: ImportReport,
    files: Vec<(String, crate::journal::Text)>,
    /// The current model (`turn_context.model`).
    model: Option<String>,
    pending: Pending,
    /// The usage of each response and the usages billing none (`pairing::pair`).
    pairing: Pairing,
    calls: Calls,
    seen: Seen,
    meta_seen: bool,
    /// The tool-output budget of `turn_context.truncation_policy`, in bytes.
    truncation: Option<u64>,
}

impl Reader {
    /// Writes the pending response with the usage paired with it.
    fn flush(&mut self) {
        if !self.pending.started {
            return;
        }
        let usage = self.pairing.by_start.remove(&self.pending.line);
        flush(&mut self.pending, usage, &mut self.seen, &mut self.b, &mut self.report);
    }

    fn push(&mut self, line: &super::Line, body: Body) {
        self.b.push(s(&line.obj, "timestamp"), line.no, line.offset, body);
    }

    /// A model switch ends the response and becomes a `model` record; the truncation policy
    /// in force is kept for the tool outputs that follow.
    fn turn_context(&mut self, line: &super::Line, p: &Map<String, Value>) {
        if let Some(t) = p.get("truncation_policy").and_then(Value::as_object) {
            // Codex records outputs into its history at the policy × 1.2 ("serialization budget",
            // `context_manager/history.rs` `process_item`).
            let limit = u(t, "limit").map(|n| n.saturating_mul(6) / 5);
            self.truncation = match s(t, "mode") {
                Some("tokens") => limit.map(|n| n.saturating_mul(APPROX_BYTES_PER_TOKEN)),
                Some("bytes") => limit,
                _ => None,
            };
        }
        if let Some(m) = s(p, "model") {
            if self.model.as_deref() != Some(m) {
                self.flush();
                self.push(line, Body::Model(ModelRec { model: m.to_string(), ctx: None }));
                self.model = Some(m.to_string());
            }
        }
    }

    fn response_item(&mut self, line: &super::Line, p: &Map<String, Value>) {
        let ts = s(&line.obj, "timestamp");
        let pt = s(p, "type").unwrap_or("");
        match pt {
            "message" => self.message(line, p),
            "reasoning" => {
                self.pending.start(line, ts);
                self.pending.reasoning = true;
                self.report.lose("reasoning item");
            }
            "function_call" | "custom_tool_call" | "local_shell_call" => self.call(line, pt, p),
            // A tool search Codex runs itself: a call whose `tool_search_output` is its result.
            "tool_search_call" if s(p, "execution") == Some("client") => self.call(line, pt, p),
            t if TOOL_OUTPUTS.contains(&t) => {
                self.flush();
                let cid = s(p, "call_id").unwrap_or("");
                let Some(tool) = self.calls.tool(cid) else {
                    self.report.skip(format!("{pt} without its call"));
                    self.report.dropped.results += 1;
                    return;
                };
                let rule = Some(super::ImageRule::openai(self.model.as_deref()));
                let mut text = match pt {
                    // The tool definitions the search returned: the provider reads them as input.
                    "tool_search_output" => p.get("tools").map(Value::to_string).unwrap_or_default(),
                    _ => output_text(p.get("output"), rule, &mut self.report),
                };
                if let Some(cut) = self.truncation.and_then(|budget| truncated(&text, budget)) {
                    self.report.note(TRUNCATED_NOTE);
                    text = cut;
                }
                self.push(line, Body::Result(ResultRec::whole(cid.to_string(), tool, text, None)));
            }
            // The other items the model produces (`pairing::MODEL_ITEMS`) are not represented.
            t if MODEL_ITEMS.contains(&t) => {
                self.pending.start(line, ts);
                self.pending.server_tools += u64::from(HOSTED_TOOL_CALLS.contains(&t));
                self.report.lose(pt.to_string());
            }
            other => self.report.skip(format!("response_item/{other}")),
        }
    }

    /// A message item: the assistant's text joins the pending response; user → `user`;
    /// developer/system → `notice`.
    fn message(&mut self, line: &super::Line, p: &Map<String, Value>) {
        let role = s(p, "role").unwrap_or("");
        let (text, images) = message_text(p);
        if role == "assistant" {
            self.pending.start(line, s(&line.obj, "timestamp"));
            self.pending.texts.push(text);
            return;
        }
        self.flush();
        if role == "user" {
            let id = self.b.unique_id(&format!("u{}", line.no));
            self.seen.push("user", text.clone(), id.clone());
            let mut texts = vec![text];
            let rule = Some(super::ImageRule::openai(self.model.as_deref()));
            let attachments =
                super::attach(&mut self.b, &id, images, rule, &mut texts, &mut self.files, &mut self.report);
            self.push(line, Body::User(UserRec { id, text: Arc::from(texts.join("\n")), attachments }));
        } else {
            let id = self.b.unique_id(&format!("n{}", line.no));
            self.seen.push("developer", text.clone(), id.clone());
            let topic = Some(role.to_string());
            self.push(line, Body::Notice(NoticeRec { id, text: Arc::from(text), topic }));
        }
    }

    /// A tool call of the pending response.
    fn call(&mut self, line: &super::Line, pt: &str, p: &Map<String, Value>) {
        self.pending.start(line, s(&line.obj, "timestamp"));
        let cid = s(p, "call_id").or_else(|| s(p, "id")).unwrap_or("");
        let (name, args) = match pt {
            "function_call" => {
                let raw = s(p, "arguments").unwrap_or("");
                let args = match crate::journal::reader::parse_json(raw.as_bytes()) {
                    Ok(v) if v.is_object() => v,
                    _ => Value::String(raw.to_string()),
                };
                let name = match s(p, "namespace") {
                    Some(ns) => format!("{ns}.{}", s(p, "name").unwrap_or("?")),
                    None => s(p, "name").unwrap_or("?").to_string(),
                };
                (name, args)
            }
            "custom_tool_call" => {
                (s(p, "name").unwrap_or("?").to_string(), Value::String(s(p, "input").unwrap_or("").to_string()))
            }
            "tool_search_call" => ("tool_search".to_string(), p.get("arguments").cloned().unwrap_or(Value::Null)),
            _ => ("local_shell".to_string(), p.get("action").cloned().unwrap_or(Value::Null)),
        };
        let dup = format!("{pt} without a new call_id");
        let call = self.calls.add(&mut self.b, cid, &name, args, &mut self.report, &dup);
        self.pending.calls.extend(call);
    }

    /// A billed `token_count` whose call left no item in the rollout (a local compaction's
    /// summarising call, an aborted call): an empty `assistant` record carrying its usage, so
    /// nothing billed is lost. Other `token_count`s were paired or counted by `pairing::pair`.
    fn token_count(&mut self, line: &super::Line) {
        let Some(usage) = self.pairing.orphans.remove(&line.no) else { return };
        self.flush();
        self.report.note(ORPHAN_NOTE);
        self.report.lose("billed call without items in the rollout (kept as an empty assistant record)");
        self.pending.start(line, s(&line.obj, "timestamp"));
        let done = std::mem::take(&mut self.pending);
        flush(&mut { done }, Some(usage), &mut self.seen, &mut self.b, &mut self.report);
    }
}

/// Response items of tools the provider runs itself (OpenAI's hosted `web_search`; a
/// `tool_search_call` not marked `"execution": "client"`): the response holding one was sampled in
/// several steps, each billed with its whole input plus what the tool returned, none of which the
/// rollout records.
const HOSTED_TOOL_CALLS: &[&str] = &["web_search_call", "tool_search_call"];

const ORPHAN_NOTE: &str = "a token_count billing a model call whose items are not in the rollout (a compaction's summarising call, an aborted call) is kept as an empty assistant record carrying its usage";

/// Codex's own rate of its truncation budget (`codex-rs/core/src/truncate.rs`).
const APPROX_BYTES_PER_TOKEN: u64 = 4;

const TRUNCATED_NOTE: &str =
    "tool outputs over the turn_context truncation_policy (× 1.2) are carried as Codex sent them to the model: head and tail with \"…N tokens truncated…\" between";

/// A tool output over `budget` bytes as Codex sends it to the model (`truncate.rs`: the first and
/// the last half of the budget at character boundaries, "…N tokens truncated…" between); a
/// sanitiser's marker standing for more than the budget becomes two markers of half the budget
/// each. `None`: within the budget.
fn truncated(text: &str, budget: u64) -> Option<String> {
    let half = budget / 2;
    let removed = |len: u64| len.saturating_sub(budget).div_ceil(APPROX_BYTES_PER_TOKEN);
    if let Some(m) = redacted::whole(text) {
        if m.len <= budget {
            return None;
        }
        let part = redacted::Marker { len: half, ..m }.render();
        return Some(format!("{part}…{} tokens truncated…{part}", removed(m.len)));
    }
    if text.len() as u64 <= budget {
        return None;
    }
    let half = usize::try_from(half).unwrap_or(usize::MAX);
    let mut head = half.min(text.len());
    while !text.is_char_boundary(head) {
        head -= 1;
    }
    let mut tail = text.len().saturating_sub(half).max(head);
    while !text.is_char_boundary(tail) {
        tail += 1;
    }
    let cut = (tail - head) as u64;
    Some(format!("{}…{} tokens truncated…{}", &text[..head], cut.div_ceil(APPROX_BYTES_PER_TOKEN), &text[tail..]))
}

/// Response-item types that appear as bare lines in rollouts written before 2025-09.
const ITEM_TYPES: &[&str] = &[
    "message",
    "reasoning",
    "function_call",
    "function_call_output",
    "custom_tool_call",
    "custom_tool_call_output",
    "local_shell_call",
    "local_shell_call_output",
    "web_search_call",
];

/// Rewrites a pre-2025-09 rollout (openai/codex PR #3380: a flattened `SessionMeta` first line
/// without `type`, bare `ResponseItem` lines, `{"record_type":"state"}` lines) into the current
/// `{type, payload}` shape. Current rollouts pass through unchanged.
fn normalize_legacy(lines: Vec<super::Line>, report: &mut ImportReport) -> Vec<super::Line> {
    let legacy = lines.iter().any(|l| {
        !l.obj.contains_key("payload")
            && (l.obj.contains_key("record_type")
                || l.obj.get("type").and_then(Value::as_str).is_some_and(|t| ITEM_TYPES.contains(&t)))
    });
    if !legacy {
        return lines;
    }
    report.note(
        "rollout in the format before 2025-09 (bare response items): read as current items, without token_count events",
    );
    let mut out = Vec::with_capacity(lines.len());
    for (n, mut l) in lines.into_iter().enumerate() {
        let o = std::mem::take(&mut l.obj);
        let ts = o.get("timestamp").cloned();
        let mut wrapped = Map::new();
        if o.contains_key("record_type") {
            wrapped.insert("type".into(), Value::from("state"));
        } else if n == 0 && !o.contains_key("type") && o.contains_key("id") {
            let mut meta = o.clone();
            if let Some(Value::String(i)) = o.get("instructions") {
                meta.insert("base_instructions".into(), serde_json::json!({ "text": i }));
            }
            wrapped.insert("type".into(), Value::from("session_meta"));
            wrapped.insert("payload".into(), Value::Object(meta));
        } else if o.get("type").and_then(Value::as_str).is_some_and(|t| ITEM_TYPES.contains(&t)) {
            wrapped.insert("type".into(), Value::from("response_item"));
            wrapped.insert("payload".into(), Value::Object(o));
        } else {
            l.obj = o;
            out.push(l);
            continue;
        }
        if let Some(ts) = ts {
            wrapped.insert("timestamp".into(), ts);
        }
        l.obj = wrapped;
        out.push(l);
    }
    out
}

impl Pending {
    fn start(&mut self, line: &super::Line, ts: Option<&str>) {
        if !self.started {
            self.started = true;
            self.line = line.no;
            self.offset = line.offset;
            self.ts = ts.map(str::to_string);
        }
    }
}

/// Writes the pending response as an `assistant` record.
fn flush(p: &mut Pending, usage: Option<Usage>, seen: &mut Seen, b: &mut Builder, report: &mut ImportReport) {
    if !p.started {
        return;
    }
    let done = std::mem::take(p);
    if usage.is_none() {
        report.skip("response without a token_count (turn kept, no usage)");
    }
    let usage = usage.map(|u| Usage {
        server_tool_calls: (done.server_tools > 0).then_some(done.server_tools),
        // Codex keeps every `reasoning` item in its history (`is_api_message`) and sends it back:
        // its size is the response's reasoning tokens. A response without one sends none back.
        reasoning_tokens: u.reasoning_tokens.filter(|_| done.reasoning),
        ..u
    });
    let id = b.unique_id(&format!("a{}", done.line));
    let text = done.texts.join("\n\n");
    seen.push("assistant", text.clone(), id.clone());
    b.push(
        done.ts.as_deref(),
        done.line,
        done.offset,
        Body::Assistant(AssistantRec {
            id,
            text: Arc::from(text),
            calls: done.calls,
            model: None,
            usage,
            prompt_sha256: None,
        }),
    );
}

/// Text of a message's content items, and its images.
fn message_text(p: &Map<String, Value>) -> (String, Vec<super::Image>) {
    let mut parts = Vec::new();
    let mut images = Vec::new();
    for (_, piece) in walk(p.get("content"), &CODEX) {
        match piece {
            Piece::Text(t) => parts.push(t),
            Piece::Image(img) => images.push(img),
            _ => {}
        }
    }
    (parts.concat(), images)
}

/// Text of a tool output: a string, or content items (an image as the line of
/// [`super::content::image_placeholder`] under `rule`).
fn output_text(v: Option<&Value>, rule: Option<super::ImageRule>, report: &mut ImportReport) -> String {
    match v {
        Some(Value::String(t)) => t.clone(),
        Some(Value::Array(a)) => a
            .iter()
            .map(|c| match c.get("type").and_then(Value::as_str) {
                Some("input_image") => match (CODEX.image)(c) {
                    Some(img) => super::content::image_placeholder(&img, rule, report),
                    None => "[input_image]".to_string(),
                },
                Some("input_text" | "output_text" | "text") => {
                    c.get("text").and_then(Value::as_str).unwrap_or("").to_string()
                }
                Some(t) => format!("[{t}]"),
                None => String::new(),
            })
            .collect::<Vec<_>>()
            .join("\n"),
        Some(Value::Object(o)) => match o.get("content") {
            Some(c) => output_text(Some(c), rule, report),
            None => Value::Object(o.clone()).to_string(),
        },
        Some(Value::Null) | None => String::new(),
        Some(other) => other.to_string(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const ROLLOUT: &str = r#"{"timestamp":"2026-01-01T00:00:00Z","type":"session_meta","payload":{"id":"T","base_instructions":{"text":"You are Codex."}}}
{"timestamp":"2026-01-01T00:00:01Z","type":"response_item","payload":{"type":"message","role":"developer","content":[{"type":"input_text","text":"perms"}]}}
{"timestamp":"2026-01-01T00:00:01Z","type":"turn_context","payload":{"model":"gpt-x"}}
{"timestamp":"2026-01-01T00:00:02Z","type":"response_item","payload":{"type":"message","role":"user","content":[{"type":"input_text","text":"fix it"}]}}
{"timestamp":"2026-01-01T00:00:03Z","type":"event_msg","payload":{"type":"token_count","info":null}}
{"timestamp":"2026-01-01T00:00:04Z","type":"response_item","payload":{"type":"reasoning","summary":[]}}
{"timestamp":"2026-01-01T00:00:04Z","type":"response_item","payload":{"type":"function_call","name":"shell","arguments":"{\"cmd\":\"ls\"}","call_id":"c1"}}
{"timestamp":"2026-01-01T00:00:05Z","type":"event_msg","payload":{"type":"token_count","info":{"total_token_usage":{"input_tokens":100,"cached_input_tokens":0,"output_tokens":5,"total_tokens":105},"last_token_usage":{"input_tokens":100,"cached_input_tokens":0,"output_tokens":5,"total_tokens":105}}}}
{"timestamp":"2026-01-01T00:00:05Z","type":"event_msg","payload":{"type":"token_count","info":{"total_token_usage":{"input_tokens":100,"cached_input_tokens":0,"output_tokens":5,"total_tokens":105},"last_token_usage":{"input_tokens":100,"cached_input_tokens":0,"output_tokens":5,"total_tokens":105}}}}
{"timestamp":"2026-01-01T00:00:06Z","type":"response_item","payload":{"type":"function_call_output","call_id":"c1","output":"a b"}}
{"timestamp":"2026-01-01T00:00:07Z","type":"response_item","payload":{"type":"message","role":"assistant","content":[{"type":"output_text","text":"done"}]}}
{"timestamp":"2026-01-01T00:00:08Z","type":"event_msg","payload":{"type":"token_count","info":{"total_token_usage":{"input_tokens":220,"cached_input_tokens":96,"output_tokens":9,"total_tokens":229},"last_token_usage":{"input_tokens":120,"cached_input_tokens":96,"output_tokens":4,"total_tokens":124}}}}
{"timestamp":"2026-01-01T00:00:09Z","type":"event_msg","payload":{"type":"token_count","info":{"total_token_usage":{"input_tokens":220,"cached_input_tokens":96,"output_tokens":9,"total_tokens":229},"last_token_usage":{"input_tokens":0,"cached_input_tokens":0,"output_tokens":0,"total_tokens":9999}}}}
{"timestamp":"2026-01-01T00:00:10Z","type":"compacted","payload":{"message":"","replacement_history":[{"type":"message","role":"user","content":[{"type":"input_text","text":"fix it"}]},{"type":"message","role":"developer","content":[{"type":"input_text","text":"new ctx"}]},{"type":"compaction","encrypted_content":"xyz"}]}}
"#;

    #[test]
    fn a_remote_compaction_carries_its_encrypted_summary_as_an_estimate() {
        let marker = "[REDACTED_ENCRYPTED_CONTENT len=13412 sha=3267a2ec]";
        let sanitised = ROLLOUT
            .replace(r#""message":"""#, r#""message":"[REDACTED_MESSAGE len=0 sha=e3b0c442]""#)
            .replace(r#""encrypted_content":"xyz""#, &format!(r#""encrypted_content":"{marker}""#));
        for (rollout, len) in [(ROLLOUT.to_string(), 3), (sanitised, 13_412)] {
            let im = read(Path::new("rollout-x.jsonl"), rollout.as_bytes()).unwrap();
            let Body::Compact(c) = &im.journal.records[7].body else { panic!() };
            assert!(c.summary.starts_with("[remote compaction: the summary is encrypted"), "{}", c.summary);
            assert!(c.summary.ends_with(&format!("[ENCRYPTED_SUMMARY len={len}]")), "{}", c.summary);
        }
    }

    #[test]
    fn tool_outputs_over_the_truncation_policy_are_cut_as_codex_sent_them() {
        // tokens mode, limit 10: Codex keeps 10 × 1.2 × 4 = 48 bytes, half at each end.
        let policy = r#""model":"gpt-x","truncation_policy":{"mode":"tokens","limit":10}"#;
        let long = format!("{}{}", "a".repeat(60), "z".repeat(60));
        let rollout = ROLLOUT
            .replace(r#""model":"gpt-x""#, policy)
            .replace(r#""output":"a b""#, &format!(r#""output":"{long}""#));
        let im = read(Path::new("rollout-x.jsonl"), rollout.as_bytes()).unwrap();
        let Body::Result(r) = &im.journal.records[5].body else { panic!() };
        assert_eq!(&*r.text, format!("{}…18 tokens truncated…{}", "a".repeat(24), "z".repeat(24)));
        assert!(im.report.notes.iter().any(|n| n.contains("truncation_policy")), "{:?}", im.report.notes);
        // A sanitiser's marker over the budget becomes two markers of half the budget.
        let m = "[REDACTED_OUTPUT len=83556 sha=5e0f]";
        assert_eq!(
            truncated(m, 48_000).unwrap(),
            "[REDACTED_OUTPUT len=24000 sha=5e0f]…8889 tokens truncated…[REDACTED_OUTPUT len=24000 sha=5e0f]"
        );
        assert_eq!(truncated(m, 90_000), None);
        assert_eq!(truncated("é".repeat(10).as_str(), 5).unwrap(), "é…4 tokens truncated…é", "char boundaries");
    }

    /// A token_count line billing `input` prompt tokens (running total `total`).
    fn tc(ts: u32, input: u64, total: u64) -> String {
        format!(
            r#"{{"timestamp":"2026-01-01T00:00:{ts:02}Z","type":"event_msg","payload":{{"type":"token_count","info":{{"total_token_usage":{{"input_tokens":{total},"cached_input_tokens":0,"output_tokens":1,"total_tokens":{total}}},"last_token_usage":{{"input_tokens":{input},"cached_input_tokens":0,"output_tokens":1,"total_tokens":{input}}}}}}}}}"#
        )
    }

    /// The response of a hosted web search (reasoning, `web_search_call` items, a reply: one
    /// response the provider sampled in several steps) was imported like any call: its usage,
    /// which sums every step's input and the search results, entered the calibration as the size
    /// of a request (OpenAI web search; openai/codex `ResponseItem::WebSearchCall`).
    #[test]
    fn regression_web_search_response_usage_was_taken_for_one_request() {
        let head = r#"{"timestamp":"2026-01-01T00:00:00Z","type":"session_meta","payload":{"id":"W"}}
{"timestamp":"2026-01-01T00:00:01Z","type":"turn_context","payload":{"model":"gpt-x"}}
{"timestamp":"2026-01-01T00:00:02Z","type":"response_item","payload":{"type":"message","role":"user","content":[{"type":"input_text","text":"look it up"}]}}
{"timestamp":"2026-01-01T00:00:03Z","type":"response_item","payload":{"type":"reasoning","summary":[]}}
{"timestamp":"2026-01-01T00:00:04Z","type":"response_item","payload":{"type":"web_search_call","status":"completed","action":{"type":"search","query":"q"}}}
{"timestamp":"2026-01-01T00:00:05Z","type":"response_item","payload":{"type":"reasoning","summary":[]}}
{"timestamp":"2026-01-01T00:00:06Z","type":"response_item","payload":{"type":"web_search_call","status":"completed","action":{"type":"open_page","url":"https://example.com"}}}
{"timestamp":"2026-01-01T00:00:07Z","type":"response_item","payload":{"type":"message","role":"assistant","content":[{"type":"output_text","text":"found"}]}}
"#;
        let rollout = format!(
            "{head}{}\n{}\n{}\n",
            tc(8, 9_000, 9_000),
            r#"{"timestamp":"2026-01-01T00:00:09Z","type":"response_item","payload":{"type":"message","role":"user","content":[{"type":"input_text","text":"thanks"}]}}
{"timestamp":"2026-01-01T00:00:10Z","type":"response_item","payload":{"type":"message","role":"assistant","content":[{"type":"output_text","text":"ok"}]}}"#,
            tc(11, 4_000, 13_000)
        );
        let im = read(Path::new("rollout-w.jsonl"), rollout.as_bytes()).unwrap();
        let usages: Vec<Usage> = (im.journal.records.iter())
            .filter_map(|r| match &r.body {
                Body::Assistant(a) => a.usage.clone(),
                _ => None,
            })
            .collect();
        assert_eq!(usages.len(), 2);
        assert_eq!((usages[0].prompt_tokens, usages[0].server_tool_calls), (Some(9_000), Some(2)));
        assert_eq!((usages[1].prompt_tokens, usages[1].server_tool_calls), (Some(4_000), None));
        // The calibration does not learn from the sampled call.
        let turns = crate::strategy::recorded_turns(&im.journal, &crate::tokens::CharEstimator);
        assert_eq!(turns[0].prompt_tokens, Some(9_000));
        assert_eq!(turns[0].observed(), None, "several sampling steps: no measure of the request");
        assert_eq!(turns[1].observed(), Some(4_000));
    }

    /// 0.142 Desktop rollouts hold `tool_search_call` (`"execution":"client"`) and its
    /// `tool_search_output` (the deferred tools' definitions). The output did not end the
    /// response, so the model's next call joined the first and every later `token_count` billed
    /// the response after the one it billed: a request counted 14.8k tokens the provider had
    /// not yet been sent.
    #[test]
    fn regression_client_tool_search_output_did_not_end_the_response() {
        let rollout = format!(
            "{}\n{}\n{}\n{}\n",
            r#"{"timestamp":"2026-01-01T00:00:00Z","type":"session_meta","payload":{"id":"S"}}
{"timestamp":"2026-01-01T00:00:01Z","type":"turn_context","payload":{"model":"gpt-x"}}
{"timestamp":"2026-01-01T00:00:02Z","type":"response_item","payload":{"type":"message","role":"user","content":[{"type":"input_text","text":"status?"}]}}
{"timestamp":"2026-01-01T00:00:03Z","type":"response_item","payload":{"type":"reasoning","summary":[]}}
{"timestamp":"2026-01-01T00:00:04Z","type":"response_item","payload":{"type":"tool_search_call","call_id":"ts1","status":"completed","execution":"client","arguments":{"query":"jobs","limit":8}}}
{"timestamp":"2026-01-01T00:00:05Z","type":"response_item","payload":{"type":"tool_search_output","call_id":"ts1","status":"completed","execution":"client","tools":[{"type":"function","name":"job_status","description":"Status of a job."}]}}"#,
            tc(6, 1_000, 1_000),
            r#"{"timestamp":"2026-01-01T00:00:07Z","type":"response_item","payload":{"type":"function_call","name":"job_status","arguments":"{}","call_id":"c2"}}
{"timestamp":"2026-01-01T00:00:08Z","type":"response_item","payload":{"type":"function_call_output","call_id":"c2","output":"running"}}"#,
            tc(9, 1_100, 2_100)
        );
        let im = read(Path::new("rollout-s.jsonl"), rollout.as_bytes()).unwrap();
        let kinds: Vec<&str> = im.journal.records.iter().map(|r| r.kind()).collect();
        assert_eq!(kinds, vec!["session", "user", "assistant", "result", "assistant", "result"]);
        let Body::Assistant(a) = &im.journal.records[2].body else { panic!() };
        assert_eq!(
            (a.calls[0].tool.as_str(), a.usage.as_ref().and_then(|u| u.prompt_tokens)),
            ("tool_search", Some(1_000))
        );
        let Body::Result(r) = &im.journal.records[3].body else { panic!() };
        assert!(r.text.contains("job_status"), "the definitions are the next call's input: {}", r.text);
        let Body::Assistant(b) = &im.journal.records[4].body else { panic!() };
        assert_eq!(b.usage.as_ref().and_then(|u| u.prompt_tokens), Some(1_100));
    }

    #[test]
    fn reads_a_pre_2025_09_rollout() {
        let s = r#"{"id":"old","timestamp":"2025-08-01T00:00:00Z","instructions":"be brief","git":{}}
{"record_type":"state"}
{"type":"message","role":"user","content":[{"type":"input_text","text":"hi"}]}
{"type":"function_call","name":"shell","arguments":"{}","call_id":"c"}
{"type":"function_call_output","call_id":"c","output":"ok"}
{"type":"message","role":"assistant","content":[{"type":"output_text","text":"done"}]}
"#;
        assert_eq!(super::super::detect_bytes(s.as_bytes(), "rollout-x.jsonl"), Some(Format::Codex));
        let im = read(Path::new("rollout-x.jsonl"), s.as_bytes()).unwrap();
        let kinds: Vec<&str> = im.journal.records.iter().map(|r| r.kind()).collect();
        assert_eq!(kinds, vec!["session", "system", "user", "assistant", "result", "assistant"]);
        assert_eq!(im.journal.session().unwrap().id, "old");
    }

    #[test]
    fn maps_a_rollout() {
        let im = read(Path::new("rollout-x.jsonl"), ROLLOUT.as_bytes()).unwrap();
        let j = &im.journal;
        let kinds: Vec<&str> = j.records.iter().map(|r| r.kind()).collect();
        assert_eq!(
            kinds,
            vec!["session", "system", "notice", "user", "assistant", "result", "assistant", "compact", "notice"]
        );
        assert_eq!(j.session().unwrap().model.as_deref(), Some("gpt-x"));
        let Body::Assistant(a) = &j.records[j.turns[1]].body else { panic!() };
        assert_eq!(
            a.usage,
            Some(Usage {
                prompt_tokens: Some(120),
                cached_tokens: Some(96),
                completion_tokens: Some(4),
                ..Default::default()
            })
        );
        assert_eq!(j.call("c1").unwrap().args.to_string(), r#"{"cmd":"ls"}"#);
        assert_eq!(im.report.skipped["token_count with info: null"], 1);
        assert_eq!(im.report.skipped["token_count repeating the previous total"], 1);
        assert_eq!(im.report.skipped["token_count estimate (zero input, e.g. after compaction)"], 1);
        let Body::Compact(c) = &j.records[7].body else { panic!() };
        assert_eq!(c.kept.as_deref(), Some(&["u4".to_string()][..]));
        let p = crate::projection::state_at_rev(j, u64::MAX);
        let ids: Vec<&str> = p.conv.iter().filter_map(|b| b.block.id()).collect();
        assert_eq!(ids, vec!["u4", "n14"]);
    }

    /// Codex 0.34 (`cli_version` 0.34.0, codex_cli_rs) wrote no `turn_context`: no line names the
    /// model. The session had no model, so every call was unpriced (ccusage prices it as gpt-5).
    #[test]
    fn regression_rollout_without_turn_context_has_codex_default_model() {
        let s = r#"{"timestamp":"2025-11-01T01:02:58Z","type":"session_meta","payload":{"id":"T","cli_version":"0.34.0","instructions":null}}
{"timestamp":"2025-11-01T01:02:59Z","type":"response_item","payload":{"type":"message","role":"user","content":[{"type":"input_text","text":"hi"}]}}
{"timestamp":"2025-11-01T01:03:47Z","type":"event_msg","payload":{"type":"token_count","info":{"total_token_usage":{"input_tokens":6247,"cached_input_tokens":0,"output_tokens":268},"last_token_usage":{"input_tokens":6247,"cached_input_tokens":0,"output_tokens":268},"model_context_window":272000}}}
{"timestamp":"2025-11-01T01:03:48Z","type":"response_item","payload":{"type":"message","role":"assistant","content":[{"type":"output_text","text":"hello"}]}}
"#;
        let im = read(Path::new("rollout-x.jsonl"), s.as_bytes()).unwrap();
        assert_eq!(im.journal.session().unwrap().model.as_deref(), Some(LEGACY_DEFAULT_MODEL));
        assert!(im.report.notes.iter().any(|n| n.contains("no turn_context")), "{:?}", im.report.notes);
        // A rollout that names its model keeps it.
        let im = read(Path::new("rollout-x.jsonl"), ROLLOUT.as_bytes()).unwrap();
        assert_eq!(im.journal.session().unwrap().model.as_deref(), Some("gpt-x"));
    }
}
