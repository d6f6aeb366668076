//! OTLP/JSON of the span model: the protobuf JSON mapping with OTLP's exceptions — trace and
//! span ids as lowercase hex (not base64), enums as numbers, int64 and fixed64 as strings.

use serde_json::{json, Value};

use super::{Attributes, Trace, Val};

/// A `TracesData` (the same JSON as an `ExportTraceServiceRequest`) holding `traces`.
pub fn traces_data(traces: &[Trace]) -> Value {
    let resource_spans: Vec<Value> = traces.iter().map(resource_spans).collect();
    json!({ "resourceSpans": resource_spans })
}

fn resource_spans(t: &Trace) -> Value {
    let spans: Vec<Value> = t
        .spans
        .iter()
        .map(|s| {
            let mut v = json!({
                "traceId": hex::encode(s.trace_id),
                "spanId": hex::encode(s.span_id),
                "name": s.name,
                "kind": s.kind,
                "startTimeUnixNano": s.start.to_string(),
                "endTimeUnixNano": s.end.to_string(),
                "attributes": attributes(&s.attributes),
            });
            if let Some(p) = s.parent {
                v["parentSpanId"] = Value::String(hex::encode(p));
            }
            v
        })
        .collect();
    json!({
        "resource": { "attributes": attributes(&t.resource) },
        "scopeSpans": [{
            "scope": { "name": "ctxj", "version": env!("CARGO_PKG_VERSION") },
            "spans": spans,
        }],
    })
}

/// `KeyValue`s.
pub fn attributes(a: &Attributes) -> Vec<Value> {
    a.iter().map(|(k, v)| json!({ "key": k, "value": value(v) })).collect()
}

fn value(v: &Val) -> Value {
    match v {
        Val::Str(s) => json!({ "stringValue": s }),
        Val::Int(n) => json!({ "intValue": n.to_string() }),
        Val::Double(x) => json!({ "doubleValue": x }),
        Val::Bool(b) => json!({ "boolValue": b }),
        Val::Strs(list) => {
            let values: Vec<Value> = list.iter().map(|s| json!({ "stringValue": s })).collect();
            json!({ "arrayValue": { "values": values } })
        }
    }
}
