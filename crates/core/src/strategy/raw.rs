//! The raw conversation of spec `strategies.md` §1 — built here, once, for every strategy but
//! `recorded`.
//!
//! `system`, `notice`, `user` (+ attachments), `assistant` and `result` records in journal order,
//! without the decision records (`elide`, `clear`, `mirror`, `compact`) and without the recorded
//! strategy's machinery: the calls listed in any `mirror.service_calls` and every call of the
//! `ctx` tool go with their results (an assistant block that lost calls this way and is left with
//! empty text goes too — the rule of `journal-v1.md`), and so do the notices of topic
//! `manage_context`, `mirror_applied` and `mirror_rejected`. `session` and `model` records only
//! change the settings in force.

use std::collections::HashSet;

use crate::journal::{Body, CtxSettings, Journal};
use crate::projection::{Block, BlockCall};

/// The tool whose calls are the recorded strategy's own machinery.
pub const CTX_TOOL: &str = "ctx";

/// Notice topics that belong to the recorded strategy.
pub const MACHINERY_TOPICS: &[&str] = &["manage_context", "mirror_applied", "mirror_rejected"];

/// One block of the raw conversation.
#[derive(Debug, Clone, PartialEq)]
pub struct RawBlock {
    pub block: Block,
    /// Source rev (for an attachment, its `user` record's).
    pub rev: u64,
    /// Index of the source record in `journal.records`.
    pub rec: usize,
}

/// The raw conversation, grown record by record.
pub struct Raw<'j> {
    journal: &'j Journal,
    next: usize,
    excluded: HashSet<&'j str>,
    /// The system block in force.
    pub system: Option<Block>,
    /// The conversation blocks so far (never the system block).
    pub blocks: Vec<RawBlock>,
    /// Index in `blocks` of the session's first `user` block.
    pub first_user: Option<usize>,
    /// Settings in force (the `session` record's, then each `model` record's).
    pub ctx: CtxSettings,
    pub model: Option<String>,
}

impl<'j> Raw<'j> {
    pub fn new(journal: &'j Journal) -> Raw<'j> {
        let mut excluded: HashSet<&str> = HashSet::new();
        for r in &journal.records {
            match &r.body {
                Body::Mirror(m) => excluded.extend(m.service_calls.iter().map(String::as_str)),
                Body::Assistant(a) => {
                    excluded.extend(a.calls.iter().filter(|c| c.tool == CTX_TOOL).map(|c| c.id.as_str()))
                }
                _ => {}
            }
        }
        Raw {
            journal,
            next: 0,
            excluded,
            system: None,
            blocks: Vec::new(),
            first_user: None,
            ctx: CtxSettings::default(),
            model: None,
        }
    }

    /// Whether this call is removed from the raw conversation.
    pub fn is_excluded(&self, call: &str) -> bool {
        self.excluded.contains(call)
    }

    /// Applies records up to `end` (exclusive); returns the range of blocks added.
    pub fn advance_to(&mut self, end: usize) -> std::ops::Range<usize> {
        let start = self.blocks.len();
        let end = end.min(self.journal.records.len());
        while self.next < end {
            let idx = self.next;
            self.next += 1;
            self.apply(idx);
        }
        start..self.blocks.len()
    }

    fn apply(&mut self, idx: usize) {
        let rec = &self.journal.records[idx];
        let rev = rec.rev;
        let push = |blocks: &mut Vec<RawBlock>, block| blocks.push(RawBlock { block, rev, rec: idx });
        match &rec.body {
            Body::Session(_) | Body::Model(_) => rec.body.update_settings(&mut self.model, &mut self.ctx),
            Body::System(s) => self.system = Some(Block::system(s)),
            Body::Notice(n) => {
                if !n.topic.as_deref().is_some_and(|t| MACHINERY_TOPICS.contains(&t)) {
                    push(&mut self.blocks, Block::Notice { id: n.id.clone(), text: n.text.clone() });
                }
            }
            Body::User(u) => {
                if self.first_user.is_none() {
                    self.first_user = Some(self.blocks.len());
                }
                push(&mut self.blocks, Block::User { id: u.id.clone(), text: u.text.clone() });
                for a in &u.attachments {
                    push(
                        &mut self.blocks,
                        Block::Attachment { id: a.id.clone(), user: u.id.clone(), text: a.preview.clone() },
                    );
                }
            }
            Body::Assistant(a) => {
                let calls: Vec<BlockCall> = a
                    .calls
                    .iter()
                    .filter(|c| !self.excluded.contains(c.id.as_str()))
                    .map(|c| BlockCall { id: c.id.clone(), tool: c.tool.clone(), args: c.args.clone() })
                    .collect();
                let lost = calls.len() < a.calls.len();
                if !(lost && calls.is_empty() && a.text.is_empty()) {
                    push(&mut self.blocks, Block::Assistant { id: a.id.clone(), text: a.text.clone(), calls });
                }
            }
            Body::Result(r) => {
                if !self.excluded.contains(r.call.as_str()) && r.tool != CTX_TOOL {
                    push(
                        &mut self.blocks,
                        Block::Result { call: r.call.clone(), tool: r.tool.clone(), text: r.text.clone() },
                    );
                }
            }
            Body::Elide(_)
            | Body::Clear(_)
            | Body::Mirror(_)
            | Body::Compact(_)
            | Body::Outcome(_)
            | Body::Unknown { .. } => {}
        }
    }

    /// The journal this conversation is built from.
    pub fn journal(&self) -> &'j Journal {
        self.journal
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::strategy::testkit::*;

    #[test]
    fn machinery_goes_with_its_results() {
        let j = journal(vec![
            session(),
            system("sys"),
            user("u1", "fix it"),
            notice("n1", "manage", Some("manage_context")),
            notice("n2", "keep me", None),
            assistant("a1", "", vec![call("c1", "read", r#"{"path":"a.rs"}"#), call("c2", "ctx", "{}")]),
            result("c1", "read", "A"),
            result("c2", "ctx", "status"),
            assistant("a2", "", vec![call("c3", "edit", r#"{"path":"M.json"}"#)]),
            result("c3", "edit", "ok"),
            assistant("a3", "", vec![call("c4", "ctx", r#"{"action":"commit"}"#)]),
            result("c4", "ctx", "committed"),
            mirror(1, 3, "accepted", &["c3", "c4"]),
            notice("n3", "applied", Some("mirror_applied")),
            assistant("a4", "done", vec![]),
        ]);
        let mut raw = Raw::new(&j);
        raw.advance_to(j.records.len());
        let ids: Vec<_> = raw.blocks.iter().map(|b| b.block.id().unwrap().to_string()).collect();
        assert_eq!(ids, ["u1", "n2", "a1", "c1", "a4"]);
        let Block::Assistant { calls, .. } = &raw.blocks[2].block else { panic!() };
        assert_eq!(calls.len(), 1);
        assert_eq!(raw.first_user, Some(0));
        assert!(raw.system.is_some());
    }

    #[test]
    fn an_empty_assistant_without_calls_stays() {
        let j = journal(vec![session(), user("u1", "hi"), assistant("a1", "", vec![]), assistant("a2", "x", vec![])]);
        let mut raw = Raw::new(&j);
        assert_eq!(raw.advance_to(3), 0..2);
        assert_eq!(raw.advance_to(4), 2..3);
    }
}
