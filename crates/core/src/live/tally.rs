//! What a live session keeps of the calls it has settled: sums and the last few calls, so its
//! saved state does not grow with the session. The agent's `usage` fold ([`super::Fold`]) holds
//! only the last [`KEEP`] calls of each file; [`super::Fold::settle`] hands the older ones over,
//! read by the same rules as the batch `usage` read, and [`Tally::add`] folds them in. A
//! [`View`] joins the two back into what the figures need: the counts and dollars of the whole
//! session, the session's recent own calls, the recent compactions and the last cache break.
//!
//! The bound: the fold's de-duplication (Claude Code's `message.id` + `requestId`) sees only the
//! calls still in the fold. Claude Code writes the lines of one message (one per content block,
//! each carrying the message's usage) one after another, and a settle never parts them; a copy
//! written more than [`KEEP`] usage lines after its first one would be counted twice in the
//! live figures (never in `usage`). No shared transcript has one (the chunked-fold test).

use std::sync::Arc;

use super::events::{first_write, judge_call, Event};
use crate::cache::billed::BreakCause;
use crate::usage::entry::{Compaction, Read, SessionKey, Tokens, UsageEntry};

/// Calls (and compactions) of each file the fold keeps after a settle.
pub const KEEP: usize = 64;
/// Settled own calls with a prompt kept: the growth window (50) and the call before the next.
pub const RECENT: usize = 51;
/// Settled own calls kept at most (calls without a prompt among the recent ones included).
const RECENT_MAX: usize = 4 * RECENT;
/// Settled compaction times kept: those a later call may still lie after.
pub const RECENT_COMPACTIONS: usize = 8;

/// A settled call of the session's own file, as the figures need it.
#[derive(Debug, Clone, PartialEq, serde::Serialize, serde::Deserialize)]
pub struct Call {
    pub ts: String,
    pub model: Option<String>,
    pub tokens: Tokens,
    pub cache_creation_1h: u64,
    pub cost: Option<f64>,
}

/// A cache break among the settled calls, judged by [`judge_call`] with no lifetime: its `ttl`
/// cause is decided when it is shown ([`Break::cause_at`]), against the session's lifetime then.
#[derive(Debug, Clone, PartialEq, serde::Serialize, serde::Deserialize)]
pub struct Break {
    /// 1-based, among the session's own calls.
    pub call: usize,
    pub cause: Option<BreakCause>,
    pub lost_tokens: u64,
    pub cost: Option<f64>,
    pub gap_seconds: Option<f64>,
}

impl Break {
    /// Its cause under a cache lifetime of `ttl` seconds (the rule of [`judge_call`]).
    pub fn cause_at(&self, ttl: i64) -> Option<BreakCause> {
        self.cause.or_else(|| self.gap_seconds.filter(|g| *g > ttl as f64).map(|_| BreakCause::Ttl))
    }
}

/// The settled calls of a session, summed.
#[derive(Debug, Clone, Default, PartialEq, serde::Serialize, serde::Deserialize)]
pub struct Tally {
    /// Calls of every file (subagents' included), after de-duplication.
    pub calls: usize,
    /// Calls of the session's own file (its main conversation's: [`own_calls`]).
    pub own: usize,
    /// Whether the session's own file has had a call of its main conversation.
    pub main_seen: bool,
    pub duplicates: usize,
    pub compactions: usize,
    /// The priced calls' cost, $; `None` when none was priced.
    pub cost: Option<f64>,
    /// The index (0-based, among own calls) of the first own call that wrote to the cache.
    pub first_write: Option<usize>,
    /// Whether a settled own call read from or wrote to the cache (a session that never does
    /// shows no cache, and nothing is expected of it: [`expected_from`]).
    #[serde(default)]
    pub cached: bool,
    /// The last settled own calls, oldest first.
    pub recent: Vec<Call>,
    /// The last settled compactions' times.
    pub recent_compactions: Vec<String>,
    pub last_break: Option<Break>,
}

