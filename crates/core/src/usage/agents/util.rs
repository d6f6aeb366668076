//! What the usage-only readers share: finding files under a folder (regular files only, no
//! symbolic links followed), reading JSON files, opening SQLite stores read-only without
//! leaving a `-wal`/`-shm` file beside them, dates from epoch numbers, numbers from JSON in
//! any of its spellings, and ccusage's total fallback.

use std::path::{Path, PathBuf};

use serde_json::Value;

use crate::usage::entry::Read;

/// The parts of every reader's result, in order.
pub fn merge(parts: Vec<Read>) -> Read {
    let mut r = Read::default();
    for p in parts {
        r.entries.extend(p.entries);
        r.compactions.extend(p.compactions);
        r.duplicates += p.duplicates;
    }
    r
}

/// The regular files under `root` (or `root` itself when it is one) whose path `keep` accepts,
/// sorted; symbolic links are not followed (ccusage skips them too).
pub fn walk(root: &Path, keep: impl Fn(&Path) -> bool) -> Vec<PathBuf> {
    if root.is_file() {
        return if keep(root) { vec![root.to_path_buf()] } else { Vec::new() };
    }
    let mut out: Vec<PathBuf> = walkdir::WalkDir::new(root)
        .follow_links(false)
        .into_iter()
        .flatten()
        .filter(|e| e.file_type().is_file() && keep(e.path()))
        .map(walkdir::DirEntry::into_path)
        .collect();
    out.sort();
    out
}

/// The file name of `p` as text.
pub fn name(p: &Path) -> String {
    p.file_name().map(|n| n.to_string_lossy().into_owned()).unwrap_or_default()
}

/// The name of the folder `up` levels above `p` (1 = its parent).
pub fn folder(p: &Path, up: usize) -> String {
    p.ancestors().nth(up).map(name).unwrap_or_default()
}

/// A whole JSON file (a regular file only); `None` when unreadable or not JSON.
pub fn json_file(p: &Path) -> Option<Value> {
    let bytes = crate::journal::input::read_regular(p).ok()?;
    serde_json::from_slice(&bytes).ok()
}

/// The JSON lines of a file (a regular file only; lines that are not JSON are left out).
pub fn json_lines(p: &Path) -> Vec<Value> {
    let Ok(bytes) = crate::journal::input::read_regular(p) else { return Vec::new() };
    crate::journal::typed::lines(&bytes).filter_map(|l| serde_json::from_slice(l).ok()).collect()
}

/// A whole number at `k` of an object: integers, whole floats and numeric strings (0 otherwise,
/// negatives included).
pub fn n(v: &Value, k: &str) -> u64 {
    num(v.get(k))
}

/// [`n`] of a value.
pub fn num(v: Option<&Value>) -> u64 {
    match v {
        Some(Value::Number(x)) => {
            x.as_u64().or_else(|| x.as_f64().filter(|f| *f >= 0.0).map(|f| f as u64)).unwrap_or(0)
        }
        Some(Value::String(s)) => s.trim().parse().unwrap_or(0),
        _ => 0,
    }
}

/// The first of `keys` present in `v` as a number.
pub fn first_n(v: &Value, keys: &[&str]) -> u64 {
    keys.iter().map(|k| n(v, k)).find(|x| *x > 0).unwrap_or(0)
}

/// A string at `k`.
pub fn s(v: &Value, k: &str) -> Option<String> {
    v.get(k).and_then(Value::as_str).filter(|x| !x.is_empty()).map(str::to_string)
}

/// A float at `k`.
pub fn f(v: &Value, k: &str) -> Option<f64> {
    v.get(k).and_then(Value::as_f64)
}

/// RFC 3339 (UTC, milliseconds) of milliseconds since the epoch.
pub fn from_ms(ms: i64) -> String {
    chrono::DateTime::from_timestamp_millis(ms)
        .map(|d| d.to_rfc3339_opts(chrono::SecondsFormat::Millis, true))
        .unwrap_or_default()
}

/// A file's modification time as RFC 3339 (empty when it cannot be read): the time ccusage gives
/// a record whose own time it cannot read (Qwen Code, Kimi).
pub fn file_time(p: &Path) -> String {
    std::fs::metadata(p)
        .and_then(|m| m.modified())
        .ok()
        .and_then(|t| t.duration_since(std::time::UNIX_EPOCH).ok())
        .map(|d| from_ms(i64::try_from(d.as_millis()).unwrap_or(i64::MAX)))
        .unwrap_or_default()
}

