//! Omissions: the decision that should have happened at a request and did not (`elide-missing`,
//! `elide-stopped-early`, `invite-missing`, `invite-needless`,
//! `budget-over-window`, `compact-missing`), and the decision-level checks that need the profile
//! (`elide-grew`).
//!
//! The budget rules are judged only when the journal declares `ctx` settings: a harness that
//! promised no budget (an imported Codex or pi transcript) omitted nothing.

use std::collections::HashSet;

use crate::check::elision::{self, Candidate, Open};
use crate::journal::{AssistantRec, Body, Journal, Record};
use crate::projection::Projection;
use crate::tokens::budget::InForce;

use super::auditor::Auditor;
use super::count::Memo;
use super::find;
use crate::check::Finding;

/// The elision candidates of `p` that would free something ([`crate::check::elision`], with
/// attachments), oldest first.
pub(super) fn candidates(
    journal: &Journal,
    memo: &mut Memo<'_>,
    named: &HashSet<String>,
    p: &Projection,
    keep: usize,
) -> Vec<Candidate> {
    let mut cands = open_blocks(journal, memo, named, p, keep);
    cands.retain(|c| c.frees > 0);
    cands
}

/// Every block of `p` the spec's auto-elision may still collapse (journal-v1 §6: results outside
/// the `keep` most recent and attachments, not named yet), whether or not its marker is smaller.
fn open_blocks(
    journal: &Journal,
    memo: &mut Memo<'_>,
    named: &HashSet<String>,
    p: &Projection,
    keep: usize,
) -> Vec<Candidate> {
    let est = memo.est;
    let open = Open { keep, attachments: true, named };
    let blocks = p.conv.iter().map(|pb| &pb.block);
    elision::candidates(journal, blocks, open, &mut |b| memo.block(b), &mut |m| est.count(m))
}

