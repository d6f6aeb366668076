//! OpenCode and Kilo CLI stores → journal-v1 records: the SQLite `opencode.db` (OpenCode ≥ 1.2,
//! also `opencode-<channel>.db`) and `kilo.db` (Kilo CLI, the same drizzle schema), one session
//! of the store per import (`store.db#<session id>`; a store holding one main session opens it).
//!
//! The store is opened **read-only** and never written beside: with no `-wal` file it is opened
//! `immutable` (no `-shm` is created); with one (a running OpenCode), the database and its `-wal`
//! are copied to a temporary folder and read there, so the pages the writer has not checkpointed
//! are seen and the user's folder stays as it was.
//!
//! Schema (`packages/opencode/src/session/session.sql.ts` and `message-v2.ts` of
//! anomalyco/opencode @ v1.2.10; v1.16 and Kilo 7.0 have the same tables): `session(id,
//! parent_id, title, version, …)`, `message(id, session_id, time_created, data)` with `data` =
//! `MessageV2.Info` minus its ids, `part(id, message_id, session_id, data)` with `data` = the part.
//! Message and part ids ascend with time, so rows are read ordered by id.
//!
//! * user message → `user` (text parts that are not `ignored`, synthetic ones included: they are
//!   sent); a `compaction` part → `compact` (below); `file`, `subtask`, `agent` parts are counted
//!   as unrepresented;
//! * assistant message → one `assistant` per LLM step (parts between `step-start`s; a message
//!   without step parts is one step): `text` parts → text, `tool` parts → calls (`callID`, `tool`,
//!   `state.input`) and after the assistant one `result` each — `completed` → `state.output`,
//!   `error` → `state.error` (`is_error`), `pending`/`running` → `[Tool execution was
//!   interrupted]` (`is_error`), as `toModelMessages` sends them; `reasoning` is unrepresented.
//!   Usage from the step's `step-finish.tokens` (else the message's `tokens`): OpenCode's `input`
//!   excludes the cache, so prompt = `input + cache.read + cache.write`, cached = `cache.read`,
//!   cache write = `cache.write`, completion = `output + reasoning`. A message with an `error`
//!   and no content was never answered and is skipped;
//! * compaction: `SessionCompaction.create` writes a user message holding one `compaction` part
//!   (`auto`), then the summarisation call an assistant message with `summary: true` whose
//!   `parentID` is that user message. Together they become one `compact` whose summary is the
//!   summary message's text; nothing before is kept (v1.2.10), or the tail from
//!   `tail_start_id` on where a later OpenCode recorded one. The summarisation call is not a turn
//!   of the conversation (its request is the old history plus OpenCode's summary prompt) and is
//!   counted in the report;
//! * prune: `SessionCompaction.prune` sets `state.time.compacted` on old completed tool parts,
//!   after which OpenCode sends `[Old tool result content cleared]` instead of the output. Each
//!   prune (one timestamp) becomes a `clear` of those results, placed before the first step that
//!   started after it; the clear marker (journal-v1 §5) stands in for OpenCode's placeholder
//!   text, a few tokens apart.
//!
//! The system prompt (`agent.prompt` or the provider's, plus `system` fields) and the tool schemas
//! are not stored: both are reported missing and the replay estimates the prefix.

use std::collections::{BTreeMap, HashMap};
use std::path::Path;
use std::sync::Arc;

use serde_json::{Map, Value};

use super::content::Calls;
use super::{s, u, Builder, Format, ImportError, ImportReport, Imported};
use crate::journal::{AssistantRec, Body, ClearRec, ClearRequest, CompactRec, ResultRec, SessionRec, Usage, UserRec};

/// The text OpenCode sends for a tool call that never finished (`message-v2.ts`).
const INTERRUPTED: &str = "[Tool execution was interrupted]";

/// One session of a store, for listings and for choosing what to open.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct StoreSession {
    pub id: String,
    pub parent: Option<String>,
    pub title: String,
}

/// Whether SQLite bytes (the head of a file) hold OpenCode's tables `session`, `message`, `part`.
pub fn is_store(bytes: &[u8]) -> bool {
    if !bytes.starts_with(b"SQLite format 3\0") {
        return false;
    }
    let tables = super::detect::sqlite_tables(bytes);
    ["session", "message", "part"].iter().all(|t| tables.iter().any(|x| x == t))
}

