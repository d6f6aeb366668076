//! Cline (SDK ≥ 4.0; sessions under `$CLINE_SESSION_DATA_DIR`, `$CLINE_DATA_DIR/sessions`,
//! `$CLINE_DIR/data/sessions` or `~/.cline/data/sessions`): each `<id>.messages.json` (and a
//! child agent's `<agent>.messages.json`), every assistant message with `modelInfo.id` and
//! `metrics {inputTokens, outputTokens, cacheReadTokens, cacheWriteTokens, cost}`, dated by `ts`
//! (ms). ccusage 20.0.24 has no `cline` command; this follows the later ccusage adapter
//! (`rust/adapters/cline`): input = `inputTokens` as written, a recorded `cost` above 0 wins.
//! Cline's `inputTokens` already include the cache reads and writes (its own cost code subtracts
//! them), so that rule counts them twice; ctxj copies it and reports them as `double_counted`.
//! The legacy `tasks/*/ui_messages.json` is not read (ccusage does not read it either).

use std::path::{Path, PathBuf};
use std::sync::Arc;

use serde_json::Value;

use super::util::{f, folder, from_ms, json_file, n, s, walk};
use super::Agent;
use crate::usage::entry::{Read, SessionKey, Tokens, UsageEntry};

/// `*.messages.json` under a root.
pub fn files(root: &Path) -> Vec<PathBuf> {
    walk(root, |p| super::util::name(p).ends_with(".messages.json"))
}

/// The entries of the files.
pub fn read(paths: &[PathBuf], first: usize) -> Read {
    let mut out = Read::default();
    for (i, p) in paths.iter().enumerate() {
        let Some(v) = json_file(p) else { continue };
        let session = s(&v, "sessionId").unwrap_or_else(|| folder(p, 1));
        let sk = Arc::new(SessionKey { agent: Agent::Cline, project: String::new(), session });
        for m in v.get("messages").and_then(Value::as_array).into_iter().flatten() {
            if m.get("role").and_then(Value::as_str) != Some("assistant") {
                continue;
            }
            let (Some(model), Some(x)) = (m.get("modelInfo").and_then(|i| s(i, "id")), m.get("metrics")) else {
                continue;
            };
            let tokens = Tokens {
                input: n(x, "inputTokens"),
                output: n(x, "outputTokens"),
                cache_creation: n(x, "cacheWriteTokens"),
                cache_read: n(x, "cacheReadTokens"),
            };
            if tokens.is_zero() {
                continue;
            }
            let dup = tokens.cache_read.saturating_add(tokens.cache_creation).min(tokens.input);
            let ts = m.get("ts").and_then(Value::as_i64).map(from_ms).unwrap_or_default();
            let recorded = f(x, "cost").filter(|c| *c > 0.0);
            out.entries.push(UsageEntry::with_extra(sk.clone(), first + i, ts, Some(model), tokens, 0, dup, recorded));
        }
    }
    out
}
