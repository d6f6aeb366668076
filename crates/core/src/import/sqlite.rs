//! The table names at the head of SQLite bytes, read without opening a database: what detection
//! ([`super::detect`], to recognise or describe a store) and OpenCode's store reader look for. A
//! leaf, so that neither needs the other.

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
