//! The one way ctxj opens an agent's SQLite store (OpenCode, Kilo, Hermes, Goose …): read-only,
//! and never writing beside it. With no `-wal` file (no writer has uncommitted pages) the file is
//! opened `immutable`, so SQLite creates no `-shm`; with one (the agent is running), the database
//! and its `-wal` are copied to a temporary folder and read there, so the user's folder is left
//! exactly as it was. Only regular files are opened.

use std::path::{Path, PathBuf};

/// A read-only connection, and the temporary folder holding the copy it reads when a `-wal`
/// forced one (keep it alive as long as the connection is used).
pub type ReadOnly = (rusqlite::Connection, Option<tempfile::TempDir>);

/// Opens the store at `p` read-only without writing beside it (see the module doc).
pub fn open_read_only(p: &Path) -> std::io::Result<ReadOnly> {
    use rusqlite::OpenFlags;
    let sql = std::io::Error::other;
    let flags = OpenFlags::SQLITE_OPEN_READ_ONLY | OpenFlags::SQLITE_OPEN_URI | OpenFlags::SQLITE_OPEN_NO_MUTEX;
    if !std::fs::symlink_metadata(p)?.is_file() {
        return Err(std::io::Error::other("not a regular file"));
    }
    let uri = |f: &Path, immutable: bool| {
        let path = f.to_string_lossy().replace('%', "%25").replace('?', "%3f").replace('#', "%23");
        format!("file:{path}?mode=ro{}", if immutable { "&immutable=1" } else { "" })
    };
    let wal = PathBuf::from(format!("{}-wal", p.display()));
    if !wal.exists() {
        return rusqlite::Connection::open_with_flags(uri(p, true), flags).map(|c| (c, None)).map_err(sql);
    }
    let dir = tempfile::tempdir()?;
    let copy = dir.path().join("copy.db");
    std::fs::copy(p, &copy)?;
    std::fs::copy(&wal, dir.path().join("copy.db-wal"))?;
    rusqlite::Connection::open_with_flags(uri(&copy, false), flags).map(|c| (c, Some(dir))).map_err(sql)
}
