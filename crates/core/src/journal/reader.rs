//! Parallel parsing of a journal into typed records (spec §1 line rules).
//!
//! Lines are indexed with memchr ([`super::index`]) and parsed in parallel with rayon. Blank
//! lines are skipped; a last line without `\n` that does not parse is a torn write, tolerated with
//! a warning unless [`ReadOptions::strict`]. Nesting deeper than 128 levels is refused by a
//! byte scan before serde_json sees the line, so no input can exhaust the stack.

use std::collections::HashMap;
use std::path::{Path, PathBuf};

use rayon::prelude::*;

use super::error::{JournalError, JournalErrorKind, Warning};
use super::index::{index_lines, Line};
use super::record::{Body, Record};

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

/// Bytes parsed between two calls of the `release` hook of [`parse_bytes_releasing`].
pub const PARSE_CHUNK: usize = 64 << 20;

/// Parses journal bytes. `path` is used in messages only.
pub fn parse_bytes(path: &Path, bytes: &[u8], opts: ReadOptions) -> Result<Journal, JournalError> {
    parse_bytes_releasing(path, bytes, opts, &|_, _| {})
}

/// [`parse_bytes`], calling `release(start, end)` for each stretch of about [`PARSE_CHUNK`]
/// bytes once it is parsed and will not be read again. [`super::Session::load`] passes
/// [`super::mmap::Source::release`] so that the mapped pages of a large journal leave the resident
/// set as its records are built: peak memory is the records plus one chunk, not the records plus
/// the whole file.
pub fn parse_bytes_releasing(
    path: &Path,
    bytes: &[u8],
    opts: ReadOptions,
    release: &dyn Fn(usize, usize),
) -> Result<Journal, JournalError> {
    parse_chunked(path, bytes, opts, PARSE_CHUNK, release)
}

fn parse_chunked(
    path: &Path,
    bytes: &[u8],
    opts: ReadOptions,
    chunk: usize,
    release: &dyn Fn(usize, usize),
) -> Result<Journal, JournalError> {
    // A tail of NUL bytes is zero fill (a preallocated or sparse file, a crash before the data
    // reached the disk), not a torn line: reported as such and not parsed.
    let fill = nul_tail(bytes, release);
    if fill > 0 && opts.strict {
        return Err(JournalError::at(
            path,
            0,
            (bytes.len() - fill) as u64,
            JournalErrorKind::ZeroFill(fill as u64),
            b"",
        ));
    }
    let full_len = bytes.len();
    let bytes = &bytes[..full_len - fill];
    let mut journal = parse_lines(path, bytes, opts, chunk, release)?;
    if fill > 0 {
        journal.warnings.push(Warning {
            line: 0,
            offset: 0,
            message: format!("{} at byte {}: ignored", JournalErrorKind::ZeroFill(fill as u64), full_len - fill),
        });
    }
    Ok(journal)
}

/// Length of the run of NUL bytes that ends `bytes`, scanned backwards a MiB at a time (pages
/// released as they are passed, so a sparse multi-GiB tail does not stay resident).
fn nul_tail(bytes: &[u8], release: &dyn Fn(usize, usize)) -> usize {
    const STEP: usize = 1 << 20;
    // Compared with `memcmp` against zeros: fast in every build profile.
    static ZEROS: [u8; STEP] = [0; STEP];
    let mut end = bytes.len();
    while end > 0 {
        let start = end.saturating_sub(STEP);
        let block = &bytes[start..end];
        if block != &ZEROS[..block.len()] {
            let i = block.iter().rposition(|&b| b != 0).unwrap_or(0);
            return bytes.len() - (start + i + 1);
        }
        release(start, end);
        end = start;
    }
    bytes.len()
}

