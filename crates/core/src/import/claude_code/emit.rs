//! Records from the chosen Claude Code lines: one handler per line type (`assistant`, `user`,
//! `system`) on an [`Emitter`] that holds the state they share.

use std::collections::{HashMap, HashSet};
use std::path::Path;
use std::sync::Arc;

use serde_json::{Map, Value};

use super::{
    compact, content, is_boundary, is_conv, is_sidechain, is_synthetic, message_id, model_of, response_key, ty, CcUsage,
};
use crate::import::content::{image_placeholder, walk, Calls, Piece, CLAUDE};
use crate::import::ImageRule;
use crate::import::{s, u, Builder, ImportReport, Line};
use crate::journal::{AssistantRec, Body, ResultRec, SessionRec, Text, Usage, UserRec};

/// The state shared by the line handlers of one import.
struct Emitter<'a> {
    lines: &'a [Line],
    b: &'a mut Builder,
    report: &'a mut ImportReport,
    files: &'a mut Vec<(String, Text)>,
    /// The lines of each response (`message.id` + `requestId`), in file order.
    groups: HashMap<(String, Option<String>), Vec<usize>>,
    /// A boundary's compact-summary line, and the summary lines so consumed.
    summary_of: HashMap<usize, usize>,
    consumed: HashSet<usize>,
    /// The session model (an answer by another model carries its own).
    model: Option<String>,
    calls: Calls,
    /// Block ids made from each line (for `preservedSegment`).
    made: HashMap<usize, Vec<String>>,
    by_uuid: HashMap<&'a str, usize>,
}

/// Pushes the records of the `active` lines (after a `session` record) into `b`.
pub(super) fn emit(
    path: &Path,
    lines: &[Line],
    active: &[usize],
    part: Option<&str>,
    b: &mut Builder,
    report: &mut ImportReport,
    files: &mut Vec<(String, Text)>,
) {
    let mut groups: HashMap<(String, Option<String>), Vec<usize>> = HashMap::new();
    for &i in active {
        let o = &lines[i].obj;
        if ty(o) == Some("assistant") && !is_synthetic(o) {
            if let Some(k) = response_key(o) {
                groups.entry(k).or_default().push(i);
            }
        }
    }
    let (summary_of, consumed) = summaries(lines, active);
    let model = active
        .iter()
        .filter(|&&i| ty(&lines[i].obj) == Some("assistant") && !is_synthetic(&lines[i].obj))
        .find_map(|&i| model_of(&lines[i].obj))
        .map(str::to_string);
    let by_uuid = lines.iter().enumerate().filter_map(|(i, l)| s(&l.obj, "uuid").map(|u| (u, i))).collect();
    let mut e = Emitter {
        lines,
        b,
        report,
        files,
        groups,
        summary_of,
        consumed,
        model,
        calls: Calls::default(),
        made: HashMap::new(),
        by_uuid,
    };
    e.session(path, active, part);
    for &i in active {
        match ty(&lines[i].obj).unwrap_or("") {
            "assistant" => e.assistant(i),
            "user" => e.user(i),
            "system" => e.system(i),
            other => e.report.skip(other.to_string()),
        }
    }
    // Lines outside the active set that are not conversation: count them by type too.
    let act: HashSet<usize> = active.iter().copied().collect();
    for (i, l) in lines.iter().enumerate() {
        if !act.contains(&i) && !is_conv(&l.obj) && !is_boundary(&l.obj) {
            let t = ty(&l.obj).unwrap_or("?");
            let key =
                if t == "system" { format!("system/{}", s(&l.obj, "subtype").unwrap_or("?")) } else { t.to_string() };
            e.report.skip(key);
        }
    }
}

/// A boundary's summary is the first compact-summary line after it (taken by the earliest
/// boundary before it): one pass from the end notes the next summary after every position, since
/// a scan forward per boundary is quadratic.
fn summaries(lines: &[Line], active: &[usize]) -> (HashMap<usize, usize>, HashSet<usize>) {
    let mut summary_of = HashMap::new();
    let mut consumed = HashSet::new();
    let is_summary = |i: usize| {
        ty(&lines[i].obj) == Some("user") && lines[i].obj.get("isCompactSummary").and_then(Value::as_bool) == Some(true)
    };
    let mut next_summary = vec![None; active.len()];
    let mut after = None;
    for (n, &i) in active.iter().enumerate().rev() {
        next_summary[n] = after;
        if is_summary(i) {
            after = Some(i);
        }
    }
    for (n, &i) in active.iter().enumerate() {
        if let Some(j) = next_summary[n].filter(|_| is_boundary(&lines[i].obj)) {
            if consumed.insert(j) {
                summary_of.insert(i, j);
            }
        }
    }
    (summary_of, consumed)
}

