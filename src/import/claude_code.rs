//! Claude Code transcripts (`~/.claude/projects/<project>/<session>.jsonl`) → journal-v1 records.
//!
//! Mapping (see `docs/importing.md`):
//! * the conversation is the `uuid`/`parentUuid` chain from the newest `user`/`assistant`/`system`
//!   line; a `compact_boundary` root continues through `logicalParentUuid` (or, when that uuid is
//!   absent from the file, through the newest earlier conversation line). Off-chain lines that are
//!   artefacts of streaming — another content-block line of a response already on the chain, or a
//!   `tool_result` answering a call on the chain — are taken in; every other off-chain line
//!   belongs to another branch (a rewind) and is counted, not merged;
//! * a file whose lines carry no resolvable `parentUuid` at all (hand-written fixtures) is read in
//!   file order;
//! * all `assistant` lines of one API response (same `message.id` and `requestId`) become one
//!   `assistant` record at the place of the first; its usage is that of the line with the largest
//!   total (ccusage's rule): prompt = input + cache_creation + cache_read, cached = cache_read;
//! * `tool_use` → calls, `tool_result` → `result` records; text and image blocks of user lines →
//!   `user` records with attachments;
//! * `system/compact_boundary` + the `isCompactSummary` user line → one `compact` record
//!   (`preservedSegment` → `kept`);
//! * `isSidechain` lines inside a main file are side sessions (`file.jsonl#<agentId>`), and
//!   `<session>/subagents/agent-*.jsonl` files are listed as children;
//! * every other record type is skipped and counted. Claude Code records no system prompt and no
//!   tool schemas: both are reported as missing.

use std::collections::{BTreeMap, HashMap, HashSet};
use std::path::Path;
use std::sync::Arc;

use serde_json::{Map, Value};

use super::{base64_len, f, parse_lines, s, u, Builder, Child, Format, ImportError, ImportReport, Imported, Line};
use crate::journal::{AssistantRec, Body, Call, CompactRec, ResultRec, SessionRec, Usage, UserRec};

/// Token usage of one Claude Code `assistant` line.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct CcUsage {
    pub input: u64,
    pub output: u64,
    pub cache_creation: u64,
    pub cache_read: u64,
    /// Of `cache_creation`, the tokens written with the one-hour lifetime.
    pub cache_creation_1h: u64,
}

impl CcUsage {
    /// Reads `message.usage`; `None` when absent or not an object.
    pub fn of(line: &Map<String, Value>) -> Option<CcUsage> {
        let m = line.get("message")?.as_object()?;
        let us = m.get("usage")?.as_object()?;
        Some(CcUsage {
            input: u(us, "input_tokens").unwrap_or(0),
            output: u(us, "output_tokens").unwrap_or(0),
            cache_creation: u(us, "cache_creation_input_tokens").unwrap_or(0),
            cache_read: u(us, "cache_read_input_tokens").unwrap_or(0),
            cache_creation_1h: us
                .get("cache_creation")
                .and_then(Value::as_object)
                .and_then(|c| u(c, "ephemeral_1h_input_tokens"))
                .unwrap_or(0),
        })
    }
    pub fn total(&self) -> u64 {
        self.input + self.output + self.cache_creation + self.cache_read
    }
    pub fn prompt(&self) -> u64 {
        self.input + self.cache_creation + self.cache_read
    }
}

/// The `message` object of a line.
fn message(o: &Map<String, Value>) -> Option<&Map<String, Value>> {
    o.get("message").and_then(Value::as_object)
}

/// `message.id` of an assistant line.
pub fn message_id(o: &Map<String, Value>) -> Option<&str> {
    message(o).and_then(|m| s(m, "id"))
}

/// `message.model` of an assistant line.
pub fn model_of(o: &Map<String, Value>) -> Option<&str> {
    message(o).and_then(|m| s(m, "model"))
}

fn content(o: &Map<String, Value>) -> Option<&Value> {
    message(o).and_then(|m| m.get("content"))
}

fn blocks(o: &Map<String, Value>) -> &[Value] {
    match content(o) {
        Some(Value::Array(a)) => a,
        _ => &[],
    }
}

fn ty(o: &Map<String, Value>) -> Option<&str> {
    s(o, "type")
}

fn is_sidechain(o: &Map<String, Value>) -> bool {
    o.get("isSidechain").and_then(Value::as_bool).unwrap_or(false)
}

fn is_conv(o: &Map<String, Value>) -> bool {
    matches!(ty(o), Some("user" | "assistant"))
}

fn is_synthetic(o: &Map<String, Value>) -> bool {
    model_of(o) == Some("<synthetic>")
}

fn is_boundary(o: &Map<String, Value>) -> bool {
    ty(o) == Some("system") && s(o, "subtype") == Some("compact_boundary")
}

