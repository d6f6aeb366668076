//! The copy of its parent's rollout a forked Codex thread starts with.
//!
//! A forked thread (its `session_meta` names `forked_from_id`: a subagent spawned with the
//! parent's context, a `/fork`) starts with a copy of the parent's rollout, which Codex persists
//! in one write when the thread starts (`InitialHistory::Forked` → `persist_rollout_items`): the
//! parent's `session_meta`, then its items and `token_count`s, all stamped with that moment. Those
//! `token_count`s bill the parent's calls, which the parent's own rollout already holds: `usage`
//! and the importer's pairing skip them (their totals stay the running baseline), as ccusage
//! 20.0.24 does for subagent threads; the items stay (they are the thread's context).

/// The copy of the parent's rollout a forked thread starts with (see the module doc): the
/// `token_count`s written in the same second as the copied `session_meta` (the second one of a
/// rollout whose first names `forked_from_id`), up to the first written later.
#[derive(Debug, Clone, Default, PartialEq, serde::Serialize, serde::Deserialize)]
pub struct ForkCopy {
    metas: u8,
    forked: bool,
    /// The second (`YYYY-MM-DDTHH:MM:SS`) of the copy while it lasts.
    copying: Option<String>,
}

impl ForkCopy {
    /// A `session_meta` line at `ts`; `forked`: it names `forked_from_id`.
    pub fn session_meta(&mut self, ts: &str, forked: bool) {
        self.metas = self.metas.saturating_add(1);
        match self.metas {
            1 => self.forked = forked,
            2 if self.forked => self.copying = ts.get(..19).map(str::to_string),
            _ => {}
        }
    }

    /// Whether the `token_count` at `ts` belongs to the copy (the copy ends at the first that
    /// does not).
    pub fn copied(&mut self, ts: &str) -> bool {
        let same = self.copying.as_deref().is_some_and(|c| ts.get(..19) == Some(c));
        if !same {
            self.copying = None;
        }
        same
    }
}