/// Opens a store read-only without writing beside it ([`crate::journal::sqlite`]).
fn open(path: &Path) -> Result<crate::journal::sqlite::ReadOnly, ImportError> {
    crate::journal::sqlite::open_read_only(path)
        .map_err(|err| ImportError::Io { path: path.display().to_string(), err })
}

fn sql_err(path: &Path, e: rusqlite::Error) -> ImportError {
    ImportError::Io { path: path.display().to_string(), err: std::io::Error::other(e) }
}

/// The sessions of a store, oldest first.
pub fn sessions(path: &Path) -> Result<Vec<StoreSession>, ImportError> {
    let (c, _tmp) = open(path)?;
    list(&c).map_err(|e| sql_err(path, e))
}

fn list(c: &rusqlite::Connection) -> rusqlite::Result<Vec<StoreSession>> {
    let mut st = c.prepare("SELECT id, parent_id, title FROM session ORDER BY time_created, id")?;
    let rows = st.query_map([], |r| {
        Ok(StoreSession {
            id: r.get(0)?,
            parent: r.get::<_, Option<String>>(1)?,
            title: r.get::<_, Option<String>>(2)?.unwrap_or_default(),
        })
    })?;
    rows.collect()
}

/// The harness name of a store: `kilo` for `kilo.db`, else `opencode`.
fn harness_of(path: &Path) -> &'static str {
    match path.file_name().and_then(|n| n.to_str()) {
        Some(n) if n.starts_with("kilo") => "kilo",
        _ => "opencode",
    }
}

/// Imports session `part` of the store at `path` (the only main session when `part` is `None`).
pub fn read(path: &Path, part: Option<&str>) -> Result<Imported, ImportError> {
    let (c, _tmp) = open(path)?;
    let all = list(&c).map_err(|e| sql_err(path, e))?;
    let known = || all.iter().map(|x| x.id.as_str()).collect::<Vec<_>>().join(", ");
    let session = match part {
        Some(p) => all.iter().find(|x| x.id == p).ok_or_else(|| ImportError::NoSuchPart {
            path: path.display().to_string(),
            name: p.to_string(),
            known: known(),
        })?,
        None => {
            let mains: Vec<&StoreSession> = all.iter().filter(|x| x.parent.is_none()).collect();
            match mains.as_slice() {
                [one] => *one,
                _ => {
                    return Err(ImportError::StoreAmbiguous {
                        path: path.display().to_string(),
                        n: mains.len(),
                        known: mains.iter().map(|x| x.id.as_str()).collect::<Vec<_>>().join(", "),
                    })
                }
            }
        }
    };
    let messages = rows(&c, "SELECT id, data FROM message WHERE session_id = ?1 ORDER BY id", &session.id)
        .map_err(|e| sql_err(path, e))?;
    let parts = rows(&c, "SELECT message_id, data FROM part WHERE session_id = ?1 ORDER BY id", &session.id)
        .map_err(|e| sql_err(path, e))?;
    let mut report = ImportReport::new(Format::OpenCode, path);
    report.lines = messages.len() + parts.len();
    let mut by_msg: HashMap<String, Vec<Map<String, Value>>> = HashMap::new();
    for (mid, data) in parts {
        match serde_json::from_str::<Value>(&data) {
            Ok(Value::Object(o)) => by_msg.entry(mid).or_default().push(o),
            _ => report.skip("part whose data is not a JSON object"),
        }
    }
    let mut msgs: Vec<(String, Map<String, Value>)> = Vec::new();
    for (id, data) in messages {
        match serde_json::from_str::<Value>(&data) {
            Ok(Value::Object(o)) => msgs.push((id, o)),
            _ => report.skip("message whose data is not a JSON object"),
        }
    }
    for child in all.iter().filter(|x| x.parent.as_deref() == Some(session.id.as_str())) {
        report.children.push(super::Child {
            spec: format!("{}#{}", path.display(), child.id),
            role: "subagent".into(),
            lines: 0,
        });
    }
    Ok(build(path, &session.id, harness_of(path), &msgs, &by_msg, report))
}

