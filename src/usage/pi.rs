//! pi sessions counted the way ccusage 20.0.24's `ccusage pi` counts them: one entry per
//! assistant `message` with `usage`, in every branch of the session tree (abandoned branches
//! included), dated by the entry's `timestamp`. The cost is pi's own `usage.cost.total` when
//! recorded, else the built-in price of the message's model.

use std::path::Path;
use std::sync::Arc;

use serde_json::Value;

use super::entry::{count as n, Compaction, Read, SessionKey, Tokens, UsageEntry};
use crate::import::Format;

/// The session of a pi file: its folder (the project) and the file name after the first `_`
/// (the whole stem when there is none).
pub fn session_of(path: &Path) -> SessionKey {
    let stem = path.file_stem().map(|s| s.to_string_lossy().into_owned()).unwrap_or_default();
    let session = stem.split_once('_').map_or(stem.clone(), |(_, id)| id.to_string());
    let project = path.parent().and_then(Path::file_name).map(|n| n.to_string_lossy().into_owned()).unwrap_or_default();
    SessionKey { agent: Format::Pi, project, session }
}

/// The entries and compactions of one pi session file.
pub fn read_file(file: usize, path: &Path) -> Read {
    match crate::journal::input::read_regular(path) {
        Ok(bytes) => read_bytes(file, path, &bytes),
        Err(_) => Read::default(),
    }
}

/// The entries and compactions of one pi session file's bytes (`path` names the session).
pub fn read_bytes(file: usize, path: &Path, bytes: &[u8]) -> Read {
    let mut out = Read::default();
    let session = Arc::new(session_of(path));
    for line in bytes.split(|&b| b == b'\n') {
        let usage = memchr::memmem::find(line, b"\"usage\"").is_some();
        let compaction = memchr::memmem::find(line, b"\"compaction\"").is_some();
        if !usage && !compaction {
            continue;
        }
        let Ok(v) = serde_json::from_slice::<Value>(line) else { continue };
        let ts = v.get("timestamp").and_then(Value::as_str).unwrap_or("").to_string();
        match v.get("type").and_then(Value::as_str) {
            Some("compaction") => out.compactions.push(Compaction { session: session.clone(), ts }),
            Some("message") => {
                let Some(m) = v.get("message").filter(|m| m.get("role").and_then(Value::as_str) == Some("assistant"))
                else {
                    continue;
                };
                let Some(u) = m.get("usage").filter(|u| u.is_object()) else { continue };
                let tokens = Tokens {
                    input: n(u, "input"),
                    output: n(u, "output"),
                    cache_creation: n(u, "cacheWrite"),
                    cache_read: n(u, "cacheRead"),
                };
                let model = m.get("model").and_then(Value::as_str).map(str::to_string);
                let recorded = u.get("cost").and_then(|c| c.get("total")).and_then(Value::as_f64);
                out.entries.push(UsageEntry::priced(session.clone(), file, ts, model, tokens, recorded));
            }
            _ => {}
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn recorded_cost_wins_and_session_id_follows_the_underscore() {
        let d = tempfile::tempdir().unwrap();
        let p = d.path().join("--proj--/2026-03-15T09-30-00-412Z_abc.jsonl");
        std::fs::create_dir_all(p.parent().unwrap()).unwrap();
        let text = [
            r#"{"type":"message","timestamp":"2026-03-15T09:30:48Z","message":{"role":"assistant","model":"claude-sonnet-4-5","usage":{"input":1,"output":2,"cacheRead":3,"cacheWrite":4,"cost":{"total":0.5}}}}"#,
            r#"{"type":"message","timestamp":"2026-03-15T09:31:48Z","message":{"role":"user","usage":{"input":9}}}"#,
            r#"{"type":"compaction","timestamp":"2026-03-15T09:32:00Z"}"#,
        ]
        .join("\n");
        std::fs::write(&p, text).unwrap();
        let r = read_file(0, &p);
        assert_eq!(r.entries.len(), 1);
        assert_eq!(r.entries[0].cost, Some(0.5));
        assert_eq!(r.entries[0].tokens.total(), 10);
        assert_eq!(r.compactions.len(), 1);
        assert_eq!(r.entries[0].session.key(), "--proj--/abc");
    }
}
