//! `audit`: every cleanup decision (`elide`, `clear`, `mirror`, `compact`) judged against the
//! seeds' rules — trigger, restraint, outcome, the `DECIDED:` habit — with the tokens it saved and
//! the running total ("saved ~41,300 tokens (total ~112,000 this session)", seed `003_*`).
//!
//! One replay of the recorded projection ([`Replayer`]) by an [`Auditor`]. Token figures come
//! from [`crate::tokens::estimator_for`], calibrated as `strategies.md` §3 says by the one
//! incremental [`Calibrator`], so the pass is linear.

use crate::journal::{Journal, Record};
use crate::tokens::estimator::EncodingError;
use crate::tokens::{estimator_for, Estimator};

use super::profile::{Harness, Profile};
use super::Finding;

mod auditor;
mod count;
mod judge;
mod omit;
mod trim;

use auditor::Auditor;
#[cfg(test)]
use judge::paused_pass;

/// What part of a decision a rule judges.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Aspect {
    Trigger,
    Restraint,
    Outcome,
    /// The `DECIDED:` / `РЕШЕНО:` habit.
    Habit,
}

/// The aspect an audit rule belongs to.
pub fn aspect(rule: &str) -> Aspect {
    match rule {
        "elide-trigger" | "estimate-drift" | "compact-trigger" | "compact-too-few" | "trim-trigger"
        | "trim-unjudged" => Aspect::Trigger,
        "elide-keep"
        | "trim-keep"
        | "elide-order"
        | "elide-stop"
        | "elide-stopped-early"
        | "decision-twice"
        | "text-touched" => Aspect::Restraint,
        "decided-note" => Aspect::Habit,
        _ => Aspect::Outcome,
    }
}

/// One decision record and how it fared.
#[derive(Debug, Clone, serde::Serialize, schemars::JsonSchema)]
pub struct Decision {
    pub rev: u64,
    pub line: usize,
    /// `elide`, `clear`, `mirror` or `compact`.
    pub kind: &'static str,
    /// What it did, in one line (journal text unescaped).
    pub what: String,
    /// ctxj's calibrated estimate of the request before and after the decision.
    pub before: u64,
    pub after: u64,
    /// The harness's own figures, when recorded (`estimate_*` / `tokens_*`).
    pub recorded_before: Option<f64>,
    pub recorded_after: Option<f64>,
    /// `before − after`; negative when the decision grew the request.
    pub saved: i64,
    /// Running total of `saved` up to and including this decision.
    pub total: i64,
    /// Indices into [`AuditReport::findings`] of the findings about this decision.
    #[serde(skip)]
    pub findings: Vec<usize>,
    /// Whether its trigger was judged (auto elisions and auto compactions; a model's clear or
    /// commit and a user's `/compact` have no trigger to judge).
    #[serde(skip)]
    pub trigger_judged: bool,
}

/// The result of [`audit`].
#[derive(Debug, Clone)]
pub struct AuditReport {
    /// The profile the journal was judged by.
    pub harness: Harness,
    pub decisions: Vec<Decision>,
    /// Every finding, sorted by rev (decision findings and turn findings such as overflow).
    pub findings: Vec<Finding>,
    /// Sum of every decision's `saved`.
    pub total_saved: i64,
}

const DECIDED: [&str; 2] = ["DECIDED:", "РЕШЕНО:"];

/// The `validate` rules about a decision record itself: a decision breaking one is never "ok" in
/// `audit` (its row carries the finding; validate's implementation, not a second one).
pub const DECISION_RULES: &[&str] = &[
    "elide-ref",
    "clear-ref",
    "mirror-ref",
    "compact-ref",
    "mirror-rev-order",
    "mirror-status",
    "mirror-draft",
    "R1",
    "R2",
    "R3",
    "R4",
    "R5",
    "R6",
    "mirror-rejected-valid",
    "mirror-rewritten",
    "mirror-service-call",
    "clear-selection",
    "clear-message",
    "clear-call",
    "mirror-uncommitted",
];

fn find(id: &'static str, rec: &Record, message: impl Into<String>) -> Finding {
    Finding::new(id, rec.rev, rec.line, message)
}

/// Audits every decision of `journal` with the estimator every command uses
/// ([`crate::tokens::estimator_for`], the session's `encoding`): an unknown encoding is an error,
/// as it is for `show` and `tokens`.
/// For tests and library users; commands resolve their tokenizer once and call [`audit_as`].
pub fn audit(journal: &Journal) -> Result<AuditReport, EncodingError> {
    let est = estimator_for(journal, None)?;
    Ok(audit_progress(journal, &est, &mut |_, _| {}))
}