fn rows(c: &rusqlite::Connection, q: &str, session: &str) -> rusqlite::Result<Vec<(String, String)>> {
    let mut st = c.prepare(q)?;
    let it = st.query_map([session], |r| Ok((r.get::<_, String>(0)?, r.get::<_, String>(1)?)))?;
    it.collect()
}

/// Milliseconds since the epoch as RFC 3339.
fn ts_ms(ms: Option<i64>) -> Option<String> {
    chrono::DateTime::from_timestamp_millis(ms?).map(|d| d.to_rfc3339_opts(chrono::SecondsFormat::Millis, true))
}

fn created(m: &Map<String, Value>) -> Option<i64> {
    m.get("time").and_then(|t| t.get("created")).and_then(Value::as_i64)
}

fn model_of(m: &Map<String, Value>) -> Option<String> {
    s(m, "modelID")
        .or_else(|| m.get("model").and_then(|x| x.get("modelID")).and_then(Value::as_str))
        .map(str::to_string)
}

/// Builds the journal of one session from its messages (ordered) and their parts (ordered).
fn build(
    path: &Path,
    id: &str,
    harness: &str,
    msgs: &[(String, Map<String, Value>)],
    parts: &HashMap<String, Vec<Map<String, Value>>>,
    mut report: ImportReport,
) -> Imported {
    let empty = Vec::new();
    let parts_of = |mid: &str| parts.get(mid).unwrap_or(&empty);
    let first_model = msgs.iter().find(|(_, m)| s(m, "role") == Some("assistant")).and_then(|(_, m)| model_of(m));
    let first_model = first_model.or_else(|| msgs.iter().find_map(|(_, m)| model_of(m)));
    // Summaries by the user message that asked for them.
    let summaries: HashMap<&str, &str> = msgs
        .iter()
        .filter(|(_, m)| m.get("summary").and_then(Value::as_bool) == Some(true))
        .filter_map(|(mid, m)| Some((s(m, "parentID")?, mid.as_str())))
        .collect();
    // Prunes: timestamp → the calls it cleared.
    let mut prunes: BTreeMap<i64, Vec<String>> = BTreeMap::new();
    for ps in parts.values() {
        for p in ps.iter().filter(|p| s(p, "type") == Some("tool")) {
            let st = p.get("state");
            let at = st.and_then(|x| x.get("time")).and_then(|t| t.get("compacted")).and_then(Value::as_i64);
            if let (Some(at), Some(call)) = (at, s(p, "callID")) {
                prunes.entry(at).or_default().push(call.to_string());
            }
        }
    }
    let mut b = Builder::new();
    let t0 = ts_ms(msgs.first().and_then(|(_, m)| created(m)));
    b.push(
        t0.as_deref(),
        1,
        0,
        Body::Session(SessionRec {
            id: id.to_string(),
            model: first_model.clone(),
            harness: Some(harness.to_string()),
            encoding: None,
            ctx: None,
        }),
    );
    report.missing = vec!["system prompt".into(), "tool schemas".into()];
    let mut r = Reader {
        b,
        report,
        calls: Calls::default(),
        model: first_model,
        results: Vec::new(),
        prunes,
        revs: HashMap::new(),
    };
    for (mid, m) in msgs {
        let next = r.b.next_rev();
        match s(m, "role").unwrap_or("") {
            "user" => r.user(mid, m, parts_of(mid), &summaries, msgs, parts),
            "assistant" if m.get("summary").and_then(Value::as_bool) == Some(true) => {
                r.report.skip("summarisation call (read as its compaction)")
            }
            "assistant" => r.assistant(mid, m, parts_of(mid)),
            other => r.report.skip(format!("message role {other:?}")),
        }
        if r.b.next_rev() > next {
            r.revs.insert(mid.clone(), next);
        }
    }
    let Reader { b, mut report, .. } = r;
    report.ts_clamped = b.clamped;
    Imported { journal: b.finish(path), report, files: Vec::new() }
}

struct Reader {
    b: Builder,
    report: ImportReport,
    calls: Calls,
    model: Option<String>,
    /// (call id, rev) of the results in the conversation now (a compaction drops those before
    /// its first kept record).
    results: Vec<(String, u64)>,
    /// Prunes not yet written (timestamp → calls).
    prunes: BTreeMap<i64, Vec<String>>,
    /// Message id → rev of its first record.
    revs: HashMap<String, u64>,
}

