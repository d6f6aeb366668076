//! OpenCode (`${OPENCODE_DATA_DIR:-~/.local/share/opencode}`) and Kilo CLI
//! (`${KILO_DATA_DIR:-~/.local/share/kilo}`, the same schema) counted the way ccusage 20.0.24
//! counts them: every `message` row of `opencode.db` (else the first `opencode-<channel>.db`) or
//! `kilo.db`, and OpenCode's legacy `storage/message/**/*.json`, with
//! `tokens.{input, output, cache.read, cache.write, total}`, `modelID`, `time.created` (ms) and
//! `cost`; a message id is counted once (database rows win over JSON files). A recorded `cost`
//! above 0 wins. Kilo adds `tokens.reasoning` as extra (OpenCode's reader does not), and a
//! `total` above the parts fills output or extra (ccusage's total fallback).

use std::collections::HashSet;
use std::path::{Path, PathBuf};
use std::sync::Arc;

use serde_json::Value;

use super::util::{f, from_ms, json_file, n, num, open_db, s, total_fallback, walk};
use super::Agent;
use crate::usage::entry::{Read, SessionKey, Tokens, UsageEntry};

fn is_db(p: &Path, agent: Agent) -> bool {
    let name = super::util::name(p);
    match agent {
        Agent::Kilo => name == "kilo.db",
        _ => name == "opencode.db" || (name.starts_with("opencode-") && name.ends_with(".db")),
    }
}

/// OpenCode's files under a root: its database (`opencode.db`, else the first
/// `opencode-<channel>.db`) and the legacy JSON messages.
pub fn files_opencode(root: &Path) -> Vec<PathBuf> {
    if root.is_file() {
        return vec![root.to_path_buf()];
    }
    let mut dbs: Vec<PathBuf> = walk_top(root).into_iter().filter(|p| is_db(p, Agent::Opencode)).collect();
    dbs.sort_by_key(|p| (super::util::name(p) != "opencode.db", p.clone()));
    dbs.truncate(1);
    dbs.extend(walk(&root.join("storage/message"), |p| p.extension().is_some_and(|e| e == "json")));
    dbs
}

/// Kilo's database under a root.
pub fn files_kilo(root: &Path) -> Vec<PathBuf> {
    if root.is_file() {
        return vec![root.to_path_buf()];
    }
    walk_top(root).into_iter().filter(|p| is_db(p, Agent::Kilo)).collect()
}

fn walk_top(root: &Path) -> Vec<PathBuf> {
    let mut v: Vec<PathBuf> = std::fs::read_dir(root)
        .into_iter()
        .flatten()
        .flatten()
        .filter(|e| e.file_type().is_ok_and(|t| t.is_file()))
        .map(|e| e.path())
        .collect();
    v.sort();
    v
}

/// The entries of the files of one agent (databases first, so their rows win).
pub fn read(paths: &[PathBuf], first: usize, agent: Agent) -> Read {
    let mut out = Read::default();
    let mut seen: HashSet<String> = HashSet::new();
    let mut order: Vec<usize> = (0..paths.len()).collect();
    order.sort_by_key(|&i| paths[i].extension().is_none_or(|e| e != "db"));
    for i in order {
        let p = &paths[i];
        let rows: Vec<(String, String, Value)> = if p.extension().is_some_and(|e| e == "db") {
            db_rows(p)
        } else {
            json_file(p)
                .map(|v| (s(&v, "id").unwrap_or_default(), s(&v, "sessionID").unwrap_or_default(), v))
                .into_iter()
                .collect()
        };
        for (id, session, data) in rows {
            if !id.is_empty() && !seen.insert(id) {
                out.duplicates += 1;
                continue;
            }
            if let Some(e) = entry(&data, agent, first + i, session) {
                out.entries.push(e);
            }
        }
    }
    out
}

fn db_rows(p: &Path) -> Vec<(String, String, Value)> {
    let Some((c, _tmp)) = open_db(p) else { return Vec::new() };
    let Ok(mut st) = c.prepare("SELECT id, session_id, data FROM message") else { return Vec::new() };
    let rows = st.query_map([], |r| Ok((r.get::<_, String>(0)?, r.get::<_, String>(1)?, r.get::<_, String>(2)?)));
    rows.map(|it| it.flatten().filter_map(|(i, sid, d)| Some((i, sid, serde_json::from_str(&d).ok()?))).collect())
        .unwrap_or_default()
}

fn entry(d: &Value, agent: Agent, file: usize, session: String) -> Option<UsageEntry> {
    let t = d.get("tokens").filter(|t| t.is_object())?;
    let cache = t.get("cache");
    let mut tokens = Tokens {
        input: n(t, "input"),
        output: n(t, "output"),
        cache_creation: cache.map_or(0, |c| n(c, "write")),
        cache_read: cache.map_or(0, |c| n(c, "read")),
    };
    let extra = if agent == Agent::Kilo { n(t, "reasoning") } else { 0 };
    let extra = total_fallback(&mut tokens, extra, num(t.get("total")));
    if tokens.is_zero() && extra == 0 {
        return None;
    }
    let session = if session.is_empty() { s(d, "sessionID").unwrap_or_default() } else { session };
    let key = Arc::new(SessionKey { agent, project: String::new(), session });
    let ts = d.get("time").and_then(|t| t.get("created")).and_then(Value::as_i64).map(from_ms).unwrap_or_default();
    let model = s(d, "modelID");
    let recorded = f(d, "cost").filter(|c| *c > 0.0);
    Some(UsageEntry::with_extra(key, file, ts, model, tokens, extra, 0, recorded))
}
