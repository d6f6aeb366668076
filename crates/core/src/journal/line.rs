//! One journal line to a typed [`Record`]: the fast path straight into typed bodies when `kind`
//! comes first, else a verbatim `Value` (number text restored) and then the record.

use std::sync::Arc;

use serde::Deserialize;
use serde_json::Value;

use super::error::JournalErrorKind;
use super::index::Line;
use super::json::{check_values, parse_json_verbatim};
use super::record::{Body, MirrorDraft, Record, Text};

pub(super) fn parse_line(bytes: &[u8], line: &Line) -> Result<Record, JournalErrorKind> {
    check_values(bytes)?;
    // A number literal serde_json would rewrite (`1e5`, `-0`; rare) takes the restoring path:
    // the fast path deserialises straight into typed bodies and cannot keep its text.
    if !super::numbers::needs_restore(bytes) {
        if let Some(rec) = parse_line_fast(bytes, line) {
            return Ok(rec);
        }
    }
    parse_line_slow(bytes, line)
}

/// The reference path: a `Value` (with the journal's number text restored), then the typed record.
pub(super) fn parse_line_slow(bytes: &[u8], line: &Line) -> Result<Record, JournalErrorKind> {
    let (value, restored) = parse_json_verbatim(bytes)?;
    if !restored {
        return record_from_value(value, line.number, line.start as u64);
    }
    let orig = value.clone();
    let mut rec = record_from_value(value, line.number, line.start as u64)?;
    reattach(&mut rec.body, &orig);
    Ok(rec)
}

/// `serde_json::from_value` re-parses every number's text (normalising it again), so the verbatim
/// JSON fields of a typed record are copied back from the restored record value `orig`.
fn reattach(body: &mut Body, orig: &Value) {
    match body {
        Body::System(s) => {
            if let (Some(_), Some(t)) = (&s.tools, orig.get("tools")) {
                s.tools = Some(Arc::new(t.clone()));
            }
        }
        Body::Assistant(a) => {
            let Some(Value::Array(calls)) = orig.get("calls") else { return };
            for (call, raw) in a.calls.iter_mut().zip(calls) {
                if let Some(args) = raw.get("args") {
                    call.args = Arc::new(args.clone());
                }
            }
        }
        Body::Mirror(m) => {
            if let Some(d) = orig.get("draft") {
                m.draft = MirrorDraft::from_value(d);
            }
        }
        _ => {}
    }
}

/// The common fields, read without building a `Value` (unknown fields are skipped).
#[derive(Deserialize)]
struct Envelope<'a> {
    #[serde(default, deserialize_with = "strict_u64")]
    rev: Option<u64>,
    #[serde(default, deserialize_with = "strict_string")]
    ts: Option<String>,
    #[serde(borrow)]
    kind: std::borrow::Cow<'a, str>,
}

/// Accepts a JSON integer that fits `u64` and nothing else — exactly what `Value::as_u64`
/// accepts in the slow path (so `-0` is refused in both).
fn strict_u64<'de, D: serde::Deserializer<'de>>(d: D) -> Result<Option<u64>, D::Error> {
    struct V;
    impl serde::de::Visitor<'_> for V {
        type Value = u64;
        fn expecting(&self, f: &mut std::fmt::Formatter) -> std::fmt::Result {
            f.write_str("a non-negative integer")
        }
        fn visit_u64<E: serde::de::Error>(self, v: u64) -> Result<u64, E> {
            Ok(v)
        }
    }
    d.deserialize_u64(V).map(Some)
}

fn strict_string<'de, D: serde::Deserializer<'de>>(d: D) -> Result<Option<String>, D::Error> {
    String::deserialize(d).map(Some)
}

