//! The wire types of `ctxj cache --json` (`ctxj.cache/1`) for what the library returns as typed
//! values: the session as billed with its recorded breaks ([`BilledDoc`], [`RecordedBreakDoc`])
//! and a strategy's explained breaks ([`CacheBreakDoc`]), each break with its sentence
//! ([`super::cache_words`]). Field names, order and descriptions are those of the document; the
//! library's structs may change without changing it.

use serde::Serialize;

use super::cache_words::{divergence, evidence, tolerance};
use ctxj_core::cache::billed::{Billed, BreakCause, RecordedBreak};
use ctxj_core::cache::explain::BlockRef;
use ctxj_core::cache::figures::CacheBreak;

/// The session as billed (`cache --json`: the top-level `recorded` object).
#[derive(Debug, Clone, PartialEq, Serialize, schemars::JsonSchema)]
#[serde(rename = "Billed")]
pub struct BilledDoc {
    /// Σ per-turn cost of the priced turns; `None` when no turn is priced.
    pub cost: Option<f64>,
    /// Σ cache read / Σ prompt.
    #[serde(rename = "cache_hit")]
    pub hit_rate: Option<f64>,
    pub input: Option<u64>,
    pub cache_read: Option<u64>,
    pub cache_write: Option<u64>,
    pub cache_write_1h: Option<u64>,
    pub output: Option<u64>,
    pub peak_prompt: Option<u64>,
    /// Turns carrying `usage`, and of them the ones whose model has no price (and whose log
    /// recorded no cost).
    pub turns: usize,
    pub unpriced_turns: usize,
    /// Turns billed at the cost the log recorded (pi, OpenClaw `usage.cost.total`), which wins
    /// over the price table as in `usage` and ccusage.
    pub recorded_cost_turns: usize,
    pub models: Vec<String>,
    /// The figures no turn recorded (`cache_write`, …): `null` above, never guessed.
    pub unknown: Vec<&'static str>,
    /// When a shortfall is a break, in words: `max(1,024 tokens, 2% of the expected read)`.
    pub tolerance: String,
    /// The longest idle gap (seconds) after which a call still read back what the previous call
    /// left: the provider's cache demonstrably lived that long (replays use it as the lifetime
    /// when it is longer than the model's).
    pub kept_idle_seconds: Option<f64>,
    pub breaks: Vec<RecordedBreakDoc>,
    /// Summarizer requests recorded on `compact` records (their optional `usage`), and what the
    /// priced ones cost; that cost is part of `cost` (a compaction pays for its own call).
    pub summarizer_calls: usize,
    pub summarizer_cost: Option<f64>,
}

/// A turn whose recorded cache read falls short of what the previous turn read and wrote.
#[derive(Debug, Clone, PartialEq, Serialize, schemars::JsonSchema)]
#[serde(rename = "RecordedBreak")]
pub struct RecordedBreakDoc {
    pub turn: usize,
    pub cause: BreakCause,
    /// Tokens processed again instead of read: the shortfall (expected − read).
    pub rewritten_tokens: u64,
    /// rewritten × (write price − read price) at this turn's model; `None` without a price.
    pub cost: Option<f64>,
    /// What the previous turn left in the cache (its read + write; its prompt when writes are
    /// not recorded) and what this turn read.
    pub expected_read: u64,
    pub cache_read: u64,
    /// Seconds between the previous call's record and this one's (the cache was last refreshed by
    /// the previous call).
    pub gap_seconds: Option<f64>,
    /// `prefix_change`: the first block (from 1) of the previous request not repeated.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub block: Option<usize>,
    /// No recorded change of the request explains the loss (`provider`, `ttl`, or
    /// `system_or_tools` with neither a `system` record between the calls nor a changed request):
    /// it belongs to the provider's environment, and simulations replay it at the same turn
    /// (`--provider-breaks replay`).
    pub environment: bool,
    /// One line: the evidence.
    pub detail: String,
}

/// A cache break (spec §4) explained.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, schemars::JsonSchema)]
#[serde(rename = "CacheBreak")]
pub struct CacheBreakDoc {
    pub turn: usize,
    /// First block of the previous request that this one does not repeat in place, numbered
    /// from 1 as in `ctxj show`.
    pub block: usize,
    /// That block in the previous request.
    pub was: BlockRef,
    /// The block now at that position, if any.
    pub now: Option<BlockRef>,
    /// One line: what changed.
    pub reason: String,
}

impl From<&Billed> for BilledDoc {
    fn from(b: &Billed) -> BilledDoc {
        BilledDoc {
            cost: b.cost,
            hit_rate: b.hit_rate,
            input: b.input,
            cache_read: b.cache_read,
            cache_write: b.cache_write,
            cache_write_1h: b.cache_write_1h,
            output: b.output,
            peak_prompt: b.peak_prompt,
            turns: b.turns,
            unpriced_turns: b.unpriced_turns,
            recorded_cost_turns: b.recorded_cost_turns,
            models: b.models.clone(),
            unknown: b.unknown.clone(),
            tolerance: tolerance(),
            kept_idle_seconds: b.kept_idle_seconds,
            breaks: b.breaks.iter().map(RecordedBreakDoc::from).collect(),
            summarizer_calls: b.summarizer_calls,
            summarizer_cost: b.summarizer_cost,
        }
    }
}

impl From<&RecordedBreak> for RecordedBreakDoc {
    fn from(b: &RecordedBreak) -> RecordedBreakDoc {
        RecordedBreakDoc {
            turn: b.turn,
            cause: b.cause,
            rewritten_tokens: b.rewritten_tokens,
            cost: b.cost,
            expected_read: b.expected_read,
            cache_read: b.cache_read,
            gap_seconds: b.gap_seconds,
            block: b.block,
            environment: b.environment,
            detail: evidence(&b.evidence),
        }
    }
}

impl From<&CacheBreak> for CacheBreakDoc {
    fn from(b: &CacheBreak) -> CacheBreakDoc {
        CacheBreakDoc {
            turn: b.turn,
            block: b.at.block,
            was: b.at.was.clone(),
            now: b.at.now.clone(),
            reason: divergence(&b.at),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn keys(v: serde_json::Value) -> Vec<String> {
        match v {
            serde_json::Value::Object(m) => m.keys().cloned().collect(),
            other => panic!("not an object: {other}"),
        }
    }

    /// The wire type copies [`Billed`] field by field, so a field added to the library's struct
    /// would silently never reach `ctxj.cache/1` (three fields were lost that way in an
    /// integration, caught only by the schema test). Every field the library serializes is
    /// carried by the document.
    #[test]
    fn billed_doc_carries_every_field_the_library_serializes() {
        let billed = keys(serde_json::to_value(Billed::default()).unwrap());
        let doc = keys(serde_json::to_value(BilledDoc::from(&Billed::default())).unwrap());
        let missing: Vec<_> = billed.iter().filter(|k| !doc.contains(k)).collect();
        assert!(missing.is_empty(), "fields of Billed missing from BilledDoc: {missing:?}");
        assert!(doc.contains(&"tolerance".to_string()), "the document words the tolerance");
    }
}
