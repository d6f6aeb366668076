//! Codex rollouts counted the way ccusage 20.0.24's `ccusage codex` counts them: one entry per
//! `event_msg/token_count` with `info`, from `last_token_usage`; a repeated `token_count` (the
//! same `total_token_usage`, only the rate limits changed) is counted once, and the all-zero
//! estimate Codex writes after a compaction adds nothing. Codex's `input_tokens` include the
//! cached part: `input` = input − cached, `cache_read` = cached, no cache writes; reasoning tokens
//! are already inside `output_tokens`. The model is the last `turn_context`'s.

use std::path::Path;
use std::sync::Arc;

use serde_json::Value;

use super::entry::{count as n, Compaction, Read, SessionKey, Tokens, UsageEntry};
use crate::import::Format;

/// The session of a rollout: the folder under `sessions/` and the file stem (ccusage's id is
/// `project/session`).
pub fn session_of(path: &Path) -> SessionKey {
    let stem = path.file_stem().map(|s| s.to_string_lossy().into_owned()).unwrap_or_default();
    let comps: Vec<String> = path.components().map(|c| c.as_os_str().to_string_lossy().into_owned()).collect();
    let project = match comps.iter().rposition(|c| c == "sessions") {
        Some(i) if comps.len() > i + 2 => comps[i + 1..comps.len() - 1].join("/"),
        _ => String::new(),
    };
    SessionKey { agent: Format::Codex, project, session: stem }
}

/// The entries and compactions of one rollout.
pub fn read_file(file: usize, path: &Path) -> Read {
    match crate::journal::input::read_regular(path) {
        Ok(bytes) => read_bytes(file, path, &bytes),
        Err(_) => Read::default(),
    }
}

/// The entries and compactions of one rollout's bytes (`path` names the session).
pub fn read_bytes(file: usize, path: &Path, bytes: &[u8]) -> Read {
    let mut out = Read::default();
    let session = Arc::new(session_of(path));
    let mut model: Option<String> = None;
    let mut last_total: Option<Value> = None;
    for line in bytes.split(|&b| b == b'\n') {
        let wanted = ["\"token_count\"", "\"turn_context\"", "\"compacted\""];
        if !wanted.iter().any(|w| memchr::memmem::find(line, w.as_bytes()).is_some()) {
            continue;
        }
        let Ok(v) = serde_json::from_slice::<Value>(line) else { continue };
        let ts = v.get("timestamp").and_then(Value::as_str).unwrap_or("").to_string();
        let payload = v.get("payload").unwrap_or(&Value::Null);
        match v.get("type").and_then(Value::as_str) {
            Some("turn_context") => {
                if let Some(m) = payload.get("model").and_then(Value::as_str) {
                    model = Some(m.to_string());
                }
            }
            Some("compacted") => out.compactions.push(Compaction { session: session.clone(), ts }),
            Some("event_msg") if payload.get("type").and_then(Value::as_str) == Some("token_count") => {
                let Some(info) = payload.get("info").filter(|i| i.is_object()) else { continue };
                let total = info.get("total_token_usage").cloned();
                if total.is_some() && total == last_total {
                    out.duplicates += 1;
                    continue;
                }
                last_total = total;
                let Some(last) = info.get("last_token_usage") else { continue };
                let cached = n(last, "cached_input_tokens");
                let tokens = Tokens {
                    input: n(last, "input_tokens").saturating_sub(cached),
                    output: n(last, "output_tokens"),
                    cache_creation: 0,
                    cache_read: cached,
                };
                if tokens.is_zero() {
                    continue;
                }
                out.entries.push(UsageEntry::priced(session.clone(), file, ts, model.clone(), tokens, None));
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
    fn repeated_token_count_counts_once_and_cached_input_is_split_off() {
        let d = tempfile::tempdir().unwrap();
        let p = d.path().join("sessions/2026/03/14/rollout-x.jsonl");
        std::fs::create_dir_all(p.parent().unwrap()).unwrap();
        let tc = |total: u64, input: u64| {
            format!(
                r#"{{"timestamp":"2026-03-14T10:00:00Z","type":"event_msg","payload":{{"type":"token_count","info":{{"total_token_usage":{{"input_tokens":{total}}},"last_token_usage":{{"input_tokens":{input},"cached_input_tokens":40,"output_tokens":5}}}}}}}}"#
            )
        };
        let text = [
            r#"{"type":"turn_context","payload":{"model":"gpt-5.3-codex"}}"#.to_string(),
            tc(100, 100),
            tc(100, 100),
            tc(250, 150),
        ]
        .join("\n");
        std::fs::write(&p, text).unwrap();
        let r = read_file(0, &p);
        assert_eq!(r.entries.len(), 2);
        assert_eq!(r.duplicates, 1);
        assert_eq!(r.entries[0].tokens, Tokens { input: 60, output: 5, cache_creation: 0, cache_read: 40 });
        assert_eq!(r.entries[0].session.key(), "2026/03/14/rollout-x");
        assert!(r.entries[0].cost.unwrap() > 0.0);
    }
}
