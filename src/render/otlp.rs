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
/// int64 values are strings in OTLP/JSON.
fn int(n: u64) -> Value {
    json!({ "intValue": n.to_string() })
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
    let mut a = vec![
        attr("gen_ai.operation.name", string("invoke_agent")),
        attr("gen_ai.agent.name", string(s.agent)),
        attr("gen_ai.conversation.id", string(&s.session)),
        attr("ctxj.project", string(&s.project)),
        attr("ctxj.source", string(&s.source)),
    ];
    if let Some(p) = &s.parent {
        a.push(attr("ctxj.parent_session", string(p)));
    }
    for t in &s.strategies {
        let k = |f: &str| format!("ctxj.strategy.{}.{f}", t.strategy);
        a.push(attr(&k("requests"), int(t.requests)));
        a.push(attr(&k("prompt_tokens"), int(t.prompt_tokens)));
        a.push(attr(&k("cache_read_tokens"), int(t.cache_read_tokens)));
        if let Some(c) = t.cost_usd {
            a.push(attr(&k("cost_usd"), double(c)));
        }
    }
    a
}

fn chat_attributes(r: &ExportRow) -> Vec<Value> {
    let prompt = r.input_tokens.saturating_add(r.cache_read_tokens).saturating_add(r.cache_write_tokens);
    let mut a = vec![
        attr("gen_ai.operation.name", string("chat")),
        attr("gen_ai.conversation.id", string(&r.session)),
        attr("gen_ai.usage.input_tokens", int(prompt)),
        attr("gen_ai.usage.cache_read.input_tokens", int(r.cache_read_tokens)),
        attr("gen_ai.usage.cache_creation.input_tokens", int(r.cache_write_tokens)),
        attr("gen_ai.usage.output_tokens", int(r.output_tokens)),
        attr("ctxj.strategy", string(&r.strategy)),
        attr("ctxj.turn", int(r.turn)),
        attr("ctxj.compaction", json!({ "boolValue": r.compaction })),
    ];
    if let Some(p) = &r.provider {
        a.push(attr("gen_ai.provider.name", string(p)));
    }
    if let Some(m) = &r.model {
        a.push(attr("gen_ai.request.model", string(m)));
    }
    if let Some(c) = r.cost_usd {
        a.push(attr("ctxj.cost_usd", double(c)));
    }
    if let Some(b) = &r.break_cause {
        a.push(attr("ctxj.break_cause", string(b)));
    }
    if let Some(e) = r.prompt_tokens_estimated {
        a.push(attr("ctxj.prompt_tokens_estimated", int(e)));
    }
    if let Some(h) = r.simulated_hit {
        a.push(attr("ctxj.simulated_hit", double(h)));
    }
    a
}
