//! Configurations aggregated over sessions, the non-dominated ones on (effective cost,
//! retention), the knee, and the recommendation with its deltas, per-session savings and
//! confidence (`docs/tune.md`, "Frontier and recommendation").

use super::knobs::Config;
use super::SessionResult;

/// `--objective`: which frontier point is recommended.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, serde::Serialize, schemars::JsonSchema)]
#[serde(rename_all = "lowercase")]
pub enum Objective {
    /// The cheapest point (effective cost).
    Cost,
    /// The knee of the frontier.
    #[default]
    Balanced,
    /// The most retaining point (the cheapest of those).
    Retention,
}

/// One configuration over every session.
#[derive(Debug, Clone, PartialEq, serde::Serialize, schemars::JsonSchema)]
pub struct Point {
    pub name: String,
    /// Σ replayed cost over the priced sessions, $.
    pub cost: Option<f64>,
    /// The re-fetch penalty × `--penalty`, $.
    pub penalty: f64,
    /// `cost + penalty`: the axis the frontier is drawn on.
    pub effective: Option<f64>,
    /// Σ kept demanded tokens ÷ Σ demanded tokens (1 when nothing was demanded).
    pub retention: f64,
    pub demanded: u64,
    /// Needed-later-dropped events.
    pub dropped: usize,
    pub refetch_tokens: u64,
    /// Σ prompt tokens and the largest peak prompt.
    pub prompt: u64,
    pub peak_prompt: u64,
    pub compactions: usize,
    /// The most summaries one request carried, over sessions.
    pub stacked_summaries: usize,
    /// Share of calls above 50 % / 80 % of the window.
    pub share_above_50: f64,
    pub share_above_80: f64,
    /// Share of edited files whose last edit and last read stay verbatim (None: no edits).
    pub trail: Option<f64>,
    pub on_frontier: bool,
}

/// A change from one point to the recommended one.
#[derive(Debug, Clone, PartialEq, serde::Serialize, schemars::JsonSchema)]
pub struct Delta {
    pub against: String,
    /// Recommended − other, $ and relative to the other's.
    pub cost: Option<f64>,
    pub cost_pct: Option<f64>,
    /// Recommended − other, in retention points (0..1).
    pub retention: f64,
    /// Σ prompt tokens, relative.
    pub prompt_pct: Option<f64>,
}

/// The recommended configuration.
#[derive(Debug, Clone, PartialEq, serde::Serialize, schemars::JsonSchema)]
pub struct Recommendation {
    /// Index into `points` / `configs`.
    pub point: usize,
    pub name: String,
    pub knob: String,
    pub paste: String,
    pub why: String,
    pub vs_default: Option<Delta>,
    pub vs_recorded: Option<Delta>,
    /// What the provider billed over the priced sessions, and recommended cost − billed.
    pub billed: Option<f64>,
    pub vs_billed: Option<f64>,
    /// Per-session savings of effective cost against the harness default, p10 / p50 / p90.
    pub savings_p10: Option<f64>,
    pub savings_p50: Option<f64>,
    pub savings_p90: Option<f64>,
    /// Share of sessions where it weakly dominates the default (effective cost ≤ and retention ≥).
    pub confidence: Option<f64>,
    pub sessions: usize,
    /// Whether the same point is recommended at `--penalty` 0.5, 1 and 2.
    pub stable: bool,
}

/// One point per configuration.
pub fn points(configs: &[Config], sessions: &[SessionResult], m: f64) -> Vec<Point> {
    let mut pts: Vec<Point> = (0..configs.len())
        .map(|i| {
            let scores = sessions.iter().map(|s| &s.scores[i]);
            let costs: Vec<f64> = scores.clone().filter_map(|s| s.cost).collect();
            let cost = (!costs.is_empty()).then(|| costs.iter().sum::<f64>());
            let penalty = m * scores.clone().map(|s| s.refetch_cost).sum::<f64>();
            let demanded: u64 = scores.clone().map(|s| s.demanded).sum();
            let kept: u64 = scores.clone().map(|s| s.kept).sum();
            let turns: usize = scores.clone().map(|s| s.turns).sum();
            let share = |f: fn(&super::Score) -> usize| {
                if turns == 0 {
                    0.0
                } else {
                    scores.clone().map(f).sum::<usize>() as f64 / turns as f64
                }
            };
            let files: usize = scores.clone().map(|s| s.trail_files).sum();
            let trail_kept: usize = scores.clone().map(|s| s.trail_kept).sum();
            Point {
                name: configs[i].name.clone(),
                cost,
                penalty,
                effective: cost.map(|c| c + penalty),
                retention: if demanded == 0 { 1.0 } else { kept as f64 / demanded as f64 },
                demanded,
                dropped: scores.clone().map(|s| s.dropped.len()).sum(),
                refetch_tokens: scores.clone().map(|s| s.refetch_tokens).sum(),
                prompt: scores.clone().map(|s| s.prompt).sum(),
                peak_prompt: scores.clone().map(|s| s.peak_prompt).max().unwrap_or(0),
                compactions: scores.clone().map(|s| s.compactions).sum(),
                stacked_summaries: scores.clone().map(|s| s.stacked_summaries).max().unwrap_or(0),
                share_above_50: share(|s| s.above_50),
                share_above_80: share(|s| s.above_80),
                trail: (files > 0).then(|| trail_kept as f64 / files as f64),
                on_frontier: false,
            }
        })
        .collect();
    for i in frontier(&pts, |_| true) {
        pts[i].on_frontier = true;
    }
    pts
}

