//! Antigravity (`${ANTIGRAVITY_DATA_DIR}/conversations/**/*.db`, comma-separated roots, else
//! `~/.gemini/antigravity-cli/conversations/**/*.db`: one SQLite database per conversation, a
//! sub-conversation in a database of its own) counted the way ccusage 20.0.24's adapter counts it.
//! Usage lives in protobuf blobs ([`super::protobuf`]), read by field number:
//!
//! * `steps.metadata` (`CortexStepMetadata`, the primary source, one row per model call, the
//!   background calls included): field 9 the call's `ModelUsageStats`, each field 28
//!   (`RetryInfo`) field 2 another attempt's; dated at field 1 (`created_at`), else 32
//!   (`started_at`), a `Timestamp` (1 seconds, 2 nanos); a step with neither is left out.
//! * `gen_metadata.data`: every length-delimited field of the wrapper read as a
//!   `ChatModelMetadata` (4 usage, 17 retries, 19 `response_model`, 9 → 4 the request time),
//!   kept when it names a model and one of its calls has an identity. It names the steps' calls
//!   (by identity) and adds its own identified calls (a step since pruned).
//! * `ModelUsageStats`: 1 model id, 2 input, 3 output (thinking included; when 0, 9 thinking +
//!   10 response), 4 cache write, 5 cache read (input and cache read are disjoint); identity
//!   11 `response_id`, else 12 the provider's message id, else 7 `message_id`.
//!
//! A call is counted once across every database (steps first, then generations, databases in
//! path order; the first copy wins, retries of other attempts count); calls with no tokens are
//! left out. A call no generation names is `antigravity-model-<id>`, which has no price. The
//! session is the database's file stem. Antigravity records no cost.

use std::collections::{HashMap, HashSet};
use std::path::{Path, PathBuf};
use std::sync::Arc;

use rayon::prelude::*;

use super::protobuf::{fields, text, Value};
use super::util::{from_ms, open_db, walk};
use super::{Agent, Env};
use crate::usage::entry::{Read, SessionKey, Tokens, UsageEntry};

/// The data folders: `$ANTIGRAVITY_DATA_DIR` (comma-separated), else `~/.gemini/antigravity-cli`.
pub fn roots(e: &Env) -> Vec<PathBuf> {
    e.list_or_home("ANTIGRAVITY_DATA_DIR", &[".gemini/antigravity-cli"])
}

/// The conversation databases under a data folder's `conversations/` (or under the folder
/// itself when it has none), or the file itself.
pub fn files(root: &Path) -> Vec<PathBuf> {
    let conv = root.join("conversations");
    let dir = if conv.is_dir() { conv } else { root.to_path_buf() };
    walk(&dir, |p| p.extension().is_some_and(|e| e == "db"))
}

/// One `ModelUsageStats`.
#[derive(Debug, Default, Clone, PartialEq, Eq)]
struct Usage {
    model_id: u64,
    input: u64,
    output: u64,
    cache_write: u64,
    cache_read: u64,
    thinking: u64,
    response: u64,
    response_id: Option<String>,
    provider_message_id: Option<String>,
    message_id: Option<String>,
}

impl Usage {
    fn parse(b: &[u8]) -> Usage {
        let mut u = Usage::default();
        for (n, v) in fields(b) {
            match (n, v) {
                (1, Value::Varint(x)) => u.model_id = x,
                (2, Value::Varint(x)) => u.input = x,
                (3, Value::Varint(x)) => u.output = x,
                (4, Value::Varint(x)) => u.cache_write = x,
                (5, Value::Varint(x)) => u.cache_read = x,
                (9, Value::Varint(x)) => u.thinking = x,
                (10, Value::Varint(x)) => u.response = x,
                (7, Value::Bytes(x)) => u.message_id = text(x),
                (11, Value::Bytes(x)) => u.response_id = text(x),
                (12, Value::Bytes(x)) => u.provider_message_id = text(x),
                _ => {}
            }
        }
        u
    }

    /// Field 3, else thinking + response.
    fn total_output(&self) -> u64 {
        if self.output > 0 {
            self.output
        } else {
            self.thinking.saturating_add(self.response)
        }
    }

    fn identity(&self) -> Option<&str> {
        self.response_id.as_deref().or(self.provider_message_id.as_deref()).or(self.message_id.as_deref())
    }

