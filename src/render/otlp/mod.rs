//! OpenTelemetry traces of `ctxj export`: one span model ([`Trace`], built here from a
//! session's rows) and its two OTLP encodings — OTLP/JSON ([`json`]: `--format otlp-json`, one
//! `TracesData` a line, and `--endpoint --protocol http/json`) and OTLP protobuf ([`proto`]:
//! `--endpoint`, the default `http/protobuf`).
//!
//! One trace per session: the root span `invoke_agent <agent>` covers the session; each recorded
//! request is a child `chat <model>` span carrying the OpenTelemetry GenAI semantic conventions
//! (`gen_ai.*`: `gen_ai.usage.input_tokens` includes the cached and cache-written tokens, unlike
//! Anthropic's `input_tokens`; `gen_ai.usage.cost`, which Langfuse reads as the cost) *and* the
//! OpenInference ones Phoenix reads (`openinference.span.kind = LLM`, `llm.token_count.*`,
//! `llm.cost.*`), plus ctxj's own under `ctxj.*` (cost, the 5-minute/1-hour cache-write split,
//! strategy, break cause, estimate). A chat span ends at its response's time and starts at the
//! record before it (the prompt or the last tool result). A Claude Code subagent's session is
//! part of its parent's trace: its root span is the child of the `execute_tool Task` span of the
//! call that started it when the parent's result names the agent, else of the parent's root
//! span (a subagent's trace is written after its parent's). Simulated strategies did not happen, so they
//! are not spans: their totals are attributes of the root span (`ctxj.strategy.<name>.*`).
//! With `--include-content` a chat span also carries its call's text, redacted and bounded by
//! `ctxj_core::export::content`, as OpenInference's `input.value`/`output.value`.
//!
//! Ids are derived from the session (SHA-256), so exporting twice gives the same trace. OTLP
//! integers are int64: a count past `i64::MAX` (a damaged or hostile transcript's u64 tokens) is
//! written as `i64::MAX`, and the span says so in `ctxj.clamped_int64` (the keys clamped) — a
//! collector drops a whole trace holding an out-of-range int64 (issue 31).

pub mod json;
pub mod proto;

use std::collections::{HashMap, HashSet};
use std::io::Write;

use sha2::{Digest, Sha256};

use super::export::Exporter;
use super::rows::RowsError;
use ctxj_core::export::{ExportRow, SessionRows, Spawn};

/// OTLP span kinds.
pub const KIND_INTERNAL: i32 = 1;
pub const KIND_CLIENT: i32 = 3;

/// An attribute's value (the OTLP `AnyValue`s ctxj writes).
#[derive(Debug, Clone, PartialEq)]
pub enum Val {
    Str(String),
    Int(i64),
    Double(f64),
    Bool(bool),
    Strs(Vec<String>),
}

/// A span's attributes, in order.
pub type Attributes = Vec<(String, Val)>;

/// One span, encoding-free.
#[derive(Debug, Clone, PartialEq)]
pub struct Span {
    pub trace_id: [u8; 16],
    pub span_id: [u8; 8],
    pub parent: Option<[u8; 8]>,
    pub name: String,
    pub kind: i32,
    /// Unix nanoseconds (0 when the transcript has no time).
    pub start: u64,
    pub end: u64,
    pub attributes: Attributes,
}

/// One session's spans and the resource that made them.
#[derive(Debug, Clone, PartialEq)]
pub struct Trace {
    pub resource: Attributes,
    pub spans: Vec<Span>,
}

/// The OTLP/JSON lines writer of `--format otlp-json`.
#[derive(Default)]
pub struct Otlp {
    tracer: Tracer,
}

impl Otlp {
    fn write(out: &mut dyn Write, traces: Vec<Trace>) -> Result<(), RowsError> {
        for t in traces {
            serde_json::to_writer(&mut *out, &json::traces_data(std::slice::from_ref(&t)))?;
            writeln!(out)?;
        }
        Ok(())
    }
}

impl Exporter for Otlp {
    fn session(&mut self, out: &mut dyn Write, s: &SessionRows) -> Result<(), RowsError> {
        Otlp::write(out, self.tracer.push(s))
    }

    fn finish(&mut self, out: &mut dyn Write) -> Result<(), RowsError> {
        Otlp::write(out, self.tracer.finish())
    }
}

/// Builds the traces of sessions, remembering the subagents the sessions' `Task` calls
/// announced, so that a subagent's root span names its `Task` span. A subagent's trace waits
/// until its parent session's has come (then follows it), or until [`Tracer::finish`].
#[derive(Default)]
pub struct Tracer {
    announced: HashSet<([u8; 16], String)>,
    /// Subagents' traces waiting for their parent session, with their agent ids.
    waiting: HashMap<[u8; 16], Vec<(Trace, Option<String>)>>,
    /// Trace ids whose main session has come.
    seen: HashSet<[u8; 16]>,
}

