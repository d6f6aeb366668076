//! Parallel parsing of a journal into typed records (spec §1 line rules).
//!
//! Lines are indexed with memchr ([`super::index`]) and parsed in parallel with rayon. Blank
//! lines are skipped; a last line without `\n` that does not parse is a torn write, tolerated with
//! a warning unless [`ReadOptions::strict`]. Nesting deeper than 128 levels is refused by a
//! byte scan before serde_json sees the line, so no input can exhaust the stack.

use std::collections::HashMap;
use std::path::{Path, PathBuf};

use rayon::prelude::*;
use serde::Deserialize;
use serde_json::Value;

use super::error::{JournalError, JournalErrorKind, Warning};
use super::index::{index_lines, Line};
use super::record::{Body, Record, Text};

/// The spec's nesting limit: deeper than this is invalid.
pub const MAX_DEPTH: usize = 128;

/// How to read a journal.
#[derive(Debug, Clone, Copy, Default)]
pub struct ReadOptions {
    /// Treat a torn last line as an error instead of a warning.
    pub strict: bool,
}

/// Where a call stands: the `assistant` record and the position in its `calls`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct CallRef {
    pub record: usize,
    pub index: usize,
}

/// A parsed journal: its records in file order plus look-up tables.
#[derive(Debug, Clone, Default)]
pub struct Journal {
    pub path: PathBuf,
    pub records: Vec<Record>,
    pub warnings: Vec<Warning>,
    /// Record index of each `assistant` record: `turns[k - 1]` is turn k.
    pub turns: Vec<usize>,
    /// Call id → where the call was made (first occurrence).
    pub calls: HashMap<String, CallRef>,
    /// Call id → record index of its first `result`.
    pub results: HashMap<String, usize>,
    /// Attachment id → (record index of its `user`, position in `attachments`).
    pub attachments: HashMap<String, (usize, usize)>,
}

impl Journal {
    /// Builds a journal from records made in memory (importers, generators).
    pub fn from_records(path: impl Into<PathBuf>, records: Vec<Record>) -> Journal {
        let mut j = Journal { path: path.into(), records, ..Journal::default() };
        j.build_index();
        j
    }

    fn build_index(&mut self) {
        for (i, r) in self.records.iter().enumerate() {
            match &r.body {
                Body::Assistant(a) => {
                    self.turns.push(i);
                    for (ci, c) in a.calls.iter().enumerate() {
                        self.calls.entry(c.id.clone()).or_insert(CallRef { record: i, index: ci });
                    }
                }
                Body::Result(res) => {
                    self.results.entry(res.call.clone()).or_insert(i);
                }
                Body::User(u) => {
                    for (ai, a) in u.attachments.iter().enumerate() {
                        self.attachments.entry(a.id.clone()).or_insert((i, ai));
                    }
                }
                _ => {}
            }
        }
    }

    /// The `session` record, when the journal has one.
    pub fn session(&self) -> Option<&super::record::SessionRec> {
        self.records.iter().find_map(|r| match &r.body {
            Body::Session(s) => Some(s),
            _ => None,
        })
    }

    /// The call with this id, as recorded in its `assistant` record.
    pub fn call(&self, id: &str) -> Option<&super::record::Call> {
        let at = self.calls.get(id)?;
        match &self.records[at.record].body {
            Body::Assistant(a) => a.calls.get(at.index),
            _ => None,
        }
    }

    /// The first `result` record answering this call.
    pub fn result(&self, call: &str) -> Option<&super::record::ResultRec> {
        match &self.records[*self.results.get(call)?].body {
            Body::Result(r) => Some(r),
            _ => None,
        }
    }

    /// The attachment with this id.
    pub fn attachment(&self, id: &str) -> Option<&super::record::AttachmentRef> {
        let (ri, ai) = self.attachments.get(id)?;
        match &self.records[*ri].body {
            Body::User(u) => u.attachments.get(*ai),
            _ => None,
        }
    }

    /// The record index of turn `k` (from 1).
    pub fn turn_record(&self, k: usize) -> Option<usize> {
        k.checked_sub(1).and_then(|i| self.turns.get(i).copied())
    }

    /// Number of records whose rev is at most `rev` — the prefix that `--at rev N` applies.
    pub fn prefix_len_at_rev(&self, rev: u64) -> usize {
        self.records.iter().take_while(|r| r.rev <= rev).count()
    }

