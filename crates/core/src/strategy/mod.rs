//! Strategies (spec `strategies.md` §1–§2): what the provider sees on each turn.
//!
//! [`parse`] reads a strategy name; [`replay`] runs a strategy over a journal turn by turn and
//! hands each request to a callback, with a parallel list of [`Origin`]s saying how the strategy
//! changed each block. `recorded` is the journal's own projection; every other strategy starts
//! from the raw conversation of §1, built once in [`raw`] and shared by all families.
//!
//! One file per family: [`truncate`] (`truncate-N`, `age-truncate-N-keep-K`, `mid-truncate-N`),
//! [`sliding`], [`per_tool`], [`elide`] (calibrated by [`crate::tokens::Calibrator`]), [`compact`] (`compact-at-…`, and the
//! cut/pause engine `tiered` shares), [`tiered`]; [`summary`] writes the deterministic summary.
//!
//! Replays are incremental: each family keeps its request (`Out`) from one turn to the next and
//! only appends the new raw blocks and applies the decisions the rule takes at this turn, so a
//! decision once taken stays byte-identical and no turn rebuilds the whole history (except
//! `sliding-N`, whose window is rebuilt, and compaction passes, which rebuild once per pass).

pub mod compact;
pub mod elide;
pub mod name;
pub mod per_tool;
pub mod raw;
pub mod reasoning;
pub mod recorded;
pub mod sliding;
pub mod summarizer;
pub mod summary;
pub mod thinking;
pub mod tiered;
pub mod truncate;
pub mod view;

#[cfg(test)]
mod props;
#[cfg(test)]
pub(crate) mod testkit;

use crate::journal::Journal;
use crate::projection::{Block, Mark, Projection, Replayer};
use crate::tokens::Estimator;

pub use name::{completion_words, parse, StrategyError, FAMILIES};
pub use raw::Raw;
pub use recorded::{
    calibrator_for, kept_thinking, new_calibrator, prefix_segments, prefix_unrecorded, recorded_turns,
    thinking_carried, unrecorded_prefix, RecordedTurn, UnrecordedPrefix,
};
pub use view::{compare, recorded_view, strategy_view, strategy_view_with_progress, View, ViewDiff, ViewError};

/// A parsed strategy name.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Strategy {
    /// The name as the user wrote it.
    pub name: String,
    pub kind: Kind,
    /// `--summarizer CMD`: compactions ask it for their summaries (else the template).
    pub summarizer: Option<std::sync::Arc<summarizer::Summarizer>>,
}

impl Strategy {
    /// `recorded`: the journal's own projection.
    pub fn recorded() -> Strategy {
        Strategy { name: "recorded".into(), kind: Kind::Recorded, summarizer: None }
    }

    /// Whether this is the journal's own projection.
    pub fn is_recorded(&self) -> bool {
        self.kind == Kind::Recorded
    }

    /// This strategy with its compactions asking `summarizer` for their summaries (`None`: the
    /// deterministic template).
    pub fn with_summarizer(mut self, summarizer: Option<std::sync::Arc<summarizer::Summarizer>>) -> Strategy {
        self.summarizer = summarizer;
        self
    }
}

/// The strategies compared when none is named (`cache`, `report`): the journal's own requests,
/// and `baseline`, the one that drops nothing (the reference of every cost ratio).
pub fn defaults() -> Vec<Strategy> {
    vec![Strategy::recorded(), Strategy { name: "baseline".into(), kind: Kind::Baseline, summarizer: None }]
}

/// The families of spec §2 with their parameters.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Kind {
    Recorded,
    Baseline,
    /// `truncate-N`: characters.
    Truncate {
        n: usize,
    },
    /// `age-truncate-N-keep-K`.
    AgeTruncate {
        n: usize,
        keep: usize,
    },
    /// `mid-truncate-N`: bytes.
    MidTruncate {
        n: usize,
    },
    /// `sliding-N[-pin]`.
    Sliding {
        n: usize,
        pin: bool,
    },
    /// `per-tool-keep-K`.
    PerTool {
        keep: usize,
    },
    /// `elide-keep-K` (`budget` None: the session's settings) / `elide-B-T-keep-K`.
    Elide {
        budget: Option<(u64, u64)>,
        keep: usize,
    },
    /// `compact-at-N[t][-structured][-repeat|-chain]`.
    CompactAt {
        n: u64,
        unit: compact::Unit,
        mode: compact::Mode,
        structured: bool,
    },
    /// `tiered` / `tiered-fast`.
    Tiered {
        fast: bool,
    },
}

