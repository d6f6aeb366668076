//! Calibration of raw estimates against the provider's figures (`strategies.md` §3, seed `000_*`).
//!
//! Before turn t the multiplier is Σ wᵢ·promptᵢ / Σ wᵢ·estᵢ over the earlier turns i that carry
//! `usage.prompt_tokens`, where estᵢ is the raw estimate of turn i's **recorded** request and
//! wᵢ = 0.5^((t−1−i)/4) (half-life 4 turns); 1.0 when there is no such turn. The calibrated
//! estimate is round-half-up(raw × multiplier).
//!
//! [`Calibrator`] is the one implementation, used by `tokens`, `audit` and the strategies
//! (elide-keep-K). It is fed turn by turn ([`Calibrator::observe`]) and kept incrementally: the
//! weights' common factor cancels out of the ratio, so after each observation it keeps
//! Σ wᵢ·promptᵢ and Σ wᵢ·estᵢ with weights relative to that turn (older sums age by
//! 0.5^(Δturns/4)), and remembers the ratio then in force. Asking for the multiplier before any
//! turn is a look-up, so a replay stays linear and callers may feed every turn up front.
//!
//! **Affine mode** ([`Calibrator::affine`], for imported sessions whose format does not record the
//! system prompt and tool schemas): the provider's figure is `slope × counted + offset`, where the
//! offset is the unrecorded prefix and the slope the tokenizer difference. A multiplier cannot
//! absorb an additive prefix (turn 2 of a Claude Code session would get ×579). The slope is a
//! recency-weighted least-squares fit (half-life [`SLOPE_HALF_LIFE_TURNS`]) shrunk towards 1 by a
//! ridge term and clamped to [[`MIN_SLOPE`], [`MAX_SLOPE`]]; the offset is the weighted mean
//! residual `prompt − slope × counted` with a short half-life ([`OFFSET_HALF_LIFE_TURNS`]); the
//! prefix it reports is never negative.
//!
//! **A drop** (a request counting less than [`DROP_RATIO`] of the last observed one: a
//! compaction) changes the conversation, not the prefix. The fit in force is anchored at the last
//! observed request and the removed tokens are priced at the **long-run slope** (least squares
//! over the whole session, half-life [`LONG_SLOPE_HALF_LIFE_TURNS`]): estimate =
//! slope × counted_last + offset + long_slope × (counted − counted_last). The removed content
//! was added over many turns, so the slope of the last few dozen says little about it: on the
//! shared long Codex rollout the recent slope was 1.14 (encrypted reasoning re-sent within a task
//! grows the request faster than its content) and priced the 160k counted tokens a remote
//! compaction removed at 183k, against 162k removed by the provider (turn 185: −45 %). Only
//! earlier turns' usage and the request's own count enter the estimate.
//!
//! **A model switch** ([`Calibrator::switched`], issue 28): the turn of the first observation
//! after the calls moved to another model is extrapolated — another tokenizer counts the request
//! and the agent may send another system prompt and tools, which no earlier usage sizes. A step it
//! brings re-anchors the fit through the rewrite rule; a switch alone does not (re-anchoring on
//! every switch, measured, put a pi session switching between two Hugging Face models from
//! 2.46 / 10.2 % to 2.86 / 10.6 % median / p90).
//!
//! **Carried reasoning** ([`Calibrator::carry`]): provider tokens a request holds that the journal
//! records only as a count — earlier responses' reasoning the harness sends back and the provider
//! counts (`usage.reasoning_tokens`, `strategy::reasoning`). They are known exactly before the
//! call, so they are not fitted: an observation is `prompt − carried`, and the estimate adds the
//! request's carried tokens back. Without them every figure is as before.

/// The fit in force after an observed turn.
#[derive(Debug, Clone, Copy, PartialEq)]
struct Point {
    turn: usize,
    multiplier: f64,
    /// The additive part (0 in ratio mode).
    offset: f64,
    /// Affine mode: the raw estimate of this turn's request and the long-run slope then.
    counted: f64,
    long_slope: f64,
    /// Affine mode: the provider's figure of this turn.
    prompt: f64,
    /// Affine mode: this observation was a rewrite (module doc) and re-anchored the fit.
    rewrite: bool,
    /// Affine mode: this call went to another model than the last observed one
    /// ([`Calibrator::switched`]).
    switched: bool,
}

