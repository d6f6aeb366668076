//! The live figures of a session at a moment: context against the compaction point, the calls
//! left at the recent growth, the cache's lifetime and what a cold re-write costs, and dollars
//! (the session as `usage` bills it, the last call, the next one). Figures the transcript does
//! not give stay `None`: shown hidden, never as 0.

use super::compact::{self, Observed, Overrides, Point};
use super::session::LiveSession;
use super::tally::View;
use crate::cache::billed::{TTL_1H, TTL_5M};
use crate::cache::model::parse_ts;
use crate::cache::prices::{builtin_price, Price};
use crate::usage::entry::UsageEntry;

/// Weight of the newest growth in the moving average of the context growth per call (cctop's
/// α = 1/5).
pub const GROWTH_ALPHA: f64 = 0.2;

/// The cache as the last call left it.
#[derive(Debug, Clone, PartialEq, serde::Serialize, serde::Deserialize, schemars::JsonSchema)]
pub struct CacheState {
    /// The lifetime of what the last call wrote: 3,600 when all its writes were one-hour ones.
    pub ttl_seconds: i64,
    /// The last call's time + the lifetime (RFC 3339, UTC).
    pub expires_at: String,
    /// Seconds left before it expires (negative: gone cold that long ago).
    pub seconds_left: i64,
    pub warm: bool,
    /// Writing the current context to the cache again (write − read price), $.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub rewrite_cost: Option<f64>,
}

/// A session's live figures.
#[derive(Debug, Clone, PartialEq, serde::Serialize, serde::Deserialize, schemars::JsonSchema)]
pub struct Snapshot {
    pub agent: String,
    /// The followed file.
    pub path: String,
    pub model: Option<String>,
    /// Calls `usage` counts (subagents' included).
    pub calls: usize,
    pub compactions: usize,
    /// The last call's prompt (input + cache writes + cache reads) in the session's own file.
    pub context: Option<u64>,
    /// The model's context window and the context's share of it (%).
    pub window: Option<u64>,
    pub window_pct: Option<f64>,
    /// Where the harness compacts, and the context's share of that (%).
    pub compact_at: Option<Point>,
    pub compact_pct: Option<f64>,
    /// Moving average of the context's growth per call (tokens).
    pub growth_per_call: Option<f64>,
    /// Calls left before the compaction point at that growth.
    pub calls_to_compact: Option<u64>,
    pub cache: Option<CacheState>,
    /// The session as `usage` bills it, $.
    pub cost: Option<f64>,
    pub last_call_cost: Option<f64>,
    /// The next call at the current context: read from cache when warm (written again when
    /// cold), plus the recent growth written and the last output, $.
    pub next_call_cost: Option<f64>,
    pub last_call_at: Option<String>,
    pub last_compaction: Option<Observed>,
    /// The session's last cache break (a `cache_break` event of `watch`, the same rule), if any.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub last_break: Option<LastBreak>,
}

/// The last cache break of a session, as the status line shows it.
#[derive(Debug, Clone, PartialEq, serde::Serialize, serde::Deserialize, schemars::JsonSchema)]
pub struct LastBreak {
    /// 1-based, among the session's own calls.
    pub call: usize,
    /// `ttl`, `compaction`, `model_switch`; `None`: nothing in the usage lines explains it.
    pub cause: Option<crate::cache::billed::BreakCause>,
    pub lost_tokens: u64,
    /// lost × (write − read price), $.
    pub cost: Option<f64>,
    /// The cause Claude Code or the provider reported: the status-line input's
    /// `prompt_cache.last_miss_cause`, else the call's `message.diagnostics.cache_miss_reason`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub reported_cause: Option<String>,
    /// Whether `reported_cause` agrees with `cause` (`reported::agrees`); left out when none was
    /// reported or its name is not one ctxj knows. The status line marks a disagreement `?`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub reported_agrees: Option<bool>,
}

/// The session's last cache break: among the calls in view, else the settled calls' last.
fn last_break(s: &LiveSession, view: &View, own: &[&UsageEntry], ttl: i64, inp: &Inputs) -> Option<LastBreak> {
    let found = match super::events::last_break(own, &view.compactions, ttl, view.first_write) {
        Some(super::events::Event::CacheBreak { call, cause, lost_tokens, cost, .. }) => {
            Some((view.offset + call, cause, lost_tokens, cost))
        }
        _ => view.settled_break.as_ref().map(|b| (b.call, b.cause_at(ttl), b.lost_tokens, b.cost)),
    };
    let (call, cause, lost_tokens, cost) = found?;
    // The calls before and after it, when in view (1-based `call` is `own[call - 1 - offset]`).
    let at = |k: usize| k.checked_sub(view.offset).and_then(|j| own.get(j));
    let (before, after) = (call.checked_sub(2).and_then(at), at(call));
    let in_file = super::reported::for_call(s.reported(), before.map(|e| e.ts.as_str()), after.map(|e| e.ts.as_str()));
    let reported_cause = inp.reported_cause.clone().or_else(|| in_file.map(str::to_string));
    let reported_agrees = reported_cause.as_deref().and_then(|r| super::reported::agrees(r, cause));
    Some(LastBreak { call, cause, lost_tokens, cost, reported_cause, reported_agrees })
}

fn price_of(model: Option<&str>) -> Option<Price> {
    let m = model?;
    builtin_price(m).or_else(|| builtin_price(m.rsplit('/').next()?))
}

fn rfc3339(ms: i64) -> String {
    chrono::DateTime::from_timestamp_millis(ms)
        .map(|t| t.to_rfc3339_opts(chrono::SecondsFormat::Secs, true))
        .unwrap_or_default()
}

