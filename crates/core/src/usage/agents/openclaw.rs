//! OpenClaw (pi's session format under `agents/<agent>/sessions/`; roots `$OPENCLAW_DIR`, else
//! `~/.openclaw`, `~/.clawdbot`, `~/.moltbot`, `~/.moldbot`) counted the way ccusage 20.0.24
//! counts it: every `*.jsonl` and archived `*.jsonl.deleted.<ts>` / `*.jsonl.reset.<ts>`, each
//! assistant `message` with `usage {input, output, cacheRead, cacheWrite, totalTokens,
//! cost.total}`; the model is the message's `model`/`modelId`, else the last `model_change` or
//! `model-snapshot`; a recorded cost wins, even 0 (ccusage's auto mode); calls equal in session,
//! time, model, counts and cost are counted once (which also folds archive copies).

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