impl Reader {
    fn user(
        &mut self,
        mid: &str,
        m: &Map<String, Value>,
        parts: &[Map<String, Value>],
        summaries: &HashMap<&str, &str>,
        msgs: &[(String, Map<String, Value>)],
        all: &HashMap<String, Vec<Map<String, Value>>>,
    ) {
        let ts = ts_ms(created(m));
        let mut texts = Vec::new();
        let mut compaction: Option<&Map<String, Value>> = None;
        for p in parts {
            match s(p, "type").unwrap_or("") {
                "text" if p.get("ignored").and_then(Value::as_bool) != Some(true) => {
                    texts.push(s(p, "text").unwrap_or("").to_string())
                }
                "text" => self.report.skip("ignored text part"),
                "compaction" => compaction = Some(p),
                other => self.report.lose(format!("user {other} part")),
            }
        }
        if let Some(c) = compaction {
            let summary_msg = summaries.get(mid).and_then(|sid| msgs.iter().find(|(i, _)| i == sid));
            let summary: Vec<String> = summary_msg
                .and_then(|(sid, _)| all.get(sid))
                .into_iter()
                .flatten()
                .filter(|p| s(p, "type") == Some("text"))
                .filter_map(|p| s(p, "text").map(str::to_string))
                .collect();
            if summary_msg.is_none() {
                self.report.note("a compaction request without its summary message (an interrupted compaction)");
            }
            let kept = s(c, "tail_start_id").and_then(|t| self.revs.get(t).copied());
            let tokens_before = summary_msg.and_then(|(_, sm)| sm.get("tokens")).and_then(Value::as_object);
            let rec = CompactRec {
                trigger: Some(
                    if c.get("auto").and_then(Value::as_bool) == Some(true) { "auto" } else { "manual" }.into(),
                ),
                instruction: None,
                summary: Arc::from(summary.join("\n\n")),
                first_kept: Some(kept.unwrap_or(self.b.next_rev())),
                kept: None,
                mode: None,
                fallback: None,
                tokens_before: tokens_before.map(|t| prompt_of(t) as f64),
                tokens_after: None,
                usage: None,
            };
            let first_kept = rec.first_kept.unwrap_or(0);
            self.b.push(ts.as_deref(), 1, 0, Body::Compact(rec));
            self.results.retain(|(_, rev)| *rev >= first_kept);
            return;
        }
        if texts.is_empty() {
            self.report.skip("user message without text");
            return;
        }
        let uid = self.b.unique_id(mid);
        self.b.push(
            ts.as_deref(),
            1,
            0,
            Body::User(UserRec { id: uid, text: Arc::from(texts.join("\n\n")), attachments: Vec::new() }),
        );
    }