/// The moving average of the positive growth between successive calls' prompts (a shrink is a
/// compaction or a clear, not growth).
pub fn growth(prompts: &[u64]) -> Option<f64> {
    let mut avg: Option<f64> = None;
    for w in prompts.windows(2) {
        if w[1] > w[0] {
            let d = (w[1] - w[0]) as f64;
            avg = Some(avg.map_or(d, |a| a + GROWTH_ALPHA * (d - a)));
        }
    }
    avg
}

/// What a snapshot needs besides the session.
#[derive(Debug, Clone, Default)]
pub struct Inputs {
    /// Now, Unix ms.
    pub now_ms: i64,
    /// The user's compaction settings.
    pub overrides: Overrides,
    /// Compactions seen in this user's other sessions (this session's are added).
    pub observed: Vec<Observed>,
    /// The current context as the harness reports it (Claude Code's status-line input), which
    /// wins over the transcript's last call.
    pub context: Option<u64>,
    /// The cause the harness reported for the session's last cache miss (Claude Code's
    /// status-line `prompt_cache.last_miss_cause`), which wins over the transcript's.
    pub reported_cause: Option<String>,
}

impl Snapshot {
    /// The figures of `s` under `inp`.
    pub fn of(s: &LiveSession, inp: &Inputs) -> Snapshot {
        let (now_ms, overrides, observed) = (inp.now_ms, &inp.overrides, &inp.observed[..]);
        let view = s.view();
        let own: Vec<&UsageEntry> = view.own_refs();
        let last = own.last().copied();
        let model = last.and_then(|e| e.model.clone());
        let context = inp.context.or_else(|| last.map(|e| e.tokens.prompt()));
        let window = model.as_deref().and_then(crate::cache::window::context_window);
        let mut seen: Vec<Observed> = observed.to_vec();
        seen.extend_from_slice(s.observed());
        let version = s.observed().last().and_then(|o| o.version.clone());
        let compact_at = match s.agent() {
            crate::import::Format::ClaudeCode => compact::point(model.as_deref(), version.as_deref(), &seen, overrides),
            _ => None,
        };
        let pct = |n: Option<u64>| context.zip(n).filter(|(_, n)| *n > 0).map(|(c, n)| c as f64 * 100.0 / n as f64);
        let prompts: Vec<u64> = own.iter().map(|e| e.tokens.prompt()).filter(|&p| p > 0).collect();
        let growth = growth(&prompts[prompts.len().saturating_sub(50)..]);
        let calls_to_compact = match (compact_at, context, growth) {
            (Some(p), Some(c), Some(g)) if g >= 1.0 => Some((p.tokens.saturating_sub(c) as f64 / g).ceil() as u64),
            _ => None,
        };
        let price = price_of(model.as_deref());
        let one_hour = s.writes_one_hour();
        let ttl = if one_hour { TTL_1H } else { TTL_5M };
        let last_at = last.and_then(|e| parse_ts(&e.ts));
        let rewrite_rate = |p: &Price| if one_hour { p.write_1h_rate() } else { p.write_rate() };
        let cache =
            last_at.filter(|_| last.is_some_and(|e| e.tokens.cache_read + e.tokens.cache_creation > 0)).map(|at| {
                let expires = at + ttl * 1000;
                let left = (expires - now_ms).div_euclid(1000);
                CacheState {
                    ttl_seconds: ttl,
                    expires_at: rfc3339(expires),
                    seconds_left: left,
                    warm: left > 0,
                    rewrite_cost: price
                        .zip(context)
                        .map(|(p, c)| c as f64 * (rewrite_rate(&p) - p.cached_rate()).max(0.0) / 1e6),
                }
            });
        let next_call_cost = match (price, last, context) {
            (Some(p), Some(e), Some(c)) => {
                let grow = growth.unwrap_or(0.0).round() as u64;
                let warm = cache.as_ref().is_some_and(|k| k.warm);
                let writes = e.tokens.cache_creation > 0;
                let (input, write, read) = match (warm, writes) {
                    (true, true) => (0, grow, c),
                    (true, false) => (grow, 0, c),
                    (false, true) => (0, c + grow, 0),
                    (false, false) => (c + grow, 0, 0),
                };
                let (w5, w1) = if one_hour { (0, write) } else { (write, 0) };
                Some(p.billed(input, w5, w1, read, e.tokens.output))
            }
            _ => None,
        };
        Snapshot {
            agent: s.agent().name().to_string(),
            path: s.main().display().to_string(),
            model,
            calls: view.calls,
            compactions: view.compaction_count,
            context,
            window,
            window_pct: pct(window),
            compact_at,
            compact_pct: pct(compact_at.map(|p| p.tokens)),
            growth_per_call: growth,
            calls_to_compact,
            cache,
            cost: view.cost,
            last_call_cost: last.and_then(|e| e.cost),
            next_call_cost,
            last_call_at: last.map(|e| e.ts.clone()),
            last_compaction: s.observed().last().cloned(),
            last_break: last_break(s, &view, &own, ttl, inp),
        }
    }

    /// The cache figures again at `now_ms` (a saved snapshot rendered later).
    pub fn at(mut self, now_ms: i64) -> Snapshot {
        if let Some(c) = &mut self.cache {
            if let Some(exp) = parse_ts(&c.expires_at) {
                c.seconds_left = (exp - now_ms).div_euclid(1000);
                c.warm = c.seconds_left > 0;
            }
        }
        self
    }
}
