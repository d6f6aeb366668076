//! Claude Code usage entries with ccusage's counting rules (for `ctxj usage`).
//!
//! Rules (ccusage 20.0.24, `adapter/claude/mod.rs`, as documented in
//! `../shared/formats/claude-code.md` §3.2):
//! * every line whose `message.usage` is an object is a usage entry — including lines written
//!   with a space after the colon, which ccusage's byte prefilter (`"usage":{`) silently skips;
//!   such entries are counted here and reported separately (`not_counted_by_ccusage`);
//! * entries are de-duplicated globally by (`message.id`, `requestId`): the non-sidechain copy
//!   wins, then the larger total, then the one with `speed`; an entry with the same `message.id`
//!   but another `requestId` is a replay when either side is a sidechain, and the sidechain copy
//!   goes. Entries without `message.id` are never de-duplicated;
//! * the session of a file is its stem (`projects/<p>/<s>.jsonl`) or, for nested files
//!   (`<s>/subagents/agent-x.jsonl`), the session folder; so subagent usage counts toward its
//!   parent session;
//! * compactions are `compact_boundary` lines.

use std::collections::HashMap;
use std::path::{Path, PathBuf};
use std::sync::Arc;

use rayon::prelude::*;
use serde_json::Value;

use super::entry::{builtin_cost, Compaction, Read, SessionKey, Tokens, UsageEntry};
use crate::import::claude_code::{model_of, response_key, CcUsage};
use crate::import::Format;
use crate::import::{s, u};
use crate::journal::reader::parse_json;

/// One usage entry (one line with `message.usage`).
#[derive(Debug, Clone)]
struct Entry {
    file: usize,
    ts: String,
    model: Option<String>,
    key: Option<(String, Option<String>)>,
    sidechain: bool,
    speed: bool,
    usage: CcUsage,
    cache_1h: u64,
    /// Written with a space after the colon: ccusage's prefilter skips it.
    spaced: bool,
}

/// The Claude Code files under `paths` (files are taken as given; folders are searched).
pub fn claude_files(paths: &[PathBuf]) -> Vec<PathBuf> {
    let mut out = Vec::new();
    for p in paths {
        if p.is_dir() {
            for f in crate::import::scan::find_sessions(p, crate::import::FromFormat::Auto) {
                if f.format == crate::import::Format::ClaudeCode {
                    out.push(f.path);
                }
            }
        } else {
            out.push(p.clone());
        }
    }
    out.sort();
    out.dedup();
    out
}

/// (project, session) of a Claude Code file, following ccusage's layout rules.
pub fn session_of(path: &Path) -> (String, String) {
    let name =
        |p: Option<&Path>| p.and_then(Path::file_name).map(|n| n.to_string_lossy().into_owned()).unwrap_or_default();
    let comps: Vec<String> = path.components().map(|c| c.as_os_str().to_string_lossy().into_owned()).collect();
    if let Some(i) = comps.iter().rposition(|c| c == "projects") {
        if comps.len() > i + 2 {
            let project = comps[i + 1].clone();
            let session = if comps.len() == i + 3 {
                path.file_stem().map(|s| s.to_string_lossy().into_owned()).unwrap_or_default()
            } else {
                comps[i + 2].clone()
            };
            return (project, session);
        }
    }
    match crate::import::scan::parent_of(path, crate::import::Format::ClaudeCode) {
        Some(parent) => {
            let dir = if parent.is_file() { parent.with_extension("") } else { parent };
            (name(dir.parent()), name(Some(&dir)))
        }
        None => (name(path.parent()), path.file_stem().map(|s| s.to_string_lossy().into_owned()).unwrap_or_default()),
    }
}

/// The fields of a Claude Code line that `usage` reads; everything else (the message content,
/// most of the bytes) is skipped without being built.
#[derive(serde::Deserialize)]
struct UsageLine {
    #[serde(rename = "type")]
    kind: Option<Value>,
    subtype: Option<Value>,
    timestamp: Option<Value>,
    #[serde(rename = "isSidechain")]
    is_sidechain: Option<Value>,
    #[serde(rename = "requestId")]
    request_id: Option<Value>,
    message: Option<UsageMessage>,
}