/// Recency-weighted sums of the affine fit (weights relative to the last observed turn).
#[derive(Debug, Clone, Copy, Default)]
struct Sums {
    w: f64,
    c: f64,
    p: f64,
    cc: f64,
    cp: f64,
}

impl Sums {
    fn age(&mut self, k: f64) {
        for x in [&mut self.w, &mut self.c, &mut self.p, &mut self.cc, &mut self.cp] {
            *x *= k;
        }
    }

    fn add(&mut self, c: f64, p: f64) {
        self.w += 1.0;
        self.c += c;
        self.p += p;
        self.cc += c * c;
        self.cp += c * p;
    }
}

/// A slope's sums split into segments (module doc, "A rewrite"): the current segment's sums, the
/// centred cross-products of the closed segments, and the totals that size the ridge.
#[derive(Debug, Clone, Copy, Default)]
struct Segmented {
    cur: Sums,
    all: Sums,
    closed_cc: f64,
    closed_cp: f64,
}

impl Segmented {
    fn age(&mut self, k: f64) {
        self.cur.age(k);
        self.all.age(k);
        self.closed_cc *= k;
        self.closed_cp *= k;
    }

    fn add(&mut self, c: f64, p: f64) {
        self.cur.add(c, p);
        self.all.add(c, p);
    }

    /// Closes the current segment: its centred sums stay, its intercept goes.
    fn split(&mut self) {
        let (cc, cp) = centred(&self.cur);
        self.closed_cc += cc;
        self.closed_cp += cp;
        self.cur = Sums::default();
    }
}

/// Σw(c − c̄)² and Σw(c − c̄)(p − p̄) of `s` (0 when empty).
fn centred(s: &Sums) -> (f64, f64) {
    if s.w > 0.0 {
        (s.cc - s.c * s.c / s.w, s.cp - s.c * s.p / s.w)
    } else {
        (0.0, 0.0)
    }
}

/// Accumulates (turn, `prompt_tokens`, raw estimate) observations and answers multipliers.
#[derive(Debug, Clone, Default)]
pub struct Calibrator {
    /// Σ wᵢ·promptᵢ, weights relative to the last observed turn.
    sum_prompt: f64,
    /// Σ wᵢ·estᵢ, likewise.
    sum_est: f64,
    /// Affine mode: the slope's, the offset's and the long-run slope's sums (`None`: the spec's
    /// ratio).
    affine: Option<(Segmented, Sums, Segmented)>,
    /// One point per observed turn, in turn order.
    points: Vec<Point>,
    /// Affine mode: the next observation goes to another model than the last observed one
    /// ([`Calibrator::switched`]).
    switch: bool,
    /// Per turn (index = turn − 1): the carried reasoning of its request ([`Calibrator::carry`]).
    carried: Vec<u64>,
}

/// The half-life of the recency weights, in turns.
pub const HALF_LIFE_TURNS: f64 = 4.0;

/// Affine mode: half-life of the slope's weights, in turns (the tokenizer difference is a
/// property of the session, so it is learnt over many turns).
pub const SLOPE_HALF_LIFE_TURNS: f64 = 32.0;

/// Affine mode: half-life of the offset's weights, in turns (the last turns say most about
/// what the provider counts that the journal does not hold).
pub const OFFSET_HALF_LIFE_TURNS: f64 = 1.0;

/// Affine mode: half-life of the long-run slope's weights, in turns (module doc, "A drop").
pub const LONG_SLOPE_HALF_LIFE_TURNS: f64 = 256.0;

/// Affine mode: a request counting less than this share of the last observed one is a drop.
pub const DROP_RATIO: f64 = 0.5;

/// Affine mode: the change in the provider's count, beyond what the change in counted tokens
/// explains at any admissible slope, that makes an observation a rewrite (module doc). The
/// issue-28 floor of a significant cache break: smaller steps are within the noise of a request.
pub const REWRITE_TOLERANCE_TOKENS: f64 = 2_048.0;

/// Affine mode: strength of the pull of the slope towards 1, relative to Σw·(mean counted)².
pub const SLOPE_RIDGE: f64 = 0.003;

/// Affine mode: the slope's bounds (tokenizers differ by far less than ×2).
pub const MIN_SLOPE: f64 = 0.5;
pub const MAX_SLOPE: f64 = 2.0;

impl Calibrator {
    /// No observations: the multiplier is 1.0.
    pub fn new() -> Calibrator {
        Calibrator::default()
    }

