//! The row of `ctxj export` (`"schema": "ctxj.export/1"`; JSON Schema in
//! `docs/schema/ctxj.export-1.json`, generated with every other schema by `render::schema`, Spark DDL in `docs/fleet.md`).

use serde::Serialize;

use crate::cache::CacheModel;

/// The schema name every row carries.
pub const SCHEMA: &str = "ctxj.export/1";

/// One request: recorded (what the provider billed) or simulated (another strategy's replay).
///
/// Token fields are the provider's split: `input_tokens` is the uncached part, so the prompt is
/// input + cache read + cache write. Recorded rows carry provider-reported figures; simulated rows
/// carry raw tiktoken estimates (calibrated for imported sessions), like `ctxj cache`.
#[derive(Debug, Clone, PartialEq, Serialize, schemars::JsonSchema)]
pub struct ExportRow {
    /// Always `ctxj.export/1`.
    pub schema: &'static str,
    /// The session: the transcript's id (a Claude Code subagent file: its own `agent-…` id).
    pub session: String,
    /// `claude-code`, `codex` or `pi`.
    pub agent: &'static str,
    /// The agent's project folder (Claude Code, pi) or date folder (Codex).
    pub project: String,
    /// The transcript file read.
    pub source: String,
    /// For a side session (a Claude Code subagent or compaction call): the session it ran in.
    pub parent_session: Option<String>,
    /// The request's number in its session (from 1; per strategy).
    pub turn: u64,
    /// RFC 3339, as the transcript wrote it.
    pub timestamp: Option<String>,
    pub model: Option<String>,
    /// OpenTelemetry `gen_ai.provider.name`: `anthropic`, `openai`, `gcp.gemini`, or a pi
    /// `provider/model` prefix.
    pub provider: Option<String>,
    /// `recorded`, or the strategy simulated.
    pub strategy: String,
    /// The provider's prompt tokens (input + cache read + cache write); recorded rows only.
    pub prompt_tokens_recorded: Option<u64>,
    /// The reconstructed (or replayed) request's estimated prompt tokens, when the call maps to
    /// a reconstructed turn.
    pub prompt_tokens_estimated: Option<u64>,
    pub input_tokens: u64,
    pub cache_read_tokens: u64,
    pub cache_write_tokens: u64,
    pub output_tokens: u64,
    /// USD, each call at its own model; `null` for a model without a price.
    pub cost_usd: Option<f64>,
    /// Recorded rows with a break: what re-writing the tokens the cache lost cost beyond reading
    /// them (`ctxj cache`'s recorded break cost); `null` otherwise or without a price.
    pub break_cost_usd: Option<f64>,
    /// The cache model's hit rate for this request (cached / prompt of the replay).
    pub simulated_hit: Option<f64>,
    /// Recorded rows: the cause of a recorded cache break at this call (`ttl`, `compaction`,
    /// `model_switch`, `prefix_change`, `system_or_tools`, `provider`); simulated rows:
    /// `prefix_change` where the replay rewrote the previous request.
    pub break_cause: Option<String>,
    /// A compaction happened since the previous request.
    pub compaction: bool,
    /// When the request was sent, as far as the transcript tells: the time of the record before
    /// the response (the user's prompt or the last tool result). Recorded rows only; not a
    /// column of `ctxj.export/1` (the OTLP spans' start time).
    #[serde(skip)]
    pub start_timestamp: Option<String>,
    /// Of `cache_write_tokens`, those written with the one-hour lifetime (Claude Code records
    /// the split); not a column of `ctxj.export/1` (the OTLP spans' cache-write split).
    #[serde(skip)]
    pub cache_write_1h_tokens: u64,
    /// `cost_usd` per kind of token, when the call was priced at ctxj's built-in price (not for
    /// a cost the transcript recorded); not a column of `ctxj.export/1`.
    #[serde(skip)]
    pub cost_parts: Option<crate::usage::entry::CostParts>,
    /// The call's input and output text, redacted and bounded, with `--include-content` only
    /// (recorded rows joined to a reconstructed turn); not a column of `ctxj.export/1` (the
    /// OTLP chat spans' `input.value`/`output.value`).
    #[serde(skip)]
    pub content: Option<super::content::Content>,
}

/// The `gen_ai.provider.name` of a model slug.
pub fn provider(model: &str) -> Option<String> {
    if let Some((vendor, _)) = model.split_once('/') {
        return Some(vendor.to_ascii_lowercase());
    }
    match CacheModel::for_slug(model) {
        CacheModel::Anthropic => Some("anthropic".into()),
        CacheModel::OpenAi => Some("openai".into()),
        CacheModel::Gemini => Some("gcp.gemini".into()),
        CacheModel::Ideal => None,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn providers_follow_the_slug() {
        assert_eq!(provider("claude-opus-4-6").as_deref(), Some("anthropic"));
        assert_eq!(provider("gpt-5.3-codex").as_deref(), Some("openai"));
        assert_eq!(provider("gemini-2.5-pro").as_deref(), Some("gcp.gemini"));
        assert_eq!(provider("anthropic/claude-sonnet-4-5").as_deref(), Some("anthropic"));
        assert_eq!(provider("llama-3"), None);
    }
}