/// The dedup key of a response: (`message.id`, `requestId`).
pub fn response_key(o: &Map<String, Value>) -> Option<(String, Option<String>)> {
    message_id(o).map(|id| (id.to_string(), s(o, "requestId").map(str::to_string)))
}

/// A user line that holds only `tool_result` blocks.
fn only_results(o: &Map<String, Value>) -> bool {
    let b = blocks(o);
    !b.is_empty() && b.iter().all(|x| x.get("type").and_then(Value::as_str) == Some("tool_result"))
}

/// Reads one Claude Code transcript. `part` names an inline side session (`agentId`).
pub fn read(path: &Path, bytes: &[u8], part: Option<&str>) -> Result<Imported, ImportError> {
    let mut report = ImportReport::new(Format::ClaudeCode, path);
    report.missing = vec!["system prompt".into(), "tool schemas".into()];
    let all = parse_lines(path, bytes, &mut report)?;
    let mut lines: Vec<Line> = Vec::with_capacity(all.len());
    for l in all {
        match l.obj.get("type") {
            Some(Value::String(_)) => lines.push(l),
            Some(Value::Null) | None => report.skip("line without a type"),
            Some(_) => report.skip("line with a non-string type"),
        }
    }

    // Main conversation vs inline sidechains.
    let any_main = lines.iter().any(|l| is_conv(&l.obj) && !is_sidechain(&l.obj));
    let group_of = |o: &Map<String, Value>| -> Option<String> {
        if any_main && is_sidechain(o) {
            Some(s(o, "agentId").unwrap_or("sidechain").to_string())
        } else {
            None
        }
    };
    let mut groups: BTreeMap<String, usize> = BTreeMap::new();
    for l in &lines {
        if let Some(g) = group_of(&l.obj) {
            *groups.entry(g).or_default() += 1;
        }
    }
    if let Some(p) = part {
        if !groups.contains_key(p) {
            return Err(ImportError::NoSuchPart {
                path: path.display().to_string(),
                name: p.to_string(),
                known: if groups.is_empty() {
                    "none".into()
                } else {
                    groups.keys().cloned().collect::<Vec<_>>().join(", ")
                },
            });
        }
    }
    let selected: Vec<Line> = lines.into_iter().filter(|l| group_of(&l.obj).as_deref() == part).collect();
    if part.is_none() {
        for (g, n) in &groups {
            report.children.push(Child {
                spec: format!("{}#{g}", path.display()),
                role: "sidechain".into(),
                lines: *n,
            });
        }
        list_subagents(path, &mut report);
    }
    let (active, dropped_lines) = linearize(&selected, &mut report);
    account_dropped(&selected, &active, &dropped_lines, &mut report);
    let mut b = Builder::new();
    let mut files = Vec::new();
    emit(path, &selected, &active, part, &mut b, &mut report, &mut files);
    report.ts_clamped = b.clamped;
    Ok(Imported { journal: b.finish(path), report, files })
}

/// `<dir>/<stem>/subagents/*.jsonl` beside `<dir>/<stem>.jsonl`.
fn list_subagents(path: &Path, report: &mut ImportReport) {
    let (Some(dir), Some(stem)) = (path.parent(), path.file_stem()) else { return };
    let sub = dir.join(stem).join("subagents");
    let Ok(rd) = std::fs::read_dir(&sub) else { return };
    let mut files: Vec<_> =
        rd.flatten().map(|e| e.path()).filter(|p| p.extension().is_some_and(|e| e == "jsonl")).collect();
    files.sort();
    for p in files {
        let name = p.file_name().map(|n| n.to_string_lossy().into_owned()).unwrap_or_default();
        let role = if name.starts_with("agent-acompact") { "compaction call" } else { "subagent" };
        let lines = std::fs::read(&p).map(|b| b.split(|c| *c == b'\n').filter(|l| !l.is_empty()).count()).unwrap_or(0);
        report.children.push(Child { spec: p.display().to_string(), role: role.into(), lines });
    }
}

/// Chooses the lines of the current branch (indices into `lines`, file order) and the
/// conversation lines left on other branches.
/// Finds the newest conversation line (user or assistant, with a uuid) before a line that is not
/// on the chain yet. Each conversation line points at the next older one; lines found on the
/// chain are skipped and the pointers walked over are shortened to the answer (path
/// compression), so every boundary of a long file costs amortised constant time instead of a
/// scan back to the start.
struct OlderConv {
    /// `before[i]`: the newest conversation line before line `i`.
    before: Vec<Option<usize>>,
}

impl OlderConv {
    fn new(lines: &[Line]) -> Self {
        let mut before = Vec::with_capacity(lines.len());
        let mut last = None;
        for l in lines {
            before.push(last);
            if is_conv(&l.obj) && s(&l.obj, "uuid").is_some() {
                last = Some(before.len() - 1);
            }
        }
        OlderConv { before }
    }

