//! `ctxj export --format otlp-json`: the OpenTelemetry file-exporter format — one OTLP/JSON
//! `TracesData` (= `ExportTraceServiceRequest`) per line, one trace per session.
//!
//! The root span `invoke_agent <agent>` covers the session; each recorded request is a child
//! `chat <model>` span with the GenAI semantic-convention attributes (`gen_ai.usage.input_tokens`
//! includes the cached and cache-written tokens, unlike Anthropic's `input_tokens`) and ctxj's
//! own under `ctxj.*` (cost, strategy, break cause, estimate). Simulated strategies did not
//! happen, so they are not spans: their totals are attributes of the root span
//! (`ctxj.strategy.<name>.cost_usd`, …). Ids are derived from the session and turn (SHA-256),
//! so exporting twice gives the same trace; times are unix nanoseconds as strings (OTLP/JSON).
//!
//! OTLP integers are int64: a count past `i64::MAX` (a damaged or hostile transcript's u64
//! tokens) is written as `i64::MAX`, and the span says so in `ctxj.clamped_int64` (the keys
//! clamped) — a collector drops a whole trace holding an out-of-range int64 (issue 31).

use std::io::Write;

use serde_json::{json, Value};
use sha2::{Digest, Sha256};

use super::export::Exporter;
use super::rows::RowsError;
use ctxj_core::export::{ExportRow, SessionRows};

/// OTLP span kinds.
const KIND_INTERNAL: u8 = 1;
const KIND_CLIENT: u8 = 3;

/// The OTLP/JSON writer.
pub struct Otlp;

impl Exporter for Otlp {
    fn session(&mut self, out: &mut dyn Write, s: &SessionRows) -> Result<(), RowsError> {
        serde_json::to_writer(&mut *out, &traces(s))?;
        writeln!(out)?;
        Ok(())
    }
}

/// One attribute.
fn attr(key: &str, v: Value) -> Value {
    json!({ "key": key, "value": v })
}
fn string(s: &str) -> Value {
    json!({ "stringValue": s })
}
/// int64 values are strings in OTLP/JSON; a count past `i64::MAX` is clamped to it (the caller
/// notes it, [`Attrs::int`]).
fn int(n: u64) -> Value {
    json!({ "intValue": n.min(i64::MAX as u64).to_string() })
}

/// A span's attributes, with the keys whose counts were clamped to int64.
#[derive(Default)]
struct Attrs {
    list: Vec<Value>,
    clamped: Vec<String>,
}

impl Attrs {
    fn push(&mut self, key: &str, v: Value) {
        self.list.push(attr(key, v));
    }

    fn int(&mut self, key: &str, n: u64) {
        if i64::try_from(n).is_err() {
            self.clamped.push(key.to_string());
        }
        self.push(key, int(n));
    }

    /// The attributes, with `ctxj.clamped_int64` listing the clamped keys when there are any.
    fn done(mut self) -> Vec<Value> {
        if !self.clamped.is_empty() {
            let values: Vec<Value> = self.clamped.iter().map(|k| string(k)).collect();
            self.push("ctxj.clamped_int64", json!({ "arrayValue": { "values": values } }));
        }
        self.list
    }
}
fn double(x: f64) -> Value {
    json!({ "doubleValue": x })
}

/// The trace id of a session: 16 bytes of SHA-256 over its agent, project, parent and id (not
/// the file's path, which differs between copies of the same session).
pub fn trace_id(s: &SessionRows) -> [u8; 16] {
    let mut h = Sha256::new();
    for part in [s.agent, &s.project, s.parent.as_deref().unwrap_or(""), &s.session] {
        h.update(part.as_bytes());
        h.update([0]);
    }
    h.finalize()[..16].try_into().expect("16 bytes")
}

/// The span id of turn `turn` (0: the root span) in a trace.
pub fn span_id(trace: &[u8; 16], turn: u64) -> [u8; 8] {
    let mut h = Sha256::new();
    h.update(trace);
    h.update(turn.to_be_bytes());
    h.finalize()[..8].try_into().expect("8 bytes")
}

/// Unix nanoseconds of an RFC 3339 time, as a string ("0" when unknown).
fn nanos(ts: Option<&str>) -> String {
    ts.and_then(ctxj_core::usage::time::instant).and_then(|t| t.timestamp_nanos_opt()).unwrap_or(0).max(0).to_string()
}

