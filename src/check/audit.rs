//! `audit`: every cleanup decision (`elide`, `clear`, `mirror`, `compact`) judged against the
//! seeds' rules — trigger, restraint, outcome, the `DECIDED:` habit — with the tokens it saved and
//! the running total ("saved ~41,300 tokens (total ~112,000 this session)", seed `003_*`).
//!
//! One replay of the recorded projection ([`Replayer`]). Token figures come from
//! [`super::estimator`], calibrated as `strategies.md` §3 says: before turn t the multiplier is
//! Σ wᵢ·promptᵢ / Σ wᵢ·estᵢ over earlier turns with `usage.prompt_tokens`, wᵢ = 0.5^((t−1−i)/4),
//! kept incrementally (each new turn multiplies the old weights by 0.5^¼), so the pass is linear.

use std::collections::{HashMap, HashSet};
use std::sync::Arc;

use serde_json::Value;

use crate::journal::{Body, CtxSettings, Journal, Record, Text};
use crate::projection::block::canonical_value;
use crate::projection::{Block, Projection, Replayer};
use crate::tokens::Estimator;

use super::Finding;

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
        "elide-trigger" | "estimate-drift" | "compact-trigger" => Aspect::Trigger,
        "elide-keep" | "elide-order" | "elide-stop" | "decision-twice" | "text-touched" => Aspect::Restraint,
        "decided-note" => Aspect::Habit,
        _ => Aspect::Outcome,
    }
}

/// One decision record and how it fared.
#[derive(Debug, Clone)]
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
    pub findings: Vec<usize>,
    /// Whether its trigger was judged (auto elisions and auto compactions; a model's clear or
    /// commit and a user's `/compact` have no trigger to judge).
    pub trigger_judged: bool,
}

/// The result of [`audit`].
#[derive(Debug, Clone)]
pub struct AuditReport {
    pub decisions: Vec<Decision>,
    /// Every finding, sorted by rev (decision findings and turn findings such as overflow).
    pub findings: Vec<Finding>,
    /// Sum of every decision's `saved`.
    pub total_saved: i64,
}

/// Settings in force, with the auto rules of journal-v1 §6 applied.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Resolved {
    pub window: Option<u64>,
    pub budget: u64,
    pub target: u64,
    pub reserve: u64,
    pub keep_results: u64,
}

/// Resolves the journal's settings: `context_budget` 0/absent → 100,000 when `ctx_window` ≤
/// 300,000 else 200,000; `context_target` 0/absent or ≥ budget → 70% of the budget (rounded
/// down); `context_reserve` absent → 8,192; `keep_results` absent → 5.
pub fn resolve(c: &CtxSettings) -> Resolved {
    let window = c.ctx_window.filter(|w| *w > 0);
    let budget = match c.context_budget {
        Some(b) if b > 0 => b,
        _ => match window {
            Some(w) if w <= 300_000 => 100_000,
            _ => 200_000,
        },
    };
    let target = match c.context_target {
        Some(t) if t > 0 && t < budget => t,
        _ => budget * 7 / 10,
    };
    Resolved {
        window,
        budget,
        target,
        reserve: c.context_reserve.unwrap_or(8192),
        keep_results: c.keep_results.unwrap_or(5),
    }
}

/// The calibration of `strategies.md` §3, kept incrementally.
#[derive(Debug, Clone, Default)]
pub struct Calibration {
    sum_prompt: f64,
    sum_est: f64,
}

impl Calibration {
    /// Accounts for a finished turn (the next turn's weights shift by one).
    pub fn push(&mut self, prompt: Option<u64>, raw: u64) {
        let d = 0.5f64.powf(0.25);
        self.sum_prompt *= d;
        self.sum_est *= d;
        if let Some(p) = prompt {
            self.sum_prompt += p as f64;
            self.sum_est += raw as f64;
        }
    }

    /// The multiplier before the next turn: 1.0 when no earlier turn carries usage.
    pub fn multiplier(&self) -> f64 {
        if self.sum_est > 0.0 {
            self.sum_prompt / self.sum_est
        } else {
            1.0
        }
    }