    /// The affine calibrator of imported sessions (module doc); no observation: slope 1, offset 0.
    pub fn affine() -> Calibrator {
        Calibrator { affine: Some(Default::default()), ..Calibrator::default() }
    }

    /// Whether this is the affine calibrator.
    pub fn is_affine(&self) -> bool {
        self.affine.is_some()
    }

    /// Sets the provider tokens turn `turn`'s request carries that the journal counts only as a
    /// number — earlier responses' reasoning sent back (module doc, "Carried reasoning"). Call it
    /// before [`Calibrator::observe`] of that turn; 0 (the default) changes nothing.
    pub fn carry(&mut self, turn: usize, tokens: u64) {
        if turn == 0 || tokens == 0 {
            return;
        }
        if self.carried.len() < turn {
            self.carried.resize(turn, 0);
        }
        self.carried[turn - 1] = tokens;
    }

    /// The carried reasoning of turn `t`'s request.
    pub fn carried(&self, t: usize) -> u64 {
        self.carried.get(t.wrapping_sub(1)).copied().unwrap_or(0)
    }

    /// Records turn `turn`'s provider figure and the raw estimate of its recorded request. Turns
    /// without `prompt_tokens` (or with 0) are not observations; pass `None` and nothing is kept. Turns come
    /// in increasing order (an earlier or repeated turn is ignored).
    pub fn observe(&mut self, turn: usize, prompt_tokens: Option<u64>, raw_recorded_estimate: u64) {
        // A call the provider billed nothing for (an aborted request: usage all zero) measured
        // nothing.
        let Some(prompt) = prompt_tokens.filter(|&p| p > 0) else { return };
        // What the journal does not count but knows exactly is not fitted.
        let prompt = prompt.saturating_sub(self.carried(turn)).max(1);
        if let Some(last) = self.points.last() {
            if turn <= last.turn {
                return;
            }
            let dt = (turn - last.turn) as f64;
            let age = 0.5f64.powf(dt / HALF_LIFE_TURNS);
            self.sum_prompt *= age;
            self.sum_est *= age;
            if let Some((slope, offset, long)) = &mut self.affine {
                slope.age(0.5f64.powf(dt / SLOPE_HALF_LIFE_TURNS));
                offset.age(0.5f64.powf(dt / OFFSET_HALF_LIFE_TURNS));
                long.age(0.5f64.powf(dt / LONG_SLOPE_HALF_LIFE_TURNS));
            }
        }
        self.sum_prompt += prompt as f64;
        self.sum_est += raw_recorded_estimate as f64;
        let counted = raw_recorded_estimate as f64;
        let switched = std::mem::take(&mut self.switch) && !self.points.is_empty();
        let rewrite =
            self.is_affine() && self.points.last().is_some_and(|last| is_rewrite(last, counted, prompt as f64));
        let point = match &mut self.affine {
            Some((slope, offset, long)) => {
                if rewrite {
                    slope.split();
                    *offset = Sums::default();
                }
                slope.add(counted, prompt as f64);
                long.add(counted, prompt as f64);
                offset.add(counted, prompt as f64);
                let (multiplier, offset) = fit(slope, offset);
                let long_slope = slope_of(long);
                Point { turn, multiplier, offset, counted, long_slope, prompt: prompt as f64, rewrite, switched }
            }
            None => {
                let multiplier = if self.sum_est > 0.0 { self.sum_prompt / self.sum_est } else { 1.0 };
                let p = prompt as f64;
                Point {
                    turn,
                    multiplier,
                    offset: 0.0,
                    counted,
                    long_slope: multiplier,
                    prompt: p,
                    rewrite,
                    switched: false,
                }
            }
        };
        self.points.push(point);
    }

    /// Affine mode: the next observation's call went to another model than the last observed
    /// one (module doc, "A model switch"): another tokenizer counts the request and the agent may
    /// send another system prompt, so its turn's estimate is extrapolated; a step the switch
    /// brings re-anchors the fit through the rewrite rule.
    pub fn switched(&mut self) {
        self.switch = self.is_affine();
    }

    /// The point in force before turn `t` (uses only observations of turns i < t).
    fn before(&self, t: usize) -> Option<&Point> {
        let n = self.points.partition_point(|p| p.turn < t);
        n.checked_sub(1).map(|i| &self.points[i])
    }

    /// The multiplier (affine mode: the slope) in force before turn `t`.
    pub fn multiplier(&self, t: usize) -> f64 {
        self.before(t).map_or(1.0, |p| p.multiplier)
    }

