//! The session as the provider billed it: per turn, the journal's own `usage` (input, cache read,
//! cache write with its one-hour part, output) priced at that message's model, and the recorded
//! cache timeline — every turn whose cache read falls short of what the previous turn read and
//! wrote, with its cause (`docs/tokens-and-cache.md`, "The provider's record").
//!
//! Nothing is invented: a figure no turn recorded stays `None` and is listed in
//! [`Billed::unknown`].

use std::collections::HashMap;

use super::explain::Divergence;
use super::model::parse_ts;
use super::prices::{Price, PriceTable};
use crate::journal::record::CtxSettings;
use crate::journal::{Body, Journal};
use crate::projection::{diff, Block};
use crate::strategy::{self, Origin};
use crate::tokens::Estimator;

/// A shortfall is a break when it exceeds this many tokens …
pub const TOLERANCE_TOKENS: u64 = 1024;
/// … and this share of what the previous turn left in the cache.
pub const TOLERANCE_SHARE: f64 = 0.02;
/// The grain of a provider's cache reads: OpenAI serves cached prefixes in 128-token increments
/// (its prompt-caching guide), so a call that read back its predecessor's whole prompt may still
/// read up to 127 tokens less; Anthropic reads whole entries (a shortfall of any size is a loss).
/// A read short by at least this much, within the break tolerance, is an unreported loss
/// ([`Billed::unreported_losses`]).
pub const READ_STEP: u64 = 128;
/// Cache lifetimes, seconds.
pub const TTL_5M: i64 = 300;
pub const TTL_1H: i64 = 3600;

/// Why the provider did not read again what the previous turn left in its cache.
#[derive(Debug, Clone, Copy, PartialEq, Eq, serde::Serialize, serde::Deserialize, schemars::JsonSchema)]
#[serde(rename_all = "snake_case")]
pub enum BreakCause {
    /// The idle gap before the request exceeds the cache lifetime.
    Ttl,
    /// A compaction record lies between the two calls.
    Compaction,
    /// The call used another model than the previous one (caches are per model).
    ModelSwitch,
    /// The reconstructed request does not start with the previous one.
    PrefixChange,
    /// The system prompt / tool schemas changed: a `system` record between the calls, or not
    /// even the floor (the part every call shares) was read.
    SystemOrTools,
    /// The request was an append and nothing in the journal explains it.
    Provider,
}

impl BreakCause {
    pub fn name(self) -> &'static str {
        match self {
            BreakCause::Ttl => "ttl",
            BreakCause::Compaction => "compaction",
            BreakCause::ModelSwitch => "model_switch",
            BreakCause::PrefixChange => "prefix_change",
            BreakCause::SystemOrTools => "system_or_tools",
            BreakCause::Provider => "provider",
        }
    }
}

/// A turn whose recorded cache read falls short of what the previous turn read and wrote.
#[derive(Debug, Clone, PartialEq, serde::Serialize)]
pub struct RecordedBreak {
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
    /// The evidence (`render` words it: `cache --json`'s `detail`).
    pub evidence: Evidence,
}

/// The evidence of a recorded break, as typed values; the `ctxj` crate's `render` writes the
/// sentence.
#[derive(Debug, Clone, PartialEq, Eq, serde::Serialize)]
#[serde(tag = "kind", rename_all = "snake_case")]
pub enum Evidence {
    /// A compaction record lies between the two calls.
    Compaction,
    /// The previous call's model and this one's (`None`: not recorded).
    ModelSwitch { from: Option<String>, to: Option<String> },
    /// The idle gap before the call exceeded the cache lifetime in force (both in seconds).
    Idle { idle: i64, lifetime: i64 },
    /// A `system` record (system prompt / tools) lies between the calls.
    SystemRecord,
    /// Not even the system prompt and tools were read from the cache.
    NothingRead,
    /// The reconstructed request does not start with the previous one.
    PrefixChange(Divergence),
    /// The request was an append and nothing recorded explains the loss; the seconds since the
    /// previous call, when known.
    Unexplained { gap: Option<i64> },
}