    fn newest_free(&mut self, i: usize, chain: &HashSet<usize>) -> Option<usize> {
        let mut found = self.before[i];
        let mut walked = Vec::new();
        while let Some(j) = found.filter(|j| chain.contains(j)) {
            walked.push(j);
            found = self.before[j];
        }
        for j in walked {
            self.before[j] = found;
        }
        found
    }
}

fn linearize(lines: &[Line], report: &mut ImportReport) -> (Vec<usize>, Vec<usize>) {
    let mut by_uuid: HashMap<&str, usize> = HashMap::new();
    for (i, l) in lines.iter().enumerate() {
        if let Some(id) = s(&l.obj, "uuid") {
            by_uuid.insert(id, i);
        }
    }
    let parent = |i: usize| s(&lines[i].obj, "parentUuid").and_then(|p| by_uuid.get(p).copied());
    let linked = (0..lines.len()).any(|i| parent(i).is_some());
    let all: Vec<usize> = (0..lines.len()).collect();
    if !linked {
        if lines.iter().filter(|l| s(&l.obj, "uuid").is_some()).count() > 1 {
            report.note("no line has a parentUuid that resolves in the file: read in file order");
        }
        // In file order a repeated uuid is a copy: the first one is kept.
        let mut seen = HashSet::new();
        let mut keep = Vec::new();
        let mut dropped = Vec::new();
        for i in all {
            match s(&lines[i].obj, "uuid") {
                Some(id) if !seen.insert(id) => dropped.push(i),
                _ => keep.push(i),
            }
        }
        return (keep, dropped);
    }
    let conv_like = |i: usize| {
        matches!(ty(&lines[i].obj), Some("user" | "assistant" | "system")) && s(&lines[i].obj, "uuid").is_some()
    };
    let Some(leaf) = (0..lines.len()).rev().find(|&i| conv_like(i)) else { return (all, Vec::new()) };
    let mut chain: HashSet<usize> = HashSet::new();
    let mut older = OlderConv::new(lines);
    let mut cur = Some(leaf);
    while let Some(i) = cur {
        if !chain.insert(i) {
            report.note("parentUuid cycle broken");
            break;
        }
        cur = parent(i);
        if cur.is_none() && is_boundary(&lines[i].obj) {
            let logical = s(&lines[i].obj, "logicalParentUuid");
            cur = logical.and_then(|p| by_uuid.get(p).copied());
            if cur.is_none() {
                if logical.is_some() {
                    report.note("a compact_boundary's logicalParentUuid is absent from the file: continued from the newest earlier conversation line");
                }
                cur = older.newest_free(i, &chain);
            }
        }
    }
    // Streaming artefacts: other content-block lines of responses on the chain, then tool
    // results answering calls made on the chain.
    let chain_msgs: HashSet<&str> = chain
        .iter()
        .filter(|&&i| ty(&lines[i].obj) == Some("assistant"))
        .filter_map(|&i| message_id(&lines[i].obj))
        .collect();
    let mut active = chain.clone();
    for (i, l) in lines.iter().enumerate() {
        if !active.contains(&i)
            && ty(&l.obj) == Some("assistant")
            && message_id(&l.obj).is_some_and(|m| chain_msgs.contains(m))
        {
            active.insert(i);
        }
    }
    let calls: HashSet<&str> = active
        .iter()
        .filter(|&&i| ty(&lines[i].obj) == Some("assistant"))
        .flat_map(|&i| blocks(&lines[i].obj).iter())
        .filter(|b| b.get("type").and_then(Value::as_str) == Some("tool_use"))
        .filter_map(|b| b.get("id").and_then(Value::as_str))
        .collect();
    for (i, l) in lines.iter().enumerate() {
        if !active.contains(&i)
            && ty(&l.obj) == Some("user")
            && only_results(&l.obj)
            && blocks(&l.obj)
                .iter()
                .all(|b| b.get("tool_use_id").and_then(Value::as_str).is_some_and(|id| calls.contains(id)))
        {
            active.insert(i);
        }
    }
    let mut act: Vec<usize> = active.into_iter().collect();
    act.sort_unstable();
    let set: HashSet<usize> = act.iter().copied().collect();
    let dropped: Vec<usize> = (0..lines.len())
        .filter(|i| !set.contains(i) && (is_conv(&lines[*i].obj) || is_boundary(&lines[*i].obj)))
        .collect();
    // A branch is a dropped line whose parent is not itself dropped.
    let dset: HashSet<usize> = dropped.iter().copied().collect();
    report.branches = dropped.iter().filter(|&&i| parent(i).is_none_or(|p| !dset.contains(&p))).count();
    (act, dropped)
}

