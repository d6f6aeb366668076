//! The recorded projection: the journal's own decisions applied record by record (spec §2–§3).
//!
//! [`Replayer`] walks the records in file order and keeps the projection after each one, so the
//! request of every turn costs one pass over the journal. Rules implemented here:
//!
//! * `system` replaces the system block; `notice`, `user` (+ attachments), `assistant` and
//!   `result` append conversation blocks with their source rev;
//! * `elide` / `clear` turn the named blocks' text into the markers of §5 (the later marker wins;
//!   targets no longer present are skipped);
//! * an accepted `mirror` rebuilds the conversation from its draft (see [`Replayer`] for the exact
//!   order), a rejected one changes nothing, and so does one no `ctx` commit call asked for since
//!   the previous mirror record (seed 000: an uncommitted edit is not applied; `validate` reports
//!   it as `mirror-uncommitted`);
//! * `compact` keeps the blocks from `first_kept` (or those in `kept`) and rotates or chains the
//!   summary; `model` and `session` only change the settings in force.

use std::collections::{HashMap, HashSet};
use std::sync::Arc;

use crate::journal::{Body, CompactRec, CtxSettings, ElideRec, Journal, MirrorRec, Record};

use super::block::{Block, BlockCall, Mark, ProjBlock, Projection};
use super::markers;
use super::mirror::{draft_blocks, is_commit};

/// Applies the journal's records one at a time.
///
/// An accepted mirror draft is applied as recorded: the summaries return to what they were at
/// `base_rev`, the conversation becomes the draft's blocks, then the records after `base_rev` are
/// replayed in journal order (their blocks appended, their `elide`, `clear` and `compact`
/// decisions applied again; targets no longer present are skipped), and finally the service calls
/// leave the projection. Replaying in journal order is the spec's "blocks after `base_rev`, then
/// the decisions again" made exact for the cases where the two orders differ (a `chain` compaction
/// is not appended twice; a `kept` compaction does not drop blocks written after it).
pub struct Replayer<'j> {
    journal: &'j Journal,
    state: Projection,
    next: usize,
    /// Calls removed as mirror service calls: their results never enter the projection.
    dropped: HashSet<String>,
    /// Source rev of every block id created so far.
    src: HashMap<String, u64>,
    /// The summaries after every compaction, for mirror re-application.
    summary_history: Vec<(u64, Vec<Block>)>,
    /// Conversation position of each block id (first occurrence), built on the first look-up
    /// and kept up to date by appends; dropped when blocks move (compaction, mirror, removal).
    /// `Projection::position` is a linear scan, which made elide/clear O(blocks) per id.
    positions: Option<HashMap<String, usize>>,
    /// Leading blocks of [`Projection::blocks`] untouched since the last
    /// [`Replayer::take_unchanged`] (`usize::MAX`: none touched): records that only append keep
    /// it, every other record resets it to 0.
    unchanged: usize,
    /// Whether the records' revs ascend (checked on the first accepted mirror).
    revs_ascend: Option<bool>,
    /// The next mirror's draft, already parsed by the caller ([`Replayer::step_with_draft`]).
    parsed: Option<Vec<Block>>,
    /// `ctx` commit calls since the last mirror record: without one a mirror is not applied.
    commits: usize,
    /// Settings in force.
    pub model: Option<String>,
    pub ctx: CtxSettings,
}

impl<'j> Replayer<'j> {
    pub fn new(journal: &'j Journal) -> Self {
        Replayer {
            journal,
            state: Projection::default(),
            next: 0,
            dropped: HashSet::new(),
            src: HashMap::new(),
            summary_history: Vec::new(),
            positions: None,
            unchanged: 0,
            revs_ascend: None,
            parsed: None,
            commits: 0,
            model: None,
            ctx: CtxSettings::default(),
        }
    }

    /// The projection after the records applied so far.
    pub fn projection(&self) -> &Projection {
        &self.state
    }

    /// How many leading blocks of the projection are as they were at the previous call (at least;
    /// 0 on the first call), so a consumer comparing successive projections skips them.
    pub fn take_unchanged(&mut self) -> usize {
        std::mem::replace(&mut self.unchanged, usize::MAX)
    }

    /// Index of the next record to apply.
    pub fn position(&self) -> usize {
        self.next
    }

    /// Applies the next record; returns notes about anything skipped (empty when none), or
    /// `None` at the end of the journal.
    pub fn step(&mut self) -> Option<Vec<String>> {
        let rec = self.journal.records.get(self.next)?;
        self.next += 1;
        let mut notes = Vec::new();
        self.apply(rec, &mut notes);
        Some(notes)
    }

