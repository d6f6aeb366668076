//! Typed journal records (spec `journal-v1.md` §2).
//!
//! Texts are `Arc<str>` so that projections, which copy blocks turn after turn, share them with
//! the records instead of duplicating tool output. JSON values taken verbatim from the journal
//! (`args`, `tools`) are `serde_json::Value`s built with `preserve_order` and
//! `arbitrary_precision`, so their canonical bytes keep the journal's key order and number text.
//! Mirror drafts, which hold a whole conversation each, stay raw JSON text ([`MirrorDraft`]) until
//! a replay or a check parses one.

use std::sync::Arc;

use serde::{Deserialize, Serialize};
use serde_json::value::RawValue;
use serde_json::Value;

/// Shared, immutable text.
pub type Text = Arc<str>;

/// One record of the journal, with where it stands in the file.
#[derive(Debug, Clone)]
pub struct Record {
    /// The record's `rev` field, or its ordinal (from 1) when the field is missing.
    pub rev: u64,
    /// Whether `rev` was present in the record.
    pub rev_recorded: bool,
    /// The `ts` field (empty when absent).
    pub ts: Text,
    /// Physical line number, from 1 (0 for records made in memory, e.g. by an importer).
    pub line: usize,
    /// Byte offset of the line in the file.
    pub offset: u64,
    pub body: Body,
}

impl Record {
    /// The `kind` string of the record.
    pub fn kind(&self) -> &str {
        self.body.kind()
    }
}

/// The kind-specific part of a record.
#[derive(Debug, Clone)]
pub enum Body {
    Session(SessionRec),
    System(SystemRec),
    Notice(NoticeRec),
    User(UserRec),
    Assistant(AssistantRec),
    Result(ResultRec),
    Elide(ElideRec),
    Clear(ClearRec),
    Mirror(MirrorRec),
    Compact(CompactRec),
    Model(ModelRec),
    /// A judged result (journal-v1 §2 `outcome`): not part of the projection.
    Outcome(OutcomeRec),
    /// A kind this version does not know: kept, listed by `log`, ignored by the projection.
    Unknown {
        kind: String,
    },
}

impl Body {
    pub fn kind(&self) -> &str {
        match self {
            Body::Session(_) => "session",
            Body::System(_) => "system",
            Body::Notice(_) => "notice",
            Body::User(_) => "user",
            Body::Assistant(_) => "assistant",
            Body::Result(_) => "result",
            Body::Elide(_) => "elide",
            Body::Clear(_) => "clear",
            Body::Mirror(_) => "mirror",
            Body::Compact(_) => "compact",
            Body::Model(_) => "model",
            Body::Outcome(_) => "outcome",
            Body::Unknown { kind } => kind,
        }
    }

    /// Applies a `session` or `model` record to the settings in force (spec §2, §6); other kinds
    /// leave them as they are. The one place both the recorded projection and replays track them.
    pub fn update_settings(&self, model: &mut Option<String>, ctx: &mut CtxSettings) {
        match self {
            Body::Session(s) => {
                *model = s.model.clone();
                *ctx = s.ctx.clone().unwrap_or_default();
            }
            Body::Model(m) => {
                *model = Some(m.model.clone());
                if let Some(c) = &m.ctx {
                    *ctx = c.clone();
                }
            }
            _ => {}
        }
    }

    /// Parses the body of a record whose `kind` is `kind` from the whole record object.
    pub fn from_value(kind: &str, value: Value) -> Result<Body, serde_json::Error> {
        Ok(match kind {
            "session" => Body::Session(serde_json::from_value(value)?),
            "system" => Body::System(serde_json::from_value(value)?),
            "notice" => Body::Notice(serde_json::from_value(value)?),
            "user" => Body::User(serde_json::from_value(value)?),
            "assistant" => Body::Assistant(serde_json::from_value(value)?),
            "result" => Body::Result(serde_json::from_value(value)?),
            "elide" => Body::Elide(serde_json::from_value(value)?),
            "clear" => Body::Clear(serde_json::from_value(value)?),
            "mirror" => Body::Mirror(serde_json::from_value(value)?),
            "compact" => Body::Compact(serde_json::from_value(value)?),
            "model" => Body::Model(serde_json::from_value(value)?),
            "outcome" => Body::Outcome(serde_json::from_value(value)?),
            other => Body::Unknown { kind: other.to_string() },
        })
    }
}

