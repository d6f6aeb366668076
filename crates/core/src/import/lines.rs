//! The readers' shared building blocks: [`parse_lines`] (JSONL into object [`Line`]s, odd lines
//! counted), the record [`Builder`] (gapless revs, non-decreasing timestamps, unique ids) and field
//! shorthands.

use std::collections::{HashMap, HashSet};
use std::path::Path;
use std::sync::Arc;

use chrono::{DateTime, FixedOffset};
use serde_json::{Map, Value};

use super::{ImportError, ImportReport};
use crate::journal::reader::parse_json;
use crate::journal::{Body, Journal, JournalError, JournalErrorKind, Record, Text};

/// One JSON object line of a transcript.
#[derive(Debug, Clone)]
pub struct Line {
    /// Physical line number from 1.
    pub no: usize,
    /// Byte offset of the line.
    pub offset: u64,
    pub obj: Map<String, Value>,
}

/// Splits `bytes` into lines and parses each with the journal's depth-limited parser. Lines that
/// are blank are ignored; lines that are invalid JSON or not an object are counted in `report`.
/// A file with lines but not one JSON object is an error pointing at its first bad line.
pub fn parse_lines(path: &Path, bytes: &[u8], report: &mut ImportReport) -> Result<Vec<Line>, ImportError> {
    let mut out = Vec::new();
    let mut first_bad: Option<(usize, u64, JournalErrorKind, Vec<u8>)> = None;
    let mut start = 0usize;
    let mut no = 0usize;
    while start < bytes.len() {
        let end = memchr::memchr(b'\n', &bytes[start..]).map_or(bytes.len(), |i| start + i);
        no += 1;
        let mut line = &bytes[start..end];
        if line.last() == Some(&b'\r') {
            line = &line[..line.len() - 1];
        }
        if !line.iter().all(|b| b.is_ascii_whitespace()) {
            match parse_json(line) {
                Ok(Value::Object(obj)) => out.push(Line { no, offset: start as u64, obj }),
                Ok(_) => {
                    report.skip("non-object JSON line");
                    first_bad.get_or_insert((no, start as u64, JournalErrorKind::NotAnObject, line.to_vec()));
                }
                Err(kind) => {
                    report.skip("invalid JSON line");
                    first_bad.get_or_insert((no, start as u64, kind, line.to_vec()));
                }
            }
        }
        start = end + 1;
    }
    report.lines = no;
    if out.is_empty() {
        return Err(match first_bad {
            Some((line, offset, kind, b)) => JournalError::at(path, line, offset, kind, &b).into(),
            None => JournalError::file(path, JournalErrorKind::Empty).into(),
        });
    }
    Ok(out)
}

/// Builds records in order: gapless revs, non-decreasing timestamps, unique block ids.
pub(crate) struct Builder {
    pub records: Vec<Record>,
    last_ts: Option<(DateTime<FixedOffset>, Text)>,
    ids: HashSet<String>,
    /// Per base id, the suffix to try next: a base taken N times costs N probes in all, not N²/2
    /// (30,000 unmatched Codex history items share one base; issue 21).
    next_suffix: HashMap<String, u64>,
    pub clamped: usize,
}

impl Builder {
    pub fn new() -> Self {
        Builder { records: Vec::new(), last_ts: None, ids: HashSet::new(), next_suffix: HashMap::new(), clamped: 0 }
    }

    /// The rev the next record will get.
    pub fn next_rev(&self) -> u64 {
        self.records.len() as u64 + 1
    }