    fn assistant(&mut self, mid: &str, m: &Map<String, Value>, parts: &[Map<String, Value>]) {
        // Steps: parts between `step-start`s.
        let mut steps: Vec<Vec<&Map<String, Value>>> = vec![Vec::new()];
        for p in parts {
            if s(p, "type") == Some("step-start") && steps.last().is_some_and(|l| !l.is_empty()) {
                steps.push(Vec::new());
            }
            steps.last_mut().expect("one").push(p);
        }
        let multi = steps.len() > 1;
        let ts = ts_ms(created(m));
        let this = model_of(m);
        let model = super::lines::model_change(&mut self.model, this);
        let mut model = model;
        for (k, step) in steps.iter().enumerate() {
            let mut texts = Vec::new();
            let mut calls = Vec::new();
            let mut results = Vec::new();
            let mut usage = None;
            for p in step {
                match s(p, "type").unwrap_or("") {
                    "text" if p.get("ignored").and_then(Value::as_bool) != Some(true) => {
                        texts.push(s(p, "text").unwrap_or("").to_string())
                    }
                    "tool" => {
                        let (id, name) = (s(p, "callID").unwrap_or(""), s(p, "tool").unwrap_or("?"));
                        let st = p.get("state").and_then(Value::as_object);
                        let args = st.and_then(|x| x.get("input")).cloned().unwrap_or(Value::Null);
                        if let Some(c) =
                            self.calls.add(&mut self.b, id, name, args, &mut self.report, "duplicate callID")
                        {
                            calls.push(c);
                            results.push((id.to_string(), name.to_string(), result_of(st)));
                        }
                    }
                    "step-finish" => usage = p.get("tokens").and_then(Value::as_object).and_then(usage_of),
                    "reasoning" => self.report.lose("reasoning part"),
                    "step-start" | "text" => {}
                    other => self.report.lose(format!("assistant {other} part")),
                }
            }
            if texts.is_empty() && calls.is_empty() {
                if m.get("error").is_some() {
                    self.report.skip("assistant message with an error and no content");
                } else {
                    self.report.skip("assistant step without content");
                }
                continue;
            }
            if usage.is_none() && !multi {
                usage = m.get("tokens").and_then(Value::as_object).and_then(usage_of);
            }
            self.flush_prunes(created(m));
            let base = if k == 0 { mid.to_string() } else { format!("{mid}#{k}") };
            let aid = self.b.unique_id(&base);
            let rec = AssistantRec {
                id: aid,
                text: Arc::from(texts.join("\n\n")),
                calls,
                model: model.take(),
                usage,
                prompt_sha256: None,
            };
            self.b.push(ts.as_deref(), 1, 0, Body::Assistant(rec));
            let done = ts_ms(m.get("time").and_then(|t| t.get("completed")).and_then(Value::as_i64)).or(ts.clone());
            for (call, tool, (text, err)) in results {
                let rev =
                    self.b.push(done.as_deref(), 1, 0, Body::Result(ResultRec::whole(call.clone(), tool, text, err)));
                self.results.push((call, rev));
            }
        }
    }

    /// Writes a `clear` for every prune that happened before `now` (ms), of its results still in
    /// the conversation.
    fn flush_prunes(&mut self, now: Option<i64>) {
        let Some(now) = now else { return };
        let due: Vec<i64> = self.prunes.range(..now).map(|(t, _)| *t).collect();
        for t in due {
            let calls = self.prunes.remove(&t).unwrap_or_default();
            let cleared: Vec<String> = calls.into_iter().filter(|c| self.results.iter().any(|(r, _)| r == c)).collect();
            if cleared.is_empty() {
                continue;
            }
            let ts = ts_ms(Some(t));
            let rec = ClearRec {
                request: ClearRequest { call_ids: Some(cleared.clone()), ..Default::default() },
                cleared,
                message: None,
            };
            self.b.push(ts.as_deref(), 1, 0, Body::Clear(rec));
            self.report.note(
                "OpenCode's prune of old tool outputs is a clear of those results (clear marker for its placeholder)",
            );
        }
    }
}

/// What OpenCode sends for a tool part's state: (text, is_error).
fn result_of(st: Option<&Map<String, Value>>) -> (String, Option<bool>) {
    match st.and_then(|x| s(x, "status")) {
        Some("completed") => (st.and_then(|x| s(x, "output")).unwrap_or("").to_string(), None),
        Some("error") => (st.and_then(|x| s(x, "error")).unwrap_or("").to_string(), Some(true)),
        _ => (INTERRUPTED.to_string(), Some(true)),
    }
}

/// OpenCode's `input` excludes the cache: prompt = input + cache read + cache write.
fn prompt_of(t: &Map<String, Value>) -> u64 {
    let cache = t.get("cache").and_then(Value::as_object);
    let c = |k: &str| cache.and_then(|c| u(c, k)).unwrap_or(0);
    u(t, "input").unwrap_or(0) + c("read") + c("write")
}