/// A span's attributes, with the keys whose counts were clamped to int64.
#[derive(Default)]
struct Attrs {
    list: Attributes,
    clamped: Vec<String>,
}

impl Attrs {
    fn push(&mut self, key: &str, v: Val) {
        self.list.push((key.to_string(), v));
    }

    fn str(&mut self, key: &str, v: &str) {
        self.push(key, Val::Str(v.to_string()));
    }

    /// An int64 attribute; a count past `i64::MAX` is clamped to it and noted.
    fn int(&mut self, key: &str, n: u64) {
        let v = i64::try_from(n).unwrap_or_else(|_| {
            self.clamped.push(key.to_string());
            i64::MAX
        });
        self.push(key, Val::Int(v));
    }

    fn double(&mut self, key: &str, x: f64) {
        self.push(key, Val::Double(x));
    }

    /// The attributes, with `ctxj.clamped_int64` listing the clamped keys when there are any.
    fn done(mut self) -> Attributes {
        if !self.clamped.is_empty() {
            let keys = std::mem::take(&mut self.clamped);
            self.push("ctxj.clamped_int64", Val::Strs(keys));
        }
        self.list
    }
}

/// The trace id of a session: 16 bytes of SHA-256 over its agent, project and id (not the
/// file's path, which differs between copies of the same session). A subagent's session is in
/// its parent's trace.
pub fn trace_id(s: &SessionRows) -> [u8; 16] {
    let mut h = Sha256::new();
    for part in [s.agent, &s.project, "", s.parent.as_deref().unwrap_or(&s.session)] {
        h.update(part.as_bytes());
        h.update([0]);
    }
    h.finalize()[..16].try_into().expect("16 bytes")
}

/// The span id of request `turn` (0: the session's root span) of `session` in a trace.
pub fn span_id(trace: &[u8; 16], session: &str, turn: u64) -> [u8; 8] {
    let mut h = Sha256::new();
    h.update(trace);
    h.update(session.as_bytes());
    h.update([0]);
    h.update(turn.to_be_bytes());
    h.finalize()[..8].try_into().expect("8 bytes")
}

/// The span id of the tool call that started subagent `agent` (the subagent's root span
/// names it as its parent).
fn agent_spawn_id(trace: &[u8; 16], agent: &str) -> [u8; 8] {
    let mut h = Sha256::new();
    h.update(trace);
    h.update(format!("agent\0{agent}"));
    h.finalize()[..8].try_into().expect("8 bytes")
}

/// The span id of a spawning tool call: its agent's, or (a result naming no agent) its call's.
fn spawn_id(trace: &[u8; 16], sp: &Spawn) -> [u8; 8] {
    if let Some(a) = &sp.agent {
        return agent_spawn_id(trace, a);
    }
    let mut h = Sha256::new();
    h.update(trace);
    h.update(format!("call\0{}", sp.call));
    h.finalize()[..8].try_into().expect("8 bytes")
}

/// Unix nanoseconds of an RFC 3339 time (0 when unknown).
fn nanos(ts: Option<&str>) -> u64 {
    ts.and_then(ctxj_core::usage::time::instant)
        .and_then(|t| t.timestamp_nanos_opt())
        .and_then(|n| u64::try_from(n).ok())
        .unwrap_or(0)
}

impl Tracer {
    /// The traces ready after `s`: its own and its waiting subagents' (after a main session),
    /// none (a subagent whose parent has not come yet) or the subagent's.
    pub fn push(&mut self, s: &SessionRows) -> Vec<Trace> {
        let t = self.trace(s);
        let id = t.spans[0].trace_id;
        if s.parent.is_some() {
            if self.seen.contains(&id) {
                return vec![self.resolve(t, s.agent_id.as_deref())];
            }
            self.waiting.entry(id).or_default().push((t, s.agent_id.clone()));
            return vec![];
        }
        self.seen.insert(id);
        let mut out = vec![t];
        for (sub, agent) in self.waiting.remove(&id).unwrap_or_default() {
            out.push(self.resolve(sub, agent.as_deref()));
        }
        out
    }

    /// The subagents' traces whose parent never came.
    pub fn finish(&mut self) -> Vec<Trace> {
        let mut ids: Vec<[u8; 16]> = self.waiting.keys().copied().collect();
        ids.sort();
        let mut out = vec![];
        for id in ids {
            for (sub, agent) in self.waiting.remove(&id).unwrap_or_default() {
                out.push(self.resolve(sub, agent.as_deref()));
            }
        }
        out
    }

