//! The one pass of `audit`: the recorded projection replayed record by record, each decision
//! handed to the [`Judge`](super::judge::Judge) with the figures before and after it.

use std::collections::HashMap;

use crate::cache::prices::PriceTable;
use crate::cache::window::Limits;
use crate::journal::{Body, Journal, Record};
use crate::projection::Replayer;
use crate::tokens::budget::{in_force, InForce};
use crate::tokens::{Calibrator, Estimator};

use crate::check::profile::Profile;
use crate::check::Finding;

use super::count::{Memo, Tally};
use super::judge::{Judge, Memory};
use super::{find, AuditReport, Decision, DECIDED, DECISION_RULES};

/// What the omission rules remember between records.
#[derive(Default)]
pub(super) struct Pending {
    /// The target of an elision recorded since the previous turn.
    pub elided: Option<u64>,
    /// The settings `budget-over-window` last judged (reported once per change).
    pub judged: Option<InForce>,
    /// The previous request was over the budget with no elision (reported already).
    pub missing: bool,
    /// A compaction was recorded since the previous turn.
    pub compacted: bool,
    /// A compaction was due and missing at an earlier request of this stretch (reported).
    pub compact_missing: bool,
    /// `prompt + completion` tokens the previous turn reported.
    pub last_usage: Option<u64>,
    /// Compactions recorded so far (`compact-at-N` compacts once).
    pub compactions: usize,
    /// A fast-mode trim tier was due and missing at an earlier request of this stretch
    /// (reported, [`super::trim`]).
    pub trim_missing: bool,
    /// The fast-mode tiers were noted unjudged (mode not recorded) once already.
    pub trim_unjudged: bool,
}

/// One pass over the journal: the recorded projection replayed ([`Replayer`]), token counts
/// memoized and calibrated turn by turn, each record judged as it comes.
pub(super) struct Auditor<'j> {
    pub(super) journal: &'j Journal,
    pub(super) est: &'j dyn Estimator,
    /// The projection after the records seen so far.
    pub(super) r: Replayer<'j>,
    /// The projection before the current record, so a decision can be compared with the state
    /// after it without copying the projection.
    pub(super) lag: Replayer<'j>,
    pub(super) memo: Memo<'j>,
    pub(super) tally: Tally,
    pub(super) cal: Calibrator,
    /// Turns (assistant records) seen so far.
    pub(super) turn: usize,
    pub(super) memory: Memory,
    pub(super) total: i64,
    pub(super) findings: Vec<Finding>,
    pub(super) decisions: Vec<Decision>,
    pub(super) profile: Profile,
    /// The profile's budget rules apply and the journal declares a budget ([`omit`]).
    pub(super) budget_rules: bool,
    pub(super) pending: Pending,
    /// The window of each model in force, from the table `cache` uses ([`Limits::for_session`]).
    pub(super) windows: HashMap<String, Option<u64>>,
}

impl<'j> Auditor<'j> {
    pub(super) fn new(journal: &'j Journal, est: &'j dyn Estimator, profile: Profile) -> Self {
        let last_edit = journal.records.iter().rposition(|r| matches!(r.body, Body::Mirror(_) | Body::Clear(_)));
        let mut a = Auditor {
            journal,
            est,
            profile,
            budget_rules: false,
            pending: Pending::default(),
            windows: HashMap::new(),
            r: Replayer::new(journal),
            lag: Replayer::new(journal),
            memo: Memo::new(est),
            tally: Tally::default(),
            cal: crate::strategy::new_calibrator(journal),
            turn: 0,
            memory: Memory { last_edit, ..Memory::default() },
            total: 0,
            findings: Vec::new(),
            decisions: Vec::new(),
        };
        a.budget_rules = profile.journal_rules && a.declares_budget();
        a
    }

    /// The window in force: recorded, else the model's, else the profile's ([`Profile::window`]).
    pub(super) fn window(&mut self, s: &InForce) -> Option<u64> {
        let model = self.r.model.clone().or_else(|| self.journal.session().and_then(|x| x.model.clone()));
        let journal = self.journal;
        let of_model = model.and_then(|m| {
            *self.windows.entry(m).or_insert_with_key(|m| {
                Limits::for_session(journal, Some(m), &PriceTable::builtin()).window.map(|l| l.tokens)
            })
        });
        self.profile.window(s, of_model)
    }

    /// round-half-up(raw × the multiplier before the next turn).
    pub(super) fn calibrated(&self, raw: u64) -> u64 {
        self.cal.calibrate(self.turn + 1, raw)
    }

    pub(super) fn record(&mut self, index: usize, rec: &'j Record) {
        self.lag.advance_to(index);
        let settings = in_force(&self.r.ctx);
        let mut fs: Vec<Finding> = Vec::new();
        match &rec.body {
            Body::Assistant(a) => self.assistant(rec, a, settings, &mut fs),
            Body::Notice(n) => {
                match n.topic.as_deref() {
                    Some("manage_context") => {
                        self.invite_needless(rec, settings, &mut fs);
                        self.memory.invited = true;
                    }
                    Some("mirror_applied") => self.memory.confirmed = true,
                    _ => {}
                }
                self.r.step();
            }
            Body::Model(m) => {
                self.model_switch(index, rec, &m.model, settings, &mut fs);
                self.budget_over_window(rec, &mut fs);
            }
            Body::Session(_) => {
                self.r.step();
                self.budget_over_window(rec, &mut fs);
            }
            Body::Elide(_) | Body::Clear(_) | Body::Mirror(_) | Body::Compact(_) => {
                self.decision(index, rec, settings, &mut fs);
            }
            _ => {
                self.r.step();
            }
        }
        self.findings.append(&mut fs);
    }