/// One turn as billed.
#[derive(Debug, Clone, PartialEq, serde::Serialize, schemars::JsonSchema)]
pub struct BilledTurn {
    pub turn: usize,
    pub model: Option<String>,
    /// `prompt_tokens`; input = prompt − cache read − cache write.
    pub prompt: Option<u64>,
    pub input: Option<u64>,
    pub cache_read: Option<u64>,
    pub cache_write: Option<u64>,
    pub cache_write_1h: Option<u64>,
    pub output: Option<u64>,
    pub cost: Option<f64>,
    /// `cost` is the one the log recorded (no price is known for the model).
    #[serde(skip)]
    pub cost_recorded: bool,
    #[serde(rename = "break")]
    pub brk: Option<BreakCause>,
}

/// The session as billed (`cache --json` writes it as its top-level `recorded` object, with each
/// break's evidence worded).
#[derive(Debug, Clone, Default, PartialEq, serde::Serialize)]
pub struct Billed {
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
    /// The longest idle gap (seconds) after which a call still read back what the previous call
    /// left: the provider's cache demonstrably lived that long (replays use it as the lifetime
    /// when it is longer than the model's).
    pub kept_idle_seconds: Option<f64>,
    pub breaks: Vec<RecordedBreak>,
    /// `(turn, shortfall)` of every call that read back at least [`READ_STEP`] tokens less than
    /// the previous call left, within the break tolerance, with a cause no request change
    /// explains (as [`RecordedBreak::environment`]). Not reported as breaks (the tolerance keeps
    /// small drifts out of the report); replays of every strategy lose as much there
    /// (`Environment::lost`).
    #[serde(skip)]
    pub unreported_losses: Vec<(usize, u64)>,
    /// Summarizer requests recorded on `compact` records (their optional `usage`), and what the
    /// priced ones cost; that cost is part of `cost` (a compaction pays for its own call).
    pub summarizer_calls: usize,
    pub summarizer_cost: Option<f64>,
    #[serde(skip)]
    pub per_turn: Vec<BilledTurn>,
}

impl Billed {
    /// The break recorded at `turn`, if any.
    pub fn break_at(&self, turn: usize) -> Option<&RecordedBreak> {
        self.breaks.iter().find(|b| b.turn == turn)
    }
}

/// What the journal says about the stretch before one turn's call.
#[derive(Debug, Clone, Default)]
struct Between {
    compaction: bool,
    system: bool,
    /// Timestamp (ms) of the call's own record.
    at: Option<i64>,
}

/// Per turn: the model in force (the message's own, else the session's / `model` record's,
/// else `fallback`) and what lies between it and the previous call.
fn walk(journal: &Journal, fallback: Option<&str>) -> Vec<(Option<String>, Between)> {
    let mut model: Option<String> = None;
    let mut ctx = CtxSettings::default();
    let mut between = Between::default();
    let mut out = Vec::with_capacity(journal.turns.len());
    for rec in &journal.records {
        rec.body.update_settings(&mut model, &mut ctx);
        match &rec.body {
            Body::Assistant(a) => {
                between.at = parse_ts(&rec.ts);
                let m = a.model.clone().or_else(|| model.clone()).or_else(|| fallback.map(str::to_string));
                out.push((m, std::mem::take(&mut between)));
            }
            Body::Compact(_) => between.compaction = true,
            Body::System(_) => between.system = true,
            _ => {}
        }
    }
    out
}

/// The turns as billed, breaks not yet found.
fn turns(journal: &Journal, walked: &[(Option<String>, Between)], table: &PriceTable) -> Vec<BilledTurn> {
    let mut out = Vec::new();
    for (k, &idx) in journal.turns.iter().enumerate() {
        let Body::Assistant(a) = &journal.records[idx].body else { continue };
        let u = a.usage.clone().unwrap_or_default();
        let model = walked.get(k).and_then(|w| w.0.clone());
        let write = u.cache_write_tokens;
        let w1h = write.map(|w| u.cache_write_1h_tokens.unwrap_or(0).min(w));
        let input =
            u.prompt_tokens.map(|p| p.saturating_sub(u.cached_tokens.unwrap_or(0).saturating_add(write.unwrap_or(0))));
        let price = model.as_deref().and_then(|m| table.lookup(m)).map(|(_, p)| p);
        // The cost the log recorded, where it did (pi, OpenClaw: the provider's own charge), wins
        // over the table — ccusage's rule, and `usage`'s (one figure for "as billed"); else the
        // table's price of the tokens.
        let cost_recorded = u.cost_usd.is_some();
        let cost = u.cost_usd.or_else(|| price.as_ref().and_then(|p| call_cost(p, &u)));
        out.push(BilledTurn {
            turn: k + 1,
            model,
            prompt: u.prompt_tokens,
            input,
            cache_read: u.cached_tokens,
            cache_write: write,
            cache_write_1h: w1h,
            output: u.completion_tokens,
            cost,
            cost_recorded,
            brk: None,
        });
    }
    out
}

