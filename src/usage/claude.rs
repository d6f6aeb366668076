//! Token and cost totals of Claude Code logs with ccusage's counting rules (for `ctxj usage`).
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
//! * days are UTC dates.
//!
//! Added columns: cache-hit rate (Σ cache_read / Σ prompt, prompt = input + cache_creation +
//! cache_read) and compactions (`compact_boundary` lines).

use std::collections::{BTreeMap, BTreeSet, HashMap};
use std::path::{Path, PathBuf};

use rayon::prelude::*;
use serde_json::Value;

use crate::import::claude_code::{model_of, response_key, CcUsage};
use crate::import::{s, u};
use crate::journal::reader::parse_json;

/// How rows are grouped.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum By {
    Session,
    Day,
    Model,
}

impl By {
    pub fn name(self) -> &'static str {
        match self {
            By::Session => "session",
            By::Day => "day",
            By::Model => "model",
        }
    }
}

/// Token counts.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, serde::Serialize)]
pub struct Tokens {
    pub input: u64,
    pub output: u64,
    pub cache_creation: u64,
    pub cache_read: u64,
}

impl Tokens {
    fn add(&mut self, u: &CcUsage) {
        self.input += u.input;
        self.output += u.output;
        self.cache_creation += u.cache_creation;
        self.cache_read += u.cache_read;
    }
    pub fn total(&self) -> u64 {
        self.input + self.output + self.cache_creation + self.cache_read
    }
    pub fn is_zero(&self) -> bool {
        self.total() == 0
    }
}

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

/// One row of the report.
#[derive(Debug, Clone, Default, serde::Serialize)]
pub struct Row {
    /// The group: `project/session`, a date, or a model.
    pub key: String,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub project: Option<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub session: Option<String>,
    pub files: usize,
    /// De-duplicated API calls counted.
    pub entries: usize,
    pub first: Option<String>,
    pub last: Option<String>,
    #[serde(flatten)]
    pub tokens: Tokens,
    pub total_tokens: u64,
    /// Estimated cost in USD of the calls whose model has a price (`None` when none has).
    pub cost_usd: Option<f64>,
    /// Calls with tokens whose model has no price: left out of `cost_usd`.
    pub unpriced_calls: usize,
    /// Σ cache_read / Σ (input + cache_creation + cache_read).
    pub cache_hit_rate: Option<f64>,
    pub compactions: usize,
    pub models: Vec<String>,
    /// Tokens of entries ccusage 20.0.24 does not see (space after the colon).
    pub not_counted_by_ccusage: Tokens,
}