    /// The highest rev in the journal.
    pub fn last_rev(&self) -> u64 {
        self.records.last().map_or(0, |r| r.rev)
    }
}

/// Parses journal bytes. `path` is used in messages only.
pub fn parse_bytes(path: &Path, bytes: &[u8], opts: ReadOptions) -> Result<Journal, JournalError> {
    let lines: Vec<Line> = index_lines(bytes)
        .into_iter()
        .filter(|l| !bytes[l.start..l.end].iter().all(|b| matches!(b, b' ' | b'\t' | b'\r')))
        .collect();
    let parsed: Vec<Result<Record, JournalErrorKind>> =
        lines.par_iter().with_min_len(64).map(|l| parse_line(&bytes[l.start..l.end], l)).collect();

    let mut journal = Journal { path: path.to_path_buf(), ..Journal::default() };
    let n = lines.len();
    for (i, (line, res)) in lines.iter().zip(parsed).enumerate() {
        match res {
            Ok(mut rec) => {
                if !rec.rev_recorded {
                    rec.rev = journal.records.len() as u64 + 1;
                }
                journal.records.push(rec);
            }
            Err(kind) => {
                let torn = i + 1 == n && !line.terminated;
                let slice = &bytes[line.start..line.end];
                if torn && !opts.strict {
                    journal.warnings.push(Warning {
                        line: line.number,
                        offset: line.start as u64,
                        message: format!("torn last line ignored ({} bytes without a newline): {kind}", slice.len()),
                    });
                } else {
                    let kind = if torn { JournalErrorKind::TornWrite(kind.to_string()) } else { kind };
                    return Err(JournalError::at(path, line.number, line.start as u64, kind, slice));
                }
            }
        }
    }
    journal.build_index();
    Ok(journal)
}

/// Maximum container nesting of a JSON text, ignoring brackets inside strings. Stops counting
/// once `limit` is exceeded.
pub fn json_depth(bytes: &[u8], limit: usize) -> usize {
    let (mut depth, mut max, mut in_str, mut esc) = (0usize, 0usize, false, false);
    for &b in bytes {
        if in_str {
            if esc {
                esc = false;
            } else if b == b'\\' {
                esc = true;
            } else if b == b'"' {
                in_str = false;
            }
            continue;
        }
        match b {
            b'"' => in_str = true,
            b'[' | b'{' => {
                depth += 1;
                if depth > max {
                    max = depth;
                    if max > limit {
                        return max;
                    }
                }
            }
            b']' | b'}' => depth = depth.saturating_sub(1),
            _ => {}
        }
    }
    max
}

/// Parses one JSON value from a line, with the spec's depth limit.
pub fn parse_json(bytes: &[u8]) -> Result<Value, JournalErrorKind> {
    parse_json_verbatim(bytes).map(|(v, _)| v)
}

/// [`parse_json`], also saying whether number text had to be restored (see `numbers`).
fn parse_json_verbatim(bytes: &[u8]) -> Result<(Value, bool), JournalErrorKind> {
    if json_depth(bytes, MAX_DEPTH) > MAX_DEPTH {
        return Err(JournalErrorKind::TooDeep);
    }
    let mut de = serde_json::Deserializer::from_slice(bytes);
    de.disable_recursion_limit();
    let mut v = Value::deserialize(&mut de).map_err(|e| JournalErrorKind::Json(json_msg(&e)))?;
    de.end().map_err(|e| JournalErrorKind::Json(json_msg(&e)))?;
    let restored = super::numbers::restore_number_text(bytes, &mut v);
    Ok((v, restored))
}

fn json_msg(e: &serde_json::Error) -> String {
    // serde_json appends " at line 1 column N"; the column is the useful part.
    let s = e.to_string();
    match s.rfind(" at line 1 column ") {
        Some(p) => format!("{} (column {})", &s[..p], &s[p + " at line 1 column ".len()..]),
        None => s,
    }
}

fn parse_line(bytes: &[u8], line: &Line) -> Result<Record, JournalErrorKind> {
    let (value, restored) = parse_json_verbatim(bytes)?;
    if !restored {
        return record_from_value(value, line.number, line.start as u64);
    }
    let orig = value.clone();
    let mut rec = record_from_value(value, line.number, line.start as u64)?;
    super::numbers::reattach(&mut rec.body, &orig);
    Ok(rec)
}

