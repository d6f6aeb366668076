//! pi coding-agent sessions (`~/.pi/agent/sessions/--<cwd>--/*.jsonl`) → journal-v1 records.
//!
//! Mapping (see `docs/importing.md`):
//! * the header (`type: "session"`) → the `session` record (`provider/modelId` as the model);
//! * legacy v1 files (no entry ids) are read in file order; v2/v3 trees (`id`/`parentId`) follow
//!   the path from the last entry to its root, and entries off that path are counted as other
//!   branches;
//! * `message` entries: `user` → `user` (images → attachments), `assistant` → `assistant` (text,
//!   `toolCall` → calls, usage prompt = input + cacheRead + cacheWrite, cached = cacheRead),
//!   `toolResult` → `result`, `bashExecution` → a `user` record with the text pi sends
//!   (``Ran `cmd` `` + fenced output, unless `excludeFromContext`), `custom`/`hookMessage` → `user`,
//!   `branchSummary`/`compactionSummary` → `user` with pi's wrapper text;
//! * `compaction` → `compact` (summary wrapped as pi sends it; `firstKeptEntryId`, or legacy
//!   `firstKeptEntryIndex` (index into the file's entries including the header) → `first_kept`;
//!   `tokensBefore` → `tokens_before`);
//! * `model_change` → `model`; `branch_summary` and `custom_message` → `user`;
//! * `thinking_level_change`, `custom`, `label`, `session_info` are skipped and counted.
//!
//! pi stores no system prompt and no tool schemas: both are reported as missing.

use std::collections::{HashMap, HashSet};
use std::path::Path;
use std::sync::Arc;

use serde_json::{Map, Value};

use super::content::{image_placeholder, walk, Calls, Piece, PI};
use super::ImageRule;
use super::{f, parse_lines, s, u, Builder, Format, ImportError, ImportReport, Imported, Line};
use crate::journal::{AssistantRec, Body, CompactRec, ModelRec, ResultRec, SessionRec, Usage, UserRec};

const COMPACTION_PREFIX: &str =
    "The conversation history before this point was compacted into the following summary:\n\n<summary>\n";
const COMPACTION_SUFFIX: &str = "\n</summary>";
const BRANCH_PREFIX: &str =
    "The following is a summary of a branch that this conversation came back from:\n\n<summary>\n";
const BRANCH_SUFFIX: &str = "</summary>";

pub fn read(path: &Path, bytes: &[u8]) -> Result<Imported, ImportError> {
    let mut report = ImportReport::new(Format::Pi, path);
    report.missing = vec!["system prompt".into(), "tool schemas".into()];
    let lines = parse_lines(path, bytes, &mut report)?;
    let header_at = lines.iter().position(|l| s(&l.obj, "type") == Some("session"));
    let header = header_at.map(|i| &lines[i].obj);
    if header_at != Some(0) {
        report.note("the first line is not a pi session header");
    }
    let tree = header.and_then(|h| u(h, "version")).is_some_and(|v| v >= 2)
        || lines.iter().skip(1).any(|l| s(&l.obj, "id").is_some() && l.obj.contains_key("parentId"));

    // The entries on the current path, in order (indices into `lines`).
    let entries: Vec<usize> = (0..lines.len()).filter(|&i| Some(i) != header_at).collect();
    let path_idx: Vec<usize> = if tree { tree_path(&lines, &entries, &mut report) } else { entries.clone() };

    let mut b = Builder::new();
    // v3 headers carry no model: the session model is then the first one the path names.
    let model = header
        .and_then(|h| slug(s(h, "provider"), s(h, "modelId")))
        .or_else(|| path_idx.iter().find_map(|&i| first_model(&lines[i].obj)));
    let id = header
        .and_then(|h| s(h, "id"))
        .map(str::to_string)
        .unwrap_or_else(|| path.file_stem().map(|s| s.to_string_lossy().into_owned()).unwrap_or_default());
    let first_ts = path_idx.first().and_then(|&i| s(&lines[i].obj, "timestamp"));
    let (hl, ho) = header_at.map_or((0, 0), |i| (lines[i].no, lines[i].offset));
    b.push(
        first_ts.or_else(|| header.and_then(|h| s(h, "timestamp"))),
        hl,
        ho,
        Body::Session(SessionRec { id, model: model.clone(), harness: Some("pi".into()), encoding: None, ctx: None }),
    );
    let id_pos = path_idx.iter().enumerate().filter_map(|(n, &i)| s(&lines[i].obj, "id").map(|id| (id, n))).collect();
    let mut r = Reader {
        path_idx: &path_idx,
        id_pos,
        b,
        report,
        files: Vec::new(),
        model,
        rev_of: HashMap::new(),
        calls: Calls::default(),
        prev_compaction: None,
    };
    for (n, &i) in path_idx.iter().enumerate() {
        let next = r.b.next_rev();
        let line = &lines[i];
        match s(&line.obj, "type").unwrap_or("") {
            "message" => r.message(line),
            "compaction" => r.compaction(n, line),
            "model_change" => r.model_change(line),
            "branch_summary" => match s(&line.obj, "summary").unwrap_or("") {
                "" => r.report.skip("branch_summary (empty)"),
                sum => r.push_user(line, format!("{BRANCH_PREFIX}{sum}{BRANCH_SUFFIX}")),
            },
            "custom_message" => r.user(line, line.obj.get("content")),
            "" => r.report.skip("line without a type"),
            other => r.report.skip(other.to_string()),
        }
        if r.b.next_rev() > next {
            r.rev_of.insert(i, next);
        }
    }
    let Reader { b, mut report, files, .. } = r;
    report.ts_clamped = b.clamped;
    Ok(Imported { journal: b.finish(path), report, files })
}

