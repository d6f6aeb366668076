//! `compact-at-N[t][-structured][-repeat|-chain]` (spec §2, seed `001_*` threshold compaction) and
//! the compaction engine it shares with `tiered`: cut selection, the summary pass, the pause rule.
//!
//! Compacting: the conversation is the blocks after the system block, minus the pinned first
//! `user` block (compact-at only) and minus earlier summaries. A cut stands before a `user`,
//! `assistant` or `notice` block, never between a call and its result. Take the earliest cut
//! whose tail fits the tail budget; if that tail has fewer than 3 blocks (or no tail fits: the
//! empty tail), the latest cut whose tail has at least 3 blocks. No cut, or fewer than 5 blocks to summarize: nothing this turn.
//! Ineffective passes (request left above 80% of its size before) pause compaction until the
//! request has grown 10% beyond its size right after that pass.

use std::collections::HashMap;

use crate::projection::Block;

use super::summary;
use super::{Family, Measure, Origin, Out, TurnCx};

/// The unit of a compaction threshold.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
pub enum Unit {
    /// Conversation size in characters.
    Chars,
    /// Raw token estimate.
    Tokens,
}

/// How often compaction runs and what happens to older summaries.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Mode {
    /// Once, then frozen.
    Once,
    /// Whenever the threshold is crossed again; the old summary is discarded.
    Repeat,
    /// Like `Repeat`, new summaries appended after the old ones.
    Chain,
}

/// Minimum blocks in a tail (unless no cut allows it).
pub const MIN_TAIL: usize = 3;
/// Minimum blocks a pass summarizes.
pub const MIN_SUMMARIZED: usize = 5;

/// The cut (index into `conv`) a pass would take, or None. `sizes[i]` is the measure of
/// `conv[i]`; the tail is `conv[cut..]`.
pub fn plan_cut(conv: &[&Block], sizes: &[u64], budget: u64) -> Option<usize> {
    let n = conv.len();
    // Position of each call in `conv`, to find cuts that would split a call from its result.
    let mut call_at: HashMap<&str, usize> = HashMap::new();
    for (i, b) in conv.iter().enumerate() {
        if let Block::Assistant { calls, .. } = b {
            for c in calls {
                call_at.insert(&c.id, i);
            }
        }
    }
    // blocked[i]: a cut before i would leave a result in the tail whose call is summarized.
    let mut blocked = vec![false; n + 1];
    let mut diff = vec![0i64; n + 2];
    for (j, b) in conv.iter().enumerate() {
        if let Block::Result { call, .. } = b {
            if let Some(&p) = call_at.get(call.as_str()).filter(|&&p| p < j) {
                diff[p + 1] += 1;
                diff[j + 1] -= 1;
            }
        }
    }
    let mut run = 0;
    for (i, slot) in blocked.iter_mut().enumerate().take(n) {
        run += diff[i];
        *slot = run > 0;
    }
    let valid = |i: usize| {
        i < n && matches!(conv[i], Block::User { .. } | Block::Assistant { .. } | Block::Notice { .. }) && !blocked[i]
    };
    let mut suffix = vec![0u64; n + 1];
    for i in (0..n).rev() {
        suffix[i] = suffix[i + 1] + sizes[i];
    }
    // No fitting cut is the empty tail: it has fewer than 3 blocks too.
    let fit = (0..n).find(|&i| valid(i) && suffix[i] <= budget).unwrap_or(n);
    let cut = if n - fit < MIN_TAIL { (0..n).rev().find(|&i| valid(i) && n - i >= MIN_TAIL)? } else { fit };
    (cut >= MIN_SUMMARIZED).then_some(cut)
}

/// A `compact-at-N` pass judged on a recorded projection (`audit`'s `pi-agent` profile): the
/// strategy's own measure and cut rule (strategies.md §2), not a window share.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Due {
    /// The conversation size: every block but the system block, in the threshold's unit.
    pub size: u64,
    /// Whether a pass would compact (a cut qualifies and at least 5 blocks are summarized).
    pub cuts: bool,
    /// What the summarized blocks measure, in the threshold's unit (before the summary's size).
    pub frees: u64,
}

