//! Sessions on disk: resolve what the user named (a session directory, a `journal.jsonl` path or
//! a bare id under a root folder) and open files inside the session directory only.
//!
//! ctxj never writes, truncates, locks or renames anything here: every open is read-only.

use std::path::{Component, Path, PathBuf};

use super::error::{JournalError, JournalErrorKind};
use super::mmap::Source;
use super::reader::{parse_bytes, parse_bytes_releasing, Journal, ReadOptions};

/// The file name of a journal inside its session directory.
pub const JOURNAL_FILE: &str = "journal.jsonl";

/// Why a session or a file inside it could not be used.
#[derive(Debug, thiserror::Error)]
pub enum SessionError {
    #[error("no session at {0}: not a directory holding journal.jsonl, a transcript or journal file, nor a session id, id prefix or `project/session` that `ctxj sessions` lists under --root / CTXJ_ROOT or the agents' folders")]
    NotFound(String),
    /// Transparent: the journal error already says everything, and an error chain printed with
    /// its sources must not repeat it.
    #[error(transparent)]
    Journal(#[from] JournalError),
    #[error("path {path:?} is refused: {why}")]
    Confined { path: String, why: &'static str },
    #[error("{path}: {err}")]
    Io { path: String, err: std::io::Error },
    #[error("{path}: refusing to write {into} {dir}")]
    WriteRefused { path: String, into: &'static str, dir: String },
}

/// How far a folder ctxj reads from is kept free of its writes.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Keep {
    /// Nothing is written into the folder or anywhere below it (a session directory).
    Below,
    /// The folder itself is not written to (the folder of an imported transcript).
    Exactly,
}

/// The write-confinement guard every writer uses (`import`, `report`): refuses `target` when it
/// lands in `dir` (or below it, with [`Keep::Below`]), also through symlinks. Returns `target`
/// with its folder resolved. A `dir` that cannot be resolved refuses nothing only when it does
/// not exist.
pub fn guard_write(target: &Path, dir: &Path, keep: Keep) -> Result<PathBuf, SessionError> {
    let io = |p: &Path| {
        let path = p.display().to_string();
        move |err| SessionError::Io { path, err }
    };
    let dir = match dir.canonicalize() {
        Ok(d) => d,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(target.to_path_buf()),
        Err(e) => return Err(io(dir)(e)),
    };
    let lexical = match (target.parent(), target.file_name()) {
        (Some(p), Some(name)) => {
            let p = if p.as_os_str().is_empty() { Path::new(".") } else { p };
            p.canonicalize().map_or_else(|_| target.to_path_buf(), |p| p.join(name))
        }
        _ => target.to_path_buf(),
    };
    let resolved = lexical.canonicalize().unwrap_or_else(|_| lexical.clone());
    let hit = |p: &Path| match keep {
        Keep::Below => p.starts_with(&dir),
        Keep::Exactly => p == dir,
    };
    if hit(&lexical) || hit(&resolved) {
        let into = match keep {
            Keep::Below => "inside the session directory",
            Keep::Exactly => "into the folder it reads from,",
        };
        return Err(SessionError::WriteRefused {
            path: target.display().to_string(),
            into,
            dir: dir.display().to_string(),
        });
    }
    Ok(lexical)
}

/// The first session directory (a folder holding a regular `journal.jsonl`) among `dir` and its
/// ancestors, `dir` itself included only when `include_self` (an import may overwrite its own
/// earlier output with `--force`). Symlinks in `dir` are resolved first.
/// A `dir` that does not exist yet is judged by its nearest existing ancestor (included).
pub fn session_above(dir: &Path, include_self: bool) -> Option<PathBuf> {
    let existing = dir.ancestors().find(|a| !a.as_os_str().is_empty() && a.exists()).unwrap_or(Path::new("."));
    let real = existing.canonicalize().ok()?;
    let skip = usize::from(!include_self && existing == dir);
    real.ancestors().skip(skip).find(|a| a.join(JOURNAL_FILE).is_file()).map(Path::to_path_buf)
}

/// Refuses a write target inside any session directory (or below one): `report -o` and
/// `import --out <session>/sub` once wrote there.
pub fn guard_not_in_session(target_dir: &Path, include_self: bool) -> Result<(), SessionError> {
    match session_above(target_dir, include_self) {
        Some(s) => Err(SessionError::WriteRefused {
            path: target_dir.display().to_string(),
            into: "inside the session directory",
            dir: s.display().to_string(),
        }),
        None => Ok(()),
    }
}

/// Writes `bytes` to `path` without ever writing through a symlink or into an existing file's
/// inode: a symlink (dangling or not) at `path` or at its folder is refused, and the bytes go to
/// a new file (`create_new`, which never follows a link) renamed over `path`. A hard link to an
/// input therefore keeps the input's bytes; `inputs` are also compared by identity and refused.
pub fn write_guarded(path: &Path, bytes: &[u8], inputs: &[&Path]) -> Result<(), SessionError> {
    write_guarded_with(path, inputs, &mut |f| f.write_all(bytes))
}

/// [`write_guarded`], the content written by `write` (e.g. piece by piece, so a large file is
/// never held whole in memory) into the new file.
pub fn write_guarded_with(
    path: &Path,
    inputs: &[&Path],
    write_content: &mut dyn FnMut(&mut dyn std::io::Write) -> std::io::Result<()>,
) -> Result<(), SessionError> {
    write_guarded_mode(path, inputs, None, write_content)
}

/// [`write_guarded_with`], the new file created with permission bits `mode` (Unix; `None`: the
/// process's default). The cache folder's files are written `0600` through it
/// ([`super::cache_dir`]).
pub(crate) fn write_guarded_mode(
    path: &Path,
    inputs: &[&Path],
    mode: Option<u32>,
    write_content: &mut dyn FnMut(&mut dyn std::io::Write) -> std::io::Result<()>,
) -> Result<(), SessionError> {
    use std::io::Write as _;
    let io = |err| SessionError::Io { path: path.display().to_string(), err };
    let refuse = |why: &'static str| Err(SessionError::Confined { path: path.display().to_string(), why });
    if let Some(parent) = path.parent().filter(|p| !p.as_os_str().is_empty()) {
        if std::fs::symlink_metadata(parent).is_ok_and(|m| m.file_type().is_symlink()) {
            return refuse("its folder is a symbolic link: refusing to write through it");
        }
    }
    match std::fs::symlink_metadata(path) {
        Ok(m) if m.file_type().is_symlink() => return refuse("is a symbolic link: refusing to write through it"),
        Ok(m) if !m.is_file() => return refuse("exists and is not a regular file"),
        Ok(m) => {
            if inputs.iter().any(|i| std::fs::metadata(i).is_ok_and(|im| same_file(&m, &im))) {
                return refuse("is one of the inputs: refusing to overwrite it");
            }
        }
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => {}
        Err(e) => return Err(io(e)),
    }
    let name = path.file_name().map(|n| n.to_string_lossy().into_owned()).unwrap_or_default();
    let tmp = path.with_file_name(format!(".{name}.ctxj-{}.tmp", std::process::id()));
    let mut write = || -> std::io::Result<()> {
        let mut o = std::fs::OpenOptions::new();
        o.write(true).create_new(true);
        #[cfg(unix)]
        if let Some(m) = mode {
            std::os::unix::fs::OpenOptionsExt::mode(&mut o, m);
        }
        #[cfg(not(unix))]
        let _ = mode;
        let f = o.open(&tmp)?;
        let mut w = std::io::BufWriter::with_capacity(1 << 20, f);
        write_content(&mut w)?;
        w.flush()?;
        w.get_ref().sync_all()?;
        std::fs::rename(&tmp, path)
    };
    write().map_err(|e| {
        let _ = std::fs::remove_file(&tmp);
        io(e)
    })
}

fn same_file(a: &std::fs::Metadata, b: &std::fs::Metadata) -> bool {
    #[cfg(unix)]
    {
        use std::os::unix::fs::MetadataExt;
        (a.dev(), a.ino()) == (b.dev(), b.ino())
    }
    #[cfg(not(unix))]
    {
        let _ = (a, b);
        false
    }
}

/// A located session: its directory and journal file.
#[derive(Debug, Clone)]
pub struct Session {
    pub dir: PathBuf,
    pub journal_path: PathBuf,
}

impl Session {
    /// Resolves `spec`: a directory with `journal.jsonl`, a journal file, or an id under `root`.
    pub fn resolve(spec: &str, root: Option<&Path>) -> Result<Session, SessionError> {
        let p = Path::new(spec);
        if p.is_dir() {
            let j = p.join(JOURNAL_FILE);
            if j.is_file() {
                return Ok(Session { dir: p.to_path_buf(), journal_path: j });
            }
            return Err(SessionError::NotFound(spec.to_string()));
        }
        if p.exists() {
            let dir = match p.parent() {
                Some(d) if !d.as_os_str().is_empty() => d.to_path_buf(),
                _ => PathBuf::from("."),
            };
            return Ok(Session { dir, journal_path: p.to_path_buf() });
        }
        if let Some(root) = root {
            if is_plain_name(spec) {
                let dir = root.join(spec);
                let j = dir.join(JOURNAL_FILE);
                if j.is_file() {
                    return Ok(Session { dir, journal_path: j });
                }
            }
            if let Some(dir) = find_by_id(root, spec) {
                let journal_path = dir.join(JOURNAL_FILE);
                return Ok(Session { dir, journal_path });
            }
        }
        Err(SessionError::NotFound(spec.to_string()))
    }

    /// Reads and parses the journal.
    pub fn load(&self, opts: ReadOptions) -> Result<Journal, SessionError> {
        let io = |e: std::io::Error| JournalError::file(&self.journal_path, JournalErrorKind::Io(e.to_string()));
        let src = Source::open(&self.journal_path).map_err(io)?;
        let parsed = parse_bytes_releasing(&self.journal_path, src.bytes(), opts, &|a, b| src.release(a, b));
        if !src.shrank() {
            return parsed.map_err(|e| self.without_outside_excerpt(e).into());
        }
        // The file was cut while mapped (see `mmap`): what was parsed may hold zeros where its
        // end was. Read it again, plainly, as it is now.
        drop(src);
        let src = Source::read(&self.journal_path).map_err(io)?;
        let mut journal = parse_bytes(&self.journal_path, src.bytes(), opts)?;
        journal.warnings.insert(
            0,
            super::error::Warning {
                line: 0,
                offset: 0,
                message:
                    "the journal shrank while it was being read (it is not append-only); read it again as it now is"
                        .into(),
            },
        );
        Ok(journal)
    }

    /// An error excerpt is printed only from a file inside the session directory: a
    /// `journal.jsonl` symlinked to a file elsewhere must not leak that file's first characters.
    fn without_outside_excerpt(&self, mut e: JournalError) -> JournalError {
        let inside = match (self.journal_path.canonicalize(), self.dir.canonicalize()) {
            (Ok(j), Ok(d)) => j.starts_with(d),
            _ => false,
        };
        if !inside {
            e.excerpt.clear();
        }
        e
    }

    /// Resolves a journal reference to a file inside the session directory, refusing absolute
    /// paths, `..` components and symlinks that lead outside. The file must exist.
    pub fn confined(&self, rel: &str) -> Result<PathBuf, SessionError> {
        confine(&self.dir, rel)
    }

    /// Reads a confined file (spill or attachment): at most `cap` bytes of it, and its length.
    /// Only regular files are read (a FIFO or device planted in a session directory would block
    /// or never end), and the file is opened by descriptor beneath the session directory
    /// (`input::open_beneath`), so a directory swapped for a symlink after the check cannot lead
    /// out.
    pub fn read_confined(&self, rel: &str, cap: u64) -> Result<super::input::Capped, SessionError> {
        // The lexical rules and a first resolution (one message per refusal reason).
        self.confined(rel)?;
        let base =
            self.dir.canonicalize().map_err(|err| SessionError::Io { path: self.dir.display().to_string(), err })?;
        let io = |err: std::io::Error| match err.kind() {
            std::io::ErrorKind::InvalidInput => {
                SessionError::Confined { path: rel.to_string(), why: "not a regular file" }
            }
            _ => SessionError::Io { path: rel.to_string(), err },
        };
        // Opened by the name as written, beneath the directory's descriptor: the kernel follows
        // the links again, and never out of the session directory.
        let (file, meta) = super::input::open_beneath(&base, Path::new(rel)).map_err(io)?;
        super::input::read_capped(file, &meta, cap).map_err(io)
    }
}

/// The session folder directly under `root` whose journal's first record (`session`) has this
/// `id` — the id ctxj prints (`sessions`, `log`). Reads at most 64 KiB of each first line.
fn find_by_id(root: &Path, id: &str) -> Option<PathBuf> {
    use std::io::Read;
    let mut dirs: Vec<PathBuf> = std::fs::read_dir(root).ok()?.flatten().map(|e| e.path()).collect();
    dirs.sort();
    dirs.into_iter().find(|d| {
        let Ok((f, _)) = super::input::open_regular(&d.join(JOURNAL_FILE)) else { return false };
        let mut head = Vec::new();
        if f.take(64 * 1024).read_to_end(&mut head).is_err() {
            return false;
        }
        let first = head.split(|b| *b == b'\n').next().unwrap_or_default();
        serde_json::from_slice::<serde_json::Value>(first).is_ok_and(|v| {
            v.get("kind").and_then(|k| k.as_str()) == Some("session")
                && v.get("id").and_then(|k| k.as_str()) == Some(id)
        })
    })
}

fn is_plain_name(s: &str) -> bool {
    let p = Path::new(s);
    !s.is_empty() && p.components().count() == 1 && matches!(p.components().next(), Some(Component::Normal(_)))
}

/// The one place where a journal's file reference becomes a path (spec §1).
pub fn confine(dir: &Path, rel: &str) -> Result<PathBuf, SessionError> {
    let refuse = |why| Err(SessionError::Confined { path: rel.to_string(), why });
    let p = Path::new(rel);
    if rel.is_empty() {
        return refuse("empty path");
    }
    if p.is_absolute() || p.has_root() {
        return refuse("absolute path");
    }
    for c in p.components() {
        match c {
            Component::Normal(_) | Component::CurDir => {}
            Component::ParentDir => return refuse("contains a `..` component"),
            _ => return refuse("not a relative path"),
        }
    }
    let base = dir.canonicalize().map_err(|err| SessionError::Io { path: dir.display().to_string(), err })?;
    let full = base.join(p);
    let real = full.canonicalize().map_err(|err| SessionError::Io { path: rel.to_string(), err })?;
    if !real.starts_with(&base) {
        return refuse("resolves outside the session directory");
    }
    Ok(real)
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Regression test: `show --expand` hung forever on a spill that is a FIFO.
    #[cfg(unix)]
    #[test]
    fn spill_that_is_a_fifo_is_refused_not_opened() {
        let d = tempfile::tempdir().unwrap();
        std::fs::write(d.path().join(JOURNAL_FILE), "").unwrap();
        std::fs::create_dir(d.path().join("c1.out")).unwrap();
        let fifo = d.path().join("c1.out").join("stdout");
        assert!(std::process::Command::new("mkfifo").arg(&fifo).status().unwrap().success());
        let s = Session::resolve(d.path().to_str().unwrap(), None).unwrap();
        let e = s.read_confined("c1.out/stdout", 1 << 20).unwrap_err();
        assert!(e.to_string().contains("not a regular file"), "{e}");
    }

    #[test]
    fn a_journal_error_is_reported_once_in_an_error_chain() {
        use super::super::error::JournalErrorKind;
        let e = JournalError::at("j.jsonl", 2, 36, JournalErrorKind::NotAnObject, b"[1]");
        let chain = format!("{:#}", anyhow::Error::from(SessionError::from(e)));
        assert_eq!(chain.matches("j.jsonl:2 (byte 36)").count(), 1, "{chain}");
    }

    #[test]
    fn refuses_escapes() {
        let d = std::env::temp_dir();
        assert!(matches!(confine(&d, "../../etc/passwd"), Err(SessionError::Confined { .. })));
        assert!(matches!(confine(&d, "/etc/passwd"), Err(SessionError::Confined { .. })));
        assert!(matches!(confine(&d, "a/../b"), Err(SessionError::Confined { .. })));
    }
}
