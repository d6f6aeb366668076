//! Per arm: runs, passes, and for each measure the mean ± sd, a bootstrap 95 % interval, and the
//! contrast with the reference arm (a ratio for cost, a difference otherwise) with its interval;
//! then a verdict in plain words that says no more than the intervals do.

use serde::Serialize;

use super::run::{Metric, Run};
use super::stats::{self, Bootstrap, Contrast};

/// Real runs, or the reference arm's runs replayed under another strategy.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, schemars::JsonSchema)]
#[serde(tag = "kind", rename_all = "snake_case")]
pub enum ArmKind {
    Runs,
    /// Counterfactual: `strategy` replayed over the runs of arm `of`; compared with the replay
    /// of `recorded` over the same runs, through the same cache model.
    Replay {
        strategy: String,
        of: String,
    },
}

/// One measure of one arm.
#[derive(Debug, Clone, Serialize, schemars::JsonSchema)]
pub struct MetricSummary {
    pub metric: Metric,
    /// Runs that have this measure.
    pub n: usize,
    pub mean: Option<f64>,
    pub sd: Option<f64>,
    /// Bootstrap 95 % interval of the mean (`None` under two runs).
    pub interval: Option<[f64; 2]>,
    /// Against the reference arm; `None` for the reference itself.
    pub vs_reference: Option<Versus>,
}

/// A contrast with the reference.
#[derive(Debug, Clone, Serialize, schemars::JsonSchema)]
pub struct Versus {
    pub contrast: Contrast,
    pub value: Option<f64>,
    pub interval: Option<[f64; 2]>,
}

/// One arm, summarised.
#[derive(Debug, Clone, Serialize, schemars::JsonSchema)]
pub struct ArmSummary {
    pub label: String,
    #[serde(flatten)]
    pub kind: ArmKind,
    pub runs: usize,
    /// Runs with an outcome, and how many of them passed.
    pub judged: usize,
    pub passed: usize,
    pub metrics: Vec<MetricSummary>,
    pub verdict: String,
}

impl ArmSummary {
    pub fn metric(&self, m: Metric) -> Option<&MetricSummary> {
        self.metrics.iter().find(|s| s.metric == m)
    }
}

/// The values of `m` over `runs` (runs without it left out).
pub fn values(runs: &[&Run], m: Metric) -> Vec<f64> {
    runs.iter().filter_map(|r| r.measures.get(m)).collect()
}

/// Summarises `runs` against `reference` (`None` for the reference arm itself); `index` makes
/// each interval's random stream its own.
pub fn summarize(
    label: &str,
    kind: ArmKind,
    runs: &[&Run],
    reference: Option<(&str, &[&Run])>,
    boot: &Bootstrap,
    index: usize,
) -> ArmSummary {
    let metrics: Vec<MetricSummary> = Metric::ALL
        .iter()
        .enumerate()
        .map(|(k, &m)| {
            let xs = values(runs, m);
            let stream = (index as u64) << 8 | (k as u64) << 1;
            let vs_reference = reference.map(|(_, r)| {
                let rs = values(r, m);
                let contrast = if m == Metric::Cost { Contrast::Ratio } else { Contrast::Difference };
                let value = stats::mean(&xs).zip(stats::mean(&rs)).and_then(|(a, b)| contrast.of(a, b));
                let interval = boot.contrast(&xs, &rs, contrast, stream | 1).map(|(a, b)| [a, b]);
                Versus { contrast, value, interval }
            });
            MetricSummary {
                metric: m,
                n: xs.len(),
                mean: stats::mean(&xs),
                sd: stats::sd(&xs),
                interval: boot.mean(&xs, stream).map(|(a, b)| [a, b]),
                vs_reference,
            }
        })
        .collect();
    let judged = runs.iter().filter(|r| r.outcome.is_some()).count();
    let passed = runs.iter().filter(|r| r.outcome.as_ref().is_some_and(|o| o.passed)).count();
    let mut arm = ArmSummary {
        label: label.to_string(),
        kind,
        runs: runs.len(),
        judged,
        passed,
        metrics,
        verdict: String::new(),
    };
    arm.verdict = match reference {
        None => format!("the reference ({})", passes(&arm)),
        Some((name, r)) => verdict(&arm, name, r),
    };
    arm
}

/// `3/3 passed`, or `no outcomes`.
pub fn passes(a: &ArmSummary) -> String {
    match a.judged {
        0 => "no outcomes".into(),
        j if j < a.runs => format!("{}/{} passed, {} unjudged", a.passed, j, a.runs - j),
        j => format!("{}/{} passed", a.passed, j),
    }
}

/// A ratio as `5.8×` (two decimals under 1).
pub fn times(r: f64) -> String {
    if r.abs() < 1.0 {
        format!("{r:.2}×")
    } else {
        format!("{r:.1}×")
    }
}

