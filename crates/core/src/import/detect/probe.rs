//! The vote of one line without building its JSON tree: a typed read of just the keys
//! [`super::vote`] looks at (a Claude Code line's message content, most of its bytes, is skipped).
//! A line the typed read refuses (a duplicate key, a field of another JSON type) goes through the
//! full parse, so the vote is always the one the full parse gives.

use std::borrow::Cow;

use serde::Deserialize;
use serde_json::{Map, Value};

use super::super::Format;
use crate::journal::reader::parse_json;
use crate::journal::typed::{self, object_or_null, Seen};

/// `message`, when it is an object: whether it has a `role`.
#[derive(Deserialize)]
struct Message {
    #[serde(default)]
    role: Seen,
    #[serde(default)]
    parts: Seen,
}

/// A key that holds an object (skipped), refusing any other JSON type but `null`.
#[derive(Deserialize)]
struct AnyObject {}

/// `Some(None)` for a `message` that is `null`, `Some(Some(_))` for an object.
fn message<'de, D: serde::Deserializer<'de>>(d: D) -> Result<Option<Option<Message>>, D::Error> {
    object_or_null(d).map(Some)
}

/// The keys a vote reads. `kind`, `type`, `payload` and `message` are typed strictly: any other
/// JSON type refuses the line and the full parse decides.
#[derive(Deserialize)]
struct Probe<'a> {
    #[serde(default, borrow)]
    kind: Option<Cow<'a, str>>,
    #[serde(rename = "type", default, borrow)]
    ty: Option<Cow<'a, str>>,
    #[serde(default, deserialize_with = "object_or_null")]
    payload: Option<AnyObject>,
    #[serde(default, deserialize_with = "message")]
    message: Option<Option<Message>>,
    #[serde(default, rename = "record_type")]
    record_type: Seen,
    #[serde(default)]
    role: Seen,
    #[serde(default)]
    call_id: Seen,
    #[serde(default)]
    uuid: Seen,
    #[serde(default, rename = "parentUuid")]
    parent_uuid: Seen,
    #[serde(default, rename = "sessionId")]
    session_id: Seen,
    #[serde(default, rename = "leafUuid")]
    leaf_uuid: Seen,
    #[serde(default, rename = "messageId")]
    message_id: Seen,
    #[serde(default, rename = "isSidechain")]
    is_sidechain: Seen,
    #[serde(default)]
    cwd: Seen,
    #[serde(default)]
    version: Seen,
    #[serde(default)]
    summary: Seen,
    #[serde(default)]
    id: Seen,
    #[serde(default)]
    content: Seen,
    #[serde(default, rename = "projectHash")]
    project_hash: Seen,
    #[serde(default, rename = "$set")]
    set: Seen,
    #[serde(default, rename = "$rewindTo")]
    rewind_to: Seen,
    #[serde(default, rename = "usageMetadata")]
    usage_metadata: Seen,
    #[serde(default, rename = "systemPayload")]
    system_payload: Seen,
    #[serde(default)]
    time: Seen,
}

/// `None` when the line is not a JSON object (it does not vote); else its vote.
pub(super) fn vote_of(line: &[u8]) -> Option<Option<Format>> {
    match typed::line::<Probe>(line) {
        Some(p) => Some(super::vote(&p.as_map())),
        None => match parse_json(line) {
            Ok(Value::Object(o)) => Some(super::vote(&o)),
            _ => None,
        },
    }
}

impl Probe<'_> {
    /// The keys read, as the object [`super::vote`] takes (values it only tests for presence are
    /// `null`; `payload` is an empty object, `message` one with a `null` role when it had one).
    fn as_map(&self) -> Map<String, Value> {
        let mut o = Map::new();
        if let Some(k) = &self.kind {
            o.insert("kind".into(), Value::String(k.to_string()));
        }
        if let Some(t) = &self.ty {
            o.insert("type".into(), Value::String(t.to_string()));
        }
        if self.payload.is_some() {
            o.insert("payload".into(), Value::Object(Map::new()));
        }
        match &self.message {
            None => {}
            Some(None) => {
                o.insert("message".into(), Value::Null);
            }
            Some(Some(m)) => {
                let mut mo = Map::new();
                if m.role.0 {
                    mo.insert("role".into(), Value::Null);
                }
                if m.parts.0 {
                    mo.insert("parts".into(), Value::Null);
                }
                o.insert("message".into(), Value::Object(mo));
            }
        }
        let present = [
            ("record_type", self.record_type),
            ("role", self.role),
            ("call_id", self.call_id),
            ("uuid", self.uuid),
            ("parentUuid", self.parent_uuid),
            ("sessionId", self.session_id),
            ("leafUuid", self.leaf_uuid),
            ("messageId", self.message_id),
            ("isSidechain", self.is_sidechain),
            ("cwd", self.cwd),
            ("version", self.version),
            ("summary", self.summary),
            ("id", self.id),
            ("content", self.content),
            ("projectHash", self.project_hash),
            ("$set", self.set),
            ("$rewindTo", self.rewind_to),
            ("usageMetadata", self.usage_metadata),
            ("systemPayload", self.system_payload),
            ("time", self.time),
        ];
        for (k, seen) in present {
            if seen.0 {
                o.insert(k.into(), Value::Null);
            }
        }
        o
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn full(line: &[u8]) -> Option<Option<Format>> {
        match parse_json(line) {
            Ok(Value::Object(o)) => Some(super::super::vote(&o)),
            _ => None,
        }
    }

    #[test]
    fn the_typed_vote_is_the_full_parse_vote() {
        let lines: &[&[u8]] = &[
            br#"{"type":"user","uuid":"u","message":{"role":"user","content":[{"type":"text","text":"x"}]}}"#,
            br#"{"type":"assistant","message":{"role":null}}"#,
            br#"{"type":"assistant","message":{"content":"no role"}}"#,
            br#"{"type":"message","role":"user"}"#,
            br#"{"type":"message","role":"user","message":null}"#,
            br#"{"type":"message","message":{"role":"user"},"uuid":"u"}"#,
            br#"{"type":"message","message":"text"}"#,
            br#"{"type":"message","message":["role"]}"#,
            br#"{"type":"event_msg","payload":{"type":"token_count"}}"#,
            br#"{"type":"event_msg","payload":null}"#,
            br#"{"type":"event_msg","payload":[1]}"#,
            br#"{"type":"session","cwd":null}"#,
            br#"{"kind":"session","rev":1}"#,
            br#"{"kind":1,"type":"summary","summary":"s"}"#,
            br#"{"type":"function_call","call_id":"c"}"#,
            br#"{"type":"user","type":"session","cwd":"/"}"#,
            br#"{"type":7,"uuid":"u"}"#,
            br#"["type","user"]"#,
            br#"{"record_type":"state"} x"#,
            b"{\"type\":\"user\",\"uuid\":\"u\",\"x\":\"\xff\"}",
        ];
        for l in lines {
            assert_eq!(vote_of(l), full(l), "{}", String::from_utf8_lossy(l));
        }
    }

    #[test]
    #[cfg_attr(
        not(ctxj_has_samples),
        ignore = "needs ../shared/samples (fails under CI=true; once it is there, `touch build.rs`)"
    )]
    fn every_transcript_line_votes_alike_typed_and_in_full() {
        for f in crate::journal::typed::testing::transcript_files() {
            let bytes = std::fs::read(&f).unwrap();
            for l in crate::journal::typed::lines(&bytes) {
                assert_eq!(vote_of(l), full(l), "{}: {}", f.display(), String::from_utf8_lossy(&l[..l.len().min(200)]));
            }
        }
    }
}