/// Counts what the dropped branches held that the active branch does not.
fn account_dropped(lines: &[Line], active: &[usize], dropped: &[usize], report: &mut ImportReport) {
    let mut keys = HashSet::new();
    let mut calls = HashSet::new();
    let mut results = HashSet::new();
    for &i in active {
        collect(&lines[i].obj, &mut keys, &mut calls, &mut results);
    }
    let (mut dk, mut dc, mut dr) = (HashSet::new(), HashSet::new(), HashSet::new());
    for &i in dropped {
        collect(&lines[i].obj, &mut dk, &mut dc, &mut dr);
        if is_boundary(&lines[i].obj) {
            report.dropped.compactions += 1;
        }
    }
    report.dropped.turns += dk.difference(&keys).count();
    report.dropped.calls += dc.difference(&calls).count();
    report.dropped.results += dr.difference(&results).count();
}

fn collect(
    o: &Map<String, Value>,
    keys: &mut HashSet<(String, Option<String>)>,
    calls: &mut HashSet<String>,
    results: &mut HashSet<String>,
) {
    match ty(o) {
        Some("assistant") if !is_synthetic(o) => {
            if let Some(k) = response_key(o) {
                keys.insert(k);
            }
            for b in blocks(o) {
                if b.get("type").and_then(Value::as_str) == Some("tool_use") {
                    if let Some(id) = b.get("id").and_then(Value::as_str) {
                        calls.insert(id.to_string());
                    }
                }
            }
        }
        Some("user") => {
            for b in blocks(o) {
                if b.get("type").and_then(Value::as_str) == Some("tool_result") {
                    if let Some(id) = b.get("tool_use_id").and_then(Value::as_str) {
                        results.insert(id.to_string());
                    }
                }
            }
        }
        _ => {}
    }
}

/// Text of a user message or tool result content (string or blocks).
fn content_text(v: Option<&Value>, report: &mut ImportReport) -> String {
    match v {
        None | Some(Value::Null) => String::new(),
        Some(Value::String(t)) => t.clone(),
        Some(Value::Array(a)) => {
            let mut parts = Vec::new();
            for b in a {
                match b.get("type").and_then(Value::as_str) {
                    Some("text") => parts.push(b.get("text").and_then(Value::as_str).unwrap_or("").to_string()),
                    Some("image") => {
                        let (media, n) = image_info(b);
                        parts.push(format!("[image: {media}, {n} bytes]"));
                        report.lose("image inside a tool result (kept as a placeholder line)");
                    }
                    Some(t) => {
                        parts.push(format!("[{t}]"));
                        report.lose(format!("tool-result block {t}"));
                    }
                    None => {}
                }
            }
            parts.join("\n")
        }
        Some(other) => other.to_string(),
    }
}

fn image_info(b: &Value) -> (String, u64) {
    let src = b.get("source");
    let media = src.and_then(|s| s.get("media_type")).and_then(Value::as_str).unwrap_or("image").to_string();
    let n = src.and_then(|s| s.get("data")).and_then(Value::as_str).map_or(0, base64_len);
    (media, n)
}

