//! Qwen Code (`${QWEN_DATA_DIR:-~/.qwen}/projects/<project>/chats/<session>.jsonl`) counted the
//! way ccusage 20.0.24 counts it: each `type: "assistant"` line with `usageMetadata`, input =
//! `promptTokenCount`, output = `candidatesTokenCount`, cache read = `cachedContentTokenCount`,
//! a `totalTokenCount` above the parts as extra (thoughts); calls equal in session, time, model
//! and counts are counted once. Qwen Code's `promptTokenCount` already includes the cached
//! tokens, so ccusage counts them twice (as input and as cache read); ctxj copies that for
//! parity and reports them as `double_counted` (the corrected input is input − cache read).

use std::collections::HashSet;
use std::path::{Path, PathBuf};
use std::sync::Arc;

use super::util::{folder, json_lines, n, s, total_fallback, walk};
use super::Agent;
use crate::usage::entry::{Read, SessionKey, Tokens, UsageEntry};

/// `projects/<project>/chats/<file>.jsonl` under a root (exactly that depth).
pub fn files(root: &Path) -> Vec<PathBuf> {
    walk(root, |p| p.extension().is_some_and(|e| e == "jsonl") && folder(p, 1) == "chats" && folder(p, 3) == "projects")
}

/// The entries of the files.
pub fn read(paths: &[PathBuf], first: usize) -> Read {
    let mut out = Read::default();
    let mut seen = HashSet::new();
    for (i, p) in paths.iter().enumerate() {
        let project = folder(p, 2);
        let stem = p.file_stem().map(|x| x.to_string_lossy().into_owned()).unwrap_or_default();
        for l in json_lines(p) {
            let (Some("assistant"), Some(u)) = (l.get("type").and_then(|t| t.as_str()), l.get("usageMetadata")) else {
                continue;
            };
            if !u.is_object() {
                continue;
            }
            let mut tokens = Tokens {
                input: n(u, "promptTokenCount"),
                output: n(u, "candidatesTokenCount"),
                cache_creation: 0,
                cache_read: n(u, "cachedContentTokenCount"),
            };
            let extra = total_fallback(&mut tokens, 0, n(u, "totalTokenCount"));
            let session = s(&l, "sessionId").unwrap_or_else(|| stem.clone());
            let ts = s(&l, "timestamp").unwrap_or_default();
            let model = s(&l, "model").unwrap_or_else(|| "unknown".into());
            let key =
                (session.clone(), ts.clone(), model.clone(), tokens.input, tokens.output, tokens.cache_read, extra);
            if !seen.insert(key) {
                out.duplicates += 1;
                continue;
            }
            let sk = Arc::new(SessionKey { agent: Agent::Qwen, project: project.clone(), session });
            let dup = tokens.cache_read.min(tokens.input);
            out.entries.push(UsageEntry::with_extra(sk, first + i, ts, Some(model), tokens, extra, dup, None));
        }
    }
    out
}
