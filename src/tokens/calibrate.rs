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

/// The ratio in force after an observed turn.
#[derive(Debug, Clone, Copy, PartialEq)]
struct Point {
    turn: usize,
    multiplier: f64,
}

/// Accumulates (turn, `prompt_tokens`, raw estimate) observations and answers multipliers.
#[derive(Debug, Clone, Default)]
pub struct Calibrator {
    /// Σ wᵢ·promptᵢ, weights relative to the last observed turn.
    sum_prompt: f64,
    /// Σ wᵢ·estᵢ, likewise.
    sum_est: f64,
    /// One point per observed turn, in turn order.
    points: Vec<Point>,
}

/// The half-life of the recency weights, in turns.
pub const HALF_LIFE_TURNS: f64 = 4.0;

impl Calibrator {
    /// No observations: the multiplier is 1.0.
    pub fn new() -> Calibrator {
        Calibrator::default()
    }

    /// Records turn `turn`'s provider figure and the raw estimate of its recorded request. Turns
    /// without `prompt_tokens` are not observations; pass `None` and nothing is kept. Turns come
    /// in increasing order (an earlier or repeated turn is ignored).
    pub fn observe(&mut self, turn: usize, prompt_tokens: Option<u64>, raw_recorded_estimate: u64) {
        let Some(prompt) = prompt_tokens else { return };
        if let Some(last) = self.points.last() {
            if turn <= last.turn {
                return;
            }
            let age = 0.5f64.powf((turn - last.turn) as f64 / HALF_LIFE_TURNS);
            self.sum_prompt *= age;
            self.sum_est *= age;
        }
        self.sum_prompt += prompt as f64;
        self.sum_est += raw_recorded_estimate as f64;
        let multiplier = if self.sum_est > 0.0 { self.sum_prompt / self.sum_est } else { 1.0 };
        self.points.push(Point { turn, multiplier });
    }

    /// The multiplier in force before turn `t` (uses only observations of turns i < t).
    pub fn multiplier(&self, t: usize) -> f64 {
        let n = self.points.partition_point(|p| p.turn < t);
        n.checked_sub(1).map_or(1.0, |i| self.points[i].multiplier)
    }

    /// round-half-up(raw × multiplier before turn `t`).
    pub fn calibrate(&self, t: usize, raw: u64) -> u64 {
        apply(raw, self.multiplier(t))
    }

    /// Whether any observation was recorded.
    pub fn is_empty(&self) -> bool {
        self.points.is_empty()
    }
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

#[cfg(test)]
mod tests {
    use super::*;

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