    /// round-half-up(raw × multiplier).
    pub fn calibrated(&self, raw: u64) -> u64 {
        (raw as f64 * self.multiplier() + 0.5).floor() as u64
    }
}

/// The pause rule of `strategies.md` §2 for compactions.
#[derive(Debug, Clone, Copy)]
struct Pause {
    /// Size of the request right after the ineffective pass.
    after: u64,
}

const DECIDED: [&str; 2] = ["DECIDED:", "РЕШЕНО:"];

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
            Block::System { text, tools } => 4 + self.text(text) + tools.as_ref().map_or(0, |t| self.value(t)),
            Block::Assistant { text, calls, .. } => {
                let mut n = 4 + self.text(text);
                for c in calls {
                    n += self.est.count(&c.tool) + self.value(&c.args);
                }
                n
            }
            Block::Summary { text }
            | Block::User { text, .. }
            | Block::Attachment { text, .. }
            | Block::Notice { text, .. }
            | Block::Result { text, .. } => 4 + self.text(text),
        }
    }

    /// The same figure as [`crate::tokens::request_tokens`].
    #[cfg(test)]
    fn request(&mut self, p: &Projection) -> u64 {
        3 + p.blocks().map(|b| self.block(b)).sum::<u64>()
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
        3 + head + self.sum
    }
}

/// Audits every decision of `journal` with the estimator of [`super::estimator`].
pub fn audit(journal: &Journal) -> AuditReport {
    let est = super::estimator(journal);
    audit_with(journal, est.as_ref())
}