/// How the strategy produced a block of the request, for explanations ("text changed by elide").
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Origin {
    /// As in the conversation the strategy starts from (the raw conversation, or for `recorded`
    /// the block as its record wrote it).
    Verbatim,
    /// Cut to its first N characters + `…[truncated M chars]` (`truncate-N`,
    /// `age-truncate-N-keep-K`, the list/search class of `per-tool-keep-K`).
    Truncated,
    /// Head + `…[truncated M bytes]…` + tail (`mid-truncate-N`).
    MidTruncated,
    /// `[stale read: <p>; read again if needed]` (`per-tool-keep-K`).
    StaleRead,
    /// Collapsed to an elision marker before this turn (`elide-*`).
    Elided { turn: usize },
    /// A summary written by a compaction before this turn.
    Summary { turn: usize },
    /// An assistant block some of whose calls were dropped with their results before this turn
    /// (`tiered-fast`); its text is untouched.
    CallsDropped { turn: usize },
    /// `recorded`: elided by the `elide` record at this rev.
    RecordedElided { rev: u64 },
    /// `recorded`: cleared by the `clear` record at this rev.
    RecordedCleared { rev: u64 },
    /// `recorded`: edited by the accepted mirror draft with this `mirror_rev`.
    MirrorEdited { mirror_rev: u64 },
    /// `recorded`: a summary of a `compact` record.
    RecordedSummary,
}

impl Origin {
    /// Whether the strategy changed (or wrote) the block.
    pub fn is_changed(&self) -> bool {
        *self != Origin::Verbatim
    }

    /// A short phrase for reports: "truncated", "elided (turn 5)", "summary (turn 9)", ….
    pub fn describe(&self) -> String {
        match self {
            Origin::Verbatim => "verbatim".into(),
            Origin::Truncated => "truncated".into(),
            Origin::MidTruncated => "mid-truncated".into(),
            Origin::StaleRead => "stale read".into(),
            Origin::Elided { turn } => format!("elided (turn {turn})"),
            Origin::Summary { turn } => format!("summary (turn {turn})"),
            Origin::CallsDropped { turn } => format!("calls dropped (turn {turn})"),
            Origin::RecordedElided { rev } => format!("elided @ rev {rev}"),
            Origin::RecordedCleared { rev } => format!("cleared @ rev {rev}"),
            Origin::MirrorEdited { mirror_rev } => format!("edited by mirror r{mirror_rev}"),
            Origin::RecordedSummary => "summary".into(),
        }
    }
}

/// One request of a replay.
pub struct TurnRequest<'a> {
    /// Turn number, from 1 (the k-th `assistant` record).
    pub turn: usize,
    /// Index of the turn's `assistant` record in `journal.records`.
    pub record: usize,
    /// The request's blocks in order: the system block, then (for `recorded`) the summaries and
    /// the conversation; for compaction strategies the system block, the pinned first user block
    /// (`compact-at`), the summaries, the tail (spec `strategies.md` §2).
    pub blocks: &'a [Block],
    /// How the strategy produced each block; `origins.len() == blocks.len()`.
    pub origins: &'a [Origin],
    /// How many leading blocks are the previous request's blocks, unchanged (a lower bound: 0 on
    /// the first turn, and after a rebuild such as a compaction). Consumers that keep per-block
    /// state (the cache simulation) only revisit the blocks after them.
    pub unchanged: usize,
    /// The summarizer requests of the compactions replayed before this turn (issue 17).
    pub summarized: &'a [compact::SummarizerCall],
}

/// The origins of a recorded projection's blocks (from their marks), in [`Projection::blocks`]
/// order.
pub fn recorded_origins(p: &Projection) -> impl Iterator<Item = Origin> + '_ {
    recorded_origins_from(p, 0)
}

/// The number of blocks before `p.conv`, and `p.conv` from block `from` of the whole request on:
/// skipping through slices, not by stepping a mapped iterator over every earlier block (that
/// made each turn of the recorded replay cost the whole history, issue 21).
fn conv_from(p: &Projection, from: usize) -> (usize, &[crate::projection::ProjBlock]) {
    let head = usize::from(p.system.is_some()) + p.summaries.len();
    (head, &p.conv[from.saturating_sub(head).min(p.conv.len())..])
}