#[derive(serde::Deserialize)]
struct UsageMessage {
    id: Option<Value>,
    model: Option<Value>,
    usage: Option<Value>,
}

/// The line as a JSON object holding just the fields `usage` reads (absent and `null` alike
/// are left out, which the readers treat the same). Lines the typed reader refuses (a
/// `message` that is not an object, duplicate keys, …) go through the full parser, so the result
/// is the same as parsing the whole line.
fn usage_fields(line: &[u8]) -> Option<serde_json::Map<String, Value>> {
    std::str::from_utf8(line).ok()?;
    match serde_json::from_slice::<UsageLine>(line) {
        Ok(l) => {
            let mut o = serde_json::Map::new();
            let put = |o: &mut serde_json::Map<String, Value>, k: &str, v: Option<Value>| {
                if let Some(v) = v {
                    o.insert(k.to_string(), v);
                }
            };
            put(&mut o, "type", l.kind);
            put(&mut o, "subtype", l.subtype);
            put(&mut o, "timestamp", l.timestamp);
            put(&mut o, "isSidechain", l.is_sidechain);
            put(&mut o, "requestId", l.request_id);
            if let Some(m) = l.message {
                let mut mo = serde_json::Map::new();
                put(&mut mo, "id", m.id);
                put(&mut mo, "model", m.model);
                put(&mut mo, "usage", m.usage);
                o.insert("message".into(), Value::Object(mo));
            }
            Some(o)
        }
        Err(_) => match parse_json(line) {
            Ok(Value::Object(o)) => Some(o),
            _ => None,
        },
    }
}

/// What one file holds: entries and compaction timestamps (nothing when it cannot be read; only
/// regular files are read, `journal::input`).
fn read_file(idx: usize, path: &Path) -> (Vec<Entry>, Vec<String>) {
    match crate::journal::input::read_regular(path) {
        Ok(bytes) => entries_of(idx, &bytes),
        Err(_) => (Vec::new(), Vec::new()),
    }
}

/// One transcript's bytes through the same rules as [`read`] (the fuzz target's entry).
pub fn read_bytes(path: &Path, bytes: &[u8]) -> Read {
    assemble(std::slice::from_ref(&path.to_path_buf()), vec![entries_of(0, bytes)], 0)
}

fn entries_of(idx: usize, bytes: &[u8]) -> (Vec<Entry>, Vec<String>) {
    let mut entries = Vec::new();
    let mut compactions = Vec::new();
    let mut start = 0;
    for end in memchr::memchr_iter(b'\n', bytes).chain(std::iter::once(bytes.len())) {
        let line = &bytes[start..end];
        start = end + 1;
        if line.len() < 2 {
            continue;
        }
        let has_usage = memchr::memmem::find(line, b"\"usage\"").is_some();
        let boundary = memchr::memmem::find(line, b"compact_boundary").is_some();
        if !has_usage && !boundary {
            continue;
        }
        let Some(o) = usage_fields(line) else { continue };
        if boundary && s(&o, "type") == Some("system") && s(&o, "subtype") == Some("compact_boundary") {
            compactions.push(s(&o, "timestamp").unwrap_or("").to_string());
            continue;
        }
        let Some(usage) = CcUsage::of(&o) else { continue };
        let us = o.get("message").and_then(|m| m.get("usage")).and_then(Value::as_object);
        let cache_1h = us
            .and_then(|us| us.get("cache_creation"))
            .and_then(Value::as_object)
            .and_then(|c| u(c, "ephemeral_1h_input_tokens"))
            .unwrap_or(0);
        entries.push(Entry {
            file: idx,
            ts: s(&o, "timestamp").unwrap_or("").to_string(),
            model: model_of(&o).filter(|m| *m != "<synthetic>").map(str::to_string),
            key: response_key(&o),
            sidechain: o.get("isSidechain").and_then(Value::as_bool).unwrap_or(false),
            speed: us.is_some_and(|us| us.contains_key("speed")),
            usage,
            cache_1h,
            spaced: memchr::memmem::find(line, b"\"usage\":{").is_none(),
        });
    }
    (entries, compactions)
}