const EPS: f64 = 1e-9;

/// The non-dominated points among those `keep` admits, on (effective cost ↓, retention ↑),
/// cheapest first. Of points equal on both, the first listed stays.
pub fn frontier(points: &[Point], keep: impl Fn(usize) -> bool) -> Vec<usize> {
    let mut idx: Vec<usize> = (0..points.len()).filter(|&i| keep(i) && points[i].effective.is_some()).collect();
    idx.sort_by(|&a, &b| {
        let (pa, pb) = (&points[a], &points[b]);
        pa.effective
            .partial_cmp(&pb.effective)
            .unwrap_or(std::cmp::Ordering::Equal)
            .then(pb.retention.partial_cmp(&pa.retention).unwrap_or(std::cmp::Ordering::Equal))
            .then(a.cmp(&b))
    });
    let mut out: Vec<usize> = Vec::new();
    let mut best = f64::NEG_INFINITY;
    for i in idx {
        if points[i].retention > best + EPS {
            best = points[i].retention;
            out.push(i);
        }
    }
    out
}

/// The knee of a frontier (cheapest first): the point farthest from the chord between its ends,
/// both axes scaled to their range; with two points or fewer, the one with the best retention
/// minus cost relative to the dearest.
pub fn knee(points: &[Point], front: &[usize]) -> Option<usize> {
    let eff = |i: usize| points[i].effective.unwrap_or(0.0);
    let ret = |i: usize| points[i].retention;
    match front.len() {
        0 => None,
        1 | 2 => {
            let top = front.iter().map(|&i| eff(i)).fold(0.0, f64::max).max(EPS);
            let mut best = front[0];
            for &i in &front[1..] {
                if ret(i) - eff(i) / top > ret(best) - eff(best) / top + EPS {
                    best = i;
                }
            }
            Some(best)
        }
        _ => {
            let (a, b) = (front[0], front[front.len() - 1]);
            let (cr, rr) = ((eff(b) - eff(a)).max(EPS), (ret(b) - ret(a)).max(EPS));
            let (x0, y0) = (0.0, 0.0);
            let (x1, y1) = (1.0, 1.0);
            let mut best = (a, f64::NEG_INFINITY);
            for &i in front {
                let (x, y) = ((eff(i) - eff(a)) / cr, (ret(i) - ret(a)) / rr);
                // Above the chord (more retention for the cost) is positive.
                let d = ((x1 - x0) * (y - y0) - (y1 - y0) * (x - x0)) / std::f64::consts::SQRT_2;
                if d > best.1 + EPS {
                    best = (i, d);
                }
            }
            Some(best.0)
        }
    }
}

fn pick(configs: &[Config], points: &[Point], objective: Objective) -> Option<(usize, &'static str)> {
    let front = frontier(points, |i| configs[i].settable);
    match objective {
        Objective::Cost => front.first().map(|&i| (i, "the cheapest setting (cost plus re-fetch penalty)")),
        Objective::Retention => front.last().map(|&i| (i, "the setting that keeps the most demanded context")),
        Objective::Balanced => knee(points, &front).map(|i| (i, "the knee of the frontier of settable points")),
    }
}

/// p-th percentile (nearest rank) of sorted values.
pub fn percentile(sorted: &[f64], p: f64) -> Option<f64> {
    if sorted.is_empty() {
        return None;
    }
    let rank = ((p / 100.0) * sorted.len() as f64).ceil().max(1.0) as usize;
    Some(sorted[rank.min(sorted.len()) - 1])
}

fn delta(points: &[Point], rec: usize, other: usize) -> Delta {
    let (r, o) = (&points[rec], &points[other]);
    let cost = r.cost.zip(o.cost).map(|(a, b)| a - b);
    Delta {
        against: o.name.clone(),
        cost,
        cost_pct: cost.zip(o.cost).and_then(|(d, b)| (b > 0.0).then(|| d / b)),
        retention: r.retention - o.retention,
        prompt_pct: (o.prompt > 0).then(|| r.prompt as f64 / o.prompt as f64 - 1.0),
    }
}

