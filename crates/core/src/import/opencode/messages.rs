//! OpenCode's messages and parts → journal-v1 records (the rules of the module doc of
//! [`super`]): one session's messages in order, each message's parts in order, as the JSON
//! objects OpenCode writes.

use std::collections::{BTreeMap, HashMap};
use std::path::Path;
use std::sync::Arc;

use serde_json::{Map, Value};

use crate::import::content::Calls;
use crate::import::{s, u, Builder, ImportReport, Imported};
use crate::journal::{AssistantRec, Body, CompactRec, ElideRec, ResultRec, SessionRec, Usage, UserRec};

/// The text OpenCode sends for a tool call that never finished (`message-v2.ts`).
pub(super) const INTERRUPTED: &str = "[Tool execution was interrupted]";

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
pub(super) fn build(
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
        let model = crate::import::lines::model_change(&mut self.model, this);
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

    /// Writes an `elide` (by `auto`: the harness's decision, not a model's `ctx clear`) for every
    /// prune that happened before `now` (ms), of its results still in the conversation.
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
            let rec = ElideRec {
                by: Some("auto".into()),
                calls: cleared,
                estimate_before: None,
                estimate_after: None,
                budget: None,
                target: None,
                keep_results: None,
            };
            self.b.push(ts.as_deref(), 1, 0, Body::Elide(rec));
            self.report.note(
                "OpenCode's prune of old tool outputs is an automatic elision of those results (elision marker for its placeholder)",
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