    fn tokens(&self) -> Tokens {
        Tokens {
            input: self.input,
            output: self.total_output(),
            cache_creation: self.cache_write,
            cache_read: self.cache_read,
        }
    }
}

/// Field 2 of a `RetryInfo`.
fn retry(b: &[u8]) -> Option<Usage> {
    fields(b).find_map(|(n, v)| match (n, v) {
        (2, Value::Bytes(x)) => Some(Usage::parse(x)),
        _ => None,
    })
}

/// A `google.protobuf.Timestamp` in milliseconds; `None` unless the seconds are above 0.
fn timestamp(b: &[u8]) -> Option<i64> {
    let (mut secs, mut nanos) = (None, 0u32);
    for (n, v) in fields(b) {
        match (n, v) {
            (1, Value::Varint(x)) => secs = Some(x as i64),
            (2, Value::Varint(x)) => nanos = u32::try_from(x).unwrap_or(0),
            _ => {}
        }
    }
    let secs = secs.filter(|s| *s > 0)?;
    secs.checked_mul(1000)?.checked_add(i64::from(nanos / 1_000_000))
}

/// A `CortexStepMetadata`: its time and its calls (the call, then each retry's).
fn step(b: &[u8]) -> (Option<i64>, Vec<Usage>) {
    let (mut created, mut started, mut usages) = (None, None, Vec::new());
    for (n, v) in fields(b) {
        match (n, v) {
            (1, Value::Bytes(x)) => created = timestamp(x),
            (32, Value::Bytes(x)) => started = timestamp(x),
            (9, Value::Bytes(x)) => usages.push(Usage::parse(x)),
            (28, Value::Bytes(x)) => usages.extend(retry(x)),
            _ => {}
        }
    }
    (created.or(started), usages)
}

/// A `ChatModelMetadata`.
#[derive(Debug, Default)]
struct Generation {
    model: Option<String>,
    ts: Option<i64>,
    usages: Vec<Usage>,
}

fn chat_model(b: &[u8]) -> Generation {
    let mut g = Generation::default();
    for (n, v) in fields(b) {
        match (n, v) {
            (4, Value::Bytes(x)) => g.usages.push(Usage::parse(x)),
            (17, Value::Bytes(x)) => g.usages.extend(retry(x)),
            (19, Value::Bytes(x)) => g.model = text(x),
            (9, Value::Bytes(x)) => {
                for (m, w) in fields(x) {
                    if let (4, Value::Bytes(t)) = (m, w) {
                        g.ts = timestamp(t);
                    }
                }
            }
            _ => {}
        }
    }
    g
}

/// The `ChatModelMetadata`s of a `gen_metadata` blob: each length-delimited field of the wrapper
/// that names a model and holds an identified call.
fn generations(b: &[u8]) -> Vec<Generation> {
    fields(b)
        .filter_map(|(_, v)| match v {
            Value::Bytes(x) => Some(chat_model(x)),
            _ => None,
        })
        .filter(|g| g.model.is_some() && g.usages.iter().any(|u| u.identity().is_some()))
        .collect()
}

/// One call of one conversation, before de-duplication.
struct Call {
    ts: i64,
    usage: Usage,
    model: Option<String>,
}

fn blobs(c: &rusqlite::Connection, sql: &str) -> Vec<Vec<u8>> {
    let Ok(mut st) = c.prepare(sql) else { return Vec::new() };
    st.query_map([], |r| r.get::<_, Vec<u8>>(0)).map(|rows| rows.flatten().collect()).unwrap_or_default()
}

/// The calls of one conversation database, steps first (a missing table reads as empty).
fn calls(p: &Path) -> Vec<Call> {
    let Some((c, _tmp)) = open_db(p) else { return Vec::new() };
    let gens: Vec<Generation> = blobs(&c, "SELECT data FROM gen_metadata WHERE data IS NOT NULL ORDER BY idx")
        .iter()
        .flat_map(|b| generations(b))
        .collect();
    let mut models: HashMap<String, String> = HashMap::new();
    for g in &gens {
        if let Some(m) = &g.model {
            for id in g.usages.iter().filter_map(Usage::identity) {
                models.insert(id.to_string(), m.clone());
            }
        }
    }
    let name = |u: &Usage| u.identity().and_then(|id| models.get(id)).cloned();
    let mut out = Vec::new();
    for b in blobs(&c, "SELECT metadata FROM steps WHERE metadata IS NOT NULL ORDER BY idx") {
        let (ts, usages) = step(&b);
        let Some(ts) = ts else { continue };
        out.extend(usages.into_iter().map(|usage| Call { ts, model: name(&usage), usage }));
    }
    for g in gens {
        let Some(ts) = g.ts else { continue };
        for usage in g.usages.into_iter().filter(|u| u.identity().is_some()) {
            out.push(Call { ts, model: name(&usage), usage });
        }
    }
    out
}