    /// A subagent's root span under its `Task` span when a session announced the agent (it
    /// stays under its parent session's root span otherwise).
    fn resolve(&self, mut t: Trace, agent: Option<&str>) -> Trace {
        let id = t.spans[0].trace_id;
        if let Some(a) = agent.filter(|a| self.announced.contains(&(id, a.to_string()))) {
            t.spans[0].parent = Some(agent_spawn_id(&id, a));
        }
        t
    }

    /// The spans of one session (a subagent's root span under its parent session's root).
    fn trace(&mut self, s: &SessionRows) -> Trace {
        let trace = trace_id(s);
        let root = span_id(&trace, &s.session, 0);
        let conversation = s.parent.as_deref().unwrap_or(&s.session);
        let mut spans = vec![];
        for r in s.rows.iter().filter(|r| r.strategy == "recorded") {
            let end = nanos(r.timestamp.as_deref());
            let start = nanos(r.start_timestamp.as_deref()).min(end);
            spans.push(Span {
                trace_id: trace,
                span_id: span_id(&trace, &s.session, r.turn),
                parent: Some(root),
                name: r.model.as_deref().map_or_else(|| "chat".to_string(), |m| format!("chat {m}")),
                kind: KIND_CLIENT,
                start: if start == 0 { end } else { start },
                end,
                attributes: chat_attributes(r, conversation),
            });
        }
        for sp in &s.spawns {
            let id = spawn_id(&trace, sp);
            if let Some(a) = &sp.agent {
                self.announced.insert((trace, a.clone()));
            }
            let start = nanos(sp.start.as_deref());
            let end = nanos(sp.end.as_deref()).max(start);
            spans.push(Span {
                trace_id: trace,
                span_id: id,
                parent: Some(span_id(&trace, &s.session, sp.turn)),
                name: format!("execute_tool {}", sp.tool),
                kind: KIND_INTERNAL,
                start,
                end,
                attributes: spawn_attributes(sp, conversation),
            });
        }
        let (start, end) = spans.iter().fold((u64::MAX, 0), |(a, b), sp| (a.min(sp.start), b.max(sp.end)));
        let parent = s.parent.as_ref().map(|p| span_id(&trace, p, 0));
        spans.insert(
            0,
            Span {
                trace_id: trace,
                span_id: root,
                parent,
                name: format!("invoke_agent {}", s.agent),
                kind: KIND_INTERNAL,
                start: if start == u64::MAX { 0 } else { start },
                end,
                attributes: root_attributes(s, conversation),
            },
        );
        let resource = vec![
            ("service.name".to_string(), Val::Str("ctxj".into())),
            ("ctxj.agent".to_string(), Val::Str(s.agent.into())),
        ];
        Trace { resource, spans }
    }
}

fn root_attributes(s: &SessionRows, conversation: &str) -> Attributes {
    let mut a = Attrs::default();
    a.str("gen_ai.operation.name", "invoke_agent");
    a.str("gen_ai.agent.name", s.agent);
    a.str("gen_ai.conversation.id", &s.session);
    a.str("openinference.span.kind", "AGENT");
    a.str("session.id", conversation);
    a.str("ctxj.project", &s.project);
    a.str("ctxj.source", &s.source);
    if let Some(p) = &s.parent {
        a.str("ctxj.parent_session", p);
    }
    for t in &s.strategies {
        let k = |f: &str| format!("ctxj.strategy.{}.{f}", t.strategy);
        a.int(&k("requests"), t.requests);
        a.int(&k("prompt_tokens"), t.prompt_tokens);
        a.int(&k("cache_read_tokens"), t.cache_read_tokens);
        if let Some(c) = t.cost_usd {
            a.double(&k("cost_usd"), c);
        }
    }
    a.done()
}

fn spawn_attributes(sp: &Spawn, conversation: &str) -> Attributes {
    let mut a = Attrs::default();
    a.str("gen_ai.operation.name", "execute_tool");
    a.str("gen_ai.tool.name", &sp.tool);
    a.str("gen_ai.tool.call.id", &sp.call);
    a.str("openinference.span.kind", "TOOL");
    a.str("tool.name", &sp.tool);
    a.str("session.id", conversation);
    if let Some(agent) = &sp.agent {
        a.str("ctxj.subagent", agent);
    }
    a.done()
}