/// The state shared by the entry handlers of one pi import.
struct Reader<'a> {
    /// The entries on the current path (indices into `lines`) and each id's position there.
    path_idx: &'a [usize],
    id_pos: HashMap<&'a str, usize>,
    b: Builder,
    report: ImportReport,
    files: Vec<(String, crate::journal::Text)>,
    /// The current model (an answer by another one carries its own).
    model: Option<String>,
    /// The rev of the first record made from each entry.
    rev_of: HashMap<usize, u64>,
    calls: Calls,
    /// (position of the previous compaction on the path, position of its first kept entry).
    prev_compaction: Option<(usize, usize)>,
}

impl Reader<'_> {
    fn push(&mut self, line: &Line, body: Body) {
        self.b.push(s(&line.obj, "timestamp"), line.no, line.offset, body);
    }

    /// A `message` entry, by role.
    fn message(&mut self, line: &Line) {
        let Some(m) = line.obj.get("message").and_then(Value::as_object) else {
            self.report.skip("message without a message object");
            return;
        };
        match s(m, "role").unwrap_or("") {
            "user" | "custom" | "hookMessage" => self.user(line, m.get("content")),
            "assistant" => self.assistant(line, m),
            "toolResult" => self.tool_result(line, m),
            "bashExecution" => {
                if m.get("excludeFromContext").and_then(Value::as_bool) == Some(true) {
                    self.report.skip("bashExecution excluded from context (!!)");
                } else {
                    self.push_user(line, bash_text(m));
                }
            }
            "branchSummary" => {
                self.push_user(line, format!("{BRANCH_PREFIX}{}{BRANCH_SUFFIX}", s(m, "summary").unwrap_or("")))
            }
            "compactionSummary" => {
                self.push_user(line, format!("{COMPACTION_PREFIX}{}{COMPACTION_SUFFIX}", s(m, "summary").unwrap_or("")))
            }
            other => self.report.skip(format!("message/{other}")),
        }
    }

    fn assistant(&mut self, line: &Line, m: &Map<String, Value>) {
        let mut texts = Vec::new();
        let mut calls = Vec::new();
        let blocks = m.get("content").filter(|c| c.is_array());
        let mut thinking = 0u64;
        for (kind, piece) in walk(blocks, &PI) {
            match piece {
                Piece::Text(t) => texts.push(t.to_string()),
                Piece::Call { id, name, args } => {
                    let dup = "duplicate or id-less toolCall";
                    calls.extend(self.calls.add(&mut self.b, id, name, args, &mut self.report, dup));
                }
                Piece::Thinking => {
                    thinking += 1;
                    self.report.lose(if kind == "thinking" {
                        "thinking block".into()
                    } else {
                        format!("assistant block {kind}")
                    })
                }
                _ => self.report.lose(format!("assistant block {kind}")),
            }
        }
        // All zero is kept: the log says the provider billed nothing for this message (an aborted
        // or failed request, a gateway-injected reply), so no replay bills it either.
        let usage = m.get("usage").and_then(Value::as_object).map(|us| {
            let (i, cr, cw, out) = (
                u(us, "input").unwrap_or(0),
                u(us, "cacheRead").unwrap_or(0),
                u(us, "cacheWrite").unwrap_or(0),
                u(us, "output").unwrap_or(0),
            );
            Usage {
                prompt_tokens: Some(i + cr + cw),
                cached_tokens: Some(cr),
                completion_tokens: Some(out),
                cache_write_tokens: Some(cw),
                cost_usd: us.get("cost").and_then(|c| c.get("total")).and_then(Value::as_f64).filter(|c| *c >= 0.0),
                // Sent back only over Anthropic's Messages API (pi-ai replays a block with its
                // signature there; an OpenAI-compatible route such as OpenRouter has no thinking
                // block in its messages).
                thinking_blocks: (thinking > 0 && messages_api(m)).then_some(thinking),
                ..Default::default()
            }
        });
        let this = slug(s(m, "provider"), s(m, "model"));
        let aid = self.b.unique_id(&s(&line.obj, "id").map_or_else(|| format!("a{}", line.no), str::to_string));
        let rec = AssistantRec {
            id: aid,
            text: Arc::from(texts.join("\n\n")),
            calls,
            model: this.filter(|x| Some(x) != self.model.as_ref()),
            usage,
            prompt_sha256: None,
        };
        self.push(line, Body::Assistant(rec));
    }

    fn tool_result(&mut self, line: &Line, m: &Map<String, Value>) {
        let call = s(m, "toolCallId").unwrap_or("");
        let answered =
            self.calls.answer(call, &mut self.report, "toolResult without its call", "second toolResult for one call");
        let Some(tool) = answered else { return };
        let rule = self.model.as_deref().and_then(ImageRule::for_model);
        let text = blocks_text(m.get("content"), rule, &mut self.report);
        let is_error = m.get("isError").and_then(Value::as_bool).filter(|e| *e);
        self.push(line, Body::Result(ResultRec::whole(call.to_string(), tool, text, is_error)));
    }

    /// `compaction` → `compact`, its first kept entry found on the path.
    fn compaction(&mut self, n: usize, line: &Line) {
        let o = &line.obj;
        let next = self.b.next_rev();
        let kept_pos = if let Some(k) = s(o, "firstKeptEntryId") {
            self.id_pos.get(k).copied()
        } else if let Some(ix) = u(o, "firstKeptEntryIndex") {
            // Legacy: an index into the file's entries, header included.
            let target = ix as usize;
            self.path_idx.iter().position(|&j| j == target)
        } else {
            None
        };
        let first_kept = match kept_pos {
            Some(kp) if kp < n => self.path_idx[kp..n].iter().find_map(|j| self.rev_of.get(j).copied()).unwrap_or(next),
            _ => {
                self.report.note("a compaction's first kept entry is not before it on the path: nothing kept");
                next
            }
        };
        if let (Some((pc, pk)), Some(kp)) = (self.prev_compaction, kept_pos) {
            if kp > pc && pk < pc {
                self.report.note(format!(
                    "repeated compaction drops the previous compaction's kept tail ({} entries), as pi <= 0.58.3 did (fixed upstream later)",
                    pc - pk
                ));
            }
        }
        self.prev_compaction = Some((n, kept_pos.unwrap_or(n)));
        let summary = format!("{COMPACTION_PREFIX}{}{COMPACTION_SUFFIX}", s(o, "summary").unwrap_or(""));
        let rec = CompactRec {
            trigger: None,
            instruction: None,
            summary: Arc::from(summary),
            first_kept: Some(first_kept),
            kept: None,
            mode: None,
            fallback: None,
            tokens_before: f(u(o, "tokensBefore")),
            usage: None,
            tokens_after: None,
        };
        self.push(line, Body::Compact(rec));
    }

    fn model_change(&mut self, line: &Line) {
        let Some(m) = slug(s(&line.obj, "provider"), s(&line.obj, "modelId")) else {
            self.report.skip("model_change without modelId");
            return;
        };
        if self.model.as_deref() == Some(m.as_str()) {
            // The first model_change of a v3 file names the session model itself.
            self.report.skip("model_change to the current model");
            return;
        }
        self.model = Some(m.clone());
        self.push(line, Body::Model(ModelRec { model: m, ctx: None }));
    }

    /// A user message (text and image blocks; images become attachments).
    fn user(&mut self, line: &Line, content: Option<&Value>) {
        let mut texts = Vec::new();
        let mut images = Vec::new();
        for (kind, piece) in walk(content, &PI) {
            match piece {
                Piece::Text(t) => texts.push(t.to_string()),
                Piece::Image(img) => images.push(img),
                _ => self.report.lose(format!("user block {kind}")),
            }
        }
        let uid = self.user_id(line);
        let rule = self.model.as_deref().and_then(ImageRule::for_model);
        let attachments = super::attach(&mut self.b, &uid, images, rule, &mut texts, &mut self.files, &mut self.report);
        self.push(line, Body::User(UserRec { id: uid, text: Arc::from(texts.join("\n")), attachments }));
    }

    /// A user record of text pi builds itself (bash runs, summaries).
    fn push_user(&mut self, line: &Line, text: String) {
        let uid = self.user_id(line);
        self.push(line, Body::User(UserRec { id: uid, text: Arc::from(text), attachments: Vec::new() }));
    }

    fn user_id(&mut self, line: &Line) -> String {
        self.b.unique_id(&s(&line.obj, "id").map_or_else(|| format!("u{}", line.no), str::to_string))
    }
}

