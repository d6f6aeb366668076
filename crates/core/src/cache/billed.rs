//! The session as the provider billed it: per turn, the journal's own `usage` (input, cache read,
//! cache write with its one-hour part, output) priced at that message's model, and the recorded
//! cache timeline — every turn whose cache read falls short of what the previous turn read and
//! wrote, with its cause (`docs/tokens-and-cache.md`, "The provider's record").
//!
//! Nothing is invented: a figure no turn recorded stays `None` and is listed in
//! [`Billed::unknown`].

use std::collections::HashMap;

use super::model::parse_ts;
use super::prices::{Price, PriceTable};
use super::replay::{explain, BlockRef};
use crate::journal::record::CtxSettings;
use crate::journal::{Body, Journal};
use crate::projection::{diff, Block};
use crate::strategy::{self, Origin};
use crate::tokens::Estimator;

/// A shortfall is a break when it exceeds this many tokens …
pub const TOLERANCE_TOKENS: u64 = 1024;
/// … and this share of what the previous turn left in the cache.
pub const TOLERANCE_SHARE: f64 = 0.02;
/// The tolerance, as shown to users.
pub const TOLERANCE: &str = "max(1,024 tokens, 2% of the expected read)";
/// Cache lifetimes, seconds.
pub const TTL_5M: i64 = 300;
pub const TTL_1H: i64 = 3600;

/// Why the provider did not read again what the previous turn left in its cache.
#[derive(Debug, Clone, Copy, PartialEq, Eq, serde::Serialize, schemars::JsonSchema)]
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
#[derive(Debug, Clone, PartialEq, serde::Serialize, schemars::JsonSchema)]
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
    /// One line: the evidence.
    pub detail: String,
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

/// The session as billed (`cache --json`: the top-level `recorded` object).
#[derive(Debug, Clone, Default, PartialEq, serde::Serialize, schemars::JsonSchema)]
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
    /// Turns whose model has no price, billed at the cost the log recorded (pi, OpenClaw
    /// `usage.cost.total`).
    pub recorded_cost_turns: usize,
    pub models: Vec<String>,
    /// The figures no turn recorded (`cache_write`, …): `null` above, never guessed.
    pub unknown: Vec<&'static str>,
    pub tolerance: &'static str,
    /// The longest idle gap (seconds) after which a call still read back what the previous call
    /// left: the provider's cache demonstrably lived that long (replays use it as the lifetime
    /// when it is longer than the model's).
    pub kept_idle_seconds: Option<f64>,
    pub breaks: Vec<RecordedBreak>,
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
        let cost = match (price, input) {
            (Some(p), Some(i)) => Some(p.billed(
                i,
                write.unwrap_or(0) - w1h.unwrap_or(0),
                w1h.unwrap_or(0),
                u.cached_tokens.unwrap_or(0),
                u.completion_tokens.unwrap_or(0),
            )),
            _ => None,
        };
        // No price for the model: the cost the log recorded, when it did (pi, OpenClaw).
        let cost_recorded = cost.is_none() && u.cost_usd.is_some();
        let cost = cost.or(u.cost_usd);
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
    expected: u64,
    read: u64,
    rewritten: u64,
    gap_ms: Option<i64>,
}

/// The tokens a call failed to read back of the `expected` the previous call left in the cache,
/// when that is a break (beyond [`TOLERANCE`]). The one rule: `cache` and the live engine
/// (`crate::live`) both ask it.
pub fn shortfall(expected: u64, read: u64) -> Option<u64> {
    let short = expected.saturating_sub(read);
    let tol = TOLERANCE_TOKENS.max((expected as f64 * TOLERANCE_SHARE) as u64);
    (short > tol).then_some(short)
}

