//! Codebuff (`$CODEBUFF_DATA_DIR`, else `~/.config/manicode{,-dev,-staging}`;
//! `projects/<project>/chats/<chat>/chat-messages.json`) counted the way ccusage 20.0.24 counts
//! it: each assistant message (`variant` or `role` of `ai`, `agent` or `assistant`) with usage in
//! `metadata.usage`, `metadata.codebuff.usage` or the run state's provider history, under any of
//! the key spellings ccusage accepts; a message id is counted once (the last file wins). The
//! session is `codebuff/<project>/<chat>`. With OpenAI-style usage `prompt_tokens` already
//! includes `cached_tokens`: ccusage counts them twice, ctxj copies it and reports them as
//! `double_counted`.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::sync::Arc;

use serde_json::Value;

use super::util::{first_n, folder, json_file, s, walk};
use super::Agent;
use crate::usage::entry::{Read, SessionKey, Tokens, UsageEntry};

/// `projects/*/chats/*/chat-messages.json` under a root.
pub fn files(root: &Path) -> Vec<PathBuf> {
    walk(root, |p| {
        super::util::name(p) == "chat-messages.json" && folder(p, 2) == "chats" && folder(p, 4) == "projects"
    })
}

fn usage_of(m: &Value) -> Option<&Value> {
    let md = m.get("metadata")?;
    md.get("usage")
        .or_else(|| md.get("codebuff").and_then(|c| c.get("usage")))
        .or_else(|| {
            let h = md.pointer("/runState/sessionState/mainAgentState/messageHistory")?.as_array()?;
            h.iter().rev().find_map(|x| {
                let po = x.get("providerOptions")?;
                po.get("usage").or_else(|| po.get("codebuff").and_then(|c| c.get("usage")))
            })
        })
        .filter(|u| u.is_object())
}

/// The entries of the files.
pub fn read(paths: &[PathBuf], first: usize) -> Read {
    let mut out = Read::default();
    let mut by_id: BTreeMap<String, UsageEntry> = BTreeMap::new();
    for (i, p) in paths.iter().enumerate() {
        let Some(Value::Array(msgs)) = json_file(p) else { continue };
        let session = format!("codebuff/{}/{}", folder(p, 3), folder(p, 1));
        let sk = Arc::new(SessionKey { agent: Agent::Codebuff, project: String::new(), session: session.clone() });
        for (ord, m) in msgs.iter().enumerate() {
            let role = s(m, "variant").or_else(|| s(m, "role")).unwrap_or_default();
            if !matches!(role.as_str(), "ai" | "agent" | "assistant") {
                continue;
            }
            let Some(u) = usage_of(m) else { continue };
            let openai_cached = u.pointer("/prompt_tokens_details/cached_tokens").map(|c| super::util::num(Some(c)));
            let cache_read = first_n(u, &["cacheReadInputTokens", "cache_read_input_tokens", "cachedTokens"])
                .max(openai_cached.unwrap_or(0));
            let input = first_n(u, &["inputTokens", "input_tokens", "promptTokens", "prompt_tokens"]);
            let tokens = Tokens {
                input,
                output: first_n(u, &["outputTokens", "output_tokens", "completionTokens", "completion_tokens"]),
                cache_creation: first_n(u, &["cacheCreationInputTokens", "cache_creation_input_tokens"]),
                cache_read,
            };
            let dup = if openai_cached.is_some() { cache_read.min(input) } else { 0 };
            let model = m.get("metadata").and_then(|md| s(md, "model")).or_else(|| s(u, "model"));
            let ts = s(m, "timestamp").unwrap_or_default();
            let id = s(m, "id").unwrap_or_else(|| format!("{session}#{ord}"));
            let e = UsageEntry::with_extra(sk.clone(), first + i, ts, model, tokens, 0, dup, None);
            if by_id.insert(id, e).is_some() {
                out.duplicates += 1;
            }
        }
    }
    out.entries = by_id.into_values().collect();
    out
}