fn entry(c: &Call, session: &Arc<SessionKey>, file: usize) -> UsageEntry {
    UsageEntry {
        session: session.clone(),
        file,
        ts: c.ts.clone(),
        model: c.model.clone(),
        tokens: c.tokens,
        cache_creation_1h: c.cache_creation_1h,
        cost: c.cost,
        uncounted_by_ccusage: false,
        extra: 0,
        double_counted: 0,
        sidechain: false,
    }
}

/// Whether `e` is one of the session's own calls: of its own file `main`, and of its main
/// conversation (`has_main`: that file has a call not marked `isSidechain`), the importer's rule
/// (`import::claude_code::in_side_session`), so that calls are numbered and compared as `ctxj
/// cache` numbers its recorded turns.
pub fn own_calls(e: &UsageEntry, main: usize, has_main: bool) -> bool {
    e.file == main && !crate::import::claude_code::in_side_session(e.sidechain, has_main)
}

fn has_main(seen: bool, entries: &[UsageEntry], main: usize) -> bool {
    seen || entries.iter().any(|e| e.file == main && !e.sidechain)
}

/// Whether a call read from or wrote to the cache.
fn caches(e: &UsageEntry) -> bool {
    e.tokens.cache_read > 0 || e.tokens.cache_creation > 0
}

/// The `first_write` that [`judge_call`] takes: from the first call that wrote to the cache on,
/// a call left what it read and wrote; a session none of whose calls read from or wrote to the
/// cache (a local model) shows no cache, and is taken as having written from the start, so that
/// nothing is expected of it — `cache::billed`'s rule (its `writes_seen` starts true then).
fn expected_from(first_write: Option<usize>, cached: bool) -> Option<usize> {
    if cached {
        first_write
    } else {
        Some(0)
    }
}

fn add_cost(sum: &mut Option<f64>, c: Option<f64>) {
    if let Some(c) = c {
        *sum = Some(sum.unwrap_or(0.0) + c);
    }
}

impl Tally {
    /// Folds in `settled` (a [`super::Fold::settle`]; its own calls are those of file `main`).
    /// `later`, `later_calls`: the compactions and calls still in the fold (a settled call's break
    /// may lie before one of those compactions; a main conversation's call there makes the
    /// settled sidechain calls a side session's).
    pub fn add(
        &mut self,
        settled: &Read,
        main: usize,
        later: &[Compaction],
        later_calls: &[UsageEntry],
        session: &Arc<SessionKey>,
    ) {
        self.calls += settled.entries.len();
        self.duplicates += settled.duplicates;
        self.compactions += settled.compactions.len();
        for e in &settled.entries {
            add_cost(&mut self.cost, e.cost);
        }
        let mut own: Vec<UsageEntry> = self.recent.iter().map(|c| entry(c, session, main)).collect();
        let before = own.len();
        self.main_seen = has_main(self.main_seen, &settled.entries, main) || has_main(false, later_calls, main);
        own.extend(settled.entries.iter().filter(|e| own_calls(e, main, self.main_seen)).cloned());
        let offset = self.own - before;
        let known: Vec<Compaction> = self
            .recent_compactions
            .iter()
            .map(|ts| Compaction { session: session.clone(), ts: ts.clone() })
            .chain(settled.compactions.iter().cloned())
            .chain(later.iter().cloned())
            .collect();
        let refs: Vec<&UsageEntry> = own.iter().collect();
        if self.first_write.is_none() {
            self.first_write = first_write(&refs[before..]).map(|i| self.own + i);
        }
        self.cached |= refs.iter().any(|e| caches(e));
        let cached = self.cached || later_calls.iter().any(|e| own_calls(e, main, self.main_seen) && caches(e));
        let first = expected_from(self.first_write.map(|f| f.saturating_sub(offset)), cached);
        for i in before.max(1)..refs.len() {
            if let Some((_, Some(Event::CacheBreak { cause, lost_tokens, cost, gap_seconds, .. }))) =
                judge_call(&refs, i, &known, i64::MAX, first)
            {
                self.last_break = Some(Break { call: offset + i + 1, cause, lost_tokens, cost, gap_seconds });
            }
        }
        self.own = offset + own.len();
        // Keep the last RECENT calls with a prompt, and the calls without one after them.
        let mut with_prompt = 0;
        let mut from = own.len();
        while from > 0 && with_prompt < RECENT && own.len() - from < RECENT_MAX {
            from -= 1;
            with_prompt += usize::from(own[from].tokens.prompt() > 0);
        }
        self.recent = own[from..]
            .iter()
            .map(|e| Call {
                ts: e.ts.clone(),
                model: e.model.clone(),
                tokens: e.tokens,
                cache_creation_1h: e.cache_creation_1h,
                cost: e.cost,
            })
            .collect();
        self.recent_compactions.extend(settled.compactions.iter().map(|c| c.ts.clone()));
        let drop = self.recent_compactions.len().saturating_sub(RECENT_COMPACTIONS);
        self.recent_compactions.drain(..drop);
    }

