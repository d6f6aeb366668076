//! ZCode (`${ZCODE_HOME:-~/.zcode}/cli/db/db.sqlite`, `ZCODE_HOME` comma-separated) counted the
//! way ccusage 20.0.24's adapter counts it: one entry per `model_usage` row with
//! `status = 'completed'` (joined with `session` for the project folder, `session.directory`),
//! dated at `started_at` (milliseconds; a row at or before the epoch is left out), model
//! `model_id` (trimmed; a row without one is left out). ZCode's `input_tokens` includes the cache:
//! the cache read is carved out of it first, then the cache creation, each at most what is left,
//! so nothing is counted twice; `computed_total_tokens` above the parts fills output or extra
//! (ccusage's total fallback); `reasoning_tokens` is not read. A row id is counted once across
//! databases (the first wins). ZCode records no cost.

use std::collections::HashSet;
use std::path::{Path, PathBuf};
use std::sync::Arc;

use super::util::{from_ms, open_db, total_fallback};
use super::{Agent, Env};
use crate::usage::entry::{Read, SessionKey, Tokens, UsageEntry};

/// The ZCode homes: `$ZCODE_HOME` (comma-separated), else `~/.zcode`.
pub fn roots(e: &Env) -> Vec<PathBuf> {
    e.list_or_home("ZCODE_HOME", &[".zcode"])
}

/// `cli/db/db.sqlite` of a home, or the file itself.
pub fn files(root: &Path) -> Vec<PathBuf> {
    if root.is_file() {
        return vec![root.to_path_buf()];
    }
    Some(root.join("cli/db/db.sqlite")).filter(|p| p.is_file()).into_iter().collect()
}

const QUERY: &str = "SELECT m.id, m.session_id, m.started_at, m.model_id, m.input_tokens, m.output_tokens, \
    m.cache_creation_input_tokens, m.cache_read_input_tokens, m.computed_total_tokens, s.directory \
    FROM model_usage m LEFT JOIN session s ON s.id = m.session_id WHERE m.status = 'completed'";

/// One row: id, session, start (ms), model, the five counts, the folder.
type Row = (String, String, i64, String, [u64; 5], Option<String>);

fn rows(p: &Path) -> Vec<Row> {
    let Some((c, _tmp)) = open_db(p) else { return Vec::new() };
    let Ok(mut st) = c.prepare(QUERY) else { return Vec::new() };
    let count = |r: &rusqlite::Row, i: usize| r.get::<_, i64>(i).map_or(0, |v| v.max(0) as u64);
    let read = |r: &rusqlite::Row| -> rusqlite::Result<Option<Row>> {
        let (Ok(id), Ok(session), Ok(start), Ok(model)) =
            (r.get::<_, String>(0), r.get::<_, String>(1), r.get::<_, i64>(2), r.get::<_, String>(3))
        else {
            return Ok(None);
        };
        let counts = [count(r, 4), count(r, 5), count(r, 6), count(r, 7), count(r, 8)];
        Ok(Some((id, session, start, model, counts, r.get::<_, Option<String>>(9).ok().flatten())))
    };
    st.query_map([], read).map(|it| it.flatten().flatten().collect()).unwrap_or_default()
}

/// The tokens of a row ([input incl. cache, output, cache creation, cache read, total]) and the
/// extra beyond them.
fn carve(c: [u64; 5]) -> (Tokens, u64) {
    let [input, output, creation, read, total] = c;
    let cache_read = read.min(input);
    let input = input - cache_read;
    let cache_creation = creation.min(input);
    let mut t = Tokens { input: input - cache_creation, output, cache_creation, cache_read };
    let extra = total_fallback(&mut t, 0, total);
    (t, extra)
}