/// Audits every decision of `journal` with `est`.
pub fn audit_with(journal: &Journal, est: &dyn Estimator) -> AuditReport {
    let mut findings: Vec<Finding> = Vec::new();
    let mut decisions: Vec<Decision> = Vec::new();
    let mut r = Replayer::new(journal);
    let mut lag = Replayer::new(journal);
    let mut memo = Memo::new(est);
    let mut tally = Tally::default();
    let mut cal = Calibration::default();
    let mut named: HashSet<String> = HashSet::new();
    let mut decided_since = false;
    let mut invited = false;
    // a mirror_applied notice since the last mirror record
    let mut confirmed = false;
    let mut last_mirror: Option<(bool, Vec<u8>)> = None;
    let mut pause: Option<Pause> = None;
    let mut total: i64 = 0;
    // record index of the last mirror or clear: the model's own cleanup after an invitation
    let last_edit: Option<usize> =
        journal.records.iter().rposition(|r| matches!(r.body, Body::Mirror(_) | Body::Clear(_)));

    for (index, rec) in journal.records.iter().enumerate() {
        // `lag` holds the projection before this record, so a decision can be compared with the
        // state after it without copying the projection.
        lag.advance_to(index);
        let mut fs: Vec<Finding> = Vec::new();
        let settings = resolve(&r.ctx);
        match &rec.body {
            Body::Assistant(a) => {
                if DECIDED.iter().any(|d| a.text.contains(d)) {
                    decided_since = true;
                }
                let raw = tally.request(&mut memo, r.projection());
                let prompt = a.usage.as_ref().and_then(|u| u.prompt_tokens);
                let provider = prompt.unwrap_or_else(|| cal.calibrated(raw));
                if let Some(w) = settings.window {
                    let limit = w.saturating_sub(settings.reserve);
                    if provider > limit {
                        let src = if prompt.is_some() { "provider-reported" } else { "estimated" };
                        fs.push(
                            find("window-overflow", rec, format!("request of {provider} {src} tokens exceeds ctx_window − context_reserve = {w} − {} = {limit}", settings.reserve))
                                .with_block(&a.id),
                        );
                    }
                }
                cal.push(prompt, raw);
                r.step();
            }
            Body::Notice(n) => {
                if n.topic.as_deref() == Some("manage_context") {
                    invited = true;
                }
                if n.topic.as_deref() == Some("mirror_applied") {
                    confirmed = true;
                }
                r.step();
            }
            Body::Model(m) => {
                let old_window = settings.window;
                r.step();
                let new = resolve(&r.ctx);
                if let (Some(old), Some(w)) = (old_window, new.window) {
                    let now = cal.calibrated(tally.request(&mut memo, r.projection()));
                    if w < old && now * 10 > w * 9 {
                        let compacted = journal.records[index + 1..]
                            .iter()
                            .take_while(|x| !matches!(x.body, Body::Assistant(_)))
                            .any(|x| matches!(x.body, Body::Compact(_)));
                        if !compacted {
                            fs.push(find(
                                "switch-no-compact",
                                rec,
                                format!("switch to {} (window {w}, was {old}) at ~{now} tokens, above 90% of the new window, and no compaction before the next turn", m.model),
                            ));
                        }
                    }
                }
            }
            Body::Elide(_) | Body::Clear(_) | Body::Mirror(_) | Body::Compact(_) => {
                let before_p = lag.projection();
                let before_raw = tally.request(&mut memo, before_p);
                r.step();
                tally.invalidate();
                let after_p = r.projection();
                let after_raw = tally.request(&mut memo, after_p);
                let before = cal.calibrated(before_raw);
                let after = cal.calibrated(after_raw);
                let ctx = Judge {
                    journal,
                    rec,
                    index,
                    est,
                    settings,
                    before_p,
                    after_p,
                    before_raw,
                    before,
                    after,
                    cal: &cal,
                };
                let (kind, what, rb, ra) = match &rec.body {
                    Body::Elide(e) => {
                        ctx.elide(e, &named, invited, last_edit, &mut fs);
                        named.extend(e.calls.iter().cloned());
                        (
                            "elide",
                            format!("{}: {}", e.by.as_deref().unwrap_or("auto"), list(&e.calls)),
                            e.estimate_before,
                            e.estimate_after,
                        )
                    }
                    Body::Clear(c) => {
                        ctx.touches(&c.cleared, &named, false, &mut fs);
                        if !decided_since {
                            fs.push(find("decided-note", rec, "clear without a DECIDED: / РЕШЕНО: note in the assistant text since the previous clear or commit"));
                        }
                        decided_since = false;
                        named.extend(c.cleared.iter().cloned());
                        let req = serde_json::to_string(&clear_request_json(&c.request)).unwrap_or_default();
                        let what = if c.cleared.is_empty() {
                            format!("{req} → nothing to clear")
                        } else {
                            format!("{req} → {}", list(&c.cleared))
                        };
                        ("clear", what, None, None)
                    }
                    Body::Mirror(m) => {
                        if !invited {
                            fs.push(find("mirror-uninvited", rec, format!("mirror r{} committed without a manage_context notice since the last accepted commit", m.mirror_rev)));
                        }
                        let draft = crate::projection::block::canonical_value(&m.draft).into_bytes();
                        if let Some((true, prev)) = &last_mirror {
                            // the draft is the conversation as it stands (blocks up to base_rev): nothing edited
                            let unchanged = crate::projection::mirror::parse_draft(&m.draft).is_ok_and(|d| {
                                let now: Vec<&Block> = before_p
                                    .conv
                                    .iter()
                                    .filter(|b| b.src_rev <= m.base_rev)
                                    .map(|b| &b.block)
                                    .collect();
                                d.len() == now.len() && d.iter().zip(now).all(|(a, b)| a == b)
                            });
                            if confirmed && (*prev == draft || unchanged) {
                                let why = if *prev == draft {
                                    "repeats the accepted draft unchanged"
                                } else {
                                    "changes nothing in the conversation"
                                };
                                fs.push(find(
                                    "mirror-repeat",
                                    rec,
                                    format!(
                                        "mirror r{} {why}: the confirmation (mirror_applied) was already sent",
                                        m.mirror_rev
                                    ),
                                ));
                            }
                        }
                        confirmed = false;
                        if !decided_since {
                            fs.push(find("decided-note", rec, format!("mirror r{} committed without a DECIDED: / РЕШЕНО: note in the assistant text since the previous clear or commit", m.mirror_rev)));
                        }
                        decided_since = false;
                        if m.accepted() {
                            invited = false;
                        }
                        last_mirror = Some((m.accepted(), draft));
                        let what = if m.accepted() {
                            format!(
                                "r{} accepted (base rev {}, {} service calls)",
                                m.mirror_rev,
                                m.base_rev,
                                m.service_calls.len()
                            )
                        } else {
                            format!(
                                "r{} {}: {}",
                                m.mirror_rev,
                                m.status,
                                m.reason.as_deref().unwrap_or("no reason given")
                            )
                        };
                        ("mirror", what, None, None)
                    }
                    Body::Compact(c) => {
                        let manual = c.trigger.as_deref() == Some("manual");
                        ctx.compact(c, &mut pause, manual, &mut fs);
                        let keep = match (&c.kept, c.first_kept) {
                            (Some(k), _) => format!("{} ids kept", k.len()),
                            (None, Some(f)) => format!("from rev {f}"),
                            (None, None) => "nothing kept".into(),
                        };
                        (
                            "compact",
                            format!(
                                "{}, {keep}, {} blocks kept",
                                c.trigger.as_deref().unwrap_or("?"),
                                after_p.conv.len()
                            ),
                            c.tokens_before,
                            c.tokens_after,
                        )
                    }
                    _ => unreachable!("matched above"),
                };
                let trigger_judged = match &rec.body {
                    Body::Elide(e) => e.by.as_deref().is_none_or(|b| b == "auto"),
                    Body::Compact(c) => c.trigger.as_deref() == Some("auto"),
                    _ => false,
                };
                let saved = before as i64 - after as i64;
                total += saved;
                let first = findings.len();
                let n = fs.len();
                findings.append(&mut fs);
                decisions.push(Decision {
                    rev: rec.rev,
                    line: rec.line,
                    kind,
                    what,
                    before,
                    after,
                    recorded_before: rb,
                    recorded_after: ra,
                    saved,
                    total,
                    findings: (first..first + n).collect(),
                    trigger_judged,
                });
                continue;
            }
            _ => {
                r.step();
            }
        }
        findings.append(&mut fs);
    }
    // sort findings by rev, keeping decision indices valid
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
    AuditReport { decisions, findings: sorted, total_saved: total }
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
    settings: Resolved,
    before_p: &'a Projection,
    after_p: &'a Projection,
    before_raw: u64,
    before: u64,
    after: u64,
    cal: &'a Calibration,
}