    /// Appends a record; returns its rev. A missing, unparsable or earlier timestamp is replaced
    /// by the previous one (counted in `clamped` when it went backwards).
    pub fn push(&mut self, ts: Option<&str>, line: usize, offset: u64, body: Body) -> u64 {
        let parsed = ts.and_then(|s| DateTime::parse_from_rfc3339(s).ok().map(|d| (d, s)));
        let ts: Text = match (parsed, &self.last_ts) {
            (Some((d, s)), Some((last, last_s))) => {
                if d >= *last {
                    let t: Text = Arc::from(s);
                    self.last_ts = Some((d, t.clone()));
                    t
                } else {
                    self.clamped += 1;
                    last_s.clone()
                }
            }
            (Some((d, s)), None) => {
                let t: Text = Arc::from(s);
                self.last_ts = Some((d, t.clone()));
                t
            }
            (None, Some((_, last_s))) => last_s.clone(),
            (None, None) => {
                let s = "1970-01-01T00:00:00Z";
                let d = DateTime::parse_from_rfc3339(s).expect("constant");
                let t: Text = Arc::from(s);
                self.last_ts = Some((d, t.clone()));
                t
            }
        };
        let rev = self.next_rev();
        self.records.push(Record { rev, rev_recorded: true, ts, line, offset, body });
        rev
    }

    /// `base` if unused so far, else `base~2`, `base~3`, …; the returned id is reserved.
    pub fn unique_id(&mut self, base: &str) -> String {
        let base = if base.is_empty() { "id" } else { base };
        if self.ids.insert(base.to_string()) {
            return base.to_string();
        }
        let n = self.next_suffix.entry(base.to_string()).or_insert(2);
        loop {
            let cand = format!("{base}~{n}");
            *n += 1;
            if self.ids.insert(cand.clone()) {
                return cand;
            }
        }
    }

    /// Marks an id as used (ids chosen elsewhere, such as tool-call ids).
    pub fn reserve(&mut self, id: &str) -> bool {
        self.ids.insert(id.to_string())
    }

    pub fn finish(self, path: &Path) -> Journal {
        Journal::from_records(path, self.records)
    }
}

/// Shorthand: a string field of an object.
pub(crate) fn s<'a>(o: &'a Map<String, Value>, k: &str) -> Option<&'a str> {
    o.get(k).and_then(Value::as_str)
}

/// Shorthand: an unsigned integer field (accepting integral floats) of an object.
pub(crate) fn u(o: &Map<String, Value>, k: &str) -> Option<u64> {
    let v = o.get(k)?;
    v.as_u64().or_else(|| v.as_f64().filter(|f| *f >= 0.0 && f.fract() == 0.0).map(|f| f as u64))
}

/// Integral f64 for token estimates such as `tokens_before`.
pub(crate) fn f(v: Option<u64>) -> Option<f64> {
    v.map(|x| x as f64)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn builder_clamps_and_dedups() {
        let mut b = Builder::new();
        let body = || Body::Unknown { kind: "x".into() };
        b.push(Some("2026-01-01T00:00:02Z"), 1, 0, body());
        b.push(Some("2026-01-01T00:00:01Z"), 2, 0, body());
        b.push(None, 3, 0, body());
        assert_eq!(&*b.records[1].ts, "2026-01-01T00:00:02Z");
        assert_eq!(&*b.records[2].ts, "2026-01-01T00:00:02Z");
        assert_eq!(b.clamped, 1);
        assert_eq!(b.unique_id("a"), "a");
        assert_eq!(b.unique_id("a"), "a~2");
        assert_eq!(b.records.iter().map(|r| r.rev).collect::<Vec<_>>(), vec![1, 2, 3]);
    }

    #[test]
    fn odd_lines_are_counted_not_fatal() {
        let mut r = ImportReport::default();
        let lines = parse_lines(Path::new("x"), b"\"s\"\n42\n{\"type\":null}\nnot json\n\n", &mut r).unwrap();
        assert_eq!(lines.len(), 1);
        assert_eq!(r.skipped["non-object JSON line"], 2);
        assert_eq!(r.skipped["invalid JSON line"], 1);
        let err = parse_lines(Path::new("x"), b"1\n2\n", &mut ImportReport::default()).unwrap_err();
        assert!(err.to_string().contains("x:1 (byte 0)"), "{err}");
    }
}
