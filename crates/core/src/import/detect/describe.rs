//! What a file that no reader claims looks like, so that `ctxj` answers "what is this file"
//! instead of a JSON error on a valid file: an agent's file ctxj knows but does not import (a
//! Cline manifest, a Kimi CLI log, an SQLite store, …), or the shape of the JSON it holds.
//!
//! `None` means the file may be a (broken) ctxj journal: JSON lines of which one has a string
//! `kind`, or text that is not JSON at all; the journal reader then names its first bad line.

use std::io::Read;
use std::path::Path;

use serde_json::{Map, Value};

use crate::import::sqlite::sqlite_tables;
use crate::journal::reader::parse_json;

/// The largest whole-file JSON document parsed to describe it.
const WHOLE: u64 = 64 << 20;

/// What a file no importer recognised is.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Described {
    /// A file of an agent ctxj knows, which it does not import (`what`), and what to do (`hint`).
    Known { what: String, hint: String },
    /// Not a transcript ctxj knows; what it looked like.
    Unknown { looked_like: String },
}

/// Describes `path` (see the module doc for `None`).
pub fn describe(path: &Path) -> Option<Described> {
    let (f, meta) = crate::journal::input::open_regular(path).ok()?;
    let mut bytes = Vec::new();
    f.take(WHOLE).read_to_end(&mut bytes).ok()?;
    let name = path.file_name().map(|n| n.to_string_lossy().into_owned()).unwrap_or_default();
    if bytes.starts_with(b"SQLite format 3\0") {
        return Some(sqlite(crate::import::sqlite::tables_at(path, &bytes)));
    }
    describe_bytes(&bytes, &name, meta.len())
}

/// Describes file bytes (`len` is the file's full length, `name` its file name).
pub fn describe_bytes(bytes: &[u8], name: &str, len: u64) -> Option<Described> {
    if bytes.starts_with(b"SQLite format 3\0") {
        return Some(sqlite(sqlite_tables(bytes)));
    }
    let first = bytes.iter().position(|b| !b.is_ascii_whitespace())?;
    if matches!(bytes[first], b'{' | b'[') && (super::super::gemini::is_whole_json(bytes) || bytes[first] == b'[') {
        if len > WHOLE {
            return Some(Described::Unknown { looked_like: format!("a JSON document of {len} bytes") });
        }
        return match parse_json(bytes) {
            Ok(v) => Some(json_doc(&v, name)),
            Err(_) => None,
        };
    }
    // JSON lines: none with a string `kind` (no journal record), the first object described.
    let mut objs: Vec<Map<String, Value>> = Vec::new();
    for line in crate::journal::typed::lines(&bytes[..bytes.len().min(256 * 1024)]).take(40) {
        match parse_json(line) {
            Ok(Value::Object(o)) => objs.push(o),
            _ if line.iter().all(u8::is_ascii_whitespace) => {}
            _ if objs.is_empty() => return None,
            _ => {}
        }
    }
    if objs.is_empty() || objs.iter().any(|o| matches!(o.get("kind"), Some(Value::String(_)))) {
        return None;
    }
    Some(json_lines(&objs))
}

fn known(what: &str, hint: &str) -> Described {
    Described::Known { what: what.to_string(), hint: hint.to_string() }
}

/// An SQLite file no importer claims (OpenCode and Kilo stores are imported), named by its
/// tables.
fn sqlite(tables: Vec<String>) -> Described {
    let has = |t: &str| tables.iter().any(|x| x == t);
    if has("sessions") && has("messages") {
        return known(
            "an SQLite store of sessions and messages (Hermes Agent or Goose)",
            "its logs hold usage totals, not the requests: ctxj cannot replay them",
        );
    }
    let list = if tables.is_empty() { "no table seen".to_string() } else { tables.join(", ") };
    Described::Unknown { looked_like: format!("an SQLite database ({list})") }
}

/// A whole-file JSON document.
fn json_doc(v: &Value, name: &str) -> Described {
    match v {
        Value::Object(o) => {
            let has = |k: &str| o.contains_key(k);
            if has("messages_path") || (has("session_id") && has("source") && has("status")) {
                return known(
                    "a Cline session manifest",
                    "the conversation is the <id>.messages.json file beside it: name that file",
                );
            }
            if has("files_in_context") {
                return known(
                    "a Cline task's metadata (task_metadata.json)",
                    "the conversation is api_conversation_history.json beside it: name that file",
                );
            }
            if has("tokenUsage") && has("providerLock") {
                return known(
                    "a Droid session settings file",
                    "it holds usage totals, not the requests: ctxj cannot replay it",
                );
            }
            let id_starts = |p: &str| o.get("id").and_then(Value::as_str).is_some_and(|i| i.starts_with(p));
            let legacy =
                "import its session instead: storage/session/<project>/<session id>.json beside storage/message/";
            if has("sessionID") && ((has("modelID") && has("tokens")) || (has("role") && id_starts("msg"))) {
                return known("an OpenCode message of the legacy storage/ layout", legacy);
            }
            if has("sessionID") && has("messageID") && has("type") && id_starts("prt") {
                return known("an OpenCode message part of the legacy storage/ layout", legacy);
            }
            if has("agents") && has("workDir") {
                return known(
                    "a Kimi Code session state",
                    "the conversation is agents/<agent>/wire.jsonl in the same folder: name that file",
                );
            }
            if has("usageLedger") || (name.starts_with("T-") && has("messages")) {
                return known("an Amp thread", "it holds usage, not the requests: ctxj cannot replay it");
            }
            Described::Unknown { looked_like: format!("a JSON object with keys {}", keys(o)) }
        }
        Value::Array(a) => {
            let first = a.first().and_then(Value::as_object);
            if first.is_some_and(|o| o.contains_key("ts") && (o.contains_key("say") || o.contains_key("ask"))) {
                return known(
                    "Cline's UI message log (ui_messages.json)",
                    "the conversation is api_conversation_history.json beside it: name that file",
                );
            }
            let what = match first {
                Some(o) => format!("a JSON array of {} item(s), the first an object with keys {}", a.len(), keys(o)),
                None => format!("a JSON array of {} item(s)", a.len()),
            };
            Described::Unknown { looked_like: what }
        }
        other => Described::Unknown { looked_like: format!("a JSON {}", kind(other)) },
    }
}

