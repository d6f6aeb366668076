//! The turn browser's content, built turn by turn from what changed.
//!
//! Each turn keeps only the blocks after the leading run the request repeats from the previous
//! request of the same strategy (found from [`TurnRequest::unchanged`] and
//! [`first_break`]): that run is one [`Kept`] count, so the report's memory and page grow with
//! what changes per turn, not with turns × history. The blocks after the run are matched by
//! identity against the previous request's blocks after the same point ([`match_blocks`]).

use crate::projection::diff::{first_break, match_blocks, Matched};
use crate::projection::Block;
use crate::strategy::{Origin, TurnRequest};
use crate::text::chars;
use crate::tokens::Estimator;

use super::{BlockView, Change, DiffSummary, Kept, TurnView};

/// The previous request of one strategy, updated in place from its first changed block.
#[derive(Default)]
pub(super) struct Browser {
    prev: Vec<Block>,
    /// Tokens of each block of `prev`.
    tokens: Vec<u64>,
    /// `cum_chars[i]`, `cum_tokens[i]`: sums over `prev[..i]`.
    cum_chars: Vec<u64>,
    cum_tokens: Vec<u64>,
    started: bool,
}

impl Browser {
    /// The view of `req`, compared with the previous request, with block text cut at `cap`
    /// (no text when the turn is not `shown`: its view is only counted, for a later turn).
    pub(super) fn step(&mut self, req: &TurnRequest<'_>, est: &dyn Estimator, cap: usize, shown: bool) -> TurnView {
        let brk = if self.started { first_break(&self.prev, req.blocks, req.unchanged) } else { None };
        let keep = if self.started { brk.map_or(self.prev.len(), |b| b.at).min(req.blocks.len()) } else { 0 };
        if self.cum_chars.is_empty() {
            self.cum_chars.push(0);
            self.cum_tokens.push(0);
        }
        let (old, new) = (&self.prev[keep..], &req.blocks[keep..]);
        let m = match_blocks(old, new);
        let mut diff = DiffSummary { same: keep, extends_previous: brk.is_none(), ..DiffSummary::default() };
        let mut tokens_now = Vec::with_capacity(new.len());
        let blocks = new
            .iter()
            .zip(&m.new)
            .enumerate()
            .map(|(j, (b, matched))| {
                let (change, tokens, previous_chars) = match *matched {
                    Matched::Same(i) => (Change::Same, self.tokens[keep + i], None),
                    Matched::Changed(i) => (Change::Changed, est.block(b), Some(old[i].chars())),
                    Matched::Added => (Change::Added, est.block(b), None),
                };
                tokens_now.push(tokens);
                let cap = shown.then_some(cap);
                block_view(b, change, tokens, previous_chars, req.origins.get(keep + j), cap, &mut diff)
            })
            .collect();
        diff.removed = (m.removed.iter())
            .map(|&i| (old[i].type_name().to_string(), old[i].id().map(str::to_string), old[i].chars()))
            .collect();
        let kept = Kept { blocks: keep, chars: self.cum_chars[keep], tokens: self.cum_tokens[keep] };
        self.prev.truncate(keep);
        self.tokens.truncate(keep);
        self.cum_chars.truncate(keep + 1);
        self.cum_tokens.truncate(keep + 1);
        for (b, t) in new.iter().zip(tokens_now) {
            let (c, k) = (self.cum_chars[self.cum_chars.len() - 1], self.cum_tokens[self.cum_tokens.len() - 1]);
            self.cum_chars.push(c + b.chars() as u64);
            self.cum_tokens.push(k + t);
            self.prev.push(b.clone());
            self.tokens.push(t);
        }
        self.started = true;
        TurnView { turn: req.turn, block_count: req.blocks.len(), kept, blocks, diff }
    }
}

fn tool_of(b: &Block) -> Option<String> {
    match b {
        Block::Result { tool, .. } => Some(tool.clone()),
        Block::Assistant { calls, .. } if !calls.is_empty() => {
            Some(calls.iter().map(|c| c.tool.as_str()).collect::<Vec<_>>().join(", "))
        }
        _ => None,
    }
}

/// The text a block shows in the browser: its text, plus its calls for an assistant block.
fn display_text(b: &Block) -> String {
    match b {
        Block::Assistant { text, calls, .. } if !calls.is_empty() => {
            let mut s = text.to_string();
            for c in calls {
                if !s.is_empty() {
                    s.push('\n');
                }
                s.push_str(&format!("→ {} {} {}", c.tool, c.id, crate::projection::block::canonical_value(&c.args)));
            }
            s
        }
        _ => b.text().to_string(),
    }
}

/// The first `cap` characters of `s`, and the full length when it was cut.
pub fn cap_text(s: &str, cap: usize) -> (String, Option<usize>) {
    match s.char_indices().nth(cap) {
        None => (s.to_string(), None),
        Some((i, _)) => (s[..i].to_string(), Some(chars(s))),
    }
}

/// One block as the turn browser shows it, counted into `diff`.
fn block_view(
    b: &Block,
    change: Change,
    tokens: u64,
    previous_chars: Option<usize>,
    origin: Option<&Origin>,
    cap: Option<usize>,
    diff: &mut DiffSummary,
) -> BlockView {
    match change {
        Change::Same => diff.same += 1,
        Change::Changed => diff.changed += 1,
        Change::Added => diff.added += 1,
    }
    let (text, capped_from) = match cap {
        Some(cap) if change != Change::Same => {
            let (t, c) = cap_text(&display_text(b), cap);
            (Some(t), c)
        }
        _ => (None, None),
    };
    BlockView {
        kind: b.type_name().to_string(),
        id: b.id().map(str::to_string),
        tool: tool_of(b),
        chars: b.chars(),
        tokens,
        change,
        previous_chars,
        origin: origin.filter(|o| o.is_changed()).map(|o| o.describe()),
        text,
        capped_from,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::tokens::estimator::{Encoding, TiktokenEstimator};

    fn u(id: &str, t: &str) -> Block {
        Block::User { id: id.into(), text: t.into() }
    }

    #[test]
    fn cap_text_counts_characters_not_bytes() {
        assert_eq!(cap_text("héllo", 10), ("héllo".to_string(), None));
        assert_eq!(cap_text("héllo", 2), ("hé".to_string(), Some(5)));
        assert_eq!(cap_text("ab", 2), ("ab".to_string(), None));
    }

    #[test]
    fn an_appended_turn_keeps_only_the_new_blocks() {
        let est = TiktokenEstimator::new(Encoding::O200kBase);
        let mut br = Browser::default();
        let o = [Origin::Verbatim; 3];
        let mut step = |blocks: &[Block], turn| {
            let req =
                TurnRequest { turn, record: 0, blocks, origins: &o[..blocks.len()], unchanged: 0, summarized: &[] };
            br.step(&req, &est, 10, true)
        };
        let first = step(&[u("u1", "a"), u("u2", "b")], 1);
        assert_eq!((first.kept.blocks, first.blocks.len(), first.diff.added), (0, 2, 2));
        let second = step(&[u("u1", "a"), u("u2", "b"), u("u3", "c")], 2);
        assert_eq!((second.kept.blocks, second.kept.chars, second.blocks.len()), (2, 2, 1));
        assert_eq!((second.diff.same, second.diff.added, second.block_count), (2, 1, 3));
        assert!(second.diff.extends_previous);
        let third = step(&[u("u1", "a"), u("u2", "B")], 3);
        assert_eq!((third.kept.blocks, third.diff.changed, third.diff.removed.len()), (1, 1, 1));
        assert!(!third.diff.extends_previous);
    }
}
