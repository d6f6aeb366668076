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
//! * Gemini CLI: a metadata line with `projectHash` and `sessionId`, `$set`/`$rewindTo` lines,
//!   message lines `{id, type: user|gemini|info|…, content}`; the legacy whole-file JSON by its
//!   top-level `projectHash`, `sessionId` and `messages`;
//! * Qwen Code: Claude Code's envelope with `message.parts`, `usageMetadata` or `systemPayload`;
//! * OpenCode / Kilo: an SQLite file whose schema creates `session`, `message` and `part`; an
//!   OpenCode legacy session file (`storage/session/<project>/<id>.json`, `Session.Info`);
//! * Kimi Code: a wire record type (`config.update`, `llm.request`, `context.append_message`, …)
//!   with a `time`;
//! * Claude Code: `type` ∈ {user, assistant, system, summary, progress, file-history-snapshot,
//!   queue-operation, …} with Claude Code envelope fields (`uuid`, `parentUuid`, `sessionId`,
//!   `leafUuid`, `messageId`), or a `user`/`assistant` line whose `message` has a `role`.

use std::io::Read;
use std::path::Path;

use serde_json::{Map, Value};

use super::Format;

mod describe;
mod probe;

pub use describe::{describe, describe_bytes, Described};

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
    // An SQLite store whose schema is past the head: ask SQLite for its tables.
    if buf.starts_with(b"SQLite format 3\0") && !super::opencode::is_store(&buf) {
        let tables = super::sqlite::tables_at(path, &buf);
        return super::opencode::has_store_tables(&tables).then_some(Format::OpenCode);
    }
    detect_bytes(&buf, &name)
}

/// The formats detection can name, in vote order (a vote indexes this list).
const ALL: [Format; 9] = [
    Format::ClaudeCode,
    Format::Codex,
    Format::Pi,
    Format::Ctxj,
    Format::GeminiCli,
    Format::QwenCode,
    Format::KimiCode,
    Format::Cline,
    Format::OpenCode,
];

/// Detects the format of transcript bytes (`name` is the file name, used to break ties).
pub fn detect_bytes(bytes: &[u8], name: &str) -> Option<Format> {
    if super::opencode::is_store(bytes) || super::opencode::is_legacy_session(bytes) {
        return Some(Format::OpenCode);
    }
    if super::gemini::is_whole_json(bytes) || starts_array(bytes) {
        return whole_json(bytes);
    }
    let mut score = [0usize; ALL.len()];
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
            score[ALL.iter().position(|a| *a == f).expect("listed")] += 1;
        }
        // Stop once the lines left cannot change the winner.
        let mut sorted = score;
        sorted.sort_unstable();
        if sorted[ALL.len() - 1] > sorted[ALL.len() - 2] + (VOTES - seen) {
            break;
        }
    }
    let best = (0..ALL.len()).max_by_key(|&i| (score[i], tie_break(i, name)))?;
    if score[best] == 0 || (ALL[best] == Format::Pi && is_droid_session(bytes)) {
        return None;
    }
    Some(ALL[best])
}

/// Whether the first line is a Factory Droid session log's header (`{"type":"session_start"}`):
/// its `message` lines look like pi's, but pi's header is `type: session`, and ctxj does not
/// import Droid sessions (`describe` names the file).
pub(crate) fn is_droid_session(bytes: &[u8]) -> bool {
    let Some(first) = crate::journal::typed::lines(bytes).find(|l| !l.iter().all(u8::is_ascii_whitespace)) else {
        return false;
    };
    serde_json::from_slice::<Value>(first)
        .ok()
        .is_some_and(|v| v.get("type").and_then(Value::as_str) == Some("session_start"))
}

/// Whether the first non-blank byte opens a JSON array.
fn starts_array(bytes: &[u8]) -> bool {
    bytes.iter().find(|b| !b.is_ascii_whitespace()) == Some(&b'[')
}

