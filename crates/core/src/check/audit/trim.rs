//! Seed 003's tool-call trims (tiers 1 and 2 of Command Code's fast `/compact-mode`): the trim a
//! `command-code` journal records as an automatic `elide` judged (`trim-trigger`, `trim-keep`),
//! and the request where a tier was due and no trim came (`compact-missing`).
//!
//! Journal-v1 has no settings record, so the mode is read from the `harness` field
//! (`command-code 1.2 (compact-mode: fast)`, [`crate::check::Profile::compact_mode`]); where it is
//! not recorded nothing here is assumed: each trim, and the first request where fast mode would
//! have trimmed, gets a `trim-unjudged` note instead (docs/rules.md, "command-code").

use std::collections::HashSet;

use crate::check::profile::{pct, CompactMode, Harness, TRIM_TIERS};
use crate::check::Finding;
use crate::journal::{AssistantRec, ElideRec, Record};
use crate::projection::{Block, Projection};

use super::auditor::Auditor;
use super::find;
use super::judge::{Judge, Memory};

/// The tool calls still open in `p`, oldest first: its result blocks not named by an earlier
/// trim (`elide`) or clear.
fn open_calls<'p>(p: &'p Projection, named: &HashSet<String>) -> Vec<(&'p str, &'p Block)> {
    p.conv
        .iter()
        .filter_map(|b| match &b.block {
            Block::Result { call, .. } if !named.contains(&**call) => Some((&**call, &b.block)),
            _ => None,
        })
        .collect()
}

/// The highest fast-mode tier `size` has passed in a window `w` whose keep `open` calls exceed:
/// its number (1, 2), percentage and how many calls it keeps.
fn due_tier(tiers: &[(u64, usize)], size: u64, w: u64, open: usize) -> Option<(usize, u64, usize)> {
    tiers
        .iter()
        .enumerate()
        .rev()
        .find(|(_, (p, keep))| size >= pct(w, *p) && open > *keep)
        .map(|(i, (p, k))| (i + 1, *p, *k))
}

impl Judge<'_> {
    /// A `command-code` automatic `elide`: a tier 1/2 trim. Runs only in fast mode, past tier 1
    /// and with more calls open than the tier keeps; keeps the tier's last calls, drops the
    /// oldest first (seed 003).
    pub(super) fn trim(&self, e: &ElideRec, m: &Memory, fs: &mut Vec<Finding>) {
        self.touches(&e.calls, &m.named, true, fs);
        if e.by.as_deref().is_some_and(|b| b != "auto") {
            return;
        }
        let (rec, prof) = (self.rec, self.profile);
        let unjudged = |why: &str| find("trim-unjudged", rec, format!("tool-call trim unjudged: {why}"));
        let (mode, w) = match (prof.compact_mode, self.window) {
            (None, _) => {
                fs.push(unjudged("mode not recorded (seed 003 trims only in fast /compact-mode, and the harness field names none: `(compact-mode: fast)`)"));
                return;
            }
            (Some(_), None) => {
                fs.push(unjudged("no window recorded or known for the model, so its tier is unknown"));
                return;
            }
            (Some(mode), Some(w)) => (mode, w),
        };
        if mode == CompactMode::Default {
            fs.push(find(
                "trim-trigger",
                rec,
                "tool-call trim in default /compact-mode, which trims nothing: only tier 3 summarizes, at 90% of the window (seed 003)",
            ));
            return;
        }
        self.drift(
            [("estimate_before", e.estimate_before, self.before), ("estimate_after", e.estimate_after, self.after)],
            fs,
        );
        let before = e.estimate_before.map_or(self.before, |x| x.max(0.0) as u64);
        let open = open_calls(self.before_p, &m.named);
        let share = before as f64 * 100.0 / w.max(1) as f64;
        let Some((tier, p, keep)) = due_tier(prof.trim_tiers(), before, w, open.len()) else {
            let why = match prof.trim_tiers().iter().rev().find(|(p, _)| before >= pct(w, *p)) {
                Some((p, keep)) => format!(
                    "only {} tool call(s) open: past {p}% the tier trims only beyond the last {keep}",
                    open.len()
                ),
                None => format!("below tier 1's {}% of the window", TRIM_TIERS[0].0),
            };
            fs.push(find(
                "trim-trigger",
                rec,
                format!(
                    "tool-call trim at ~{before} tokens ({share:.1}% of the {w} window), {why} (seed 003, fast mode)"
                ),
            ));
            return;
        };
        let protected: HashSet<&str> = open[open.len().saturating_sub(keep)..].iter().map(|(id, _)| *id).collect();
        let now: HashSet<&str> = e.calls.iter().map(String::as_str).collect();
        for id in e.calls.iter().filter(|id| protected.contains(id.as_str())) {
            fs.push(
                find(
                    "trim-keep",
                    rec,
                    format!("{id} is one of the last {keep} tool calls that tier {tier} ({p}%) keeps (seed 003)"),
                )
                .with_block(id),
            );
        }
        if let Some(last) = open.iter().rposition(|(id, _)| now.contains(id)) {
            if let Some((skipped, _)) = open[..last].iter().find(|(id, _)| !now.contains(id)) {
                fs.push(
                    find(
                        "trim-keep",
                        rec,
                        format!(
                            "{skipped} was kept while the newer {} was trimmed: seed 003 drops the oldest pairs first",
                            open[last].0
                        ),
                    )
                    .with_block(*skipped),
                );
            }
        }
    }
}

