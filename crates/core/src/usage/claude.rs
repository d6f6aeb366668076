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

use std::borrow::Cow;
use std::collections::HashMap;
use std::path::{Path, PathBuf};
use std::sync::{Arc, LazyLock};

use memchr::memmem::Finder;
use rayon::prelude::*;
use serde::Deserialize;
use serde_json::{Map, Number, Value};

use super::entry::{builtin_cost, Compaction, Parse, Read, SessionKey, Tokens, UsageEntry};
use crate::import::claude_code::{model_of, response_key, CcUsage};
use crate::import::s;
use crate::journal::reader::{parse_json, replace_lone_surrogates};
use crate::journal::typed::{self, object_or_null, Seen};

/// One usage entry (one line with `message.usage`).
#[derive(Debug, Clone, PartialEq, serde::Serialize, serde::Deserialize)]
struct Entry {
    file: usize,
    ts: String,
    model: Option<String>,
    key: Option<(String, Option<String>)>,
    sidechain: bool,
    speed: bool,
    usage: CcUsage,
    /// Written with a space after the colon: ccusage's prefilter skips it.
    spaced: bool,
}

/// What one line is to `usage`.
#[derive(Debug, Clone, PartialEq)]
enum Line {
    /// A `compact_boundary` line, with its timestamp.
    Compaction(String),
    Usage(Entry),
    Other,
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

/// The fields of a Claude Code line that `usage` reads, typed strictly (a string where a string
/// is read, an object where an object is): anything else refuses the typed read and the line is
/// parsed in full. Everything else (the message content, most of the bytes) is skipped unbuilt.
#[derive(Deserialize)]
struct TypedLine<'a> {
    #[serde(rename = "type", default, borrow)]
    kind: Option<Cow<'a, str>>,
    #[serde(default, borrow)]
    subtype: Option<Cow<'a, str>>,
    #[serde(default, borrow)]
    timestamp: Option<Cow<'a, str>>,
    #[serde(rename = "isSidechain", default)]
    is_sidechain: Option<bool>,
    #[serde(rename = "requestId", default, borrow)]
    request_id: Option<Cow<'a, str>>,
    #[serde(default, borrow, deserialize_with = "object_or_null")]
    message: Option<TypedMessage<'a>>,
}

#[derive(Deserialize)]
struct TypedMessage<'a> {
    #[serde(default, borrow)]
    id: Option<Cow<'a, str>>,
    #[serde(default, borrow)]
    model: Option<Cow<'a, str>>,
    #[serde(default, deserialize_with = "object_or_null")]
    usage: Option<TypedUsage>,
}

#[derive(Deserialize)]
struct TypedUsage {
    #[serde(default)]
    input_tokens: Option<Number>,
    #[serde(default)]
    output_tokens: Option<Number>,
    #[serde(default)]
    cache_creation_input_tokens: Option<Number>,
    #[serde(default)]
    cache_read_input_tokens: Option<Number>,
    #[serde(default, deserialize_with = "object_or_null")]
    cache_creation: Option<TypedCacheCreation>,
    #[serde(default)]
    speed: Seen,
}

#[derive(Deserialize)]
struct TypedCacheCreation {
    #[serde(default)]
    ephemeral_1h_input_tokens: Option<Number>,
}

/// A count as `import::u` reads it from a parsed line: a whole number, or a whole non-negative
/// float; anything else is 0.
fn count(n: &Option<Number>) -> u64 {
    let Some(n) = n else { return 0 };
    n.as_u64().or_else(|| n.as_f64().filter(|f| *f >= 0.0 && f.fract() == 0.0).map(|f| f as u64)).unwrap_or(0)
}

impl TypedLine<'_> {
    fn into_line(self, file: usize, spaced: bool) -> Line {
        let ts = self.timestamp.map(Cow::into_owned).unwrap_or_default();
        if self.kind.as_deref() == Some("system") && self.subtype.as_deref() == Some("compact_boundary") {
            return Line::Compaction(ts);
        }
        let Some(m) = self.message else { return Line::Other };
        let Some(us) = m.usage else { return Line::Other };
        let usage = CcUsage {
            input: count(&us.input_tokens),
            output: count(&us.output_tokens),
            cache_creation: count(&us.cache_creation_input_tokens),
            cache_read: count(&us.cache_read_input_tokens),
            cache_creation_1h: us.cache_creation.map_or(0, |c| count(&c.ephemeral_1h_input_tokens)),
        };
        Line::Usage(Entry {
            file,
            ts,
            model: m.model.filter(|m| m != "<synthetic>").map(Cow::into_owned),
            key: m.id.map(|id| (id.into_owned(), self.request_id.map(Cow::into_owned))),
            sidechain: self.is_sidechain.unwrap_or(false),
            speed: us.speed.0,
            usage,
            spaced,
        })
    }
}