/// A shortfall found, before its cause is known.
struct Candidate {
    /// Index into the turns.
    at: usize,
    /// Index into the turns of the call it is compared with (the previous one with a prompt).
    prev: usize,
    expected: u64,
    read: u64,
    rewritten: u64,
    gap_ms: Option<i64>,
    /// Beyond the break tolerance ([`shortfall`]): a reported break. Else a loss of at least
    /// [`READ_STEP`] tokens that only replays follow.
    reported: bool,
}

/// The tokens a call failed to read back of the `expected` the previous call left in the cache,
/// when that is a break (beyond [`TOLERANCE_TOKENS`] and [`TOLERANCE_SHARE`]). The one rule: `cache` and the live engine
/// (`crate::live`) both ask it.
pub fn shortfall(expected: u64, read: u64) -> Option<u64> {
    let short = expected.saturating_sub(read);
    let tol = TOLERANCE_TOKENS.max((expected as f64 * TOLERANCE_SHARE) as u64);
    (short > tol).then_some(short)
}

/// Turns whose cache read falls short of what the previous priced turn left, beyond
/// [`TOLERANCE_TOKENS`] and [`TOLERANCE_SHARE`]; and the longest idle gap (ms) after which a call still read what the previous
/// one left.
fn shortfalls(turns: &[BilledTurn], walked: &[(Option<String>, Between)]) -> (Vec<Candidate>, Option<i64>) {
    let mut out = Vec::new();
    let mut kept: Option<i64> = None;
    let mut prev: Option<(usize, u64)> = None;
    // A provider that reports neither a read nor a write anywhere in the session (a local model
    // served by Ollama) shows no cache at all: nothing is expected of it.
    let caches = turns.iter().any(|t| t.cache_read.unwrap_or(0) > 0 || t.cache_write.unwrap_or(0) > 0);
    let mut writes_seen = !caches;
    for (i, t) in turns.iter().enumerate() {
        let (Some(prompt), Some(read)) = (t.prompt, t.cache_read) else { continue };
        if prompt == 0 {
            // A call the provider billed nothing for (pi's aborted requests): no cache was read
            // or written, so the next call is compared with the one before it.
            continue;
        }
        if let Some((p, expected)) = prev {
            let short = expected.saturating_sub(read);
            let at = |k: usize| walked.get(k).and_then(|w| w.1.at);
            let gap_ms = at(p).zip(at(i)).map(|(a, b)| b.saturating_sub(a).max(0));
            let reported = shortfall(expected, read).is_some();
            if !reported && expected > TOLERANCE_TOKENS {
                kept = kept.max(gap_ms);
            }
            if reported || short >= READ_STEP {
                out.push(Candidate { at: i, prev: p, expected, read, rewritten: short, gap_ms, reported });
            }
        }
        let write = t.cache_write.unwrap_or(0);
        writes_seen |= write > 0;
        prev = Some((i, left_in_cache(prompt, read, write, t.model.as_deref(), writes_seen)));
    }
    (out, kept)
}

/// What a call left in the provider's cache for the next one to read. A provider that reports
/// writes (Anthropic: `cache_creation_input_tokens`) left what the call read and wrote. One that
/// has reported no write in the session so far (OpenAI, GLM … through pi/OpenClaw report
/// `cacheWrite: 0`; Codex no field at all) caches every prompt automatically: the call left its
/// whole prompt — unless that prompt is below the model's minimum cacheable prompt, which is not
/// cached (then nothing was left). `writes_seen`: the session has reported a cache write by this
/// call (this call's own included), or it shows no cache at all. The one rule: `cache` and the
/// live engine (`crate::live::events::judge_call`) both ask it.
pub fn left_in_cache(prompt: u64, read: u64, write: u64, model: Option<&str>, writes_seen: bool) -> u64 {
    if writes_seen || write > 0 {
        return read.saturating_add(write);
    }
    let min = model.and_then(super::window::cache_minimum).unwrap_or(super::model::MIN_TOKENS);
    if prompt < min {
        read
    } else {
        prompt
    }
}

