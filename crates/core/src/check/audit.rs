//! `audit`: every cleanup decision (`elide`, `clear`, `mirror`, `compact`) judged against the
//! seeds' rules — trigger, restraint, outcome, the `DECIDED:` habit — with the tokens it saved and
//! the running total ("saved ~41,300 tokens (total ~112,000 this session)", seed `003_*`).
//!
//! One replay of the recorded projection ([`Replayer`]) by an [`Auditor`]. Token figures come
//! from [`crate::tokens::estimator_for`], calibrated as `strategies.md` §3 says by the one
//! incremental [`Calibrator`], so the pass is linear.

use std::collections::{HashMap, HashSet};
use std::sync::Arc;

use serde_json::Value;

use crate::cache::prices::PriceTable;
use crate::cache::window::Limits;
use crate::journal::{Body, Journal, Record, Text};
use crate::projection::block::canonical_value;
use crate::projection::{Block, Projection, Replayer};
use crate::tokens::budget::{in_force, InForce};
use crate::tokens::estimator::EncodingError;
use crate::tokens::{estimator_for, Calibrator, Estimator, BLOCK_FRAMING, FRAMING};

use crate::strategy::compact::Pause;

use super::profile::{Cut, Harness, Profile};
use super::Finding;

mod omit;

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
        "elide-trigger" | "estimate-drift" | "compact-trigger" | "compact-too-few" => Aspect::Trigger,
        "elide-keep" | "elide-order" | "elide-stop" | "elide-stopped-early" | "decision-twice" | "text-touched" => {
            Aspect::Restraint
        }
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

/// Token counts of blocks, memoized by the identity of their shared texts and args: the replay
/// clones `Arc`s, so an unchanged block costs a look-up instead of a recount on every turn, which
/// keeps the audit linear in the journal. The cache holds a clone of each `Arc` it keys on, so an
/// address is never reused for another text while cached.
struct Memo<'e> {
    est: &'e dyn Estimator,
    texts: HashMap<usize, (Text, u64)>,
    values: HashMap<usize, (Arc<Value>, u64)>,
}

impl<'e> Memo<'e> {
    fn new(est: &'e dyn Estimator) -> Self {
        Memo { est, texts: HashMap::new(), values: HashMap::new() }
    }

    fn text(&mut self, t: &Text) -> u64 {
        let key = Arc::as_ptr(t) as *const u8 as usize;
        match self.texts.get(&key) {
            Some((_, n)) => *n,
            None => {
                let n = self.est.count(t);
                self.texts.insert(key, (t.clone(), n));
                n
            }
        }
    }

    fn value(&mut self, v: &Arc<Value>) -> u64 {
        let key = Arc::as_ptr(v) as usize;
        match self.values.get(&key) {
            Some((_, n)) => *n,
            None => {
                let n = self.est.count(&canonical_value(v));
                self.values.insert(key, (v.clone(), n));
                n
            }
        }
    }

    /// The same figure as [`Estimator::block`].
    fn block(&mut self, b: &Block) -> u64 {
        match b {
            Block::System { text, tools } => {
                BLOCK_FRAMING + self.text(text) + tools.as_ref().map_or(0, |t| self.value(t))
            }
            Block::Assistant { text, calls, .. } => {
                let mut n = BLOCK_FRAMING + self.text(text);
                for c in calls {
                    n += self.est.count(&c.tool) + self.value(&c.args);
                }
                n
            }
            Block::Summary { text }
            | Block::User { text, .. }
            | Block::Attachment { text, .. }
            | Block::Notice { text, .. }
            | Block::Result { text, .. } => BLOCK_FRAMING + self.text(text),
        }
    }

    /// The same figure as [`crate::tokens::request_tokens`].
    #[cfg(test)]
    fn request(&mut self, p: &Projection) -> u64 {
        FRAMING + p.blocks().map(|b| self.block(b)).sum::<u64>()
    }
}

/// The running token sum of the conversation, extended while records only append blocks (so a
/// turn costs the blocks it added) and recounted (through the memo) after a decision.
#[derive(Default)]
struct Tally {
    conv: Vec<u64>,
    sum: u64,
}