/// Text of a user message or tool result content (string or blocks).
pub(crate) fn content_text(v: Option<&Value>, report: &mut ImportReport) -> String {
    match v {
        None | Some(Value::Null) => String::new(),
        Some(Value::String(t)) => t.clone(),
        Some(a @ Value::Array(_)) => {
            let mut parts = Vec::new();
            for (kind, piece) in walk(Some(a), &CLAUDE) {
                match piece {
                    Piece::Text(t) => parts.push(t.to_string()),
                    Piece::Image(img) if kind == "image" => {
                        parts.push(image_placeholder(&img, Some(ImageRule::Anthropic), report))
                    }
                    _ => {
                        parts.push(format!("[{kind}]"));
                        report.lose(format!("tool-result block {kind}"));
                    }
                }
            }
            parts.join("\n")
        }
        Some(other) => other.to_string(),
    }
}

impl Emitter<'_> {
    fn push(&mut self, i: usize, body: Body) -> u64 {
        let (lines, b) = (self.lines, &mut *self.b);
        let line = &lines[i];
        b.push(s(&line.obj, "timestamp"), line.no, line.offset, body)
    }

    /// The `session` record: the session id (with the side session's name), the first model.
    fn session(&mut self, path: &Path, active: &[usize], part: Option<&str>) {
        let lines = self.lines;
        let session_id =
            active.iter().find_map(|&i| s(&lines[i].obj, "sessionId")).map(str::to_string).unwrap_or_else(|| {
                path.file_stem().map(|s| s.to_string_lossy().into_owned()).unwrap_or_else(|| "claude-code".into())
            });
        let agent = active.iter().find_map(|&i| s(&lines[i].obj, "agentId"));
        let id = match (agent, part) {
            (Some(a), _) if lines.iter().all(|l| !is_conv(&l.obj) || is_sidechain(&l.obj)) => {
                format!("{session_id}/agent-{a}")
            }
            (_, Some(p)) => format!("{session_id}#{p}"),
            _ => session_id,
        };
        let first = active.first().copied();
        let (l0, o0) = first.map_or((0, 0), |i| (lines[i].no, lines[i].offset));
        let ts = first.and_then(|i| s(&lines[i].obj, "timestamp"));
        let body = Body::Session(SessionRec {
            id,
            model: self.model.clone(),
            harness: Some("claude-code".into()),
            encoding: None,
            ctx: None,
        });
        self.b.push(ts, l0, o0, body);
    }

    /// All `assistant` lines of one response become one record at the place of the first.
    fn assistant(&mut self, i: usize) {
        let lines = self.lines;
        let o = &lines[i].obj;
        if is_synthetic(o) {
            self.report.skip("assistant <synthetic> (not an API call)");
            return;
        }
        let members: Vec<usize> = match response_key(o) {
            Some(k) => {
                let g = &self.groups[&k];
                if g[0] != i {
                    return; // merged into the first line of its response
                }
                g.clone()
            }
            None => vec![i],
        };
        let mut texts = Vec::new();
        let mut calls = Vec::new();
        let mut best: Option<CcUsage> = None;
        let mut thinking = 0u64;
        for &m in &members {
            let mo = &lines[m].obj;
            if let Some(us) = CcUsage::of(mo) {
                if best.is_none_or(|b| us.total() > b.total()) {
                    best = Some(us);
                }
            }
            for (kind, piece) in walk(content(mo), &CLAUDE) {
                match piece {
                    Piece::Text(t) => texts.push(t.to_string()),
                    Piece::Call { id, name, args } => {
                        let dup = "duplicate or id-less tool_use";
                        calls.extend(self.calls.add(self.b, id, name, args, self.report, dup));
                    }
                    Piece::Thinking => {
                        thinking += 1;
                        self.report.lose("thinking block")
                    }
                    _ => self.report.lose(format!("assistant block {kind}")),
                }
            }
        }
        let base = message_id(o).or_else(|| s(o, "uuid")).unwrap_or("assistant");
        let aid = self.b.unique_id(base);
        let this_model = model_of(o).map(str::to_string);
        let usage = best.map(|us| Usage {
            prompt_tokens: Some(us.prompt()),
            cached_tokens: Some(us.cache_read),
            completion_tokens: Some(us.output),
            cache_write_tokens: Some(us.cache_creation),
            cache_write_1h_tokens: (us.cache_creation_1h > 0).then_some(us.cache_creation_1h),
            cost_usd: None,
            server_tool_calls: None,
            thinking_blocks: (thinking > 0).then_some(thinking),
            reasoning_tokens: None,
        });
        let rec = AssistantRec {
            id: aid.clone(),
            text: Arc::from(texts.join("\n\n")),
            calls,
            model: if this_model != self.model { this_model } else { None },
            usage,
            prompt_sha256: None,
        };
        self.made.entry(i).or_default().push(aid);
        self.push(i, Body::Assistant(rec));
    }

    /// A user line: its tool results, then its text and images as one `user` record.
    fn user(&mut self, i: usize) {
        let lines = self.lines;
        let o = &lines[i].obj;
        if self.consumed.contains(&i) {
            return;
        }
        if o.get("isCompactSummary").and_then(Value::as_bool) == Some(true) {
            let text = content_text(content(o), self.report);
            let rev = self.b.next_rev();
            self.push(i, Body::Compact(compact(None, text, rev, None, None, None)));
            self.report
                .note("an isCompactSummary line without a compact_boundary became a compact record with no trigger");
            return;
        }
        let mut texts = Vec::new();
        let mut images = Vec::new();
        for (kind, piece) in walk(content(o), &CLAUDE) {
            match piece {
                Piece::Text(t) => texts.push(t.to_string()),
                Piece::Result(r) => self.result(i, r),
                Piece::Image(img) => images.push(img),
                _ => self.report.lose(format!("user block {kind}")),
            }
        }
        if texts.is_empty() && images.is_empty() {
            return;
        }
        let uid_base = s(o, "uuid").map(str::to_string).unwrap_or_else(|| format!("user-l{}", lines[i].no));
        let uid = self.b.unique_id(&uid_base);
        let rule = Some(ImageRule::Anthropic);
        let attachments = crate::import::attach(self.b, &uid, images, rule, &mut texts, self.files, self.report);
        let made = self.made.entry(i).or_default();
        made.push(uid.clone());
        made.extend(attachments.iter().map(|a| a.id.clone()));
        self.push(i, Body::User(UserRec { id: uid, text: Arc::from(texts.join("\n\n")), attachments }));
    }

    /// A `tool_result` block of user line `i`.
    fn result(&mut self, i: usize, r: &Value) {
        let call = r.get("tool_use_id").and_then(Value::as_str).unwrap_or("");
        let orphan = "tool_result without its call on this branch";
        let Some(tool) = self.calls.answer(call, self.report, orphan, "second tool_result for one call") else {
            return;
        };
        let text = content_text(r.get("content"), self.report);
        let is_error = r.get("is_error").and_then(Value::as_bool).filter(|e| *e);
        self.made.entry(i).or_default().push(call.to_string());
        self.push(i, Body::Result(ResultRec::whole(call.to_string(), tool, text, is_error)));
    }

    /// `system/compact_boundary` (with its summary line) → `compact`; other subtypes are skipped.
    fn system(&mut self, i: usize) {
        let lines = self.lines;
        let o = &lines[i].obj;
        let sub = s(o, "subtype").unwrap_or("?");
        if sub != "compact_boundary" {
            self.report.skip(format!("system/{sub}"));
            return;
        }
        let meta = o.get("compactMetadata").and_then(Value::as_object);
        let summary = self.summary_of.get(&i).map(|&j| content_text(content(&lines[j].obj), self.report));
        if summary.is_none() {
            self.report.note("a compact_boundary without its isCompactSummary line: empty summary");
        }
        let kept = meta.and_then(|m| m.get("preservedSegment")).and_then(Value::as_object).map(|seg| self.kept(seg));
        let rev = self.b.next_rev();
        let rec = compact(
            meta.and_then(|m| s(m, "trigger")).map(str::to_string),
            summary.unwrap_or_default(),
            rev,
            kept.filter(|k| !k.is_empty()),
            meta.and_then(|m| u(m, "preTokens")),
            meta.and_then(|m| u(m, "postTokens")),
        );
        self.push(i, Body::Compact(rec));
    }

    /// The block ids of a `preservedSegment`: the chain from `tailUuid` back to `headUuid`.
    fn kept(&self, seg: &Map<String, Value>) -> Vec<String> {
        let lines = self.lines;
        let head = s(seg, "headUuid");
        let mut ids = Vec::new();
        let mut cur = s(seg, "tailUuid").and_then(|t| self.by_uuid.get(t).copied());
        let mut guard = 0;
        while let Some(j) = cur {
            guard += 1;
            if guard > lines.len() {
                break;
            }
            if let Some(m) = self.made.get(&j) {
                ids.splice(0..0, m.iter().cloned());
            }
            if head.is_some() && s(&lines[j].obj, "uuid") == head {
                break;
            }
            cur = s(&lines[j].obj, "parentUuid").and_then(|p| self.by_uuid.get(p).copied());
        }
        ids
    }
}
