//! What `ctxj watch` reports as a session grows: one event per new call, and alerts — a cache
//! break (the shortfall rule of `cache::billed::shortfall`, with the causes the usage lines can
//! tell: compaction, model switch, idle past the lifetime; `ctxj cache` names the others from the
//! reconstructed requests), a compaction, a warning band crossed, the cache about to expire
//! while idle, and gone cold.

use super::compact::WARNING_BAND;
use super::session::LiveSession;
use super::snapshot::Snapshot;
use crate::cache::billed::{shortfall, BreakCause, TTL_1H, TTL_5M};
use crate::cache::model::parse_ts;
use crate::cache::prices::builtin_price;
use crate::usage::entry::{builtin_cost, Compaction, Tokens, UsageEntry};

/// A compaction no call has followed yet is reported without its after-figures this long after
/// it (a manual `/compact` waits for the user's next prompt), ms.
pub const COMPACTION_WAIT_MS: i64 = 60_000;

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

/// How call `i` of `own` (one session's own calls, in order) used the cache, and its break when it
/// is one: the shortfall rule of `cache::billed::shortfall` against what the previous call left
/// (its read + write; its whole prompt while the session has reported no cache write — a provider
/// that bills no writes, issue 28), with the causes the usage lines can tell. `None`: the call
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
    let Some(p) = own[..i].iter().rev().find(|p| p.tokens.prompt() > 0) else {
        return Some((CacheUse::Cold, None));
    };
    let expected = if first_write.is_some_and(|f| f < i) {
        p.tokens.cache_read.saturating_add(p.tokens.cache_creation)
    } else {
        p.tokens.prompt()
    };
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
    };
    Some((CacheUse::Miss, Some(brk)))
}

/// The index of the first call of `own` that reports a cache write.
pub fn first_write(own: &[&UsageEntry]) -> Option<usize> {
    own.iter().position(|x| x.tokens.cache_creation > 0)
}

/// The last cache break among `own`'s calls ([`judge_call`]), if any.
pub fn last_break(own: &[&UsageEntry], compactions: &[Compaction], ttl: i64) -> Option<Event> {
    let first = first_write(own);
    (1..own.len()).rev().find_map(|i| judge_call(own, i, compactions, ttl, first).and_then(|(_, b)| b))
}

/// What has been reported of one session.
#[derive(Debug, Clone, Default)]
pub struct Watcher {
    calls: usize,
    compactions: usize,
    band: Option<Band>,
    /// The expiry already warned about / reported cold.
    expiring: Option<String>,
    cold: Option<String>,
}

impl Watcher {
    /// A watcher that reports only what comes after `s`'s current state (`--since now`).
    pub fn after(s: &LiveSession, snap: &Snapshot) -> Watcher {
        let read = s.read();
        let main = s.main_file();
        let mut w = Watcher {
            calls: read.entries.iter().filter(|e| e.file == main).count(),
            compactions: read.compactions.len(),
            ..Watcher::default()
        };
        w.band = band(snap);
        if let Some(c) = snap.cache.as_ref().filter(|c| !c.warm) {
            w.cold = Some(c.expires_at.clone());
            w.expiring = Some(c.expires_at.clone());
        }
        w
    }

