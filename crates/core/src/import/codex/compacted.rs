//! Codex compactions: the `compacted` line as a `compact` record whose `kept` are the earlier
//! blocks its `replacement_history` repeats (matched by role and text, newest copy first), the
//! items the history adds, and the estimate of an encrypted (remote) summary.

use std::collections::HashMap;
use std::sync::Arc;

use serde_json::{Map, Value};

use super::super::{s, Builder, ImportReport};
use super::message_text;
use crate::journal::{Body, CompactRec, NoticeRec, UserRec};
use crate::tokens::redacted;

/// The content-keyed blocks of the journal so far (for matching `replacement_history`): their
/// ids in journal order and, per role and text, the positions of the blocks holding it. Kept up
/// to date as blocks are written, so a compaction costs its history's length, not the
/// journal's (30,000 messages and as many `compacted` lines were quadratic, issue 21).
#[derive(Default)]
pub(super) struct Seen {
    ids: Vec<String>,
    by_key: HashMap<&'static str, HashMap<String, Vec<usize>>>,
}

impl Seen {
    pub(super) fn push(&mut self, role: &'static str, text: String, id: String) {
        self.by_key.entry(role).or_default().entry(text).or_default().push(self.ids.len());
        self.ids.push(id);
    }
}

pub(super) fn compacted(
    line: &super::super::Line,
    p: &Map<String, Value>,
    seen: &mut Seen,
    b: &mut Builder,
    report: &mut ImportReport,
) {
    let ts = s(&line.obj, "timestamp");
    let message = s(p, "message").unwrap_or("").to_string();
    let rev = b.next_rev();
    let Some(hist) = p.get("replacement_history").and_then(Value::as_array) else {
        report.note("legacy local compaction without replacement_history: the user messages Codex kept are not recorded, nothing is kept");
        b.push(ts, line.no, line.offset, Body::Compact(compact_rec(message, Some(rev), None)));
        return;
    };
    let mut kept = Vec::new();
    let mut added: Vec<(&'static str, String)> = Vec::new();
    let mut encrypted = None;
    // An item takes the newest earlier block with its role and text that this compaction has not
    // taken yet; how many are taken is counted per key (a key is named by its first position).
    let mut taken: HashMap<usize, usize> = HashMap::new();
    for it in hist {
        let it = match it.as_object() {
            Some(o) => o,
            None => continue,
        };
        match s(it, "type") {
            Some("message") => {
                let role = match s(it, "role") {
                    Some("user") => "user",
                    Some("assistant") => "assistant",
                    _ => "developer",
                };
                let (text, _) = message_text(it);
                let hit = seen.by_key.get(role).and_then(|m| m.get(text.as_str())).and_then(|at| {
                    let t = taken.entry(at[0]).or_insert(0);
                    let k = at.len().checked_sub(*t + 1)?;
                    *t += 1;
                    Some(at[k])
                });
                match hit {
                    Some(k) => kept.push(seen.ids[k].clone()),
                    None if role == "assistant" => {
                        report.note("a replacement_history assistant message matches no earlier response: left out")
                    }
                    None => added.push((role, text)),
                }
            }
            Some("compaction" | "compaction_summary") => {
                encrypted = Some(s(it, "encrypted_content").map_or(0, encrypted_len));
            }
            Some(other) => report.skip(format!("replacement_history/{other}")),
            None => {}
        }
    }
    // A sanitiser's marker of nothing (`[REDACTED_MESSAGE len=0 sha=e3b0c442]`) is an empty message.
    let empty = message.is_empty() || redacted::whole(&message).is_some_and(|m| m.len == 0);
    let summary = if empty {
        match encrypted {
            Some(n) => {
                report.note(
                    "remote compaction: the summary is encrypted; the compact record holds an estimate of its size",
                );
                encrypted_summary(n)
            }
            None => String::new(),
        }
    } else {
        message
    };
    // Kept blocks stay in journal order (the projection's rule); Codex's own order is not kept.
    b.push(ts, line.no, line.offset, Body::Compact(compact_rec(summary, None, Some(kept))));
    for (role, text) in added {
        let id = b.unique_id(&format!("{}{}", if role == "user" { "u" } else { "n" }, line.no));
        seen.push(role, text.clone(), id.clone());
        let body = if role == "user" {
            Body::User(UserRec { id, text: Arc::from(text), attachments: Vec::new() })
        } else {
            Body::Notice(NoticeRec { id, text: Arc::from(text), topic: Some("developer".into()) })
        };
        b.push(ts, line.no, line.offset, body);
    }
    let _ = rev;
}

/// The base64 length of an encrypted payload: the string's, or the `len=` of the sanitiser's
/// marker that replaced it.
fn encrypted_len(payload: &str) -> u64 {
    redacted::whole(payload).map_or(payload.len() as u64, |m| m.len)
}

/// The summary of a remote compaction whose summary is encrypted: a labelled placeholder holding
/// an estimate marker that counts as the tokens the payload's length implies
/// ([`redacted::encrypted_tokens`]).
fn encrypted_summary(len: u64) -> String {
    format!(
        "[remote compaction: the summary is encrypted and not in the transcript; estimated from its {len} base64 characters as ≈ {} tokens] {}",
        redacted::encrypted_tokens(len),
        redacted::encrypted_marker("SUMMARY", len)
    )
}

fn compact_rec(summary: String, first_kept: Option<u64>, kept: Option<Vec<String>>) -> CompactRec {
    CompactRec {
        trigger: None,
        instruction: None,
        summary: Arc::from(summary),
        first_kept,
        kept,
        mode: None,
        fallback: None,
        tokens_before: None,
        usage: None,
        tokens_after: None,
    }
}
