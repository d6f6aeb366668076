//! Format detection by content: the first object lines of a file vote for a format; the file
//! name only breaks ties (`rollout-*.jsonl` → Codex, `journal.jsonl` → ctxj).
//!
//! Signatures (one line is enough, more lines make it surer):
//! * ctxj: a string `kind` field (journal-v1 records);
//! * Codex: `type` ∈ {session_meta, response_item, event_msg, turn_context, compacted} with a
//!   `payload` object;
//! * pi: `type: "session"` with `cwd` and no `kind`/`payload`, or `type: "message"` whose `message`
//!   has a `role`, or the other pi entry types (`model_change`, `thinking_level_change`,
//!   `compaction`, `branch_summary`, …);
//! * Claude Code: `type` ∈ {user, assistant, system, summary, progress, file-history-snapshot,
//!   queue-operation, …} with Claude Code envelope fields (`uuid`, `parentUuid`, `sessionId`,
//!   `leafUuid`, `messageId`), or a `user`/`assistant` line whose `message` has a `role`.

use std::io::Read;
use std::path::Path;

use serde_json::{Map, Value};

use super::Format;

mod probe;

/// How many bytes of a file detection looks at.
const HEAD: usize = 256 * 1024;
/// How many object lines vote.
const VOTES: usize = 40;

/// Detects the format of a file from its first lines; `None` when nothing matches.
pub fn detect_file(path: &Path) -> Option<Format> {
    let (mut f, _) = crate::journal::input::open_regular(path).ok()?;
    let mut buf = Vec::with_capacity(HEAD);
    f.by_ref().take(HEAD as u64).read_to_end(&mut buf).ok()?;
    let name = path.file_name().map(|n| n.to_string_lossy().into_owned()).unwrap_or_default();
    detect_bytes(&buf, &name)
}

/// Detects the format of transcript bytes (`name` is the file name, used to break ties).
pub fn detect_bytes(bytes: &[u8], name: &str) -> Option<Format> {
    let mut score = [0usize; 4]; // ClaudeCode, Codex, Pi, Ctxj
    let mut seen = 0;
    for line in crate::journal::typed::lines(bytes) {
        if seen >= VOTES {
            break;
        }
        let line = line.strip_suffix(b"\r").unwrap_or(line);
        if line.iter().all(|b| b.is_ascii_whitespace()) {
            continue;
        }
        let Some(v) = probe::vote_of(line) else { continue };
        seen += 1;
        if let Some(f) = v {
            score[f as usize] += 1;
        }
        // Stop once the lines left cannot change the winner.
        let mut sorted = score;
        sorted.sort_unstable();
        if sorted[3] > sorted[2] + (VOTES - seen) {
            break;
        }
    }
    let best = (0..4).max_by_key(|&i| (score[i], tie_break(i, name)))?;
    if score[best] == 0 {
        return None;
    }
    Some([Format::ClaudeCode, Format::Codex, Format::Pi, Format::Ctxj][best])
}

fn tie_break(i: usize, name: &str) -> usize {
    match i {
        1 if name.starts_with("rollout-") => 1,
        3 if name == "journal.jsonl" => 1,
        _ => 0,
    }
}

pub(super) fn vote(o: &Map<String, Value>) -> Option<Format> {
    if matches!(o.get("kind"), Some(Value::String(_))) {
        return Some(Format::Ctxj);
    }
    let t = o.get("type").and_then(Value::as_str);
    let has = |k: &str| o.contains_key(k);
    if matches!(t, Some("session_meta" | "response_item" | "event_msg" | "turn_context" | "compacted"))
        && o.get("payload").is_some_and(Value::is_object)
    {
        return Some(Format::Codex);
    }
    // Codex before 2025-09: bare response items and state lines.
    if has("record_type")
        || (matches!(t, Some("message")) && has("role") && !has("message"))
        || matches!(t, Some("function_call" | "function_call_output" | "custom_tool_call" | "local_shell_call"))
            && has("call_id")
    {
        return Some(Format::Codex);
    }
    let cc_envelope = has("uuid")
        || has("parentUuid")
        || has("sessionId")
        || has("leafUuid")
        || has("messageId")
        || has("isSidechain");
    match t {
        Some("session") if has("cwd") || has("version") => return Some(Format::Pi),
        Some(
            "model_change"
            | "thinking_level_change"
            | "compaction"
            | "branch_summary"
            | "custom_message"
            | "label"
            | "session_info"
            | "custom",
        ) if !cc_envelope => return Some(Format::Pi),
        Some("message") if o.get("message").and_then(|m| m.get("role")).is_some() && !cc_envelope => {
            return Some(Format::Pi)
        }
        _ => {}
    }
    if cc_envelope {
        return Some(Format::ClaudeCode);
    }
    if matches!(t, Some("user" | "assistant")) && o.get("message").and_then(|m| m.get("role")).is_some() {
        return Some(Format::ClaudeCode);
    }
    if matches!(t, Some("summary")) && has("summary") {
        return Some(Format::ClaudeCode);
    }
    None
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn detects_each_format_by_content() {
        let cc = br#"{"type":"file-history-snapshot","messageId":"x","snapshot":{}}
{"parentUuid":null,"type":"user","message":{"role":"user","content":"hi"},"uuid":"u1","sessionId":"s"}"#;
        assert_eq!(detect_bytes(cc, "whatever.jsonl"), Some(Format::ClaudeCode));
        let codex = br#"{"timestamp":"2026-01-01T00:00:00Z","type":"session_meta","payload":{"id":"x"}}"#;
        assert_eq!(detect_bytes(codex, "a.jsonl"), Some(Format::Codex));
        let pi = br#"{"type":"session","id":"x","timestamp":"t","cwd":"/"}
{"type":"message","timestamp":"t","message":{"role":"user","content":"hi"}}"#;
        assert_eq!(detect_bytes(pi, "a.jsonl"), Some(Format::Pi));
        let ctxj = br#"{"rev":1,"ts":"t","kind":"session","id":"x","model":"m"}"#;
        assert_eq!(detect_bytes(ctxj, "rollout-x.jsonl"), Some(Format::Ctxj));
        assert_eq!(detect_bytes(b"42\n\"x\"\n{\"a\":1}\n", "a.jsonl"), None);
    }

    #[test]
    fn odd_lines_do_not_break_detection() {
        let b = b"not json\n[1]\n{\"type\": null}\n{\"type\": \"user\", \"uuid\": \"u\", \"message\": {\"role\": \"user\", \"content\": \"x\"}}\n";
        assert_eq!(detect_bytes(b, "x.jsonl"), Some(Format::ClaudeCode));
    }
}
