//! Opening what the user named: [`load`] (a ctxj session, a transcript file, a folder holding one
//! session), [`import_file`] / [`import_bytes`] dispatching to the format's reader, and the
//! [`Loaded`] result (each reader's [`Imported`] is in `report`, below the readers).

use std::path::{Path, PathBuf};

use super::{
    claude_code, cline, codex, detect_file, gemini, kimi, opencode, pi, qwen, scan, Format, FromFormat, ImportError,
    ImportReport, Imported,
};
use crate::journal::{Journal, ReadOptions, Session, SessionError, Text};

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
        FromFormat::Auto => match detect_file(&path) {
            Some(f) => f,
            // A file an agent wrote that ctxj does not import, or JSON that is no transcript:
            // say what it is rather than a journal error on a valid file.
            None => match super::detect::describe(&path) {
                Some(super::detect::Described::Known { what, hint }) => {
                    return Err(ImportError::NotImported { path: spec.to_string(), what, hint })
                }
                Some(super::detect::Described::Unknown { looked_like }) => {
                    return Err(ImportError::Unknown { path: spec.to_string(), looked_like })
                }
                // Maybe a journal: its errors name the first bad line.
                None => Format::Ctxj,
            },
        },
    };
    if fmt == Format::Ctxj {
        let session = Session::resolve(&path.to_string_lossy(), None)?;
        let journal = session.load(opts)?;
        return Ok(Loaded { session, journal, format: Format::Ctxj, report: None, files: Vec::new() });
    }
    load_file(&path, part.as_deref(), fmt)
}

/// [`load`] of a path that may not be UTF-8 (a file name `load`'s string cannot carry, found by
/// an experiment's glob, issue 31): a session folder, a ctxj journal or a transcript whose format
/// is detected. A UTF-8 path goes through [`load`].
pub fn load_path(path: &Path, opts: ReadOptions) -> Result<Loaded, ImportError> {
    if let Some(spec) = path.to_str() {
        return load(spec, FromFormat::Auto, None, opts);
    }
    let ctxj = |session: Session| -> Result<Loaded, ImportError> {
        let journal = session.load(opts)?;
        Ok(Loaded { session, journal, format: Format::Ctxj, report: None, files: Vec::new() })
    };
    if path.is_dir() && path.join(crate::journal::session::JOURNAL_FILE).is_file() {
        let journal_path = path.join(crate::journal::session::JOURNAL_FILE);
        return ctxj(Session { dir: path.to_path_buf(), journal_path });
    }
    if !path.is_file() {
        return Err(SessionError::NotFound(path.to_string_lossy().into_owned()).into());
    }
    match detect_file(path) {
        Some(f) if f != Format::Ctxj => load_file(path, None, f),
        _ => {
            let dir = path.parent().filter(|d| !d.as_os_str().is_empty()).unwrap_or(Path::new("."));
            ctxj(Session { dir: dir.to_path_buf(), journal_path: path.to_path_buf() })
        }
    }
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
    if fmt == Format::OpenCode {
        // An SQLite store is queried where it lies (read-only), not read into memory.
        return opencode::read(path, part);
    }
    let bytes = crate::journal::input::read_regular(path)
        .map_err(|err| ImportError::Io { path: path.display().to_string(), err })?;
    let imported = import_bytes(path, &bytes, fmt, part)?;
    nothing_read(path, &bytes, fmt, &imported)?;
    Ok(imported)
}

/// A transcript with lines of which the reader used none is an error (an empty file is not: it
/// stays the reader's "holds no records" case). The journal then holds at most the header the
/// reader writes itself. A file whose own content is detected as `fmt` is not an error either:
/// it is that agent's session with nothing ctxj replays (a Gemini CLI chat holding only a
/// warning), imported with no turns and its skipped records in the report.
fn nothing_read(path: &Path, bytes: &[u8], fmt: Format, i: &Imported) -> Result<(), ImportError> {
    let skipped: usize = i.report.skipped.values().sum();
    if fmt == Format::Ctxj || i.journal.records.len() > 1 || skipped == 0 {
        return Ok(());
    }
    let name = path.file_name().map(|n| n.to_string_lossy().into_owned()).unwrap_or_default();
    if super::detect::detect_bytes(&bytes[..bytes.len().min(256 * 1024)], &name) == Some(fmt) {
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
        Format::GeminiCli => gemini::read(path, bytes),
        Format::QwenCode => qwen::read(path, bytes),
        Format::KimiCode => kimi::read(path, bytes),
        Format::Cline => cline::read(path, bytes),
        // SQLite needs the file itself: the store at `path` is opened read-only.
        Format::OpenCode => opencode::read(path, part),
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