    /// [`Replayer::step`] for a `mirror` record whose draft the caller has already parsed
    /// (`validate` parses each draft once, checks it and hands it on here, instead of parsing it
    /// twice). The blocks are used only when the next record is an accepted mirror.
    pub fn step_with_draft(&mut self, draft: Vec<Block>) -> Option<Vec<String>> {
        self.parsed = Some(draft);
        let notes = self.step();
        self.parsed = None;
        notes
    }

    /// Applies records until `end` (exclusive).
    pub fn advance_to(&mut self, end: usize) {
        while self.next < end.min(self.journal.records.len()) {
            self.step();
        }
    }

    fn apply(&mut self, rec: &Record, notes: &mut Vec<String>) {
        let appends = matches!(
            rec.body,
            Body::Session(_) | Body::Model(_) | Body::Notice(_) | Body::User(_) | Body::Assistant(_) | Body::Result(_)
        );
        let len = usize::from(self.state.system.is_some()) + self.state.summaries.len() + self.state.conv.len();
        self.unchanged = if appends { self.unchanged.min(len) } else { 0 };
        if let Body::Assistant(a) = &rec.body {
            self.commits += a.calls.iter().filter(|c| is_commit(&c.tool, &c.args)).count();
        }
        match &rec.body {
            Body::Session(_) | Body::Model(_) => rec.body.update_settings(&mut self.model, &mut self.ctx),
            Body::System(s) => self.state.system = Some(Block::system(s)),
            Body::Mirror(m) => self.apply_mirror(rec.rev, m, notes),
            _ => self.apply_content(rec, notes),
        }
    }

    /// Records that add blocks or take decisions on them (the ones a mirror re-application
    /// replays).
    fn apply_content(&mut self, rec: &Record, notes: &mut Vec<String>) {
        let rev = rec.rev;
        match &rec.body {
            Body::Notice(n) => self.push(Block::Notice { id: n.id.clone(), text: n.text.clone() }, rev),
            Body::User(u) => {
                self.push(Block::User { id: u.id.clone(), text: u.text.clone() }, rev);
                for a in &u.attachments {
                    self.push(Block::Attachment { id: a.id.clone(), user: u.id.clone(), text: a.preview.clone() }, rev);
                }
            }
            Body::Assistant(a) => {
                // Calls an earlier accepted mirror removed as service calls stay removed when a
                // (stale) mirror replays the records after its base_rev: their results are
                // dropped for good, and a call never stands without its result (R3).
                let calls: Vec<BlockCall> = a
                    .calls
                    .iter()
                    .filter(|c| !self.dropped.contains(&c.id))
                    .map(|c| BlockCall { id: c.id.clone(), tool: c.tool.clone(), args: c.args.clone() })
                    .collect();
                if calls.len() < a.calls.len() && calls.is_empty() && a.text.is_empty() {
                    return;
                }
                self.push(Block::Assistant { id: a.id.clone(), text: a.text.clone(), calls }, rev);
            }
            Body::Result(r) if !self.dropped.contains(&r.call) => {
                self.push(Block::Result { call: r.call.clone(), tool: r.tool.clone(), text: r.text.clone() }, rev);
            }
            Body::Elide(e) => self.apply_elide(rev, e, notes),
            Body::Clear(c) => {
                for id in &c.cleared {
                    match self.find(id) {
                        Some(p) => {
                            let b = &mut self.state.conv[p];
                            if let Block::Result { tool, .. } = &b.block {
                                let bytes = self.journal.result(id).map_or(0, |r| r.bytes);
                                let marker = markers::cleared(tool, bytes);
                                b.block.set_text(marker.into());
                                b.mark = Mark::Cleared(rev);
                            } else {
                                notes.push(format!("clear: {id} is not a result; skipped"));
                            }
                        }
                        None => notes.push(format!("clear: {id} is not in the projection; skipped")),
                    }
                }
            }
            Body::Compact(c) => self.apply_compact(rev, c),
            _ => {}
        }
    }

    /// Position of the conversation block with this id (the first one, as
    /// [`Projection::position`]).
    fn find(&mut self, id: &str) -> Option<usize> {
        let conv = &self.state.conv;
        if conv.len() < 64 {
            return self.state.position(id);
        }
        let map = self.positions.get_or_insert_with(|| {
            let mut m = HashMap::with_capacity(conv.len());
            for (i, b) in conv.iter().enumerate() {
                if let Some(id) = b.block.id() {
                    m.entry(id.to_string()).or_insert(i);
                }
            }
            m
        });
        map.get(id).copied()
    }

