//! The rows of `ctxj turns`: per turn of a strategy's replay, the request's size and how it
//! relates to the previous request ([`crate::projection::diff`]).

use serde::Serialize;

use crate::journal::Journal;
use crate::projection::diff::{first_break, Cause, PrefixBreak};
use crate::projection::Block;
use crate::strategy::{self, Origin, Strategy, TurnRequest};
use crate::tokens::Estimator;

/// How a request relates to the previous one.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, schemars::JsonSchema)]
#[serde(tag = "change", rename_all = "lowercase")]
pub enum Change {
    First,
    /// Starts with the whole previous request; this many blocks follow it.
    Appended {
        appended: usize,
    },
    /// The prefix differs at this block (numbered from 1); its id (or type) and why.
    Rewritten {
        block: usize,
        id: String,
        why: String,
    },
}

/// One turn.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, schemars::JsonSchema)]
pub struct TurnRow {
    pub turn: usize,
    pub rev: u64,
    pub blocks: usize,
    pub chars: usize,
    #[serde(flatten)]
    pub change: Change,
    /// The compaction summarizer's requests that ran before this turn (issue 17).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub summarizer: Option<SummarizerMark>,
}

/// The summarizer requests before a turn: blocks summarized, characters in and out.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, schemars::JsonSchema)]
pub struct SummarizerMark {
    pub calls: usize,
    pub summarized: usize,
    pub input_chars: usize,
    pub summary_chars: usize,
}

fn summarizer_mark(calls: &[crate::strategy::compact::SummarizerCall]) -> Option<SummarizerMark> {
    (!calls.is_empty()).then(|| SummarizerMark {
        calls: calls.len(),
        summarized: calls.iter().map(|c| c.summarized()).sum(),
        input_chars: calls.iter().flat_map(|c| &c.input).map(Block::chars).sum(),
        summary_chars: calls.iter().map(|c| c.summary.chars()).sum(),
    })
}

/// Describes a prefix break of `blocks` against `prev` for the `turns` table.
pub fn change(prev: &[Block], blocks: &[Block], origins: &[Origin], brk: Option<PrefixBreak>) -> Change {
    let Some(PrefixBreak { at, cause }) = brk else {
        return Change::Appended { appended: blocks.len() - prev.len() };
    };
    let Some(b) = blocks.get(at) else {
        return Change::Rewritten {
            block: at + 1,
            id: "(end)".to_string(),
            why: "request shorter than the previous one".to_string(),
        };
    };
    let id = b.id().map_or_else(|| b.type_name().to_string(), str::to_string);
    let why = match (cause, prev[at].id()) {
        _ if matches!(origins[at], Origin::Summary { .. } | Origin::RecordedSummary) => {
            format!("{} written", origins[at].describe())
        }
        (Cause::Rewritten, _) if b.id().is_some() => format!("text changed: {}", origins[at].describe()),
        (Cause::Moved, Some(pid)) => format!("{pid} moved"),
        (Cause::Dropped, Some(pid)) => format!("{pid} dropped"),
        _ => match origins[at] {
            Origin::Verbatim => format!("{} changed", b.type_name()),
            o => o.describe(),
        },
    };
    Change::Rewritten { block: at + 1, id, why }
}

/// Replays `s` and describes each turn's request.
pub fn rows(journal: &Journal, s: &Strategy, est: &dyn Estimator) -> Vec<TurnRow> {
    let mut rows = Rows::new(journal);
    strategy::replay(journal, s, est, |r| rows.push(r));
    rows.finish()
}

/// The rows of a replay, built request by request: hand it each [`TurnRequest`] of one replay
/// in turn order (e.g. from [`crate::cache::marks::marks_observed`], so `turns` replays once).
pub struct Rows<'j> {
    journal: &'j Journal,
    /// The previous request, updated in place (only blocks from the first change are cloned).
    prev: Option<Vec<Block>>,
    /// `cum[i]`: characters of the previous request's first `i` blocks (so a turn counts only the
    /// blocks after the first change, not the whole history again).
    cum: Vec<usize>,
    out: Vec<TurnRow>,
}