/// Per turn with a candidate break: where the reconstructed request stops repeating the previous
/// recorded one (the diff engine's, as `cache` explains simulated breaks).
fn prefix_changes(journal: &Journal, est: &dyn Estimator, wanted: &[usize]) -> HashMap<usize, Divergence> {
    let mut out = HashMap::new();
    let Some(&last) = wanted.iter().max() else { return out };
    let recorded = strategy::parse("recorded").expect("recorded is a strategy");
    let mut blocks: Vec<Block> = Vec::new();
    let mut origins: Vec<Origin> = Vec::new();
    strategy::replay_to(journal, &recorded, est, last, |r| {
        let keep = r.unchanged.min(blocks.len());
        if wanted.contains(&r.turn) {
            if let Some(b) = diff::first_break(&blocks, r.blocks, keep) {
                out.insert(r.turn, Divergence::at(&blocks, &origins, r.blocks, r.origins, b.at, b.cause));
            }
        }
        blocks.truncate(keep);
        blocks.extend_from_slice(&r.blocks[keep..]);
        origins.truncate(keep);
        origins.extend_from_slice(&r.origins[keep..]);
    });
    out
}

/// The cache lifetime in force before turn index `i`: one hour when every write so far was
/// written with the one-hour lifetime, else five minutes.
fn lifetime(turns: &[BilledTurn], i: usize) -> i64 {
    let writes = turns[..i].iter().filter(|t| t.cache_write.unwrap_or(0) > 0);
    let mut any = false;
    for t in writes {
        any = true;
        if t.cache_write_1h.unwrap_or(0) < t.cache_write.unwrap_or(0) {
            return TTL_5M;
        }
    }
    if any {
        TTL_1H
    } else {
        TTL_5M
    }
}

/// The cause of a candidate break, in order: compaction, model switch, idle gap, system or tools,
/// prefix change, provider.
fn cause_of(
    c: &Candidate,
    turns: &[BilledTurn],
    walked: &[(Option<String>, Between)],
    prefix: &HashMap<usize, Divergence>,
) -> (BreakCause, Evidence) {
    let t = &turns[c.at];
    let prev = turns[..c.at].iter().rev().find(|p| p.prompt.is_some_and(|x| x > 0) && p.cache_read.is_some());
    // Everything between the two calls compared: a call without a prompt between them (pi's
    // aborted request) does not hide a compaction or a system record before it.
    let between = walked.get(c.prev + 1..=c.at).unwrap_or_default().iter().fold(Between::default(), |acc, w| Between {
        compaction: acc.compaction || w.1.compaction,
        system: acc.system || w.1.system,
        at: w.1.at,
    });
    let ttl = lifetime(turns, c.at);
    let tol = TOLERANCE_TOKENS.max((c.expected as f64 * TOLERANCE_SHARE) as u64);
    let gap = c.gap_ms.map(|g| g / 1000);
    if between.compaction {
        return (BreakCause::Compaction, Evidence::Compaction);
    }
    if let Some(p) = prev.filter(|p| p.model.is_some() && t.model.is_some() && p.model != t.model) {
        return (BreakCause::ModelSwitch, Evidence::ModelSwitch { from: p.model.clone(), to: t.model.clone() });
    }
    if let Some(g) = gap.filter(|&g| g > ttl) {
        return (BreakCause::Ttl, Evidence::Idle { idle: g, lifetime: ttl });
    }
    if between.system {
        return (BreakCause::SystemOrTools, Evidence::SystemRecord);
    }
    if c.read <= tol {
        return (BreakCause::SystemOrTools, Evidence::NothingRead);
    }
    if let Some(d) = prefix.get(&t.turn) {
        return (BreakCause::PrefixChange, Evidence::PrefixChange(d.clone()));
    }
    (BreakCause::Provider, Evidence::Unexplained { gap })
}

/// Whether the session writes one-hour cache entries: some call reports cache writes, and every
/// call that does wrote them all with the one-hour lifetime (`cache_write_1h_tokens`). Replays of
/// such a session keep entries an hour and price writes at the one-hour rate.
pub fn writes_one_hour(journal: &Journal) -> bool {
    let mut any = false;
    for rec in &journal.records {
        let Body::Assistant(a) = &rec.body else { continue };
        let Some(u) = &a.usage else { continue };
        match u.cache_write_tokens {
            Some(w) if w > 0 => {
                if u.cache_write_1h_tokens.unwrap_or(0) < w {
                    return false;
                }
                any = true;
            }
            _ => {}
        }
    }
    any
}