/// The blocks of `p` from index `from` on (see [`conv_from`]).
fn blocks_from(p: &Projection, from: usize) -> impl Iterator<Item = &Block> + '_ {
    let (head, conv) = conv_from(p, from);
    p.system.iter().chain(&p.summaries).skip(from.min(head)).chain(conv.iter().map(|b| &b.block))
}

/// [`recorded_origins`] from block `from` on (see [`conv_from`]).
fn recorded_origins_from(p: &Projection, from: usize) -> impl Iterator<Item = Origin> + '_ {
    let (head, conv) = conv_from(p, from);
    let h = p.system.iter().map(|_| Origin::Verbatim).chain(p.summaries.iter().map(|_| Origin::RecordedSummary));
    h.skip(from.min(head)).chain(conv.iter().map(|b| match b.mark {
        Mark::None => Origin::Verbatim,
        Mark::Elided(rev) => Origin::RecordedElided { rev },
        Mark::Cleared(rev) => Origin::RecordedCleared { rev },
        Mark::Edited(mirror_rev) => Origin::MirrorEdited { mirror_rev },
    }))
}

/// Replays `strategy` over `journal`, calling `f` once per turn in order.
pub fn replay(journal: &Journal, strategy: &Strategy, est: &dyn Estimator, f: impl FnMut(&TurnRequest<'_>)) {
    replay_to(journal, strategy, est, usize::MAX, f)
}

/// Replays turns 1..=`last` only (the replay stops there).
pub fn replay_to(
    journal: &Journal,
    strategy: &Strategy,
    est: &dyn Estimator,
    last: usize,
    mut f: impl FnMut(&TurnRequest<'_>),
) {
    let turns = journal.turns.len().min(last);
    if strategy.kind == Kind::Recorded {
        let mut r = Replayer::new(journal);
        let mut blocks = Vec::new();
        let mut origins = Vec::new();
        for (k, &idx) in journal.turns[..turns].iter().enumerate() {
            r.advance_to(idx);
            // Blocks the replayer did not touch since the previous turn are not compared again,
            // so a turn that only appended costs its new blocks.
            let from = r.take_unchanged().min(blocks.len()).min(origins.len());
            let p = r.projection();
            // Update in place: unchanged blocks share their texts, so this costs pointer
            // comparisons, not a copy of the history, per turn.
            let mut n = from;
            let mut unchanged = if k == 0 { 0 } else { usize::MAX };
            for b in blocks_from(p, from) {
                match blocks.get_mut(n) {
                    Some(old) if same_block(old, b) => {}
                    Some(old) => {
                        *old = b.clone();
                        unchanged = unchanged.min(n);
                    }
                    None => blocks.push(b.clone()),
                }
                n += 1;
            }
            blocks.truncate(n);
            // Origins too: a block repeated with another mark counts as changed.
            let mut m = from;
            for o in recorded_origins_from(p, from) {
                match origins.get_mut(m) {
                    Some(old) if *old == o => {}
                    Some(old) => {
                        *old = o;
                        unchanged = unchanged.min(m);
                    }
                    None => origins.push(o),
                }
                m += 1;
            }
            origins.truncate(m);
            unchanged = unchanged.min(n);
            f(&TurnRequest {
                turn: k + 1,
                record: idx,
                blocks: &blocks,
                origins: &origins,
                unchanged,
                summarized: &[],
            });
        }
        return;
    }
    let mut raw = Raw::new(journal);
    let mut fam = family(&strategy.kind, journal);
    let mut out = Out::new(fam.measure());
    for (k, &idx) in journal.turns[..turns].iter().enumerate() {
        let new = raw.advance_to(idx);
        out.set_system(raw.system.as_ref(), est);
        let summarizer = strategy.summarizer.as_deref();
        let cx = TurnCx { turn: k + 1, record: idx, raw: &raw, new, est, journal, summarizer };
        fam.before_turn(&cx, &mut out);
        let unchanged = out.mark();
        let summarized = &out.summarized;
        f(&TurnRequest { turn: k + 1, record: idx, blocks: &out.blocks, origins: &out.origins, unchanged, summarized });
        fam.after_turn(&cx, &out);
        out.summarized.clear();
    }
}

/// The request of turn `k` (from 1) under `strategy`, with its origins.
pub fn request_at(
    journal: &Journal,
    strategy: &Strategy,
    est: &dyn Estimator,
    k: usize,
    progress: &mut dyn FnMut(usize, usize),
) -> Option<(Vec<Block>, Vec<Origin>)> {
    let mut got = None;
    replay_to(journal, strategy, est, k, |r| {
        progress(r.turn, k);
        if r.turn == k {
            got = Some((r.blocks.to_vec(), r.origins.to_vec()));
        }
    });
    got
}

/// What a family sees before a turn.
pub(crate) struct TurnCx<'a, 'j> {
    pub turn: usize,
    /// Index of the turn's assistant record.
    pub record: usize,
    pub raw: &'a Raw<'j>,
    /// The raw blocks that arrived since the previous turn (indices into `raw.blocks`).
    pub new: std::ops::Range<usize>,
    pub est: &'a dyn Estimator,
    pub journal: &'j Journal,
    /// `--summarizer CMD`, when given.
    pub summarizer: Option<&'a summarizer::Summarizer>,
}

/// One family's replay state.
pub(crate) trait Family {
    /// What [`Out`] measures per block (for thresholds).
    fn measure(&self) -> Measure {
        Measure::None
    }
    /// Updates the request for this turn: append the new raw blocks, apply the rule.
    fn before_turn(&mut self, cx: &TurnCx<'_, '_>, out: &mut Out);
    /// Called after the request was handed out (e.g. to record calibration points).
    fn after_turn(&mut self, _cx: &TurnCx<'_, '_>, _out: &Out) {}
}

fn family<'j>(kind: &Kind, journal: &'j Journal) -> Box<dyn Family + 'j> {
    match *kind {
        Kind::Recorded | Kind::Baseline => Box::new(truncate::Baseline),
        Kind::Truncate { n } => Box::new(truncate::Truncate { n }),
        Kind::MidTruncate { n } => Box::new(truncate::MidTruncate { n }),
        Kind::AgeTruncate { n, keep } => Box::new(truncate::AgeTruncate::new(n, keep)),
        Kind::Sliding { n, pin } => Box::new(sliding::Sliding::new(n, pin)),
        Kind::PerTool { keep } => Box::new(per_tool::PerTool::new(keep)),
        Kind::Elide { budget, keep } => Box::new(elide::Elide::new(journal, budget, keep)),
        Kind::CompactAt { n, unit, mode, .. } => Box::new(compact::CompactAt::new(n, unit, mode)),
        Kind::Tiered { fast } => Box::new(tiered::Tiered::new(fast)),
    }
}

