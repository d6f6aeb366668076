//! Billing windows (`ctxj usage --by block`), computed as ccusage 20.0.24's `blocks` command
//! computes them (`identifySessionBlocks` in its `_session-blocks.ts`): calls sorted by time; a
//! block starts at its first call's time floored to the UTC hour and lasts 5 hours; a call more
//! than 5 hours after the block's start, or more than 5 hours after the block's previous call,
//! closes the block and starts the next one (floored again); when the silence between two calls
//! is longer than 5 hours, a gap block runs from 5 hours after the last call to the next call. A
//! block is active when its last call is less than 5 hours ago and its end is still ahead.

use chrono::{DateTime, Duration, DurationRound, Utc};

/// The length of a billing window: Claude's 5 hours.
pub const BLOCK_HOURS: i64 = 5;

/// One window: a block of calls, or a gap between two.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Span {
    pub start: DateTime<Utc>,
    /// `start` + 5 h for a block; the next call's time for a gap.
    pub end: DateTime<Utc>,
    /// The time of the block's last call (`None` for a gap).
    pub last: Option<DateTime<Utc>>,
    /// Indexes (into the list given) of the calls in this block.
    pub calls: Vec<usize>,
}

impl Span {
    pub fn is_gap(&self) -> bool {
        self.last.is_none()
    }

    /// ccusage's block id: the start as ISO 8601 with milliseconds, `gap-` before a gap's.
    pub fn id(&self) -> String {
        let t = self.start.format("%Y-%m-%dT%H:%M:%S%.3fZ");
        if self.is_gap() {
            format!("gap-{t}")
        } else {
            t.to_string()
        }
    }

    /// Whether the block is still open at `now`.
    pub fn active(&self, now: DateTime<Utc>) -> bool {
        self.last.is_some_and(|l| now - l < Duration::hours(BLOCK_HOURS) && now < self.end)
    }
}

/// The blocks and gaps of calls at `times` (any order), in time order.
pub fn spans(times: &[DateTime<Utc>]) -> Vec<Span> {
    let window = Duration::hours(BLOCK_HOURS);
    let mut order: Vec<usize> = (0..times.len()).collect();
    order.sort_by_key(|&i| times[i]);
    let floor = |t: DateTime<Utc>| t.duration_trunc(Duration::hours(1)).unwrap_or(t);
    let mut out: Vec<Span> = Vec::new();
    let mut cur: Option<Span> = None;
    for i in order {
        let t = times[i];
        match cur.as_mut() {
            Some(b) if t - b.start <= window && b.last.is_none_or(|l| t - l <= window) => {
                b.calls.push(i);
                b.last = Some(t);
            }
            _ => {
                if let Some(b) = cur.take() {
                    let last = b.last.unwrap_or(b.start);
                    out.push(b);
                    if t - last > window {
                        out.push(Span { start: last + window, end: t, last: None, calls: Vec::new() });
                    }
                }
                let start = floor(t);
                cur = Some(Span { start, end: start + window, last: Some(t), calls: vec![i] });
            }
        }
    }
    out.extend(cur);
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    fn at(s: &str) -> DateTime<Utc> {
        DateTime::parse_from_rfc3339(s).unwrap().with_timezone(&Utc)
    }

    /// ccusage's own cases: one block within 5 h (start floored to the hour), a new block and a
    /// gap after 6 h, a block closed 5 h after its start even without a gap.
    #[test]
    fn blocks_follow_ccusage() {
        let one = spans(&[at("2024-01-01T10:55:30Z"), at("2024-01-01T12:00:00Z"), at("2024-01-01T11:00:00Z")]);
        assert_eq!(one.len(), 1);
        assert_eq!(one[0].id(), "2024-01-01T10:00:00.000Z");
        assert_eq!(one[0].end, at("2024-01-01T15:00:00Z"));
        assert_eq!(one[0].calls, vec![0, 2, 1], "in time order");
        assert_eq!(one[0].last, Some(at("2024-01-01T12:00:00Z")));

        let gap = spans(&[at("2024-01-01T10:00:00Z"), at("2024-01-01T12:00:00Z"), at("2024-01-01T18:00:00Z")]);
        assert_eq!(gap.len(), 3);
        assert!(gap[1].is_gap());
        assert_eq!(gap[1].id(), "gap-2024-01-01T17:00:00.000Z");
        assert_eq!(gap[1].end, at("2024-01-01T18:00:00Z"));
        assert_eq!(gap[2].calls, vec![2]);

        // 10:30, 14:00, 15:30: 15:30 is 5.5 h after the 10:00 start → a new block, no gap.
        let rolled = spans(&[at("2024-01-01T10:30:00Z"), at("2024-01-01T14:00:00Z"), at("2024-01-01T15:30:00Z")]);
        assert_eq!(rolled.len(), 2);
        assert_eq!(rolled[1].id(), "2024-01-01T15:00:00.000Z");
        // Exactly 5 h after the start still belongs to the block (ccusage compares with `>`).
        assert_eq!(spans(&[at("2024-01-01T10:00:00Z"), at("2024-01-01T15:00:00Z")]).len(), 1);
        assert!(spans(&[]).is_empty());
    }

    #[test]
    fn active_until_five_hours_after_the_last_call() {
        let b = &spans(&[at("2024-01-01T10:20:00Z")])[0];
        assert!(b.active(at("2024-01-01T14:00:00Z")));
        assert!(!b.active(at("2024-01-01T15:00:00Z")), "the block ended");
    }
}
