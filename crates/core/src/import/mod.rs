//! Import of foreign transcripts (Claude Code, Codex, pi) into journal-v1 records in memory.
//!
//! Every reader turns one transcript file into a [`Journal`] built with
//! [`Journal::from_records`] plus an [`ImportReport`] that says what the format did not record
//! (no system prompt, no tool schemas, …), which lines were skipped and why, and which branches or
//! side sessions were left out. Nothing is invented: what is missing stays missing and is listed.
//!
//! * [`detect`] recognises a format by the content of the first lines (file names only break
//!   ties);
//! * [`claude_code`], [`codex`], [`pi`] are the readers;
//! * [`load`] is what the CLI's `Ctx::load` calls: a ctxj session, a transcript file, or a folder
//!   holding exactly one session;
//! * [`scan`] finds every session under a folder (for folder arguments and `ctxj sessions`);
//!   [`write`] serialises a journal as a journal-v1 session (for `ctxj import`). Usage accounting
//!   and session summaries live in [`crate::usage`].
//!
//! Readers never panic on odd lines: a line that is not JSON, not an object, or has no usable
//! `type` is skipped and counted. Only a file with no usable line at all is an error, reported
//! with its path, line and offset.

pub mod claude_code;
pub mod codex;
mod content;
pub mod detect;
pub mod pi;
pub mod scan;
pub mod write;

use std::collections::{BTreeMap, HashMap, HashSet};
use std::fmt;
use std::path::{Path, PathBuf};
use std::sync::Arc;

use chrono::{DateTime, FixedOffset};
use serde_json::{Map, Value};

use crate::journal::reader::parse_json;
use crate::journal::{Body, Journal, JournalError, JournalErrorKind, ReadOptions, Record, Session, SessionError, Text};

pub(crate) use crate::tokens::image::Rule as ImageRule;
pub use detect::{detect_bytes, detect_file};

/// A transcript format ctxj reads.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum Format {
    ClaudeCode,
    Codex,
    Pi,
    Ctxj,
}

impl Format {
    /// The name used by `--from` and in reports.
    pub fn name(self) -> &'static str {
        match self {
            Format::ClaudeCode => "claude-code",
            Format::Codex => "codex",
            Format::Pi => "pi",
            Format::Ctxj => "ctxj",
        }
    }

    /// What a file of this format is, for messages ("a Codex transcript").
    pub fn describe(self) -> &'static str {
        match self {
            Format::ClaudeCode => "a Claude Code transcript",
            Format::Codex => "a Codex transcript",
            Format::Pi => "a pi transcript",
            Format::Ctxj => "a ctxj journal",
        }
    }
}

impl fmt::Display for Format {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())
    }
}

/// What `--from` asked for: detect, or force one format.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum FromFormat {
    #[default]
    Auto,
    Fixed(Format),
}

