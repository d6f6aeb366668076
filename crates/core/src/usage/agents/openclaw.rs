//! OpenClaw (pi's session format under `agents/<agent>/sessions/`; roots `$OPENCLAW_DIR`, else
//! `~/.openclaw`, `~/.clawdbot`, `~/.moltbot`, `~/.moldbot`) counted the way ccusage 20.0.24
//! counts it: every `*.jsonl` and archived `*.jsonl.deleted.<ts>` / `*.jsonl.reset.<ts>`, each
//! assistant `message` with `usage {input, output, cacheRead, cacheWrite, totalTokens,
//! cost.total}`; the model is the message's `model`/`modelId`, else the last `model_change` or
//! `model-snapshot`; a recorded cost wins, even 0 (ccusage's auto mode); calls equal in session,
//! time, model, counts and cost are counted once (which also folds archive copies). A message
//! whose every count is zero (a `delivery-mirror` copy, a provider that reports no usage) is no
//! call, as in ccusage (`adapter/openclaw/parser.rs`).

use std::collections::HashSet;
use std::path::{Path, PathBuf};
use std::sync::Arc;

use serde_json::Value;

use super::util::{folder, json_lines, n, s, total_fallback, walk};
use super::Agent;
use crate::usage::entry::{Compaction, Read, SessionKey, Tokens, UsageEntry};

/// Session files and their archives under a root.
pub fn files(root: &Path) -> Vec<PathBuf> {
    walk(root, |p| {
        let name = super::util::name(p);
        name.ends_with(".jsonl") || name.contains(".jsonl.deleted.") || name.contains(".jsonl.reset.")
    })
}

/// The entries of the files.
pub fn read(paths: &[PathBuf], first: usize) -> Read {
    let mut out = Read::default();
    let mut seen = HashSet::new();
    for (i, p) in paths.iter().enumerate() {
        let name = super::util::name(p);
        let session = name.split(".jsonl").next().unwrap_or(&name).to_string();
        let project = if folder(p, 1) == "sessions" { folder(p, 2) } else { String::new() };
        let sk = Arc::new(SessionKey { agent: Agent::Openclaw, project, session: session.clone() });
        let mut model: Option<String> = None;
        for l in json_lines(p) {
            let ts = s(&l, "timestamp").unwrap_or_default();
            match l.get("type").and_then(Value::as_str) {
                Some("model_change") => model = s(&l, "modelId").or(model),
                Some("custom") if l.get("customType").and_then(Value::as_str) == Some("model-snapshot") => {
                    model = l.get("data").and_then(|d| s(d, "modelId")).or(model);
                }
                Some("compaction") => out.compactions.push(Compaction { session: sk.clone(), ts }),
                Some("message") => {
                    let Some(m) =
                        l.get("message").filter(|m| m.get("role").and_then(Value::as_str) == Some("assistant"))
                    else {
                        continue;
                    };
                    let Some(u) = m.get("usage").filter(|u| u.is_object()) else { continue };
                    let mut tokens = Tokens {
                        input: n(u, "input"),
                        output: n(u, "output"),
                        cache_creation: n(u, "cacheWrite"),
                        cache_read: n(u, "cacheRead"),
                    };
                    let extra = total_fallback(&mut tokens, 0, n(u, "totalTokens"));
                    if tokens.is_zero() && extra == 0 {
                        continue;
                    }
                    let cost = u.get("cost").and_then(|c| c.get("total")).and_then(Value::as_f64);
                    let m_model = s(m, "model").or_else(|| s(m, "modelId")).or_else(|| model.clone());
                    let key = format!("{session}|{ts}|{m_model:?}|{tokens:?}|{extra}|{cost:?}");
                    if !seen.insert(key) {
                        out.duplicates += 1;
                        continue;
                    }
                    out.entries.push(UsageEntry::with_extra(
                        sk.clone(),
                        first + i,
                        ts,
                        m_model,
                        tokens,
                        extra,
                        0,
                        cost,
                    ));
                }
                _ => {}
            }
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    /// SYNTHETIC, pi's session format as OpenClaw writes it: a session whose assistant messages
    /// all carry `usage` with every count zero (recorded cost 0) got a zero row in `usage`;
    /// ccusage drops such a message, so the session has no row there.
    #[test]
    fn regression_all_zero_usage_session_made_an_empty_row() {
        let d = tempfile::tempdir().unwrap();
        let p = d.path().join("agents/main/sessions/s1.jsonl");
        std::fs::create_dir_all(p.parent().unwrap()).unwrap();
        let zero = r#"{"input":0,"output":0,"cacheRead":0,"cacheWrite":0,"totalTokens":0,"cost":{"total":0}}"#;
        let text = [
            r#"{"type":"session","version":3,"id":"s1","timestamp":"2026-01-01T00:00:00Z","cwd":"/w"}"#.to_string(),
            format!(
                r#"{{"type":"message","id":"m1","parentId":null,"timestamp":"2026-01-01T00:00:01Z","message":{{"role":"assistant","content":[],"model":"x","usage":{zero}}}}}"#
            ),
            r#"{"type":"message","id":"m2","parentId":"m1","timestamp":"2026-01-01T00:00:02Z","message":{"role":"assistant","content":[],"model":"x","usage":{"input":3,"output":1,"totalTokens":4}}}"#.into(),
        ]
        .join("\n");
        std::fs::write(&p, text).unwrap();
        let r = read(&[p], 0);
        assert_eq!(r.entries.len(), 1, "only the call with tokens");
        assert_eq!(r.entries[0].tokens.input, 3);
    }
}
