//! The judgement of one decision record (`elide`, `clear`, `mirror`, `compact`) by the rules of
//! its profile: trigger, restraint, outcome and the `DECIDED:` habit.

use std::collections::HashSet;

use crate::journal::{Body, Journal, Record};
use crate::projection::block::canonical_value;
use crate::projection::{Block, Projection};
use crate::tokens::budget::InForce;
use crate::tokens::Estimator;

use crate::strategy::compact::Pause;

use crate::check::profile::{Cut, Harness, Profile};
use crate::check::Finding;

use super::find;

/// Everything a decision is judged with.
pub(super) struct Judge<'a> {
    pub(super) journal: &'a Journal,
    pub(super) rec: &'a Record,
    pub(super) index: usize,
    pub(super) est: &'a dyn Estimator,
    pub(super) settings: InForce,
    /// The window in force ([`Auditor::window`]).
    pub(super) window: Option<u64>,
    pub(super) before_p: &'a Projection,
    pub(super) after_p: &'a Projection,
    pub(super) before_raw: u64,
    pub(super) before: u64,
    pub(super) after: u64,
    /// The calibration multiplier in force (before the next turn).
    pub(super) multiplier: f64,
    pub(super) profile: Profile,
    /// The journal declares its settings (`ctx` on a session or model record): an `elide`
    /// record's own `budget` cannot lower them (issue 30).
    pub(super) declared: bool,
    /// Turns (assistant records) before this decision.
    pub(super) turn: usize,
}