    /// The session as the figures see it: this tally joined to `unsettled` (the fold's read now),
    /// whose own calls are those of file `main`.
    pub fn view(&self, unsettled: Read, main: usize, session: &Arc<SessionKey>) -> View {
        let mut own: Vec<UsageEntry> = self.recent.iter().map(|c| entry(c, session, main)).collect();
        let offset = self.own - own.len();
        let main_seen = has_main(self.main_seen, &unsettled.entries, main);
        let new: Vec<&UsageEntry> = unsettled.entries.iter().filter(|e| own_calls(e, main, main_seen)).collect();
        let first_new = first_write(&new);
        let first_write = self.first_write.or(first_new.map(|i| self.own + i)).map(|f| f.saturating_sub(offset));
        let cached = self.cached || own.iter().any(caches) || new.iter().any(|e| caches(e));
        let first_write = expected_from(first_write, cached);
        own.extend(new.into_iter().cloned());
        let mut cost = self.cost;
        for e in &unsettled.entries {
            add_cost(&mut cost, e.cost);
        }
        let compactions = self
            .recent_compactions
            .iter()
            .map(|ts| Compaction { session: session.clone(), ts: ts.clone() })
            .chain(unsettled.compactions.iter().cloned())
            .collect();
        View {
            own,
            offset,
            calls: self.calls + unsettled.entries.len(),
            duplicates: self.duplicates + unsettled.duplicates,
            compaction_count: self.compactions + unsettled.compactions.len(),
            cost,
            compactions,
            first_write,
            settled_break: self.last_break.clone(),
            unsettled,
        }
    }
}

/// A session's figures: the settled calls' sums and recent calls joined to the calls still in
/// the fold. Nothing settled (`watch --once`, a session read once): the batch read.
#[derive(Debug, Clone)]
pub struct View {
    /// The session's own calls in view, oldest first: the recent settled ones, then the others.
    pub own: Vec<UsageEntry>,
    /// How many own calls came before `own[0]`.
    pub offset: usize,
    /// Calls of every file, after de-duplication.
    pub calls: usize,
    pub duplicates: usize,
    pub compaction_count: usize,
    /// The priced calls' cost, $ (the session as `usage` bills it).
    pub cost: Option<f64>,
    /// The compactions in view (every file), oldest first.
    pub compactions: Vec<Compaction>,
    /// The index into `own` of the first own call that wrote to the cache (0 when before it, or
    /// when the session shows no cache at all: [`expected_from`]).
    pub first_write: Option<usize>,
    /// The last break among the settled calls.
    pub settled_break: Option<Break>,
    /// What the fold holds now, read as `usage` reads it.
    pub unsettled: Read,
}

impl View {
    /// The own calls in view, by reference.
    pub fn own_refs(&self) -> Vec<&UsageEntry> {
        self.own.iter().collect()
    }
}
