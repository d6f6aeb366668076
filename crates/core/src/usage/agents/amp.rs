//! Amp (`${AMP_DATA_DIR:-~/.local/share/amp}/threads/**/*.json`, one JSON object per thread)
//! counted the way ccusage 20.0.24 counts it: when the thread has `usageLedger.events`, one
//! entry per event (`tokens.{input, output}`, the cache split from the assistant message whose
//! `messageId` is the event's `toMessageId`), else one per assistant `messages[].usage`
//! (`inputTokens`, `outputTokens`, `cacheCreationInputTokens`, `cacheReadInputTokens`).

use std::path::{Path, PathBuf};
use std::sync::Arc;

use serde_json::Value;

use super::util::{json_file, n, s, walk};
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
    let id =
        s(&v, "id").unwrap_or_else(|| path.file_stem().map(|x| x.to_string_lossy().into_owned()).unwrap_or_default());
    let sk = Arc::new(SessionKey { agent: Agent::Amp, project: String::new(), session: id });
    let messages = v.get("messages").and_then(Value::as_array).cloned().unwrap_or_default();
    let events = v.get("usageLedger").and_then(|l| l.get("events")).and_then(Value::as_array).filter(|e| !e.is_empty());
    if let Some(events) = events {
        for e in events {
            let t = e.get("tokens").cloned().unwrap_or(Value::Null);
            let target = s(e, "toMessageId");
            let usage = target
                .and_then(|id| messages.iter().find(|m| s(m, "messageId").as_deref() == Some(id.as_str())))
                .and_then(|m| m.get("usage"));
            let tokens = Tokens {
                input: n(&t, "input"),
                output: n(&t, "output"),
                cache_creation: usage.map_or(0, |u| n(u, "cacheCreationInputTokens")),
                cache_read: usage.map_or(0, |u| n(u, "cacheReadInputTokens")),
            };
            let ts = s(e, "timestamp").unwrap_or_default();
            out.entries.push(UsageEntry::with_extra(sk.clone(), file, ts, s(e, "model"), tokens, 0, 0, None));
        }
        return out;
    }
    for m in &messages {
        if m.get("role").and_then(Value::as_str) != Some("assistant") {
            continue;
        }
        let Some(u) = m.get("usage").filter(|u| u.is_object()) else { continue };
        let tokens = Tokens {
            input: n(u, "inputTokens"),
            output: n(u, "outputTokens"),
            cache_creation: n(u, "cacheCreationInputTokens"),
            cache_read: n(u, "cacheReadInputTokens"),
        };
        let ts = s(u, "timestamp").unwrap_or_default();
        out.entries.push(UsageEntry::with_extra(sk.clone(), file, ts, s(u, "model"), tokens, 0, 0, None));
    }
    out
}