    /// The additive part in force before turn `t`, in provider tokens: the inferred unrecorded
    /// prefix in affine mode, 0 in ratio mode or before any observation.
    pub fn offset(&self, t: usize) -> u64 {
        self.before(t).map_or(0, |p| apply(1, p.offset))
    }

    /// The offset after every observation: the session's unrecorded prefix as best known.
    pub fn last_offset(&self) -> u64 {
        self.points.last().map_or(0, |p| apply(1, p.offset))
    }

    /// The slope after every observation.
    pub fn last_multiplier(&self) -> f64 {
        self.points.last().map_or(1.0, |p| p.multiplier)
    }

    /// round-half-up(raw × multiplier + offset before turn `t`); in affine mode a drop is
    /// anchored at the last observed request (module doc, [`Calibrator::is_drop`]).
    pub fn calibrate(&self, t: usize, raw: u64) -> u64 {
        self.fitted_estimate(t, raw).saturating_add(self.carried(t))
    }

    /// [`Calibrator::calibrate`] without the carried reasoning.
    fn fitted_estimate(&self, t: usize, raw: u64) -> u64 {
        match self.before(t) {
            Some(p) if self.is_affine() && (raw as f64) < DROP_RATIO * p.counted => {
                apply(1, p.multiplier * p.counted + p.offset + p.long_slope * (raw as f64 - p.counted))
            }
            Some(p) => apply(1, raw as f64 * p.multiplier + p.offset),
            None => raw,
        }
    }

    /// The slope and the additive part that [`Calibrator::calibrate`] applies to `raw` before
    /// turn `t` (calibrated = round-half-up(slope × raw + offset)): on a drop, the long-run slope
    /// and the offset anchored at the last observed request (never below 0), else
    /// ([`Calibrator::multiplier`], [`Calibrator::offset`]).
    /// The offset includes the request's carried reasoning ([`Calibrator::carry`]).
    pub fn terms(&self, t: usize, raw: u64) -> (f64, u64) {
        let (slope, offset) = match self.before(t) {
            Some(p) if self.is_drop(t, raw) => {
                (p.long_slope, apply(1, (p.multiplier - p.long_slope) * p.counted + p.offset))
            }
            _ => (self.multiplier(t), self.offset(t)),
        };
        (slope, offset.saturating_add(self.carried(t)))
    }

    /// Affine mode: whether a request of `raw` before turn `t` is a drop (counts less than
    /// [`DROP_RATIO`] of the last observed request), estimated at the long-run slope.
    pub fn is_drop(&self, t: usize, raw: u64) -> bool {
        self.is_affine() && self.before(t).is_some_and(|p| (raw as f64) < DROP_RATIO * p.counted)
    }

    /// Affine mode: whether the estimate of turn `t` (a request of `raw`) is extrapolated — it
    /// rests on a fit from before a rewrite: `t` is a drop from the last observed request, or its
    /// own observation was a rewrite (module doc, "A rewrite"). Never in ratio mode, nor before
    /// any observation (then the raw count is shown).
    pub fn extrapolated(&self, t: usize, raw: u64) -> bool {
        self.is_drop(t, raw) || self.rewrite_at(t) || self.switched_at(t)
    }

    /// Whether turn `t`'s call was the first observed one after a model switch.
    fn switched_at(&self, t: usize) -> bool {
        let n = self.points.partition_point(|p| p.turn < t);
        self.points.get(n).is_some_and(|p| p.turn == t && p.switched)
    }

    /// Whether turn `t`'s observation was a rewrite that re-anchored the fit.
    pub fn rewrite_at(&self, t: usize) -> bool {
        let n = self.points.partition_point(|p| p.turn < t);
        self.points.get(n).is_some_and(|p| p.turn == t && p.rewrite)
    }

    /// Affine mode: the observed turns whose observation was a rewrite other than a drop — the
    /// provider's count moved by more than the request's change explains, so what it counts
    /// beyond the journal (the unrecorded prefix: instructions, tool schemas) changed there.
    /// Compactions (drops) change the conversation, not the prefix, and are not listed.
    pub fn prefix_changes(&self) -> Vec<usize> {
        (self.points.windows(2))
            .filter(|w| w[1].rewrite && w[1].counted >= DROP_RATIO * w[0].counted)
            .map(|w| w[1].turn)
            .collect()
    }

    /// Whether the estimate of turn `t` is calibrated at all: some turn before it was observed.
    /// Before the first observation the raw count is all there is.
    pub fn fitted(&self, t: usize) -> bool {
        self.before(t).is_some()
    }