/// Per turn (index = turn − 1): whether the call wrote to the cache and every written token had
/// the one-hour lifetime (`cache_write_1h_tokens` = `cache_write_tokens` > 0).
pub fn one_hour_turns(journal: &Journal) -> Vec<bool> {
    let hour = |u: &crate::journal::Usage| {
        u.cache_write_tokens.is_some_and(|w| w > 0 && u.cache_write_1h_tokens.unwrap_or(0) >= w)
    };
    let calls = journal.records.iter().filter_map(|rec| match &rec.body {
        Body::Assistant(a) => Some(a.usage.as_ref().is_some_and(hour)),
        _ => None,
    });
    calls.collect()
}

/// Whether some call writes one-hour cache entries (Claude Code 2.1 writes its system prompt and
/// tools so, and the conversation with the five-minute lifetime).
pub fn writes_some_one_hour(journal: &Journal) -> bool {
    journal.records.iter().any(|rec| match &rec.body {
        Body::Assistant(a) => a.usage.as_ref().is_some_and(|u| u.cache_write_1h_tokens.unwrap_or(0) > 0),
        _ => false,
    })
}

/// The session as billed. `fallback_model` prices turns whose model the journal does not say
/// (`--model`); `table` is the one price table of the command.
pub fn billed(journal: &Journal, est: &dyn Estimator, table: &PriceTable, fallback_model: Option<&str>) -> Billed {
    let walked = walk(journal, fallback_model);
    let mut per_turn = turns(journal, &walked, table);
    let (cands, kept) = shortfalls(&per_turn, &walked);
    let wanted: Vec<usize> = cands.iter().map(|c| per_turn[c.at].turn).collect();
    let prefix = prefix_changes(journal, est, &wanted);
    let (mut breaks, mut unreported) = (Vec::new(), Vec::new());
    for c in &cands {
        let (cause, evidence) = cause_of(c, &per_turn, &walked, &prefix);
        // A floor loss is the environment's only when the request itself did not change there.
        let changed = walked.get(c.at).is_some_and(|w| w.1.system) || prefix.contains_key(&per_turn[c.at].turn);
        let environment =
            matches!(cause, BreakCause::Provider | BreakCause::Ttl) || (cause == BreakCause::SystemOrTools && !changed);
        if !c.reported {
            if environment {
                unreported.push((per_turn[c.at].turn, c.rewritten));
            }
            continue;
        }
        let t = &mut per_turn[c.at];
        t.brk = Some(cause);
        let price = t.model.as_deref().and_then(|m| table.lookup(m)).map(|(_, p)| p);
        // Written again at the call's write price (its 5-minute / one-hour mix) where it reports
        // writes, else sent as input.
        let write_rate = |p: &Price| match t.cache_write.unwrap_or(0) {
            0 => p.input,
            w => {
                let h = t.cache_write_1h.unwrap_or(0).min(w) as f64;
                ((w as f64 - h) * p.write_rate() + h * p.write_1h_rate()) / w as f64
            }
        };
        breaks.push(RecordedBreak {
            turn: t.turn,
            cause,
            rewritten_tokens: c.rewritten,
            cost: price.map(|p| c.rewritten as f64 * (write_rate(&p) - p.cached_rate()).max(0.0) / 1e6),
            expected_read: c.expected,
            cache_read: c.read,
            gap_seconds: c.gap_ms.map(|g| g as f64 / 1000.0),
            block: match &evidence {
                Evidence::PrefixChange(d) => Some(d.block),
                _ => None,
            },
            environment,
            evidence,
        });
    }
    let mut b = totals(per_turn, breaks);
    b.unreported_losses = unreported;
    b.kept_idle_seconds = kept.map(|g| g as f64 / 1000.0);
    let (calls, cost) = summarizer(journal, table, fallback_model);
    b.summarizer_calls = calls;
    b.summarizer_cost = cost;
    if let Some(c) = cost {
        b.cost = Some(b.cost.unwrap_or(0.0) + c);
    }
    b
}

