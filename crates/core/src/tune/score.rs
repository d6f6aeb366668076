//! One configuration scored on one session (`docs/tune.md`, "Scores"): the provider-faithful
//! replay of `cache::simulate_observed` (each turn's model and price, the recorded cache losses,
//! the real gaps between calls), and, from the requests it hands on, demand-weighted retention,
//! the dropped-and-needed events, summaries stacked and the artifact trail.

use std::collections::{HashMap, HashSet};

use crate::cache::{self, Options, Price, Simulation};
use crate::journal::{Body, Journal};
use crate::projection::Block;
use crate::strategy::{Origin, Strategy};
use crate::tokens::Estimator;

use super::demand::{verbatim_calls, Demands};

/// A demand the configuration did not keep verbatim.
#[derive(Debug, Clone, PartialEq, serde::Serialize, schemars::JsonSchema)]
pub struct Dropped {
    pub turn: usize,
    pub artifact: String,
    pub source_call: String,
    pub source_turn: usize,
    pub tokens: u64,
    /// What the source result had become: `elided (turn 5)`, `summary (turn 9)`, `absent`, ….
    pub now: String,
}

/// The scores of one configuration on one session.
#[derive(Debug, Clone, PartialEq, serde::Serialize, schemars::JsonSchema)]
pub struct Score {
    /// The strategy it replayed as.
    pub strategy: String,
    /// Replayed cost, $ (summarizer calls included); `None` without a price.
    pub cost: Option<f64>,
    /// Σ prompt tokens and the peak prompt.
    pub prompt: u64,
    pub peak_prompt: u64,
    pub turns: usize,
    /// Demanded tokens, and of them the ones kept verbatim.
    pub demanded: u64,
    pub kept: u64,
    /// Needed-later-dropped events (each source result counted once, at its first miss).
    pub dropped: Vec<Dropped>,
    /// Re-fetch penalty before scaling: Σ over dropped sources of (their tokens + the prompt at the
    /// turn that missed them).
    pub refetch_tokens: u64,
    /// The same in $ at the session's price (tokens at the input rate, the prompt at the cached
    /// rate), unscaled; `--penalty m` multiplies it.
    pub refetch_cost: f64,
    /// Compaction passes, and the most summaries any request carried.
    pub compactions: usize,
    pub stacked_summaries: usize,
    /// Calls whose prompt is above 50 % / 80 % of the window.
    pub above_50: usize,
    pub above_80: usize,
    /// Edited files whose last edit and last read stay verbatim in the last request, of all
    /// edited files (before the last turn).
    pub trail_kept: usize,
    pub trail_files: usize,
    /// Raw tokens of the last request's conversation (every block but the system block, the
    /// unit of `compact-at-Nt`).
    #[serde(skip)]
    #[schemars(skip)]
    pub last_conversation: u64,
}

impl Score {
    /// Demanded tokens kept ÷ demanded tokens (1 when nothing was demanded).
    pub fn retention(&self) -> f64 {
        if self.demanded == 0 {
            1.0
        } else {
            self.kept as f64 / self.demanded as f64
        }
    }
}

/// What a session shares between its configurations.
pub struct SessionCx<'a> {
    pub journal: &'a Journal,
    pub est: &'a dyn Estimator,
    pub opts: Options,
    pub limits: &'a cache::Limits,
    pub demands: &'a Demands,
    pub window: u64,
    pub price: Option<Price>,
}

/// Replays `strat` on the session and scores it.
pub fn score(cx: &SessionCx<'_>, strat: &Strategy) -> Score {
    let events = &cx.demands.events;
    let mut next = 0;
    let (mut kept, mut stacked, mut passes) = (0u64, 0usize, 0usize);
    let mut dropped: Vec<Dropped> = Vec::new();
    let mut missed: HashSet<String> = HashSet::new();
    let last_turn = cx.journal.turns.len();
    let mut trail = (0, 0);
    let mut last_conversation = 0;
    let mut sim: Simulation = cache::simulate_observed(
        cx.journal,
        strat,
        cx.est,
        cx.opts.clone(),
        |_, _| {},
        |r| {
            passes += r.summarized.len();
            let summaries = r
                .origins
                .iter()
                .zip(r.blocks)
                .filter(|(o, b)| {
                    matches!(o, Origin::Summary { .. } | Origin::RecordedSummary) || matches!(b, Block::Summary { .. })
                })
                .count();
            stacked = stacked.max(summaries);
            let here = next;
            while next < events.len() && events[next].turn <= r.turn {
                next += 1;
            }
            let at: Vec<_> = events[here..next].iter().filter(|d| d.turn == r.turn).collect();
            if at.is_empty() && r.turn != last_turn {
                return;
            }
            let (results, calls) = verbatim_calls(r.blocks, r.origins);
            for d in at {
                if results.contains(d.source_call.as_str()) {
                    kept += d.tokens;
                } else if missed.insert(d.source_call.clone()) {
                    let now = r
                        .blocks
                        .iter()
                        .zip(r.origins)
                        .find(|(b, _)| matches!(b, Block::Result { call, .. } if *call == d.source_call))
                        .map_or_else(|| "absent".to_string(), |(_, o)| o.describe());
                    dropped.push(Dropped {
                        turn: d.turn,
                        artifact: d.artifact.clone(),
                        source_call: d.source_call.clone(),
                        source_turn: d.source_turn,
                        tokens: d.tokens,
                        now,
                    });
                }
            }
            if r.turn == last_turn {
                last_conversation =
                    r.blocks.iter().filter(|b| !matches!(b, Block::System { .. })).map(|b| cx.est.block(b)).sum();
                for e in &cx.demands.edited {
                    if e.turn >= r.turn {
                        continue;
                    }
                    trail.1 += 1;
                    let read_ok = e.read.as_ref().is_none_or(|c| results.contains(c.as_str()));
                    if calls.contains(e.edit.as_str()) && read_ok {
                        trail.0 += 1;
                    }
                }
            }
        },
    );
    cache::figures::check(&mut sim, cx.limits);
    let compactions = match strat.is_recorded() {
        true => cx.journal.records.iter().filter(|r| matches!(r.body, Body::Compact(_))).count(),
        false => passes,
    };
    let prompt_at: HashMap<usize, u64> = sim.turns.iter().map(|t| (t.turn, t.prompt)).collect();
    let mut refetch_tokens = 0;
    let mut refetch_cost = 0.0;
    for d in &dropped {
        let p = prompt_at.get(&d.turn).copied().unwrap_or(0);
        refetch_tokens += d.tokens + p;
        if let Some(price) = cx.price {
            refetch_cost += (d.tokens as f64 * price.input + p as f64 * price.cached_rate()) / 1e6;
        }
    }
    let over = |pct: u64| {
        (sim.turns.iter()).filter(|t| u128::from(t.prompt) * 100 > u128::from(cx.window) * u128::from(pct)).count()
    };
    let s = &sim.summary;
    Score {
        strategy: strat.name.clone(),
        cost: s.cost,
        prompt: s.prompt,
        peak_prompt: s.peak_prompt,
        turns: s.turns,
        demanded: cx.demands.tokens(),
        kept,
        dropped,
        refetch_tokens,
        refetch_cost,
        compactions,
        stacked_summaries: stacked,
        above_50: over(50),
        above_80: over(80),
        trail_kept: trail.0,
        trail_files: trail.1,
        last_conversation,
    }
}