    fn push(&mut self, block: Block, rev: u64) {
        if let Some(id) = block.id() {
            self.src.entry(id.to_string()).or_insert(rev);
            if let Some(m) = &mut self.positions {
                m.entry(id.to_string()).or_insert(self.state.conv.len());
            }
        }
        self.state.conv.push(ProjBlock { block, src_rev: rev, mark: Mark::None });
    }

    fn apply_elide(&mut self, rev: u64, e: &ElideRec, notes: &mut Vec<String>) {
        for id in &e.calls {
            let Some(p) = self.find(id) else {
                notes.push(format!("elide: {id} is not in the projection; skipped"));
                continue;
            };
            let b = &mut self.state.conv[p];
            let marker = match &b.block {
                Block::Result { call, tool, .. } => {
                    let bytes = self.journal.result(call).map_or(0, |r| r.bytes);
                    let null = serde_json::Value::Null;
                    let args = self.journal.call(call).map_or(&null, |c| &*c.args);
                    markers::elided_result(tool, bytes, args)
                }
                Block::Attachment { id, .. } => match self.journal.attachment(id) {
                    Some(a) => markers::elided_attachment(a.bytes, &a.path),
                    None => markers::elided_attachment(0, ""),
                },
                _ => {
                    notes.push(format!("elide: {id} is not a result or attachment; skipped"));
                    continue;
                }
            };
            b.block.set_text(marker.into());
            b.mark = Mark::Elided(rev);
        }
    }

    fn apply_compact(&mut self, rev: u64, c: &CompactRec) {
        let kept: Option<HashSet<&str>> = c.kept.as_ref().map(|k| k.iter().map(String::as_str).collect());
        let first_kept = c.first_kept.unwrap_or(rev);
        self.positions = None;
        self.state.conv.retain(|b| match &kept {
            Some(k) => b.block.id().is_some_and(|id| k.contains(id)),
            None => b.src_rev >= first_kept,
        });
        let summary = Block::Summary { text: c.summary.clone() };
        if c.chains() {
            self.state.summaries.push(summary);
        } else {
            self.state.summaries = vec![summary];
        }
        self.summary_history.push((rev, self.state.summaries.clone()));
    }

    fn apply_mirror(&mut self, rev: u64, m: &MirrorRec, notes: &mut Vec<String>) {
        let committed = std::mem::take(&mut self.commits) > 0;
        if !m.accepted() {
            return;
        }
        if !committed {
            self.parsed = None;
            notes.push(format!(
                "mirror r{}: no `ctx` commit call since the previous mirror record; not applied",
                m.mirror_rev
            ));
            return;
        }
        let draft = match self.parsed.take().map_or_else(|| draft_blocks(&m.draft), Ok) {
            Ok(d) => d,
            Err(e) => {
                notes.push(format!("mirror r{}: accepted draft is unusable ({e}); not applied", m.mirror_rev));
                return;
            }
        };
        let before: HashMap<String, (Block, Mark)> = self
            .state
            .conv
            .iter()
            .filter_map(|b| b.block.id().map(|id| (id.to_string(), (b.block.clone(), b.mark))))
            .collect();
        self.state.summaries = self
            .summary_history
            .iter()
            .rev()
            .find(|(r, _)| *r <= m.base_rev)
            .map(|(_, s)| s.clone())
            .unwrap_or_default();
        self.positions = None;
        self.state.conv = draft
            .into_iter()
            .filter(|b| !matches!(b, Block::System { .. } | Block::Summary { .. }))
            .map(|block| {
                let id = block.id().unwrap_or_default().to_string();
                let src_rev = self.src.get(&id).copied().unwrap_or(m.base_rev);
                // An unchanged block keeps the projection's own copy, whose texts the records
                // share, and the draft's copy is dropped.
                let (block, mark) = match before.get(&id) {
                    Some((old, mark)) if *old == block => (old.clone(), *mark),
                    _ => (block, Mark::Edited(m.mirror_rev)),
                };
                ProjBlock { block, src_rev, mark }
            })
            .collect();
        let journal = self.journal;
        let upto = self.next - 1; // the mirror record itself
                                  // The records after base_rev: found by binary search when revs ascend (as the spec has
                                  // them), so re-applying thousands of mirrors stays linear in the journal (issue 20).
        let from = if *self.revs_ascend.get_or_insert_with(|| journal.records.is_sorted_by_key(|r| r.rev)) {
            journal.records[..upto].partition_point(|r| r.rev <= m.base_rev)
        } else {
            0
        };
        for r in journal.records[from..upto].iter().filter(|r| r.rev > m.base_rev) {
            self.apply_content(r, notes);
        }
        self.remove_calls(&m.service_calls);
        let _ = rev;
    }

