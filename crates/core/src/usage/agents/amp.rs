//! Amp (`${AMP_DATA_DIR:-~/.local/share/amp}/threads/**/*.json`, one JSON object per thread)
//! counted the way ccusage 20.0.24 counts it: when the thread has `usageLedger.events`, one
//! entry per event (`tokens.{input, output}`, the cache split from the assistant message whose
//! `messageId` is the event's `toMessageId`), else one per assistant `messages[].usage`
//! (`inputTokens`, `outputTokens`, `cacheCreationInputTokens`, `cacheReadInputTokens`; time
//! and model from `usage`, else the message). As ccusage (`adapter/amp/parser.rs`): a ledger,
//! even empty, wins; `toMessageId` is the message's numeric `messageId`; a call without a
//! readable time or a model, or whose counts are all zero, is none; a total above the parts is
//! extra; a thread without `id` counts nothing.

use std::path::{Path, PathBuf};
use std::sync::Arc;

use serde_json::Value;

use super::util::{json_file, n, s, total_fallback, walk};
use super::Agent;
use crate::usage::entry::{Parse, Read, SessionKey, Tokens, UsageEntry};

/// `threads/**/*.json` under a root.
pub fn files(root: &Path) -> Vec<PathBuf> {
    walk(root, |p| {
        p.extension().is_some_and(|e| e == "json") && p.ancestors().any(|a| super::util::name(a) == "threads")
    })
}

/// The entries of one thread.
pub fn read_file(file: usize, path: &Path, _: Parse) -> Read {
    let mut out = Read::default();
    let Some(v) = json_file(path) else { return out };
    // ccusage reads nothing from a thread without an `id`.
    let Some(id) = s(&v, "id") else { return out };
    let sk = Arc::new(SessionKey { agent: Agent::Amp, project: String::new(), session: id });
    let messages = v.get("messages").and_then(Value::as_array).cloned().unwrap_or_default();
    let mut push = |ts: Option<String>, model: Option<String>, mut tokens: Tokens, total: u64| {
        // A call needs a time and a model; a total above the parts is extra; all-zero is no call.
        let (Some(ts), Some(model)) = (ts.filter(|t| parse_time(t)), model) else { return };
        let extra = total_fallback(&mut tokens, 0, total);
        if tokens.is_zero() && extra == 0 {
            return;
        }
        out.entries.push(UsageEntry::with_extra(sk.clone(), file, ts, Some(model), tokens, extra, 0, None));
    };
    // A ledger, even an empty one, is the thread's usage: its messages are not read then.
    if let Some(events) = v.get("usageLedger").and_then(|l| l.get("events")).and_then(Value::as_array) {
        for e in events {
            let Some(t) = e.get("tokens") else { continue };
            // The cache split of the assistant message the event bills (`toMessageId`, a number).
            let usage = e
                .get("toMessageId")
                .and_then(Value::as_i64)
                .and_then(|id| messages.iter().find(|m| m.get("messageId").and_then(Value::as_i64) == Some(id)))
                .and_then(|m| m.get("usage"));
            let tokens = Tokens {
                input: n(t, "input"),
                output: n(t, "output"),
                cache_creation: usage.map_or(0, |u| n(u, "cacheCreationInputTokens")),
                cache_read: usage.map_or(0, |u| n(u, "cacheReadInputTokens")),
            };
            push(s(e, "timestamp"), s(e, "model"), tokens, n(t, "total"));
        }
        return out;
    }
    for m in &messages {
        if m.get("role").and_then(Value::as_str) != Some("assistant") {
            continue;
        }
        let Some(u) = m.get("usage") else { continue };
        let tokens = Tokens {
            input: n(u, "inputTokens"),
            output: n(u, "outputTokens"),
            cache_creation: n(u, "cacheCreationInputTokens"),
            cache_read: n(u, "cacheReadInputTokens"),
        };
        let ts = s(u, "timestamp").or_else(|| s(m, "timestamp"));
        push(ts, s(u, "model").or_else(|| s(m, "model")), tokens, n(u, "totalTokens"));
    }
    out
}

/// Whether a time string is RFC 3339 (ccusage skips a call whose time it cannot read).
fn parse_time(t: &str) -> bool {
    chrono::DateTime::parse_from_rfc3339(t).is_ok()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn thread(text: &str) -> Read {
        let d = tempfile::tempdir().unwrap();
        let p = d.path().join("threads/T-x.json");
        std::fs::create_dir_all(p.parent().unwrap()).unwrap();
        std::fs::write(&p, text).unwrap();
        read_file(0, &p, Parse::Fast)
    }

    /// SYNTHETIC threads in Amp's schema, checked against ccusage 20.0.24 itself (`ccusage amp
    /// session --json`): the ledger's `toMessageId` is the message's numeric `messageId`, so
    /// the cache split was lost; a `totalTokens` above the parts was not counted; the message's
    /// own `model`/`timestamp` were not read when `usage` lacks them.
    #[test]
    fn regression_ledger_cache_split_total_and_message_model_were_missed() {
        let r = thread(
            r#"{"id":"T-c","usageLedger":{"events":[{"timestamp":"2026-01-03T00:00:00Z","model":"claude-haiku-4-5","tokens":{"input":5,"output":1},"toMessageId":1}]},"messages":[{"role":"assistant","messageId":1,"usage":{"cacheReadInputTokens":100,"cacheCreationInputTokens":3}}]}"#,
        );
        assert_eq!(r.entries[0].tokens, Tokens { input: 5, output: 1, cache_creation: 3, cache_read: 100 });
        let r = thread(
            r#"{"id":"T-a","messages":[{"role":"assistant","timestamp":"2026-01-01T00:00:05Z","model":"claude-haiku-4-5","usage":{"inputTokens":10,"outputTokens":2,"totalTokens":20}},{"role":"assistant","timestamp":"2026-01-01T00:00:06Z","model":"claude-haiku-4-5","usage":{"inputTokens":0,"outputTokens":0}}]}"#,
        );
        assert_eq!(r.entries.len(), 1, "the all-zero call is none");
        assert_eq!((r.entries[0].extra, r.entries[0].model.as_deref()), (8, Some("claude-haiku-4-5")));
    }

    /// SYNTHETIC: an empty `usageLedger.events` is the thread's usage for ccusage (nothing),
    /// and its `messages[].usage` are not read; ctxj counted them.
    #[test]
    fn regression_empty_ledger_fell_back_to_message_usage() {
        let r = thread(
            r#"{"id":"T-b","usageLedger":{"events":[]},"messages":[{"role":"assistant","usage":{"model":"claude-haiku-4-5","inputTokens":7,"outputTokens":1,"timestamp":"2026-01-02T00:00:00Z"}}]}"#,
        );
        assert!(r.entries.is_empty());
    }
}
