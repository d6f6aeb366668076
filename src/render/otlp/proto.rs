//! OTLP protobuf of the span model: `ExportTraceServiceRequest`, the body of an OTLP/HTTP
//! `application/x-protobuf` POST to `/v1/traces`.
//!
//! The messages are the fields ctxj writes of `opentelemetry/proto/collector/trace/v1`,
//! `trace/v1`, `resource/v1` and `common/v1` (OTLP 1.x, stable), declared with prost's derive
//! at the .proto's field numbers and types — what prost-build generates, without its build
//! step or the OpenTelemetry SDK that the `opentelemetry-proto` crate's trace types pull in.
//! Fields ctxj never sets are left out: an encoder may omit any proto3 field. Ids are the raw
//! 16 and 8 bytes, times fixed64 nanoseconds.

use prost::Message;

use super::{Attributes, Trace, Val};

#[derive(Clone, PartialEq, Message)]
pub struct ExportTraceServiceRequest {
    #[prost(message, repeated, tag = "1")]
    pub resource_spans: Vec<ResourceSpans>,
}

#[derive(Clone, PartialEq, Message)]
pub struct ResourceSpans {
    #[prost(message, optional, tag = "1")]
    pub resource: Option<Resource>,
    #[prost(message, repeated, tag = "2")]
    pub scope_spans: Vec<ScopeSpans>,
}

#[derive(Clone, PartialEq, Message)]
pub struct Resource {
    #[prost(message, repeated, tag = "1")]
    pub attributes: Vec<KeyValue>,
}

#[derive(Clone, PartialEq, Message)]
pub struct ScopeSpans {
    #[prost(message, optional, tag = "1")]
    pub scope: Option<InstrumentationScope>,
    #[prost(message, repeated, tag = "2")]
    pub spans: Vec<Span>,
}

#[derive(Clone, PartialEq, Message)]
pub struct InstrumentationScope {
    #[prost(string, tag = "1")]
    pub name: String,
    #[prost(string, tag = "2")]
    pub version: String,
}

#[derive(Clone, PartialEq, Message)]
pub struct Span {
    #[prost(bytes = "vec", tag = "1")]
    pub trace_id: Vec<u8>,
    #[prost(bytes = "vec", tag = "2")]
    pub span_id: Vec<u8>,
    #[prost(bytes = "vec", tag = "4")]
    pub parent_span_id: Vec<u8>,
    #[prost(string, tag = "5")]
    pub name: String,
    /// `Span.SpanKind`.
    #[prost(int32, tag = "6")]
    pub kind: i32,
    #[prost(fixed64, tag = "7")]
    pub start_time_unix_nano: u64,
    #[prost(fixed64, tag = "8")]
    pub end_time_unix_nano: u64,
    #[prost(message, repeated, tag = "9")]
    pub attributes: Vec<KeyValue>,
}

#[derive(Clone, PartialEq, Message)]
pub struct KeyValue {
    #[prost(string, tag = "1")]
    pub key: String,
    #[prost(message, optional, tag = "2")]
    pub value: Option<AnyValue>,
}

#[derive(Clone, PartialEq, Message)]
pub struct AnyValue {
    #[prost(oneof = "any_value::Value", tags = "1, 2, 3, 4, 5")]
    pub value: Option<any_value::Value>,
}

pub mod any_value {
    #[derive(Clone, PartialEq, prost::Oneof)]
    pub enum Value {
        #[prost(string, tag = "1")]
        StringValue(String),
        #[prost(bool, tag = "2")]
        BoolValue(bool),
        #[prost(int64, tag = "3")]
        IntValue(i64),
        #[prost(double, tag = "4")]
        DoubleValue(f64),
        #[prost(message, tag = "5")]
        ArrayValue(super::ArrayValue),
    }
}

#[derive(Clone, PartialEq, Message)]
pub struct ArrayValue {
    #[prost(message, repeated, tag = "1")]
    pub values: Vec<AnyValue>,
}

/// The request carrying `traces`.
pub fn request(traces: &[Trace]) -> ExportTraceServiceRequest {
    ExportTraceServiceRequest { resource_spans: traces.iter().map(resource_spans).collect() }
}

/// The protobuf bytes of the request carrying `traces`.
pub fn encode(traces: &[Trace]) -> Vec<u8> {
    request(traces).encode_to_vec()
}

fn resource_spans(t: &Trace) -> ResourceSpans {
    let spans = t
        .spans
        .iter()
        .map(|s| Span {
            trace_id: s.trace_id.to_vec(),
            span_id: s.span_id.to_vec(),
            parent_span_id: s.parent.map(|p| p.to_vec()).unwrap_or_default(),
            name: s.name.clone(),
            kind: s.kind,
            start_time_unix_nano: s.start,
            end_time_unix_nano: s.end,
            attributes: attributes(&s.attributes),
        })
        .collect();
    ResourceSpans {
        resource: Some(Resource { attributes: attributes(&t.resource) }),
        scope_spans: vec![ScopeSpans {
            scope: Some(InstrumentationScope { name: "ctxj".into(), version: env!("CARGO_PKG_VERSION").into() }),
            spans,
        }],
    }
}

fn attributes(a: &Attributes) -> Vec<KeyValue> {
    a.iter().map(|(k, v)| KeyValue { key: k.clone(), value: Some(value(v)) }).collect()
}

fn value(v: &Val) -> AnyValue {
    use any_value::Value as V;
    let v = match v {
        Val::Str(s) => V::StringValue(s.clone()),
        Val::Int(n) => V::IntValue(*n),
        Val::Double(x) => V::DoubleValue(*x),
        Val::Bool(b) => V::BoolValue(*b),
        Val::Strs(list) => {
            V::ArrayValue(ArrayValue { values: list.iter().map(|s| value(&Val::Str(s.clone()))).collect() })
        }
    };
    AnyValue { value: Some(v) }
}

#[cfg(test)]
mod tests {
    use super::super::{Span as S, KIND_CLIENT};
    use super::*;

    fn trace() -> Trace {
        let span = S {
            trace_id: [0xab; 16],
            span_id: [0xcd; 8],
            parent: Some([0xef; 8]),
            name: "chat m".into(),
            kind: KIND_CLIENT,
            start: 1,
            end: 2,
            attributes: vec![("k".into(), Val::Int(7))],
        };
        Trace { resource: vec![("service.name".into(), Val::Str("ctxj".into()))], spans: vec![span] }
    }

    /// Issue 32: a converter read OTLP/JSON's hex ids as base64 (24-byte trace ids); protobuf
    /// carries the raw 16 and 8 bytes.
    #[test]
    fn regression_ids_are_raw_bytes_not_base64_of_hex() {
        let bytes = encode(&[trace()]);
        let back = ExportTraceServiceRequest::decode(bytes.as_slice()).unwrap();
        let s = &back.resource_spans[0].scope_spans[0].spans[0];
        assert_eq!(s.trace_id, vec![0xab; 16]);
        assert_eq!(s.span_id, vec![0xcd; 8]);
        assert_eq!(s.parent_span_id, vec![0xef; 8]);
        assert_eq!((s.start_time_unix_nano, s.end_time_unix_nano, s.kind), (1, 2, KIND_CLIENT));
        // Field 1 of Span, length 16: the raw id follows its tag.
        let mut needle = vec![0x0a, 16];
        needle.extend([0xab; 16]);
        assert!(bytes.windows(needle.len()).any(|w| w == needle.as_slice()));
        assert_eq!(back, request(&[trace()]));
    }
}