impl<'j> Rows<'j> {
    pub fn new(journal: &'j Journal) -> Rows<'j> {
        Rows { journal, prev: None, cum: vec![0], out: Vec::new() }
    }

    /// Describes the next request against the previous one.
    pub fn push(&mut self, r: &TurnRequest<'_>) {
        let (c, keep) = match self.prev.as_deref() {
            None => (Change::First, 0),
            Some(p) => {
                let brk = first_break(p, r.blocks, r.unchanged);
                (change(p, r.blocks, r.origins, brk), brk.map_or(p.len(), |b| b.at))
            }
        };
        let cum = &mut self.cum;
        cum.truncate(keep + 1);
        for b in &r.blocks[keep..] {
            let last = *cum.last().expect("cum starts with 0");
            cum.push(last.saturating_add(b.chars()));
        }
        self.out.push(TurnRow {
            turn: r.turn,
            rev: self.journal.records[r.record].rev,
            blocks: r.blocks.len(),
            chars: *cum.last().expect("cum starts with 0"),
            change: c,
            summarizer: summarizer_mark(r.summarized),
        });
        let p = self.prev.get_or_insert_with(Vec::new);
        p.truncate(keep);
        p.extend(r.blocks[keep..].iter().cloned());
    }

    /// The rows, in turn order.
    pub fn finish(self) -> Vec<TurnRow> {
        self.out
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn u(id: &str, t: &str) -> Block {
        Block::User { id: id.into(), text: t.into() }
    }

    fn ch(prev: &[Block], cur: &[Block], o: &[Origin]) -> Change {
        change(prev, cur, o, first_break(prev, cur, 0))
    }

    /// `turns` replays once (issue 15): the rows built from the requests the marks' replay hands
    /// on, once per turn in order, are the rows of a replay of their own.
    #[test]
    fn rows_from_the_marks_replay_are_the_rows() {
        for (name, strategy) in [("long-elision", "recorded"), ("compaction", "tiered"), ("bugfix-todo", "sliding-8")] {
            let path = format!("{}/../../sample-journals/{name}/journal.jsonl", env!("CARGO_MANIFEST_DIR"));
            let bytes = std::fs::read(&path).expect("bundled sample");
            let j =
                crate::journal::parse_bytes(std::path::Path::new(&path), &bytes, Default::default()).expect("valid");
            let s = crate::strategy::parse(strategy).expect("name");
            let est = crate::tokens::estimator_for(&j, None).expect("encoding");
            let pricing =
                crate::cache::Pricing::for_session(&j, None, None, crate::cache::load_table(None).expect("prices"));
            let (mut built, mut seen) = (Rows::new(&j), Vec::new());
            let marks = crate::cache::marks::marks_observed(
                &j,
                &s,
                &est,
                &pricing,
                |_, _| {},
                |r| {
                    seen.push(r.turn);
                    built.push(r);
                },
            );
            assert_eq!(seen, (1..=j.turns.len()).collect::<Vec<_>>(), "{name}: each turn once, in order");
            assert_eq!(built.finish(), rows(&j, &s, &est), "{name} {strategy}");
            assert_eq!(marks, crate::cache::marks::marks(&j, &s, &est, &pricing), "{name} {strategy}");
        }
    }

    #[test]
    fn classifies_changes() {
        let a = vec![u("u1", "a"), u("u2", "b")];
        let o = vec![Origin::Verbatim; 3];
        let b = vec![u("u1", "a"), u("u2", "b"), u("u3", "c")];
        assert_eq!(ch(&a, &b, &o), Change::Appended { appended: 1 });
        let c = vec![u("u1", "a"), u("u2", "B")];
        let oc = vec![Origin::Verbatim, Origin::Truncated];
        assert_eq!(
            ch(&a, &c, &oc),
            Change::Rewritten { block: 2, id: "u2".into(), why: "text changed: truncated".into() }
        );
        let d = vec![u("u2", "b"), u("u3", "c")];
        assert_eq!(ch(&a, &d, &o), Change::Rewritten { block: 1, id: "u2".into(), why: "u1 dropped".into() });
    }
}