/// The summarizer requests of `compact` records that carry `usage`: how many, and the cost of
/// the priced ones at the price of the model in force there (`None` when none is priced).
fn summarizer(journal: &Journal, table: &PriceTable, fallback: Option<&str>) -> (usize, Option<f64>) {
    let mut model: Option<String> = None;
    let mut ctx = CtxSettings::default();
    let (mut calls, mut cost) = (0, None::<f64>);
    for rec in &journal.records {
        rec.body.update_settings(&mut model, &mut ctx);
        let Body::Compact(c) = &rec.body else { continue };
        let Some(u) = &c.usage else { continue };
        calls += 1;
        let price = model.as_deref().or(fallback).and_then(|m| table.lookup(m)).map(|(_, p)| p);
        if let Some(c) = price.as_ref().and_then(|p| call_cost(p, u)) {
            *cost.get_or_insert(0.0) += c;
        }
    }
    (calls, cost)
}

/// What one recorded call cost at `p`, a turn's or a summarizer request's (one rule): plain input
/// = `prompt_tokens` − cache reads − cache writes, the writes split by lifetime, each part at its
/// rate ([`Price::billed`]). `None` without `prompt_tokens`.
fn call_cost(p: &Price, u: &crate::journal::record::Usage) -> Option<f64> {
    let write = u.cache_write_tokens.unwrap_or(0);
    let w1h = u.cache_write_1h_tokens.unwrap_or(0).min(write);
    let read = u.cached_tokens.unwrap_or(0);
    let input = u.prompt_tokens?.saturating_sub(read.saturating_add(write));
    Some(p.billed(input, write - w1h, w1h, read, u.completion_tokens.unwrap_or(0)))
}

/// Sums the turns that carry usage (a call whose usage is all zero — pi's and OpenClaw's aborted
/// or failed requests — billed nothing and is not counted).
fn totals(per_turn: Vec<BilledTurn>, breaks: Vec<RecordedBreak>) -> Billed {
    let billed_nothing = |t: &BilledTurn| t.prompt == Some(0) && t.output.unwrap_or(0) == 0;
    let with: Vec<&BilledTurn> =
        per_turn.iter().filter(|t| (t.prompt.is_some() || t.output.is_some()) && !billed_nothing(t)).collect();
    let sum = |f: fn(&BilledTurn) -> Option<u64>| {
        let v: Vec<u64> = with.iter().filter_map(|t| f(t)).collect();
        (!v.is_empty()).then(|| v.iter().fold(0u64, |a, b| a.saturating_add(*b)))
    };
    let mut unknown = Vec::new();
    let fields: [(&'static str, Option<u64>); 5] = [
        ("input", sum(|t| t.input)),
        ("cache_read", sum(|t| t.cache_read)),
        ("cache_write", sum(|t| t.cache_write)),
        ("output", sum(|t| t.output)),
        ("prompt", sum(|t| t.prompt)),
    ];
    for (name, v) in fields {
        if v.is_none() && !with.is_empty() {
            unknown.push(name);
        }
    }
    let priced: Vec<f64> = with.iter().filter_map(|t| t.cost).collect();
    let mut models: Vec<String> = with.iter().filter_map(|t| t.model.clone()).collect();
    models.sort();
    models.dedup();
    let read_prompt: (u64, u64) = with
        .iter()
        .filter_map(|t| Some((t.cache_read?, t.prompt?)))
        .fold((0, 0), |(a, b), (r, p)| (a.saturating_add(r), b.saturating_add(p)));
    Billed {
        cost: (!priced.is_empty()).then(|| priced.iter().sum()),
        hit_rate: (read_prompt.1 > 0).then(|| read_prompt.0 as f64 / read_prompt.1 as f64),
        input: fields[0].1,
        cache_read: fields[1].1,
        cache_write: fields[2].1,
        cache_write_1h: sum(|t| t.cache_write_1h),
        output: fields[3].1,
        peak_prompt: with.iter().filter_map(|t| t.prompt).max(),
        turns: with.len(),
        unpriced_turns: with.iter().filter(|t| t.cost.is_none()).count(),
        recorded_cost_turns: with.iter().filter(|t| t.cost_recorded).count(),
        models,
        unknown,
        kept_idle_seconds: None,
        breaks,
        unreported_losses: Vec::new(),
        summarizer_calls: 0,
        summarizer_cost: None,
        per_turn,
    }
}

#[cfg(test)]
#[path = "billed_tests.rs"]
mod tests;
