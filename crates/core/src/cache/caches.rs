//! The provider side of one replay ([`super::replay::simulate`]): one prompt cache per model (a
//! switch finds the new model's cache cold, switching back finds the old one as its lifetime left
//! it), each turn's price, the cache lifetimes the session shows, and the recorded cache losses
//! replayed ([`super::environment::Environment`]).

use std::collections::HashMap;

use super::billed::{writes_one_hour, writes_some_one_hour, TTL_1H};
use super::environment::Environment;
use super::model::{Outcome, Request, Simulator, MIN_TOKENS, TTL_MS};
use super::options::Options;
use super::prices::{Above200k, Price};
use super::window::cache_minimum;
use crate::journal::Journal;

/// The caches and prices a replay runs against.
pub(crate) struct Caches<'a> {
    opts: &'a Options,
    env: Option<&'a Environment>,
    /// Every recorded write is a one-hour write: entries live an hour, writes at the one-hour rate.
    one_hour: bool,
    /// Some writes are one-hour writes, not all: the first `pre` (virtual prefix) blocks live an
    /// hour and their writes cost the one-hour rate (Claude Code 2.1 caches its system prompt
    /// and tools so, the conversation for five minutes).
    prefix_hour: bool,
    /// Per turn (index = turn − 1): the call wrote to the cache, every token of it with the
    /// one-hour lifetime. The agent asks for the lifetime per request (`cache_control.ttl`), so
    /// every replay prices that turn's writes at the one-hour rate, whatever the others asked.
    hour_turns: Vec<bool>,
    pre: usize,
    /// The cache of the current model, the model, and the other models' caches.
    pub sim: Simulator,
    model: Option<&'a str>,
    parked: HashMap<Option<&'a str>, Simulator>,
    started: bool,
    /// The next request is the first served by the current model's cache after a model switch.
    switched: bool,
}