impl Judge<'_> {
    /// Judges the decision by its kind: (kind, what it did, the harness's figures before/after).
    pub(super) fn judge(
        &self,
        m: &mut Memory,
        fs: &mut Vec<Finding>,
    ) -> (&'static str, String, Option<f64>, Option<f64>) {
        match &self.rec.body {
            Body::Elide(e) => {
                // under `command-code` an automatic elision is seed 003's tool-call trim
                match self.profile.harness {
                    Harness::CommandCode => self.trim(e, m, fs),
                    _ => self.elide(e, m, fs),
                }
                m.named.extend(e.calls.iter().cloned());
                let what = format!("{}: {}", e.by.as_deref().unwrap_or("auto"), list(&e.calls));
                ("elide", what, e.estimate_before, e.estimate_after)
            }
            Body::Clear(c) => ("clear", self.clear(c, m, fs), None, None),
            Body::Mirror(r) => ("mirror", self.mirror(r, m, fs), None, None),
            Body::Compact(c) => {
                let manual = c.trigger.as_deref() == Some("manual");
                self.compact(c, &mut m.pause, manual, fs);
                self.retry_after_failure(c, &mut m.failed_summary, manual, fs);
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

    pub(super) fn clear(&self, c: &crate::journal::ClearRec, m: &mut Memory, fs: &mut Vec<Finding>) -> String {
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

    pub(super) fn mirror(&self, r: &crate::journal::MirrorRec, m: &mut Memory, fs: &mut Vec<Finding>) -> String {
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

    /// estimate-drift: each recorded figure against ctxj's calibrated one. The figure after the
    /// decision (the second) is not drift when the provider's own count of that very request
    /// (the next record's `usage.prompt_tokens`, [`Self::after_billed`]) is within 10% of it:
    /// the harness estimates provider tokens (journal-v1 §6), and there ctxj's recomputation is
    /// the one that drifted.
    pub(super) fn drift(&self, figures: [(&str, Option<f64>, u64); 2], fs: &mut Vec<Finding>) {
        let billed = self.after_billed();
        for (i, (what, recorded, ours)) in figures.into_iter().enumerate() {
            if let Some(x) = recorded {
                let near = |t: u64| t > 0 && (x - t as f64).abs() <= 0.10 * t as f64;
                if i == 1 && billed.is_some_and(near) {
                    continue;
                }
                if ours > 0 && !near(ours) {
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

    /// The provider's count of the request right after this decision: the `prompt_tokens` of an
    /// `assistant` record that directly follows it (nothing in between changed the projection).
    fn after_billed(&self) -> Option<u64> {
        match &self.journal.records.get(self.index + 1)?.body {
            Body::Assistant(a) => a.usage.as_ref()?.prompt_tokens,
            _ => None,
        }
    }

    /// decision-twice and text-touched for the ids an elide (`elide` = true) or clear names.
    pub(super) fn touches(&self, ids: &[String], named: &HashSet<String>, elide: bool, fs: &mut Vec<Finding>) {
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

    pub(super) fn elide(&self, e: &crate::journal::ElideRec, m: &Memory, fs: &mut Vec<Finding>) {
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
        // trigger: journal-v1's budget; a `pi-agent` age truncation is triggered by age, not size
        let by_age = matches!(self.profile.strategy, Some(crate::strategy::Kind::AgeTruncate { .. }));
        let before = e.estimate_before.unwrap_or(self.before as f64);
        if auto && !by_age && before <= budget as f64 {
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
        // (age-truncate-N-keep-K cuts only the results longer than N: a short old one stays)
        if let Some(last) = candidates.iter().rposition(|c| named_now.contains(c)).filter(|_| !by_age) {
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
    pub(super) fn elide_stop(
        &self,
        e: &crate::journal::ElideRec,
        target: u64,
        named_now: &HashSet<&str>,
        fs: &mut Vec<Finding>,
    ) {
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
    pub(super) fn elide_outcome(
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

    pub(super) fn compact(
        &self,
        c: &crate::journal::CompactRec,
        pause: &mut Pause,
        manual: bool,
        fs: &mut Vec<Finding>,
    ) {
        let rec = self.rec;
        let prof = self.profile;
        self.drift([("tokens_before", c.tokens_before, self.before), ("tokens_after", c.tokens_after, self.after)], fs);
        // trigger
        if let (Some("auto"), Some(crate::strategy::Kind::CompactAt { n, unit, .. })) =
            (c.trigger.as_deref(), prof.strategy)
        {
            // `pi-agent`: the strategy's own threshold (strategies.md §2 "compact-at-N"): the
            // conversation size in characters (every block but the system block), or the raw
            // token estimate for `compact-at-Nt` — the measure `compact-missing` uses too
            use crate::strategy::compact::{due, Unit};
            let est = self.est;
            let (size, what) = match unit {
                Unit::Chars => (due(self.before_p, None, n, &mut |b| b.chars() as u64).size, "characters"),
                Unit::Tokens => (due(self.before_p, None, n, &mut |b| est.block(b)).size, "tokens"),
            };
            if size <= n {
                fs.push(find(
                    "compact-trigger",
                    rec,
                    format!(
                        "auto compaction at a conversation of {size} {what}, not past compact-at-{n}'s threshold ({})",
                        prof.harness
                    ),
                ));
            }
        } else if c.trigger.as_deref() == Some("auto") {
            let before = c.tokens_before.unwrap_or(self.before as f64);
            let threshold = prof.compact_threshold(&self.settings, self.window);
            if before <= threshold as f64 {
                let rule = match prof.compact_pct {
                    _ if prof.agent.is_some() => format!("{}'s own auto-compaction rule", prof.harness),
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

    /// Seed 002's pause after a summarizer error ("so that Veles does not spend model calls on
    /// repeated failed attempts every turn"): the seed gives the pause no length, so only its
    /// least reading is judged — an automatic compaction before the next turn has run, right after
    /// a pass whose summarizer failed (`fallback`), is a retry the pause forbids (`thrash`).
    /// Command Code retries on the next turn by design (seed 003), so only `veles` is judged.
    pub(super) fn retry_after_failure(
        &self,
        c: &crate::journal::CompactRec,
        failed: &mut Option<usize>,
        manual: bool,
        fs: &mut Vec<Finding>,
    ) {
        if self.profile.harness == Harness::Veles && !manual && failed.is_some_and(|t| self.turn <= t + 1) {
            fs.push(find(
                "thrash",
                self.rec,
                "automatic compaction on the turn right after a failed summary: veles pauses after a summarizer error instead of retrying every turn (seed 002)",
            ));
        }
        *failed = (c.fallback == Some(true)).then_some(self.turn);
    }

    /// The failure rules of seeds 002 and 003: a Veles fallback summary is appended to the
    /// earlier one; a Command Code brief replaces the old one, never chains.
    pub(super) fn compact_failure(&self, c: &crate::journal::CompactRec, fs: &mut Vec<Finding>) {
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
    pub(super) fn compact_cut(&self, c: &crate::journal::CompactRec, fs: &mut Vec<Finding>) {
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

/// What the habit and restraint rules remember from one decision to the next.
#[derive(Default)]
pub(super) struct Memory {
    /// Ids named by earlier elisions and clears.
    pub(super) named: HashSet<String>,
    /// A `DECIDED:` note since the last clear or commit.
    pub(super) decided_since: bool,
    /// A `manage_context` notice since the last accepted commit.
    pub(super) invited: bool,
    /// A `mirror_applied` notice since the last mirror record.
    pub(super) confirmed: bool,
    /// The last mirror: accepted, and its canonical draft.
    pub(super) last_mirror: Option<(bool, Vec<u8>)>,
    /// The pause rule of `strategies.md` §2, the replay's own ([`Pause`]).
    pub(super) pause: Pause,
    /// Record index of the last mirror or clear: the model's own cleanup after an invitation.
    pub(super) last_edit: Option<usize>,
    /// The turn count at the last compaction whose summarizer failed (`fallback`).
    pub(super) failed_summary: Option<usize>,
}

/// A compaction from `before` to `after` under `pause`: the size the earlier ineffective pass
/// left when this one ran while paused (`thrash`). The pause then follows this pass.
pub(super) fn paused_pass(pause: &mut Pause, before: u64, after: u64) -> Option<u64> {
    let paused = (!pause.allows(before)).then(|| pause.paused_at().unwrap_or_default());
    *pause = Pause::default();
    pause.record(before, after);
    paused
}

pub(super) fn clear_request_json(r: &crate::journal::ClearRequest) -> serde_json::Value {
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

pub(super) fn list(ids: &[String]) -> String {
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
