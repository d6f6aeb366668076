//! Kimi CLI and Kimi Code counted the way ccusage counts them. Roots: `$KIMI_DATA_DIR` (a comma
//! list), else `~/.kimi` and `~/.kimi-code`.
//! * Kimi CLI (legacy): `sessions/<group>/<session>/wire.jsonl`, each `StatusUpdate` with
//!   `token_usage {input_other → input, output, input_cache_read, input_cache_creation}`, dated by
//!   the line's float `timestamp`; the log names no model: the root's `config.json` `model`, else
//!   `kimi-for-coding`.
//! * Kimi Code: `sessions/<ws>/<session>/agents/<agent>/wire.jsonl`, each `usage.record` of
//!   `usageScope: "turn"` (`"session"` records are cumulative), `usage {inputOther, output,
//!   inputCacheRead, inputCacheCreation}`, dated by `time` (ms), model without `kimi-code/`.
//!
//! Calls equal in session, message id, time, model and counts are counted once.

use std::collections::HashSet;
use std::path::{Path, PathBuf};
use std::sync::Arc;

use serde_json::Value;

use super::util::{folder, from_ms, json_file, json_lines, n, s, time_of, walk};
use super::Agent;
use crate::usage::entry::{Read, SessionKey, Tokens, UsageEntry};

/// The two layouts' `wire.jsonl` files under a root.
pub fn files(root: &Path) -> Vec<PathBuf> {
    walk(root, |p| {
        super::util::name(p) == "wire.jsonl"
            && (folder(p, 3) == "sessions" || (folder(p, 2) == "agents" && folder(p, 5) == "sessions"))
    })
}

/// The model of a legacy root (`config.json`'s `model`), else ccusage's default.
fn legacy_model(wire: &Path) -> String {
    let root = wire.ancestors().nth(4);
    root.and_then(|r| json_file(&r.join("config.json")))
        .and_then(|c| s(&c, "model"))
        .unwrap_or_else(|| "kimi-for-coding".into())
}

/// The entries of the files.
pub fn read(paths: &[PathBuf], first: usize) -> Read {
    let mut out = Read::default();
    let mut seen = HashSet::new();
    for (i, p) in paths.iter().enumerate() {
        let code = folder(p, 2) == "agents";
        let (session, project) = if code { (folder(p, 3), folder(p, 4)) } else { (folder(p, 1), folder(p, 2)) };
        let sk = Arc::new(SessionKey { agent: Agent::Kimi, project, session: session.clone() });
        let model = if code { String::new() } else { legacy_model(p) };
        for l in json_lines(p) {
            let (tokens, ts, model, id) = if code {
                if l.get("type").and_then(Value::as_str) != Some("usage.record")
                    || l.get("usageScope").and_then(Value::as_str) != Some("turn")
                {
                    continue;
                }
                let Some(u) = l.get("usage") else { continue };
                let t = Tokens {
                    input: n(u, "inputOther"),
                    output: n(u, "output"),
                    cache_creation: n(u, "inputCacheCreation"),
                    cache_read: n(u, "inputCacheRead"),
                };
                let m = s(&l, "model").unwrap_or_default();
                let m = m.strip_prefix("kimi-code/").unwrap_or(&m).to_string();
                (t, l.get("time").and_then(Value::as_i64).map(from_ms).unwrap_or_default(), m, String::new())
            } else {
                let Some(msg) = l.get("message") else { continue };
                if msg.get("type").and_then(Value::as_str) != Some("StatusUpdate") {
                    continue;
                }
                let Some(u) = msg.get("payload").and_then(|p| p.get("token_usage")).filter(|u| u.is_object()) else {
                    continue;
                };
                let t = Tokens {
                    input: n(u, "input_other"),
                    output: n(u, "output"),
                    cache_creation: n(u, "input_cache_creation"),
                    cache_read: n(u, "input_cache_read"),
                };
                let id = msg.get("payload").and_then(|p| s(p, "message_id")).unwrap_or_default();
                (t, time_of(l.get("timestamp")), model.clone(), id)
            };
            if tokens.is_zero() {
                continue;
            }
            let key = (session.clone(), id, ts.clone(), model.clone(), tokens);
            if !seen.insert(format!("{key:?}")) {
                out.duplicates += 1;
                continue;
            }
            out.entries.push(UsageEntry::with_extra(sk.clone(), first + i, ts, Some(model), tokens, 0, 0, None));
        }
    }
    out
}