impl Body {
    /// Parses the body of a record of kind `kind` straight from the line's JSON text, without
    /// an intermediate `Value` (the reader's fast path; it falls back to [`Body::from_value`] on
    /// any error so that messages stay the same).
    pub(crate) fn from_json_str(kind: &str, json: &str) -> Result<Body, serde_json::Error> {
        fn de<T: serde::de::DeserializeOwned>(s: &str) -> Result<T, serde_json::Error> {
            // The recursion limit stays on: the caller's slow path handles deeper lines.
            let mut d = serde_json::Deserializer::from_str(s);
            let v = T::deserialize(&mut d)?;
            d.end()?;
            Ok(v)
        }
        Ok(match kind {
            "session" => Body::Session(de(json)?),
            "system" => Body::System(de(json)?),
            "notice" => Body::Notice(de(json)?),
            "user" => Body::User(de(json)?),
            "assistant" => Body::Assistant(de(json)?),
            "result" => Body::Result(de(json)?),
            "elide" => Body::Elide(de(json)?),
            "clear" => Body::Clear(de(json)?),
            "mirror" => Body::Mirror(de(json)?),
            "compact" => Body::Compact(de(json)?),
            "model" => Body::Model(de(json)?),
            "outcome" => Body::Outcome(de(json)?),
            other => Body::Unknown { kind: other.to_string() },
        })
    }
}

/// Context settings in tokens (spec §6). Every field is optional in the journal.
#[derive(Debug, Clone, Default, Deserialize, Serialize, PartialEq, Eq)]
#[serde(default)]
pub struct CtxSettings {
    #[serde(skip_serializing_if = "Option::is_none")]
    pub ctx_window: Option<u64>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub context_budget: Option<u64>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub context_reserve: Option<u64>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub context_target: Option<u64>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub keep_results: Option<u64>,
}

#[derive(Debug, Clone, Deserialize, Serialize)]
pub struct SessionRec {
    pub id: String,
    #[serde(default)]
    #[serde(skip_serializing_if = "Option::is_none")]
    pub model: Option<String>,
    #[serde(default)]
    #[serde(skip_serializing_if = "Option::is_none")]
    pub harness: Option<String>,
    #[serde(default)]
    #[serde(skip_serializing_if = "Option::is_none")]
    pub encoding: Option<String>,
    #[serde(default)]
    #[serde(skip_serializing_if = "Option::is_none")]
    pub ctx: Option<CtxSettings>,
}

#[derive(Debug, Clone, Deserialize, Serialize)]
pub struct SystemRec {
    #[serde(deserialize_with = "text")]
    pub text: Text,
    /// Tool schemas, kept verbatim; `None` when the field is absent.
    #[serde(default, deserialize_with = "present")]
    #[serde(skip_serializing_if = "Option::is_none")]
    pub tools: Option<Arc<Value>>,
}

#[derive(Debug, Clone, Deserialize, Serialize)]
pub struct NoticeRec {
    pub id: String,
    #[serde(deserialize_with = "text")]
    pub text: Text,
    #[serde(default)]
    #[serde(skip_serializing_if = "Option::is_none")]
    pub topic: Option<String>,
}

#[derive(Debug, Clone, Deserialize, Serialize)]
pub struct AttachmentRef {
    pub id: String,
    pub path: String,
    #[serde(default)]
    pub bytes: u64,
    #[serde(default = "empty_text", deserialize_with = "text")]
    pub preview: Text,
}

#[derive(Debug, Clone, Deserialize, Serialize)]
pub struct UserRec {
    pub id: String,
    #[serde(deserialize_with = "text")]
    pub text: Text,
    #[serde(default)]
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub attachments: Vec<AttachmentRef>,
}

/// A tool call inside an `assistant` record.
#[derive(Debug, Clone, Deserialize, Serialize, PartialEq)]
pub struct Call {
    pub id: String,
    pub tool: String,
    pub args: Arc<Value>,
}