/// A whole-file JSON document (only its head may be at hand): Gemini CLI's legacy chat
/// (`sessionId`, `projectHash` and `messages` at the top); Cline's SDK `messages.json`
/// (`sessionId`, `messages`, `system_prompt`) or legacy `api_conversation_history.json` (an array
/// of `{role, content}` messages with Anthropic blocks).
fn whole_json(bytes: &[u8]) -> Option<Format> {
    let head = &bytes[..bytes.len().min(64 * 1024)];
    let has = |k: &[u8]| memchr::memmem::find(head, k).is_some();
    if starts_array(bytes) {
        let first: Vec<u8> = head.iter().copied().filter(|b| !b.is_ascii_whitespace()).take(9).collect();
        return (first.starts_with(b"[{\"role\"") && (has(b"\"type\":\"text\"") || has(b"\"type\": \"text\"")))
            .then_some(Format::Cline);
    }
    if has(b"\"projectHash\"") && has(b"\"sessionId\"") && has(b"\"messages\"") {
        return Some(Format::GeminiCli);
    }
    (has(b"\"sessionId\"") && has(b"\"messages\"") && (has(b"\"system_prompt\"") || has(b"\"agent\"")))
        .then_some(Format::Cline)
}

fn tie_break(i: usize, name: &str) -> usize {
    match ALL[i] {
        Format::Codex if name.starts_with("rollout-") => 1,
        Format::Ctxj if name == "journal.jsonl" => 1,
        _ => 0,
    }
}

pub(super) fn vote(o: &Map<String, Value>) -> Option<Format> {
    let t = o.get("type").and_then(Value::as_str);
    let has = |k: &str| o.contains_key(k);
    // Gemini CLI JSONL: the metadata line (whose `kind` is `main`/`subagent`), `$set`/`$rewindTo`
    // updates, and message records (`id`, `type`, `content`, no envelope).
    if (has("projectHash") && has("sessionId")) || has("$set") || has("$rewindTo") {
        return Some(Format::GeminiCli);
    }
    // Kimi Code wire records (`config.update`, `llm.request`, `context.*`, …). Its `llm.request`
    // has a string `kind` (loop|compaction) too, so this comes before the journal's test.
    if t.is_some_and(|t| super::kimi::RECORD_TYPES.contains(&t)) && has("time") {
        return Some(Format::KimiCode);
    }
    if matches!(o.get("kind"), Some(Value::String(_))) {
        return Some(Format::Ctxj);
    }
    if has("id")
        && has("content")
        && !has("message")
        && !has("uuid")
        && matches!(t, Some("user" | "gemini" | "info" | "error" | "warning"))
    {
        return Some(Format::GeminiCli);
    }
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
    // Qwen Code: Claude Code's envelope around Gemini API `Content` (`message.parts`), with
    // Gemini-style `usageMetadata`, `systemPayload` or its own `tool_result` type.
    let parts = o.get("message").and_then(|m| m.get("parts")).is_some();
    if cc_envelope && (parts || has("usageMetadata") || has("systemPayload") || t == Some("tool_result")) {
        return Some(Format::QwenCode);
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

    /// SYNTHETIC, the shape third-party readers document for Factory Droid's `<id>.jsonl`
    /// (`session_start`, then pi-like `message` lines): it was imported as a pi transcript
    /// ("the first line is not a pi session header") instead of being named.
    #[test]
    fn regression_droid_session_log_was_imported_as_pi() {
        let droid = br#"{"type":"session_start","id":"d1","title":"t","cwd":"/w","version":"0.81.0"}
{"type":"message","id":"m1","parentId":"d1","timestamp":"2026-01-01T00:00:00Z","message":{"role":"user","content":[{"type":"text","text":"hi"}]}}
{"type":"message","id":"m2","parentId":"m1","timestamp":"2026-01-01T00:00:01Z","message":{"role":"assistant","content":[{"type":"text","text":"ok"}]}}"#;
        assert_eq!(detect_bytes(droid, "d1.jsonl"), None);
        match super::describe::describe_bytes(droid, "d1.jsonl", droid.len() as u64) {
            Some(super::describe::Described::Known { what, hint }) => {
                assert!(what.contains("Droid session log") && hint.contains("settings.json"), "{what}: {hint}")
            }
            other => panic!("{other:?}"),
        }
    }

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
