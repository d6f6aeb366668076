//! Codebuff (`$CODEBUFF_DATA_DIR`, else `~/.config/manicode{,-dev,-staging}`;
//! `projects/<project>/chats/<chat>/chat-messages.json`) counted the way ccusage 20.0.24 counts
//! it: each assistant message (`variant` or `role` of `ai`, `agent` or `assistant`) with usage in
//! `metadata.usage`, `metadata.codebuff.usage` or the run state's provider history, under any of
//! the key spellings ccusage accepts; a message id is counted once (the last file wins); a total
//! above the parts is extra. The session is `<channel>/<project>/<chat>`, the channel being the
//! data folder's name (`manicode` by default). With OpenAI-style usage `prompt_tokens` already
//! includes `cached_tokens`: ccusage counts them twice, ctxj copies it and reports them as
//! `double_counted`.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::sync::Arc;

use serde_json::Value;

use super::util::{first_n, folder, json_file, s, total_fallback, walk};
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
        // `<channel>/projects/<project>/chats/<chat>/chat-messages.json`: the channel is the data
        // folder's name (`manicode`, `manicode-dev`, …; ccusage's `derive_context`).
        let channel = Some(folder(p, 5)).filter(|c| !c.is_empty()).unwrap_or_else(|| "manicode".into());
        let session = format!("{channel}/{}/{}", folder(p, 3), folder(p, 1));
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
            let mut tokens = Tokens {
                input,
                output: first_n(u, &["outputTokens", "output_tokens", "completionTokens", "completion_tokens"]),
                cache_creation: first_n(u, &["cacheCreationInputTokens", "cache_creation_input_tokens"]),
                cache_read,
            };
            // A recorded total above the parts is counted (ccusage's total fallback).
            let extra = total_fallback(&mut tokens, 0, first_n(u, &["totalTokens", "total_tokens", "total"]));
            let dup = if openai_cached.is_some() { cache_read.min(input) } else { 0 };
            let model = m.get("metadata").and_then(|md| s(md, "model")).or_else(|| s(u, "model"));
            let ts = s(m, "timestamp").unwrap_or_default();
            let id = s(m, "id").unwrap_or_else(|| format!("{session}#{ord}"));
            let e = UsageEntry::with_extra(sk.clone(), first + i, ts, model, tokens, extra, dup, None);
            if by_id.insert(id, e).is_some() {
                out.duplicates += 1;
            }
        }
    }
    out.entries = by_id.into_values().collect();
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    /// SYNTHETIC `chat-messages.json` in Codebuff's schema, checked against ccusage 20.0.24
    /// (`ccusage codebuff session --json`): the session was always `codebuff/…` (it matched the
    /// corpus only because its folder is named `codebuff`; ccusage names it after the data
    /// folder, `manicode` at home), and a `totalTokens` above the parts was not counted.
    #[test]
    fn regression_session_channel_and_total_were_wrong() {
        let d = tempfile::tempdir().unwrap();
        let p = d.path().join("manicode/projects/p/chats/c1/chat-messages.json");
        std::fs::create_dir_all(p.parent().unwrap()).unwrap();
        std::fs::write(
            &p,
            r#"[{"id":"m1","variant":"ai","timestamp":"2026-01-05T00:00:01.000Z","metadata":{"model":"claude-sonnet-4-5","usage":{"inputTokens":100,"outputTokens":10,"totalTokens":200}}}]"#,
        )
        .unwrap();
        let r = read(&[p], 0);
        assert_eq!(r.entries[0].session.key(), "manicode/p/c1");
        assert_eq!(r.entries[0].extra, 90);
    }
}