/// [`Due`] of `p` for `compact-at-N` with its tail budget N/4: `size` measures a block in the
/// threshold's unit ([`Block::chars`] or the raw token estimate), `pinned` is the session's first
/// `user` block (compact-at keeps it out of the summary).
pub fn due(
    p: &crate::projection::Projection,
    pinned: Option<&str>,
    n: u64,
    size: &mut dyn FnMut(&Block) -> u64,
) -> Due {
    let total: u64 = p.summaries.iter().chain(p.conv.iter().map(|b| &b.block)).map(&mut *size).sum();
    let conv: Vec<&Block> =
        p.conv.iter().map(|b| &b.block).filter(|b| pinned.is_none_or(|id| b.id() != Some(id))).collect();
    let sizes: Vec<u64> = conv.iter().map(|b| size(b)).collect();
    let cut = plan_cut(&conv, &sizes, n / 4);
    Due { size: total, cuts: cut.is_some(), frees: cut.map_or(0, |c| sizes[..c].iter().sum()) }
}

/// The pause after an ineffective pass.
#[derive(Debug, Default, Clone, Copy)]
pub struct Pause {
    /// Size right after the ineffective pass.
    after: Option<u64>,
}

impl Pause {
    /// The size right after the ineffective pass that paused compaction, while paused.
    pub fn paused_at(&self) -> Option<u64> {
        self.after
    }

    /// Whether a pass may run at this size (and lifts the pause when it may).
    pub fn allows(&mut self, size: u64) -> bool {
        match self.after {
            Some(a) if (size as u128) * 10 < (a as u128) * 11 => false,
            _ => {
                self.after = None;
                true
            }
        }
    }

    /// Records a pass from `before` to `after`.
    pub fn record(&mut self, before: u64, after: u64) {
        if (after as u128) * 10 > (before as u128) * 8 {
            self.after = Some(after);
        }
    }
}

/// What the summarizer is asked (seed `003_*`'s handover brief, in the five sections of the
/// deterministic template). Priced as the last block of the summarizer's request.
pub const INSTRUCTION: &str = "Summarize the conversation above for a handover in five sections: Task Overview, Current State, Important Discoveries, Next Steps, Context to Preserve. Replace secrets with [REDACTED].";

/// The summarizer's own request in a replayed compaction: the system block and the summarized
/// blocks, then [`INSTRUCTION`] as a user block, in; the summary out. `cache` prices it as a
/// request of its own, before the turn whose request carries the summary.
#[derive(Debug, Clone, PartialEq)]
pub struct SummarizerCall {
    /// The system block (when there is one), the summarized blocks, the instruction.
    pub input: Vec<Block>,
    /// The summary it returned.
    pub summary: Block,
}

impl SummarizerCall {
    /// How many blocks it summarized.
    pub fn summarized(&self) -> usize {
        self.input.iter().filter(|b| !matches!(b, Block::System { .. })).count().saturating_sub(1)
    }
}