/// Turns whose cache read falls short of what the previous priced turn left, beyond
/// [`TOLERANCE`]; and the longest idle gap (ms) after which a call still read what the previous
/// one left.
fn shortfalls(turns: &[BilledTurn], walked: &[(Option<String>, Between)]) -> (Vec<Candidate>, Option<i64>) {
    let mut out = Vec::new();
    let mut kept: Option<i64> = None;
    let mut prev: Option<(usize, u64)> = None;
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
            if shortfall(expected, read).is_some() {
                out.push(Candidate { at: i, expected, read, rewritten: short, gap_ms });
            } else if expected > TOLERANCE_TOKENS {
                kept = kept.max(gap_ms);
            }
        }
        prev = Some((i, t.cache_write.map_or(prompt, |w| read.saturating_add(w))));
    }
    (out, kept)
}

/// Per turn with a candidate break: the first block of the previous recorded request not
/// repeated, and the one-line reason (the diff engine's, as `cache` explains simulated breaks).
fn prefix_changes(journal: &Journal, est: &dyn Estimator, wanted: &[usize]) -> HashMap<usize, (usize, String)> {
    let mut out = HashMap::new();
    let Some(&last) = wanted.iter().max() else { return out };
    let recorded = strategy::parse("recorded").expect("recorded is a strategy");
    let mut blocks: Vec<Block> = Vec::new();
    let mut origins: Vec<Origin> = Vec::new();
    strategy::replay_to(journal, &recorded, est, last, |r| {
        let keep = r.unchanged.min(blocks.len());
        if wanted.contains(&r.turn) {
            if let Some(b) = diff::first_break(&blocks, r.blocks, keep) {
                let was = BlockRef::of(&blocks[b.at], origins.get(b.at));
                let why = explain(&was, b.cause, blocks.len(), r.blocks, r.origins, b.at);
                out.insert(r.turn, (b.at + 1, format!("block {} ({was}): {why}", b.at + 1)));
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
    prefix: &HashMap<usize, (usize, String)>,
) -> (BreakCause, Option<usize>, String) {
    let t = &turns[c.at];
    let prev = turns[..c.at].iter().rev().find(|p| p.prompt.is_some_and(|x| x > 0) && p.cache_read.is_some());
    let between = walked.get(c.at).map(|w| &w.1).cloned().unwrap_or_default();
    let ttl = lifetime(turns, c.at);
    let tol = TOLERANCE_TOKENS.max((c.expected as f64 * TOLERANCE_SHARE) as u64);
    let gap = c.gap_ms.map(|g| g / 1000);
    let m = |x: Option<&String>| x.map_or("?".to_string(), |s| crate::text::escape_line(s));
    if between.compaction {
        return (BreakCause::Compaction, None, "a compaction record lies between the two calls".into());
    }
    if let Some(p) = prev.filter(|p| p.model.is_some() && t.model.is_some() && p.model != t.model) {
        return (BreakCause::ModelSwitch, None, format!("model {} → {}", m(p.model.as_ref()), m(t.model.as_ref())));
    }
    if let Some(g) = gap.filter(|&g| g > ttl) {
        return (BreakCause::Ttl, None, format!("idle {} > the {} cache lifetime", duration(g), duration(ttl)));
    }
    if between.system {
        return (BreakCause::SystemOrTools, None, "a system record (system prompt / tools) lies between".into());
    }
    if c.read <= tol {
        return (BreakCause::SystemOrTools, None, "not even the system prompt and tools were read from cache".into());
    }
    if let Some((block, why)) = prefix.get(&t.turn) {
        return (BreakCause::PrefixChange, Some(*block), why.clone());
    }
    let after = gap.map_or(String::new(), |g| format!(" {} after the previous call", duration(g)));
    (BreakCause::Provider, None, format!("the request was an append{after}; nothing recorded explains it"))
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

/// Whether some call writes one-hour cache entries (Claude Code 2.1 writes its system prompt and
/// tools so, and the conversation with the five-minute lifetime).
pub fn writes_some_one_hour(journal: &Journal) -> bool {
    journal.records.iter().any(|rec| match &rec.body {
        Body::Assistant(a) => a.usage.as_ref().is_some_and(|u| u.cache_write_1h_tokens.unwrap_or(0) > 0),
        _ => false,
    })
}

/// `5 s`, `7 min 3 s`, `1 h 2 min`.
pub fn duration(secs: i64) -> String {
    match secs {
        s if s < 60 => format!("{s} s"),
        s if s < 3600 && s % 60 == 0 => format!("{} min", s / 60),
        s if s < 3600 => format!("{} min {} s", s / 60, s % 60),
        s => format!("{} h {} min", s / 3600, (s % 3600) / 60),
    }
}

/// The session as billed. `fallback_model` prices turns whose model the journal does not say
/// (`--model`); `table` is the one price table of the command.
pub fn billed(journal: &Journal, est: &dyn Estimator, table: &PriceTable, fallback_model: Option<&str>) -> Billed {
    let walked = walk(journal, fallback_model);
    let mut per_turn = turns(journal, &walked, table);
    let (cands, kept) = shortfalls(&per_turn, &walked);
    let wanted: Vec<usize> = cands.iter().map(|c| per_turn[c.at].turn).collect();
    let prefix = prefix_changes(journal, est, &wanted);
    let mut breaks = Vec::new();
    for c in &cands {
        let (cause, block, detail) = cause_of(c, &per_turn, &walked, &prefix);
        // A floor loss is the environment's only when the request itself did not change there.
        let changed = walked.get(c.at).is_some_and(|w| w.1.system) || prefix.contains_key(&per_turn[c.at].turn);
        let environment =
            matches!(cause, BreakCause::Provider | BreakCause::Ttl) || (cause == BreakCause::SystemOrTools && !changed);
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
            block,
            detail,
            environment,
        });
    }
    let mut b = totals(per_turn, breaks);
    b.kept_idle_seconds = kept.map(|g| g as f64 / 1000.0);
    b
}

/// Sums the turns that carry usage.
fn totals(per_turn: Vec<BilledTurn>, breaks: Vec<RecordedBreak>) -> Billed {
    let with: Vec<&BilledTurn> = per_turn.iter().filter(|t| t.prompt.is_some() || t.output.is_some()).collect();
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
        tolerance: TOLERANCE,
        kept_idle_seconds: None,
        breaks,
        per_turn,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::tokens::CharEstimator;

    fn journal(lines: &[String]) -> Journal {
        let text = lines.join("\n") + "\n";
        crate::journal::parse_bytes(std::path::Path::new("j.jsonl"), text.as_bytes(), Default::default())
            .expect("valid journal")
    }

    /// A journal: per call (seconds, model, prompt, read, write).
    fn calls(c: &[(u32, &str, u64, u64, u64)]) -> Journal {
        let mut l =
            vec![r#"{"rev":1,"ts":"2026-11-29T10:00:00Z","kind":"session","id":"s","model":"claude-opus-4-6"}"#
                .to_string()];
        for (i, &(s, m, p, r, w)) in c.iter().enumerate() {
            let ts = |x: u32| format!("2026-11-29T10:{:02}:{:02}Z", x / 60, x % 60);
            l.push(format!(r#"{{"rev":{},"ts":"{}","kind":"user","id":"u{i}","text":"q{i}"}}"#, l.len() + 1, ts(s)));
            l.push(format!(
                r#"{{"rev":{},"ts":"{}","kind":"assistant","id":"a{i}","text":"a","model":"{m}","usage":{{"prompt_tokens":{p},"cached_tokens":{r},"cache_write_tokens":{w},"completion_tokens":10}}}}"#,
                l.len() + 1,
                ts(s + 1)
            ));
        }
        journal(&l)
    }

    #[test]
    fn an_unexplained_shortfall_is_a_provider_break_priced_at_write_minus_read() {
        let j = calls(&[
            (0, "claude-opus-4-6", 30_000, 0, 30_000),
            (10, "claude-opus-4-6", 40_000, 30_000, 10_000),
            (15, "claude-opus-4-6", 42_000, 10_000, 32_000),
        ]);
        let b = billed(&j, &CharEstimator, &PriceTable::builtin(), None);
        assert_eq!(b.breaks.len(), 1);
        let x = &b.breaks[0];
        assert_eq!(
            (x.turn, x.cause, x.expected_read, x.cache_read, x.rewritten_tokens),
            (3, BreakCause::Provider, 40_000, 10_000, 30_000)
        );
        assert!((x.cost.unwrap() - 30_000.0 * (6.25 - 0.5) / 1e6).abs() < 1e-12);
        assert_eq!(b.cache_write, Some(72_000));
        assert_eq!(b.input, Some(0));
        assert_eq!(b.hit_rate, Some(40_000.0 / 112_000.0));
        assert!(b.unknown.is_empty());
    }

    #[test]
    fn an_aborted_call_is_skipped_and_the_lifetime_seen_is_kept() {
        // Call 2 billed nothing (pi's aborted requests); call 3 reads what call 1 left, 10 min on.
        let j = calls(&[
            (0, "claude-opus-4-6", 30_000, 0, 30_000),
            (10, "claude-opus-4-6", 0, 0, 0),
            (600, "claude-opus-4-6", 31_000, 30_000, 1_000),
        ]);
        let b = billed(&j, &CharEstimator, &PriceTable::builtin(), None);
        assert!(b.breaks.is_empty(), "{:?}", b.breaks);
        assert_eq!(b.kept_idle_seconds, Some(600.0));
    }

    #[test]
    fn the_environment_prices_each_turn_at_its_model_and_caps_the_unexplained_losses() {
        let j = calls(&[
            (0, "claude-opus-4-6", 30_000, 0, 30_000),
            (10, "claude-sonnet-4-5", 31_000, 0, 31_000),
            (20, "claude-sonnet-4-5", 32_000, 5_000, 27_000),
        ]);
        let b = billed(&j, &CharEstimator, &PriceTable::builtin(), None);
        let flags: Vec<(BreakCause, bool)> = b.breaks.iter().map(|x| (x.cause, x.environment)).collect();
        assert_eq!(flags, [(BreakCause::ModelSwitch, false), (BreakCause::Provider, true)]);
        let p = crate::cache::Pricing::for_session(&j, None, None, PriceTable::builtin());
        let env = p.environment(&b);
        let sonnet = PriceTable::builtin().lookup("claude-sonnet-4-5").unwrap().1;
        assert_eq!((env.model(2), env.price(2)), (Some("claude-sonnet-4-5"), Some(sonnet)));
        assert_eq!((env.read_cap(2), env.read_cap(3)), (None, Some(5_000 + 1_024)));
        let ignored = p.clone().with_provider_breaks(crate::cache::ProviderBreaks::Ignore).environment(&b);
        assert_eq!((ignored.read_cap(3), ignored.price(2)), (None, Some(sonnet)));
        let forced = crate::cache::Pricing::for_session(&j, Some("claude-opus-4-6"), None, PriceTable::builtin());
        assert_eq!(forced.environment(&b).price(2), None, "--model prices every turn as that model");
    }

    #[test]
    fn small_shortfalls_are_within_tolerance() {
        // 1,000 tokens short: under 1,024.
        let j = calls(&[(0, "claude-opus-4-6", 30_000, 0, 30_000), (10, "claude-opus-4-6", 31_000, 29_000, 2_000)]);
        assert!(billed(&j, &CharEstimator, &PriceTable::builtin(), None).breaks.is_empty());
    }

    #[test]
    fn causes_in_order_ttl_model_switch_floor() {
        let j = calls(&[
            (0, "claude-opus-4-6", 30_000, 0, 30_000),
            (400, "claude-opus-4-6", 31_000, 0, 31_000),
            (410, "claude-sonnet-4-5", 32_000, 0, 32_000),
            (420, "claude-sonnet-4-5", 33_000, 0, 33_000),
        ]);
        let b = billed(&j, &CharEstimator, &PriceTable::builtin(), None);
        let causes: Vec<BreakCause> = b.breaks.iter().map(|x| x.cause).collect();
        assert_eq!(causes, [BreakCause::Ttl, BreakCause::ModelSwitch, BreakCause::SystemOrTools]);
        // Each message priced at its own model.
        let opus = PriceTable::builtin().lookup("claude-opus-4-6").unwrap().1;
        let sonnet = PriceTable::builtin().lookup("claude-sonnet-4-5").unwrap().1;
        assert_eq!(b.per_turn[2].cost, Some(sonnet.billed(0, 32_000, 0, 0, 10)));
        assert_eq!(b.per_turn[0].cost, Some(opus.billed(0, 30_000, 0, 0, 10)));
    }

    #[test]
    fn usage_without_writes_leaves_them_unknown() {
        let j = journal(&[
            r#"{"rev":1,"ts":"2026-11-29T10:00:00Z","kind":"session","id":"s","model":"gpt-5"}"#.into(),
            r#"{"rev":2,"ts":"2026-11-29T10:00:01Z","kind":"user","id":"u","text":"q"}"#.into(),
            r#"{"rev":3,"ts":"2026-11-29T10:00:02Z","kind":"assistant","id":"a","text":"x","usage":{"prompt_tokens":5000,"cached_tokens":0,"completion_tokens":3}}"#.into(),
        ]);
        let b = billed(&j, &CharEstimator, &PriceTable::builtin(), None);
        assert_eq!(b.cache_write, None);
        assert_eq!(b.unknown, ["cache_write"]);
        assert_eq!(b.input, Some(5000));
        assert_eq!(b.cost, Some((5000.0 * 1.25 + 3.0 * 10.0) / 1e6));
    }

    #[test]
    fn a_call_without_a_price_is_billed_at_the_cost_its_log_recorded() {
        let j = journal(&[
            r#"{"rev":1,"ts":"2026-11-29T10:00:00Z","kind":"session","id":"s","model":"qwen3:8b"}"#.into(),
            r#"{"rev":2,"ts":"2026-11-29T10:00:01Z","kind":"user","id":"u","text":"q"}"#.into(),
            r#"{"rev":3,"ts":"2026-11-29T10:00:02Z","kind":"assistant","id":"a","text":"x","usage":{"prompt_tokens":5000,"completion_tokens":3,"cost_usd":0.0}}"#.into(),
            r#"{"rev":4,"ts":"2026-11-29T10:00:03Z","kind":"user","id":"u2","text":"q"}"#.into(),
            r#"{"rev":5,"ts":"2026-11-29T10:00:04Z","kind":"assistant","id":"a2","text":"y","usage":{"prompt_tokens":6000,"completion_tokens":3}}"#.into(),
            r#"{"rev":6,"ts":"2026-11-29T10:00:05Z","kind":"model","model":"gpt-5"}"#.into(),
            r#"{"rev":7,"ts":"2026-11-29T10:00:06Z","kind":"user","id":"u3","text":"q"}"#.into(),
            r#"{"rev":8,"ts":"2026-11-29T10:00:07Z","kind":"assistant","id":"a3","text":"z","usage":{"prompt_tokens":1000,"completion_tokens":1,"cost_usd":9.0}}"#.into(),
        ]);
        let b = billed(&j, &CharEstimator, &PriceTable::builtin(), None);
        assert_eq!((b.turns, b.unpriced_turns, b.recorded_cost_turns), (3, 1, 1));
        // A known price wins over the recorded cost; the unpriced call with a recorded cost adds it.
        assert_eq!(b.cost, Some(0.0 + (1000.0 * 1.25 + 10.0) / 1e6));
    }

    #[test]
    fn durations_read_naturally() {
        assert_eq!(duration(5), "5 s");
        assert_eq!(duration(423), "7 min 3 s");
        assert_eq!(duration(300), "5 min");
        assert_eq!(duration(3720), "1 h 2 min");
    }
}