/// The fast path: typed records straight from the line's text, in two passes (the common fields,
/// then the kind's body), without an intermediate `Value` tree. It declines (`None`) whatever it
/// cannot decide exactly as the slow path would — a line that is not an object, invalid UTF-8,
/// a `\uD…` escape (lone surrogates are only caught when a string is decoded), and any parse or
/// schema error — and the slow path then gives the result and the message.
pub(super) fn parse_line_fast(bytes: &[u8], line: &Line) -> Option<Record> {
    if bytes.iter().find(|b| !b.is_ascii_whitespace()) != Some(&b'{') {
        return None;
    }
    let text = std::str::from_utf8(bytes).ok()?;
    if memchr::memmem::find_iter(bytes, b"\\u").any(|i| matches!(bytes.get(i + 2), Some(b'd' | b'D'))) {
        return None;
    }
    // serde_json's own recursion limit (127 levels) stays on here: it keeps the fast path safe
    // without a depth scan, and a line at the spec's limit of 128 goes to the slow path.
    if let Some(rec) = one_pass(text, line) {
        return Some(rec);
    }
    let mut de = serde_json::Deserializer::from_str(text);
    let env = Envelope::deserialize(&mut de).ok()?;
    de.end().ok()?;
    let body = Body::from_json_str(&env.kind, text).ok()?;
    Some(Record {
        rev: env.rev.unwrap_or(0),
        rev_recorded: env.rev.is_some(),
        ts: env.ts.map_or_else(|| Text::from(""), Text::from),
        line: line.number,
        offset: line.start as u64,
        body,
    })
}

/// Turns one parsed JSON object into a typed record.
pub fn record_from_value(value: Value, line: usize, offset: u64) -> Result<Record, JournalErrorKind> {
    let obj = value.as_object().ok_or(JournalErrorKind::NotAnObject)?;
    let kind = match obj.get("kind") {
        Some(Value::String(k)) => k.clone(),
        Some(_) => return Err(JournalErrorKind::Schema("`kind` must be a string".into())),
        None => return Err(JournalErrorKind::Schema("missing field `kind`".into())),
    };
    let (rev, rev_recorded) = match obj.get("rev") {
        None => (0, false),
        Some(v) => match v.as_u64() {
            Some(r) => (r, true),
            None => return Err(JournalErrorKind::Schema("`rev` must be a non-negative integer".into())),
        },
    };
    let ts: Text = match obj.get("ts") {
        Some(Value::String(s)) => s.as_str().into(),
        None => "".into(),
        Some(_) => return Err(JournalErrorKind::Schema("`ts` must be a string".into())),
    };
    let body = Body::from_value(&kind, value).map_err(|e| JournalErrorKind::Schema(format!("{kind}: {e}")))?;
    Ok(Record { rev, rev_recorded, ts, line, offset, body })
}

/// One pass over the line when `kind` comes before every field but `rev` and `ts` (as in every
/// journal ctxj and the spec's examples write): the rest of the object goes straight into the
/// kind's body type, `rev`/`ts` met later are picked out on the way.
pub(super) fn one_pass(text: &str, line: &Line) -> Option<Record> {
    let mut de = serde_json::Deserializer::from_str(text);
    let (rev, ts, body) = serde::Deserializer::deserialize_map(&mut de, OnePass).ok()?;
    de.end().ok()?;
    Some(Record {
        rev: rev.unwrap_or(0),
        rev_recorded: rev.is_some(),
        ts: ts.map_or_else(|| Text::from(""), Text::from),
        line: line.number,
        offset: line.start as u64,
        body,
    })
}

mod one_pass_de {
    //! The serde plumbing of [`super::one_pass`].

    use serde::de::{self, DeserializeSeed, IgnoredAny, IntoDeserializer, MapAccess, Visitor};
    use serde::Deserialize;

    use crate::journal::record::*;

    pub struct OnePass;

    pub type Parts = (Option<u64>, Option<String>, Body);