/// One compaction pass over `out`, whose conversation starts at `out.head`. `pinned` is the
/// absolute index of the pinned first user block when it still stands in the conversation;
/// it moves right after the system block. The tail is measured with `out`'s measure (the
/// threshold's unit). Returns whether the pass compacted.
pub(crate) fn pass(cx: &TurnCx<'_, '_>, out: &mut Out, pinned: Option<usize>, tail_budget: u64, chain: bool) -> bool {
    let conv_idx: Vec<usize> = (out.head..out.blocks.len()).filter(|&i| Some(i) != pinned).collect();
    let conv: Vec<&Block> = conv_idx.iter().map(|&i| &out.blocks[i]).collect();
    let sizes: Vec<u64> = conv_idx.iter().map(|&i| out.sizes[i]).collect();
    let Some(cut) = plan_cut(&conv, &sizes, tail_budget) else { return false };
    let first_user = cx.raw.first_user.map(|u| cx.raw.blocks[u].block.text());
    let journal = cx.journal;
    let is_error = |call: &str| journal.result(call).and_then(|r| r.is_error).unwrap_or(false);
    let s: Vec<Block> = conv[..cut].iter().map(|b| (*b).clone()).collect();
    let mut text = summary::build(first_user, &s, &is_error);
    let system = out.blocks.first().filter(|_| out.has_system).cloned();
    let instruction = Block::User { id: format!("summarize-{}", cx.turn), text: INSTRUCTION.into() };
    let input: Vec<Block> = system.into_iter().chain(s).chain(std::iter::once(instruction)).collect();
    if let Some(cmd) = cx.summarizer {
        text = cmd.summarize(INSTRUCTION, &input[..input.len() - 1], &text);
    }
    let summary = Block::Summary { text: text.into() };

    // Rebuild: system, pinned user, (old summaries when chaining), new summary, tail.
    let mut old = std::mem::replace(out, Out::new(out.measure));
    out.summarized = std::mem::take(&mut old.summarized);
    out.summarized.push(SummarizerCall { input, summary: summary.clone() });
    let take = |i: usize| (old.blocks[i].clone(), old.origins[i], old.sizes[i]);
    let sys = usize::from(old.has_system);
    if old.has_system {
        let (b, o, m) = take(0);
        out.push_sized(b, o, m);
        out.has_system = true;
    }
    // The pinned block: either still in the conversation, or already in the head.
    let head_pinned = (sys..old.head).find(|&i| matches!(old.blocks[i], Block::User { .. }));
    for i in pinned.into_iter().chain(head_pinned) {
        let (b, o, m) = take(i);
        out.push_sized(b, o, m);
    }
    if chain {
        for i in sys..old.head {
            if matches!(old.blocks[i], Block::Summary { .. }) {
                let (b, o, m) = take(i);
                out.push_sized(b, o, m);
            }
        }
    }
    out.push(summary, Origin::Summary { turn: cx.turn }, cx.est);
    out.head = out.blocks.len();
    for &i in &conv_idx[cut..] {
        let (b, o, m) = take(i);
        out.push_sized(b, o, m);
    }
    true
}

pub struct CompactAt {
    n: u64,
    unit: Unit,
    mode: Mode,
    done: bool,
    pause: Pause,
}

impl CompactAt {
    pub fn new(n: u64, unit: Unit, mode: Mode) -> CompactAt {
        CompactAt { n, unit, mode, done: false, pause: Pause::default() }
    }
}

impl Family for CompactAt {
    fn measure(&self) -> Measure {
        match self.unit {
            Unit::Chars => Measure::Chars,
            Unit::Tokens => Measure::Tokens,
        }
    }