impl Auditor<'_> {
    /// At a request (`command-code`): fast mode's tier 1 or 2 was due — the request at or past
    /// its share of the window with more tool calls open than it keeps — and no trim brought the
    /// calls down to it (`compact-missing`, once per stretch). Without a recorded mode, the first
    /// such request is noted `trim-unjudged` instead.
    pub(super) fn trim_missing(
        &mut self,
        rec: &Record,
        a: &AssistantRec,
        provider: u64,
        window: Option<u64>,
        fs: &mut Vec<Finding>,
    ) {
        let (Harness::CommandCode, Some(w)) = (self.profile.harness, window) else { return };
        let unrecorded = self.profile.mode_unrecorded();
        let tiers = if unrecorded { &TRIM_TIERS[..] } else { self.profile.trim_tiers() };
        let open = open_calls(self.r.projection(), &self.memory.named);
        let Some((tier, p, keep)) = due_tier(tiers, provider, w, open.len()) else {
            self.pending.trim_missing = false;
            return;
        };
        let share = provider as f64 * 100.0 / w.max(1) as f64;
        if unrecorded {
            if !std::mem::replace(&mut self.pending.trim_unjudged, true) {
                fs.push(find("trim-unjudged", rec, format!(
                    "request of {provider} tokens ({share:.1}% of the {w} window) with {} tool calls open, where fast /compact-mode's tier {tier} ({p}%) would trim to the last {keep}: unjudged, mode not recorded",
                    open.len()
                )).with_block(&a.id));
            }
            return;
        }
        if std::mem::replace(&mut self.pending.trim_missing, true) {
            return;
        }
        let memo = &mut self.memo;
        let old: u64 = open[..open.len() - keep].iter().map(|(_, b)| memo.block(b)).sum();
        let raw = self.tally.request(&mut self.memo, self.r.projection());
        let freed = self.calibrated(raw).saturating_sub(self.calibrated(raw.saturating_sub(old)));
        fs.push(find("compact-missing", rec, format!(
            "request of {provider} tokens ({share:.1}% of the {w} window) with {} tool calls open, past fast /compact-mode's tier {tier} ({p}%), and no trim to the last {keep} preceded it: dropping the {} oldest would have freed up to ~{freed} tokens (seed 003)",
            open.len(), open.len() - keep
        )).with_block(&a.id));
    }
}