fn parse_lines(
    path: &Path,
    bytes: &[u8],
    opts: ReadOptions,
    chunk: usize,
    release: &dyn Fn(usize, usize),
) -> Result<Journal, JournalError> {
    let lines: Vec<Line> = index_lines(bytes)
        .into_iter()
        .filter(|l| !bytes[l.start..l.end].iter().all(|b| matches!(b, b' ' | b'\t' | b'\r')))
        .collect();

    let mut journal = Journal { path: path.to_path_buf(), ..Journal::default() };
    journal.records.reserve(lines.len());
    let n = lines.len();
    let mut from = 0;
    while from < n {
        let chunk_start = lines[from].start;
        let mut to = from;
        while to < n && (to == from || lines[to].end - chunk_start < chunk) {
            to += 1;
        }
        let parsed: Vec<Result<Record, JournalErrorKind>> =
            lines[from..to].par_iter().with_min_len(16).map(|l| parse_line(&bytes[l.start..l.end], l)).collect();
        for (i, (line, res)) in (from..to).zip(lines[from..to].iter().zip(parsed)) {
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
                            message: format!(
                                "torn last line ignored ({} bytes without a newline): {kind}",
                                slice.len()
                            ),
                        });
                    } else {
                        let kind = if torn { JournalErrorKind::TornWrite(kind.to_string()) } else { kind };
                        return Err(JournalError::at(path, line.number, line.start as u64, kind, slice));
                    }
                }
            }
        }
        release(chunk_start, lines[to - 1].end);
        from = to;
    }
    check_revs(&mut journal);
    if journal.records.is_empty() {
        journal.warnings.push(Warning {
            line: 0,
            offset: 0,
            message: format!("{} ({} bytes)", JournalErrorKind::Empty, bytes.len()),
        });
    }
    journal.build_index();
    Ok(journal)
}

/// Warns once when recorded revs are not 1, 2, 3, … in file order (a gap, a duplicate or a
/// reversal): the journal stays readable, but `--at rev N` then means "the records up to the first
/// one whose rev exceeds N", and `validate` reports each place.
fn check_revs(journal: &mut Journal) {
    let mut first: Option<(usize, u64, u64, u64)> = None;
    let mut places = 0usize;
    let mut prev = 0u64;
    for r in &journal.records {
        if r.rev != prev.saturating_add(1) {
            places += 1;
            first.get_or_insert((r.line, r.offset, r.rev, prev));
        }
        prev = r.rev;
    }
    if let Some((line, offset, rev, prev)) = first {
        let what = match rev.cmp(&prev) {
            std::cmp::Ordering::Equal => "repeats",
            std::cmp::Ordering::Less => "goes back from",
            std::cmp::Ordering::Greater => "skips ahead of",
        };
        journal.warnings.push(Warning {
            line,
            offset,
            message: format!(
                "rev {rev} {what} rev {prev}: revs are not gapless ({places} place(s); `ctxj validate` lists them)"
            ),
        });
    }
}

pub use super::json::{check_values, json_depth, parse_json, replace_lone_surrogates, MAX_DEPTH, MAX_VALUES};
use super::line::parse_line;
pub use super::line::record_from_value;