/// Provider-reported usage of one LLM call.
#[derive(Debug, Clone, Default, Deserialize, Serialize, PartialEq)]
#[serde(default)]
pub struct Usage {
    #[serde(skip_serializing_if = "Option::is_none")]
    pub prompt_tokens: Option<u64>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub cached_tokens: Option<u64>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub completion_tokens: Option<u64>,
    /// Extension (written by `ctxj import`, optional): the part of `prompt_tokens` this call
    /// wrote to the prompt cache (Anthropic `cache_creation_input_tokens`, pi `cacheWrite`).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub cache_write_tokens: Option<u64>,
    /// Extension (optional): of `cache_write_tokens`, those written with the one-hour lifetime
    /// (Anthropic `cache_creation.ephemeral_1h_input_tokens`).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub cache_write_1h_tokens: Option<u64>,
    /// Extension (written by `ctxj import`, optional): what the harness recorded this call cost,
    /// USD (pi and OpenClaw `usage.cost.total`). "As billed" uses it for a call whose model has
    /// no price.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub cost_usd: Option<f64>,
    /// Extension (written by `ctxj import`, optional): the hosted (server-side) tool calls this
    /// response ran (a Codex rollout's `web_search_call` items). The provider samples the model
    /// once per step of such a response and bills every step's input, search results included,
    /// so `prompt_tokens` is more than this request held: not a calibration sample, and the
    /// excess is billed as recorded in every replay.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub server_tool_calls: Option<u64>,
    /// Extension (written by `ctxj import`, optional): the thinking blocks (`thinking`,
    /// `redacted_thinking`) the response held, which the journal does not record (Claude Code
    /// 2.1.x writes them empty, with a signature; pi keeps a summary). The provider bills them
    /// in `completion_tokens` and, while the agent sends them back, as input of later requests:
    /// their size is modelled from this call's usage (docs/tokens-and-cache.md, "Unrecorded
    /// thinking").
    #[serde(skip_serializing_if = "Option::is_none")]
    pub thinking_blocks: Option<u64>,
    /// Extension (written by `ctxj import`, optional): of `completion_tokens`, the reasoning this
    /// response produced that the harness keeps in its history as an opaque item and sends back
    /// in its later requests (a Codex rollout's `reasoning` item; its size is the response's
    /// `reasoning_output_tokens`). The provider counts it as input of those requests while it
    /// keeps it in context: until the turn's final answer for models that drop earlier turns'
    /// reasoning, until a compaction otherwise (`strategy::reasoning`).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub reasoning_tokens: Option<u64>,
}

#[derive(Debug, Clone, Deserialize, Serialize)]
pub struct AssistantRec {
    pub id: String,
    #[serde(default = "empty_text", deserialize_with = "text_or_null")]
    pub text: Text,
    #[serde(default)]
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub calls: Vec<Call>,
    #[serde(default)]
    #[serde(skip_serializing_if = "Option::is_none")]
    pub model: Option<String>,
    #[serde(default)]
    #[serde(skip_serializing_if = "Option::is_none")]
    pub usage: Option<Usage>,
    #[serde(default)]
    #[serde(skip_serializing_if = "Option::is_none")]
    pub prompt_sha256: Option<String>,
}

#[derive(Debug, Clone, Deserialize, Serialize)]
pub struct ResultRec {
    pub call: String,
    pub tool: String,
    #[serde(deserialize_with = "text")]
    pub text: Text,
    #[serde(default)]
    pub bytes: u64,
    #[serde(default)]
    #[serde(skip_serializing_if = "Option::is_none")]
    pub is_error: Option<bool>,
    #[serde(default)]
    #[serde(skip_serializing_if = "Option::is_none")]
    pub spill: Option<String>,
}

impl ResultRec {
    /// A result whose `text` is the whole output (no spill): `bytes` is the text's UTF-8 length.
    /// Importers build their results this way.
    pub fn whole(call: String, tool: String, text: String, is_error: Option<bool>) -> ResultRec {
        ResultRec { call, tool, bytes: text.len() as u64, text: Text::from(text), is_error, spill: None }
    }
}

#[derive(Debug, Clone, Deserialize, Serialize)]
pub struct ElideRec {
    #[serde(default)]
    #[serde(skip_serializing_if = "Option::is_none")]
    pub by: Option<String>,
    pub calls: Vec<String>,
    #[serde(default)]
    #[serde(skip_serializing_if = "Option::is_none")]
    pub estimate_before: Option<f64>,
    #[serde(default)]
    #[serde(skip_serializing_if = "Option::is_none")]
    pub estimate_after: Option<f64>,
    #[serde(default)]
    #[serde(skip_serializing_if = "Option::is_none")]
    pub budget: Option<u64>,
    #[serde(default)]
    #[serde(skip_serializing_if = "Option::is_none")]
    pub target: Option<u64>,
    #[serde(default)]
    #[serde(skip_serializing_if = "Option::is_none")]
    pub keep_results: Option<u64>,
}

