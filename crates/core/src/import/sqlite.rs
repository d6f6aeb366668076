//! The table names at the head of SQLite bytes, read without opening a database: what detection
//! ([`super::detect`], to recognise or describe a store) and OpenCode's store reader look for. A
//! leaf, so that neither needs the other. When the schema is not in the head (it moves to later
//! pages as a store grows: a real Hermes `state.db` had it at byte 91,784), [`tables_at`] asks
//! SQLite itself, read-only.

use std::path::Path;

/// The tables the schema pages at the head of an SQLite file create, in order.
pub(crate) fn sqlite_tables(bytes: &[u8]) -> Vec<String> {
    let head = String::from_utf8_lossy(&bytes[..bytes.len().min(64 * 1024)]);
    let mut tables: Vec<String> = Vec::new();
    for (i, _) in head.match_indices("CREATE TABLE ") {
        let rest = head[i + 13..].trim_start_matches("IF NOT EXISTS ");
        let t: String = rest
            .trim_start_matches(['"', '`', '['])
            .chars()
            .take_while(|c| c.is_ascii_alphanumeric() || *c == '_')
            .collect();
        if !t.is_empty() && !tables.contains(&t) {
            tables.push(t);
        }
    }
    tables
}

/// The tables of the SQLite file at `path` whose first bytes are `head`: the `sqlite_master`
/// list of the store opened read-only ([`crate::journal::sqlite::open_read_only`], which writes
/// nothing beside it), else (it cannot be opened) those [`sqlite_tables`] sees in the head.
pub(crate) fn tables_at(path: &Path, head: &[u8]) -> Vec<String> {
    let seen = sqlite_tables(head);
    if !head.starts_with(b"SQLite format 3\0") {
        return seen;
    }
    let Ok((c, _copy)) = crate::journal::sqlite::open_read_only(path) else { return seen };
    let Ok(mut st) = c.prepare("SELECT name FROM sqlite_master WHERE type = 'table' ORDER BY rowid") else {
        return seen;
    };
    st.query_map([], |r| r.get::<_, String>(0)).map(|rows| rows.flatten().collect()).unwrap_or(seen)
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A SYNTHETIC store whose schema outgrew its first page after 160 KiB of rows, so the
    /// `CREATE TABLE`s written last land beyond the 64 KiB head: the byte scan did not see them,
    /// and a real Hermes `state.db` (schema at byte 91,784) was described as "an SQLite
    /// database (no table seen)" instead of a Hermes store.
    #[test]
    fn regression_schema_beyond_the_head_was_no_table_seen() {
        let d = tempfile::tempdir().unwrap();
        let p = d.path().join("state.db");
        let c = rusqlite::Connection::open(&p).unwrap();
        c.execute_batch("PRAGMA page_size=4096; CREATE TABLE filler (x TEXT);").unwrap();
        let big = "x".repeat(4000);
        for _ in 0..40 {
            c.execute("INSERT INTO filler VALUES (?1)", [&big]).unwrap();
        }
        // Enough schema text to overflow page 1, so sqlite_master grows into later pages.
        for i in 0..60 {
            c.execute_batch(&format!("CREATE TABLE t{i} (a TEXT, {} TEXT);", format!("c{i}_").repeat(20) + "z"))
                .unwrap();
        }
        c.execute_batch("CREATE TABLE sessions (id TEXT); CREATE TABLE messages (id TEXT);").unwrap();
        drop(c);
        let bytes = std::fs::read(&p).unwrap();
        let head = &bytes[..bytes.len().min(64 * 1024)];
        let scanned = sqlite_tables(head);
        assert!(!scanned.iter().any(|t| t == "sessions"), "the fixture must hide the table from the scan: {scanned:?}");
        let all = tables_at(&p, head);
        assert!(all.iter().any(|t| t == "sessions") && all.iter().any(|t| t == "messages"), "{all:?}");
        let names: Vec<_> = std::fs::read_dir(d.path()).unwrap().flatten().map(|e| e.file_name()).collect();
        assert_eq!(names.len(), 1, "nothing written beside the store: {names:?}");
    }
}
