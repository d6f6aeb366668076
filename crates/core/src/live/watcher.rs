//! What `ctxj watch` has reported of one session ([`Watcher`]): each step compares the session
//! and its [`Snapshot`] with what was reported before and yields the new [`Event`]s (calls and
//! their cache breaks judged by [`super::events::judge_call`], compactions, bands, expiry).

use super::compact::WARNING_BAND;
use super::events::{judge_call, Band, CacheUse, Event, EXPIRING_SECONDS};
use super::session::LiveSession;
use super::snapshot::Snapshot;
use crate::cache::billed::{TTL_1H, TTL_5M};
use crate::cache::model::parse_ts;
use crate::usage::entry::{builtin_cost, Compaction, Tokens, UsageEntry};

/// A compaction no call has followed yet is reported without its after-figures this long after
/// it (a manual `/compact` waits for the user's next prompt), ms.
pub const COMPACTION_WAIT_MS: i64 = 60_000;

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
        let view = s.view();
        let mut w =
            Watcher { calls: view.offset + view.own.len(), compactions: view.compaction_count, ..Watcher::default() };
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
        // Indices are among the calls in view; `view.offset` own calls came before them (settled
        // after an earlier step; none while nothing was).
        let view = s.view();
        let own = view.own_refs();
        let one_hour = s.writes_one_hour();
        let ttl = if one_hour { TTL_1H } else { TTL_5M };
        let first = view.first_write;
        let off = view.offset;
        for i in self.calls.saturating_sub(off)..own.len() {
            let e = own[i];
            let judged =
                judge_call(&own, i, &view.compactions, ttl, first).map(|(u, b)| (u, b.map(|b| b.shifted(off))));
            let cache = judged.as_ref().map_or(CacheUse::Cold, |j| j.0);
            if let Some((_, Some(mut b))) = judged {
                if let Event::CacheBreak { cause, reported_cause, reported_agrees, .. } = &mut b {
                    let prev = i.checked_sub(1).map(|j| own[j].ts.as_str());
                    let next = own.get(i + 1).map(|e| e.ts.as_str());
                    let r = super::reported::for_call(s.reported(), prev, next);
                    *reported_agrees = r.and_then(|r| super::reported::agrees(r, *cause));
                    *reported_cause = r.map(str::to_string);
                }
                out.push(b);
            }
            out.insert(
                out.len().saturating_sub(usize::from(cache == CacheUse::Miss)),
                Event::Call {
                    call: off + i + 1,
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
        if off + own.len() > self.calls {
            // A new call refreshes the cache: its expiry is warned about afresh.
            self.expiring = None;
            self.cold = None;
        }
        self.calls = off + own.len();
        // A compaction waits for the first call after it (the size after, the rebuild).
        let before = view.compaction_count - view.compactions.len();
        for (k, c) in view.compactions.iter().enumerate().skip(self.compactions.saturating_sub(before)) {
            let after = own.iter().find(|e| e.ts > c.ts && e.tokens.prompt() > 0).copied();
            let waited = parse_ts(&c.ts).is_none_or(|t| now_ms - t >= COMPACTION_WAIT_MS);
            if after.is_none() && !waited {
                break;
            }
            let since = k.checked_sub(1).map(|j| view.compactions[j].ts.as_str());
            out.push(compaction_event(s, &view.unsettled.entries, c, since, after, one_hour));
            self.compactions = before + k + 1;
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
        files.get(e.file).is_some_and(|p| crate::import::claude_code::is_compaction_call(p))
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