/// Audits every decision of `journal`, counting with `est` (the caller's tokenizer: `--encoding`,
/// else the session's), calling `progress(done, total)` as records are judged (`total`: the
/// records).
pub fn audit_progress(journal: &Journal, est: &dyn Estimator, progress: &mut dyn FnMut(usize, usize)) -> AuditReport {
    audit_as(journal, est, None, progress)
}

/// [`audit_progress`] by the rules of `harness` (`None`: the journal's own, [`Harness::detect`]).
pub fn audit_as(
    journal: &Journal,
    est: &dyn Estimator,
    harness: Option<Harness>,
    progress: &mut dyn FnMut(usize, usize),
) -> AuditReport {
    audit_run(journal, est, Harness::profile_of(journal, harness), progress)
}

/// Audits every decision of `journal` with `est`.
pub fn audit_with(journal: &Journal, est: &dyn Estimator) -> AuditReport {
    audit_run(journal, est, Harness::profile_of(journal, None), &mut |_, _| {})
}

fn audit_run(
    journal: &Journal,
    est: &dyn Estimator,
    profile: Profile,
    progress: &mut dyn FnMut(usize, usize),
) -> AuditReport {
    let mut a = Auditor::new(journal, est, profile);
    let n = journal.records.len();
    for (index, rec) in journal.records.iter().enumerate() {
        a.record(index, rec);
        if index % 64 == 63 {
            progress(index + 1, n);
        }
    }
    progress(n, n);
    a.finish()
}

#[cfg(test)]
mod tests {
    use std::sync::Arc;

    use super::count::Memo;
    use super::*;
    use crate::projection::{Block, Projection};
    use crate::strategy::compact::Pause;

    /// Issue 27: the pause rule had two owners; at exactly +10 % the replay (`strategy::compact`,
    /// integers) compacted while `audit` (floats, `≤ 1.10×`) reported thrash.
    #[test]
    fn regression_thrash_at_exactly_ten_percent_agrees_with_the_replay() {
        let mut audit = Pause::default();
        assert_eq!(paused_pass(&mut audit, 100, 90), None, "the first pass is never paused");
        // ineffective (90 > 80 % of 100): paused at 90 until 99 (= 90 × 1.1)
        let mut replay = audit;
        assert!(replay.allows(99), "the replay compacts at exactly +10 %");
        assert_eq!(paused_pass(&mut audit, 99, 60), None, "so audit does not call it thrash");
        assert_eq!(paused_pass(&mut audit, 60, 55), None);
        assert_eq!(paused_pass(&mut audit, 60, 50), Some(55), "60 < 55 × 1.1: thrash");
        assert_eq!(paused_pass(&mut audit, 56, 40), None, "the pause follows the last pass: 56 ≥ 50 × 1.1");
    }

    #[test]
    fn memo_counts_like_the_estimator() {
        use crate::projection::BlockCall;
        use crate::tokens::{request_tokens, CharEstimator};
        let args = Arc::new(serde_json::json!({"path": "src/lib.rs", "n": 12345}));
        let tools = Arc::new(serde_json::json!([{"name": "read"}]));
        let blocks = vec![
            Block::System { text: "system prompt".into(), tools: Some(tools) },
            Block::Summary { text: "summary text".into() },
            Block::User { id: "u".into(), text: "héllo wörld".into() },
            Block::Attachment { id: "p".into(), user: "u".into(), text: "preview".into() },
            Block::Notice { id: "n".into(), text: "notice".into() },
            Block::Assistant {
                id: "a".into(),
                text: "ok".into(),
                calls: vec![BlockCall { id: "c".into(), tool: "read".into(), args: args.clone() }],
            },
            Block::Result { call: "c".into(), tool: "read".into(), text: "x".repeat(101).into() },
        ];
        let est = CharEstimator;
        let mut memo = Memo::new(&est);
        for b in &blocks {
            assert_eq!(memo.block(b), est.block(b), "{b:?}");
            assert_eq!(memo.block(b), est.block(b), "cached: {b:?}");
        }
        let mut p = Projection { system: Some(blocks[0].clone()), summaries: vec![blocks[1].clone()], conv: vec![] };
        for b in &blocks[2..] {
            p.conv.push(crate::projection::ProjBlock { block: b.clone(), src_rev: 1, mark: Default::default() });
        }
        assert_eq!(memo.request(&p), request_tokens(&est, p.blocks()));
    }
}
