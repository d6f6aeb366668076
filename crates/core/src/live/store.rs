//! Where live state is kept between runs: `$CTXJ_CACHE_DIR/live/`, else `<user cache dir>/ctxj/live/`
//! — never in a session's folder. Every write goes through the one guarded writer
//! (`journal::session::write_guarded`: a new file renamed over the old, so a run cancelled
//! mid-write leaves the previous state whole).

use std::path::{Path, PathBuf};

use super::compact::Observed;
use super::session::LiveSession;
use crate::import::Format;
use crate::journal::session::write_guarded;

/// Observations kept in the user's compaction record.
const KEEP_OBSERVED: usize = 500;

/// The live state folder (created when missing).
pub fn dir() -> Option<PathBuf> {
    let base = std::env::var_os("CTXJ_CACHE_DIR")
        .filter(|v| !v.is_empty())
        .map(PathBuf::from)
        .or_else(|| dirs::cache_dir().map(|d| d.join("ctxj")))?;
    let d = base.join("live");
    std::fs::create_dir_all(&d).ok()?;
    Some(d)
}

/// The state file of the session followed at `transcript` (named by a hash of its path).
pub fn state_file(dir: &Path, transcript: &Path) -> PathBuf {
    let key = crate::projection::hash::content_key(0x6c69_7665, transcript.as_os_str().as_encoded_bytes());
    dir.join(format!("{:032x}.json", key))
}

/// The session at `transcript` (of `agent`, detected when `None`), resumed from its state in
/// `dir` when there is one that follows it, else opened from zero.
pub fn load(dir: &Path, transcript: &Path, agent: Option<Format>) -> Result<LiveSession, super::LiveError> {
    let saved = crate::journal::input::read_regular(&state_file(dir, transcript)).ok();
    match saved.and_then(|b| LiveSession::resume(&b, transcript)).filter(|s| agent.is_none_or(|a| a == s.agent())) {
        Some(s) => Ok(s),
        None => LiveSession::open(transcript, agent),
    }
}

/// Saves the session's state in `dir`.
pub fn save(dir: &Path, s: &LiveSession) -> Result<(), crate::journal::session::SessionError> {
    write_guarded(&state_file(dir, s.main()), &s.save(), &[s.main()])
}

/// The compactions this user's sessions recorded (`compactions.json`).
pub fn observed(dir: &Path) -> Vec<Observed> {
    crate::journal::input::read_regular(&dir.join("compactions.json"))
        .ok()
        .and_then(|b| serde_json::from_slice(&b).ok())
        .unwrap_or_default()
}

/// Adds `new` to the user's compaction record (once each; the newest [`KEEP_OBSERVED`] kept);
/// whether it changed.
pub fn remember(dir: &Path, new: &[Observed]) -> bool {
    let mut all = observed(dir);
    let before = all.len();
    for o in new {
        if !all.contains(o) {
            all.push(o.clone());
        }
    }
    if all.len() == before {
        return false;
    }
    let drop = all.len().saturating_sub(KEEP_OBSERVED);
    all.drain(..drop);
    let bytes = serde_json::to_vec(&all).unwrap_or_default();
    write_guarded(&dir.join("compactions.json"), &bytes, &[]).is_ok()
}