/// The entries of the files.
pub fn read(paths: &[PathBuf], first: usize) -> Read {
    let per_file: Vec<Vec<Call>> = paths.par_iter().map(|p| calls(p)).collect();
    let mut out = Read::default();
    let mut seen: HashSet<String> = HashSet::new();
    for (i, (p, calls)) in paths.iter().zip(per_file).enumerate() {
        let session = p.file_stem().map_or_else(|| "antigravity".to_string(), |s| s.to_string_lossy().into_owned());
        let key = Arc::new(SessionKey { agent: Agent::Antigravity, project: String::new(), session });
        for c in calls {
            if let Some(id) = c.usage.identity() {
                if !seen.insert(id.to_string()) {
                    out.duplicates += 1;
                    continue;
                }
            }
            let tokens = c.usage.tokens();
            if tokens.is_zero() {
                continue;
            }
            let model = c.model.unwrap_or_else(|| format!("antigravity-model-{}", c.usage.model_id));
            out.entries.push(UsageEntry::with_extra(
                key.clone(),
                first + i,
                from_ms(c.ts),
                Some(model),
                tokens,
                0,
                0,
                None,
            ));
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::super::protobuf::encode::{field_bytes, field_varint};
    use super::*;

    /// A `ModelUsageStats`: model id, input, output, cache write, cache read, response id.
    fn usage(model: u64, t: [u64; 4], id: &str) -> Vec<u8> {
        let mut b = field_varint(1, model);
        for (n, x) in [(2, t[0]), (3, t[1]), (4, t[2]), (5, t[3])] {
            b.extend(field_varint(n, x));
        }
        b.extend(field_bytes(11, id.as_bytes()));
        b
    }

    fn ts(secs: u64) -> Vec<u8> {
        let mut b = field_varint(1, secs);
        b.extend(field_varint(2, 500_000_000));
        b
    }

    fn step_blob(secs: u64, u: &[u8]) -> Vec<u8> {
        let mut b = field_bytes(1, &ts(secs));
        b.extend(field_bytes(9, u));
        b
    }

    fn gen_blob(secs: u64, model: &str, u: &[u8]) -> Vec<u8> {
        let mut chat = field_bytes(4, u);
        chat.extend(field_bytes(9, &field_bytes(4, &ts(secs))));
        chat.extend(field_bytes(19, model.as_bytes()));
        // The wrapper's other field (the request) names no model and is skipped.
        let mut b = field_bytes(2, &field_bytes(1, b"request"));
        b.extend(field_bytes(1, &chat));
        b
    }

    fn db(p: &Path, steps: &[Vec<u8>], gens: &[Vec<u8>]) {
        let c = rusqlite::Connection::open(p).unwrap();
        c.execute_batch("CREATE TABLE steps (idx INTEGER PRIMARY KEY, metadata BLOB); CREATE TABLE gen_metadata (idx INTEGER PRIMARY KEY, data BLOB);").unwrap();
        for (i, b) in steps.iter().enumerate() {
            c.execute("INSERT INTO steps VALUES (?1, ?2)", rusqlite::params![i as i64, b]).unwrap();
        }
        for (i, b) in gens.iter().enumerate() {
            c.execute("INSERT INTO gen_metadata VALUES (?1, ?2)", rusqlite::params![i as i64, b]).unwrap();
        }
    }

    #[test]
    fn a_step_is_named_by_its_generation_and_counted_once() {
        let d = tempfile::tempdir().unwrap();
        let p = d.path().join("conv-a.db");
        let u = usage(1071, [4050, 375, 0, 16275], "r-a");
        db(&p, &[step_blob(1_785_328_986, &u)], &[gen_blob(1_785_328_987, "gemini-2.5-pro", &u)]);
        let r = read(&[p], 0);
        assert_eq!(r.entries.len(), 1);
        assert_eq!(r.duplicates, 1);
        let e = &r.entries[0];
        assert_eq!(e.model.as_deref(), Some("gemini-2.5-pro"));
        assert_eq!(e.session.session, "conv-a");
        assert_eq!(e.ts, "2026-07-29T12:43:06.500Z", "the step's time, not the generation's");
        assert_eq!(
            (e.tokens.input, e.tokens.output, e.tokens.cache_creation, e.tokens.cache_read),
            (4050, 375, 0, 16275)
        );
    }

    #[test]
    fn retries_count_unnamed_calls_are_unpriced_and_steps_without_time_are_left_out() {
        let d = tempfile::tempdir().unwrap();
        let p = d.path().join("c.db");
        let ok = usage(1071, [100, 10, 0, 0], "ok");
        let mut s = step_blob(1_785_328_986, &ok);
        s.extend(field_bytes(28, &field_bytes(2, &ok)));
        s.extend(field_bytes(28, &field_bytes(2, &usage(1071, [90, 0, 0, 0], "failed"))));
        let untimed = field_bytes(9, &usage(5, [7, 7, 0, 0], "untimed"));
        // Output from thinking + response when field 3 is absent; identity from the message id.
        let mut split = field_varint(1, 1050);
        split.extend(field_varint(2, 3));
        split.extend(field_varint(9, 4));
        split.extend(field_varint(10, 5));
        split.extend(field_bytes(7, b"m-1"));
        let mut started = field_bytes(32, &ts(1_785_328_990));
        started.extend(field_bytes(9, &split));
        db(&p, &[s, untimed, started, vec![0xff, 0xff]], &[]);
        let r = read(&[p], 3);
        let got: Vec<_> =
            r.entries.iter().map(|e| (e.tokens.input, e.tokens.output, e.model.clone().unwrap())).collect();
        assert_eq!(
            got,
            [
                (100, 10, "antigravity-model-1071".into()),
                (90, 0, "antigravity-model-1071".into()),
                (3, 9, "antigravity-model-1050".into())
            ]
        );
        assert!(r.entries.iter().all(|e| e.cost.is_none() && e.file == 3));
        assert_eq!(r.duplicates, 1, "the retry repeating the call that succeeded");
    }

    #[test]
    fn a_sub_conversation_repeating_its_parent_counts_once_and_pruned_steps_come_from_generations() {
        let d = tempfile::tempdir().unwrap();
        let (a, b) = (d.path().join("a.db"), d.path().join("b.db"));
        let u = usage(1071, [10, 1, 2, 3], "same");
        db(&a, &[step_blob(1_785_328_986, &u)], &[]);
        db(
            &b,
            &[step_blob(1_785_328_999, &u)],
            &[gen_blob(1_785_328_999, "gemini-2.5-flash", &usage(1, [20, 2, 0, 0], "only-gen"))],
        );
        let r = read(&[a, b], 0);
        let got: Vec<_> =
            r.entries.iter().map(|e| (e.session.session.clone(), e.tokens.input, e.model.clone().unwrap())).collect();
        assert_eq!(
            got,
            [("a".into(), 10, "antigravity-model-1071".into()), ("b".into(), 20, "gemini-2.5-flash".into())]
        );
    }

    #[test]
    fn a_database_without_the_tables_or_not_sqlite_reads_as_nothing() {
        let d = tempfile::tempdir().unwrap();
        let p = d.path().join("x.db");
        rusqlite::Connection::open(&p).unwrap().execute_batch("CREATE TABLE other (a);").unwrap();
        std::fs::write(d.path().join("y.db"), b"not sqlite").unwrap();
        assert!(read(&[p, d.path().join("y.db")], 0).entries.is_empty());
    }

    #[test]
    fn files_are_found_under_conversations_recursively() {
        let d = tempfile::tempdir().unwrap();
        let sub = d.path().join("conversations/nested");
        std::fs::create_dir_all(&sub).unwrap();
        std::fs::write(sub.join("s.db"), b"").unwrap();
        std::fs::write(d.path().join("conversations/notes.txt"), b"").unwrap();
        std::fs::write(d.path().join("outside.db"), b"").unwrap();
        assert_eq!(files(d.path()), [sub.join("s.db")]);
    }
}