/// Why a transcript could not be imported.
#[derive(Debug, thiserror::Error)]
pub enum ImportError {
    #[error(transparent)]
    Session(#[from] SessionError),
    #[error(transparent)]
    Journal(#[from] JournalError),
    #[error("{path}: {err}")]
    Io { path: String, err: std::io::Error },
    #[error("{path}: cannot tell the format (not a ctxj journal, Claude Code, Codex or pi transcript); force one with --from")]
    Unknown { path: String },
    #[error("{path}: {n} sessions found in this folder; name one of them (see `ctxj sessions {path}`)")]
    Ambiguous { path: String, n: usize },
    #[error("{path}: no session found in this folder")]
    EmptyFolder { path: String },
    #[error(
        "{path}: --from {forced} expects {expected}, but the content is {found}; drop --from or name the right format"
    )]
    WrongFormat { path: String, forced: &'static str, expected: &'static str, found: &'static str },
    #[error("{path}: not one record read as {format} from {lines} line(s) (skipped: {skipped}); is --from right?")]
    NothingRead { path: String, format: &'static str, lines: usize, skipped: String },
    #[error("{path}: no side session {name:?} in this transcript (known: {known})")]
    NoSuchPart { path: String, name: String, known: String },
}

/// Counts of what an import dropped, kept aside or could not represent.
#[derive(Debug, Clone, Default, PartialEq, Eq, serde::Serialize, schemars::JsonSchema)]
pub struct Dropped {
    /// API calls (turns) left out.
    pub turns: usize,
    /// Tool calls left out.
    pub calls: usize,
    /// Tool results left out.
    pub results: usize,
    /// Compactions left out.
    pub compactions: usize,
}

/// A session that lives beside the imported one (a sidechain, a subagent file).
#[derive(Debug, Clone, PartialEq, Eq, serde::Serialize, schemars::JsonSchema)]
pub struct Child {
    /// What to pass to `load` to open it (`file.jsonl#name` for inline sidechains).
    pub spec: String,
    /// Short description (`sidechain`, `subagent`, `compaction call`).
    pub role: String,
    /// Lines in it.
    pub lines: usize,
}

/// What an import did: the format, what is missing, what was skipped and why.
#[derive(Debug, Clone, Default, serde::Serialize, schemars::JsonSchema)]
pub struct ImportReport {
    /// The format read (`None` for a ctxj journal read as is).
    pub format: Option<&'static str>,
    pub source: PathBuf,
    /// Physical lines in the file.
    pub lines: usize,
    /// Things the format does not record (`system prompt`, `tool schemas`): reported, never invented.
    pub missing: Vec<String>,
    /// Skipped records by type (`progress`, `system/turn_duration`, `invalid JSON`, …).
    pub skipped: BTreeMap<String, usize>,
    /// Other branches of the conversation tree, reported and not merged.
    pub branches: usize,
    /// What the other branches (and other dropped lines) held.
    pub dropped: Dropped,
    /// Content that has no journal-v1 field (thinking blocks, reasoning items, …), by kind.
    pub unrepresented: BTreeMap<String, usize>,
    /// Side sessions (sidechains, subagents) listed with this one.
    pub children: Vec<Child>,
    /// Free-form notes (quirks met, fallbacks taken).
    pub notes: Vec<String>,
    /// Timestamps moved forward to keep `ts` non-decreasing.
    pub ts_clamped: usize,
}

impl ImportReport {
    pub fn new(format: Format, source: &Path) -> Self {
        ImportReport { format: Some(format.name()), source: source.to_path_buf(), ..Default::default() }
    }

    /// Counts one skipped record of `what`.
    pub fn skip(&mut self, what: impl Into<String>) {
        *self.skipped.entry(what.into()).or_default() += 1;
    }

    /// Counts one piece of content that journal-v1 cannot hold.
    pub fn lose(&mut self, what: impl Into<String>) {
        *self.unrepresented.entry(what.into()).or_default() += 1;
    }

    pub fn note(&mut self, s: impl Into<String>) {
        let s = s.into();
        if !self.notes.contains(&s) {
            self.notes.push(s);
        }
    }

    /// A one-paragraph summary for stderr.
    pub fn summary(&self) -> String {
        let mut parts = Vec::new();
        if !self.missing.is_empty() {
            parts.push(format!("not recorded by the format: {}", self.missing.join(", ")));
        }
        if self.branches > 0 {
            use crate::text::count;
            parts.push(format!(
                "{} not merged ({}, {}, {})",
                count(self.branches, "other branch", "other branches"),
                count(self.dropped.turns, "turn", "turns"),
                count(self.dropped.calls, "call", "calls"),
                count(self.dropped.results, "result", "results")
            ));
        }
        let skipped: usize = self.skipped.values().sum();
        if skipped > 0 {
            let top: Vec<String> = self.skipped.iter().map(|(k, v)| format!("{k} {v}")).collect();
            parts.push(format!("skipped {skipped} record(s): {}", top.join(", ")));
        }
        if !self.notes.is_empty() {
            parts.push(self.notes.join("; "));
        }
        if !self.children.is_empty() {
            parts.push(format!(
                "{} side session(s): {}",
                self.children.len(),
                self.children.iter().map(|c| c.spec.as_str()).collect::<Vec<_>>().join(", ")
            ));
        }
        parts.join("; ")
    }
}

/// A transcript imported into memory.
#[derive(Debug, Clone)]
pub struct Imported {
    pub journal: Journal,
    pub report: ImportReport,
    /// Attachment files the transcript holds inline: (path relative to a session directory,
    /// base64 payload). `ctxj import` writes them beside the journal.
    pub files: Vec<(String, Text)>,
}

/// What [`load`] found: the session (for confined reads), its journal and, for a foreign
/// transcript, the import report.
#[derive(Debug, Clone)]
pub struct Loaded {
    /// For an imported transcript: `dir` is the transcript's folder (nothing is ever written
    /// there) and `journal_path` the transcript.
    pub session: Session,
    pub journal: Journal,
    pub format: Format,
    pub report: Option<ImportReport>,
    /// Inline attachment payloads of an imported transcript (see [`Imported::files`]).
    pub files: Vec<(String, Text)>,
}

/// Opens what the user named: a ctxj session (directory, `journal.jsonl`, id under `root`), a
/// transcript file of any supported format (`file.jsonl#part` for a side session kept inside a
/// Claude Code file), or a folder holding exactly one session.
pub fn load(spec: &str, from: FromFormat, root: Option<&Path>, opts: ReadOptions) -> Result<Loaded, ImportError> {
    // A session directory or a bare id is a ctxj session (spec §1) unless --from says otherwise;
    // a file is recognised by its content.
    if !Path::new(spec).is_file() {
        if let Ok(session) = Session::resolve(spec, root) {
            match from {
                FromFormat::Auto | FromFormat::Fixed(Format::Ctxj) => {
                    let journal = session.load(opts)?;
                    return Ok(Loaded { session, journal, format: Format::Ctxj, report: None, files: Vec::new() });
                }
                FromFormat::Fixed(f) => {
                    check_forced(&session.journal_path, f)?;
                    return load_file(&session.journal_path, None, f);
                }
            }
        }
    }
    if from == FromFormat::Fixed(Format::Ctxj) {
        let session = Session::resolve(spec, root)?;
        let journal = session.load(opts)?;
        return Ok(Loaded { session, journal, format: Format::Ctxj, report: None, files: Vec::new() });
    }
    let p = Path::new(spec);
    let (path, part) = split_part(p);
    if path.is_dir() {
        let found = scan::find_sessions(&path, from);
        let mains: Vec<&scan::Found> = found.iter().filter(|f| f.parent.is_none()).collect();
        // A Claude Code session folder (`<session>/subagents/…`) stands for `<session>.jsonl`.
        let parents: std::collections::BTreeSet<&PathBuf> = found.iter().filter_map(|f| f.parent.as_ref()).collect();
        return match mains.as_slice() {
            [one] => load_file(&one.path, one.part.as_deref(), one.format),
            [] if parents.len() == 1 && parents.first().is_some_and(|p| p.is_file()) => {
                load_file(parents.first().expect("one"), None, Format::ClaudeCode)
            }
            [] => Err(ImportError::EmptyFolder { path: spec.to_string() }),
            many => Err(ImportError::Ambiguous { path: spec.to_string(), n: many.len() }),
        };
    }
    if !path.is_file() {
        return Err(SessionError::NotFound(spec.to_string()).into());
    }
    let fmt = match from {
        FromFormat::Fixed(f) => {
            check_forced(&path, f)?;
            f
        }
        // Not recognisably foreign: read as a journal, whose errors name the first bad line.
        FromFormat::Auto => detect_file(&path).unwrap_or(Format::Ctxj),
    };
    if fmt == Format::Ctxj {
        let session = Session::resolve(&path.to_string_lossy(), None)?;
        let journal = session.load(opts)?;
        return Ok(Loaded { session, journal, format: Format::Ctxj, report: None, files: Vec::new() });
    }
    load_file(&path, part.as_deref(), fmt)
}

/// A forced `--from` must match what the content looks like (when detection recognises it at all):
/// `validate journal.jsonl --from pi` is an error, not an empty pi session.
fn check_forced(path: &Path, forced: Format) -> Result<(), ImportError> {
    match detect_file(path) {
        Some(found) if found != forced => Err(ImportError::WrongFormat {
            path: path.display().to_string(),
            forced: forced.name(),
            expected: forced.describe(),
            found: found.describe(),
        }),
        _ => Ok(()),
    }
}

/// `file.jsonl#name` → (`file.jsonl`, `Some(name)`) when `file.jsonl#name` itself is not a file.
fn split_part(p: &Path) -> (PathBuf, Option<String>) {
    if p.exists() {
        return (p.to_path_buf(), None);
    }
    let s = p.to_string_lossy();
    match s.rfind('#') {
        Some(i) if Path::new(&s[..i]).is_file() => (PathBuf::from(&s[..i]), Some(s[i + 1..].to_string())),
        _ => (p.to_path_buf(), None),
    }
}

fn load_file(path: &Path, part: Option<&str>, fmt: Format) -> Result<Loaded, ImportError> {
    let imported = import_file(path, fmt, part)?;
    let dir = match path.parent() {
        Some(d) if !d.as_os_str().is_empty() => d.to_path_buf(),
        _ => PathBuf::from("."),
    };
    Ok(Loaded {
        session: Session { dir, journal_path: path.to_path_buf() },
        journal: imported.journal,
        format: fmt,
        report: Some(imported.report),
        files: imported.files,
    })
}

/// Imports one transcript file of a known foreign format. `part` names a side session inside a
/// Claude Code file (an inline sidechain).
pub fn import_file(path: &Path, fmt: Format, part: Option<&str>) -> Result<Imported, ImportError> {
    let bytes = crate::journal::input::read_regular(path)
        .map_err(|err| ImportError::Io { path: path.display().to_string(), err })?;
    let imported = import_bytes(path, &bytes, fmt, part)?;
    nothing_read(path, fmt, &imported)?;
    Ok(imported)
}

/// A transcript with lines of which the reader used none is an error (an empty file is not: it
/// stays the reader's "holds no records" case). The journal then holds at most the header the
/// reader writes itself.
fn nothing_read(path: &Path, fmt: Format, i: &Imported) -> Result<(), ImportError> {
    let skipped: usize = i.report.skipped.values().sum();
    if fmt == Format::Ctxj || i.journal.records.len() > 1 || skipped == 0 {
        return Ok(());
    }
    let kinds: Vec<String> = i.report.skipped.iter().take(4).map(|(k, n)| format!("{n} {k}")).collect();
    Err(ImportError::NothingRead {
        path: path.display().to_string(),
        format: fmt.name(),
        lines: i.report.lines,
        skipped: kinds.join(", "),
    })
}

/// Imports transcript bytes; `path` is used for messages and ids only.
pub fn import_bytes(path: &Path, bytes: &[u8], fmt: Format, part: Option<&str>) -> Result<Imported, ImportError> {
    match fmt {
        Format::ClaudeCode => claude_code::read(path, bytes, part),
        Format::Codex => codex::read(path, bytes),
        Format::Pi => pi::read(path, bytes),
        Format::Ctxj => {
            let journal = crate::journal::parse_bytes(path, bytes, ReadOptions::default())?;
            Ok(Imported {
                journal,
                report: ImportReport { source: path.to_path_buf(), ..Default::default() },
                files: Vec::new(),
            })
        }
    }
}

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

/// Decoded length of a base64 payload (padding and whitespace ignored).
pub(crate) fn base64_len(data: &str) -> u64 {
    let n = data
        .bytes()
        .filter(|b| b.is_ascii_alphanumeric() || *b == b'+' || *b == b'/' || *b == b'-' || *b == b'_')
        .count();
    (n as u64 * 3) / 4
}

/// Decodes standard or URL-safe base64, with or without padding, ignoring whitespace; `None` on
/// any other character.
pub fn base64_decode(data: &str) -> Option<Vec<u8>> {
    use base64::engine::{general_purpose::GeneralPurpose, DecodePaddingMode, GeneralPurposeConfig};
    use base64::Engine as _;
    const LENIENT: GeneralPurpose = GeneralPurpose::new(
        &base64::alphabet::STANDARD,
        GeneralPurposeConfig::new()
            .with_decode_padding_mode(DecodePaddingMode::Indifferent)
            .with_decode_allow_trailing_bits(true),
    );
    let standard: Vec<u8> = data
        .bytes()
        .filter(|b| *b != b'=' && !b.is_ascii_whitespace())
        .map(|b| match b {
            b'-' => b'+',
            b'_' => b'/',
            b => b,
        })
        .collect();
    LENIENT.decode(standard).ok()
}

/// The file extension for an image media type.
pub(crate) fn image_ext(media: &str) -> &'static str {
    match media {
        "image/png" => "png",
        "image/jpeg" | "image/jpg" => "jpg",
        "image/gif" => "gif",
        "image/webp" => "webp",
        "application/pdf" => "pdf",
        _ => "bin",
    }
}

/// An image (or document) of a user message: its media type and, when the transcript holds it,
/// its base64 payload.
pub(crate) struct Image {
    pub kind: &'static str,
    pub media: String,
    pub data: Option<Text>,
}

/// Attachments for the images of user `uid`. An image whose payload the transcript holds becomes
/// an attachment (`<uid>.att/<kind>-N.<ext>`, payload queued in `files` for `ctxj import`) whose
/// preview is its [`image_text`] under `rule` (the provider's image rule, `None` when not
/// modelled); one without (a URL, a redaction) becomes a placeholder line in `texts`, since there
/// is no file to point at.
pub(crate) fn attach(
    b: &mut Builder,
    uid: &str,
    images: Vec<Image>,
    rule: Option<ImageRule>,
    texts: &mut Vec<String>,
    files: &mut Vec<(String, Text)>,
    report: &mut ImportReport,
) -> Vec<crate::journal::AttachmentRef> {
    let mut out = Vec::new();
    for (n, img) in images.into_iter().enumerate() {
        let Some(data) = img.data.filter(|d| !d.is_empty()) else {
            texts.push(format!("[{}: {}]", img.kind, img.media));
            report.lose(format!("{} without its payload (placeholder line in the text)", img.kind));
            continue;
        };
        let bytes = base64_len(&data);
        let rel = format!("{uid}.att/{}-{}.{}", img.kind, n + 1, image_ext(&img.media));
        let preview = match img.kind {
            "image" => image_text(&img.media, &data, rule, report),
            _ => format!("[{}: {}, {bytes} bytes]", img.kind, img.media),
        };
        files.push((rel.clone(), data));
        out.push(crate::journal::AttachmentRef {
            id: b.unique_id(&format!("{uid}.{}{}", img.kind, n + 1)),
            path: rel,
            bytes,
            preview: Arc::from(preview),
        });
    }
    out
}

/// Note of an image counted as its placeholder text because its header gave no size.
pub const IMAGE_UNSIZED_NOTE: &str =
    "an image header gave no size: the image is counted as its placeholder text, not as the provider counts it";
/// Note of an image counted as its placeholder text because its provider's rule is not modelled.
pub const IMAGE_NO_RULE_NOTE: &str =
    "an image went to a provider whose image rule is not modelled: it is counted as its placeholder text";

/// The text an inline image of `media` with base64 payload `data` becomes: the provider's
/// estimate ([`crate::tokens::image::marker`], `[image: image/png, 311409 bytes, 2536×2508 ≈ 1599
/// tokens]`) when `rule` is known and the header gives the size; otherwise the placeholder
/// `[image: image/png, 311409 bytes]`, counted as text, with a note saying why.
pub(crate) fn image_text(media: &str, data: &str, rule: Option<ImageRule>, report: &mut ImportReport) -> String {
    let bytes = base64_len(data);
    let Some(rule) = rule else {
        report.note(IMAGE_NO_RULE_NOTE);
        return format!("[image: {media}, {bytes} bytes]");
    };
    match image_size(data).and_then(|size| Some((size, rule.tokens(size.0, size.1)?))) {
        Some((size, tokens)) => crate::tokens::image::marker(media, bytes, size, tokens),
        None => {
            report.note(IMAGE_UNSIZED_NOTE);
            format!("[image: {media}, {bytes} bytes]")
        }
    }
}

/// Width and height from an image's header, read from the first 4 KiB of its base64 payload
/// (128 KiB when a JPEG's size comes after a large EXIF block); never the whole image.
pub(crate) fn image_size(data: &str) -> Option<(u32, u32)> {
    let significant = || data.bytes().filter(|b| !b.is_ascii_whitespace() && *b != b'=');
    let total = significant().take(131_072 + 1).count();
    for chars in [4096usize, 131_072] {
        let take = chars.min(total) / 4 * 4;
        let prefix: String = significant().take(take).map(char::from).collect();
        if let Some(size) = base64_decode(&prefix).and_then(|b| imagesize::blob_size(&b).ok()) {
            let (w, h) = (u32::try_from(size.width).ok()?, u32::try_from(size.height).ok()?);
            return (w > 0 && h > 0).then_some((w, h));
        }
        if take >= total {
            break;
        }
    }
    None
}

/// Integral f64 for token estimates such as `tokens_before`.
pub(crate) fn f(v: Option<u64>) -> Option<f64> {
    v.map(|x| x as f64)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn base64_round_trip() {
        assert_eq!(base64_decode("aGVsbG8=").unwrap(), b"hello");
        assert_eq!(base64_decode("aGVsbG8").unwrap(), b"hello");
        assert_eq!(base64_len("aGVsbG8="), 5);
        assert!(base64_decode("a*b").is_none());
    }

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

#[cfg(test)]
mod props {
    use super::*;
    use proptest::prelude::{prop_assert, prop_assert_eq, prop_oneof, proptest, Just, ProptestConfig, Strategy};

    /// Line fragments in the shape of all three formats, with ids drawn from a small pool so
    /// that links, duplicates, forks and dangling references all occur.
    fn line() -> impl Strategy<Value = String> {
        let id = proptest::sample::select(vec!["a", "b", "c", "d", "e"]);
        let ty = proptest::sample::select(vec![
            "user",
            "assistant",
            "system",
            "progress",
            "summary",
            "message",
            "compaction",
            "model_change",
            "session",
            "response_item",
            "event_msg",
            "compacted",
            "turn_context",
            "weird",
        ]);
        let block = proptest::sample::select(vec![
            r#"{"type":"text","text":"t"}"#,
            r#"{"type":"tool_use","id":"T1","name":"Bash","input":{"command":"ls"}}"#,
            r#"{"type":"tool_result","tool_use_id":"T1","content":"r"}"#,
            r#"{"type":"tool_result","tool_use_id":"T9","content":[{"type":"image","source":{"data":"QUJD"}}]}"#,
            r#"{"type":"image","source":{"type":"base64","media_type":"image/png","data":"QUJD"}}"#,
            r#"{"type":"toolCall","id":"T1","name":"read","arguments":{}}"#,
            r#"{"type":"thinking","thinking":"x"}"#,
            r#"null"#,
        ]);
        prop_oneof![
            (ty.clone(), id.clone(), id.clone(), id.clone(), block.clone(), 0u64..5).prop_map(|(t, u, p, m, b, n)| format!(
                r#"{{"type":"{t}","uuid":"{u}","parentUuid":"{p}","requestId":"r{n}","timestamp":"2026-01-0{}T00:00:00Z","message":{{"id":"{m}","role":"user","model":"m","content":[{b}],"usage":{{"input_tokens":{n},"output_tokens":1}}}},"subtype":"compact_boundary"}}"#,
                n + 1
            )),
            (ty.clone(), id.clone(), block).prop_map(|(t, u, b)| format!(
                r#"{{"type":"{t}","id":"{u}","parentId":"a","firstKeptEntryId":"b","firstKeptEntryIndex":2,"summary":"s","message":{{"role":"toolResult","toolCallId":"T1","content":[{b}]}}}}"#
            )),
            (ty, proptest::sample::select(vec!["message", "function_call", "function_call_output", "token_count", "compaction"]))
                .prop_map(|(t, pt)| format!(
                    r#"{{"type":"{t}","payload":{{"type":"{pt}","role":"user","call_id":"C","content":[{{"type":"input_text","text":"x"}}],"info":{{"total_token_usage":{{"input_tokens":1}},"last_token_usage":{{"input_tokens":1}}}},"replacement_history":[{{"type":"message","role":"user","content":[]}}]}}}}"#
                )),
            Just(r#"{"type": null}"#.to_string()),
            Just("[1,2]".to_string()),
            Just("not json".to_string()),
            Just("{}".to_string()),
        ]
    }

    proptest! {
        #![proptest_config(ProptestConfig::with_cases(300))]
        #[test]
        fn readers_never_panic_and_build_well_formed_journals(lines in proptest::collection::vec(line(), 0..25)) {
            let bytes = lines.join("\n");
            let _ = detect_bytes(bytes.as_bytes(), "x.jsonl");
            for fmt in [Format::ClaudeCode, Format::Codex, Format::Pi] {
                let Ok(im) = import_bytes(Path::new("x.jsonl"), bytes.as_bytes(), fmt, None) else { continue };
                let j = &im.journal;
                let mut calls = HashSet::new();
                let mut ids = HashSet::new();
                let mut last = String::new();
                for (i, r) in j.records.iter().enumerate() {
                    prop_assert_eq!(r.rev, i as u64 + 1);
                    prop_assert!(r.ts.to_string() >= last || last.is_empty(), "{:?}: ts goes back", fmt);
                    last = r.ts.to_string();
                    match &r.body {
                        Body::Session(_) => prop_assert_eq!(i, 0),
                        Body::Assistant(a) => {
                            prop_assert!(ids.insert(a.id.clone()), "{:?}: duplicate id {}", fmt, a.id);
                            for c in &a.calls {
                                prop_assert!(calls.insert(c.id.clone()), "{:?}: duplicate call {}", fmt, c.id);
                            }
                        }
                        Body::User(u) => {
                            prop_assert!(ids.insert(u.id.clone()), "{:?}: duplicate id {}", fmt, u.id);
                            for a in &u.attachments {
                                prop_assert!(ids.insert(a.id.clone()));
                            }
                        }
                        Body::Notice(n) => prop_assert!(ids.insert(n.id.clone())),
                        Body::Result(res) => prop_assert!(calls.contains(&res.call), "{:?}: result before its call", fmt),
                        _ => {}
                    }
                }
                // The projection and the writer accept whatever was built, and the writer's
                // incremental request hash is the projection's own.
                let _ = crate::projection::state_at_rev(j, u64::MAX);
                let mut h = crate::projection::RequestHasher::new();
                let mut same = true;
                crate::projection::for_each_request(j, |_, _, p| same &= h.sha256(p) == p.sha256());
                prop_assert!(same, "{:?}: incremental hash differs", fmt);
                let text = write::to_jsonl(j);
                prop_assert!(crate::journal::parse_bytes(Path::new("w"), text.as_bytes(), ReadOptions::default()).is_ok());
            }
        }
    }
}