impl Judge<'_> {
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

    fn elide(
        &self,
        e: &crate::journal::ElideRec,
        named: &HashSet<String>,
        invited: bool,
        last_edit: Option<usize>,
        fs: &mut Vec<Finding>,
    ) {
        let rec = self.rec;
        self.touches(&e.calls, named, true, fs);
        let budget = e.budget.unwrap_or(self.settings.budget);
        let target = e.target.unwrap_or(self.settings.target);
        let keep = e.keep_results.unwrap_or(self.settings.keep_results) as usize;
        let auto = e.by.as_deref().is_none_or(|b| b == "auto");
        // trigger
        let before = e.estimate_before.unwrap_or(self.before as f64);
        if auto && before <= budget as f64 {
            fs.push(find(
                "elide-trigger",
                rec,
                format!("auto-elision at an estimate of {before:.0} tokens, not above the budget of {budget}"),
            ));
        }
        for (what, recorded, ours) in
            [("estimate_before", e.estimate_before, self.before), ("estimate_after", e.estimate_after, self.after)]
        {
            if let Some(x) = recorded {
                if ours > 0 && (x - ours as f64).abs() > 0.10 * ours as f64 {
                    fs.push(find(
                        "estimate-drift",
                        rec,
                        format!(
                            "{what} {x:.0} differs from ctxj's calibrated {ours} by {:+.0}%",
                            (x / ours as f64 - 1.0) * 100.0
                        ),
                    ));
                }
            }
        }
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
        // restraint: stop as soon as at or below target (scaled to the harness's figure when recorded)
        let factor = match e.estimate_before {
            Some(x) if self.before_raw > 0 => x / self.before_raw as f64,
            _ => self.cal.multiplier(),
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
        // outcome
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

    fn compact(&self, c: &crate::journal::CompactRec, pause: &mut Option<Pause>, manual: bool, fs: &mut Vec<Finding>) {
        let rec = self.rec;
        self.drift([("tokens_before", c.tokens_before, self.before), ("tokens_after", c.tokens_after, self.after)], fs);
        // trigger
        if c.trigger.as_deref() == Some("auto") {
            let before = c.tokens_before.unwrap_or(self.before as f64);
            let mut threshold = self.settings.budget;
            if let Some(w) = self.settings.window {
                threshold = threshold.min(w / 2);
            }
            if before <= threshold as f64 {
                fs.push(find("compact-trigger", rec, format!("auto compaction at {before:.0} tokens, not past the threshold of {threshold} (budget, or 50% of the window)")));
            }
        }
        // cut
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
        if c.kept.is_none() {
            if let Some(first) = self.before_p.conv.iter().find(|b| is_kept(&b.block)) {
                if !matches!(first.block, Block::User { .. } | Block::Assistant { .. } | Block::Notice { .. }) {
                    let id = first.block.id().unwrap_or_default();
                    fs.push(
                        find(
                            "compact-boundary",
                            rec,
                            format!(
                                "the first kept block is the {} {id}: not a turn boundary",
                                first.block.type_name()
                            ),
                        )
                        .with_block(id),
                    );
                }
            }
        }
        let n = self.after_p.conv.len();
        if n < 3 && self.before_p.conv.len() >= 3 {
            fs.push(find("compact-tail", rec, format!("only {n} block(s) kept; at least 3 expected")));
        }
        // thrash: the pause rule
        if !manual {
            if let Some(p) = *pause {
                if (self.before as f64) <= p.after as f64 * 1.10 {
                    fs.push(find(
                        "thrash",
                        rec,
                        format!("compaction at ~{} tokens while paused: the previous pass left ~{} and the request has not grown 10% since", self.before, p.after),
                    ));
                }
            }
            *pause = ((self.after as f64) > 0.8 * self.before as f64).then_some(Pause { after: self.after });
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

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

    #[test]
    fn resolve_applies_the_auto_rules() {
        let r = resolve(&CtxSettings { ctx_window: Some(200_000), ..Default::default() });
        assert_eq!((r.budget, r.target, r.reserve, r.keep_results), (100_000, 70_000, 8192, 5));
        let r = resolve(&CtxSettings { ctx_window: Some(1_000_000), context_budget: Some(0), ..Default::default() });
        assert_eq!((r.budget, r.target), (200_000, 140_000));
        // a target at or above the budget is replaced by the auto rule
        let r = resolve(&CtxSettings { context_budget: Some(500), context_target: Some(500), ..Default::default() });
        assert_eq!((r.budget, r.target), (500, 350));
    }

    #[test]
    fn calibration_weights_recent_turns_with_half_life_four() {
        let mut c = Calibration::default();
        assert_eq!(c.multiplier(), 1.0);
        c.push(Some(200), 100); // turn 1: ratio 2
        for _ in 0..3 {
            c.push(None, 50); // turns without usage only age the weights
        }
        c.push(Some(100), 100); // turn 5: ratio 1
                                // before turn 6: w5 = 1, w1 = 0.5^((6-1-1)/4) = 0.5
        let want = (1.0 * 100.0 + 0.5 * 200.0) / (1.0 * 100.0 + 0.5 * 100.0);
        assert!((c.multiplier() - want).abs() < 1e-12);
        assert_eq!(c.calibrated(3), (3.0 * want + 0.5f64).floor() as u64);
    }
}