#[cfg(test)]
mod tests {
    use proptest::prelude::*;

    use super::*;
    use crate::cache::CacheModel;
    use crate::strategy::testkit::*;
    use crate::tokens::CharEstimator;

    const PATHS: &[&str] = &["src/a.rs", "src/b.rs", "lib/c.py", "README.md"];
    const TOOLS: &[&str] = &["Read", "Edit", "Bash"];

    /// A session of `steps` (tool, path, result size): one call per turn.
    fn made(steps: &[(usize, usize, usize)]) -> Journal {
        let mut b = vec![session(), system("sys"), user("u0", "go")];
        for (i, &(t, p, n)) in steps.iter().enumerate() {
            let id = format!("c{i}");
            let args = match TOOLS[t] {
                "Bash" => format!(r#"{{"command":"cat {}"}}"#, PATHS[p]),
                _ => format!(r#"{{"file_path":"{}"}}"#, PATHS[p]),
            };
            b.push(assistant(&format!("a{i}"), "", vec![call(&id, TOOLS[t], &args)]));
            b.push(result(&id, TOOLS[t], &"x".repeat(n)));
        }
        b.push(assistant("end", "done", vec![]));
        journal(b)
    }

    fn run(j: &Journal, name: &str) -> Score {
        let est = CharEstimator;
        let demands = super::super::demand::demands(j, &est);
        let limits = crate::cache::Limits::default();
        let cx = SessionCx {
            journal: j,
            est: &est,
            opts: Options::plain(CacheModel::Anthropic, None),
            limits: &limits,
            demands: &demands,
            window: 10_000,
            price: None,
        };
        score(&cx, &crate::strategy::parse(name).unwrap())
    }

    #[test]
    fn an_edit_after_three_reads_needs_the_first_read() {
        // Read a, b, c; edit a: the edit needs the read of turn 1, elided with keep 1.
        let j = made(&[(0, 0, 1_500), (0, 1, 1_500), (0, 2, 1_500), (1, 0, 10)]);
        let s = run(&j, "elide-200-1-keep-1");
        assert_eq!(s.dropped.len(), 1, "{:?}", s.dropped);
        assert_eq!((s.dropped[0].turn, s.dropped[0].source_call.as_str(), s.dropped[0].source_turn), (4, "c0", 1));
        assert_eq!(s.kept, 0);
        assert_eq!(run(&j, "baseline").retention(), 1.0);
        // The edit's file was read and edited: the trail is lost with the read.
        assert_eq!((s.trail_kept, s.trail_files), (0, 1));
    }

    proptest! {
        /// Unmanaged replays keep every demanded token; no replay keeps more than was demanded,
        /// and each dropped event is a demanded source missing at its turn.
        #[test]
        fn retention_bounds(steps in prop::collection::vec((0..3usize, 0..4usize, 0..2_000usize), 1..25)) {
            let j = made(&steps);
            let base = run(&j, "baseline");
            prop_assert_eq!(base.kept, base.demanded);
            prop_assert!(base.dropped.is_empty());
            prop_assert_eq!(base.trail_kept, base.trail_files);
            for name in ["elide-200-1-keep-1", "elide-2-1-keep-3", "sliding-4", "compact-at-300t-repeat", "truncate-10"] {
                let s = run(&j, name);
                prop_assert_eq!(s.demanded, base.demanded);
                prop_assert!(s.kept <= s.demanded, "{}: {} > {}", name, s.kept, s.demanded);
                prop_assert!((0.0..=1.0).contains(&s.retention()));
                let lost: u64 = s.dropped.iter().map(|d| d.tokens).sum();
                prop_assert!(lost <= s.demanded - s.kept, "{}: dropped {} > missed {}", name, lost, s.demanded - s.kept);
                prop_assert_eq!(s.kept == s.demanded, s.dropped.is_empty(), "{}", name);
                for d in &s.dropped {
                    prop_assert!(d.source_turn < d.turn);
                }
            }
        }
    }
}
