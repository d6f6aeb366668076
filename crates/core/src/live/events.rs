//! What `ctxj watch` reports as a session grows: one event per new call, and alerts — a cache
//! break (the shortfall rule of `cache::billed::shortfall`, with the causes the usage lines can
//! tell: compaction, model switch, idle past the lifetime; `ctxj cache` names the others from the
//! reconstructed requests), a compaction, a warning band crossed, the cache about to expire
//! while idle, and gone cold.

use crate::cache::billed::{left_in_cache, shortfall, BreakCause};
use crate::cache::model::parse_ts;
use crate::cache::prices::builtin_price;
use crate::usage::entry::{Compaction, UsageEntry};

/// Seconds before expiry when an idle session is warned.
pub const EXPIRING_SECONDS: i64 = 60;

/// How a call used the cache.
#[derive(Debug, Clone, Copy, PartialEq, Eq, serde::Serialize, serde::Deserialize, schemars::JsonSchema)]
#[serde(rename_all = "snake_case")]
pub enum CacheUse {
    /// Read back what the previous call left (within the tolerance).
    Hit,
    /// A break (see the `cache_break` event).
    Miss,
    /// The first call, or nothing cached before.
    Cold,
}

/// A band of the context against the compaction point.
#[derive(
    Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, serde::Serialize, serde::Deserialize, schemars::JsonSchema,
)]
#[serde(rename_all = "snake_case")]
pub enum Band {
    Normal,
    /// Within Claude Code's warning band (20,000 tokens below the point).
    Warning,
    /// At or past the point.
    Compact,
}

/// One event of `ctxj watch` (`--format ndjson`: one object per line, `event` says which).
#[derive(Debug, Clone, PartialEq, serde::Serialize, schemars::JsonSchema)]
#[serde(tag = "event", rename_all = "snake_case")]
pub enum Event {
    Call {
        /// 1-based, among the session's own calls.
        call: usize,
        ts: String,
        model: Option<String>,
        context: u64,
        input: u64,
        cache_read: u64,
        cache_write: u64,
        output: u64,
        cost: Option<f64>,
        cache: CacheUse,
    },
    CacheBreak {
        call: usize,
        /// `ttl`, `compaction`, `model_switch`; `None`: nothing in the usage lines explains it
        /// (`ctxj cache` tells a prefix change, a system/tools change or the provider apart).
        cause: Option<BreakCause>,
        lost_tokens: u64,
        /// lost × (write − read price), $.
        cost: Option<f64>,
        gap_seconds: Option<f64>,
        /// The cause the provider reported on the call's lines
        /// (`message.diagnostics.cache_miss_reason`); left out when none.
        #[serde(default, skip_serializing_if = "Option::is_none")]
        reported_cause: Option<String>,
        /// Whether `reported_cause` agrees with `cause` (`reported::agrees`); left out when
        /// none was reported or its name is not one ctxj knows.
        #[serde(default, skip_serializing_if = "Option::is_none")]
        reported_agrees: Option<bool>,
    },
    /// Reported once the first call after it is read (or a minute after it when none came).
    Compaction {
        ts: String,
        pre_tokens: Option<u64>,
        auto: Option<bool>,
        /// The context after: the prompt of the session's first call after the compaction.
        post_tokens: Option<u64>,
        /// The summarizer call's cost, $, when the transcript records the call (Claude Code
        /// 2.1.x: `subagents/agent-acompact-*.jsonl`), priced as `usage` prices it.
        summary_cost: Option<f64>,
        /// Re-writing the new prefix into the cache: the first call after's cache writes (its
        /// uncached input when the agent records no writes) at the model's price, $.
        rebuild_cost: Option<f64>,
    },
    Band {
        band: Band,
        context: u64,
        threshold: u64,
    },
    Expiring {
        seconds_left: i64,
        rewrite_cost: Option<f64>,
    },
    Cold {
        rewrite_cost: Option<f64>,
    },
}

impl Event {
    /// The event with its call number moved on by `by` (a call judged among a later part of the
    /// session's calls).
    pub fn shifted(mut self, by: usize) -> Event {
        if let Event::Call { call, .. } | Event::CacheBreak { call, .. } = &mut self {
            *call += by;
        }
        self
    }
}

/// How call `i` of `own` (one session's own calls, in order) used the cache, and its break when it
/// is one: the shortfall rule of `cache::billed::shortfall` against what the previous call left
/// (`cache::billed::left_in_cache`, the rule `ctxj cache` uses: its read + write; its whole
/// prompt while the session has reported no cache write — a provider that bills no writes,
/// issue 28 — unless below the model's minimum cacheable prompt), with the causes the usage
/// lines can tell. `None`: the call
/// has no prompt (nothing to judge). The one break rule of `watch` and the status line.
/// `first_write`: the index of the first of `own` to report a cache write ([`first_write`]).
pub fn judge_call(
    own: &[&UsageEntry],
    i: usize,
    compactions: &[Compaction],
    ttl: i64,
    first_write: Option<usize>,
) -> Option<(CacheUse, Option<Event>)> {
    let e = own[i];
    if e.tokens.prompt() == 0 {
        return None;
    }
    let Some(j) = own[..i].iter().rposition(|p| p.tokens.prompt() > 0) else {
        return Some((CacheUse::Cold, None));
    };
    let p = own[j];
    let t = &p.tokens;
    let writes_seen = first_write.is_some_and(|f| f <= j);
    let expected = left_in_cache(t.prompt(), t.cache_read, t.cache_creation, p.model.as_deref(), writes_seen);
    let Some(lost) = shortfall(expected, e.tokens.cache_read) else {
        return Some((CacheUse::Hit, None));
    };
    let gap = parse_ts(&p.ts).zip(parse_ts(&e.ts)).map(|(a, b)| (b - a).max(0) as f64 / 1000.0);
    let compacted = compactions.iter().any(|c| c.ts > p.ts && c.ts <= e.ts);
    let cause = if compacted {
        Some(BreakCause::Compaction)
    } else if p.model.is_some() && e.model.is_some() && p.model != e.model {
        Some(BreakCause::ModelSwitch)
    } else if gap.is_some_and(|g| g > ttl as f64) {
        Some(BreakCause::Ttl)
    } else {
        None
    };
    let price = e.model.as_deref().and_then(|m| builtin_price(m).or_else(|| builtin_price(m.rsplit('/').next()?)));
    let rate = |p: &crate::cache::prices::Price| {
        if e.tokens.cache_creation > 0 {
            p.write_rate()
        } else {
            p.input
        }
    };
    let brk = Event::CacheBreak {
        call: i + 1,
        cause,
        lost_tokens: lost,
        cost: price.map(|p| lost as f64 * (rate(&p) - p.cached_rate()).max(0.0) / 1e6),
        gap_seconds: gap,
        reported_cause: None,
        reported_agrees: None,
    };
    Some((CacheUse::Miss, Some(brk)))
}

/// The index of the first call of `own` that reports a cache write.
pub fn first_write(own: &[&UsageEntry]) -> Option<usize> {
    own.iter().position(|x| x.tokens.cache_creation > 0)
}

/// The last cache break among `own`'s calls ([`judge_call`]) after the first (whose previous
/// call is not in `own`), if any; `first`: as [`judge_call`] takes it.
pub fn last_break(own: &[&UsageEntry], compactions: &[Compaction], ttl: i64, first: Option<usize>) -> Option<Event> {
    (1..own.len()).rev().find_map(|i| judge_call(own, i, compactions, ttl, first).and_then(|(_, b)| b))
}