/// A line read from its fully parsed object (the reference the typed read is held to).
fn from_object(o: &Map<String, Value>, file: usize, spaced: bool) -> Line {
    let ts = s(o, "timestamp").unwrap_or("").to_string();
    if s(o, "type") == Some("system") && s(o, "subtype") == Some("compact_boundary") {
        return Line::Compaction(ts);
    }
    let Some(usage) = CcUsage::of(o) else { return Line::Other };
    let us = o.get("message").and_then(|m| m.get("usage")).and_then(Value::as_object);
    Line::Usage(Entry {
        file,
        ts,
        model: model_of(o).filter(|m| *m != "<synthetic>").map(str::to_string),
        key: response_key(o),
        sidechain: o.get("isSidechain").and_then(Value::as_bool).unwrap_or(false),
        speed: us.is_some_and(|us| us.contains_key("speed")),
        usage,
        spaced,
    })
}

/// One line: typed when `parse` is [`Parse::Fast`] and the typed read takes it, else in full.
fn read_line(line: &[u8], file: usize, spaced: bool, parse: Parse) -> Line {
    if parse == Parse::Fast {
        if let Some(t) = typed::line::<TypedLine>(line) {
            return t.into_line(file, spaced);
        }
    }
    match parse_json(line) {
        Ok(Value::Object(o)) => from_object(&o, file, spaced),
        // A lone surrogate (`\ud800`) is refused by serde_json and taken by ccusage's
        // `JSON.parse`: the line is read again with it as U+FFFD, so its call is counted.
        Err(_) => match replace_lone_surrogates(line).map(|l| parse_json(&l)) {
            Some(Ok(Value::Object(o))) => from_object(&o, file, spaced),
            _ => Line::Other,
        },
        _ => Line::Other,
    }
}

static USAGE: LazyLock<Finder<'static>> = LazyLock::new(|| Finder::new(b"\"usage\""));
static BOUNDARY: LazyLock<Finder<'static>> = LazyLock::new(|| Finder::new(b"compact_boundary"));
static TIGHT: LazyLock<Finder<'static>> = LazyLock::new(|| Finder::new(b"\"usage\":{"));

/// What one file's lines hold for `usage`: its entries and compaction timestamps, in line order.
/// A fold: [`FileFold::feed`] takes complete lines, and feeding a file in any number of pieces cut
/// at line ends gives what one feed of the whole gives (the live engine, `crate::live`, feeds the
/// appended lines; the batch read is one feed).
#[derive(Debug, Clone, Default, PartialEq, serde::Serialize, serde::Deserialize)]
pub struct FileFold {
    entries: Vec<Entry>,
    compactions: Vec<String>,
}

impl FileFold {
    /// Folds `bytes` (complete lines) of the file whose index is `idx`.
    pub fn feed(&mut self, idx: usize, bytes: &[u8], parse: Parse) {
        let more = entries_of(idx, bytes, parse);
        self.entries.extend(more.entries);
        self.compactions.extend(more.compactions);
    }

    /// The one-hour part of the cache writes of the last entry, and all its cache writes.
    pub fn last_writes(&self) -> Option<(u64, u64)> {
        self.entries.last().map(|e| (e.usage.cache_creation_1h, e.usage.cache_creation))
    }

    /// Takes out what no later line can change any more, keeping the last `keep` entries (fewer
    /// when the cut would part the copies of one message: Claude Code writes a message's lines,
    /// each with its usage, one after another) and the last `keep` compactions. The live engine
    /// counts what is taken out once ([`assemble`]) and keeps only its sums, so a copy of a
    /// message written more than `keep` usage lines after its first copy is counted again there
    /// (never in `usage`, which folds the whole file).
    pub fn settle(&mut self, keep: usize) -> FileFold {
        let mut cut = self.entries.len().saturating_sub(keep);
        while cut > 0 && self.entries[cut].key.is_some() && self.entries[cut].key == self.entries[cut - 1].key {
            cut -= 1;
        }
        let entries = self.entries.drain(..cut).collect();
        let compactions = self.compactions.drain(..self.compactions.len().saturating_sub(keep)).collect();
        FileFold { entries, compactions }
    }
}

