//! `sliding-N[-pin]` (spec §2): the system block, then the last N other blocks; result blocks at
//! the front of the kept part, whose call was cut off, are dropped too. `-pin` also keeps the
//! first `user` block (not its attachments) right after the system block.
//!
//! The window moves every turn once it is full, so the request changes from its first
//! conversation block on: this is the family that is not cache friendly, by construction. The
//! replay itself shifts the window (drops its front, appends the new blocks) rather than
//! rebuilding it, so a turn clones only its new blocks.

use crate::projection::Block;

use super::{Family, Origin, Out, TurnCx};

pub struct Sliding {
    pub n: usize,
    pub pin: bool,
    /// The window of the previous turn: `raw.blocks[start..end]`, and whether the first user
    /// block was pinned before it.
    last: Option<Window>,
}

#[derive(Clone, Copy, PartialEq, Eq)]
struct Window {
    start: usize,
    end: usize,
    pinned: bool,
}

impl Sliding {
    pub fn new(n: usize, pin: bool) -> Sliding {
        Sliding { n, pin, last: None }
    }
}

impl Family for Sliding {
    fn before_turn(&mut self, cx: &TurnCx<'_, '_>, out: &mut Out) {
        let raw = &cx.raw.blocks;
        let mut start = raw.len().saturating_sub(self.n);
        // A result at the front of the window had its call before it: drop it too.
        while start < raw.len() && matches!(raw[start].block, Block::Result { .. }) {
            start += 1;
        }
        let pinned_at = cx.raw.first_user.filter(|&u| self.pin && u < start);
        let now = Window { start, end: raw.len(), pinned: pinned_at.is_some() };
        // The raw conversation only grows, so a window that moved forward is the previous one
        // with its front dropped and the new blocks appended: shift it instead of rebuilding it.
        if let Some(last) = self.last.filter(|l| l.pinned == now.pinned && l.start <= start) {
            let from = last.start.max(start.min(last.end));
            out.drop_conv_front(from - last.start);
            for b in &raw[last.end.max(start)..] {
                out.push(b.block.clone(), Origin::Verbatim, cx.est);
            }
            self.last = Some(now);
            return;
        }
        out.clear_after_system();
        if let Some(u) = pinned_at {
            out.push(raw[u].block.clone(), Origin::Verbatim, cx.est);
            out.head += 1;
        }
        for b in &raw[start..] {
            out.push(b.block.clone(), Origin::Verbatim, cx.est);
        }
        self.last = Some(now);
    }
}

#[cfg(test)]
mod tests {
    use crate::strategy::testkit::*;

    fn fixture() -> crate::journal::Journal {
        journal(vec![
            session(),
            system("sys"),
            user_att("u1", "task", "at1", "paste.txt", "prev", 9),
            assistant("a1", "", vec![call("c1", "read", r#"{"path":"a"}"#), call("c2", "read", r#"{"path":"b"}"#)]),
            result("c1", "read", "A"),
            result("c2", "read", "B"),
            assistant("a2", "", vec![call("c3", "read", r#"{"path":"c"}"#)]),
            result("c3", "read", "C"),
            user("u2", "more"),
            assistant("a3", "done", vec![]),
        ])
    }

    #[test]
    fn window_drops_orphaned_results_at_its_front() {
        let j = fixture();
        let reqs = requests(&j, "sliding-3");
        // turn 2: raw = u1 at1 a1 c1 c2 → last 3 = a1? no: c1? window [a1,c1,c2]
        assert_eq!(ids(&reqs[1].0), ["system", "a1", "c1", "c2"]);
        // turn 3: raw = u1 at1 a1 c1 c2 a2 c3 u2 → last 3 = [a2, c3, u2]
        assert_eq!(ids(&reqs[2].0), ["system", "a2", "c3", "u2"]);
        let reqs = requests(&j, "sliding-4");
        // last 4 of turn 3 = [c2, a2, c3, u2]: c2's call is cut off → dropped.
        assert_eq!(ids(&reqs[2].0), ["system", "a2", "c3", "u2"]);
    }

    #[test]
    fn pin_keeps_the_first_user_block_without_attachments() {
        let j = fixture();
        let reqs = requests(&j, "sliding-3-pin");
        assert_eq!(ids(&reqs[2].0), ["system", "u1", "a2", "c3", "u2"]);
        // While u1 is still inside the window it is not repeated.
        let reqs = requests(&j, "sliding-10-pin");
        assert_eq!(ids(&reqs[0].0), ["system", "u1", "at1"]);
    }
}
