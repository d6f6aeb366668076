//! Gemini CLI (`${GEMINI_DATA_DIR:-~/.gemini/tmp}`, every `*.json` and `*.jsonl` below it) counted
//! the way ccusage 20.0.24 counts it: each `type: "gemini"` message with `tokens` (the JSONL of
//! Gemini CLI ≥ 0.40, where a message id written again replaces the earlier record, and the
//! legacy whole-file JSON's `messages[]`). Gemini's `input` includes the cached part: input =
//! input − cached when `total` = input + output + thoughts + tool (ccusage's
//! `normalize_session_input`), then + tool; cache read = cached; thoughts are extra, priced as
//! output; a `total` above all the parts adds the rest as extra (or as output when there is
//! none: ccusage's total fallback). The model is the record's, else the last one seen in the file.

use std::path::{Path, PathBuf};
use std::sync::Arc;

use serde_json::Value;

use super::util::{folder, json_file, json_lines, n, s, total_fallback, walk};
use super::Agent;
use crate::usage::entry::{Parse, Read, SessionKey, Tokens, UsageEntry};

/// The `*.json` / `*.jsonl` files under a root.
pub fn files(root: &Path) -> Vec<PathBuf> {
    walk(root, |p| p.extension().is_some_and(|e| e == "json" || e == "jsonl"))
}

/// The entries of one file.
pub fn read_file(file: usize, path: &Path, _: Parse) -> Read {
    let (session_id, messages): (Option<String>, Vec<Value>) = if path.extension().is_some_and(|e| e == "jsonl") {
        let lines = json_lines(path);
        let id = lines.first().and_then(|l| s(l, "sessionId"));
        // The last record of each id wins; first appearance keeps the order.
        let mut order: Vec<String> = Vec::new();
        let mut by_id: std::collections::HashMap<String, Value> = std::collections::HashMap::new();
        let mut anonymous = Vec::new();
        for l in lines.into_iter().filter(|l| l.get("type").is_some()) {
            match s(&l, "id") {
                Some(id) => {
                    if by_id.insert(id.clone(), l).is_none() {
                        order.push(id);
                    }
                }
                None => anonymous.push(l),
            }
        }
        let mut msgs: Vec<Value> = order.into_iter().filter_map(|id| by_id.remove(&id)).collect();
        msgs.extend(anonymous);
        (id, msgs)
    } else {
        let Some(v) = json_file(path) else { return Read::default() };
        let msgs = v.get("messages").and_then(Value::as_array).cloned().unwrap_or_default();
        (s(&v, "sessionId"), msgs)
    };
    let session = Arc::new(SessionKey {
        agent: Agent::Gemini,
        project: if folder(path, 1) == "chats" { folder(path, 2) } else { String::new() },
        session: session_id
            .unwrap_or_else(|| path.file_stem().map(|x| x.to_string_lossy().into_owned()).unwrap_or_default()),
    });
    let mut out = Read::default();
    let mut last_model: Option<String> = None;
    for m in &messages {
        if let Some(model) = s(m, "model") {
            last_model = Some(model);
        }
        let (Some("gemini"), Some(t)) =
            (m.get("type").and_then(Value::as_str), m.get("tokens").filter(|t| t.is_object()))
        else {
            continue;
        };
        let (input, output, cached, thoughts, tool, total) =
            (n(t, "input"), n(t, "output"), n(t, "cached"), n(t, "thoughts"), n(t, "tool"), n(t, "total"));
        let parts = input.saturating_add(output).saturating_add(thoughts).saturating_add(tool);
        let input = if total == parts { input.saturating_sub(cached) } else { input };
        let mut tokens = Tokens { input: input.saturating_add(tool), output, cache_creation: 0, cache_read: cached };
        // A recorded total above the parts (thoughts not itemised) is counted, as ccusage does.
        let thoughts = total_fallback(&mut tokens, thoughts, total);
        if tokens.is_zero() && thoughts == 0 {
            continue;
        }
        let ts = s(m, "timestamp").unwrap_or_default();
        out.entries.push(UsageEntry::with_extra(
            session.clone(),
            file,
            ts,
            last_model.clone(),
            tokens,
            thoughts,
            0,
            None,
        ));
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A SYNTHETIC JSONL session: a message id written twice (the last wins), the input minus
    /// the cached part when the total adds up, tool tokens added, thoughts as extra; and counts
    /// at u64::MAX saturate instead of overflowing.
    #[test]
    fn last_record_per_id_cache_carved_out_and_huge_counts_saturate() {
        let d = tempfile::tempdir().unwrap();
        let p = d.path().join("proj/chats/session-x.jsonl");
        std::fs::create_dir_all(p.parent().unwrap()).unwrap();
        let m = u64::MAX;
        let text = [
            r#"{"sessionId":"s","projectHash":"h","startTime":"2026-01-01T00:00:00Z","kind":"main"}"#.to_string(),
            r#"{"id":"a","timestamp":"2026-01-01T00:00:01Z","type":"gemini","model":"gemini-2.5-flash","tokens":{"input":1,"output":1,"total":2}}"#.into(),
            r#"{"id":"a","timestamp":"2026-01-01T00:00:01Z","type":"gemini","model":"gemini-2.5-flash","tokens":{"input":100,"output":10,"cached":40,"thoughts":5,"tool":3,"total":118}}"#.into(),
            format!(r#"{{"id":"b","timestamp":"2026-01-01T00:00:02Z","type":"gemini","tokens":{{"input":{m},"output":{m},"cached":{m},"thoughts":{m},"tool":{m},"total":{m}}}}}"#),
        ]
        .join("\n");
        std::fs::write(&p, text).unwrap();
        let r = read_file(0, &p, Parse::Fast);
        assert_eq!(r.entries.len(), 2);
        let a = &r.entries[0];
        assert_eq!(a.tokens, Tokens { input: 63, output: 10, cache_creation: 0, cache_read: 40 });
        assert_eq!((a.extra, a.session.key()), (5, "proj/s".to_string()));
        assert_eq!(r.entries[1].model.as_deref(), Some("gemini-2.5-flash"), "the last model seen");
    }

    /// SYNTHETIC, Gemini CLI's JSONL schema, checked against ccusage 20.0.24 (`ccusage gemini
    /// session --json`): a record whose `total` (400) is above input + output (330) with no
    /// `thoughts` lost the 70 tokens that ccusage counts as extra (total and cost were lower).
    #[test]
    fn regression_total_above_the_parts_was_not_counted() {
        let d = tempfile::tempdir().unwrap();
        let p = d.path().join("proj/chats/session-y.jsonl");
        std::fs::create_dir_all(p.parent().unwrap()).unwrap();
        let text = [
            r#"{"sessionId":"s","projectHash":"h","startTime":"2026-01-01T00:00:00Z","kind":"main"}"#,
            r#"{"id":"g","timestamp":"2026-01-01T00:00:01Z","type":"gemini","model":"gemini-2.5-flash","tokens":{"input":300,"output":30,"total":400}}"#,
        ]
        .join("\n");
        std::fs::write(&p, text).unwrap();
        let r = read_file(0, &p, Parse::Fast);
        assert_eq!((r.entries[0].tokens.input, r.entries[0].tokens.output, r.entries[0].extra), (300, 30, 70));
    }
}