/// What one file holds: entries and compaction timestamps (nothing when it cannot be read; only
/// regular files are read, `journal::input`; large ones are mapped, `journal::mmap`).
fn read_file(idx: usize, path: &Path, parse: Parse) -> FileFold {
    use crate::journal::mmap::Source;
    let Ok(src) = Source::open(path) else { return FileFold::default() };
    let out = entries_of(idx, src.bytes(), parse);
    if !src.shrank() {
        return out;
    }
    // Cut while mapped: read what the file now holds.
    match Source::read(path) {
        Ok(src) => entries_of(idx, src.bytes(), parse),
        Err(_) => FileFold::default(),
    }
}

/// One transcript's bytes through the same rules as [`read`] (the fuzz target's entry).
pub fn read_bytes(path: &Path, bytes: &[u8]) -> Read {
    read_bytes_with(path, bytes, Parse::Fast)
}

/// [`read_bytes`], parsing the way `parse` says.
pub fn read_bytes_with(path: &Path, bytes: &[u8], parse: Parse) -> Read {
    assemble(std::slice::from_ref(&path.to_path_buf()), &[&entries_of(0, bytes, parse)], 0)
}

/// The entries and compactions of one file's bytes. The fast way looks for `"usage"` and
/// `compact_boundary` over the whole buffer and reads only the lines holding one; the full way
/// parses every line.
fn entries_of(idx: usize, bytes: &[u8], parse: Parse) -> FileFold {
    let mut entries = Vec::new();
    let mut compactions = Vec::new();
    let mut take = |line: &[u8], spaced: bool| match read_line(line, idx, spaced, parse) {
        Line::Compaction(ts) => compactions.push(ts),
        Line::Usage(e) => entries.push(e),
        Line::Other => {}
    };
    if parse == Parse::Full {
        for line in bytes.split(|&b| b == b'\n').filter(|l| l.len() >= 2) {
            take(line, TIGHT.find(line).is_none());
        }
        return FileFold { entries, compactions };
    }
    let after = |f: &Finder, from: usize| f.find(&bytes[from..]).map(|i| from + i);
    let (mut next_u, mut next_b) = (after(&USAGE, 0), after(&BOUNDARY, 0));
    let mut pos = 0;
    while let Some(hit) = next_u.into_iter().chain(next_b).min() {
        let start = memchr::memrchr(b'\n', &bytes[pos..hit]).map_or(pos, |i| pos + i + 1);
        let end = memchr::memchr(b'\n', &bytes[hit..]).map_or(bytes.len(), |i| hit + i);
        let line = &bytes[start..end];
        if line.len() >= 2 {
            let tight = next_u.is_some_and(|u| u < end && bytes[u..end].starts_with(b"\"usage\":{"))
                || TIGHT.find(line).is_some();
            take(line, !tight);
        }
        pos = (end + 1).min(bytes.len());
        if next_u.is_some_and(|u| u < pos) {
            next_u = after(&USAGE, pos);
        }
        if next_b.is_some_and(|b| b < pos) {
            next_b = after(&BOUNDARY, pos);
        }
    }
    FileFold { entries, compactions }
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
pub fn read(files: &[PathBuf], first_file: usize, parse: Parse) -> Read {
    let read: Vec<FileFold> = files.par_iter().enumerate().map(|(i, p)| read_file(i, p, parse)).collect();
    assemble(files, &read.iter().collect::<Vec<_>>(), first_file)
}

/// The entries of `read` (one fold per file of `files`, in that order) de-duplicated in that
/// order; entry `file` indexes count from `first_file`.
pub fn assemble(files: &[PathBuf], read: &[&FileFold], first_file: usize) -> Read {
    let (kept, duplicates) = dedup(read);
    let sessions: Vec<Arc<SessionKey>> = files
        .iter()
        .map(|f| {
            let (project, session) = session_of(f);
            Arc::new(SessionKey { agent: super::Agent::ClaudeCode, project, session })
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
                cost: builtin_cost(e.model.as_deref(), &tokens, e.usage.cache_creation_1h),
                cache_creation_1h: e.usage.cache_creation_1h.min(tokens.cache_creation),
                ts: e.ts,
                model: e.model,
                tokens,
                uncounted_by_ccusage: e.spaced,
                extra: 0,
                double_counted: 0,
                sidechain: e.sidechain,
            }
        })
        .collect();
    let compactions = read
        .iter()
        .enumerate()
        .flat_map(|(fi, f)| f.compactions.iter().map(move |ts| (fi, ts)))
        .map(|(fi, ts)| Compaction { session: sessions[fi].clone(), ts: ts.clone() })
        .collect();
    Read { entries, compactions, duplicates }
}