/// The whole report.
#[derive(Debug, Clone, Default, serde::Serialize)]
pub struct UsageReport {
    pub by: &'static str,
    pub rows: Vec<Row>,
    pub totals: Row,
    /// Claude Code files read.
    pub files: Vec<PathBuf>,
    /// Models without a price (their cost is left out).
    pub unpriced: Vec<String>,
    /// Entries dropped as duplicates.
    pub duplicates: usize,
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

/// What one file holds: entries and compaction timestamps.
fn read_file(idx: usize, path: &Path) -> (Vec<Entry>, Vec<String>) {
    let Ok(bytes) = std::fs::read(path) else { return (Vec::new(), Vec::new()) };
    let mut entries = Vec::new();
    let mut compactions = Vec::new();
    let mut start = 0;
    for end in memchr::memchr_iter(b'\n', &bytes).chain(std::iter::once(bytes.len())) {
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

/// Cost of one entry, `None` for an unknown model.
fn cost(e: &Entry) -> Option<f64> {
    let p = crate::cache::prices::builtin_price(e.model.as_deref()?)?;
    let cw5 = e.usage.cache_creation.saturating_sub(e.cache_1h);
    Some(p.billed(e.usage.input, cw5, e.cache_1h, e.usage.cache_read, e.usage.output))
}

fn utc_day(ts: &str) -> String {
    chrono::DateTime::parse_from_rfc3339(ts)
        .map(|d| d.with_timezone(&chrono::Utc).format("%Y-%m-%d").to_string())
        .unwrap_or_else(|_| ts.get(..10).unwrap_or("unknown").to_string())
}

/// Counts usage in `files` (Claude Code transcripts) grouped `by`.
pub fn usage(files: &[PathBuf], by: By) -> UsageReport {
    let read: Vec<(Vec<Entry>, Vec<String>)> = files.par_iter().enumerate().map(|(i, p)| read_file(i, p)).collect();
    // De-duplicate in file order.
    let mut kept: Vec<Entry> = Vec::new();
    let mut at: HashMap<(String, Option<String>), usize> = HashMap::new();
    let mut by_msg: HashMap<String, Vec<usize>> = HashMap::new();
    let mut duplicates = 0;
    for (entries, _) in &read {
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
    let sessions: Vec<(String, String)> = files.iter().map(|f| session_of(f)).collect();
    let group = |e_file: usize, ts: &str, model: Option<&str>| -> String {
        match by {
            By::Session => format!("{}/{}", sessions[e_file].0, sessions[e_file].1),
            By::Day => utc_day(ts),
            By::Model => model.unwrap_or("<none>").to_string(),
        }
    };
    let mut rows: BTreeMap<String, (Row, BTreeSet<usize>, BTreeSet<String>, bool)> = BTreeMap::new();
    let mut unpriced = BTreeSet::new();
    let mut totals = Row { key: "total".into(), ..Row::default() };
    let mut tot_files = BTreeSet::new();
    let mut tot_models = BTreeSet::new();
    let mut tot_unpriced = false;
    for e in &kept {
        let k = group(e.file, &e.ts, e.model.as_deref());
        let (row, fs, models, has_unpriced) = rows.entry(k.clone()).or_insert_with(|| {
            let mut r = Row { key: k.clone(), ..Row::default() };
            if by == By::Session {
                r.project = Some(sessions[e.file].0.clone());
                r.session = Some(sessions[e.file].1.clone());
            }
            (r, BTreeSet::new(), BTreeSet::new(), false)
        });
        for (r, fs, ms, unp) in [
            (&mut *row, &mut *fs, &mut *models, &mut *has_unpriced),
            (&mut totals, &mut tot_files, &mut tot_models, &mut tot_unpriced),
        ] {
            r.entries += 1;
            r.tokens.add(&e.usage);
            if e.spaced {
                r.not_counted_by_ccusage.add(&e.usage);
            }
            fs.insert(e.file);
            if let Some(m) = &e.model {
                ms.insert(m.clone());
            }
            match cost(e) {
                Some(c) => *r.cost_usd.get_or_insert(0.0) += c,
                None if !e.usage.is_zero_cost() => {
                    *unp = true;
                    r.unpriced_calls += 1;
                    if let Some(m) = &e.model {
                        unpriced.insert(m.clone());
                    }
                }
                None => {}
            }
            if !e.ts.is_empty() {
                if r.first.as_deref().is_none_or(|f| e.ts.as_str() < f) {
                    r.first = Some(e.ts.clone());
                }
                if r.last.as_deref().is_none_or(|l| e.ts.as_str() > l) {
                    r.last = Some(e.ts.clone());
                }
            }
        }
    }
    // Compactions: by the session of their file, or the day of their timestamp.
    for (fi, (_, comps)) in read.iter().enumerate() {
        for ts in comps {
            totals.compactions += 1;
            let k = match by {
                By::Session => format!("{}/{}", sessions[fi].0, sessions[fi].1),
                By::Day => utc_day(ts),
                By::Model => continue,
            };
            if let Some((r, ..)) = rows.get_mut(&k) {
                r.compactions += 1;
            }
        }
    }
    let finish = |r: &mut Row, fs: &BTreeSet<usize>, ms: &BTreeSet<String>, unp: bool| {
        r.files = fs.len();
        r.models = ms.iter().cloned().collect();
        r.total_tokens = r.tokens.total();
        let prompt = r.tokens.input + r.tokens.cache_creation + r.tokens.cache_read;
        r.cache_hit_rate = (prompt > 0).then(|| r.tokens.cache_read as f64 / prompt as f64);
        let _ = unp;
    };
    let mut out_rows = Vec::new();
    for (_, (mut r, fs, ms, unp)) in rows {
        finish(&mut r, &fs, &ms, unp);
        out_rows.push(r);
    }
    finish(&mut totals, &tot_files, &tot_models, tot_unpriced);
    match by {
        By::Session => out_rows.sort_by(|a, b| a.last.cmp(&b.last).then(a.key.cmp(&b.key))),
        By::Day | By::Model => {}
    }
    UsageReport {
        by: by.name(),
        rows: out_rows,
        totals,
        files: files.to_vec(),
        unpriced: unpriced.into_iter().collect(),
        duplicates,
    }
}

impl CcUsage {
    fn is_zero_cost(&self) -> bool {
        self.total() == 0
    }
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
        let r = usage(&files, By::Session);
        assert_eq!(r.rows.len(), 1, "the subagent file counts toward its parent session");
        let row = &r.rows[0];
        assert_eq!(row.key, "p/s1");
        assert_eq!(row.entries, 3);
        assert_eq!(row.tokens.output, 50 + 7 + 1, "main copy (50) beats the larger sidechain copy (500)");
        assert_eq!(row.not_counted_by_ccusage.output, 7);
        assert_eq!(r.duplicates, 2);
        let hit = row.cache_hit_rate.unwrap();
        assert!((hit - 300.0 / 333.0).abs() < 1e-9);
        assert!(row.cost_usd.unwrap() > 0.0);
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