/// The verdict of a compared arm: passes as counted, cost by its interval, and turns and cache
/// hits only when their interval excludes no difference.
fn verdict(a: &ArmSummary, reference: &str, r: &[&Run]) -> String {
    let mut parts = Vec::new();
    if let ArmKind::Replay { of, .. } = &a.kind {
        parts.push(format!("replay of {of}'s runs: a replay cannot say whether the run would pass"));
    } else {
        let rj = r.iter().filter(|x| x.outcome.is_some()).count();
        let rp = r.iter().filter(|x| x.outcome.as_ref().is_some_and(|o| o.passed)).count();
        // Runs with no outcome are named in every verdict, on either side (issue 30).
        let unjudged = |n: usize| if n > 0 { format!(" + {n} unjudged") } else { String::new() };
        let (ua, ur) = (unjudged(a.runs - a.judged), unjudged(r.len() - rj));
        if a.judged == 0 || rj == 0 {
            parts.push(format!(
                "passes unknown (no outcomes on one side: {}/{}{ua} vs {rp}/{rj}{ur})",
                a.passed, a.judged
            ));
        } else {
            let (x, y) = (a.passed as f64 / a.judged as f64, rp as f64 / rj as f64);
            let word = if x < y {
                "fewer passes than"
            } else if x > y {
                "more passes than"
            } else {
                "as many passes as"
            };
            parts.push(format!("{word} {reference} ({}/{}{ua} vs {rp}/{rj}{ur})", a.passed, a.judged));
        }
    }
    if let Some(v) = a.metric(Metric::Cost).and_then(|m| m.vs_reference.as_ref()) {
        parts.push(cost_words(v, reference));
    }
    for (m, more, less) in
        [(Metric::Turns, "more turns", "fewer turns"), (Metric::CacheHitRate, "more cache hits", "fewer cache hits")]
    {
        let Some(v) = a.metric(m).and_then(|s| s.vs_reference.as_ref()) else { continue };
        match v.interval {
            Some([lo, _]) if lo > 0.0 => parts.push(more.to_string()),
            Some([_, hi]) if hi < 0.0 => parts.push(less.to_string()),
            _ => {}
        }
    }
    parts.join("; ")
}

fn cost_words(v: &Versus, reference: &str) -> String {
    let Some(r) = v.value else { return format!("cost not comparable with {reference} (no price)") };
    match v.interval {
        None => format!("{} the cost of {reference} (too few runs for an interval)", times(r)),
        Some([lo, hi]) if lo > 1.0 || hi < 1.0 => {
            format!("{} the cost, interval {}–{}", times(r), times(lo).trim_end_matches('×'), times(hi))
        }
        Some([lo, hi]) => format!(
            "cost not distinguishable from {reference} ({}, interval {}–{})",
            times(r),
            times(lo).trim_end_matches('×'),
            times(hi)
        ),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::experiment::run::{Measures, Outcome, OutcomeSource};

    fn run(cost: f64, turns: f64, passed: bool) -> Run {
        Run {
            arm: String::new(),
            session: String::new(),
            format: "ctxj".into(),
            model: None,
            outcome: Some(Outcome { passed, source: OutcomeSource::Manifest, check: None }),
            measures: Measures { cost: Some(cost), turns: Some(turns), ..Measures::default() },
            per_turn: Vec::new(),
        }
    }

    #[test]
    fn the_verdict_claims_only_what_the_interval_supports() {
        let boot = Bootstrap { seed: 1, resamples: 2_000 };
        let base = [run(1.0, 10.0, true), run(1.0, 11.0, true), run(1.0, 12.0, true)];
        let bad = [run(5.0, 40.0, false), run(6.0, 41.0, false), run(7.0, 42.0, false)];
        let same = [run(0.5, 10.0, true), run(1.0, 11.0, true), run(1.5, 12.0, true)];
        let b: Vec<&Run> = base.iter().collect();
        let v = summarize("t", ArmKind::Runs, &bad.iter().collect::<Vec<_>>(), Some(("baseline", &b)), &boot, 1);
        assert_eq!(v.verdict, "fewer passes than baseline (0/3 vs 3/3); 6.0× the cost, interval 5.0–7.0×; more turns");
        let s = summarize("s", ArmKind::Runs, &same.iter().collect::<Vec<_>>(), Some(("baseline", &b)), &boot, 2);
        assert_eq!(
            s.verdict,
            "as many passes as baseline (3/3 vs 3/3); cost not distinguishable from baseline (1.0×, interval 0.50–1.5×)"
        );
        let r = summarize("baseline", ArmKind::Runs, &b, None, &boot, 0);
        assert_eq!(r.verdict, "the reference (3/3 passed)");
        assert_eq!(r.metric(Metric::Cost).unwrap().sd, Some(0.0));
    }

    #[test]
    fn regression_unjudged_runs_are_named_in_a_compared_arms_verdict() {
        let boot = Bootstrap { seed: 1, resamples: 200 };
        let base = [run(1.0, 10.0, true), run(1.0, 11.0, true), run(1.0, 12.0, true)];
        let mut other = [run(1.0, 10.0, true), run(1.0, 11.0, false), run(1.0, 12.0, true)];
        other[2].outcome = None;
        let b: Vec<&Run> = base.iter().collect();
        let v = summarize("o", ArmKind::Runs, &other.iter().collect::<Vec<_>>(), Some(("baseline", &b)), &boot, 1);
        assert!(v.verdict.starts_with("fewer passes than baseline (1/2 + 1 unjudged vs 3/3)"), "{}", v.verdict);
        for r in &mut other {
            r.outcome = None;
        }
        let v = summarize("o", ArmKind::Runs, &other.iter().collect::<Vec<_>>(), Some(("baseline", &b)), &boot, 1);
        assert!(
            v.verdict.starts_with("passes unknown (no outcomes on one side: 0/0 + 3 unjudged vs 3/3)"),
            "{}",
            v.verdict
        );
    }
}
