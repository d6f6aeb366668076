//! The statistics of `ctxj experiment`: mean, sample standard deviation, and percentile
//! bootstrap 95 % intervals of a mean, of a difference of means and of a ratio of means —
//! seeded (ChaCha8), so the same input always gives the same interval.

use rand::{Rng, SeedableRng};
use rand_chacha::ChaCha8Rng;

/// The share of resamples left out on each side of an interval (a 95 % interval).
pub const TAIL: f64 = 0.025;
/// Resamples per interval unless the manifest says otherwise.
pub const DEFAULT_RESAMPLES: usize = 10_000;
/// The bootstrap seed unless the manifest says otherwise.
pub const DEFAULT_SEED: u64 = 20_261_201;

/// The arithmetic mean; `None` for no values.
pub fn mean(xs: &[f64]) -> Option<f64> {
    (!xs.is_empty()).then(|| xs.iter().sum::<f64>() / xs.len() as f64)
}

/// The sample standard deviation (n − 1 in the denominator); `None` under two values.
pub fn sd(xs: &[f64]) -> Option<f64> {
    let m = mean(xs)?;
    (xs.len() >= 2).then(|| (xs.iter().map(|x| (x - m) * (x - m)).sum::<f64>() / (xs.len() - 1) as f64).sqrt())
}

/// The `q` quantile of sorted values by nearest rank: the value at index `round(q · (n − 1))`.
pub fn quantile(sorted: &[f64], q: f64) -> Option<f64> {
    let last = sorted.len().checked_sub(1)?;
    let i = (q.clamp(0.0, 1.0) * last as f64).round() as usize;
    sorted.get(i.min(last)).copied()
}

/// How two groups are compared.
#[derive(Debug, Clone, Copy, PartialEq, Eq, serde::Serialize, schemars::JsonSchema)]
#[serde(rename_all = "snake_case")]
pub enum Contrast {
    /// mean(arm) − mean(reference).
    Difference,
    /// mean(arm) / mean(reference).
    Ratio,
}

impl Contrast {
    /// The point estimate; a ratio over a zero mean has none.
    pub fn of(self, arm: f64, reference: f64) -> Option<f64> {
        match self {
            Contrast::Difference => Some(arm - reference),
            Contrast::Ratio => (reference != 0.0).then(|| arm / reference),
        }
    }
}

/// A seeded bootstrap: one generator per interval, chosen by `stream`, so an interval does not
/// depend on which others were computed before it.
pub struct Bootstrap {
    pub seed: u64,
    pub resamples: usize,
}

impl Bootstrap {
    fn rng(&self, stream: u64) -> ChaCha8Rng {
        let mut r = ChaCha8Rng::seed_from_u64(self.seed);
        r.set_stream(stream);
        r
    }

    /// The 95 % interval of the mean of `xs`; `None` under two values.
    pub fn mean(&self, xs: &[f64], stream: u64) -> Option<(f64, f64)> {
        if xs.len() < 2 || self.resamples == 0 {
            return None;
        }
        let mut rng = self.rng(stream);
        let mut stats: Vec<f64> = (0..self.resamples).map(|_| resample_mean(xs, &mut rng)).collect();
        interval(&mut stats)
    }

    /// The 95 % interval of `contrast` between the means of `arm` and `reference`, each
    /// resampled on its own; `None` when either has fewer than two values.
    pub fn contrast(&self, arm: &[f64], reference: &[f64], contrast: Contrast, stream: u64) -> Option<(f64, f64)> {
        if arm.len() < 2 || reference.len() < 2 || self.resamples == 0 {
            return None;
        }
        let mut rng = self.rng(stream);
        let mut stats: Vec<f64> = (0..self.resamples)
            .filter_map(|_| {
                let a = resample_mean(arm, &mut rng);
                let r = resample_mean(reference, &mut rng);
                contrast.of(a, r)
            })
            .collect();
        interval(&mut stats)
    }
}

