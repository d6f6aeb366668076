//! Grok Build (`${GROK_HOME:-~/.grok}/sessions/<cwd>/<session>/updates.jsonl`), built from the
//! later ccusage adapter's documentation (`rust/adapters/grok`; no sample and no ccusage 20.0.24
//! output to check against): each `turn_completed` update's `usage` (one row per turn, the sum
//! of its requests), per model from `modelUsage` when present; `inputTokens` includes
//! `cachedReadTokens` (input = inputTokens − cachedRead − cacheCreation), reasoning is inside
//! `outputTokens`; `costUsdTicks` / 1e10 is the recorded cost; `eventId|model` counted once.

use std::collections::HashSet;
use std::path::{Path, PathBuf};
use std::sync::Arc;

use serde_json::Value;

use super::util::{folder, json_lines, n, s, time_of, walk};
use super::Agent;
use crate::usage::entry::{Parse, Read, SessionKey, Tokens, UsageEntry};

/// `updates.jsonl` under a root.
pub fn files(root: &Path) -> Vec<PathBuf> {
    walk(root, |p| super::util::name(p) == "updates.jsonl")
}

fn tokens(u: &Value) -> Tokens {
    let read = n(u, "cachedReadTokens");
    let write = n(u, "cacheCreationTokens");
    Tokens {
        input: n(u, "inputTokens").saturating_sub(read.saturating_add(write)),
        output: n(u, "outputTokens"),
        cache_creation: write,
        cache_read: read,
    }
}

/// The entries of one session's updates.
pub fn read_file(file: usize, path: &Path, _: Parse) -> Read {
    let mut out = Read::default();
    let mut seen = HashSet::new();
    for l in json_lines(path) {
        let Some(params) = l.get("params") else { continue };
        let Some(up) =
            params.get("update").filter(|u| u.get("sessionUpdate").and_then(Value::as_str) == Some("turn_completed"))
        else {
            continue;
        };
        let Some(u) = up.get("usage").filter(|u| u.is_object()) else { continue };
        let session = s(params, "sessionId").unwrap_or_else(|| folder(path, 1));
        let sk = Arc::new(SessionKey { agent: Agent::Grok, project: folder(path, 2), session });
        let event = params.get("_meta").and_then(|m| s(m, "eventId")).unwrap_or_default();
        let ts = time_of(l.get("timestamp"));
        let per_model: Vec<(Option<String>, &Value)> = match u.get("modelUsage").and_then(Value::as_object) {
            Some(m) if !m.is_empty() => m.iter().map(|(k, v)| (Some(k.clone()), v)).collect(),
            _ => vec![(s(u, "model"), u)],
        };
        let single = per_model.len() == 1;
        for (model, mu) in per_model {
            if !seen.insert(format!("{event}|{model:?}")) {
                out.duplicates += 1;
                continue;
            }
            let t = tokens(mu);
            let ticks = if single { u.get("costUsdTicks") } else { mu.get("costUsdTicks") };
            let recorded = ticks.and_then(Value::as_f64).map(|x| x / 1e10);
            out.entries.push(UsageEntry::with_extra(sk.clone(), file, ts.clone(), model, t, 0, 0, recorded));
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A SYNTHETIC `updates.jsonl` written from the documented shape (later ccusage's
    /// `rust/adapters/grok/README.md`): a turn with two models, one repeated event, one update
    /// that is not a turn end.
    #[test]
    fn turns_per_model_with_cache_carved_out_and_ticks_as_cost() {
        let d = tempfile::tempdir().unwrap();
        let p = d.path().join("sessions/%2Fhome%2Fu/s1/updates.jsonl");
        std::fs::create_dir_all(p.parent().unwrap()).unwrap();
        let turn = r#"{"timestamp":"2026-05-01T10:00:00Z","params":{"sessionId":"s1","update":{"sessionUpdate":"turn_completed","usage":{"modelUsage":{"grok-4-build":{"inputTokens":100,"outputTokens":20,"cachedReadTokens":60,"cacheCreationTokens":10,"costUsdTicks":5000000}, "grok-3-mini":{"inputTokens":7,"outputTokens":1}}}},"_meta":{"eventId":"e1"}}}"#;
        let other = r#"{"timestamp":"2026-05-01T10:00:01Z","params":{"sessionId":"s1","update":{"sessionUpdate":"agent_message_chunk"},"_meta":{"eventId":"e2"}}}"#;
        std::fs::write(&p, [turn, turn, other].join("\n")).unwrap();
        assert_eq!(files(d.path()), vec![p.clone()]);
        let r = read_file(0, &p, Parse::Fast);
        assert_eq!((r.entries.len(), r.duplicates), (2, 2));
        let g = r.entries.iter().find(|e| e.model.as_deref() == Some("grok-4-build")).unwrap();
        assert_eq!(g.tokens, Tokens { input: 30, output: 20, cache_creation: 10, cache_read: 60 });
        assert_eq!(g.cost, Some(5e-4));
        assert_eq!(g.session.key(), "%2Fhome%2Fu/s1");
    }
}
