//! Calibration of estimates against provider tokens (spec `strategies.md` §3, seed `000_*`).
//!
//! Before turn t: multiplier = Σ wᵢ·promptᵢ / Σ wᵢ·estᵢ over earlier turns i that carry
//! `usage.prompt_tokens`, where estᵢ is the raw estimate of turn i's **recorded** request and
//! wᵢ = 0.5^((t−1−i)/4); 1.0 when there is no such turn. Calibrated estimate =
//! round-half-up(raw × multiplier).
//!
//! Written here because `elide-keep-K` needs it; the tokens module may own it later.

/// One earlier turn with a provider figure.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Point {
    /// Turn number, from 1.
    pub turn: usize,
    /// `usage.prompt_tokens` of that turn.
    pub prompt: u64,
    /// Raw estimate of that turn's recorded request.
    pub est: u64,
}

/// The multiplier before turn `t` from the points of turns before `t` (others are ignored).
pub fn multiplier(points: &[Point], t: usize) -> f64 {
    let (mut num, mut den) = (0.0f64, 0.0f64);
    for p in points.iter().filter(|p| p.turn < t) {
        let w = 0.5f64.powf((t - 1 - p.turn) as f64 / 4.0);
        num += w * p.prompt as f64;
        den += w * p.est as f64;
    }
    if den > 0.0 {
        num / den
    } else {
        1.0
    }
}

/// round-half-up(raw × multiplier).
pub fn calibrated(raw: u64, multiplier: f64) -> u64 {
    (raw as f64 * multiplier + 0.5).floor() as u64
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn no_points_means_one() {
        assert_eq!(multiplier(&[], 5), 1.0);
        assert_eq!(multiplier(&[Point { turn: 5, prompt: 10, est: 5 }], 5), 1.0);
    }

    #[test]
    fn half_life_of_four_turns() {
        // Turn 1: ratio 2 (weight 0.5^((5-1-1)/4) = 0.5^0.75); turn 4: ratio 1 (weight 1).
        let pts = [Point { turn: 1, prompt: 200, est: 100 }, Point { turn: 4, prompt: 100, est: 100 }];
        let w = 0.5f64.powf(0.75);
        let want = (w * 200.0 + 100.0) / (w * 100.0 + 100.0);
        assert!((multiplier(&pts, 5) - want).abs() < 1e-12);
        // A single point gives its ratio whatever its weight.
        assert!((multiplier(&pts[..1], 9) - 2.0).abs() < 1e-12);
    }

    #[test]
    fn rounds_half_up() {
        assert_eq!(calibrated(5, 1.5), 8); // 7.5 → 8
        assert_eq!(calibrated(5, 1.3), 7); // 6.5 → 7
        assert_eq!(calibrated(3, 1.0), 3);
    }
}