    fn before_turn(&mut self, cx: &TurnCx<'_, '_>, out: &mut Out) {
        for b in &cx.raw.blocks[cx.new.clone()] {
            out.push(b.block.clone(), Origin::Verbatim, cx.est);
        }
        let size = out.conv_size();
        if self.done || size <= self.n || !self.pause.allows(size) {
            return;
        }
        // The pinned first user block stands in the conversation until the first pass.
        let pinned = match cx.raw.first_user {
            // No pass yet: the request is the raw conversation, block u sits at head + u.
            Some(u) if out.head == usize::from(out.has_system) => Some(out.head + u),
            _ => None,
        };
        if pass(cx, out, pinned, self.n / 4, self.mode == Mode::Chain) {
            self.pause.record(size, out.conv_size());
            if self.mode == Mode::Once {
                self.done = true;
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::strategy::testkit::*;

    fn u(id: &str) -> Block {
        Block::User { id: id.into(), text: "u".into() }
    }
    fn a(id: &str, calls: &[&str]) -> Block {
        Block::Assistant {
            id: id.into(),
            text: "".into(),
            calls: calls
                .iter()
                .map(|c| crate::projection::BlockCall {
                    id: c.to_string(),
                    tool: "run".into(),
                    args: std::sync::Arc::new(serde_json::Value::Null),
                })
                .collect(),
        }
    }
    fn r(call: &str) -> Block {
        Block::Result { call: call.into(), tool: "run".into(), text: "r".into() }
    }

    #[test]
    fn cut_rules() {
        // u0 a1(c1) r1 a2(c2) r2 a3(c3) r3 u4 a5
        let conv = [
            u("u0"),
            a("a1", &["c1"]),
            r("c1"),
            a("a2", &["c2"]),
            r("c2"),
            a("a3", &["c3"]),
            r("c3"),
            u("u4"),
            a("a5", &[]),
        ];
        let refs: Vec<&Block> = conv.iter().collect();
        let ones = vec![1u64; conv.len()];
        // Budget 4: earliest fitting valid cut: index 5 (a3: tail a3 r3 u4 a5 = 4). S = 5 blocks.
        assert_eq!(plan_cut(&refs, &ones, 4), Some(5));
        // Budget 2: earliest fitting cut is 7 (u4 a5 = 2 blocks < 3) → latest cut with ≥ 3 blocks: 5.
        assert_eq!(plan_cut(&refs, &ones, 2), Some(5));
        // Budget 6: cut 3 fits but summarizes only 3 blocks → nothing.
        assert_eq!(plan_cut(&refs, &ones, 6), None);
        // Nothing fits: the empty tail has fewer than 3 blocks → the latest cut with ≥ 3 blocks.
        assert_eq!(plan_cut(&refs, &ones, 0), Some(5));
        // No cut with a tail of ≥ 3 blocks: nothing.
        assert_eq!(plan_cut(&refs[..2], &ones[..2], 0), None);
    }

    #[test]
    fn never_between_a_call_and_its_result() {
        // a1 calls c1, a notice stands before its result: a cut before the notice would split them.
        let n = Block::Notice { id: "n".into(), text: "x".into() };
        let conv = [u("u0"), u("u1"), u("u2"), u("u3"), u("u4"), a("a1", &["c1"]), n, r("c1"), u("u5"), a("a6", &[])];
        let refs: Vec<&Block> = conv.iter().collect();
        let ones = vec![1u64; conv.len()];
        // Budget 4 would fit the cut before the notice (n r u5 a6); it is blocked, so the next valid fitting
        // cut is u5 (2 blocks) → fallback latest with ≥ 3: before a1? blocked? no, a1 is valid: 5 blocks.
        // Latest valid cut with tail ≥ 3 blocks is a1 (index 5, tail 5).
        assert_eq!(plan_cut(&refs, &ones, 4), Some(5));
    }

    #[test]
    fn pause_rule() {
        let mut p = Pause::default();
        assert!(p.allows(100));
        p.record(100, 81); // above 80%: ineffective
        assert!(!p.allows(85));
        assert!(!p.allows(89));
        assert!(p.allows(90)); // 81 × 1.1 = 89.1 → 90 has grown 10%
        p.record(100, 80); // exactly 80%: effective
        assert!(p.allows(80));
    }

    fn fixture() -> crate::journal::Journal {
        let mut v = vec![session(), system("sys"), user("u1", "fix the bug in api.ts")];
        for i in 1..=8 {
            v.push(assistant(
                &format!("a{i}"),
                &format!("step {i}"),
                vec![call(&format!("c{i}"), "read", &format!(r#"{{"path":"f{i}.ts"}}"#))],
            ));
            v.push(result(&format!("c{i}"), "read", &"x".repeat(100)));
        }
        v.push(assistant("a9", "done", vec![]));
        journal(v)
    }

    #[test]
    fn compact_once_pins_the_first_user_and_freezes() {
        let j = fixture();
        let reqs = requests(&j, "compact-at-600");
        // Sizes: each assistant ≈ 6 + 4 + 15 = 25 chars, each result 100; after 5 pairs: 21 + 625 > 600.
        let first = reqs.iter().position(|(_, o)| o.iter().any(|o| matches!(o, Origin::Summary { .. }))).unwrap();
        let (b, o) = &reqs[first];
        assert_eq!(ids(b)[..3], ["system", "u1", "summary"]);
        assert_eq!(o[2], Origin::Summary { turn: first + 1 });
        // Tail budget 150 chars: the last assistant + result (126) fits; fewer than 3 blocks → the
        // latest cut with ≥ 3 blocks, before a4: tail a4 r4 a5 r5.
        assert_eq!(ids(b)[3..], ["a4", "c4", "a5", "c5"]);
        let summary = b[2].text().to_string();
        assert!(summary.starts_with("## Task Overview\nfix the bug in api.ts\n## Current State\n- f1.ts\n"));
        // Frozen: later requests keep the same summary and only append.
        for (later, _) in &reqs[first + 1..] {
            assert_eq!(later[2].text(), summary);
            assert_eq!(later[..b.len()], b[..]);
        }
    }

    /// A pass over tiny blocks writes a summary bigger than what it replaces: ineffective, so
    /// compaction pauses until the request has grown 10% beyond its size right after the pass
    /// (each turn here adds 7 characters and 5 blocks, so without the pause every turn would
    /// compact).
    #[test]
    fn ineffective_passes_pause_in_a_replay() {
        let mut v = vec![session(), system("sys"), user("u0", "task")];
        for i in 1..=30 {
            v.push(user(&format!("u{i}"), "u"));
            v.push(notice(&format!("n{i}a"), "n", None));
            v.push(notice(&format!("n{i}b"), "n", None));
            v.push(assistant(&format!("a{i}"), "", vec![call(&format!("c{i}"), "r", "{}")]));
            v.push(result(&format!("c{i}"), "r", "r"));
        }
        v.push(assistant("end", "done", vec![]));
        let j = journal(v);
        let size = |b: &[Block]| b[1..].iter().map(Block::chars).sum::<usize>();
        let reqs = requests(&j, "compact-at-60-repeat");
        let passes: Vec<usize> = reqs
            .iter()
            .enumerate()
            .filter(|(t, (_, o))| o.contains(&Origin::Summary { turn: t + 1 }))
            .map(|(t, _)| t)
            .collect();
        assert!(passes.len() >= 3, "{passes:?}");
        for w in passes.windows(2) {
            let (t1, t2) = (w[0], w[1]);
            let after = size(&reqs[t1].0);
            assert!(t2 > t1 + 1, "paused after the ineffective pass at turn {}", t1 + 1);
            for (b, _) in &reqs[t1 + 1..t2] {
                assert!(size(b) > 60 && size(b) * 10 < after * 11, "paused while above N and below +10%");
            }
            // Before compacting at t2 the request had grown at least 10% beyond `after`.
            assert!((size(&reqs[t2 - 1].0) + 7) * 10 >= after * 11);
        }
    }

    #[test]
    fn repeat_and_chain() {
        let j = fixture();
        let rep = requests(&j, "compact-at-300-repeat");
        let summaries = |b: &Vec<Block>| b.iter().filter(|b| matches!(b, Block::Summary { .. })).count();
        assert!(rep.iter().all(|(b, _)| summaries(b) <= 1));
        let passes = rep.windows(2).filter(|w| w[0].0.get(2) != w[1].0.get(2) && summaries(&w[1].0) == 1).count();
        assert!(passes >= 2, "repeat compacts again: {passes}");
        let ch = requests(&j, "compact-at-300-chain");
        assert!(ch.iter().any(|(b, _)| summaries(b) >= 2));
    }
}