/// The arguments of a `ctx clear` action as sent by the model.
#[derive(Debug, Clone, Default, Deserialize, Serialize, PartialEq, Eq)]
#[serde(default)]
pub struct ClearRequest {
    #[serde(skip_serializing_if = "Option::is_none")]
    pub call_ids: Option<Vec<String>>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub before: Option<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub keep_last: Option<u64>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub tool: Option<String>,
}

#[derive(Debug, Clone, Deserialize, Serialize)]
pub struct ClearRec {
    #[serde(default)]
    pub request: ClearRequest,
    #[serde(default)]
    pub cleared: Vec<String>,
    #[serde(default)]
    #[serde(skip_serializing_if = "Option::is_none")]
    pub message: Option<String>,
}

#[derive(Debug, Clone, Deserialize, Serialize)]
pub struct MirrorRec {
    pub mirror_rev: u64,
    pub base_rev: u64,
    pub status: String,
    #[serde(default)]
    #[serde(skip_serializing_if = "Option::is_none")]
    pub reason: Option<String>,
    /// The draft, kept as the journal's JSON text: it is parsed when applied or validated, so
    /// that a malformed draft is a finding rather than an unreadable journal.
    #[serde(default)]
    pub draft: MirrorDraft,
    #[serde(default)]
    pub service_calls: Vec<String>,
}

impl MirrorRec {
    pub fn accepted(&self) -> bool {
        self.status == "accepted"
    }
}

/// A mirror draft as the journal wrote it: raw JSON text (validated JSON), shared.
///
/// Every draft holds a whole conversation, so a journal with thousands of mirror records is mostly
/// drafts; kept as parsed `Value` trees they took several times the journal's size in memory
/// (issue 20: 2.4 GiB for a 256 MiB journal). Records keep the text; [`MirrorDraft::parse`] builds
/// the tree when a replay or a check needs it, and the caller drops it afterwards.
#[derive(Debug, Clone, Serialize)]
#[serde(transparent)]
pub struct MirrorDraft(Arc<RawValue>);

impl MirrorDraft {
    /// The draft of a `Value` (records made in memory, and the reader's number-restoring path).
    pub fn from_value(v: &Value) -> MirrorDraft {
        MirrorDraft(Arc::from(serde_json::value::to_raw_value(v).expect("serializing a Value cannot fail")))
    }

    /// The JSON text as written in the journal.
    pub fn json(&self) -> &str {
        self.0.get()
    }

    /// The JSON text when serde_json parses it without rewriting a number literal (nearly every
    /// draft; see `numbers`), so it can be deserialized straight into typed values.
    pub fn plain_json(&self) -> Option<&str> {
        (!super::numbers::needs_restore(self.json().as_bytes())).then(|| self.json())
    }

    /// The draft as a `Value`, with number literals exactly as written (spec §4), under the same
    /// depth and size limits as a journal line.
    pub fn parse(&self) -> Result<Value, String> {
        super::json::parse_json(self.json().as_bytes()).map_err(|e| e.to_string())
    }
}

/// A record without `draft` has the draft `null` (which no replay can use).
impl Default for MirrorDraft {
    fn default() -> MirrorDraft {
        MirrorDraft::from_value(&Value::Null)
    }
}

impl<'de> Deserialize<'de> for MirrorDraft {
    fn deserialize<D: serde::Deserializer<'de>>(d: D) -> Result<MirrorDraft, D::Error> {
        Box::<RawValue>::deserialize(d).map(|b| MirrorDraft(Arc::from(b)))
    }
}

#[derive(Debug, Clone, Deserialize, Serialize)]
pub struct CompactRec {
    #[serde(default)]
    #[serde(skip_serializing_if = "Option::is_none")]
    pub trigger: Option<String>,
    #[serde(default)]
    #[serde(skip_serializing_if = "Option::is_none")]
    pub instruction: Option<String>,
    #[serde(deserialize_with = "text")]
    pub summary: Text,
    #[serde(default)]
    #[serde(skip_serializing_if = "Option::is_none")]
    pub first_kept: Option<u64>,
    #[serde(default)]
    #[serde(skip_serializing_if = "Option::is_none")]
    pub kept: Option<Vec<String>>,
    #[serde(default)]
    #[serde(skip_serializing_if = "Option::is_none")]
    pub mode: Option<String>,
    #[serde(default)]
    #[serde(skip_serializing_if = "Option::is_none")]
    pub fallback: Option<bool>,
    #[serde(default)]
    #[serde(skip_serializing_if = "Option::is_none", serialize_with = "integral_or_float")]
    pub tokens_before: Option<f64>,
    #[serde(default)]
    #[serde(skip_serializing_if = "Option::is_none", serialize_with = "integral_or_float")]
    pub tokens_after: Option<f64>,
    /// Extension (optional): what the provider billed for the summarizer request that wrote
    /// `summary`, in the form of an assistant record's `usage`. Priced like a turn by
    /// `cache::billed`, so a compaction pays for its own call (issue 30).
    #[serde(default)]
    #[serde(skip_serializing_if = "Option::is_none")]
    pub usage: Option<Usage>,
}