    /// Whether any observation was recorded.
    pub fn is_empty(&self) -> bool {
        self.points.is_empty()
    }
}

/// Whether an observation (`counted`, `prompt`) after `last` is a rewrite (module doc): a drop,
/// or a change in the provider's count that no admissible slope times the change in counted
/// tokens explains, give or take [`REWRITE_TOLERANCE_TOKENS`].
fn is_rewrite(last: &Point, counted: f64, prompt: f64) -> bool {
    if counted < DROP_RATIO * last.counted {
        return true;
    }
    let (dc, dp) = (counted - last.counted, prompt - last.prompt);
    let (a, b) = (MIN_SLOPE * dc, MAX_SLOPE * dc);
    dp > a.max(b) + REWRITE_TOLERANCE_TOKENS || dp < a.min(b) - REWRITE_TOLERANCE_TOKENS
}

/// The ridge least-squares slope of the segmented sums `s` (pooled within segments), clamped to
/// [[`MIN_SLOPE`], [`MAX_SLOPE`]].
fn slope_of(s: &Segmented) -> f64 {
    let (cc, cp) = centred(&s.cur);
    let (scc, scp) = (s.closed_cc + cc, s.closed_cp + cp);
    let a = &s.all;
    let ridge = SLOPE_RIDGE * a.w * (a.c / a.w).powi(2);
    let slope = if scc + ridge > 0.0 { (scp + ridge) / (scc + ridge) } else { 1.0 };
    if slope.is_finite() {
        slope.clamp(MIN_SLOPE, MAX_SLOPE)
    } else {
        1.0
    }
}

/// The affine fit of the slope's and the offset's sums: (slope, offset ≥ 0).
fn fit(s: &Segmented, o: &Sums) -> (f64, f64) {
    let slope = slope_of(s);
    // Not clamped here: a slightly negative residual mean keeps the fit unbiased; the prefix
    // reported ([`Calibrator::offset`]) is never negative.
    let offset = (o.p - slope * o.c) / o.w;
    (slope, if offset.is_finite() { offset } else { 0.0 })
}

/// round-half-up(raw × multiplier), never negative.
pub fn apply(raw: u64, multiplier: f64) -> u64 {
    let x = raw as f64 * multiplier;
    if x.is_finite() && x > 0.0 {
        (x + 0.5).floor() as u64
    } else {
        0
    }
}

/// Signed relative error of an estimate against the provider's figure, in percent
/// ((est − actual) / actual × 100); `None` when the provider reported 0.
pub fn error_pct(estimate: u64, actual: u64) -> Option<f64> {
    (actual > 0).then(|| (estimate as f64 - actual as f64) / actual as f64 * 100.0)
}

/// Median, 90th percentile and worst of absolute errors (in percent), over the turns measured.
#[derive(Debug, Clone, Copy, PartialEq, serde::Serialize)]
pub struct ErrorStats {
    pub turns: usize,
    pub median: f64,
    pub p90: f64,
    pub worst: f64,
}

