//! Droid (Factory; `${DROID_SESSIONS_DIR:-~/.factory/sessions}`, every `*.settings.json` below)
//! counted the way ccusage 20.0.24 counts it: one entry per session from
//! `tokenUsage {inputTokens, outputTokens, cacheCreationTokens, cacheReadTokens, thinkingTokens}`
//! (session totals; thinking, and a `totalTokens` above all the parts, are extra, priced as
//! output), dated at `providerLockTimestamp`
//! (else the file's modification time); the model is `model`, else the `Model: …` line of the
//! sidecar `<id>.jsonl`, normalised (`custom:` and `[…]` dropped, lower case, `.` and spaces as
//! `-`); a session id seen twice keeps the latest.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::sync::Arc;

use super::util::{json_file, n, s, total_fallback, walk};
use super::Agent;
use crate::usage::entry::{Read, SessionKey, Tokens, UsageEntry};

/// `*.settings.json` under a root.
pub fn files(root: &Path) -> Vec<PathBuf> {
    walk(root, |p| super::util::name(p).ends_with(".settings.json"))
}

/// ccusage's `normalize_droid_model_name`.
pub fn normalize(m: &str) -> String {
    let m = m.trim();
    let m = m.strip_prefix("custom:").unwrap_or(m);
    let mut out = String::new();
    let mut depth = 0;
    for c in m.chars() {
        match c {
            '[' => depth += 1,
            ']' => depth -= 1,
            _ if depth > 0 => {}
            '.' | ' ' => out.push('-'),
            c => out.extend(c.to_lowercase()),
        }
    }
    let mut s = String::new();
    for c in out.chars() {
        if !(c == '-' && s.ends_with('-')) {
            s.push(c);
        }
    }
    s.trim_matches('-').to_string()
}

fn sidecar_model(settings: &Path) -> Option<String> {
    let name = super::util::name(settings);
    let side = settings.with_file_name(format!("{}.jsonl", name.strip_suffix(".settings.json")?));
    let text = crate::journal::input::read_regular_text(&side).ok()?;
    let at = text.find("Model: ")? + "Model: ".len();
    let rest = &text[at..];
    let end = rest.find(['"', '\n', '\\']).unwrap_or(rest.len());
    Some(rest[..end].trim().to_string()).filter(|m| !m.is_empty())
}

/// The entries of the files.
pub fn read(paths: &[PathBuf], first: usize) -> Read {
    let mut latest: BTreeMap<String, (String, UsageEntry)> = BTreeMap::new();
    let mut out = Read::default();
    for (i, p) in paths.iter().enumerate() {
        let Some(v) = json_file(p) else { continue };
        let Some(u) = v.get("tokenUsage").filter(|u| u.is_object()) else { continue };
        let id = super::util::name(p).strip_suffix(".settings.json").unwrap_or_default().to_string();
        let mut tokens = Tokens {
            input: n(u, "inputTokens"),
            output: n(u, "outputTokens"),
            cache_creation: n(u, "cacheCreationTokens"),
            cache_read: n(u, "cacheReadTokens"),
        };
        // A `totalTokens` above the parts and the thinking is counted (ccusage's total fallback).
        let extra = total_fallback(&mut tokens, n(u, "thinkingTokens"), n(u, "totalTokens"));
        let ts = s(&v, "providerLockTimestamp").unwrap_or_else(|| {
            let m = std::fs::metadata(p).and_then(|m| m.modified()).ok();
            m.map(|t| chrono::DateTime::<chrono::Utc>::from(t).to_rfc3339_opts(chrono::SecondsFormat::Millis, true))
                .unwrap_or_default()
        });
        let model = s(&v, "model").or_else(|| sidecar_model(p)).map(|m| normalize(&m));
        let sk = Arc::new(SessionKey { agent: Agent::Droid, project: super::util::folder(p, 1), session: id.clone() });
        let e = UsageEntry::with_extra(sk, first + i, ts.clone(), model, tokens, extra, 0, None);
        match latest.get(&id) {
            Some((t, _)) if *t > ts => out.duplicates += 1,
            Some(_) => {
                out.duplicates += 1;
                latest.insert(id, (ts, e));
            }
            None => {
                latest.insert(id, (ts, e));
            }
        }
    }
    out.entries = latest.into_values().map(|(_, e)| e).filter(|e| !e.tokens.is_zero() || e.extra > 0).collect();
    out
}

#[cfg(test)]
mod tests {
    #[test]
    fn model_names_as_ccusage_normalises_them() {
        assert_eq!(super::normalize("Claude-Opus-4.5-Thinking-[Anthropic]"), "claude-opus-4-5-thinking");
        assert_eq!(super::normalize("Claude Opus 4.5 Thinking [Anthropic]"), "claude-opus-4-5-thinking");
        assert_eq!(super::normalize("custom:GPT-5.1"), "gpt-5-1");
    }

    /// SYNTHETIC `settings.json` in Droid's schema, checked against ccusage 20.0.24 (`ccusage
    /// droid session --json`): `totalTokens` 20 over input 5 + output 5 lost the 10 tokens
    /// ccusage counts as extra (priced as output), so the total and the cost were lower.
    #[test]
    fn regression_total_above_the_parts_was_not_counted() {
        let d = tempfile::tempdir().unwrap();
        let p = d.path().join("slug/s3.settings.json");
        std::fs::create_dir_all(p.parent().unwrap()).unwrap();
        std::fs::write(
            &p,
            r#"{"model":"Claude Opus 4.1","tokenUsage":{"inputTokens":5,"outputTokens":5,"totalTokens":20}}"#,
        )
        .unwrap();
        let r = super::read(&[p], 0);
        assert_eq!((r.entries[0].tokens.output, r.entries[0].extra), (5, 10));
    }
}
