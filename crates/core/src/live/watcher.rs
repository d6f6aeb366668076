//! What `ctxj watch` has reported of one session ([`Watcher`]): each step compares the session
//! and its [`Snapshot`] with what was reported before and yields the new [`Event`]s (calls and
//! their cache breaks judged by [`super::events::judge_call`], compactions, bands, expiry).

use super::compact::WARNING_BAND;
use super::events::{first_write, judge_call, Band, CacheUse, Event, EXPIRING_SECONDS};
use super::session::LiveSession;
use super::snapshot::Snapshot;
use crate::cache::billed::{TTL_1H, TTL_5M};

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

    /// The events since the last step.
    pub fn step(&mut self, s: &LiveSession, snap: &Snapshot) -> Vec<Event> {
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
            if let Some((_, Some(b))) = judged {
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
        for c in read.compactions.iter().skip(self.compactions) {
            let seen = s.observed().iter().find(|o| o.ts == c.ts);
            out.push(Event::Compaction {
                ts: c.ts.clone(),
                pre_tokens: seen.map(|o| o.pre_tokens),
                auto: seen.map(|o| o.auto),
            });
        }
        self.compactions = read.compactions.len();
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