impl ErrorStats {
    /// Of the absolute values of `errors` (nearest-rank percentiles); `None` when empty.
    pub fn of(errors: impl IntoIterator<Item = f64>) -> Option<ErrorStats> {
        let mut e: Vec<f64> = errors.into_iter().map(f64::abs).filter(|x| x.is_finite()).collect();
        e.sort_by(f64::total_cmp);
        let n = e.len();
        let rank = |q: f64| e[((q * n as f64).ceil() as usize).clamp(1, n) - 1];
        (n > 0).then(|| ErrorStats { turns: n, median: rank(0.5), p90: rank(0.9), worst: e[n - 1] })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn affine_learns_an_additive_prefix_and_keeps_it_across_a_compaction() {
        // prompt = 1.2 × counted + 20 000 (an unrecorded prefix of 20k, a 20 % tokenizer gap).
        let truth = |c: u64| (1.2 * c as f64 + 20_000.0).round() as u64;
        let mut c = Calibrator::affine();
        assert!(c.is_affine());
        assert_eq!(c.calibrate(1, 500), 500, "no observation: the raw estimate");
        let counts = [50u64, 3_000, 6_000, 9_500, 14_000, 20_000, 27_000, 35_000, 4_000, 6_000];
        for (i, &n) in counts.iter().enumerate() {
            let t = i + 1;
            if t >= 3 {
                let err = error_pct(c.calibrate(t, n), truth(n)).unwrap();
                assert!(err.abs() < 3.0, "turn {t}: {err:.2} %");
            }
            c.observe(t, Some(truth(n)), n);
        }
        assert!((c.last_multiplier() - 1.2).abs() < 0.02, "{}", c.last_multiplier());
        assert!((c.last_offset() as f64 - 20_000.0).abs() < 500.0, "{}", c.last_offset());
        // The ratio calibrator cannot absorb the prefix: turn 2 is off by far more.
        let mut r = Calibrator::new();
        r.observe(1, Some(truth(50)), 50);
        assert!(error_pct(r.calibrate(2, 3_000), truth(3_000)).unwrap() > 1000.0);
    }

    /// Regression (issue 14, the shared long Codex rollout, turn 185): the slope of the last
    /// turns, inflated by what the provider counts beyond the journal's content, priced the
    /// tokens a remote compaction removed and left far too little: −45 %. The drop is priced at
    /// the long-run slope, from the earlier turns only. Data: (turn, counted, prompt_tokens) of
    /// every tenth turn of that rollout, and the compaction turn.
    #[test]
    fn a_compaction_drop_is_priced_at_the_long_run_slope() {
        const ROLLOUT: [(usize, u64, u64); 19] = [
            (1, 7_814, 17_088),
            (11, 26_056, 59_522),
            (21, 49_606, 85_176),
            (31, 53_478, 89_192),
            (41, 69_499, 91_210),
            (51, 74_344, 97_865),
            (61, 78_256, 102_839),
            (71, 85_414, 111_064),
            (81, 95_579, 122_818),
            (91, 99_443, 127_897),
            (101, 101_674, 130_610),
            (111, 106_077, 129_800),
            (121, 107_983, 132_109),
            (131, 114_233, 139_246),
            (141, 117_014, 144_048),
            (151, 125_349, 156_739),
            (161, 136_630, 168_816),
            (171, 151_440, 188_827),
            (181, 168_331, 207_226),
        ];
        let mut c = Calibrator::affine();
        for (t, counted, prompt) in ROLLOUT {
            c.observe(t, Some(prompt), counted);
        }
        let (counted, truth) = (20_947u64, 48_297.0);
        assert!(c.is_drop(185, counted) && !c.is_drop(185, 150_000));
        let est = c.calibrate(185, counted) as f64;
        assert!(((est - truth) / truth).abs() < 0.05, "{est} vs {truth}");
        // The recent fit alone (slope × counted + offset) was 22 % short.
        let recent = c.multiplier(185) * counted as f64 + c.offset(185) as f64;
        assert!((recent - truth) / truth < -0.15, "the recent fit alone: {recent}");
        // The per-turn row shows the terms it applied.
        let (slope, prefix) = c.terms(185, counted);
        assert!(slope < c.multiplier(185), "{slope}");
        assert_eq!(apply(1, slope * counted as f64 + prefix as f64), c.calibrate(185, counted));
        // Growth is not a drop; the ratio calibrator (journal-v1) has no drops.
        assert_eq!(c.terms(185, 170_000), (c.multiplier(185), c.offset(185)));
        let mut r = Calibrator::new();
        r.observe(1, Some(1_000), 1_000);
        assert!(!r.is_drop(2, 10));
    }

    /// Issue 28 item 5: a synthetic session (prompt = 1.2 × counted + unrecorded part) whose
    /// unrecorded part grows by 30k at turn 11 while its counted content barely moves (content the
    /// format does not record), then is compacted at turn 16 (the conversation drops, the agent
    /// re-sends 5k more it does not record). Each rewrite's own turn is extrapolated; the next
    /// observed call re-anchors, and the step is never read as a slope.
    #[test]
    fn a_rewrite_re_anchors_on_the_next_observed_call() {
        let unrecorded =
            |t: usize| 20_000.0 + if t >= 11 { 30_000.0 } else { 0.0 } + if t >= 16 { 5_000.0 } else { 0.0 };
        let counts = [
            50u64, 3_000, 6_000, 9_500, 14_000, 20_000, 27_000, 30_000, 30_500, 31_000, 31_100, 32_000, 34_000, 36_000,
            40_000, 4_000, 6_000, 9_000, 12_000,
        ];
        let truth = |t: usize, c: u64| (1.2 * c as f64 + unrecorded(t)).round() as u64;
        let mut c = Calibrator::affine();
        for (i, &n) in counts.iter().enumerate() {
            let t = i + 1;
            let before = c.clone();
            c.observe(t, Some(truth(t, n)), n);
            let err = error_pct(before.calibrate(t, n), truth(t, n)).unwrap();
            let extrapolated = c.extrapolated(t, n);
            assert_eq!(extrapolated, t == 11 || t == 16, "turn {t}");
            assert_eq!(before.extrapolated(t, n), t == 16, "turn {t}: only a drop is known beforehand");
            if t >= 3 && !extrapolated {
                assert!(err.abs() < 1.0, "turn {t}: {err:.2} %");
            }
            if t == 11 {
                assert!(err < -25.0, "turn 11 cannot be foreseen: {err:.2} %");
            }
        }
        assert!((c.last_multiplier() - 1.2).abs() < 0.02, "the steps are not a slope: {}", c.last_multiplier());
        assert!((c.last_offset() as f64 - 55_000.0).abs() < 500.0, "{}", c.last_offset());
        // Growth within the admissible slopes is not a rewrite, and the ratio mode has none.
        assert!(!c.rewrite_at(12) && c.rewrite_at(11) && c.rewrite_at(16));
        let mut r = Calibrator::new();
        r.observe(1, Some(1_000), 1_000);
        r.observe(2, Some(90_000), 1_001);
        assert!(!r.extrapolated(2, 1_001) && !r.rewrite_at(2));
    }

    /// The first call after a model switch was estimated from the old model's fit without a
    /// word: `tokens` did not say its turn was extrapolated.
    #[test]
    fn regression_first_call_after_a_model_switch_was_not_marked_extrapolated() {
        // Model A: 20k prefix, slope 1.3; model B from turn 8: 27.15k prefix, slope 1.0 (turn 8 counts
        // 2.5k more for 1.5k more counted tokens: within any admissible slope and the tolerance).
        let truth = |t: usize, n: u64| if t < 8 { 20_000.0 + 1.3 * n as f64 } else { 27_150.0 + 1.0 * n as f64 };
        let counted = |t: usize| 10_000 + 1_500 * t as u64;
        let run = |switch: bool| {
            let mut c = Calibrator::affine();
            for t in 1..=14 {
                if switch && t == 8 {
                    c.switched();
                }
                c.observe(t, Some(truth(t, counted(t)) as u64), counted(t));
            }
            c
        };
        let (with, without) = (run(true), run(false));
        assert!(!without.rewrite_at(8) && !without.extrapolated(8, counted(8)), "no rewrite without the switch");
        assert!(with.extrapolated(8, counted(8)) && !with.extrapolated(9, counted(9)));
        // The fit itself is the same: the switch is said, not guessed at.
        assert!((8..=14).all(|t| with.calibrate(t, counted(t)) == without.calibrate(t, counted(t))));
        let mut r = Calibrator::new();
        r.switched();
        r.observe(1, Some(1_000), 1_000);
        r.switched();
        r.observe(2, Some(1_100), 1_100);
        assert!(!r.extrapolated(2, 1_100), "the ratio mode has no extrapolation");
    }

    #[test]
    fn affine_after_one_turn_is_the_first_turn_difference() {
        let mut c = Calibrator::affine();
        c.observe(1, Some(26_061), 45);
        assert_eq!(c.multiplier(2), 1.0);
        assert_eq!(c.offset(2), 26_016);
        assert_eq!(c.calibrate(2, 1_045), 27_061);
        assert_eq!(c.offset(1), 0, "turn 1 itself is not earlier than turn 1");
    }

    #[test]
    fn error_stats_use_nearest_ranks() {
        let s = ErrorStats::of((1..=10).map(|x| -(x as f64))).unwrap();
        assert_eq!((s.turns, s.median, s.p90, s.worst), (10, 5.0, 9.0, 10.0));
        assert_eq!(ErrorStats::of([]), None);
    }

    #[test]
    fn no_observation_means_one() {
        let c = Calibrator::new();
        assert_eq!(c.multiplier(1), 1.0);
        assert_eq!(c.multiplier(10), 1.0);
        assert_eq!(c.calibrate(5, 1234), 1234);
    }

    #[test]
    fn a_single_turn_gives_its_ratio() {
        let mut c = Calibrator::new();
        c.observe(1, Some(1200), 1000);
        assert_eq!(c.multiplier(1), 1.0, "turn 1 itself is not earlier than turn 1");
        assert!((c.multiplier(2) - 1.2).abs() < 1e-12);
        // Weight cancels out with one observation, however old.
        assert!((c.multiplier(40) - 1.2).abs() < 1e-12);
        assert_eq!(c.calibrate(2, 1000), 1200);
    }

    #[test]
    fn recency_weights_with_half_life_four() {
        // Turn 1: prompt 2000, est 1000 (ratio 2); turn 5: prompt 1000, est 1000 (ratio 1).
        // Before turn 6: w(1) = 0.5^((6-1-1)/4) = 0.5, w(5) = 0.5^0 = 1.
        // multiplier = (0.5·2000 + 1·1000) / (0.5·1000 + 1·1000) = 2000 / 1500 = 4/3.
        let mut c = Calibrator::new();
        c.observe(1, Some(2000), 1000);
        c.observe(3, None, 777);
        c.observe(5, Some(1000), 1000);
        assert!((c.multiplier(6) - 4.0 / 3.0).abs() < 1e-12);
        // Before turn 10: w(1) = 0.5^2 = 0.25, w(5) = 0.5^1 = 0.5 → (500 + 500)/(250 + 500) = 4/3.
        assert!((c.multiplier(10) - 4.0 / 3.0).abs() < 1e-12);
        // Before turn 4: only turn 1 counts.
        assert!((c.multiplier(4) - 2.0).abs() < 1e-12);
        // Fractional exponent: before turn 7, w(1) = 0.5^(5/4), w(5) = 0.5^(1/4).
        let w1 = 0.5f64.powf(1.25);
        let w5 = 0.5f64.powf(0.25);
        let expect = (w1 * 2000.0 + w5 * 1000.0) / (w1 * 1000.0 + w5 * 1000.0);
        assert!((c.multiplier(7) - expect).abs() < 1e-12);
        // Only the distance between observations sets their relative weight: still 4/3.
        assert!((expect - 4.0 / 3.0).abs() < 1e-12, "{expect}");
        // A third observation (turn 9, ratio 0.5) before turn 10: w = 0.25, 0.5, 1 →
        // (500 + 500 + 500) / (250 + 500 + 1000) = 1500 / 1750.
        c.observe(9, Some(500), 1000);
        assert!((c.multiplier(10) - 1500.0 / 1750.0).abs() < 1e-12);
        assert_eq!(c.calibrate(10, 1000), 857); // 857.14 → 857
    }

    /// The weighted ratio computed directly from the formula, for the property below.
    fn direct(obs: &[(usize, u64, u64)], t: usize) -> f64 {
        let (mut num, mut den) = (0.0f64, 0.0f64);
        for &(i, p, e) in obs.iter().filter(|o| o.0 < t) {
            let w = 0.5f64.powf((t - 1 - i) as f64 / HALF_LIFE_TURNS);
            num += w * p as f64;
            den += w * e as f64;
        }
        if den > 0.0 {
            num / den
        } else {
            1.0
        }
    }

    proptest::proptest! {
        /// The incremental multiplier equals the spec's direct formula before every turn.
        #[test]
        fn incremental_equals_direct(turns in proptest::collection::vec((proptest::option::of(1u64..100_000), 1u64..100_000), 0..40)) {
            let mut c = Calibrator::new();
            let mut obs = Vec::new();
            for (i, (prompt, raw)) in turns.iter().enumerate() {
                let t = i + 1;
                let (a, b) = (c.multiplier(t), direct(&obs, t));
                proptest::prop_assert!((a - b).abs() <= 1e-9 * b.abs().max(1.0), "turn {t}: {a} vs {b}");
                c.observe(t, *prompt, *raw);
                if let Some(p) = prompt {
                    obs.push((t, *p, *raw));
                }
            }
        }
    }

    #[test]
    fn round_half_up() {
        assert_eq!(apply(3, 0.5), 2); // 1.5 → 2
        assert_eq!(apply(5, 0.5), 3); // 2.5 → 3 (not banker's 2)
        assert_eq!(apply(7, 0.5), 4); // 3.5 → 4
        assert_eq!(apply(10, 1.04), 10); // 10.4 → 10
        assert_eq!(apply(10, 1.06), 11); // 10.6 → 11
        assert_eq!(apply(0, 3.0), 0);
    }

    #[test]
    fn errors_in_percent() {
        assert_eq!(error_pct(110, 100), Some(10.0));
        assert_eq!(error_pct(90, 100), Some(-10.0));
        assert_eq!(error_pct(5, 0), None);
    }
}