/// `provider/model`, or the bare model when the provider is not recorded.
/// Whether an assistant message came through Anthropic's Messages API (`api`, else the
/// `provider` when an older log names no `api`).
fn messages_api(m: &Map<String, Value>) -> bool {
    match s(m, "api") {
        Some(api) => api == "anthropic-messages",
        None => s(m, "provider") == Some("anthropic"),
    }
}

fn slug(provider: Option<&str>, model: Option<&str>) -> Option<String> {
    match (provider, model) {
        (Some(p), Some(m)) => Some(format!("{p}/{m}")),
        (None, Some(m)) => Some(m.to_string()),
        _ => None,
    }
}

/// The model an entry names: a `model_change`, or the model that answered an assistant message.
fn first_model(o: &Map<String, Value>) -> Option<String> {
    match s(o, "type") {
        Some("model_change") => slug(s(o, "provider"), s(o, "modelId")),
        Some("message") => {
            let m = o.get("message").and_then(Value::as_object)?;
            (s(m, "role") == Some("assistant")).then(|| slug(s(m, "provider"), s(m, "model"))).flatten()
        }
        _ => None,
    }
}

/// The v2/v3 tree path from the last entry to its root, in order; off-path entries are counted.
fn tree_path(lines: &[Line], entries: &[usize], report: &mut ImportReport) -> Vec<usize> {
    let by_id: HashMap<&str, usize> =
        entries.iter().filter_map(|&i| s(&lines[i].obj, "id").map(|id| (id, i))).collect();
    let Some(&leaf) = entries.iter().rev().find(|&&i| s(&lines[i].obj, "id").is_some()) else {
        return entries.to_vec();
    };
    let mut path = Vec::new();
    let mut seen = HashSet::new();
    let mut cur = Some(leaf);
    while let Some(i) = cur {
        if !seen.insert(i) {
            report.note("parentId cycle broken");
            break;
        }
        path.push(i);
        cur = s(&lines[i].obj, "parentId").and_then(|p| by_id.get(p).copied());
    }
    path.reverse();
    let on: HashSet<usize> = path.iter().copied().collect();
    let off: Vec<usize> = entries.iter().copied().filter(|i| !on.contains(i)).collect();
    let offset: HashSet<usize> = off.iter().copied().collect();
    report.branches = off
        .iter()
        .filter(|&&i| s(&lines[i].obj, "parentId").and_then(|p| by_id.get(p)).is_none_or(|p| !offset.contains(p)))
        .count();
    for &i in &off {
        let o = &lines[i].obj;
        match s(o, "type") {
            Some("message") => match o.get("message").and_then(|m| m.get("role")).and_then(Value::as_str) {
                Some("assistant") => {
                    report.dropped.turns += 1;
                    report.dropped.calls +=
                        o.get("message").and_then(|m| m.get("content")).and_then(Value::as_array).map_or(0, |a| {
                            a.iter().filter(|b| b.get("type").and_then(Value::as_str) == Some("toolCall")).count()
                        });
                }
                Some("toolResult") => report.dropped.results += 1,
                _ => {}
            },
            Some("compaction") => report.dropped.compactions += 1,
            _ => {}
        }
    }
    path
}