/// Whether `new` should replace `old` (ccusage's preference).
fn better(new: &Entry, old: &Entry) -> bool {
    if new.sidechain != old.sidechain {
        return !new.sidechain;
    }
    if new.usage.total() != old.usage.total() {
        return new.usage.total() > old.usage.total();
    }
    new.speed && !old.speed
}

/// The usage entries of `files` (Claude Code transcripts), de-duplicated across them; entry
/// `file` indexes count from `first_file`.
pub fn read(files: &[PathBuf], first_file: usize) -> Read {
    let read: Vec<(Vec<Entry>, Vec<String>)> = files.par_iter().enumerate().map(|(i, p)| read_file(i, p)).collect();
    assemble(files, read, first_file)
}

fn assemble(files: &[PathBuf], read: Vec<(Vec<Entry>, Vec<String>)>, first_file: usize) -> Read {
    let (kept, duplicates) = dedup(&read);
    let sessions: Vec<Arc<SessionKey>> = files
        .iter()
        .map(|f| {
            let (project, session) = session_of(f);
            Arc::new(SessionKey { agent: Format::ClaudeCode, project, session })
        })
        .collect();
    let entries = kept
        .into_iter()
        .map(|e| {
            let tokens = Tokens {
                input: e.usage.input,
                output: e.usage.output,
                cache_creation: e.usage.cache_creation,
                cache_read: e.usage.cache_read,
            };
            UsageEntry {
                session: sessions[e.file].clone(),
                file: first_file + e.file,
                cost: builtin_cost(e.model.as_deref(), &tokens, e.cache_1h),
                ts: e.ts,
                model: e.model,
                tokens,
                uncounted_by_ccusage: e.spaced,
            }
        })
        .collect();
    let compactions = read
        .iter()
        .enumerate()
        .flat_map(|(fi, (_, comps))| comps.iter().map(move |ts| (fi, ts)))
        .map(|(fi, ts)| Compaction { session: sessions[fi].clone(), ts: ts.clone() })
        .collect();
    Read { entries, compactions, duplicates }
}