fn resample_mean(xs: &[f64], rng: &mut ChaCha8Rng) -> f64 {
    (0..xs.len()).map(|_| xs[rng.gen_range(0..xs.len())]).sum::<f64>() / xs.len() as f64
}

fn interval(stats: &mut [f64]) -> Option<(f64, f64)> {
    stats.sort_by(f64::total_cmp);
    Some((quantile(stats, TAIL)?, quantile(stats, 1.0 - TAIL)?))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn close(a: f64, b: f64) -> bool {
        (a - b).abs() < 1e-9
    }

    #[test]
    fn mean_and_sd_by_hand() {
        // 2, 4, 4, 4, 5, 5, 7, 9: mean 5; squared deviations 9+1+1+1+0+0+4+16 = 32; 32/7.
        let xs = [2.0, 4.0, 4.0, 4.0, 5.0, 5.0, 7.0, 9.0];
        assert!(close(mean(&xs).unwrap(), 5.0));
        assert!(close(sd(&xs).unwrap(), (32.0f64 / 7.0).sqrt()));
        assert_eq!(sd(&[3.0]), None);
        assert_eq!(mean(&[]), None);
    }

    #[test]
    fn quantile_is_the_nearest_rank() {
        let s: Vec<f64> = (0..=100).map(f64::from).collect();
        assert_eq!(quantile(&s, 0.025), Some(3.0)); // round(2.5) = 3 (away from zero)
        assert_eq!(quantile(&s, 0.975), Some(98.0)); // round(97.5) = 98
        assert_eq!(quantile(&[], 0.5), None);
    }

    /// Hand-computed: a resample of {1, 2, 3} has mean 1 with probability 1/27 ≈ 3.7 % and mean
    /// 3 with the same probability — both more than the 2.5 % tail — so the interval is the
    /// whole range [1, 3]. For {10, 10} every resample is the same: [10, 10].
    #[test]
    fn bootstrap_interval_of_a_small_sample_by_hand() {
        let b = Bootstrap { seed: DEFAULT_SEED, resamples: DEFAULT_RESAMPLES };
        assert_eq!(b.mean(&[1.0, 2.0, 3.0], 0), Some((1.0, 3.0)));
        assert_eq!(b.mean(&[10.0, 10.0], 0), Some((10.0, 10.0)));
        assert_eq!(b.mean(&[10.0], 0), None);
        // The ratio of {2, 4, 6} over {1, 1, 1}: each resample mean of the arm lies in [2, 6]
        // and is 2 or 6 with 1/27 each, so the interval is [2, 6]; the difference [1, 5].
        assert_eq!(b.contrast(&[2.0, 4.0, 6.0], &[1.0, 1.0, 1.0], Contrast::Ratio, 1), Some((2.0, 6.0)));
        assert_eq!(b.contrast(&[2.0, 4.0, 6.0], &[1.0, 1.0, 1.0], Contrast::Difference, 1), Some((1.0, 5.0)));
    }

    #[test]
    fn bootstrap_is_reproducible_and_seeded() {
        let xs = [0.011, 0.019, 0.016, 0.021, 0.013];
        let b = Bootstrap { seed: 7, resamples: 2_000 };
        let first = b.mean(&xs, 3).unwrap();
        assert_eq!(b.mean(&xs, 3), Some(first));
        assert!(first.0 < first.1 && first.0 >= 0.011 && first.1 <= 0.021);
        let other = Bootstrap { seed: 8, resamples: 2_000 }.mean(&xs, 3).unwrap();
        assert_ne!(first, other, "another seed draws other resamples");
    }

    #[test]
    fn a_ratio_over_zero_has_no_estimate() {
        assert_eq!(Contrast::Ratio.of(1.0, 0.0), None);
        assert_eq!(Contrast::Difference.of(1.0, 0.0), Some(1.0));
    }
}