impl Tally {
    /// Forget the per-block counts: the conversation may have changed anywhere.
    fn invalidate(&mut self) {
        self.conv.clear();
        self.sum = 0;
    }

    /// Tokens of the whole request `p`, like [`crate::tokens::request_tokens`].
    fn request(&mut self, memo: &mut Memo<'_>, p: &Projection) -> u64 {
        if self.conv.len() > p.conv.len() {
            self.invalidate();
        }
        while self.conv.len() < p.conv.len() {
            let n = memo.block(&p.conv[self.conv.len()].block);
            self.conv.push(n);
            self.sum += n;
        }
        let head: u64 = p.system.iter().chain(p.summaries.iter()).map(|b| memo.block(b)).sum();
        FRAMING + head + self.sum
    }
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

/// What the habit and restraint rules remember from one decision to the next.
#[derive(Default)]
struct Memory {
    /// Ids named by earlier elisions and clears.
    named: HashSet<String>,
    /// A `DECIDED:` note since the last clear or commit.
    decided_since: bool,
    /// A `manage_context` notice since the last accepted commit.
    invited: bool,
    /// A `mirror_applied` notice since the last mirror record.
    confirmed: bool,
    /// The last mirror: accepted, and its canonical draft.
    last_mirror: Option<(bool, Vec<u8>)>,
    /// The pause rule of `strategies.md` §2, the replay's own ([`Pause`]).
    pause: Pause,
    /// Record index of the last mirror or clear: the model's own cleanup after an invitation.
    last_edit: Option<usize>,
}

/// One pass over the journal: the recorded projection replayed ([`Replayer`]), token counts
/// memoized and calibrated turn by turn, each record judged as it comes.
struct Auditor<'j> {
    journal: &'j Journal,
    est: &'j dyn Estimator,
    /// The projection after the records seen so far.
    r: Replayer<'j>,
    /// The projection before the current record, so a decision can be compared with the state
    /// after it without copying the projection.
    lag: Replayer<'j>,
    memo: Memo<'j>,
    tally: Tally,
    cal: Calibrator,
    /// Turns (assistant records) seen so far.
    turn: usize,
    memory: Memory,
    total: i64,
    findings: Vec<Finding>,
    decisions: Vec<Decision>,
    profile: Profile,
    /// The profile's budget rules apply and the journal declares a budget ([`omit`]).
    budget_rules: bool,
    pending: omit::Pending,
    /// The window of each model in force, from the table `cache` uses ([`Limits::for_session`]).
    windows: HashMap<String, Option<u64>>,
}