/// ccusage's de-duplication over every file, in file order: the kept entries and the number
/// dropped.
fn dedup(read: &[(Vec<Entry>, Vec<String>)]) -> (Vec<Entry>, usize) {
    let mut kept: Vec<Entry> = Vec::new();
    let mut at: HashMap<(String, Option<String>), usize> = HashMap::new();
    let mut by_msg: HashMap<String, Vec<usize>> = HashMap::new();
    let mut duplicates = 0;
    for (entries, _) in read {
        for e in entries {
            let Some(key) = e.key.clone() else {
                kept.push(e.clone());
                continue;
            };
            if let Some(&i) = at.get(&key) {
                duplicates += 1;
                if better(e, &kept[i]) {
                    kept[i] = e.clone();
                }
                continue;
            }
            // Same message id, another requestId, a sidechain on either side: a replay.
            let replay = by_msg.get(&key.0).and_then(|v| v.iter().copied().find(|&i| kept[i].sidechain || e.sidechain));
            if let Some(i) = replay {
                duplicates += 1;
                if kept[i].sidechain && !e.sidechain {
                    at.remove(&kept[i].key.clone().expect("keyed"));
                    kept[i] = e.clone();
                    at.insert(key, i);
                }
                continue;
            }
            at.insert(key.clone(), kept.len());
            by_msg.entry(key.0.clone()).or_default().push(kept.len());
            kept.push(e.clone());
        }
    }
    (kept, duplicates)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn line(id: &str, req: &str, side: bool, out: u64, spaced: bool) -> String {
        let l = format!(
            r#"{{"type":"assistant","isSidechain":{side},"requestId":"{req}","timestamp":"2026-01-01T00:00:00Z","message":{{"id":"{id}","model":"claude-sonnet-4-5","usage":{{"input_tokens":1,"cache_creation_input_tokens":10,"cache_read_input_tokens":100,"output_tokens":{out}}}}}}}"#
        );
        if spaced {
            l.replace("\"usage\":{", "\"usage\": {")
        } else {
            l
        }
    }

    #[test]
    fn dedup_prefers_main_copy_then_larger_total() {
        let d = tempfile::tempdir().unwrap();
        let proj = d.path().join("projects/p");
        std::fs::create_dir_all(proj.join("s1/subagents")).unwrap();
        std::fs::write(
            proj.join("s1.jsonl"),
            [line("m1", "r1", false, 5, false), line("m1", "r1", false, 50, false), line("m2", "r2", false, 7, true)]
                .join("\n"),
        )
        .unwrap();
        std::fs::write(
            proj.join("s1/subagents/agent-a.jsonl"),
            [line("m1", "r1", true, 500, false), line("m3", "r3", true, 1, false)].join("\n"),
        )
        .unwrap();
        std::fs::write(proj.join("s1.jsonl.bak"), "ignored").unwrap();
        let files = claude_files(&[d.path().to_path_buf()]);
        assert_eq!(files.len(), 2);
        let r = read(&files, 0);
        assert!(
            r.entries.iter().all(|e| e.session.key() == "p/s1"),
            "the subagent file counts toward its parent session"
        );
        let row = super::super::report::group(&r, files, &test_options());
        let row = &row.rows[0];
        assert_eq!(row.key, "p/s1");
        assert_eq!(row.calls, 3);
        assert_eq!(row.tokens.output, 50 + 7 + 1, "main copy (50) beats the larger sidechain copy (500)");
        assert_eq!(row.not_counted_by_ccusage.output, 7);
        assert_eq!(r.duplicates, 2);
        let hit = row.cache_hit.unwrap();
        assert!((hit - 300.0 / 333.0).abs() < 1e-9);
        assert!(row.cost_usd.unwrap() > 0.0);
    }

    fn test_options() -> super::super::report::Options {
        super::super::report::Options {
            by: super::super::report::By::Session,
            tz: chrono_tz::Tz::UTC,
            window: Default::default(),
            breakdown: false,
        }
    }

    #[test]
    fn sessions_follow_ccusage_layout() {
        assert_eq!(session_of(Path::new("/x/projects/p/s.jsonl")), ("p".into(), "s".into()));
        assert_eq!(session_of(Path::new("/x/projects/p/s/subagents/agent-1.jsonl")), ("p".into(), "s".into()));
    }

    #[test]
    fn typed_fields_read_like_the_full_parse() {
        let lines = [
            line("m1", "r1", false, 5, false),
            line("m2", "r2", true, 7, true),
            r#"{"type":"assistant","message":{"id":"m","content":[{"type":"text","text":"x\u00e9"}],"usage":{"input_tokens":1.0,"speed":null}},"requestId":null}"#.to_string(),
            r#"{"type":"system","subtype":"compact_boundary","timestamp":"2026-01-01T00:00:00Z","message":"text"}"#.to_string(),
            r#"{"type":"assistant","type":"user","message":{"usage":{"output_tokens":3}}}"#.to_string(),
            r#"{"message":{"usage":{"output_tokens":3},"usage":{"output_tokens":4}}}"#.to_string(),
            r#"{"message":null,"isSidechain":"yes","usage":1}"#.to_string(),
        ];
        for l in &lines {
            let fast = usage_fields(l.as_bytes()).expect("an object");
            let Ok(Value::Object(full)) = parse_json(l.as_bytes()) else { panic!("{l}") };
            assert_eq!(CcUsage::of(&fast), CcUsage::of(&full), "{l}");
            assert_eq!(model_of(&fast), model_of(&full), "{l}");
            assert_eq!(response_key(&fast), response_key(&full), "{l}");
            for k in ["type", "subtype", "timestamp"] {
                assert_eq!(s(&fast, k), s(&full, k), "{k} of {l}");
            }
            assert_eq!(
                fast.get("isSidechain").and_then(Value::as_bool),
                full.get("isSidechain").and_then(Value::as_bool)
            );
        }
        assert!(usage_fields(b"{\"message\":{\"usage\":{}}} x").is_none(), "trailing bytes: not a line");
    }
}
