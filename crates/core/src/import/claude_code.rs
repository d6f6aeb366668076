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

mod emit;

pub(crate) use emit::content_text;
use emit::emit;

use super::{f, parse_lines, s, u, Builder, Child, Format, ImportError, ImportReport, Imported, Line};
use crate::journal::CompactRec;

/// Token usage of one Claude Code `assistant` line.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
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
    /// All four counts (saturating: the counts come from the transcript).
    pub fn total(&self) -> u64 {
        self.prompt().saturating_add(self.output)
    }
    /// Uncached input, cache writes and cache reads (saturating).
    pub fn prompt(&self) -> u64 {
        self.input.saturating_add(self.cache_creation).saturating_add(self.cache_read)
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
    let group: Vec<Option<String>> = side_groups(&lines);
    let mut groups: BTreeMap<String, usize> = BTreeMap::new();
    for g in group.iter().flatten() {
        *groups.entry(g.clone()).or_default() += 1;
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
    let selected: Vec<Line> =
        lines.into_iter().zip(group).filter(|(_, g)| g.as_deref() == part).map(|(l, _)| l).collect();
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

/// Whether a line belongs to a side session, not to the file's main conversation: it is marked
/// `isSidechain` and the file has a main conversation (`file_has_main`: a user or assistant line
/// not so marked). The one rule of the importer (whose recorded turns, and so `ctxj cache`, leave
/// side sessions out) and of the live engine's own calls (`live::tally`).
pub fn in_side_session(sidechain: bool, file_has_main: bool) -> bool {
    sidechain && file_has_main
}

/// The side session of each line: `None` for the main conversation; for an `isSidechain` line of
/// a file that also has a main conversation, its `agentId`, or — Claude Code 1.0.x wrote no
/// `agentId` — `sidechain-N`, N counting the sidechain roots (one per Task run) in file order.
fn side_groups(lines: &[Line]) -> Vec<Option<String>> {
    let any_main = lines.iter().any(|l| is_conv(&l.obj) && !is_sidechain(&l.obj));
    if !any_main {
        return vec![None; lines.len()];
    }
    let side_uuid: HashMap<&str, usize> = lines
        .iter()
        .enumerate()
        .filter(|(_, l)| is_sidechain(&l.obj))
        .filter_map(|(i, l)| s(&l.obj, "uuid").map(|u| (u, i)))
        .collect();
    let mut out: Vec<Option<String>> = vec![None; lines.len()];
    let mut runs = 0usize;
    for (i, l) in lines.iter().enumerate() {
        if !in_side_session(is_sidechain(&l.obj), any_main) {
            continue;
        }
        if let Some(a) = s(&l.obj, "agentId") {
            out[i] = Some(a.to_string());
            continue;
        }
        // A parent earlier in the file already has its run; a line without one is a root.
        let parent = s(&l.obj, "parentUuid").and_then(|p| side_uuid.get(p)).filter(|&&p| p < i);
        out[i] = match parent.and_then(|&p| out[p].clone()) {
            Some(g) => Some(g),
            None if s(&l.obj, "uuid").is_none() && runs > 0 => Some(format!("sidechain-{runs}")),
            None => {
                runs += 1;
                Some(format!("sidechain-{runs}"))
            }
        };
    }
    out
}

/// Whether `p` is the file of a compaction's summarizer call (`subagents/agent-acompact-*.jsonl`),
/// not a subagent's.
pub fn is_compaction_call(p: &Path) -> bool {
    p.file_name().is_some_and(|n| n.to_string_lossy().starts_with("agent-acompact"))
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
        let role = if is_compaction_call(&p) { "compaction call" } else { "subagent" };
        let lines = crate::journal::input::read_regular(&p)
            .map(|b| b.split(|c| *c == b'\n').filter(|l| !l.is_empty()).count())
            .unwrap_or(0);
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
    let mut orphans = 0usize;
    let call_line: HashMap<&str, usize> = lines
        .iter()
        .enumerate()
        .filter(|(_, l)| ty(&l.obj) == Some("assistant"))
        .flat_map(|(i, l)| blocks(&l.obj).iter().map(move |b| (i, b)))
        .filter(|(_, b)| b.get("type").and_then(Value::as_str) == Some("tool_use"))
        .filter_map(|(i, b)| b.get("id").and_then(Value::as_str).map(|id| (id, i)))
        .collect();
    while let Some(i) = cur {
        if !chain.insert(i) {
            report.note("parentUuid cycle broken");
            break;
        }
        cur = parent(i);
        // A conversation line hanging off a `progress` line: progress lines are hook and tool
        // events, never part of a request, and before Claude Code 2.1.83 they forked the chain
        // (anthropics/claude-code#35024: a turn's hook events were flushed after its
        // conversation lines, chained from its first tool call, and the Stop hook's summary line
        // continued from the last of them, leaving the turn's results and responses on a side
        // branch the running process had sent all along). The line continues from the
        // conversation it was written after: a tool result from the line of its call, any
        // other line from the newest earlier conversation line.
        if cur.is_some_and(|p| ty(&lines[p].obj) == Some("progress")) && conv_like(i) {
            let redirect = if only_results(&lines[i].obj) {
                let id = blocks(&lines[i].obj).first().and_then(|b| b.get("tool_use_id")).and_then(Value::as_str);
                id.and_then(|id| call_line.get(id).copied()).filter(|&c| c < i && !chain.contains(&c))
            } else {
                older.newest_free(i, &chain)
            };
            if redirect.is_some() {
                cur = redirect;
            }
        }
        // A tool result whose `parentUuid` names a line the file does not hold: Claude Code hangs
        // it off the `progress` lines of its call, which 2.0.x agent files never persist. It
        // answers the call, so it follows the line that made it. (User lines pointing outside
        // the file — a compaction call's copied reminders — still end the chain.)
        // A response (`assistant` line) pointing outside the file answers the conversation so far:
        // it follows the newest earlier conversation line.
        if cur.is_none() && s(&lines[i].obj, "parentUuid").is_some() {
            if only_results(&lines[i].obj) {
                let id = blocks(&lines[i].obj).first().and_then(|b| b.get("tool_use_id")).and_then(Value::as_str);
                cur = id.and_then(|id| call_line.get(id).copied()).filter(|&c| c < i);
            } else if ty(&lines[i].obj) == Some("assistant") {
                cur = older.newest_free(i, &chain);
            }
            if cur.is_some() {
                orphans += 1;
            }
        }
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
    if orphans > 0 {
        report.note(format!(
            "{orphans} tool result(s) or response(s) point at a parentUuid absent from the file: continued from the call they answer, or the newest earlier line"
        ));
    }
    // Streaming artefacts: other content-block lines of responses on the chain (same
    // `message.id` and `requestId`: a line without `requestId` repeating an API response's
    // `message.id` is a copy of it — Claude Code 2.0.x wrote the whole conversation again,
    // without request ids, when it resumed one — and the copy and the original are two branches),
    // then tool results answering calls made on the chain.
    let chain_msgs: HashSet<(String, Option<String>)> = chain
        .iter()
        .filter(|&&i| ty(&lines[i].obj) == Some("assistant"))
        .filter_map(|&i| response_key(&lines[i].obj))
        .collect();
    let mut active = chain.clone();
    for (i, l) in lines.iter().enumerate() {
        if !active.contains(&i)
            && ty(&l.obj) == Some("assistant")
            && response_key(&l.obj).is_some_and(|k| chain_msgs.contains(&k))
        {
            active.insert(i);
        }
    }
    // (A result answers a call made before it: a copy of the conversation repeats the call ids.)
    let mut calls: HashMap<&str, usize> = HashMap::new();
    for &i in active.iter().filter(|&&i| ty(&lines[i].obj) == Some("assistant")) {
        for b in blocks(&lines[i].obj).iter().filter(|b| b.get("type").and_then(Value::as_str) == Some("tool_use")) {
            if let Some(id) = b.get("id").and_then(Value::as_str) {
                let at = calls.entry(id).or_insert(i);
                *at = (*at).min(i);
            }
        }
    }
    for (i, l) in lines.iter().enumerate() {
        if !active.contains(&i)
            && ty(&l.obj) == Some("user")
            && only_results(&l.obj)
            && blocks(&l.obj).iter().all(|b| {
                b.get("tool_use_id").and_then(Value::as_str).and_then(|id| calls.get(id)).is_some_and(|&c| c < i)
            })
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
        usage: None,
        tokens_after: f(after),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::journal::{Body, Usage};

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

    /// A Claude Code 2.0.x agent file (`agent-<id>.jsonl`, every line `isSidechain`): each
    /// tool result points at a `progress` line that was never written to the file. The chain
    /// used to stop at the first such pointer, keeping only the last call (1 of 3 billed). A
    /// response can point at a line never written there too.
    #[test]
    fn regression_agent_file_with_unpersisted_parents_keeps_every_call() {
        let s = r#"{"type":"user","uuid":"u1","parentUuid":null,"isSidechain":true,"agentId":"a7","timestamp":"2026-01-01T00:00:00Z","message":{"role":"user","content":"explore"}}
{"type":"assistant","uuid":"a1","parentUuid":"u1","isSidechain":true,"agentId":"a7","requestId":"r1","timestamp":"2026-01-01T00:00:01Z","message":{"id":"m1","model":"claude-x","content":[{"type":"tool_use","id":"t1","name":"Read","input":{"path":"a"}}],"usage":{"input_tokens":5,"cache_creation_input_tokens":1000,"cache_read_input_tokens":0,"output_tokens":10}}}
{"type":"user","uuid":"r1","parentUuid":"lost-progress-1","isSidechain":true,"agentId":"a7","timestamp":"2026-01-01T00:00:02Z","message":{"role":"user","content":[{"type":"tool_result","tool_use_id":"t1","content":"file a"}]}}
{"type":"assistant","uuid":"a2","parentUuid":"r1","isSidechain":true,"agentId":"a7","requestId":"r2","timestamp":"2026-01-01T00:00:03Z","message":{"id":"m2","model":"claude-x","content":[{"type":"tool_use","id":"t2","name":"Read","input":{"path":"b"}}],"usage":{"input_tokens":5,"cache_creation_input_tokens":50,"cache_read_input_tokens":1000,"output_tokens":10}}}
{"type":"user","uuid":"r2","parentUuid":"lost-progress-2","isSidechain":true,"agentId":"a7","timestamp":"2026-01-01T00:00:04Z","message":{"role":"user","content":[{"type":"tool_result","tool_use_id":"t2","content":"file b"}]}}
{"type":"assistant","uuid":"a3","parentUuid":"lost-result-2","isSidechain":true,"agentId":"a7","requestId":"r3","timestamp":"2026-01-01T00:00:05Z","message":{"id":"m3","model":"claude-x","content":[{"type":"text","text":"done"}],"usage":{"input_tokens":5,"cache_creation_input_tokens":40,"cache_read_input_tokens":1050,"output_tokens":3}}}
"#;
        let im = import(s);
        assert_eq!(im.journal.turns.len(), 3, "every call of the agent file is on the chain");
        assert_eq!(im.journal.results.len(), 2);
        assert_eq!(im.report.branches, 0);
        assert!(im.report.notes.iter().any(|n| n.contains("parentUuid absent")), "{:?}", im.report.notes);
    }

    /// Claude Code before 2.1.83 flushed a turn's hook `progress` lines after the turn's
    /// conversation, chained from its first tool call, and hung the Stop hook's summary (and so
    /// the next prompt) off the last of them (anthropics/claude-code#35024). The chain walk took
    /// that fork and dropped the turn's tool result and response as "another branch": a session
    /// of 156 billed responses kept 11 in `cache`.
    #[test]
    fn regression_late_hook_progress_lines_forked_the_conversation() {
        let s = r#"{"type":"user","uuid":"u1","parentUuid":null,"timestamp":"2026-01-01T00:00:00Z","message":{"role":"user","content":"look"}}
{"type":"assistant","uuid":"a1","parentUuid":"u1","requestId":"r1","timestamp":"2026-01-01T00:00:01Z","message":{"id":"m1","model":"claude-x","content":[{"type":"tool_use","id":"t1","name":"Glob","input":{"pattern":"*"}}],"usage":{"input_tokens":5,"cache_creation_input_tokens":1000,"cache_read_input_tokens":0,"output_tokens":10}}}
{"type":"user","uuid":"r1","parentUuid":"a1","timestamp":"2026-01-01T00:00:02Z","message":{"role":"user","content":[{"type":"tool_result","tool_use_id":"t1","content":"a.rs"}]}}
{"type":"assistant","uuid":"a2","parentUuid":"r1","requestId":"r2","timestamp":"2026-01-01T00:00:03Z","message":{"id":"m2","model":"claude-x","content":[{"type":"text","text":"found a.rs"}],"usage":{"input_tokens":5,"cache_creation_input_tokens":30,"cache_read_input_tokens":1000,"output_tokens":4}}}
{"type":"progress","uuid":"p1","parentUuid":"a1","toolUseID":"t1","timestamp":"2026-01-01T00:00:01Z","data":{"type":"hook_progress","hookEvent":"PreToolUse"}}
{"type":"progress","uuid":"p2","parentUuid":"p1","toolUseID":"t1","timestamp":"2026-01-01T00:00:02Z","data":{"type":"hook_progress","hookEvent":"PostToolUse"}}
{"type":"progress","uuid":"p3","parentUuid":"p2","timestamp":"2026-01-01T00:00:03Z","data":{"type":"hook_progress","hookEvent":"Stop"}}
{"type":"system","subtype":"stop_hook_summary","uuid":"s1","parentUuid":"p3","timestamp":"2026-01-01T00:00:03Z"}
{"type":"user","uuid":"u2","parentUuid":"s1","timestamp":"2026-01-01T00:01:00Z","message":{"role":"user","content":"next"}}
{"type":"assistant","uuid":"a3","parentUuid":"u2","requestId":"r3","timestamp":"2026-01-01T00:01:01Z","message":{"id":"m3","model":"claude-x","content":[{"type":"text","text":"ok"}],"usage":{"input_tokens":5,"cache_creation_input_tokens":20,"cache_read_input_tokens":1030,"output_tokens":2}}}
"#;
        let im = import(s);
        assert_eq!(im.journal.turns.len(), 3, "the turn's response stays on the conversation");
        assert_eq!(im.journal.results.len(), 1);
        assert_eq!(im.report.branches, 0);
        assert_eq!(im.report.dropped.turns, 0);
    }

    /// Claude Code 2.0.x, resuming a conversation, wrote it again into the file: new uuids, a new
    /// root, one timestamp, the same `message.id`s and usage, no `requestId`. The chain runs
    /// through the copy, but the originals were taken in as streaming lines of the same
    /// responses, so every call appeared twice: the copy's usage (that of the original call) sat
    /// after the whole conversation (calibration 337 % off) and the replay wrote it again.
    #[test]
    fn regression_resume_copy_of_the_conversation_doubled_every_call() {
        let s = r#"{"type":"user","uuid":"u1","parentUuid":null,"timestamp":"2026-01-01T00:00:00Z","message":{"role":"user","content":"look"}}
{"type":"assistant","uuid":"a1","parentUuid":"u1","requestId":"req_1","timestamp":"2026-01-01T00:00:01Z","message":{"id":"m1","model":"claude-x","content":[{"type":"tool_use","id":"t1","name":"Glob","input":{"pattern":"*"}}],"usage":{"input_tokens":5,"cache_creation_input_tokens":1000,"cache_read_input_tokens":0,"output_tokens":10}}}
{"type":"user","uuid":"r1","parentUuid":"a1","timestamp":"2026-01-01T00:00:02Z","message":{"role":"user","content":[{"type":"tool_result","tool_use_id":"t1","content":"a.rs"}]}}
{"type":"assistant","uuid":"a2","parentUuid":"r1","requestId":"req_2","timestamp":"2026-01-01T00:00:03Z","message":{"id":"m2","model":"claude-x","content":[{"type":"text","text":"found a.rs"}],"usage":{"input_tokens":5,"cache_creation_input_tokens":30,"cache_read_input_tokens":1000,"output_tokens":4}}}
{"type":"summary","summary":"Looking","leafUuid":"a2"}
{"type":"user","uuid":"c-u1","parentUuid":null,"timestamp":"2026-01-02T00:00:00Z","message":{"role":"user","content":"look"}}
{"type":"assistant","uuid":"c-a1","parentUuid":"c-u1","timestamp":"2026-01-02T00:00:00Z","message":{"id":"m1","model":"claude-x","content":[{"type":"tool_use","id":"t1","name":"Glob","input":{"pattern":"*"}}],"usage":{"input_tokens":5,"cache_creation_input_tokens":1000,"cache_read_input_tokens":0,"output_tokens":10}}}
{"type":"user","uuid":"c-r1","parentUuid":"c-a1","timestamp":"2026-01-02T00:00:00Z","message":{"role":"user","content":[{"type":"tool_result","tool_use_id":"t1","content":"a.rs"}]}}
{"type":"assistant","uuid":"c-a2","parentUuid":"c-r1","timestamp":"2026-01-02T00:00:00Z","message":{"id":"m2","model":"claude-x","content":[{"type":"text","text":"found a.rs"}],"usage":{"input_tokens":5,"cache_creation_input_tokens":30,"cache_read_input_tokens":1000,"output_tokens":4}}}
{"type":"user","uuid":"u3","parentUuid":"c-a2","timestamp":"2026-01-02T00:01:00Z","message":{"role":"user","content":"next"}}
{"type":"assistant","uuid":"a3","parentUuid":"u3","requestId":"req_3","timestamp":"2026-01-02T00:01:01Z","message":{"id":"m3","model":"claude-x","content":[{"type":"text","text":"ok"}],"usage":{"input_tokens":5,"cache_creation_input_tokens":1050,"cache_read_input_tokens":0,"output_tokens":2}}}
"#;
        let im = import(s);
        assert_eq!(im.journal.turns.len(), 3, "each response once: the copy, then the new call");
        assert_eq!(im.journal.results.len(), 1);
        assert_eq!((im.report.branches, im.report.dropped.turns), (1, 2), "the originals are the other branch");
    }

    /// A compaction call's file (`agent-acompact-*`) holds reminders copied from the parent, each
    /// pointing into the parent's file: they are not this call's conversation and stay off it.
    /// Claude Code 2.1.x writes each thinking block as its own line, `"thinking":""` with a
    /// signature; the importer dropped them without a trace, so nothing said the later requests
    /// carried them.
    #[test]
    fn regression_empty_thinking_blocks_left_no_trace() {
        let s = r#"{"type":"user","uuid":"u1","parentUuid":null,"timestamp":"2026-01-01T00:00:00Z","message":{"role":"user","content":"go"}}
{"type":"assistant","uuid":"a1","parentUuid":"u1","requestId":"r1","timestamp":"2026-01-01T00:00:01Z","message":{"id":"m1","model":"claude-sonnet-4-6","content":[{"type":"thinking","thinking":"","signature":"c2ln"}],"usage":{"input_tokens":5,"cache_read_input_tokens":0,"output_tokens":900}}}
{"type":"assistant","uuid":"a2","parentUuid":"a1","requestId":"r1","timestamp":"2026-01-01T00:00:02Z","message":{"id":"m1","model":"claude-sonnet-4-6","content":[{"type":"tool_use","id":"t1","name":"Read","input":{"path":"a"}}],"usage":{"input_tokens":5,"cache_read_input_tokens":0,"output_tokens":900}}}
{"type":"user","uuid":"r1","parentUuid":"a2","timestamp":"2026-01-01T00:00:03Z","message":{"role":"user","content":[{"type":"tool_result","tool_use_id":"t1","content":"file a"}]}}
{"type":"assistant","uuid":"a3","parentUuid":"r1","requestId":"r2","timestamp":"2026-01-01T00:00:04Z","message":{"id":"m2","model":"claude-sonnet-4-6","content":[{"type":"text","text":"done"}],"usage":{"input_tokens":1000,"cache_read_input_tokens":0,"output_tokens":3}}}
"#;
        let im = import(s);
        let marks: Vec<Option<u64>> = (im.journal.records.iter())
            .filter_map(|r| match &r.body {
                Body::Assistant(a) => Some(a.usage.as_ref().and_then(|u| u.thinking_blocks)),
                _ => None,
            })
            .collect();
        assert_eq!(marks, vec![Some(1), None]);
    }

    #[test]
    fn copied_lines_pointing_outside_the_file_stay_off_the_chain() {
        let s = r#"{"type":"user","uuid":"c1","parentUuid":"in-parent-1","isSidechain":true,"timestamp":"2026-01-01T00:00:00Z","message":{"role":"user","content":"<system-reminder>hook output</system-reminder>"}}
{"type":"user","uuid":"p1","parentUuid":"in-parent-2","isSidechain":true,"timestamp":"2026-01-01T00:00:01Z","message":{"role":"user","content":"Your task is to create a detailed summary"}}
{"type":"assistant","uuid":"a1","parentUuid":"p1","isSidechain":true,"requestId":"r1","timestamp":"2026-01-01T00:00:02Z","message":{"id":"m1","model":"claude-x","content":[{"type":"text","text":"summary"}],"usage":{"input_tokens":5,"cache_creation_input_tokens":10,"cache_read_input_tokens":1000,"output_tokens":3}}}
"#;
        let im = import(s);
        assert_eq!(im.journal.turns.len(), 1);
        assert_eq!(im.report.branches, 1, "the copied reminder is not merged");
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