/// The `TracesData` of one session.
pub fn traces(s: &SessionRows) -> Value {
    let trace = trace_id(s);
    let tid = hex::encode(trace);
    let root = hex::encode(span_id(&trace, 0));
    let recorded: Vec<&ExportRow> = s.rows.iter().filter(|r| r.strategy == "recorded").collect();
    let mut times: Vec<&str> = recorded.iter().filter_map(|r| r.timestamp.as_deref()).collect();
    times.sort_by_key(|t| nanos(Some(t)).parse::<i64>().unwrap_or(0));
    let mut spans = vec![json!({
        "traceId": tid,
        "spanId": root,
        "name": format!("invoke_agent {}", s.agent),
        "kind": KIND_INTERNAL,
        "startTimeUnixNano": nanos(times.first().copied()),
        "endTimeUnixNano": nanos(times.last().copied()),
        "attributes": root_attributes(s),
    })];
    for r in recorded {
        let t = nanos(r.timestamp.as_deref());
        spans.push(json!({
            "traceId": tid,
            "spanId": hex::encode(span_id(&trace, r.turn)),
            "parentSpanId": root,
            "name": r.model.as_deref().map_or_else(|| "chat".to_string(), |m| format!("chat {m}")),
            "kind": KIND_CLIENT,
            "startTimeUnixNano": t,
            "endTimeUnixNano": t,
            "attributes": chat_attributes(r),
        }));
    }
    json!({ "resourceSpans": [{
        "resource": { "attributes": [attr("service.name", string("ctxj")), attr("ctxj.agent", string(s.agent))] },
        "scopeSpans": [{
            "scope": { "name": "ctxj", "version": env!("CARGO_PKG_VERSION") },
            "spans": spans,
        }],
    }]})
}

fn root_attributes(s: &SessionRows) -> Vec<Value> {
    let mut a = Attrs::default();
    a.push("gen_ai.operation.name", string("invoke_agent"));
    a.push("gen_ai.agent.name", string(s.agent));
    a.push("gen_ai.conversation.id", string(&s.session));
    a.push("ctxj.project", string(&s.project));
    a.push("ctxj.source", string(&s.source));
    if let Some(p) = &s.parent {
        a.push("ctxj.parent_session", string(p));
    }
    for t in &s.strategies {
        let k = |f: &str| format!("ctxj.strategy.{}.{f}", t.strategy);
        a.int(&k("requests"), t.requests);
        a.int(&k("prompt_tokens"), t.prompt_tokens);
        a.int(&k("cache_read_tokens"), t.cache_read_tokens);
        if let Some(c) = t.cost_usd {
            a.push(&k("cost_usd"), double(c));
        }
    }
    a.done()
}

fn chat_attributes(r: &ExportRow) -> Vec<Value> {
    let prompt = r.input_tokens.saturating_add(r.cache_read_tokens).saturating_add(r.cache_write_tokens);
    let mut a = Attrs::default();
    a.push("gen_ai.operation.name", string("chat"));
    a.push("gen_ai.conversation.id", string(&r.session));
    a.int("gen_ai.usage.input_tokens", prompt);
    a.int("gen_ai.usage.cache_read.input_tokens", r.cache_read_tokens);
    a.int("gen_ai.usage.cache_creation.input_tokens", r.cache_write_tokens);
    a.int("gen_ai.usage.output_tokens", r.output_tokens);
    a.push("ctxj.strategy", string(&r.strategy));
    a.int("ctxj.turn", r.turn);
    a.push("ctxj.compaction", json!({ "boolValue": r.compaction }));
    if let Some(p) = &r.provider {
        a.push("gen_ai.provider.name", string(p));
    }
    if let Some(m) = &r.model {
        a.push("gen_ai.request.model", string(m));
    }
    if let Some(c) = r.cost_usd {
        a.push("ctxj.cost_usd", double(c));
    }
    if let Some(b) = &r.break_cause {
        a.push("ctxj.break_cause", string(b));
    }
    if let Some(e) = r.prompt_tokens_estimated {
        a.int("ctxj.prompt_tokens_estimated", e);
    }
    if let Some(h) = r.simulated_hit {
        a.push("ctxj.simulated_hit", double(h));
    }
    a.done()
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Issue 31: OTLP wrote u64 token counts past int64, so a collector dropped the whole trace;
    /// they are clamped to `i64::MAX` and the span lists the clamped keys.
    #[test]
    fn regression_otlp_counts_past_int64_are_clamped_with_a_note() {
        let mut a = Attrs::default();
        a.int("small", 5);
        a.int("big", u64::MAX);
        let v = Value::Array(a.done()).to_string();
        assert!(v.contains(&format!("\"intValue\":\"{}\"", i64::MAX)), "{v}");
        assert!(!v.contains(&u64::MAX.to_string()), "{v}");
        assert!(v.contains("ctxj.clamped_int64") && v.contains("\"stringValue\":\"big\""), "{v}");
        let mut a = Attrs::default();
        a.int("small", 5);
        assert!(!Value::Array(a.done()).to_string().contains("clamped"));
    }
}