impl<'j> Auditor<'j> {
    fn new(journal: &'j Journal, est: &'j dyn Estimator, profile: Profile) -> Self {
        let last_edit = journal.records.iter().rposition(|r| matches!(r.body, Body::Mirror(_) | Body::Clear(_)));
        let mut a = Auditor {
            journal,
            est,
            profile,
            budget_rules: false,
            pending: omit::Pending::default(),
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
    fn window(&mut self, s: &InForce) -> Option<u64> {
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
    fn calibrated(&self, raw: u64) -> u64 {
        self.cal.calibrate(self.turn + 1, raw)
    }

    fn record(&mut self, index: usize, rec: &'j Record) {
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
    fn assistant(&mut self, rec: &Record, a: &crate::journal::AssistantRec, settings: InForce, fs: &mut Vec<Finding>) {
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
        self.turn += 1;
        self.cal.observe(self.turn, prompt, raw);
        self.r.step();
    }

    /// switch-no-compact: a switch to a smaller window while the request fills 90% of it.
    fn model_switch(&mut self, index: usize, rec: &Record, model: &str, settings: InForce, fs: &mut Vec<Finding>) {
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
    fn decision(&mut self, index: usize, rec: &'j Record, settings: InForce, fs: &mut Vec<Finding>) {
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
        };
        let (kind, what, recorded_before, recorded_after) = judge.judge(&mut self.memory, fs);
        self.pending.compacted |= kind == "compact";
        self.after_elide(rec, before, after_raw, settings, fs);
        let trigger_judged = match &rec.body {
            Body::Elide(e) => e.by.as_deref().is_none_or(|b| b == "auto"),
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
    fn finish(self) -> AuditReport {
        let Auditor { journal, mut findings, mut decisions, total, profile, .. } = self;
        // One verdict: what validate finds wrong with a decision record joins its row.
        let rows: HashMap<u64, usize> = decisions.iter().enumerate().map(|(i, d)| (d.rev, i)).collect();
        for f in super::validate::validate_decisions(journal) {
            let row =
                rows.get(&f.rev).filter(|_| f.severity != super::Severity::Info && DECISION_RULES.contains(&f.rule));
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

/// A compaction from `before` to `after` under `pause`: the size the earlier ineffective pass
/// left when this one ran while paused (`thrash`). The pause then follows this pass.
fn paused_pass(pause: &mut Pause, before: u64, after: u64) -> Option<u64> {
    let paused = (!pause.allows(before)).then(|| pause.paused_at().unwrap_or_default());
    *pause = Pause::default();
    pause.record(before, after);
    paused
}

fn clear_request_json(r: &crate::journal::ClearRequest) -> serde_json::Value {
    let mut m = serde_json::Map::new();
    if let Some(c) = &r.call_ids {
        m.insert("call_ids".into(), c.clone().into());
    }
    if let Some(b) = &r.before {
        m.insert("before".into(), b.clone().into());
    }
    if let Some(k) = r.keep_last {
        m.insert("keep_last".into(), k.into());
    }
    if let Some(t) = &r.tool {
        m.insert("tool".into(), t.clone().into());
    }
    serde_json::Value::Object(m)
}

fn list(ids: &[String]) -> String {
    const MAX: usize = 6;
    let mut s = ids.iter().take(MAX).cloned().collect::<Vec<_>>().join(", ");
    if ids.len() > MAX {
        s.push_str(&format!(" and {} more", ids.len() - MAX));
    }
    if ids.is_empty() {
        s.push_str("(none)");
    }
    s
}
/// Everything a decision is judged with.
struct Judge<'a> {
    journal: &'a Journal,
    rec: &'a Record,
    index: usize,
    est: &'a dyn Estimator,
    settings: InForce,
    /// The window in force ([`Auditor::window`]).
    window: Option<u64>,
    before_p: &'a Projection,
    after_p: &'a Projection,
    before_raw: u64,
    before: u64,
    after: u64,
    /// The calibration multiplier in force (before the next turn).
    multiplier: f64,
    profile: Profile,
    /// The journal declares its settings (`ctx` on a session or model record): an `elide`
    /// record's own `budget` cannot lower them (issue 30).
    declared: bool,
}

impl Judge<'_> {
    /// Judges the decision by its kind: (kind, what it did, the harness's figures before/after).
    fn judge(&self, m: &mut Memory, fs: &mut Vec<Finding>) -> (&'static str, String, Option<f64>, Option<f64>) {
        match &self.rec.body {
            Body::Elide(e) => {
                self.elide(e, m, fs);
                m.named.extend(e.calls.iter().cloned());
                let what = format!("{}: {}", e.by.as_deref().unwrap_or("auto"), list(&e.calls));
                ("elide", what, e.estimate_before, e.estimate_after)
            }
            Body::Clear(c) => ("clear", self.clear(c, m, fs), None, None),
            Body::Mirror(r) => ("mirror", self.mirror(r, m, fs), None, None),
            Body::Compact(c) => {
                let manual = c.trigger.as_deref() == Some("manual");
                self.compact(c, &mut m.pause, manual, fs);
                let keep = match (&c.kept, c.first_kept) {
                    (Some(k), _) => format!("{} ids kept", k.len()),
                    (None, Some(f)) => format!("from rev {f}"),
                    (None, None) => "nothing kept".into(),
                };
                let what =
                    format!("{}, {keep}, {} blocks kept", c.trigger.as_deref().unwrap_or("?"), self.after_p.conv.len());
                ("compact", what, c.tokens_before, c.tokens_after)
            }
            _ => unreachable!("only decisions are judged"),
        }
    }

    fn clear(&self, c: &crate::journal::ClearRec, m: &mut Memory, fs: &mut Vec<Finding>) -> String {
        self.touches(&c.cleared, &m.named, false, fs);
        if !m.decided_since {
            fs.push(find(
                "decided-note",
                self.rec,
                "clear without a DECIDED: / РЕШЕНО: note in the assistant text since the previous clear or commit",
            ));
        }
        m.decided_since = false;
        m.named.extend(c.cleared.iter().cloned());
        let req = serde_json::to_string(&clear_request_json(&c.request)).unwrap_or_default();
        if c.cleared.is_empty() {
            format!("{req} → nothing to clear")
        } else {
            format!("{req} → {}", list(&c.cleared))
        }
    }

    fn mirror(&self, r: &crate::journal::MirrorRec, m: &mut Memory, fs: &mut Vec<Finding>) -> String {
        let rec = self.rec;
        if !m.invited {
            fs.push(find(
                "mirror-uninvited",
                rec,
                format!(
                    "mirror r{} committed without a manage_context notice since the last accepted commit",
                    r.mirror_rev
                ),
            ));
        }
        // parsed here and dropped with this call: records keep drafts as text (issue 20)
        let parsed = r.draft.parse();
        let draft =
            parsed.as_ref().map_or_else(|_| r.draft.json().as_bytes().to_vec(), |v| canonical_value(v).into_bytes());
        if let Some((true, prev)) = &m.last_mirror {
            // the draft is the conversation as it stands (blocks up to base_rev): nothing edited
            let blocks = parsed.as_ref().map_err(Clone::clone).and_then(crate::projection::mirror::parse_draft);
            let unchanged = blocks.is_ok_and(|d| {
                let now: Vec<&Block> =
                    self.before_p.conv.iter().filter(|b| b.src_rev <= r.base_rev).map(|b| &b.block).collect();
                d.len() == now.len() && d.iter().zip(now).all(|(a, b)| a == b)
            });
            if m.confirmed && (*prev == draft || unchanged) {
                let why = if *prev == draft {
                    "repeats the accepted draft unchanged"
                } else {
                    "changes nothing in the conversation"
                };
                fs.push(find(
                    "mirror-repeat",
                    rec,
                    format!("mirror r{} {why}: the confirmation (mirror_applied) was already sent", r.mirror_rev),
                ));
            }
        }
        m.confirmed = false;
        if !m.decided_since {
            fs.push(find("decided-note", rec, format!("mirror r{} committed without a DECIDED: / РЕШЕНО: note in the assistant text since the previous clear or commit", r.mirror_rev)));
        }
        m.decided_since = false;
        if r.accepted() {
            m.invited = false;
        }
        m.last_mirror = Some((r.accepted(), draft));
        if r.accepted() {
            format!("r{} accepted (base rev {}, {} service calls)", r.mirror_rev, r.base_rev, r.service_calls.len())
        } else {
            format!("r{} {}: {}", r.mirror_rev, r.status, r.reason.as_deref().unwrap_or("no reason given"))
        }
    }

    /// estimate-drift: each recorded figure against ctxj's calibrated one.
    fn drift(&self, figures: [(&str, Option<f64>, u64); 2], fs: &mut Vec<Finding>) {
        for (what, recorded, ours) in figures {
            if let Some(x) = recorded {
                if ours > 0 && (x - ours as f64).abs() > 0.10 * ours as f64 {
                    fs.push(find(
                        "estimate-drift",
                        self.rec,
                        format!(
                            "{what} {x:.0} differs from ctxj's calibrated {ours} by {:+.0}%",
                            (x / ours as f64 - 1.0) * 100.0
                        ),
                    ));
                }
            }
        }
    }

    /// decision-twice and text-touched for the ids an elide (`elide` = true) or clear names.
    fn touches(&self, ids: &[String], named: &HashSet<String>, elide: bool, fs: &mut Vec<Finding>) {
        let what = if elide { "elided" } else { "cleared" };
        for id in ids {
            if named.contains(id) {
                fs.push(
                    find(
                        "decision-twice",
                        self.rec,
                        format!("{id} is {what} again: an earlier decision already named it"),
                    )
                    .with_block(id),
                );
            }
            let Some(p) = self.before_p.position(id) else { continue };
            let b = &self.before_p.conv[p].block;
            let ok = matches!(b, Block::Result { .. }) || (elide && matches!(b, Block::Attachment { .. }));
            if !ok {
                fs.push(
                    find("text-touched", self.rec, format!("{what} {id}, a {} block", b.type_name())).with_block(id),
                );
            }
        }
    }

    fn elide(&self, e: &crate::journal::ElideRec, m: &Memory, fs: &mut Vec<Finding>) {
        let rec = self.rec;
        let (named, invited, last_edit) = (&m.named, m.invited, m.last_edit);
        self.touches(&e.calls, named, true, fs);
        // The budget in force is the journal's declared one: a record that names a lower budget
        // would certify its own early elision. Only without declared settings does the record's
        // own `budget` (journal-v1 §2 `elide`: "the settings in force") stand in.
        let budget = if self.declared { self.settings.budget } else { e.budget.unwrap_or(self.settings.budget) };
        let target = e.target.unwrap_or(self.settings.target);
        let keep = e.keep_results.unwrap_or(self.settings.keep_results) as usize;
        let auto = e.by.as_deref().is_none_or(|b| b == "auto");
        // trigger
        let before = e.estimate_before.unwrap_or(self.before as f64);
        if auto && before <= budget as f64 {
            fs.push(find(
                "elide-trigger",
                rec,
                match e.budget.filter(|b| *b != budget) {
                    Some(own) => format!(
                        "auto-elision at an estimate of {before:.0} tokens, not above the budget of {budget} in force (the record names its own budget of {own})"
                    ),
                    None => format!("auto-elision at an estimate of {before:.0} tokens, not above the budget of {budget}"),
                },
            ));
        }
        self.drift(
            [("estimate_before", e.estimate_before, self.before), ("estimate_after", e.estimate_after, self.after)],
            fs,
        );
        // restraint: keep_results
        let results: Vec<&str> = self
            .before_p
            .conv
            .iter()
            .filter_map(|b| match &b.block {
                Block::Result { call, .. } => Some(call.as_str()),
                _ => None,
            })
            .collect();
        let protected: HashSet<&str> = results[results.len().saturating_sub(keep)..].iter().copied().collect();
        let named_now: HashSet<&str> = e.calls.iter().map(String::as_str).collect();
        for id in &e.calls {
            if protected.contains(id.as_str()) {
                fs.push(
                    find("elide-keep", rec, format!("{id} is one of the {keep} most recent results (keep_results)"))
                        .with_block(id),
                );
            }
        }
        // restraint: oldest first
        let candidates: Vec<&str> = self
            .before_p
            .conv
            .iter()
            .filter_map(|b| match &b.block {
                Block::Result { call, .. } if !protected.contains(call.as_str()) => Some(call.as_str()),
                Block::Attachment { id, .. } => Some(id.as_str()),
                _ => None,
            })
            .filter(|id| !named.contains(*id))
            .collect();
        if let Some(last) = candidates.iter().rposition(|c| named_now.contains(c)) {
            if let Some(skipped) = candidates[..last].iter().find(|c| !named_now.contains(*c)) {
                fs.push(
                    find(
                        "elide-order",
                        rec,
                        format!("{skipped} was left while the newer {} was elided: not oldest first", candidates[last]),
                    )
                    .with_block(*skipped),
                );
            }
        }
        self.elide_stop(e, target, &named_now, fs);
        self.elide_outcome(e, target, invited, last_edit, fs);
    }

    /// elide-stop: the elision went on after the estimate was at or below the target (scaled to
    /// the harness's figure when recorded).
    fn elide_stop(&self, e: &crate::journal::ElideRec, target: u64, named_now: &HashSet<&str>, fs: &mut Vec<Finding>) {
        let rec = self.rec;
        let factor = match e.estimate_before {
            Some(x) if self.before_raw > 0 => x / self.before_raw as f64,
            _ => self.multiplier,
        };
        let order: Vec<&str> =
            self.before_p.conv.iter().filter_map(|b| b.block.id()).filter(|id| named_now.contains(id)).collect();
        let mut running = self.before_raw as f64;
        for (k, id) in order.iter().enumerate().take(order.len().saturating_sub(1)) {
            let (Some(pb), Some(pa)) = (self.before_p.position(id), self.after_p.position(id)) else { continue };
            running -= self.est.block(&self.before_p.conv[pb].block) as f64
                - self.est.block(&self.after_p.conv[pa].block) as f64;
            if running * factor <= target as f64 {
                fs.push(find(
                    "elide-stop",
                    rec,
                    format!(
                        "the estimate was ~{:.0} ≤ target {target} after eliding {} of {} blocks; it did not stop",
                        running * factor,
                        k + 1,
                        order.len()
                    ),
                ));
                break;
            }
        }
    }

    /// elide-outcome: still above the target, and the invitation / the model's cleanup missing.
    fn elide_outcome(
        &self,
        e: &crate::journal::ElideRec,
        target: u64,
        invited: bool,
        last_edit: Option<usize>,
        fs: &mut Vec<Finding>,
    ) {
        let rec = self.rec;
        let after = e.estimate_after.unwrap_or(self.after as f64);
        if after > target as f64 {
            // the invitation: still pending from earlier (no accepted commit since), or sent now
            let rest = &self.journal.records[self.index + 1..];
            let notice = invited
                || rest
                    .iter()
                    .take_while(|x| !matches!(x.body, Body::Assistant(_)))
                    .any(|x| matches!(&x.body, Body::Notice(n) if n.topic.as_deref() == Some("manage_context")));
            let edit = last_edit.is_some_and(|i| i > self.index);
            if !notice || !edit {
                let missing = match (notice, edit) {
                    (false, false) => "neither a manage_context notice nor a mirror edit followed",
                    (false, true) => "no manage_context notice followed before the next turn",
                    _ => "no mirror commit or clear followed the manage_context notice",
                };
                fs.push(find(
                    "elide-outcome",
                    rec,
                    format!("estimate after elision {after:.0} is above the target {target}, and {missing}"),
                ));
            }
        }
    }

    fn compact(&self, c: &crate::journal::CompactRec, pause: &mut Pause, manual: bool, fs: &mut Vec<Finding>) {
        let rec = self.rec;
        let prof = self.profile;
        self.drift([("tokens_before", c.tokens_before, self.before), ("tokens_after", c.tokens_after, self.after)], fs);
        // trigger
        if c.trigger.as_deref() == Some("auto") {
            let before = c.tokens_before.unwrap_or(self.before as f64);
            let threshold = prof.compact_threshold(&self.settings, self.window);
            if before <= threshold as f64 {
                let rule = match prof.compact_pct {
                    Some(p) => format!("{p}% of the window ({})", prof.harness),
                    None => "budget, or 50% of the window".into(),
                };
                fs.push(find(
                    "compact-trigger",
                    rec,
                    format!("auto compaction at {before:.0} tokens, not past the threshold of {threshold} ({rule})"),
                ));
            }
        }
        if crate::strategy::summary::has_secret(&c.summary) && prof.redact {
            fs.push(find(
                "compact-secret",
                rec,
                "the recorded summary contains a secret-looking string; it must read [REDACTED] (seed 002)",
            ));
        }
        self.compact_cut(c, fs);
        self.compact_failure(c, fs);
        // thrash: the pause rule, `strategy::compact`'s (one owner: the replay and the audit agree
        // at the +10 % boundary)
        if !manual && prof.thrash {
            let stopped = prof.stop_after_ineffective && pause.paused_at().is_some();
            let left = paused_pass(pause, self.before, self.after);
            if c.fallback == Some(true) && prof.harness == Harness::CommandCode {
                // seed 003: a failed summary is retried on the next turn, not paused
                *pause = Pause::default();
            }
            if stopped {
                fs.push(find(
                    "thrash",
                    rec,
                    format!("compaction at ~{} tokens after an ineffective pass: {} stops compressing and offers /new (seed 002)", self.before, prof.harness),
                ));
            } else if let Some(left) = left {
                fs.push(find(
                    "thrash",
                    rec,
                    format!("compaction at ~{} tokens while paused: the previous pass left ~{left} and the request has not grown 10% since", self.before),
                ));
            }
        }
    }

    /// The failure rules of seeds 002 and 003: a Veles fallback summary is appended to the
    /// earlier one; a Command Code brief replaces the old one, never chains.
    fn compact_failure(&self, c: &crate::journal::CompactRec, fs: &mut Vec<Finding>) {
        let chain = c.mode.as_deref() == Some("chain");
        let earlier = !self.before_p.summaries.is_empty();
        match self.profile.harness {
            Harness::Veles if c.fallback == Some(true) && !chain && earlier => fs.push(find(
                "compact-fallback-chain",
                self.rec,
                "the fallback summary replaces the earlier summary; seed 002 appends it (mode \"chain\") so continuity is kept",
            )),
            Harness::CommandCode if chain => fs.push(find(
                "compact-chained",
                self.rec,
                "the brief is chained after the earlier one; seed 003 replaces the old brief (mode \"rotate\"), never summarizing it again",
            )),
            _ => {}
        }
    }

    /// compact-split, compact-boundary / compact-cut-boundary, compact-tail, compact-too-few.
    fn compact_cut(&self, c: &crate::journal::CompactRec, fs: &mut Vec<Finding>) {
        let (rec, prof) = (self.rec, self.profile);
        let kept: HashSet<&str> = self.after_p.conv.iter().filter_map(|b| b.block.id()).collect();
        let is_kept = |b: &Block| b.id().is_some_and(|id| kept.contains(id));
        for b in &self.before_p.conv {
            if let Block::Assistant { calls, .. } = &b.block {
                for call in calls {
                    let Some(p) = self.before_p.position(&call.id) else { continue };
                    if is_kept(&b.block) != is_kept(&self.before_p.conv[p].block) {
                        fs.push(
                            find(
                                "compact-split",
                                rec,
                                format!("call {} and its result are on different sides of the cut", call.id),
                            )
                            .with_block(&call.id),
                        );
                    }
                }
            }
        }
        let first = self.before_p.conv.iter().find(|b| is_kept(&b.block)).map(|b| &b.block);
        if let (None, Some(first)) = (&c.kept, first) {
            let id = first.id().unwrap_or_default();
            let at = format!("the first kept block is the {} {id}", first.type_name());
            let turn = matches!(first, Block::User { .. } | Block::Assistant { .. } | Block::Notice { .. });
            if prof.cut == Cut::Turn && !turn {
                fs.push(find("compact-boundary", rec, format!("{at}: not a turn boundary")).with_block(id));
            } else if prof.cut == Cut::User && !matches!(first, Block::User { .. }) {
                fs.push(
                    find("compact-cut-boundary", rec, format!("{at}: {} cuts only at a user message", prof.harness))
                        .with_block(id),
                );
            }
        }
        let (n, total) = (self.after_p.conv.len(), self.before_p.conv.len());
        if let Some(min) = prof.min_tail.filter(|m| n < *m && total >= *m) {
            fs.push(find("compact-tail", rec, format!("only {n} block(s) kept; at least {min} expected")));
        }
        let summarized = self.before_p.conv.iter().filter(|b| !is_kept(&b.block)).count();
        if let Some(min) = prof.min_summarized.filter(|m| summarized < *m) {
            fs.push(find(
                "compact-too-few",
                rec,
                format!("the compaction summarized {summarized} block(s): with fewer than {min} there is nothing to summarize and nothing should happen (seed 003)"),
            ));
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

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
