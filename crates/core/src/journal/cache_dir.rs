//! The user's cache folder and the one guarded way to keep files there (issue 31): the token memo
//! (`tokens::memo`), the summarizer's answers (`strategy::summarizer`) and the live state
//! (`live::store`) all go through it.
//!
//! * **Where.** `$CTXJ_CACHE_DIR`, else `<user cache dir>/ctxj` ([`default_base`]), one subfolder
//!   per kind ([`CacheDir::new`]). A subfolder inside a session directory (or below one) is
//!   refused: ctxj never writes there. Whether a cache is used at all (`--no-cache`,
//!   `CTXJ_NO_CACHE`) is the binary's choice: the library keeps nothing unless handed a folder.
//! * **Private.** Folders are created `0700` (an existing subfolder of ours is narrowed to
//!   `0700`), files `0600`: summaries and token counts of private sessions are nobody else's.
//! * **No symlinks.** A subfolder that is a symbolic link is refused; an entry is opened with
//!   `O_NOFOLLOW`, so an entry replaced by a link is ignored (never its target printed); writes go
//!   through `session::write_guarded_mode` (temp file + rename, never through a link).
//! * **Bounded reads.** An entry larger than its kind's cap is ignored before a byte is read (a
//!   1 GiB sparse file costs one `fstat`).
//! * **Checked content.** [`seal`] frames an entry with a header holding its kind, length and
//!   SHA-256; [`unseal`] gives the content back only when all three match, so an empty, truncated
//!   or edited entry is a miss, never a wrong answer.

use std::fs::File;
use std::path::{Path, PathBuf};

use sha2::{Digest, Sha256};

use super::session::{guard_not_in_session, write_guarded_mode, SessionError};

/// `$CTXJ_CACHE_DIR` (when not empty), else the user's cache folder + `ctxj` (`None` when neither
/// is known).
pub fn default_base() -> Option<PathBuf> {
    match std::env::var_os("CTXJ_CACHE_DIR").filter(|v| !v.is_empty()) {
        Some(d) => Some(PathBuf::from(d)),
        None => dirs::cache_dir().map(|d| d.join("ctxj")),
    }
}

/// One subfolder of the cache (`tokens`, `summaries`, `live`), checked not to be inside a session.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct CacheDir(PathBuf);

impl CacheDir {
    /// `<base>/<sub>`, refused inside (or below) a session directory. Nothing is created yet.
    pub fn new(base: &Path, sub: &str) -> Result<CacheDir, SessionError> {
        let d = base.join(sub);
        guard_not_in_session(&d, true)?;
        Ok(CacheDir(d))
    }

    /// The folder.
    pub fn path(&self) -> &Path {
        &self.0
    }

    /// The path of entry `name`.
    pub fn file(&self, name: &str) -> PathBuf {
        self.0.join(name)
    }

    /// Creates the folder (`0700`, its missing parents too) or narrows an existing one to `0700`;
    /// refuses a folder that is a symbolic link or not a folder.
    pub fn ensure(&self) -> Result<(), SessionError> {
        ensure_private_dir(&self.0)
    }

    /// Entry `name` when it is a regular file (not a link) of at most `cap` bytes.
    pub fn read(&self, name: &str, cap: u64) -> Option<Vec<u8>> {
        read_private(&self.file(name), cap)
    }

    /// Writes entry `name` (`0600`, through the guarded writer), creating the folder first.
    pub fn write(&self, name: &str, bytes: &[u8]) -> Result<(), SessionError> {
        write_private(&self.file(name), bytes)
    }
}

fn is_link(p: &Path) -> bool {
    std::fs::symlink_metadata(p).is_ok_and(|m| m.file_type().is_symlink())
}

/// See [`CacheDir::ensure`].
pub fn ensure_private_dir(dir: &Path) -> Result<(), SessionError> {
    let io = |err| SessionError::Io { path: dir.display().to_string(), err };
    let refuse = |why| Err(SessionError::Confined { path: dir.display().to_string(), why });
    if is_link(dir) {
        return refuse("the cache folder is a symbolic link: refusing to use it");
    }
    if !dir.exists() {
        let mut b = std::fs::DirBuilder::new();
        b.recursive(true);
        #[cfg(unix)]
        std::os::unix::fs::DirBuilderExt::mode(&mut b, 0o700);
        b.create(dir).map_err(io)?;
    }
    let meta = std::fs::symlink_metadata(dir).map_err(io)?;
    if !meta.is_dir() {
        return refuse("the cache folder is not a folder");
    }
    #[cfg(unix)]
    {
        use std::os::unix::fs::PermissionsExt;
        if meta.permissions().mode() & 0o077 != 0 {
            std::fs::set_permissions(dir, std::fs::Permissions::from_mode(0o700)).map_err(io)?;
        }
    }
    Ok(())
}