/// The recommendation for `objective` at penalty `m`.
pub fn recommend(
    configs: &[Config],
    points: &[Point],
    sessions: &[SessionResult],
    m: f64,
    objective: Objective,
) -> Option<Recommendation> {
    let (rec, why) = pick(configs, points, objective)?;
    let default = configs.iter().position(|c| c.named.as_deref().is_some_and(|n| n.contains("harness default")));
    let recorded = configs.iter().position(|c| c.name == "recorded");
    let eff = |s: &SessionResult, i: usize| s.scores[i].cost.map(|c| c + m * s.scores[i].refetch_cost);
    let (mut savings, mut dominated, mut compared) = (Vec::new(), 0usize, 0usize);
    if let Some(d) = default {
        for s in sessions {
            let (Some(er), Some(ed)) = (eff(s, rec), eff(s, d)) else { continue };
            compared += 1;
            if ed > 0.0 {
                savings.push((ed - er) / ed);
            }
            if er <= ed * (1.0 + EPS) + EPS && s.scores[rec].retention() + EPS >= s.scores[d].retention() {
                dominated += 1;
            }
        }
    }
    savings.sort_by(|a, b| a.partial_cmp(b).unwrap_or(std::cmp::Ordering::Equal));
    let billed_sessions: Vec<&SessionResult> = sessions.iter().filter(|s| s.billed_cost.is_some()).collect();
    let billed =
        (!billed_sessions.is_empty()).then(|| billed_sessions.iter().filter_map(|s| s.billed_cost).sum::<f64>());
    let rec_on_billed: f64 = billed_sessions.iter().filter_map(|s| s.scores[rec].cost).sum();
    let stable = [0.5, 1.0, 2.0].iter().all(|&mm| {
        let pts = points_at(configs, sessions, mm);
        pick(configs, &pts, objective).map(|p| p.0) == Some(rec)
    });
    let c = &configs[rec];
    Some(Recommendation {
        point: rec,
        name: c.name.clone(),
        knob: c.knob.clone(),
        paste: c.paste.clone(),
        why: why.into(),
        vs_default: default.map(|d| delta(points, rec, d)),
        vs_recorded: recorded.map(|r| delta(points, rec, r)),
        billed,
        vs_billed: billed.map(|b| rec_on_billed - b),
        savings_p10: percentile(&savings, 10.0),
        savings_p50: percentile(&savings, 50.0),
        savings_p90: percentile(&savings, 90.0),
        confidence: (compared > 0).then(|| dominated as f64 / compared as f64),
        sessions: compared,
        stable,
    })
}

fn points_at(configs: &[Config], sessions: &[SessionResult], m: f64) -> Vec<Point> {
    points(configs, sessions, m)
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    fn pt(cost: f64, retention: f64) -> Point {
        Point {
            name: format!("{cost}/{retention}"),
            cost: Some(cost),
            penalty: 0.0,
            effective: Some(cost),
            retention,
            demanded: 0,
            dropped: 0,
            refetch_tokens: 0,
            prompt: 0,
            peak_prompt: 0,
            compactions: 0,
            stacked_summaries: 0,
            share_above_50: 0.0,
            share_above_80: 0.0,
            trail: None,
            on_frontier: false,
        }
    }

    #[test]
    fn frontier_and_knee_of_a_known_set() {
        // (1, .2) (2, .8) (3, .85) (4, .9) and a dominated (3, .5).
        let p = vec![pt(4.0, 0.9), pt(1.0, 0.2), pt(3.0, 0.5), pt(2.0, 0.8), pt(3.0, 0.85)];
        let f = frontier(&p, |_| true);
        assert_eq!(f, vec![1, 3, 4, 0]);
        assert_eq!(knee(&p, &f), Some(3));
    }

    #[test]
    fn percentiles_nearest_rank() {
        let v = [1.0, 2.0, 3.0, 4.0, 5.0, 6.0, 7.0, 8.0, 9.0, 10.0];
        assert_eq!(percentile(&v, 10.0), Some(1.0));
        assert_eq!(percentile(&v, 50.0), Some(5.0));
        assert_eq!(percentile(&v, 90.0), Some(9.0));
        assert_eq!(percentile(&[], 50.0), None);
    }

    proptest! {
        /// No frontier point is dominated by any point, and every point off the frontier is
        /// weakly dominated by one on it.
        #[test]
        fn frontier_is_exactly_the_non_dominated_set(v in prop::collection::vec((0u32..50, 0u32..50), 1..30)) {
            let p: Vec<Point> = v.iter().map(|&(c, r)| pt(c as f64, r as f64 / 50.0)).collect();
            let f = frontier(&p, |_| true);
            for &i in &f {
                for (j, q) in p.iter().enumerate() {
                    let dominates = q.effective <= p[i].effective && q.retention >= p[i].retention
                        && (q.effective < p[i].effective || q.retention > p[i].retention);
                    prop_assert!(!dominates, "{j} dominates frontier point {i}");
                }
            }
            for i in 0..p.len() {
                if !f.contains(&i) {
                    prop_assert!(f.iter().any(|&k| p[k].effective <= p[i].effective && p[k].retention >= p[i].retention));
                }
            }
            if let Some(k) = knee(&p, &f) {
                prop_assert!(f.contains(&k));
            }
        }
    }
}