/// Turns one parsed JSON object into a typed record.
pub fn record_from_value(value: Value, line: usize, offset: u64) -> Result<Record, JournalErrorKind> {
    let obj = value.as_object().ok_or(JournalErrorKind::NotAnObject)?;
    let kind = match obj.get("kind") {
        Some(Value::String(k)) => k.clone(),
        Some(_) => return Err(JournalErrorKind::Schema("`kind` must be a string".into())),
        None => return Err(JournalErrorKind::Schema("missing field `kind`".into())),
    };
    let (rev, rev_recorded) = match obj.get("rev") {
        None => (0, false),
        Some(v) => match v.as_u64() {
            Some(r) => (r, true),
            None => return Err(JournalErrorKind::Schema("`rev` must be a non-negative integer".into())),
        },
    };
    let ts: Text = match obj.get("ts") {
        Some(Value::String(s)) => s.as_str().into(),
        None => "".into(),
        Some(_) => return Err(JournalErrorKind::Schema("`ts` must be a string".into())),
    };
    let body = Body::from_value(&kind, value).map_err(|e| JournalErrorKind::Schema(format!("{kind}: {e}")))?;
    Ok(Record { rev, rev_recorded, ts, line, offset, body })
}

/// Parses journal text held in memory (unit tests of other modules).
#[cfg(test)]
pub(crate) fn parse_bytes_for_test(s: &str) -> Journal {
    parse_bytes(Path::new("j.jsonl"), s.as_bytes(), ReadOptions::default()).unwrap()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn parse(s: &str, strict: bool) -> Result<Journal, JournalError> {
        parse_bytes(Path::new("j.jsonl"), s.as_bytes(), ReadOptions { strict })
    }

    #[test]
    fn depth_scanner_ignores_brackets_in_strings() {
        assert_eq!(json_depth(br#"{"a":"[[[[","b":[{}]}"#, 128), 3);
        assert_eq!(json_depth(br#"{"a":"\"[["}"#, 128), 1);
    }

    #[test]
    fn depth_limit_is_128_inclusive() {
        let ok = format!("{}{}", "[".repeat(128), "]".repeat(128));
        assert!(parse_json(ok.as_bytes()).is_ok());
        let deep = format!("{}{}", "[".repeat(129), "]".repeat(129));
        assert_eq!(parse_json(deep.as_bytes()), Err(JournalErrorKind::TooDeep));
    }

    #[test]
    fn torn_last_line_is_a_warning_unless_strict() {
        let s = "{\"rev\":1,\"ts\":\"t\",\"kind\":\"session\",\"id\":\"s\"}\n{\"rev\":2,\"ki";
        let j = parse(s, false).unwrap();
        assert_eq!(j.records.len(), 1);
        assert_eq!(j.warnings.len(), 1);
        let e = parse(s, true).unwrap_err();
        assert_eq!((e.line, e.offset), (2, 45));
        assert!(matches!(e.kind, JournalErrorKind::TornWrite(_)));
    }

    #[test]
    fn bad_line_in_the_middle_is_an_error_with_position() {
        let s = "{\"rev\":1,\"kind\":\"session\",\"id\":\"s\"}\r\n\n  \nnot json\n{\"rev\":2,\"kind\":\"x\"}\n";
        let e = parse(s, false).unwrap_err();
        assert_eq!((e.line, e.offset), (4, 41));
    }

    #[test]
    fn unknown_kind_is_kept_and_blank_lines_skipped() {
        let s = "{\"rev\":1,\"kind\":\"session\",\"id\":\"s\"}\n\n{\"rev\":2,\"kind\":\"telemetry\",\"x\":1}\n";
        let j = parse(s, false).unwrap();
        assert_eq!(j.records.len(), 2);
        assert_eq!(j.records[1].kind(), "telemetry");
        assert_eq!(j.records[1].line, 3);
    }

    #[test]
    fn lone_surrogate_is_invalid() {
        let s = "{\"rev\":1,\"kind\":\"user\",\"id\":\"u\",\"text\":\"\\ud800\"}\n";
        assert!(matches!(parse(s, false).unwrap_err().kind, JournalErrorKind::Json(_)));
    }
}