impl CompactRec {
    /// `chain` appends the summary after earlier ones; anything else rotates (the default).
    pub fn chains(&self) -> bool {
        self.mode.as_deref() == Some("chain")
    }
}

#[derive(Debug, Clone, Deserialize, Serialize)]
pub struct ModelRec {
    pub model: String,
    #[serde(default)]
    #[serde(skip_serializing_if = "Option::is_none")]
    pub ctx: Option<CtxSettings>,
}

/// `outcome` (journal-v1 §2, addition of 2026-12): whether the run passed the named check,
/// written after the turn it judges.
#[derive(Debug, Clone, Deserialize, Serialize)]
pub struct OutcomeRec {
    pub passed: bool,
    pub check: String,
    #[serde(default)]
    #[serde(skip_serializing_if = "Option::is_none")]
    pub detail: Option<String>,
}

/// Token estimates are written as integers when integral (`170`, not `170.0`).
fn integral_or_float<S: serde::Serializer>(v: &Option<f64>, s: S) -> Result<S::Ok, S::Error> {
    match *v {
        Some(f) if f.fract() == 0.0 && (0.0..1e18).contains(&f) => s.serialize_u64(f as u64),
        Some(f) => s.serialize_f64(f),
        None => s.serialize_none(),
    }
}

/// A body serialises as its record's fields (without `kind`, which [`Record`]'s writer puts
/// first); an unknown kind has none.
impl Serialize for Body {
    fn serialize<S: serde::Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        match self {
            Body::Session(r) => r.serialize(s),
            Body::System(r) => r.serialize(s),
            Body::Notice(r) => r.serialize(s),
            Body::User(r) => r.serialize(s),
            Body::Assistant(r) => r.serialize(s),
            Body::Result(r) => r.serialize(s),
            Body::Elide(r) => r.serialize(s),
            Body::Clear(r) => r.serialize(s),
            Body::Mirror(r) => r.serialize(s),
            Body::Compact(r) => r.serialize(s),
            Body::Model(r) => r.serialize(s),
            Body::Outcome(r) => r.serialize(s),
            Body::Unknown { .. } => serde::ser::SerializeMap::end(s.serialize_map(Some(0))?),
        }
    }
}

fn empty_text() -> Text {
    Arc::from("")
}

/// Builds a [`Text`] with one copy from the parser's string (serde's own `Arc<str>` goes through
/// a `String` and a `Box<str>` first). `null` gives the empty text when `or_null`.
struct TextVisitor {
    or_null: bool,
}

impl<'de> serde::de::Visitor<'de> for TextVisitor {
    type Value = Text;
    fn expecting(&self, f: &mut std::fmt::Formatter) -> std::fmt::Result {
        f.write_str("a string")
    }
    fn visit_str<E: serde::de::Error>(self, v: &str) -> Result<Text, E> {
        Ok(Arc::from(v))
    }
    fn visit_unit<E: serde::de::Error>(self) -> Result<Text, E> {
        if self.or_null {
            Ok(empty_text())
        } else {
            Err(E::invalid_type(serde::de::Unexpected::Unit, &self))
        }
    }
    fn visit_none<E: serde::de::Error>(self) -> Result<Text, E> {
        self.visit_unit()
    }
    fn visit_some<D: serde::Deserializer<'de>>(self, d: D) -> Result<Text, D::Error> {
        d.deserialize_str(TextVisitor { or_null: false })
    }
}

fn text<'de, D: serde::Deserializer<'de>>(d: D) -> Result<Text, D::Error> {
    d.deserialize_str(TextVisitor { or_null: false })
}

fn text_or_null<'de, D: serde::Deserializer<'de>>(d: D) -> Result<Text, D::Error> {
    d.deserialize_option(TextVisitor { or_null: true })
}

/// `Some(value)` whenever the field is present, even when it is `null`.
fn present<'de, D: serde::Deserializer<'de>>(d: D) -> Result<Option<Arc<Value>>, D::Error> {
    Ok(Some(Arc::new(Value::deserialize(d)?)))
}
