//! [`View`]: one request (or journal state) with how its blocks came to be — the recorded
//! projection at a position, or the request a strategy would have sent at a turn. `show`, `diff`
//! and `tokens` look at requests through it.

use crate::journal::Journal;
use crate::projection::block::canonical_of;
use crate::projection::{projection_at, At, AtError, Block, RequestHasher};
use crate::tokens::estimator::EncodingError;
use crate::tokens::Estimator;

use super::{Origin, Strategy};

/// Why a view cannot be built.
#[derive(Debug, thiserror::Error)]
pub enum ViewError {
    #[error(transparent)]
    At(#[from] AtError),
    #[error(transparent)]
    Encoding(#[from] EncodingError),
    #[error("--strategy {name} replays turns, not revisions: use --at turn K (not rev {rev})")]
    RevNotTurn { name: String, rev: u64 },
    #[error("the journal has no turns (no assistant record), so there is no request to replay")]
    NoTurns,
}

/// One side of a comparison or view: a request (or state) with how its blocks came to be.
#[derive(Debug, Clone)]
pub struct View {
    /// What it is, e.g. "recorded · turn 9" or "truncate-500 · turn 9".
    pub label: String,
    pub blocks: Vec<Block>,
    pub origins: Vec<Origin>,
}

impl View {
    pub fn chars(&self) -> usize {
        self.blocks.iter().map(Block::chars).sum()
    }
    pub fn canonical(&self) -> Vec<u8> {
        canonical_of(self.blocks.iter())
    }
}

/// The recorded projection at `at` (None: after the last record) as a [`View`].
pub fn recorded_view(journal: &Journal, at: Option<At>) -> Result<View, ViewError> {
    let p = projection_at(journal, at)?;
    Ok(View {
        label: format!("recorded · {}", At::label(at, journal)),
        blocks: p.blocks().cloned().collect(),
        origins: super::recorded_origins(&p).collect(),
    })
}

/// The request of `strategy` at `at` (a turn; None: the last turn) as a [`View`].
pub fn strategy_view(journal: &Journal, s: &Strategy, est: &dyn Estimator, at: Option<At>) -> Result<View, ViewError> {
    strategy_view_with_progress(journal, s, est, at, &mut |_, _| {})
}

/// [`strategy_view`], calling `progress(turn, last)` as the strategy replays up to the turn.
pub fn strategy_view_with_progress(
    journal: &Journal,
    s: &Strategy,
    est: &dyn Estimator,
    at: Option<At>,
    progress: &mut dyn FnMut(usize, usize),
) -> Result<View, ViewError> {
    if s.is_recorded() {
        let at = at.or_else(|| (!journal.turns.is_empty()).then_some(At::Turn(journal.turns.len())));
        let mut v = recorded_view(journal, at)?;
        v.label = v.label.replacen("recorded", &s.name, 1);
        return Ok(v);
    }
    let k = match at {
        Some(At::Rev(rev)) => return Err(ViewError::RevNotTurn { name: s.name.clone(), rev }),
        Some(a @ At::Turn(k)) => {
            a.check(journal)?;
            k
        }
        None => journal.turns.len(),
    };
    if k < 1 {
        return Err(ViewError::NoTurns);
    }
    let (blocks, origins) = super::request_at(journal, s, est, k, progress).expect("turn checked above");
    Ok(View { label: format!("{} · turn {k}", s.name), blocks, origins })
}

/// One side of a [`ViewDiff`].
#[derive(Debug, Clone, PartialEq, Eq, serde::Serialize, schemars::JsonSchema)]
pub struct Side {
    pub label: String,
    pub blocks: usize,
    pub chars: usize,
    pub sha256: String,
}

impl Side {
    /// The side's figures, its SHA-256 hashed block by block ([`RequestHasher`]): never the whole
    /// canonical request in memory (at 20,000 turns, baseline's last request is the whole
    /// session, issue 15).
    fn of(v: &View) -> Side {
        Side {
            label: v.label.clone(),
            blocks: v.blocks.len(),
            chars: v.chars(),
            sha256: RequestHasher::new().hash_hex(&v.blocks),
        }
    }
}

/// One block in a [`ViewDiff`]: only on one side, or changed.
#[derive(Debug, Clone, PartialEq, Eq, serde::Serialize, schemars::JsonSchema)]
pub struct Entry {
    /// Its id, `system`, or `summary #k`.
    pub id: String,
    #[serde(rename = "type")]
    pub kind: &'static str,
    pub left_chars: Option<usize>,
    pub right_chars: Option<usize>,
    /// `right_chars - left_chars`, when the block is on both sides.
    pub delta: Option<i64>,
}

/// Two views compared block by block (by identity, [`crate::projection::diff`]).
#[derive(Debug, Clone, PartialEq, Eq, serde::Serialize, schemars::JsonSchema)]
pub struct ViewDiff {
    pub left: Side,
    pub right: Side,
    /// Whether the canonical bytes are the same.
    pub equal: bool,
    pub only_left: Vec<Entry>,
    pub only_right: Vec<Entry>,
    pub changed: Vec<Entry>,
}

/// Compares two views.
pub fn compare(l: &View, r: &View) -> ViewDiff {
    use crate::projection::diff::match_blocks;
    let (left, right) = (Side::of(l), Side::of(r));
    let m = match_blocks(&l.blocks, &r.blocks);
    let entry = |id: String, b: &Block, left: Option<usize>, right: Option<usize>| Entry {
        id,
        kind: b.type_name(),
        left_chars: left,
        right_chars: right,
        delta: left.zip(right).map(|(a, b)| b as i64 - a as i64),
    };
    ViewDiff {
        // Equal canonical bytes, by their SHA-256.
        equal: left.sha256 == right.sha256,
        left,
        right,
        only_left: (m.removed.iter())
            .map(|&i| entry(m.old_keys[i].label(), &l.blocks[i], Some(l.blocks[i].chars()), None))
            .collect(),
        only_right: (m.added())
            .map(|j| entry(m.new_keys[j].label(), &r.blocks[j], None, Some(r.blocks[j].chars())))
            .collect(),
        changed: (m.changed().into_iter())
            .map(|(i, j)| {
                entry(m.old_keys[i].label(), &l.blocks[i], Some(l.blocks[i].chars()), Some(r.blocks[j].chars()))
            })
            .collect(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::projection::block::sha256_hex;

    fn journal(name: &str) -> Journal {
        let path = format!("{}/../../sample-journals/{name}/journal.jsonl", env!("CARGO_MANIFEST_DIR"));
        let bytes = std::fs::read(&path).expect("bundled sample");
        crate::journal::parse_bytes(std::path::Path::new(&path), &bytes, Default::default()).expect("valid journal")
    }

    /// Regression (issue 15, `diff` of baseline vs tiered at 20,000 turns held 808 MiB): the sides
    /// are hashed block by block, never as one canonical buffer, and still say what the
    /// canonical bytes say.
    #[test]
    fn compare_hashes_the_canonical_bytes_block_by_block() {
        let j = journal("bugfix-todo");
        let est = crate::tokens::CharEstimator;
        let s = |n: &str| strategy_view(&j, &crate::strategy::parse(n).expect("name"), &est, None).expect("view");
        let (base, trunc) = (s("baseline"), s("truncate-500"));
        let d = compare(&base, &trunc);
        assert_eq!(d.left.sha256, sha256_hex(&base.canonical()));
        assert_eq!(d.right.sha256, sha256_hex(&trunc.canonical()));
        assert!(!d.equal && base.canonical() != trunc.canonical());
        let same = compare(&base, &s("baseline"));
        assert!(same.equal);
        assert_eq!(same.left.sha256, same.right.sha256);
    }
}