fn bash_text(m: &Map<String, Value>) -> String {
    let mut text = format!("Ran `{}`\n", s(m, "command").unwrap_or(""));
    match s(m, "output") {
        Some(out) if !out.is_empty() => text.push_str(&format!("```\n{out}\n```")),
        _ => text.push_str("(no output)"),
    }
    if m.get("cancelled").and_then(Value::as_bool) == Some(true) {
        text.push_str("\n\n(command cancelled)");
    } else if let Some(code) = m.get("exitCode").and_then(Value::as_i64).filter(|c| *c != 0) {
        text.push_str(&format!("\n\nCommand exited with code {code}"));
    }
    if m.get("truncated").and_then(Value::as_bool) == Some(true) {
        if let Some(p) = s(m, "fullOutputPath") {
            text.push_str(&format!("\n\n[Output truncated. Full output: {p}]"));
        }
    }
    text
}

/// Text of content that is a string or text/image blocks (images as placeholder lines).
fn blocks_text(v: Option<&Value>, rule: Option<ImageRule>, report: &mut ImportReport) -> String {
    let mut parts = Vec::new();
    for (_, piece) in walk(v, &PI) {
        match piece {
            Piece::Text(t) => parts.push(t.to_string()),
            Piece::Image(img) => parts.push(image_placeholder(&img, rule, report)),
            _ => {}
        }
    }
    parts.join("\n")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn legacy_v1_with_compaction_index() {
        let s = r#"{"type":"session","id":"P","timestamp":"2026-01-01T00:00:00Z","cwd":"/","provider":"anthropic","modelId":"claude-x"}
{"type":"message","timestamp":"2026-01-01T00:00:01Z","message":{"role":"user","content":[{"type":"text","text":"one"}]}}
{"type":"message","timestamp":"2026-01-01T00:00:02Z","message":{"role":"assistant","content":[{"type":"toolCall","id":"c1","name":"read","arguments":{"path":"a"}}],"provider":"anthropic","model":"claude-x","usage":{"input":2,"output":3,"cacheRead":10,"cacheWrite":5}}}
{"type":"message","timestamp":"2026-01-01T00:00:03Z","message":{"role":"toolResult","toolCallId":"c1","toolName":"read","content":[{"type":"text","text":"A"}],"isError":false}}
{"type":"message","timestamp":"2026-01-01T00:00:04Z","message":{"role":"user","content":[{"type":"text","text":"two"}]}}
{"type":"thinking_level_change","timestamp":"2026-01-01T00:00:05Z","thinkingLevel":"high"}
{"type":"compaction","timestamp":"2026-01-01T00:00:06Z","summary":"S","firstKeptEntryIndex":4,"tokensBefore":17}
{"type":"message","timestamp":"2026-01-01T00:00:07Z","message":{"role":"bashExecution","command":"ls","output":"x","exitCode":1,"cancelled":false,"truncated":false}}
{"type":"model_change","timestamp":"2026-01-01T00:00:08Z","provider":"openai","modelId":"gpt-y"}
"#;
        let im = read(Path::new("p.jsonl"), s.as_bytes()).unwrap();
        let j = &im.journal;
        let kinds: Vec<&str> = j.records.iter().map(|r| r.kind()).collect();
        assert_eq!(kinds, vec!["session", "user", "assistant", "result", "user", "compact", "user", "model"]);
        let Body::Compact(c) = &j.records[5].body else { panic!() };
        assert_eq!(c.first_kept, Some(5), "entry index 4 = file line 5 = the user 'two' at rev 5");
        assert!(c.summary.starts_with(COMPACTION_PREFIX));
        let Body::Assistant(a) = &j.records[2].body else { panic!() };
        assert_eq!(
            a.usage,
            Some(Usage {
                prompt_tokens: Some(17),
                cached_tokens: Some(10),
                completion_tokens: Some(3),
                cache_write_tokens: Some(5),
                ..Default::default()
            })
        );
        assert_eq!(a.model, None);
        let Body::User(bash) = &j.records[6].body else { panic!() };
        assert_eq!(&*bash.text, "Ran `ls`\n```\nx\n```\n\nCommand exited with code 1");
        let p = crate::projection::state_at_rev(j, u64::MAX);
        assert_eq!(p.conv.len(), 2);
        assert_eq!(im.report.skipped["thinking_level_change"], 1);
    }

    #[test]
    fn v3_model_comes_from_the_first_model_change_and_each_answer_keeps_its_own() {
        let s = r#"{"type":"session","version":3,"id":"P","timestamp":"2026-01-01T00:00:00Z","cwd":"/"}
{"type":"model_change","id":"m","parentId":null,"timestamp":"2026-01-01T00:00:00Z","provider":"anthropic","modelId":"claude-a"}
{"type":"message","id":"a","parentId":"m","timestamp":"2026-01-01T00:00:01Z","message":{"role":"user","content":"q"}}
{"type":"message","id":"b","parentId":"a","timestamp":"2026-01-01T00:00:02Z","message":{"role":"assistant","provider":"anthropic","model":"claude-a","content":[]}}
{"type":"model_change","id":"c","parentId":"b","timestamp":"2026-01-01T00:00:03Z","provider":"openai","modelId":"gpt-b"}
{"type":"message","id":"d","parentId":"c","timestamp":"2026-01-01T00:00:04Z","message":{"role":"assistant","provider":"openai","model":"gpt-b","content":[]}}
{"type":"message","id":"e","parentId":"d","timestamp":"2026-01-01T00:00:05Z","message":{"role":"assistant","provider":"google","model":"gem-c","content":[]}}
"#;
        let im = read(Path::new("p.jsonl"), s.as_bytes()).unwrap();
        let j = &im.journal;
        assert_eq!(j.session().unwrap().model.as_deref(), Some("anthropic/claude-a"));
        let kinds: Vec<&str> = j.records.iter().map(|r| r.kind()).collect();
        assert_eq!(kinds, vec!["session", "user", "assistant", "model", "assistant", "assistant"]);
        let model = |n: usize| match &j.records[n].body {
            Body::Assistant(a) => a.model.clone(),
            _ => panic!(),
        };
        assert_eq!((model(2), model(4)), (None, None), "answered by the current model");
        assert_eq!(model(5).as_deref(), Some("google/gem-c"), "answered by another model: priced at its own");
        assert_eq!(im.report.skipped["model_change to the current model"], 1);
    }

    /// An aborted request logs a partial answer with all-zero usage: the provider billed
    /// nothing. The importer dropped that usage, so every replay estimated and priced the call
    /// as a full request (OpenClaw through OpenRouter: an aborted Claude call billed $0.027).
    #[test]
    fn regression_all_zero_usage_of_an_aborted_call_was_dropped() {
        let s = r#"{"type":"session","version":3,"id":"P","timestamp":"2026-01-01T00:00:00Z","cwd":"/"}
{"type":"message","id":"a","parentId":null,"timestamp":"2026-01-01T00:00:01Z","message":{"role":"user","content":"q"}}
{"type":"message","id":"b","parentId":"a","timestamp":"2026-01-01T00:00:02Z","message":{"role":"assistant","content":[{"type":"text","text":"partial"}],"provider":"openrouter","model":"anthropic/claude-3.7-sonnet","usage":{"input":0,"output":0,"cacheRead":0,"cacheWrite":0,"totalTokens":0,"cost":{"total":0}},"stopReason":"aborted","errorMessage":"Request was aborted"}}
"#;
        let im = read(Path::new("p.jsonl"), s.as_bytes()).unwrap();
        let usage = im.journal.records.iter().find_map(|r| match &r.body {
            Body::Assistant(a) => a.usage.clone(),
            _ => None,
        });
        let u = usage.expect("the log's usage is kept");
        assert_eq!((u.prompt_tokens, u.completion_tokens, u.cost_usd), (Some(0), Some(0), Some(0.0)));
    }

    /// pi keeps a summary of each thinking block and the importer dropped it without a trace, so
    /// nothing said the provider counted the blocks sent back (Anthropic's Messages API).
    #[test]
    fn regression_thinking_blocks_sent_back_left_no_trace() {
        let line = |id: &str, parent: &str, api: &str| {
            format!(
                r#"{{"type":"message","id":"{id}","parentId":"{parent}","timestamp":"2026-01-01T00:00:02Z","message":{{"role":"assistant","content":[{{"type":"thinking","thinking":"plan","thinkingSignature":"sig"}},{{"type":"text","text":"ok"}}],"api":"{api}","provider":"x","model":"claude-opus-4-5","usage":{{"input":5,"output":90,"cacheRead":0,"cacheWrite":0}}}}}}"#
            )
        };
        let s = format!(
            "{}\n{}\n{}\n{}\n",
            r#"{"type":"session","version":3,"id":"P","timestamp":"2026-01-01T00:00:00Z","cwd":"/"}"#,
            r#"{"type":"message","id":"a","parentId":null,"timestamp":"2026-01-01T00:00:01Z","message":{"role":"user","content":"q"}}"#,
            line("b", "a", "anthropic-messages"),
            line("c", "b", "openai-completions"),
        );
        let im = read(Path::new("p.jsonl"), s.as_bytes()).unwrap();
        let marks: Vec<Option<u64>> = (im.journal.records.iter())
            .filter_map(|r| match &r.body {
                Body::Assistant(a) => Some(a.usage.as_ref().and_then(|u| u.thinking_blocks)),
                _ => None,
            })
            .collect();
        assert_eq!(marks, vec![Some(1), None], "only the Messages API sends thinking blocks back");
    }

    #[test]
    fn v3_tree_follows_the_last_leaf() {
        let s = r#"{"type":"session","version":3,"id":"P","timestamp":"2026-01-01T00:00:00Z","cwd":"/"}
{"type":"message","id":"a","parentId":null,"timestamp":"2026-01-01T00:00:01Z","message":{"role":"user","content":"q"}}
{"type":"message","id":"b","parentId":"a","timestamp":"2026-01-01T00:00:02Z","message":{"role":"assistant","content":[{"type":"text","text":"old"}]}}
{"type":"message","id":"c","parentId":"a","timestamp":"2026-01-01T00:00:03Z","message":{"role":"assistant","content":[{"type":"text","text":"new"}]}}
{"type":"compaction","id":"d","parentId":"c","timestamp":"2026-01-01T00:00:04Z","summary":"S","firstKeptEntryId":"c","tokensBefore":9}
"#;
        let im = read(Path::new("p.jsonl"), s.as_bytes()).unwrap();
        assert_eq!(im.journal.turns.len(), 1);
        assert_eq!(im.report.branches, 1);
        assert_eq!(im.report.dropped.turns, 1);
        let Body::Compact(c) = &im.journal.records[3].body else { panic!() };
        assert_eq!(c.first_kept, Some(3));
    }
}