/// Parses journal text held in memory (unit tests of other modules).
#[cfg(test)]
pub(crate) fn parse_bytes_for_test(s: &str) -> Journal {
    parse_bytes(Path::new("j.jsonl"), s.as_bytes(), ReadOptions::default()).unwrap()
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::journal::line::{one_pass, parse_line_fast, parse_line_slow};
    use serde_json::Value;

    fn parse(s: &str, strict: bool) -> Result<Journal, JournalError> {
        parse_bytes(Path::new("j.jsonl"), s.as_bytes(), ReadOptions { strict })
    }

    #[test]
    fn depth_scanner_ignores_brackets_in_strings() {
        assert_eq!(json_depth(br#"{"a":"[[[[","b":[{}]}"#, 128), 3);
        assert_eq!(json_depth(br#"{"a":"\"[["}"#, 128), 1);
    }

    /// The byte-at-a-time scanner `json_depth` replaced, kept as the reference.
    fn json_depth_reference(bytes: &[u8], limit: usize) -> usize {
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

    proptest::proptest! {
        #[test]
        fn depth_scanner_agrees_with_the_reference(s in "[\\[\\]{}\"\\\\a ]{0,40}", limit in 0usize..6) {
            proptest::prop_assert_eq!(json_depth(s.as_bytes(), limit), json_depth_reference(s.as_bytes(), limit));
        }
    }

    /// The slow path alone: parse to a `Value` (number text restored), then to a record.
    fn slow(bytes: &[u8]) -> Result<Record, JournalErrorKind> {
        let l = Line { number: 1, start: 0, end: bytes.len(), terminated: true };
        parse_line_slow(bytes, &l)
    }

    fn both(s: &str) -> (String, String) {
        let l = Line { number: 1, start: 0, end: s.len(), terminated: true };
        (format!("{:?}", parse_line(s.as_bytes(), &l)), format!("{:?}", slow(s.as_bytes())))
    }

    #[test]
    fn mirror_drafts_stay_text_as_written_and_parse_with_their_numbers() {
        // Regression (issue 20): drafts were kept as `Value` trees, several times their size.
        let draft = r#"{ "blocks" : [ {"type":"user","id":"u","text":"x"} ], "n": 1.50 }"#;
        let fast =
            format!(r#"{{"rev":1,"kind":"mirror","mirror_rev":1,"base_rev":1,"status":"rejected","draft":{draft}}}"#);
        // `2E0` sends the line down the slow path, which must keep the number's text too.
        let slow_line = fast.replace("1.50", "2E0");
        for (line, n) in [(&fast, "1.50"), (&slow_line, "2E0")] {
            let l = Line { number: 1, start: 0, end: line.len(), terminated: true };
            let Body::Mirror(m) = parse_line(line.as_bytes(), &l).unwrap().body else { panic!() };
            let v = m.draft.parse().unwrap();
            assert_eq!(serde_json::to_string(&v["n"]).unwrap(), n);
            assert_eq!(v["blocks"][0]["text"], "x");
        }
        let l = Line { number: 1, start: 0, end: fast.len(), terminated: true };
        let Body::Mirror(m) = parse_line(fast.as_bytes(), &l).unwrap().body else { panic!() };
        assert_eq!(m.draft.json(), draft);
        let none = r#"{"rev":1,"kind":"mirror","mirror_rev":1,"base_rev":1,"status":"accepted"}"#;
        let Body::Mirror(m) = parse_line(none.as_bytes(), &l).unwrap().body else { panic!() };
        assert_eq!((m.draft.json(), m.draft.parse().unwrap()), ("null", Value::Null));
    }

    #[test]
    fn fast_paths_agree_with_the_slow_path() {
        let deep = format!(r#"{{"rev":1,"kind":"x","v":{}{}}}"#, "[".repeat(127), "]".repeat(127));
        let lines = [
            r#"{"rev":3,"ts":"t","kind":"result","call":"c","tool":"run","text":"a\nb\u00e9","bytes":9}"#,
            r#"{"kind":"user","rev":4,"id":"u","text":"x","ts":"t2"}"#,
            r#"{"id":"u","kind":"user","rev":4,"text":"x"}"#,
            r#"{"rev":4,"kind":"user","id":"u","text":"x","text":"y"}"#,
            r#"{"rev":4,"rev":5,"kind":"user","id":"u","text":"x"}"#,
            r#"{"rev":-0,"kind":"user","id":"u","text":"x"}"#,
            r#"{"rev":1.0,"kind":"user","id":"u","text":"x"}"#,
            r#"{"rev":1,"ts":null,"kind":"user","id":"u","text":"x"}"#,
            r#"{"rev":1,"kind":"assistant","id":"a","text":null,"calls":[{"id":"c","tool":"t","args":{"b":1.50,"a":[1e400]}}]}"#,
            r#"{"rev":1,"kind":"assistant","id":"a","calls":[{"id":"c","tool":"t","args":{"b":1.50,"a":[10000000000000000000000]}}]}"#,
            r#"{"rev":1,"kind":"assistant","id":"a","text":5}"#,
            r#"{"rev":1,"kind":"telemetry","x":{"y":[1,2]},"ts":"late"}"#,
            r#"{"rev":1,"kind":"telemetry","x":"\ud800"}"#,
            r#"{"rev":1,"kind":"user","id":"u","text":"\ud83d\ude00"}"#,
            r#"{"rev":1,"kind":"user","id":"u"}"#,
            r#"{"rev":1,"kind":7}"#,
            r#"[1,"t","user"]"#,
            r#"{"rev":1,"kind":"user","id":"u","text":"x"} trailing"#,
            r#"{"rev":1,"kind":"system","text":"s","tools":null}"#,
            r#"{"rev":1,"kind":"mirror","mirror_rev":1,"base_rev":1,"status":"accepted","draft":{"blocks":[]}}"#,
            deep.as_str(),
        ];
        for l in lines {
            let (fast, slow) = both(l);
            assert_eq!(fast, slow, "{l}");
        }
        // The tiers are really taken: one pass, then the two-pass envelope, then the slow path.
        let l = Line { number: 1, start: 0, end: 0, terminated: true };
        assert!(one_pass(lines[0], &l).is_some() && one_pass(lines[1], &l).is_some());
        assert!(one_pass(lines[2], &l).is_none() && parse_line_fast(lines[2].as_bytes(), &l).is_some());
        assert!(parse_line_fast(lines[3].as_bytes(), &l).is_none() && slow(lines[3].as_bytes()).is_ok());
    }

    #[test]
    fn chunked_parse_gives_the_same_journal_and_releases_every_parsed_byte() {
        let mut s = String::new();
        for i in 1..=40 {
            s.push_str(&format!("{{\"rev\":{i},\"kind\":\"user\",\"id\":\"u{i}\",\"text\":\"{}\"}}\n", "x".repeat(i)));
            if i % 7 == 0 {
                s.push_str("  \n");
            }
        }
        s.push_str("{\"rev\":41,\"ki");
        let whole = parse(&s, false).unwrap();
        let released = std::cell::RefCell::new(Vec::new());
        let chunked = parse_chunked(Path::new("j.jsonl"), s.as_bytes(), ReadOptions::default(), 100, &|a, b| {
            released.borrow_mut().push((a, b))
        })
        .unwrap();
        assert_eq!(format!("{:?}", chunked.records), format!("{:?}", whole.records));
        assert_eq!(format!("{:?}", chunked.warnings), format!("{:?}", whole.warnings));
        let r = released.into_inner();
        assert!(r.len() > 5, "{r:?}");
        assert_eq!(r[0].0, 0);
        assert!(r.windows(2).all(|w| w[0].1 < w[1].0 && w[1].0 <= w[0].1 + 4), "{r:?}");
        assert_eq!(r.last().unwrap().1, s.len());
        let e = parse_chunked(Path::new("j.jsonl"), s.as_bytes(), ReadOptions { strict: true }, 100, &|_, _| {});
        assert_eq!(e.unwrap_err().line, parse(&s, true).unwrap_err().line);
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
    fn empty_and_blank_journals_warn_instead_of_failing() {
        for s in ["", "\n\n\n", " \r\n\t\n"] {
            let j = parse(s, true).unwrap();
            assert!(j.records.is_empty());
            assert_eq!(j.warnings.len(), 1, "{s:?}");
            assert!(j.warnings[0].to_string().starts_with("the journal holds no records"), "{}", j.warnings[0]);
        }
    }

    #[test]
    fn rev_gap_duplicate_and_reversal_warn_once_at_the_first_place() {
        let rec = |rev: u64| format!("{{\"rev\":{rev},\"kind\":\"x\"}}\n");
        let cases: [(&[u64], &str, usize); 4] = [
            (&[1, 2, 3], "", 0),
            (&[1, 2, 5, 6], "rev 5 skips ahead of rev 2: revs are not gapless (1 place(s)", 3),
            (&[1, 2, 2, 3], "rev 2 repeats rev 2: revs are not gapless (1 place(s)", 3),
            (&[1, 3, 2, 4], "rev 3 skips ahead of rev 1: revs are not gapless (3 place(s)", 2),
        ];
        for (revs, want, line) in cases {
            let s: String = revs.iter().map(|r| rec(*r)).collect();
            let j = parse(&s, false).unwrap();
            if want.is_empty() {
                assert!(j.warnings.is_empty());
                continue;
            }
            assert_eq!(j.warnings.len(), 1);
            assert_eq!(j.warnings[0].line, line);
            assert!(j.warnings[0].message.starts_with(want), "{}", j.warnings[0].message);
        }
    }

    #[test]
    fn lone_surrogate_is_invalid() {
        let s = "{\"rev\":1,\"kind\":\"user\",\"id\":\"u\",\"text\":\"\\ud800\"}\n";
        assert!(matches!(parse(s, false).unwrap_err().kind, JournalErrorKind::Json(_)));
    }
}