impl<'a> Caches<'a> {
    /// The caches of a replay of `journal` whose requests start with `pre` virtual prefix blocks.
    pub fn new(journal: &Journal, opts: &'a Options, pre: usize) -> Caches<'a> {
        let one_hour = writes_one_hour(journal);
        let prefix_hour = !one_hour && pre > 0 && writes_some_one_hour(journal);
        let mut c = Caches {
            opts,
            env: opts.env.as_deref(),
            one_hour,
            prefix_hour,
            hour_turns: super::billed::one_hour_turns(journal),
            pre,
            sim: Simulator::new(opts.cache),
            model: None,
            parked: HashMap::new(),
            started: false,
            switched: false,
        };
        c.model = c.env.and_then(|e| e.model(1));
        c.sim = c.fresh();
        c
    }

    /// A new (cold) cache for the current model: entries live the model's lifetime, or as long as
    /// the provider's cache was seen to survive; nothing below the model's minimum cacheable
    /// prompt is cached (the turn's model's, else the session's).
    fn fresh(&self) -> Simulator {
        let kept = self.env.and_then(|e| e.kept_ms).unwrap_or(0);
        let hour = (TTL_1H * 1000).max(kept);
        // The model's minimum is in provider tokens: it applies where the replay counts in them
        // (an imported session: blocks × the fit's slope, `pre` > 0); a journal's raw estimates
        // keep the providers' general 1,024.
        let min = match self.pre {
            0 => MIN_TOKENS,
            _ => self.model.and_then(cache_minimum).or(self.opts.cache_min).unwrap_or(MIN_TOKENS),
        };
        let s = Simulator::new(self.opts.cache).with_min(min);
        match (self.one_hour, self.prefix_hour) {
            (true, _) => s.with_ttl(hour),
            (false, true) => s.with_ttl(TTL_MS.max(kept)).with_long_prefix(self.pre, hour),
            _ => s.with_ttl(TTL_MS.max(kept)),
        }
    }

    /// Makes the cache of `turn`'s model the current one.
    pub fn switch_to(&mut self, turn: usize) {
        let m = self.env.and_then(|e| e.model(turn));
        if !self.started {
            self.started = true;
            if m != self.model {
                self.model = m;
                self.sim = self.fresh();
            }
        } else if m.is_some() && m != self.model {
            let next = self.parked.remove(&m).unwrap_or_else(|| self.fresh());
            self.parked.insert(self.model, std::mem::replace(&mut self.sim, next));
            self.model = m;
            self.switched = true;
        }
    }

    /// `turn`'s price as the table has it: its model's, else the session's.
    pub fn price(&self, turn: usize) -> Option<Price> {
        self.env.and_then(|e| e.price(turn)).or(self.opts.price)
    }

    /// Serves `req` (turn `turn`, sharing its first `held` blocks with the previous request)
    /// from the current cache, after the loss the provider recorded there, if any.
    pub fn step(&mut self, turn: usize, req: &Request, held: usize) -> Outcome {
        let Some(env) = self.env else { return self.sim.step(req) };
        let mut o = self.step_env(env, turn, req, held);
        if std::mem::take(&mut self.switched) {
            // The first call after a model switch finds this model's cache as the session left
            // it (cold, or expired), but the provider's cache of the model is shared by every
            // request with the same prefix (other sessions, subagents): as at the session's first
            // call, the part of the unrecorded prefix (system prompt, tools) the provider read
            // was warm, and the replay reads it too.
            o.read_at_least(env.provider_read(turn).unwrap_or(0).min(req.prefix_tokens(self.pre)));
        }
        if let Some(tail) = env.unmarked(turn) {
            self.sim.unmark(req, tail, &mut o);
        }
        o
    }

    /// [`Caches::step`] before the uncached tail.
    fn step_env(&mut self, env: &Environment, turn: usize, req: &Request, held: usize) -> Outcome {
        match env.read_cap(turn) {
            // The provider read only this much here and nothing recorded explains why: the
            // simulated cache loses the rest too, and keeps what the provider read (nothing when
            // it read nothing: the tolerance in the cap is for estimates, not a read).
            Some(cap) => {
                let read = env.provider_read(turn).unwrap_or(0);
                let held = if read > 0 { held } else { 0 };
                let mut o = self.sim.step_after_loss(req, cap, held);
                // The simulator keeps whole blocks; the provider's read ends where its cache entry
                // ended, inside a block as often as not. It is kept wherever it ends within the
                // unrecorded prefix (whose split into virtual blocks is ours, not the provider's;
                // after an idle gap the provider still reads the part other requests with the same
                // system prompt and tools kept alive) or within what this request repeats of the
                // previous one (the entry that call left): dropping the rest of the block would
                // write again what the provider read.
                o.read_at_least(read.min(req.prefix_tokens(self.pre.max(held))));
                o
            }
            // A loss within the break tolerance: the read falls short of what this request repeats
            // of the previous one by the provider's shortfall (a request that repeats no more of
            // it than the unrecorded prefix, a counterfactual's rewrite, loses nothing there).
            None => match env.lost(turn) {
                Some(short) if held > self.pre => {
                    let read = req.prefix_tokens(held).saturating_sub(short);
                    let mut o = self.sim.step_after_loss(req, read, held);
                    o.read_at_least(read);
                    o
                }
                _ => self.sim.step(req),
            },
        }
    }

    /// The cost of `o` (turn `turn`, request `req`, `output` tokens) in $; `None` without a price.
    /// A call the provider billed nothing for (`free`: pi's aborted requests) costs nothing.
    pub fn cost(&self, turn: usize, req: &Request, o: &Outcome, output: u64, free: bool) -> Option<f64> {
        if let Some(env) = self.env.filter(|e| e.unpriced(turn)) {
            // A model without a price does not borrow the session's: the cost the log recorded
            // (the same in every replay, as in "as billed"), else none.
            return if free { Some(0.0) } else { env.recorded_cost(turn) };
        }
        let p = self.price(turn)?;
        let p = match self.env {
            Some(e) if e.writes_unbilled => {
                Price { write: Some(p.input), above_200k: Above200k { write: p.above_200k.input, ..p.above_200k }, ..p }
            }
            _ => p,
        };
        let hour = self.one_hour || self.hour_turns.get(turn.wrapping_sub(1)) == Some(&true);
        let one_hour = Above200k { write: p.above_200k.input.map(|i| i * 2.0), ..p.above_200k };
        let p = if hour { Price { write: Some(p.write_1h_rate()), above_200k: one_hour, ..p } } else { p };
        // Of the write, the unrecorded prefix's part at the one-hour rate.
        let h = match self.prefix_hour && !hour {
            true => req.prefix_tokens(self.pre).saturating_sub(o.cached).min(o.write),
            false => 0,
        };
        let new = o.new_tokens();
        Some(match (free, h) {
            (true, _) => 0.0,
            (false, 0) => p.cost(new, o.write, o.cached, output),
            (false, h) => p.billed(new.saturating_sub(o.write), o.write - h, h, o.cached, output),
        })
    }
}