/// Writes `bytes` to the cache file `path`: its folder made private ([`ensure_private_dir`]), the
/// file `0600`, never through a symlink.
pub fn write_private(path: &Path, bytes: &[u8]) -> Result<(), SessionError> {
    if let Some(dir) = path.parent().filter(|p| !p.as_os_str().is_empty()) {
        ensure_private_dir(dir)?;
    }
    write_guarded_mode(path, &[], Some(0o600), &mut |w| w.write_all(bytes))
}

/// The cache file `path` when it is a regular file of at most `cap` bytes, opened without
/// following a symlink (at the file or at its folder); `None` otherwise (a cache miss).
pub fn read_private(path: &Path, cap: u64) -> Option<Vec<u8>> {
    if path.parent().is_some_and(is_link) {
        return None;
    }
    let file = open_nofollow(path)?;
    let meta = file.metadata().ok()?;
    if !meta.is_file() || meta.len() > cap {
        return None;
    }
    // One byte past the cap tells a file that grew since its length was read.
    let read = super::input::read_capped(file, &meta, cap.saturating_add(1)).ok()?;
    (read.bytes.len() as u64 <= cap).then_some(read.bytes)
}

fn open_nofollow(path: &Path) -> Option<File> {
    let mut o = std::fs::OpenOptions::new();
    o.read(true);
    #[cfg(unix)]
    {
        use std::os::unix::fs::OpenOptionsExt;
        o.custom_flags(libc::O_NOFOLLOW | libc::O_NONBLOCK);
    }
    #[cfg(not(unix))]
    if is_link(path) {
        return None;
    }
    o.open(path).ok()
}

/// The first line of a sealed entry: `ctxj-cache <kind> <length> <sha256>\n`.
const SEAL: &str = "ctxj-cache";

/// `content` framed for the cache: a header line with `kind`, the length and SHA-256 of `content`.
pub fn seal(kind: &str, content: &[u8]) -> Vec<u8> {
    let mut out = format!("{SEAL} {kind} {} {}\n", content.len(), hex::encode(Sha256::digest(content))).into_bytes();
    out.extend_from_slice(content);
    out
}

/// The content of an entry [`seal`]ed as `kind`, when its header, length and hash all match.
pub fn unseal<'a>(kind: &str, entry: &'a [u8]) -> Option<&'a [u8]> {
    let nl = entry.iter().position(|&b| b == b'\n')?;
    let header = std::str::from_utf8(&entry[..nl]).ok()?;
    let body = &entry[nl + 1..];
    let mut f = header.split(' ');
    let ok = f.next() == Some(SEAL)
        && f.next() == Some(kind)
        && f.next().and_then(|n| n.parse::<usize>().ok()) == Some(body.len())
        && f.next() == Some(hex::encode(Sha256::digest(body)).as_str())
        && f.next().is_none();
    ok.then_some(body)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn sealed_entries_round_trip_and_damage_is_a_miss() {
        let e = seal("summary/1", b"hello");
        assert_eq!(unseal("summary/1", &e), Some(&b"hello"[..]));
        assert_eq!(unseal("summary/2", &e), None, "another kind");
        assert_eq!(unseal("summary/1", &e[..e.len() - 1]), None, "truncated");
        assert_eq!(unseal("summary/1", b""), None, "empty");
        let mut edited = e.clone();
        *edited.last_mut().unwrap() = b'X';
        assert_eq!(unseal("summary/1", &edited), None, "edited");
        assert_eq!(unseal("summary/1", b"hello"), None, "no header");
    }

    #[cfg(unix)]
    #[test]
    fn files_are_private_and_links_are_not_followed() {
        use std::os::unix::fs::PermissionsExt;
        let t = tempfile::tempdir().unwrap();
        let d = CacheDir::new(t.path(), "sub").unwrap();
        d.write("a", b"x").unwrap();
        let mode = |p: &Path| std::fs::metadata(p).unwrap().permissions().mode() & 0o777;
        assert_eq!(mode(d.path()), 0o700);
        assert_eq!(mode(&d.file("a")), 0o600);
        assert_eq!(d.read("a", 1), Some(b"x".to_vec()));
        assert_eq!(d.read("a", 0), None, "over the cap");
        std::fs::write(t.path().join("secret"), b"s").unwrap();
        std::os::unix::fs::symlink(t.path().join("secret"), d.file("b")).unwrap();
        assert_eq!(d.read("b", 100), None, "a link is a miss");
        assert!(d.write("b", b"y").is_err(), "never written through");
        // an existing folder of ours is narrowed
        std::fs::set_permissions(d.path(), std::fs::Permissions::from_mode(0o755)).unwrap();
        d.ensure().unwrap();
        assert_eq!(mode(d.path()), 0o700);
        // a linked folder is refused
        std::os::unix::fs::symlink(d.path(), t.path().join("linked")).unwrap();
        let l = CacheDir::new(t.path(), "linked").unwrap();
        assert!(l.ensure().is_err());
        assert_eq!(l.read("a", 100), None);
    }

    #[test]
    fn never_inside_a_session() {
        let t = tempfile::tempdir().unwrap();
        std::fs::write(t.path().join("journal.jsonl"), b"").unwrap();
        assert!(CacheDir::new(t.path(), "summaries").is_err());
    }
}