    /// The events since the last step, at `now_ms` (Unix ms).
    pub fn step(&mut self, s: &LiveSession, snap: &Snapshot, now_ms: i64) -> Vec<Event> {
        let mut out = Vec::new();
        let read = s.read();
        let main = s.main_file();
        let own: Vec<_> = read.entries.iter().filter(|e| e.file == main).collect();
        let one_hour = s.last_writes().is_some_and(|(h, all)| all > 0 && h >= all);
        let ttl = if one_hour { TTL_1H } else { TTL_5M };
        let first = first_write(&own);
        for i in self.calls..own.len() {
            let e = own[i];
            let judged = judge_call(&own, i, &read.compactions, ttl, first);
            let cache = judged.as_ref().map_or(CacheUse::Cold, |j| j.0);
            if let Some((_, Some(mut b))) = judged {
                if let Event::CacheBreak { reported_cause, .. } = &mut b {
                    let (before, after) = (i.checked_sub(1).map(|j| own[j].ts.as_str()), own.get(i + 1));
                    let r = super::reported::for_call(s.reported(), before, after.map(|e| e.ts.as_str()));
                    *reported_cause = r.map(str::to_string);
                }
                out.push(b);
            }
            out.insert(
                out.len().saturating_sub(usize::from(cache == CacheUse::Miss)),
                Event::Call {
                    call: i + 1,
                    ts: e.ts.clone(),
                    model: e.model.clone(),
                    context: e.tokens.prompt(),
                    input: e.tokens.input,
                    cache_read: e.tokens.cache_read,
                    cache_write: e.tokens.cache_creation,
                    output: e.tokens.output,
                    cost: e.cost,
                    cache,
                },
            );
        }
        if own.len() > self.calls {
            // A new call refreshes the cache: its expiry is warned about afresh.
            self.expiring = None;
            self.cold = None;
        }
        self.calls = own.len();
        // A compaction waits for the first call after it (the size after, the rebuild).
        for (k, c) in read.compactions.iter().enumerate().skip(self.compactions) {
            let after = own.iter().find(|e| e.ts > c.ts && e.tokens.prompt() > 0).copied();
            let waited = parse_ts(&c.ts).is_none_or(|t| now_ms - t >= COMPACTION_WAIT_MS);
            if after.is_none() && !waited {
                break;
            }
            let since = k.checked_sub(1).map(|j| read.compactions[j].ts.as_str());
            out.push(compaction_event(s, &read.entries, c, since, after, one_hour));
            self.compactions = k + 1;
        }
        let now = band(snap);
        if now > self.band && now > Some(Band::Normal) {
            if let (Some(b), Some(c), Some(p)) = (now, snap.context, snap.compact_at) {
                out.push(Event::Band { band: b, context: c, threshold: p.tokens });
            }
        }
        self.band = now;
        if let Some(c) = &snap.cache {
            if c.warm && c.seconds_left <= EXPIRING_SECONDS && self.expiring.as_ref() != Some(&c.expires_at) {
                self.expiring = Some(c.expires_at.clone());
                out.push(Event::Expiring { seconds_left: c.seconds_left, rewrite_cost: c.rewrite_cost });
            }
            if !c.warm && self.cold.as_ref() != Some(&c.expires_at) {
                self.cold = Some(c.expires_at.clone());
                out.push(Event::Cold { rewrite_cost: c.rewrite_cost });
            }
        }
        out
    }
}

/// The `compaction` event of `c`: its recorded size and trigger, the size after (the prompt of
/// `after`, the first call after it), the summarizer call's cost (the calls of an
/// `agent-acompact-*` file between the previous compaction, `since`, and this one) and the cache
/// rebuild (`after`'s cache writes, at one-hour writes when `one_hour`; its uncached input when
/// it wrote nothing), all priced by the `usage` read's cost rule.
fn compaction_event(
    s: &LiveSession,
    entries: &[UsageEntry],
    c: &Compaction,
    since: Option<&str>,
    after: Option<&UsageEntry>,
    one_hour: bool,
) -> Event {
    let seen = s.observed().iter().find(|o| o.ts == c.ts);
    let files = s.files();
    let summarizer = |e: &&UsageEntry| {
        let name = files.get(e.file).and_then(|p| p.file_name()).map(|n| n.to_string_lossy().into_owned());
        name.is_some_and(|n| n.starts_with("agent-acompact-"))
            && e.ts <= c.ts
            && since.is_none_or(|p| e.ts.as_str() > p)
    };
    let calls: Vec<&UsageEntry> = entries.iter().filter(summarizer).collect();
    let summary_cost = if calls.is_empty() { None } else { calls.iter().map(|e| e.cost).sum::<Option<f64>>() };
    let rebuild_cost = after.and_then(|e| {
        let t = if e.tokens.cache_creation > 0 {
            Tokens { cache_creation: e.tokens.cache_creation, ..Tokens::default() }
        } else {
            Tokens { input: e.tokens.input, ..Tokens::default() }
        };
        builtin_cost(e.model.as_deref(), &t, if one_hour { t.cache_creation } else { 0 })
    });
    Event::Compaction {
        ts: c.ts.clone(),
        pre_tokens: seen.map(|o| o.pre_tokens),
        auto: seen.map(|o| o.auto),
        post_tokens: after.map(|e| e.tokens.prompt()),
        summary_cost,
        rebuild_cost,
    }
}

/// The band of the snapshot's context.
pub fn band(s: &Snapshot) -> Option<Band> {
    let (c, p) = (s.context?, s.compact_at?.tokens);
    Some(if c >= p {
        Band::Compact
    } else if c + WARNING_BAND >= p {
        Band::Warning
    } else {
        Band::Normal
    })
}
