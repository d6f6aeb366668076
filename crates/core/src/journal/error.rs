//! Errors and warnings of the journal reader, each pointing at a file, a physical line (from 1)
//! and a byte offset, with a short excerpt that is safe to print on a terminal.

use std::fmt;
use std::path::PathBuf;

use crate::text::escape_excerpt;

/// What is wrong with a line or a file.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum JournalErrorKind {
    /// The file could not be opened or read.
    Io(String),
    /// The line is not valid JSON (syntax, invalid UTF-8, lone surrogate, …).
    Json(String),
    /// JSON nested deeper than the spec's 128 levels.
    TooDeep,
    /// The line is JSON but not an object.
    NotAnObject,
    /// The object lacks a field its kind requires, or a field has the wrong type.
    Schema(String),
    /// The last line has no newline and does not parse (only an error with `--strict`).
    TornWrite(String),
    /// The journal has no records at all.
    Empty,
    /// The line holds more JSON values than this limit (memory per record is bounded).
    TooManyValues(usize),
    /// The file ends with this many NUL bytes (zero fill; an error only with `--strict`).
    ZeroFill(u64),
}

impl fmt::Display for JournalErrorKind {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Self::Io(e) => write!(f, "cannot read: {e}"),
            Self::Json(e) => write!(f, "invalid JSON: {e}"),
            Self::TooDeep => write!(f, "JSON nested deeper than 128 levels"),
            Self::NotAnObject => write!(f, "a record must be a JSON object"),
            Self::Schema(e) => write!(f, "invalid record: {e}"),
            Self::TornWrite(e) => write!(f, "torn write (last line has no newline and does not parse: {e})"),
            Self::Empty => write!(f, "the journal holds no records"),
            Self::TooManyValues(n) => {
                write!(f, "the line holds more than {n} JSON values (ctxj's limit per record, to bound memory)")
            }
            Self::ZeroFill(n) => write!(
                f,
                "the journal ends with {n} NUL bytes of zero fill (a preallocated or sparse file), not records"
            ),
        }
    }
}

/// An unusable journal: where and why.
#[derive(Debug, Clone, thiserror::Error)]
pub struct JournalError {
    pub path: PathBuf,
    /// Physical line, counted from 1 (0 when the error concerns the whole file).
    pub line: usize,
    /// Byte offset of the start of the line in the file.
    pub offset: u64,
    pub kind: JournalErrorKind,
    /// A short excerpt of the line, control characters escaped.
    pub excerpt: String,
}

impl JournalError {
    pub fn file(path: impl Into<PathBuf>, kind: JournalErrorKind) -> Self {
        Self { path: path.into(), line: 0, offset: 0, kind, excerpt: String::new() }
    }

    pub fn at(path: impl Into<PathBuf>, line: usize, offset: u64, kind: JournalErrorKind, bytes: &[u8]) -> Self {
        Self { path: path.into(), line, offset, kind, excerpt: escape_excerpt(bytes, 80) }
    }
}

impl fmt::Display for JournalError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let path = crate::text::escape_line(&self.path.display().to_string());
        if self.line == 0 {
            write!(f, "{path}: {}", self.kind)
        } else {
            write!(f, "{path}:{} (byte {}): {}", self.line, self.offset, self.kind)?;
            if !self.excerpt.is_empty() {
                write!(f, "\n  | {}", self.excerpt)?;
            }
            Ok(())
        }
    }
}

/// Something the reader tolerated but the user should know about.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Warning {
    pub line: usize,
    pub offset: u64,
    pub message: String,
}

impl fmt::Display for Warning {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        if self.line == 0 {
            // About the whole file (e.g. an empty journal), not one line.
            return f.write_str(&self.message);
        }
        write!(f, "line {} (byte {}): {}", self.line, self.offset, self.message)
    }
}