/// JSON lines that are not journal records.
fn json_lines(objs: &[Map<String, Value>]) -> Described {
    let ty = |o: &Map<String, Value>| o.get("type").and_then(Value::as_str).map(str::to_string);
    let role = |o: &Map<String, Value>| o.get("role").and_then(Value::as_str).map(str::to_string);
    if objs.iter().any(|o| role(o).is_some_and(|r| matches!(r.as_str(), "_system_prompt" | "_checkpoint" | "_usage"))) {
        return known("a Kimi CLI context log (context.jsonl)", "ctxj does not import Kimi CLI's legacy logs yet");
    }
    let wire_msg =
        |o: &Map<String, Value>| o.get("message").and_then(|m| m.get("type")).is_some() && o.contains_key("timestamp");
    if objs.iter().any(|o| ty(o).as_deref() == Some("metadata") && o.contains_key("protocol_version"))
        && objs.iter().skip(1).all(wire_msg)
    {
        return known(
            "a Kimi CLI wire log (wire.jsonl, protocol 1.x)",
            "it holds usage per step, not the requests; the conversation is context.jsonl beside it",
        );
    }
    if objs.first().is_some_and(|o| ty(o).as_deref() == Some("session_start")) {
        return known(
            "a Factory Droid session log (<id>.jsonl)",
            "ctxj does not import Droid sessions; `ctxj usage --agent droid` reads the usage totals of the <id>.settings.json beside it",
        );
    }
    if objs.iter().any(|o| ty(o).is_some_and(|t| t.starts_with("session.")) && o.contains_key("data")) {
        return known("a GitHub Copilot CLI event log", "it holds usage, not the requests: ctxj cannot replay it");
    }
    let o = &objs[0];
    let t = ty(o).map(|t| format!(", \"type\": {t:?}")).unwrap_or_default();
    Described::Unknown {
        looked_like: format!("JSON lines ({} object(s) read) whose first object has keys {}{t}", objs.len(), keys(o)),
    }
}

/// The first keys of an object, for a message.
fn keys(o: &Map<String, Value>) -> String {
    let mut k: Vec<String> = o.keys().take(8).map(|k| crate::text::escape_line(k)).collect();
    if o.len() > 8 {
        k.push("…".into());
    }
    if k.is_empty() {
        "(none)".into()
    } else {
        k.join(", ")
    }
}

fn kind(v: &Value) -> &'static str {
    match v {
        Value::Null => "null",
        Value::Bool(_) => "boolean",
        Value::Number(_) => "number",
        Value::String(_) => "string",
        Value::Array(_) => "array",
        Value::Object(_) => "object",
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn known_and_unknown_shapes() {
        let d = |b: &[u8], n: &str| describe_bytes(b, n, b.len() as u64);
        assert!(
            matches!(d(b"{\n \"session_id\": \"x\", \"source\": \"cli\", \"status\": \"done\"\n}", "x.json"), Some(Described::Known { what, .. }) if what.contains("Cline"))
        );
        assert!(
            matches!(d(b"{\"role\": \"_system_prompt\", \"content\": \"x\"}\n", "context.jsonl"), Some(Described::Known { what, .. }) if what.contains("Kimi CLI"))
        );
        assert!(
            matches!(d(b"{\n \"a\": 1\n}", "x.json"), Some(Described::Unknown { looked_like }) if looked_like == "a JSON object with keys a")
        );
        assert!(
            matches!(d(b"{\"x\":1}\n{\"y\":2}\n", "x.jsonl"), Some(Described::Unknown { looked_like }) if looked_like.contains("keys x"))
        );
        // OpenCode's legacy storage/ files other than a session's point to its session file.
        for (b, what) in [
            (
                &br#"{
  "id": "msg_1", "sessionID": "ses_1", "role": "user", "time": {"created": 1}}"#[..],
                "OpenCode message",
            ),
            (
                br#"{
  "id": "prt_1", "sessionID": "ses_1", "messageID": "msg_1", "type": "text"}"#,
                "OpenCode message part",
            ),
        ] {
            assert!(
                matches!(d(b, "x.json"), Some(Described::Known { what: w, hint }) if w.contains(what) && hint.contains("storage/session/")),
                "{what}"
            );
        }
        // Possibly a broken journal: the journal reader answers.
        assert_eq!(d(b"{\"rev\":1,\"kind\":\"session\"}\n{\"rev\":2}\n", "j.jsonl"), None);
        assert_eq!(d(b"not json\n", "j.jsonl"), None);
        // An OpenCode/Kilo store is imported (detection claims it); another SQLite file is named by
        // its tables.
        let store = b"SQLite format 3\0....CREATE TABLE `session` (..) CREATE TABLE `message` CREATE TABLE `part`";
        assert_eq!(crate::import::detect_bytes(store, "opencode.db"), Some(crate::import::Format::OpenCode));
        assert!(
            matches!(d(b"SQLite format 3\0....CREATE TABLE `todo` (..)", "x.db"), Some(Described::Unknown { looked_like }) if looked_like.contains("an SQLite database (todo)"))
        );
    }
}