fn emit(
    path: &Path,
    lines: &[Line],
    active: &[usize],
    part: Option<&str>,
    b: &mut Builder,
    report: &mut ImportReport,
    files: &mut Vec<(String, crate::journal::Text)>,
) {
    let ts = |i: usize| s(&lines[i].obj, "timestamp");
    // Responses: key → lines, in file order.
    let mut groups: HashMap<(String, Option<String>), Vec<usize>> = HashMap::new();
    for &i in active {
        let o = &lines[i].obj;
        if ty(o) == Some("assistant") && !is_synthetic(o) {
            if let Some(k) = response_key(o) {
                groups.entry(k).or_default().push(i);
            }
        }
    }
    // Compact summaries consumed by their boundary.
    let mut summary_of: HashMap<usize, usize> = HashMap::new();
    let mut consumed: HashSet<usize> = HashSet::new();
    // A boundary's summary is the first compact-summary line after it (taken by the earliest
    // boundary before it): one pass from the end notes the next summary after every position,
    // since a scan forward per boundary is quadratic.
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

    let first = active.first().copied();
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
    let model = active
        .iter()
        .filter(|&&i| ty(&lines[i].obj) == Some("assistant") && !is_synthetic(&lines[i].obj))
        .find_map(|&i| model_of(&lines[i].obj))
        .map(str::to_string);
    let (l0, o0) = first.map_or((0, 0), |i| (lines[i].no, lines[i].offset));
    b.push(
        first.and_then(ts),
        l0,
        o0,
        Body::Session(SessionRec {
            id,
            model: model.clone(),
            harness: Some("claude-code".into()),
            encoding: None,
            ctx: None,
        }),
    );

    let mut call_tool: HashMap<String, String> = HashMap::new();
    let mut answered: HashSet<String> = HashSet::new();
    // Block ids made from each line (for preservedSegment).
    let mut made: HashMap<usize, Vec<String>> = HashMap::new();
    let by_uuid: HashMap<&str, usize> =
        lines.iter().enumerate().filter_map(|(i, l)| s(&l.obj, "uuid").map(|u| (u, i))).collect();

    for &i in active {
        let line = &lines[i];
        let o = &line.obj;
        let t = ty(o).unwrap_or("");
        match t {
            "assistant" => {
                if is_synthetic(o) {
                    report.skip("assistant <synthetic> (not an API call)");
                    continue;
                }
                let members: Vec<usize> = match response_key(o) {
                    Some(k) => {
                        let g = &groups[&k];
                        if g[0] != i {
                            continue; // merged into the first line of its response
                        }
                        g.clone()
                    }
                    None => vec![i],
                };
                let mut texts = Vec::new();
                let mut calls = Vec::new();
                let mut best: Option<CcUsage> = None;
                for &m in &members {
                    let mo = &lines[m].obj;
                    if let Some(us) = CcUsage::of(mo) {
                        if best.is_none_or(|b| us.total() > b.total()) {
                            best = Some(us);
                        }
                    }
                    match content(mo) {
                        Some(Value::String(t)) => texts.push(t.clone()),
                        Some(Value::Array(a)) => {
                            for blk in a {
                                match blk.get("type").and_then(Value::as_str) {
                                    Some("text") => {
                                        texts.push(blk.get("text").and_then(Value::as_str).unwrap_or("").to_string())
                                    }
                                    Some("tool_use") => {
                                        let cid = blk.get("id").and_then(Value::as_str).unwrap_or("").to_string();
                                        let name = blk.get("name").and_then(Value::as_str).unwrap_or("?").to_string();
                                        if cid.is_empty() || call_tool.contains_key(&cid) {
                                            report.skip("duplicate or id-less tool_use");
                                            continue;
                                        }
                                        b.reserve(&cid);
                                        call_tool.insert(cid.clone(), name.clone());
                                        let args = blk.get("input").cloned().unwrap_or(Value::Null);
                                        calls.push(Call { id: cid, tool: name, args: Arc::new(args) });
                                    }
                                    Some("thinking" | "redacted_thinking") => report.lose("thinking block"),
                                    Some(other) => report.lose(format!("assistant block {other}")),
                                    None => {}
                                }
                            }
                        }
                        _ => {}
                    }
                }
                let base = message_id(o).or_else(|| s(o, "uuid")).unwrap_or("assistant");
                let aid = b.unique_id(base);
                let this_model = model_of(o).map(str::to_string);
                let usage = best.map(|us| Usage {
                    prompt_tokens: Some(us.prompt()),
                    cached_tokens: Some(us.cache_read),
                    completion_tokens: Some(us.output),
                    cache_write_tokens: Some(us.cache_creation),
                    cache_write_1h_tokens: (us.cache_creation_1h > 0).then_some(us.cache_creation_1h),
                });
                let rec = AssistantRec {
                    id: aid.clone(),
                    text: Arc::from(texts.join("\n\n")),
                    calls,
                    model: if this_model != model { this_model } else { None },
                    usage,
                    prompt_sha256: None,
                };
                made.entry(i).or_default().push(aid);
                b.push(ts(i), line.no, line.offset, Body::Assistant(rec));
            }
            "user" => {
                if consumed.contains(&i) {
                    continue;
                }
                if o.get("isCompactSummary").and_then(Value::as_bool) == Some(true) {
                    let text = content_text(content(o), report);
                    let rev = b.next_rev();
                    b.push(ts(i), line.no, line.offset, Body::Compact(compact(None, text, rev, None, None, None)));
                    report.note(
                        "an isCompactSummary line without a compact_boundary became a compact record with no trigger",
                    );
                    continue;
                }
                let uid_base = s(o, "uuid").map(str::to_string).unwrap_or_else(|| format!("user-l{}", line.no));
                let mut texts = Vec::new();
                let mut atts = Vec::new();
                let mut results = Vec::new();
                match content(o) {
                    Some(Value::String(t)) => texts.push(t.clone()),
                    Some(Value::Array(a)) => {
                        for blk in a {
                            match blk.get("type").and_then(Value::as_str) {
                                Some("text") => {
                                    texts.push(blk.get("text").and_then(Value::as_str).unwrap_or("").to_string())
                                }
                                Some("tool_result") => results.push(blk),
                                Some(k @ ("image" | "document")) => atts.push((k, blk)),
                                Some(other) => report.lose(format!("user block {other}")),
                                None => {}
                            }
                        }
                    }
                    _ => {}
                }
                for r in results {
                    let call = r.get("tool_use_id").and_then(Value::as_str).unwrap_or("").to_string();
                    let Some(tool) = call_tool.get(&call).cloned() else {
                        report.skip("tool_result without its call on this branch");
                        report.dropped.results += 1;
                        continue;
                    };
                    if !answered.insert(call.clone()) {
                        report.skip("second tool_result for one call");
                        continue;
                    }
                    let text = content_text(r.get("content"), report);
                    let is_error = r.get("is_error").and_then(Value::as_bool).filter(|e| *e);
                    made.entry(i).or_default().push(call.clone());
                    b.push(ts(i), line.no, line.offset, Body::Result(ResultRec::whole(call, tool, text, is_error)));
                }
                if texts.is_empty() && atts.is_empty() {
                    continue;
                }
                let uid = b.unique_id(&uid_base);
                let images = atts
                    .into_iter()
                    .map(|(kind, blk)| {
                        let src = blk.get("source");
                        super::Image {
                            kind: if kind == "image" { "image" } else { "document" },
                            media: src
                                .and_then(|s| s.get("media_type"))
                                .and_then(Value::as_str)
                                .unwrap_or(kind)
                                .to_string(),
                            data: src
                                .filter(|s| s.get("type").and_then(Value::as_str) != Some("url"))
                                .and_then(|s| s.get("data"))
                                .and_then(Value::as_str)
                                .map(Arc::from),
                        }
                    })
                    .collect();
                let attachments = super::attach(b, &uid, images, &mut texts, files, report);
                made.entry(i).or_default().push(uid.clone());
                made.entry(i).or_default().extend(attachments.iter().map(|a| a.id.clone()));
                b.push(
                    ts(i),
                    line.no,
                    line.offset,
                    Body::User(UserRec { id: uid, text: Arc::from(texts.join("\n\n")), attachments }),
                );
            }
            "system" => {
                let sub = s(o, "subtype").unwrap_or("?");
                if sub != "compact_boundary" {
                    report.skip(format!("system/{sub}"));
                    continue;
                }
                let meta = o.get("compactMetadata").and_then(Value::as_object);
                let summary = summary_of.get(&i).map(|&j| content_text(content(&lines[j].obj), report));
                if summary.is_none() {
                    report.note("a compact_boundary without its isCompactSummary line: empty summary");
                }
                let kept = meta.and_then(|m| m.get("preservedSegment")).and_then(Value::as_object).map(|seg| {
                    let head = s(seg, "headUuid");
                    let mut ids = Vec::new();
                    let mut cur = s(seg, "tailUuid").and_then(|t| by_uuid.get(t).copied());
                    let mut guard = 0;
                    while let Some(j) = cur {
                        guard += 1;
                        if guard > lines.len() {
                            break;
                        }
                        if let Some(m) = made.get(&j) {
                            ids.splice(0..0, m.iter().cloned());
                        }
                        if head.is_some() && s(&lines[j].obj, "uuid") == head {
                            break;
                        }
                        cur = s(&lines[j].obj, "parentUuid").and_then(|p| by_uuid.get(p).copied());
                    }
                    ids
                });
                let rev = b.next_rev();
                let rec = compact(
                    meta.and_then(|m| s(m, "trigger")).map(str::to_string),
                    summary.unwrap_or_default(),
                    rev,
                    kept.filter(|k| !k.is_empty()),
                    meta.and_then(|m| u(m, "preTokens")),
                    meta.and_then(|m| u(m, "postTokens")),
                );
                b.push(ts(i), line.no, line.offset, Body::Compact(rec));
            }
            other => report.skip(other.to_string()),
        }
    }
    // Lines outside the active set that are not conversation: count them by type too.
    let act: HashSet<usize> = active.iter().copied().collect();
    for (i, l) in lines.iter().enumerate() {
        if !act.contains(&i) && !is_conv(&l.obj) && !is_boundary(&l.obj) {
            let t = ty(&l.obj).unwrap_or("?");
            let key =
                if t == "system" { format!("system/{}", s(&l.obj, "subtype").unwrap_or("?")) } else { t.to_string() };
            report.skip(key);
        }
    }
}