impl Auditor<'_> {
    /// Whether the journal declares budget settings (session or model `ctx`).
    pub(super) fn declares_budget(&self) -> bool {
        self.journal.records.iter().any(|r| match &r.body {
            Body::Session(s) => s.ctx.is_some(),
            Body::Model(m) => m.ctx.is_some(),
            _ => false,
        })
    }

    /// Eliding `cands` oldest first until the calibrated estimate of `raw` reaches `target`:
    /// how many, and the calibrated tokens that frees.
    fn would_free(&self, raw: u64, cands: &[Candidate], target: u64) -> (usize, u64) {
        let mut freed = 0u64;
        let mut n = 0;
        for c in cands {
            if self.calibrated(raw.saturating_sub(freed)) <= target {
                break;
            }
            freed = freed.saturating_add(c.frees);
            n += 1;
        }
        (n, self.calibrated(raw).saturating_sub(self.calibrated(raw.saturating_sub(freed))))
    }

    /// At a request: elision missing, invitation missing.
    pub(super) fn turn_omissions(
        &mut self,
        rec: &Record,
        a: &AssistantRec,
        raw: u64,
        s: InForce,
        fs: &mut Vec<Finding>,
    ) {
        let elided = self.pending.elided.take();
        if !self.budget_rules {
            return;
        }
        let est = self.calibrated(raw);
        let target = elided.unwrap_or(s.target);
        let missing = std::mem::take(&mut self.pending.missing);
        if est <= target {
            return;
        }
        let keep = usize::try_from(s.keep_results).unwrap_or(usize::MAX);
        let cands = match est > s.budget {
            true => candidates(self.journal, &mut self.memo, &self.memory.named, self.r.projection(), keep),
            false => Vec::new(),
        };
        if est > s.budget && elided.is_none() && !cands.is_empty() {
            self.pending.missing = true;
            if missing {
                return;
            }
            let (n, saved) = self.would_free(raw, &cands, s.target);
            let times = est as f64 / s.budget.max(1) as f64;
            fs.push(find("elide-missing", rec, format!(
                "request of ~{est} tokens is {times:.2}× the budget of {} and no elision preceded it: eliding {n} of {} candidate(s) oldest first (from {}) would have saved ~{saved} tokens (target {})",
                s.budget, cands.len(), cands[0].id, s.target
            )).with_block(&a.id));
        }
        let exhausted = elided.is_some() || (est > s.budget && cands.is_empty());
        if exhausted && !self.memory.invited {
            let why = if elided.is_some() { "after the elision" } else { "with nothing left to elide" };
            fs.push(find("invite-missing", rec, format!(
                "request of ~{est} tokens is still above the target of {target} {why}, and no manage_context notice invited the model"
            )).with_block(&a.id));
        }
    }

    /// At a request: the profile's automatic compaction point passed ([`Profile::compaction_point`]:
    /// Claude Code's window less its buffer, seed 003's tier 3, seed 002's threshold, an imported
    /// agent's own rule, [`crate::check::agents`]) and no
    /// compaction before it, while the harness was neither paused after an ineffective pass nor
    /// stopped (seed 002). Reported once per stretch above the point.
    ///
    /// [`Profile::compaction_point`]: crate::check::Profile::compaction_point
    pub(super) fn compact_missing(
        &mut self,
        rec: &Record,
        a: &AssistantRec,
        raw: u64,
        provider: u64,
        window: Option<u64>,
        fs: &mut Vec<Finding>,
    ) {
        let compacted = std::mem::take(&mut self.pending.compacted);
        let usage =
            a.usage.as_ref().and_then(|u| Some(u.prompt_tokens?.saturating_add(u.completion_tokens.unwrap_or(0))));
        let last = std::mem::replace(&mut self.pending.last_usage, usage);
        if let Some(crate::strategy::Kind::CompactAt { n, unit, mode, .. }) = self.profile.strategy {
            return self.compact_at_missing(rec, a, raw, (n, unit, mode), compacted, fs);
        }
        let Some(point) = self.profile.compaction_point(window) else { return };
        // Claude Code and the imported agents decide on the usage their last response reported
        // (plus, for some, a rough estimate of what was added since, left out here so the rule
        // never fires on estimation noise)
        let size = match self.profile.decides_on_last {
            true => match (last, a.usage.is_some()) {
                (Some(n), _) => n,
                // no usage recorded at all: this request's calibrated estimate
                (None, false) => provider,
                // the first reported turn: nothing reported before it to decide on
                (None, true) => return,
            },
            false => provider,
        };
        if compacted || size <= point {
            self.pending.compact_missing = false;
            return;
        }
        let mut pause = self.memory.pause;
        let paused = pause.paused_at().is_some();
        if paused && (self.profile.stop_after_ineffective || !pause.allows(self.calibrated(raw))) {
            return;
        }
        if std::mem::replace(&mut self.pending.compact_missing, true) {
            return;
        }
        // what a compaction would have freed: the conversation but the tail the profile keeps
        let keep = self.profile.min_tail.unwrap_or(0).min(self.tally.conv.len());
        let old: u64 = self.tally.conv[..self.tally.conv.len() - keep].iter().sum();
        let freed = self.calibrated(raw).saturating_sub(self.calibrated(raw.saturating_sub(old)));
        let w = window.unwrap_or_default();
        let scope = match keep {
            0 => "the whole conversation".to_string(),
            k => format!("all but the last {k} block(s)"),
        };
        let what = if size == provider { "request of" } else { "the previous turn reported" };
        fs.push(find("compact-missing", rec, format!(
            "{what} {size} tokens ({:.1}% of the {w} window), past {}'s auto-compaction point of {point}, and no compaction preceded this request: compacting {scope} would have freed up to ~{freed} tokens before the summary",
            size as f64 * 100.0 / w.max(1) as f64, self.profile.harness
        )).with_block(&a.id));
    }

    /// `pi-agent` under `compact-at-N`: the strategy's own rule (strategies.md §2) — before a turn
    /// whose conversation size (characters, or the raw estimate for `-Nt`) exceeds N, a pass
    /// compacts when a cut qualifies; `once` never again after a compaction, `repeat`/`chain`
    /// whenever the threshold is crossed again, unless paused after an ineffective pass.
    fn compact_at_missing(
        &mut self,
        rec: &Record,
        a: &AssistantRec,
        raw: u64,
        (n, unit, mode): (u64, crate::strategy::compact::Unit, crate::strategy::compact::Mode),
        compacted: bool,
        fs: &mut Vec<Finding>,
    ) {
        use crate::strategy::compact::{due, Mode, Unit};
        if compacted || (mode == Mode::Once && self.pending.compactions > 0) {
            self.pending.compact_missing = false;
            return;
        }
        let pinned = self.journal.records.iter().find_map(|r| match &r.body {
            Body::User(u) => Some(u.id.as_str()),
            _ => None,
        });
        let memo = &mut self.memo;
        let mut size = |b: &crate::projection::Block| match unit {
            Unit::Chars => b.chars() as u64,
            Unit::Tokens => memo.block(b),
        };
        let d = due(self.r.projection(), pinned, n, &mut size);
        if d.size <= n || !d.cuts {
            self.pending.compact_missing = false;
            return;
        }
        let mut pause = self.memory.pause;
        if pause.paused_at().is_some() && !pause.allows(self.calibrated(raw)) {
            return;
        }
        if std::mem::replace(&mut self.pending.compact_missing, true) {
            return;
        }
        let what = match unit {
            Unit::Chars => "characters",
            Unit::Tokens => "tokens (raw estimate)",
        };
        fs.push(find("compact-missing", rec, format!(
            "conversation of {} {what}, past compact-at-{n}'s threshold of {n} ({}), and no compaction preceded this request: the strategy's pass would have summarized {} {what} (tail budget {})",
            d.size, self.profile.harness, d.frees, n / 4
        )).with_block(&a.id));
    }

    /// At a `manage_context` notice: needless when the estimate is already at or below target.
    pub(super) fn invite_needless(&mut self, rec: &Record, s: InForce, fs: &mut Vec<Finding>) {
        if !self.budget_rules {
            return;
        }
        let raw = self.tally.request(&mut self.memo, self.r.projection());
        let est = self.calibrated(raw);
        if est <= s.target {
            fs.push(find(
                "invite-needless",
                rec,
                format!("manage_context notice at ~{est} tokens, already at or below the target of {}", s.target),
            ));
        }
    }

    /// At a `session` or `model` record (after it applied): a budget the window cannot hold.
    /// Judged only when the profile has a budget (journal-v1's rules and a declared `ctx`).
    pub(super) fn budget_over_window(&mut self, rec: &Record, fs: &mut Vec<Finding>) {
        if !self.budget_rules {
            return;
        }
        let s = crate::tokens::budget::in_force(&self.r.ctx);
        if self.pending.judged == Some(s) {
            return;
        }
        self.pending.judged = Some(s);
        // the window the settings assume (recorded, else journal-v1 §6's default, as `ctxj budget`)
        if s.over_window() {
            let (w, room) = (s.assumed_window(), s.room());
            let assumed = if s.window.is_none() { " (not recorded: journal-v1 §6's default)" } else { "" };
            fs.push(find("budget-over-window", rec, format!(
                "context_budget {} is above ctx_window − context_reserve = {w}{assumed} − {} = {room}: the window overflows before elision starts",
                s.budget, s.reserve
            )));
        }
    }

    /// After an elide record: it grew the request, or it stopped above the target while
    /// candidates remained.
    ///
    /// A grown request is not flagged when journal-v1 §6 forced it: collapsing oldest first and
    /// stopping only at the target, a harness that follows the rule grows the request only when
    /// the oldest blocks left were smaller than their markers and it took every block left. Then
    /// skipping them would be `elide-order`; only an elision that grew the request and left
    /// blocks open is the harness's own choice.
    pub(super) fn after_elide(&mut self, rec: &Record, before: u64, after_raw: u64, s: InForce, fs: &mut Vec<Finding>) {
        let Body::Elide(e) = &rec.body else { return };
        let target = e.target.unwrap_or(s.target);
        self.pending.elided = Some(target);
        let after = self.calibrated(after_raw);
        let keep = usize::try_from(e.keep_results.map_or(s.keep_results, |k| k)).unwrap_or(usize::MAX);
        let mut forced =
            || open_blocks(self.journal, &mut self.memo, &self.memory.named, self.r.projection(), keep).is_empty();
        if after > before && !forced() {
            fs.push(find(
                "elide-grew",
                rec,
                format!("the elision grew the request from ~{before} to ~{after} tokens (+{})", after - before),
            ));
        }
        let after_recorded = e.estimate_after.map_or(after, |x| x.max(0.0) as u64);
        if !self.budget_rules || after_recorded <= target {
            return;
        }
        let cands = candidates(self.journal, &mut self.memo, &self.memory.named, self.r.projection(), keep);
        if !cands.is_empty() {
            let (n, saved) = self.would_free(after_raw, &cands, target);
            fs.push(find("elide-stopped-early", rec, format!(
                "the elision stopped at ~{after_recorded} tokens, above the target of {target}, while {} candidate(s) remained (from {}): {n} more would have saved ~{saved} tokens",
                cands.len(), cands[0].id
            )));
        }
    }
}
