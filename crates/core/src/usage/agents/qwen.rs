//! Qwen Code (`${QWEN_DATA_DIR:-~/.qwen}/projects/<project>/chats/<session>.jsonl`) counted the
//! way ccusage 20.0.24 counts it: each `type: "assistant"` line with `usageMetadata`, input =
//! `promptTokenCount`, output = `candidatesTokenCount`, cache read = `cachedContentTokenCount`,
//! a `totalTokenCount` above the parts as extra (thoughts); calls equal in session, time, model
//! and counts are counted once. Qwen Code's `promptTokenCount` already includes the cached
//! tokens, so ccusage counts them twice (as input and as cache read); ctxj copies that for
//! parity and reports them as `double_counted` (the corrected input is input − cache read).
//! Like ccusage, a call whose every count is zero is not an entry, a line without a readable
//! `timestamp` takes the file's modification time, and one without `sessionId` is the session
//! `<project>-<file stem>` (`adapter/qwen/parser.rs` of ccusage).

use std::collections::HashSet;
use std::path::{Path, PathBuf};
use std::sync::Arc;

use super::util::{file_time, folder, json_lines, n, s, total_fallback, walk};
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
        let mut modified = None;
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
            if tokens.is_zero() && extra == 0 {
                continue;
            }
            let session = s(&l, "sessionId").unwrap_or_else(|| format!("{project}-{stem}"));
            let ts = match s(&l, "timestamp").filter(|t| chrono::DateTime::parse_from_rfc3339(t).is_ok()) {
                Some(t) => t,
                None => modified.get_or_insert_with(|| file_time(p)).clone(),
            };
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

#[cfg(test)]
mod tests {
    use super::*;

    fn chat(text: &str) -> (tempfile::TempDir, PathBuf) {
        let d = tempfile::tempdir().unwrap();
        let p = d.path().join("projects/proj/chats/c1.jsonl");
        std::fs::create_dir_all(p.parent().unwrap()).unwrap();
        std::fs::write(&p, text).unwrap();
        (d, p)
    }

    /// SYNTHETIC, from Qwen Code's `ChatRecord` schema: an assistant record whose
    /// `usageMetadata` is empty (every count zero) made a zero row of its own in `usage`, where
    /// ccusage drops the call (a session or a day holding only such calls has no row there).
    #[test]
    fn regression_zero_usage_call_made_an_empty_row() {
        let (_d, p) = chat(concat!(
            r#"{"uuid":"a","sessionId":"s","timestamp":"2026-01-01T00:00:01Z","type":"assistant","model":"m","usageMetadata":{}}"#,
            "\n",
            r#"{"uuid":"b","sessionId":"s","timestamp":"2026-01-01T00:00:02Z","type":"assistant","model":"m","usageMetadata":{"promptTokenCount":0,"candidatesTokenCount":0}}"#,
            "\n",
        ));
        assert!(read(&[p], 0).entries.is_empty());
    }

    /// SYNTHETIC: a record whose `timestamp` is no time (a trimmed or hand-edited file) was put
    /// on the day "unknown"; ccusage dates it by the file's modification time. A record without
    /// `sessionId` is `<project>-<stem>` there, not the bare stem.
    #[test]
    fn regression_unreadable_timestamp_was_day_unknown() {
        let (_d, p) = chat(concat!(
            r#"{"uuid":"a","timestamp":"[trimmed]","type":"assistant","model":"m","usageMetadata":{"promptTokenCount":5,"candidatesTokenCount":1}}"#,
            "\n",
        ));
        let r = read(std::slice::from_ref(&p), 0);
        assert_eq!(r.entries.len(), 1);
        let e = &r.entries[0];
        assert_eq!(e.ts, file_time(&p));
        assert!(chrono::DateTime::parse_from_rfc3339(&e.ts).is_ok(), "{}", e.ts);
        assert_eq!(e.session.key(), "proj/proj-c1");
    }
}