/// RFC 3339 of seconds (or milliseconds, when the number is that large) since the epoch.
pub fn from_epoch(x: f64) -> String {
    if !x.is_finite() || x <= 0.0 {
        return String::new();
    }
    if x > 1e12 {
        from_ms(x as i64)
    } else {
        from_ms((x * 1000.0).round() as i64)
    }
}

/// A time field as RFC 3339: a string as written, a number as epoch seconds or milliseconds.
pub fn time_of(v: Option<&Value>) -> String {
    match v {
        Some(Value::String(t)) => t.clone(),
        Some(Value::Number(x)) => x.as_f64().map(from_epoch).unwrap_or_default(),
        _ => String::new(),
    }
}

pub use crate::usage::entry::total_fallback;

/// Opens a SQLite store read-only, never writing beside it ([`crate::journal::sqlite`]); `None`
/// when it cannot be read.
pub fn open_db(p: &Path) -> Option<crate::journal::sqlite::ReadOnly> {
    crate::journal::sqlite::open_read_only(p).ok()
}

/// The column names of `table` (empty when it does not exist).
pub fn columns(c: &rusqlite::Connection, table: &str) -> Vec<String> {
    let Ok(mut st) = c.prepare(&format!("PRAGMA table_info({table})")) else { return Vec::new() };
    st.query_map([], |r| r.get::<_, String>(1)).map(|rows| rows.flatten().collect()).unwrap_or_default()
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::usage::entry::Tokens;

    #[test]
    fn total_fallback_fills_output_then_extra() {
        let mut t = Tokens { input: 10, ..Tokens::default() };
        assert_eq!(total_fallback(&mut t, 0, 15), 0);
        assert_eq!(t.output, 5);
        assert_eq!(total_fallback(&mut t, 1, 20), 5);
        assert_eq!(total_fallback(&mut t, 1, 3), 1);
    }

    #[test]
    fn epoch_numbers_in_seconds_or_milliseconds() {
        assert_eq!(from_epoch(1773723372.701451), "2026-03-17T04:56:12.701Z");
        assert_eq!(from_epoch(1785615365242.0), from_ms(1785615365242));
        assert_eq!(from_epoch(-1.0), "");
    }

    #[test]
    fn a_database_without_wal_is_read_immutable_and_gets_no_shm() {
        let d = tempfile::tempdir().unwrap();
        let p = d.path().join("x.db");
        rusqlite::Connection::open(&p).unwrap().execute_batch("CREATE TABLE t(a); INSERT INTO t VALUES (2);").unwrap();
        let (c, tmp) = open_db(&p).unwrap();
        assert!(tmp.is_none());
        let n: i64 = c.query_row("SELECT a FROM t", [], |r| r.get(0)).unwrap();
        assert_eq!(n, 2);
        assert!(c.execute("INSERT INTO t VALUES (3)", []).is_err(), "read-only");
        drop(c);
        assert_eq!(std::fs::read_dir(d.path()).unwrap().count(), 1);
        // Not a regular file: refused.
        assert!(open_db(d.path()).is_none());
    }

    #[test]
    fn a_wal_database_is_read_from_a_copy_and_nothing_is_written_beside_it() {
        let d = tempfile::tempdir().unwrap();
        let p = d.path().join("x.db");
        {
            let c = rusqlite::Connection::open(&p).unwrap();
            c.execute_batch("PRAGMA journal_mode=WAL; CREATE TABLE t(a); INSERT INTO t VALUES (1);").unwrap();
            std::mem::forget(c); // leave the -wal as a running writer would
        }
        let before: Vec<_> = std::fs::read_dir(d.path()).unwrap().flatten().map(|e| e.file_name()).collect();
        let (c, _tmp) = open_db(&p).unwrap();
        let n: i64 = c.query_row("SELECT count(*) FROM t", [], |r| r.get(0)).unwrap();
        assert_eq!(n, 1);
        let after: Vec<_> = std::fs::read_dir(d.path()).unwrap().flatten().map(|e| e.file_name()).collect();
        assert_eq!(before.len(), after.len());
    }
}