    struct StrictU64;
    impl<'de> DeserializeSeed<'de> for StrictU64 {
        type Value = u64;
        fn deserialize<D: de::Deserializer<'de>>(self, d: D) -> Result<u64, D::Error> {
            super::strict_u64(d).map(|v| v.unwrap_or(0))
        }
    }

    fn field<'de, A: MapAccess<'de>>(
        map: &mut A,
        key: &str,
        rev: &mut Option<u64>,
        ts: &mut Option<String>,
    ) -> Result<bool, A::Error> {
        match key {
            "rev" if rev.is_none() => *rev = Some(map.next_value_seed(StrictU64)?),
            "ts" if ts.is_none() => *ts = Some(map.next_value::<String>()?),
            "rev" | "ts" | "kind" => return Err(de::Error::custom("duplicate field")),
            _ => return Ok(false),
        }
        Ok(true)
    }

    impl<'de> Visitor<'de> for OnePass {
        type Value = Parts;
        fn expecting(&self, f: &mut std::fmt::Formatter) -> std::fmt::Result {
            f.write_str("a record object")
        }
        fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<Parts, A::Error> {
            let (mut rev, mut ts) = (None, None);
            while let Some(key) = map.next_key::<String>()? {
                if key == "kind" {
                    let kind: String = map.next_value()?;
                    let mut rest = Rest { map, rev: &mut rev, ts: &mut ts };
                    let body = match kind.as_str() {
                        "session" => Body::Session(SessionRec::deserialize(RestDe(&mut rest))?),
                        "system" => Body::System(SystemRec::deserialize(RestDe(&mut rest))?),
                        "notice" => Body::Notice(NoticeRec::deserialize(RestDe(&mut rest))?),
                        "user" => Body::User(UserRec::deserialize(RestDe(&mut rest))?),
                        "assistant" => Body::Assistant(AssistantRec::deserialize(RestDe(&mut rest))?),
                        "result" => Body::Result(ResultRec::deserialize(RestDe(&mut rest))?),
                        "elide" => Body::Elide(ElideRec::deserialize(RestDe(&mut rest))?),
                        "clear" => Body::Clear(ClearRec::deserialize(RestDe(&mut rest))?),
                        "mirror" => Body::Mirror(MirrorRec::deserialize(RestDe(&mut rest))?),
                        "compact" => Body::Compact(CompactRec::deserialize(RestDe(&mut rest))?),
                        "model" => Body::Model(ModelRec::deserialize(RestDe(&mut rest))?),
                        "outcome" => Body::Outcome(OutcomeRec::deserialize(RestDe(&mut rest))?),
                        _ => {
                            while rest.next_key::<IgnoredAny>()?.is_some() {
                                rest.next_value::<IgnoredAny>()?;
                            }
                            Body::Unknown { kind }
                        }
                    };
                    return Ok((rev, ts, body));
                }
                if !field(&mut map, &key, &mut rev, &mut ts)? {
                    return Err(de::Error::custom("`kind` is not among the first fields"));
                }
            }
            Err(de::Error::custom("missing field `kind`"))
        }
    }

    /// The fields after `kind`, with `rev` and `ts` taken out.
    struct Rest<'r, A> {
        map: A,
        rev: &'r mut Option<u64>,
        ts: &'r mut Option<String>,
    }

    impl<'de, A: MapAccess<'de>> MapAccess<'de> for Rest<'_, A> {
        type Error = A::Error;
        fn next_key_seed<K: DeserializeSeed<'de>>(&mut self, seed: K) -> Result<Option<K::Value>, A::Error> {
            while let Some(key) = self.map.next_key::<String>()? {
                if !field(&mut self.map, &key, self.rev, self.ts)? {
                    return seed.deserialize(key.into_deserializer()).map(Some);
                }
            }
            Ok(None)
        }
        fn next_value_seed<V: DeserializeSeed<'de>>(&mut self, seed: V) -> Result<V::Value, A::Error> {
            self.map.next_value_seed(seed)
        }
    }

    struct RestDe<'a, 'r, A>(&'a mut Rest<'r, A>);

    impl<'de, A: MapAccess<'de>> de::Deserializer<'de> for RestDe<'_, '_, A> {
        type Error = A::Error;
        fn deserialize_any<V: Visitor<'de>>(self, visitor: V) -> Result<V::Value, A::Error> {
            visitor.visit_map(self.0)
        }
        serde::forward_to_deserialize_any! {
            bool i8 i16 i32 i64 i128 u8 u16 u32 u64 u128 f32 f64 char str string bytes byte_buf option unit
            unit_struct newtype_struct seq tuple tuple_struct map struct enum identifier ignored_any
        }
    }
}

use one_pass_de::OnePass;