/// What [`Out`] keeps per block besides the block.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Measure {
    None,
    /// [`Block::chars`].
    Chars,
    /// The estimator's block count (spec §3 framing).
    Tokens,
}

impl Measure {
    pub fn of(self, b: &Block, est: &dyn Estimator) -> u64 {
        match self {
            Measure::None => 0,
            Measure::Chars => b.chars() as u64,
            Measure::Tokens => est.block(b),
        }
    }
}

/// A request under construction, kept from turn to turn: the blocks, their origins and a
/// per-block measure (characters or tokens) with its running sum.
#[derive(Debug, Clone)]
pub(crate) struct Out {
    /// Read freely; change only through the methods below, which keep `stable` (a block changed
    /// behind their back would be missed by the cache simulation; the property test
    /// `cache_simulation_is_incremental_and_exact` catches that).
    pub blocks: Vec<Block>,
    pub origins: Vec<Origin>,
    pub sizes: Vec<u64>,
    pub total: u64,
    /// Blocks before the conversation: the system block, a pinned user block, summaries.
    pub head: usize,
    pub has_system: bool,
    pub measure: Measure,
    /// Leading blocks unchanged since the last [`Out::mark`]; every method that replaces,
    /// inserts or removes blocks lowers it (`push` appends and leaves it).
    stable: usize,
    /// The summarizer requests of the passes before this turn ([`compact::pass`]).
    pub summarized: Vec<compact::SummarizerCall>,
}

impl Out {
    pub fn new(measure: Measure) -> Out {
        Out {
            blocks: Vec::new(),
            origins: Vec::new(),
            sizes: Vec::new(),
            total: 0,
            head: 0,
            has_system: false,
            measure,
            stable: 0,
            summarized: Vec::new(),
        }
    }