    /// A turn: window-overflow, then the turn's figures feed the calibration.
    pub(super) fn assistant(
        &mut self,
        rec: &Record,
        a: &crate::journal::AssistantRec,
        settings: InForce,
        fs: &mut Vec<Finding>,
    ) {
        if DECIDED.iter().any(|d| a.text.contains(d)) {
            self.memory.decided_since = true;
        }
        let raw = self.tally.request(&mut self.memo, self.r.projection());
        let prompt = a.usage.as_ref().and_then(|u| u.prompt_tokens);
        let provider = prompt.unwrap_or_else(|| self.calibrated(raw));
        let window = self.window(&settings);
        if let Some(w) = window {
            let limit = w.saturating_sub(settings.reserve);
            if provider > limit {
                let src = if prompt.is_some() { "provider-reported" } else { "estimated" };
                fs.push(
                    find("window-overflow", rec, format!("request of {provider} {src} tokens exceeds ctx_window − context_reserve = {w} − {} = {limit}", settings.reserve))
                        .with_block(&a.id),
                );
            }
        }
        self.turn_omissions(rec, a, raw, settings, fs);
        self.compact_missing(rec, a, raw, provider, window, fs);
        self.trim_missing(rec, a, provider, window, fs);
        self.turn += 1;
        self.cal.observe(self.turn, prompt, raw);
        self.r.step();
    }

    /// switch-no-compact: a switch to a smaller window while the request fills 90% of it.
    pub(super) fn model_switch(
        &mut self,
        index: usize,
        rec: &Record,
        model: &str,
        settings: InForce,
        fs: &mut Vec<Finding>,
    ) {
        let old_window = settings.window;
        self.r.step();
        let new = in_force(&self.r.ctx);
        let (Some(old), Some(w)) = (old_window, new.window) else { return };
        let raw = self.tally.request(&mut self.memo, self.r.projection());
        let now = self.calibrated(raw);
        if w < old && now * 10 > w * 9 {
            let compacted = self.journal.records[index + 1..]
                .iter()
                .take_while(|x| !matches!(x.body, Body::Assistant(_)))
                .any(|x| matches!(x.body, Body::Compact(_)));
            if !compacted {
                fs.push(find(
                    "switch-no-compact",
                    rec,
                    format!("switch to {model} (window {w}, was {old}) at ~{now} tokens, above 90% of the new window, and no compaction before the next turn"),
                ));
            }
        }
    }

    /// A cleanup decision: the request before and after it, its verdicts and its savings.
    pub(super) fn decision(&mut self, index: usize, rec: &'j Record, settings: InForce, fs: &mut Vec<Finding>) {
        let before_raw = self.tally.request(&mut self.memo, self.lag.projection());
        self.r.step();
        self.tally.invalidate();
        let after_raw = self.tally.request(&mut self.memo, self.r.projection());
        let (before, after) = (self.calibrated(before_raw), self.calibrated(after_raw));
        let window = self.window(&settings);
        let judge = Judge {
            window,
            journal: self.journal,
            rec,
            index,
            est: self.est,
            settings,
            before_p: self.lag.projection(),
            after_p: self.r.projection(),
            before_raw,
            before,
            after,
            multiplier: self.cal.multiplier(self.turn + 1),
            profile: self.profile,
            declared: self.declares_budget(),
            turn: self.turn,
        };
        let (kind, what, recorded_before, recorded_after) = judge.judge(&mut self.memory, fs);
        self.pending.compacted |= kind == "compact";
        self.pending.compactions += usize::from(kind == "compact");
        self.after_elide(rec, before, after_raw, settings, fs);
        let trigger_judged = match &rec.body {
            // a Command Code trim whose mode is not recorded is not judged (`trim-unjudged`)
            Body::Elide(e) => e.by.as_deref().is_none_or(|b| b == "auto") && !self.profile.mode_unrecorded(),
            Body::Compact(c) => c.trigger.as_deref() == Some("auto"),
            _ => false,
        };
        let saved = before as i64 - after as i64;
        self.total += saved;
        let first = self.findings.len();
        self.decisions.push(Decision {
            rev: rec.rev,
            line: rec.line,
            kind,
            what,
            before,
            after,
            recorded_before,
            recorded_after,
            saved,
            total: self.total,
            findings: (first..first + fs.len()).collect(),
            trigger_judged,
        });
    }

    /// The report, findings sorted by rev (decision indices kept valid).
    pub(super) fn finish(self) -> AuditReport {
        let Auditor { journal, mut findings, mut decisions, total, profile, .. } = self;
        // One verdict: what validate finds wrong with a decision record joins its row.
        let rows: HashMap<u64, usize> = decisions.iter().enumerate().map(|(i, d)| (d.rev, i)).collect();
        for f in crate::check::validate::validate_decisions(journal) {
            let row = rows
                .get(&f.rev)
                .filter(|_| f.severity != crate::check::Severity::Info && DECISION_RULES.contains(&f.rule));
            if let Some(&row) = row {
                decisions[row].findings.push(findings.len());
                findings.push(f);
            }
        }
        let mut order: Vec<usize> = (0..findings.len()).collect();
        order.sort_by_key(|&i| findings[i].rev);
        let mut new_pos = vec![0; findings.len()];
        for (new, &old) in order.iter().enumerate() {
            new_pos[old] = new;
        }
        let sorted: Vec<Finding> = order.iter().map(|&i| findings[i].clone()).collect();
        for d in &mut decisions {
            for i in &mut d.findings {
                *i = new_pos[*i];
            }
        }
        AuditReport { harness: profile.harness, decisions, findings: sorted, total_saved: total }
    }
}