/// ccusage's de-duplication over every file, in file order: the kept entries and the number
/// dropped.
fn dedup(read: &[&FileFold]) -> (Vec<Entry>, usize) {
    let mut kept: Vec<Entry> = Vec::new();
    let mut at: HashMap<(String, Option<String>), usize> = HashMap::new();
    let mut by_msg: HashMap<String, Vec<usize>> = HashMap::new();
    let mut duplicates = 0;
    for (fi, f) in read.iter().enumerate() {
        for e in &f.entries {
            // A fold's position is its file (the index it was fed with may be another order's).
            let e = &Entry { file: fi, ..e.clone() };
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
        let r = read(&files, 0, Parse::Fast);
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
            week_start: chrono::Weekday::Sun,
            last: None,
            order: None,
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
            r#"{"type":"system","subtype":"compact_boundary","timestamp":"2026-01-01T00:00:00Z","message":{"usage":{}}}"#.to_string(),
            r#"{"type":"assistant","type":"user","message":{"usage":{"output_tokens":3}}}"#.to_string(),
            r#"{"message":{"usage":{"output_tokens":3},"usage":{"output_tokens":4}}}"#.to_string(),
            r#"{"message":null,"isSidechain":"yes","usage":1}"#.to_string(),
            r#"{"message":{"usage":[1,2]}}"#.to_string(),
            r#"{"message":[{"usage":{}}]}"#.to_string(),
            r#"[null,null,"t",false,"r",{"id":"m","usage":{"output_tokens":3}}]"#.to_string(),
            r#"{"message":{"id":"m","model":"<synthetic>","usage":{"input_tokens":-1,"output_tokens":2.5,"cache_read_input_tokens":1e3,"cache_creation_input_tokens":"7","cache_creation":{"ephemeral_1h_input_tokens":-0}}}}"#.to_string(),
            r#"{"message":{"usage":{"cache_creation":null,"output_tokens":18446744073709551616}},"isSidechain":true}"#.to_string(),
            r#"{"message":{"usage":{"cache_creation":[1]}}}"#.to_string(),
        ];
        for l in &lines {
            let fast = read_line(l.as_bytes(), 3, false, Parse::Fast);
            let full = read_line(l.as_bytes(), 3, false, Parse::Full);
            assert_eq!(fast, full, "{l}");
        }
        let bad = b"{\"message\":{\"usage\":{\"output_tokens\":1}},\"x\":\"\xff\"}";
        assert_eq!(read_line(bad, 0, false, Parse::Fast), Line::Other, "broken UTF-8: not a line");
        assert_eq!(read_line(b"{\"message\":{\"usage\":{}}} x", 0, false, Parse::Fast), Line::Other, "trailing bytes");
    }

    #[test]
    fn the_buffer_scan_finds_what_the_line_by_line_parse_finds() {
        let text = [
            line("m1", "r1", false, 5, false),
            String::new(),
            r#"{"type":"user","message":{"content":"no usage here"}}"#.to_string(),
            r#"{"type":"system","subtype":"compact_boundary","timestamp":"t1"}"#.to_string(),
            line("m2", "r2", false, 6, true),
            r#"{"type":"user","usage":"none","message":{"content":"compact_boundary, \"usage\":{"}}"#.to_string(),
            r#"{"type":"system","subtype":"compact_boundary","timestamp":"t2","message":{"usage":{"output_tokens":9}}}"#.to_string(),
            line("m3", "r3", true, 7, false),
        ]
        .join("\n");
        for bytes in [text.as_bytes(), text.trim_end().as_bytes(), format!("{text}\n").as_bytes()] {
            let fast = entries_of(0, bytes, Parse::Fast);
            assert_eq!(fast, entries_of(0, bytes, Parse::Full));
            assert_eq!((fast.entries.len(), fast.compactions.len()), (3, 2));
            assert_eq!(fast.entries.iter().map(|e| e.spaced).collect::<Vec<_>>(), [false, true, false]);
        }
    }

    /// Issue 31: a line holding a lone surrogate (`\ud800`) was refused by serde_json, so
    /// `usage` and `export` dropped its billed call with no note; ccusage (`JSON.parse`) counts it.
    #[test]
    fn regression_lone_surrogate_line_is_still_counted() {
        let l = line("m1", "r1", false, 5, false)
            .replace(r#""message":{"#, r#""message":{"content":[{"type":"text","text":"bad \ud800 half"}],"#);
        assert!(serde_json::from_str::<Value>(&l).is_err(), "serde_json refuses the line: {l}");
        for parse in [Parse::Fast, Parse::Full] {
            let r = read_bytes_with(Path::new("p/s.jsonl"), l.as_bytes(), parse);
            assert_eq!(r.entries.len(), 1, "{parse:?}");
            assert_eq!(r.entries[0].tokens.output, 5);
        }
    }
}