fn compact(
    trigger: Option<String>,
    summary: String,
    rev: u64,
    kept: Option<Vec<String>>,
    before: Option<u64>,
    after: Option<u64>,
) -> CompactRec {
    CompactRec {
        trigger,
        instruction: None,
        summary: Arc::from(summary),
        first_kept: if kept.is_some() { None } else { Some(rev) },
        kept,
        mode: None,
        fallback: None,
        tokens_before: f(before),
        tokens_after: f(after),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::journal::Body;

    fn import(s: &str) -> Imported {
        read(Path::new("t.jsonl"), s.as_bytes(), None).unwrap()
    }

    const STREAMED: &str = r#"{"type":"user","uuid":"u1","parentUuid":null,"sessionId":"S","timestamp":"2026-01-01T00:00:00Z","message":{"role":"user","content":"hi"}}
{"type":"assistant","uuid":"a1","parentUuid":"u1","sessionId":"S","requestId":"r1","timestamp":"2026-01-01T00:00:01Z","message":{"id":"m1","model":"claude-x","role":"assistant","content":[{"type":"text","text":"let me look"}],"usage":{"input_tokens":3,"cache_creation_input_tokens":10,"cache_read_input_tokens":100,"output_tokens":1}}}
{"type":"assistant","uuid":"a2","parentUuid":"a1","sessionId":"S","requestId":"r1","timestamp":"2026-01-01T00:00:02Z","message":{"id":"m1","model":"claude-x","role":"assistant","content":[{"type":"tool_use","id":"t1","name":"Read","input":{"path":"a"}}],"usage":{"input_tokens":3,"cache_creation_input_tokens":10,"cache_read_input_tokens":100,"output_tokens":1}}}
{"type":"assistant","uuid":"a3","parentUuid":"a2","sessionId":"S","requestId":"r1","timestamp":"2026-01-01T00:00:03Z","message":{"id":"m1","model":"claude-x","role":"assistant","content":[{"type":"tool_use","id":"t2","name":"Bash","input":{"command":"ls"}}],"usage":{"input_tokens":3,"cache_creation_input_tokens":10,"cache_read_input_tokens":100,"output_tokens":50}}}
{"type":"user","uuid":"r-t1","parentUuid":"a2","sessionId":"S","timestamp":"2026-01-01T00:00:04Z","message":{"role":"user","content":[{"type":"tool_result","tool_use_id":"t1","content":"file a"}]}}
{"type":"user","uuid":"r-t2","parentUuid":"a3","sessionId":"S","timestamp":"2026-01-01T00:00:04Z","message":{"role":"user","content":[{"type":"tool_result","tool_use_id":"t2","content":[{"type":"text","text":"a b"}],"is_error":true}]}}
{"type":"progress","uuid":"p1","parentUuid":"r-t2","sessionId":"S","timestamp":"2026-01-01T00:00:05Z","data":{"type":"hook_progress"}}
{"type":"assistant","uuid":"a4","parentUuid":"p1","sessionId":"S","requestId":"r2","timestamp":"2026-01-01T00:00:06Z","message":{"id":"m2","model":"claude-x","role":"assistant","content":[{"type":"text","text":"done"}],"usage":{"input_tokens":1,"cache_creation_input_tokens":0,"cache_read_input_tokens":200,"output_tokens":2}}}
"#;

    #[test]
    fn merges_streamed_lines_and_keeps_sibling_results() {
        let im = import(STREAMED);
        let j = &im.journal;
        assert_eq!(j.turns.len(), 2);
        let Body::Assistant(a) = &j.records[j.turns[0]].body else { panic!() };
        assert_eq!(a.calls.len(), 2);
        assert_eq!(&*a.text, "let me look");
        assert_eq!(
            a.usage,
            Some(Usage {
                prompt_tokens: Some(113),
                cached_tokens: Some(100),
                completion_tokens: Some(50),
                cache_write_tokens: Some(10),
                ..Default::default()
            })
        );
        assert_eq!(j.results.len(), 2, "the sibling tool_result (off the leaf chain) is kept");
        assert_eq!(j.result("t2").unwrap().is_error, Some(true));
        assert_eq!(im.report.branches, 0);
        assert_eq!(im.report.skipped.get("progress"), Some(&1));
        assert_eq!(im.report.missing, vec!["system prompt", "tool schemas"]);
    }

    #[test]
    fn rewinds_are_reported_not_merged() {
        let s = r#"{"type":"user","uuid":"u1","parentUuid":null,"timestamp":"2026-01-01T00:00:00Z","message":{"role":"user","content":"first"}}
{"type":"assistant","uuid":"a1","parentUuid":"u1","requestId":"r1","timestamp":"2026-01-01T00:00:01Z","message":{"id":"m1","model":"m","content":[{"type":"text","text":"old answer"}],"usage":{"input_tokens":1,"output_tokens":1}}}
{"type":"user","uuid":"u2","parentUuid":null,"timestamp":"2026-01-01T00:00:02Z","message":{"role":"user","content":"again"}}
{"type":"assistant","uuid":"a2","parentUuid":"u2","requestId":"r2","timestamp":"2026-01-01T00:00:03Z","message":{"id":"m2","model":"m","content":[{"type":"text","text":"new answer"}],"usage":{"input_tokens":1,"output_tokens":1}}}
"#;
        let im = import(s);
        assert_eq!(im.journal.turns.len(), 1);
        assert_eq!(im.report.branches, 1);
        assert_eq!(im.report.dropped.turns, 1);
    }

    #[test]
    fn compaction_becomes_one_compact_record() {
        let s = r#"{"type":"user","uuid":"u1","parentUuid":null,"timestamp":"2026-01-01T00:00:00Z","message":{"role":"user","content":"first"}}
{"type":"assistant","uuid":"a1","parentUuid":"u1","requestId":"r1","timestamp":"2026-01-01T00:00:01Z","message":{"id":"m1","model":"m","content":[{"type":"text","text":"ok"}]}}
{"type":"system","subtype":"compact_boundary","uuid":"c1","parentUuid":null,"logicalParentUuid":"a1","timestamp":"2026-01-01T00:00:02Z","compactMetadata":{"trigger":"auto","preTokens":170}}
{"type":"user","uuid":"s1","parentUuid":"c1","isCompactSummary":true,"timestamp":"2026-01-01T00:00:03Z","message":{"role":"user","content":"This session is being continued"}}
{"type":"user","uuid":"u2","parentUuid":"s1","timestamp":"2026-01-01T00:00:04Z","message":{"role":"user","content":"next"}}
"#;
        let im = import(s);
        let kinds: Vec<&str> = im.journal.records.iter().map(|r| r.kind()).collect();
        assert_eq!(kinds, vec!["session", "user", "assistant", "compact", "user"]);
        let Body::Compact(c) = &im.journal.records[3].body else { panic!() };
        assert_eq!(&*c.summary, "This session is being continued");
        assert_eq!(c.trigger.as_deref(), Some("auto"));
        assert_eq!(c.first_kept, Some(4));
        assert_eq!(c.tokens_before, Some(170.0));
        let p = crate::projection::state_at_rev(&im.journal, u64::MAX);
        assert_eq!(p.summaries.len(), 1);
        assert_eq!(p.conv.len(), 1);
    }

    #[test]
    fn preserved_segment_becomes_kept() {
        let s = r#"{"type":"user","uuid":"u1","parentUuid":null,"timestamp":"2026-01-01T00:00:00Z","message":{"role":"user","content":"old"}}
{"type":"assistant","uuid":"a1","parentUuid":"u1","requestId":"r1","timestamp":"2026-01-01T00:00:01Z","message":{"id":"m1","model":"m","content":[{"type":"text","text":"old answer"}]}}
{"type":"user","uuid":"u2","parentUuid":"a1","timestamp":"2026-01-01T00:00:02Z","message":{"role":"user","content":"recent"}}
{"type":"assistant","uuid":"a2","parentUuid":"u2","requestId":"r2","timestamp":"2026-01-01T00:00:03Z","message":{"id":"m2","model":"m","content":[{"type":"text","text":"recent answer"}]}}
{"type":"system","subtype":"compact_boundary","uuid":"c1","parentUuid":null,"logicalParentUuid":"a2","timestamp":"2026-01-01T00:00:04Z","compactMetadata":{"trigger":"manual","preTokens":50,"postTokens":20,"preservedSegment":{"headUuid":"u2","anchorUuid":"s1","tailUuid":"a2"}}}
{"type":"user","uuid":"s1","parentUuid":"c1","isCompactSummary":true,"timestamp":"2026-01-01T00:00:05Z","message":{"role":"user","content":"summary"}}
{"type":"user","uuid":"u3","parentUuid":"s1","timestamp":"2026-01-01T00:00:06Z","message":{"role":"user","content":"next"}}
"#;
        let im = import(s);
        let Body::Compact(c) = &im.journal.records[5].body else { panic!("{:?}", im.journal.records[5].body.kind()) };
        assert_eq!(c.kept.as_deref(), Some(&["u2".to_string(), "m2".to_string()][..]));
        assert_eq!(c.first_kept, None);
        assert_eq!(c.tokens_after, Some(20.0));
        let p = crate::projection::state_at_rev(&im.journal, u64::MAX);
        let ids: Vec<&str> = p.conv.iter().filter_map(|b| b.block.id()).collect();
        assert_eq!(ids, vec!["u2", "m2", "u3"]);
        assert_eq!(p.summaries.len(), 1);
    }

    #[test]
    fn odd_lines_and_unknown_types_never_fail() {
        let s = "\"str\"\n42\n[1]\n{\"type\": null}\n{\"type\":\"weird-new-thing\",\"uuid\":\"w\"}\n{\"type\": \"user\", \"uuid\": \"u\", \"message\": {\"role\": \"user\", \"content\": \"x\"}}\n";
        let im = import(s);
        assert_eq!(im.journal.records.len(), 2);
        assert_eq!(im.report.skipped["non-object JSON line"], 3);
        assert_eq!(im.report.skipped["line without a type"], 1);
        assert_eq!(im.report.skipped["weird-new-thing"], 1);
    }
}