    /// How many leading blocks are unchanged since the previous call (0 the first time).
    pub fn mark(&mut self) -> usize {
        let s = self.stable.min(self.blocks.len());
        self.stable = self.blocks.len();
        s
    }

    /// Puts `sys` first (replacing the old system block), when it differs.
    pub fn set_system(&mut self, sys: Option<&Block>, est: &dyn Estimator) {
        match (sys, self.has_system) {
            (None, _) => {}
            (Some(s), true) => {
                if &self.blocks[0] != s {
                    self.set(0, s.clone(), Origin::Verbatim, est);
                }
            }
            (Some(s), false) => {
                let m = self.measure.of(s, est);
                self.stable = 0;
                self.blocks.insert(0, s.clone());
                self.origins.insert(0, Origin::Verbatim);
                self.sizes.insert(0, m);
                self.total += m;
                self.head += 1;
                self.has_system = true;
            }
        }
    }

    pub fn push(&mut self, b: Block, o: Origin, est: &dyn Estimator) {
        let m = self.measure.of(&b, est);
        self.push_sized(b, o, m);
    }

    pub fn push_sized(&mut self, b: Block, o: Origin, m: u64) {
        self.blocks.push(b);
        self.origins.push(o);
        self.sizes.push(m);
        self.total += m;
    }

    /// Replaces block `i` (absolute index).
    pub fn set(&mut self, i: usize, b: Block, o: Origin, est: &dyn Estimator) {
        let m = self.measure.of(&b, est);
        self.total = self.total - self.sizes[i] + m;
        self.stable = self.stable.min(i);
        self.sizes[i] = m;
        self.blocks[i] = b;
        self.origins[i] = o;
    }

    /// Replaces the text of block `i`.
    pub fn set_text(&mut self, i: usize, text: String, o: Origin, est: &dyn Estimator) {
        let mut b = self.blocks[i].clone();
        b.set_text(text.into());
        self.set(i, b, o, est);
    }

    /// Size of everything but the system block.
    pub fn conv_size(&self) -> u64 {
        self.total - if self.has_system { self.sizes[0] } else { 0 }
    }

    /// Removes the first `n` conversation blocks (those right after the head), moving the rest
    /// down instead of rebuilding them.
    pub fn drop_conv_front(&mut self, n: usize) {
        let range = self.head..self.head.saturating_add(n).min(self.blocks.len());
        if range.is_empty() {
            return;
        }
        self.stable = self.stable.min(self.head);
        self.total -= self.sizes[range.clone()].iter().sum::<u64>();
        self.blocks.drain(range.clone());
        self.origins.drain(range.clone());
        self.sizes.drain(range);
    }

    /// Keeps the system block only.
    pub fn clear_after_system(&mut self) {
        let keep = usize::from(self.has_system);
        self.stable = self.stable.min(keep);
        self.blocks.truncate(keep);
        self.origins.truncate(keep);
        self.sizes.truncate(keep);
        self.total = self.sizes.iter().sum();
        self.head = keep;
    }
}

pub use crate::projection::diff::same_block;

#[cfg(test)]
mod skip_tests {
    use super::*;

    /// Regression (issue 21, `turns` on 20,000 tiny turns took 58 s in a debug build): the
    /// recorded replay skips a turn's unchanged blocks through slices. From every index, what it
    /// yields is what skipping through the whole request yields, with summaries (compactions)
    /// and marks (elisions) in the request.
    #[test]
    fn blocks_from_any_index_equal_a_skip() {
        for text in [
            include_str!("../../../../sample-journals/compaction/journal.jsonl"),
            include_str!("../../../../sample-journals/long-elision/journal.jsonl"),
        ] {
            let j = crate::journal::parse_bytes(std::path::Path::new("j.jsonl"), text.as_bytes(), Default::default())
                .expect("valid journal");
            let mut r = Replayer::new(&j);
            for &t in &j.turns {
                r.advance_to(t);
                let p = r.projection();
                let n = p.blocks().count();
                for from in 0..=n + 1 {
                    let a: Vec<&Block> = blocks_from(p, from).collect();
                    assert_eq!(a, p.blocks().skip(from).collect::<Vec<_>>(), "blocks from {from}");
                    let o: Vec<Origin> = recorded_origins_from(p, from).collect();
                    assert_eq!(o, recorded_origins(p).skip(from).collect::<Vec<_>>(), "origins from {from}");
                }
            }
        }
    }
}