/// The usage of `tokens`; `None` when every count is 0 (an aborted call records zeros).
fn usage_of(t: &Map<String, Value>) -> Option<Usage> {
    let cache = t.get("cache").and_then(Value::as_object);
    let c = |k: &str| cache.and_then(|c| u(c, k)).unwrap_or(0);
    let out = u(t, "output").unwrap_or(0) + u(t, "reasoning").unwrap_or(0);
    if prompt_of(t) == 0 && out == 0 {
        return None;
    }
    Some(Usage {
        prompt_tokens: Some(prompt_of(t)),
        cached_tokens: Some(c("read")),
        completion_tokens: Some(out),
        cache_write_tokens: Some(c("write")),
        ..Default::default()
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::path::PathBuf;

    /// A synthetic store (hand-written from the v1.2.10 schema, not a recording): one session
    /// with a multi-step assistant message, an error, an interrupted call, a prune and an auto
    /// compaction with its summary message; and a child session.
    fn store(dir: &Path) -> PathBuf {
        let p = dir.join("opencode.db");
        let c = rusqlite::Connection::open(&p).unwrap();
        c.execute_batch(
            "CREATE TABLE session (id TEXT PRIMARY KEY, project_id TEXT, parent_id TEXT, title TEXT, version TEXT, time_created INTEGER);
             CREATE TABLE message (id TEXT PRIMARY KEY, session_id TEXT, time_created INTEGER, time_updated INTEGER, data TEXT);
             CREATE TABLE part (id TEXT PRIMARY KEY, message_id TEXT, session_id TEXT, time_created INTEGER, time_updated INTEGER, data TEXT);
             INSERT INTO session VALUES ('ses_b', 'p', NULL, 'main', '1.2.10', 1), ('ses_c', 'p', 'ses_b', 'child', '1.2.10', 2);",
        )
        .unwrap();
        let msgs = [
            (
                "msg_01",
                r#"{"role":"user","time":{"created":1000},"agent":"build","model":{"providerID":"anthropic","modelID":"claude-sonnet-4-5"}}"#,
            ),
            (
                "msg_02",
                r#"{"role":"assistant","time":{"created":2000,"completed":3000},"parentID":"msg_01","modelID":"claude-sonnet-4-5","providerID":"anthropic","tokens":{"input":7,"output":3,"reasoning":0,"cache":{"read":90,"write":0}}}"#,
            ),
            ("msg_03", r#"{"role":"user","time":{"created":6000},"model":{"modelID":"claude-sonnet-4-5"}}"#),
            (
                "msg_04",
                r#"{"role":"assistant","time":{"created":7000},"parentID":"msg_03","modelID":"claude-sonnet-4-5","tokens":{"input":9,"output":1,"cache":{"read":0,"write":0}}}"#,
            ),
            (
                "msg_04e",
                r#"{"role":"assistant","time":{"created":7500},"parentID":"msg_03","modelID":"claude-sonnet-4-5","error":{"name":"APIError"},"tokens":{"input":0,"output":0,"cache":{"read":0,"write":0}}}"#,
            ),
            ("msg_05", r#"{"role":"user","time":{"created":8000}}"#),
            (
                "msg_06",
                r#"{"role":"assistant","time":{"created":9000},"parentID":"msg_05","summary":true,"mode":"compaction","modelID":"claude-sonnet-4-5","tokens":{"input":500,"output":40,"cache":{"read":0,"write":0}}}"#,
            ),
            ("msg_07", r#"{"role":"user","time":{"created":10000}}"#),
            (
                "msg_08",
                r#"{"role":"assistant","time":{"created":11000},"parentID":"msg_07","modelID":"claude-opus-4-5","tokens":{"input":20,"output":2,"cache":{"read":0,"write":30}}}"#,
            ),
        ];
        for (id, d) in msgs {
            c.execute("INSERT INTO message VALUES (?1, 'ses_b', 0, 0, ?2)", [id, d]).unwrap();
        }
        let parts = [
            ("prt_01", "msg_01", r#"{"type":"text","text":"list files"}"#),
            ("prt_02", "msg_01", r#"{"type":"text","text":"hidden","ignored":true}"#),
            ("prt_03", "msg_02", r#"{"type":"step-start"}"#),
            ("prt_04", "msg_02", r#"{"type":"reasoning","text":"hm"}"#),
            (
                "prt_05",
                "msg_02",
                r#"{"type":"tool","callID":"c1","tool":"bash","state":{"status":"completed","input":{"command":"ls"},"output":"a\nb","time":{"start":1,"end":2,"compacted":5000}}}"#,
            ),
            (
                "prt_06",
                "msg_02",
                r#"{"type":"step-finish","reason":"tool-calls","tokens":{"input":5,"output":1,"reasoning":0,"cache":{"read":40,"write":0}}}"#,
            ),
            ("prt_07", "msg_02", r#"{"type":"step-start"}"#),
            ("prt_08", "msg_02", r#"{"type":"text","text":"two files"}"#),
            (
                "prt_09",
                "msg_02",
                r#"{"type":"tool","callID":"c2","tool":"read","state":{"status":"running","input":{"path":"a"}}}"#,
            ),
            (
                "prt_10",
                "msg_02",
                r#"{"type":"step-finish","reason":"stop","tokens":{"input":7,"output":3,"reasoning":0,"cache":{"read":90,"write":0}}}"#,
            ),
            ("prt_11", "msg_03", r#"{"type":"text","text":"again"}"#),
            ("prt_11b", "msg_04", r#"{"type":"text","text":"again done"}"#),
            ("prt_12", "msg_05", r#"{"type":"compaction","auto":true}"#),
            ("prt_13", "msg_06", r#"{"type":"text","text":"Goal\nlist files"}"#),
            ("prt_14", "msg_07", r#"{"type":"text","text":"Continue if you have next steps","synthetic":true}"#),
            ("prt_15", "msg_08", r#"{"type":"text","text":"done"}"#),
        ];
        for (id, m, d) in parts {
            c.execute("INSERT INTO part VALUES (?1, ?2, 'ses_b', 0, 0, ?3)", [id, m, d]).unwrap();
        }
        p
    }

    #[test]
    fn steps_tool_states_prune_and_compaction() {
        let d = tempfile::tempdir().unwrap();
        let p = store(d.path());
        let im = read(&p, None).unwrap();
        let recs = &im.journal.records;
        let kinds: Vec<&str> = recs.iter().map(|r| r.body.kind()).collect();
        assert_eq!(
            kinds,
            vec![
                "session",
                "user",
                "assistant",
                "result",
                "assistant",
                "result",
                "user",
                "clear",
                "assistant",
                "compact",
                "user",
                "assistant"
            ]
        );
        let Body::Session(sr) = &recs[0].body else { unreachable!() };
        assert_eq!((sr.harness.as_deref(), sr.model.as_deref()), (Some("opencode"), Some("claude-sonnet-4-5")));
        let Body::User(u1) = &recs[1].body else { unreachable!() };
        assert_eq!(&*u1.text, "list files");
        // One assistant per step, each with its own step-finish usage (input excludes the cache).
        let Body::Assistant(a1) = &recs[2].body else { unreachable!() };
        assert_eq!(a1.usage.as_ref().unwrap().prompt_tokens, Some(45));
        let Body::Assistant(a2) = &recs[4].body else { unreachable!() };
        assert_eq!((a2.usage.as_ref().unwrap().prompt_tokens, &*a2.text), (Some(97), "two files"));
        let Body::Result(r2) = &recs[5].body else { unreachable!() };
        assert_eq!((&*r2.text, r2.is_error), (INTERRUPTED, Some(true)));
        // The prune at 5000 ms clears c1 before the first step that started after it (msg_04).
        let Body::Clear(cl) = &recs[7].body else { unreachable!() };
        assert_eq!(cl.cleared, vec!["c1"]);
        // The compaction request and its summary message are one compact keeping nothing.
        let Body::Compact(c) = &recs[9].body else { unreachable!() };
        assert_eq!((&*c.summary, c.trigger.as_deref(), c.first_kept), ("Goal\nlist files", Some("auto"), Some(10)));
        assert_eq!(c.tokens_before, Some(500.0));
        let Body::Assistant(a3) = &recs[11].body else { unreachable!() };
        assert_eq!(a3.model.as_deref(), Some("claude-opus-4-5"));
        assert_eq!(a3.usage.as_ref().unwrap().cache_write_tokens, Some(30));
        assert!(im.report.skipped.contains_key("assistant message with an error and no content"));
        assert!(im.report.skipped.contains_key("summarisation call (read as its compaction)"));
        assert_eq!(im.report.children.len(), 1);
        assert_eq!(im.report.missing, vec!["system prompt", "tool schemas"]);
        // Naming the child, and a wrong name.
        assert!(read(&p, Some("ses_c")).is_ok());
        assert!(matches!(read(&p, Some("nope")), Err(ImportError::NoSuchPart { .. })));
        // Nothing was written beside the store.
        let names: Vec<String> = std::fs::read_dir(d.path())
            .unwrap()
            .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
            .collect();
        assert_eq!(names, vec!["opencode.db"]);
    }
}