/// The entries of the files.
pub fn read(paths: &[PathBuf], first: usize) -> Read {
    let mut out = Read::default();
    let mut seen: HashSet<String> = HashSet::new();
    for (i, p) in paths.iter().enumerate() {
        for (id, session, start, model, counts, dir) in rows(p) {
            let model = model.trim();
            let (tokens, extra) = carve(counts);
            if start <= 0 || (tokens.is_zero() && extra == 0) || model.is_empty() {
                continue;
            }
            if !seen.insert(id) {
                out.duplicates += 1;
                continue;
            }
            let key = Arc::new(SessionKey { agent: Agent::Zcode, project: dir.unwrap_or_default(), session });
            let e =
                UsageEntry::with_extra(key, first + i, from_ms(start), Some(model.to_string()), tokens, extra, 0, None);
            out.entries.push(e);
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A `model_usage` row: id, session, start, model, status, the five counts.
    type TestRow<'a> = (&'a str, &'a str, i64, &'a str, &'a str, [i64; 5]);

    fn db(p: &Path, rows: &[TestRow]) {
        let c = rusqlite::Connection::open(p).unwrap();
        c.execute_batch(
            "CREATE TABLE model_usage (id TEXT PRIMARY KEY, session_id TEXT, started_at INTEGER, model_id TEXT, \
             status TEXT, input_tokens INTEGER, output_tokens INTEGER, reasoning_tokens INTEGER, \
             cache_creation_input_tokens INTEGER, cache_read_input_tokens INTEGER, computed_total_tokens INTEGER); \
             CREATE TABLE session (id TEXT PRIMARY KEY, directory TEXT); \
             INSERT INTO session VALUES ('s1', '/home/u/proj');",
        )
        .unwrap();
        for (id, s, at, model, status, n) in rows {
            c.execute(
                "INSERT INTO model_usage VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, 0, ?8, ?9, ?10)",
                rusqlite::params![id, s, at, model, status, n[0], n[1], n[2], n[3], n[4]],
            )
            .unwrap();
        }
    }

    #[test]
    fn the_cache_is_carved_out_of_input_and_clamped() {
        assert_eq!(
            carve([1000, 300, 100, 200, 1300]),
            (Tokens { input: 700, output: 300, cache_creation: 100, cache_read: 200 }, 0)
        );
        assert_eq!(carve([10, 5, 0, 40, 15]), (Tokens { input: 0, output: 5, cache_creation: 0, cache_read: 10 }, 0));
        assert_eq!(carve([10, 5, 30, 4, 15]).0, Tokens { input: 0, output: 5, cache_creation: 6, cache_read: 4 });
        // A recorded total beyond the parts is extra when there is output.
        assert_eq!(carve([100, 10, 0, 0, 130]).1, 20);
    }

    #[test]
    fn completed_rows_only_once_across_homes_with_their_folder() {
        let d = tempfile::tempdir().unwrap();
        let (a, b) = (d.path().join("a.sqlite"), d.path().join("b.sqlite"));
        let t = 1_786_909_042_666;
        db(
            &a,
            &[
                ("u1", "s1", t, " GLM-5.3 ", "completed", [16_507, 59, 0, 11_712, 16_566]),
                ("u2", "s1", t, "GLM-5.3", "error", [100, 1, 0, 0, 101]),
                ("u3", "s2", 0, "GLM-5.3", "completed", [100, 1, 0, 0, 101]),
                ("u4", "s2", t, "  ", "completed", [100, 1, 0, 0, 101]),
                ("u5", "s2", t, "GLM-5.3", "completed", [0, 0, 0, 0, 0]),
                ("u6", "s2", t + 1000, "GLM-5.3", "completed", [-5, 7, 0, 0, 7]),
            ],
        );
        db(&b, &[("u1", "s1", t, "GLM-5.3", "completed", [1, 1, 0, 0, 2])]);
        let r = read(&[a, b], 0);
        let got: Vec<_> = r
            .entries
            .iter()
            .map(|e| {
                (e.session.session.as_str(), e.session.project.as_str(), e.tokens.input, e.tokens.cache_read, e.file)
            })
            .collect();
        assert_eq!(got, [("s1", "/home/u/proj", 4795, 11_712, 0), ("s2", "", 0, 0, 0)]);
        assert_eq!(r.entries[0].model.as_deref(), Some("GLM-5.3"));
        assert_eq!(r.entries[0].ts, "2026-08-16T19:37:22.666Z");
        assert_eq!(r.duplicates, 1);
    }
}