/// OpenInference's `llm.provider` for a `gen_ai.provider.name` (its `LLMProvider` values).
fn openinference_provider(p: &str) -> &str {
    match p {
        "gcp.gemini" | "gcp.vertex_ai" | "gcp.gen_ai" => "google",
        "aws.bedrock" => "aws",
        "azure.ai.openai" | "azure.ai.inference" => "azure",
        other => other,
    }
}

fn chat_attributes(r: &ExportRow, conversation: &str) -> Attributes {
    let prompt = r.input_tokens.saturating_add(r.cache_read_tokens).saturating_add(r.cache_write_tokens);
    let write_1h = r.cache_write_1h_tokens.min(r.cache_write_tokens);
    let mut a = Attrs::default();
    a.str("gen_ai.operation.name", "chat");
    a.str("gen_ai.conversation.id", &r.session);
    if let Some(p) = &r.provider {
        a.str("gen_ai.provider.name", p);
        a.str("gen_ai.system", p);
    }
    if let Some(m) = &r.model {
        a.str("gen_ai.request.model", m);
        a.str("gen_ai.response.model", m);
    }
    a.int("gen_ai.usage.input_tokens", prompt);
    a.int("gen_ai.usage.cache_read.input_tokens", r.cache_read_tokens);
    a.int("gen_ai.usage.cache_creation.input_tokens", r.cache_write_tokens);
    a.int("gen_ai.usage.output_tokens", r.output_tokens);
    if let Some(c) = r.cost_usd {
        a.double("gen_ai.usage.cost", c);
    }
    // OpenInference (Arize Phoenix).
    a.str("openinference.span.kind", "LLM");
    a.str("session.id", conversation);
    if let Some(p) = &r.provider {
        a.str("llm.system", openinference_provider(p));
        a.str("llm.provider", openinference_provider(p));
    }
    if let Some(m) = &r.model {
        a.str("llm.model_name", m);
    }
    a.int("llm.token_count.prompt", prompt);
    a.int("llm.token_count.completion", r.output_tokens);
    a.int("llm.token_count.total", prompt.saturating_add(r.output_tokens));
    a.int("llm.token_count.prompt_details.cache_read", r.cache_read_tokens);
    a.int("llm.token_count.prompt_details.cache_write", r.cache_write_tokens);
    if let Some(c) = r.cost_usd {
        a.double("llm.cost.total", c);
        if let Some(p) = &r.cost_parts {
            a.double("llm.cost.prompt", p.prompt());
            a.double("llm.cost.completion", p.output);
            a.double("llm.cost.prompt_details.input", p.input);
            a.double("llm.cost.prompt_details.cache_read", p.cache_read);
            a.double("llm.cost.prompt_details.cache_write", p.cache_write_5m + p.cache_write_1h);
        }
    }
    // ctxj's own.
    a.int("ctxj.cache_write_5m_tokens", r.cache_write_tokens - write_1h);
    a.int("ctxj.cache_write_1h_tokens", write_1h);
    if let Some(c) = r.cost_usd {
        a.double("ctxj.cost_usd", c);
    }
    if let Some(p) = &r.cost_parts {
        a.double("ctxj.cost.cache_write_5m_usd", p.cache_write_5m);
        a.double("ctxj.cost.cache_write_1h_usd", p.cache_write_1h);
    }
    a.str("ctxj.strategy", &r.strategy);
    a.int("ctxj.turn", r.turn);
    a.push("ctxj.compaction", Val::Bool(r.compaction));
    if let Some(b) = &r.break_cause {
        a.str("ctxj.break_cause", b);
    }
    if let Some(e) = r.prompt_tokens_estimated {
        a.int("ctxj.prompt_tokens_estimated", e);
    }
    if let Some(h) = r.simulated_hit {
        a.double("ctxj.simulated_hit", h);
    }
    // `--include-content`: OpenInference's input and output (Phoenix and Langfuse show them).
    if let Some(c) = &r.content {
        a.str("input.value", &c.input);
        a.str("input.mime_type", "text/plain");
        a.str("output.value", &c.output);
        a.str("output.mime_type", "text/plain");
        if c.cut {
            a.push("ctxj.content_cut", Val::Bool(true));
        }
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
        let v = serde_json::Value::Array(json::attributes(&a.done())).to_string();
        assert!(v.contains(&format!("\"intValue\":\"{}\"", i64::MAX)), "{v}");
        assert!(!v.contains(&u64::MAX.to_string()), "{v}");
        assert!(v.contains("ctxj.clamped_int64") && v.contains("\"stringValue\":\"big\""), "{v}");
        let mut a = Attrs::default();
        a.int("small", 5);
        assert!(!serde_json::Value::Array(json::attributes(&a.done())).to_string().contains("clamped"));
    }
}