    /// Removes calls and their results; an assistant block left with no calls and empty text
    /// goes too. Later results of these calls are dropped.
    fn remove_calls(&mut self, ids: &[String]) {
        if ids.is_empty() {
            return;
        }
        let set: HashSet<&str> = ids.iter().map(String::as_str).collect();
        self.positions = None;
        self.state.conv.retain_mut(|b| match &mut b.block {
            Block::Result { call, .. } => !set.contains(call.as_str()),
            Block::Assistant { text, calls, .. } => {
                let n = calls.len();
                calls.retain(|c| !set.contains(c.id.as_str()));
                !(calls.len() < n && calls.is_empty() && text.is_empty())
            }
            _ => true,
        });
        self.dropped.extend(ids.iter().cloned());
    }
}

/// The projection after records 1..=`rev` (`--at rev N`).
pub fn state_at_rev(journal: &Journal, rev: u64) -> Projection {
    let mut r = Replayer::new(journal);
    r.advance_to(journal.prefix_len_at_rev(rev));
    r.state
}

/// The request of turn `k` (from 1): the projection just before its `assistant` record.
pub fn request_at_turn(journal: &Journal, k: usize) -> Option<Projection> {
    let idx = journal.turn_record(k)?;
    let mut r = Replayer::new(journal);
    r.advance_to(idx);
    Some(r.state)
}

/// Calls `f(turn, record_index, request)` for every turn, in one pass over the journal.
pub fn for_each_request(journal: &Journal, mut f: impl FnMut(usize, usize, &Projection)) {
    let mut r = Replayer::new(journal);
    for (k, &idx) in journal.turns.iter().enumerate() {
        r.advance_to(idx);
        f(k + 1, idx, &r.state);
    }
}

/// Shared text helper for callers that build blocks.
pub fn text(s: &str) -> crate::journal::Text {
    Arc::from(s)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::journal::reader::parse_bytes_for_test;

    fn ids(p: &Projection) -> Vec<String> {
        p.conv
            .iter()
            .map(|b| match &b.block {
                Block::Assistant { id, calls, .. } => {
                    let c: Vec<&str> = calls.iter().map(|c| c.id.as_str()).collect();
                    format!("{id}{c:?}")
                }
                other => other.id().unwrap_or_default().to_string(),
            })
            .collect()
    }

    #[test]
    fn stale_mirror_does_not_resurrect_earlier_service_calls() {
        // Found by the conformance reference on tests/data/invalid/R6.jsonl: a stale accepted
        // mirror (base_rev before an earlier accepted mirror) replayed the records after its
        // base_rev and brought back the earlier mirror's service calls without their results.
        let j = parse_bytes_for_test(concat!(
            r#"{"rev":1,"ts":"t","kind":"session","id":"s","model":"m"}"#,
            "\n",
            r#"{"rev":2,"ts":"t","kind":"user","id":"u1","text":"go"}"#,
            "\n",
            r#"{"rev":3,"ts":"t","kind":"assistant","id":"a1","text":"","calls":[{"id":"m1","tool":"ctx","args":{}}]}"#,
            "\n",
            r#"{"rev":4,"ts":"t","kind":"result","call":"m1","tool":"ctx","text":"ok"}"#,
            "\n",
            r#"{"rev":5,"ts":"t","kind":"mirror","mirror_rev":1,"base_rev":2,"status":"accepted","draft":{"blocks":[{"type":"user","id":"u1","text":"go"}]},"service_calls":["m1"]}"#,
            "\n",
            r#"{"rev":6,"ts":"t","kind":"assistant","id":"a2","text":"x","calls":[{"id":"m2","tool":"ctx","args":{}},{"id":"c3","tool":"run","args":{}}]}"#,
            "\n",
            r#"{"rev":7,"ts":"t","kind":"result","call":"c3","tool":"run","text":"r"}"#,
            "\n",
            r#"{"rev":8,"ts":"t","kind":"result","call":"m2","tool":"ctx","text":"ok"}"#,
            "\n",
            r#"{"rev":9,"ts":"t","kind":"mirror","mirror_rev":2,"base_rev":2,"status":"accepted","draft":{"blocks":[{"type":"user","id":"u1","text":"go"}]},"service_calls":["m2"]}"#,
            "\n",
        ));
        assert_eq!(ids(&state_at_rev(&j, 9)), ["u1", "a2[\"c3\"]", "c3"]);
    }
}
