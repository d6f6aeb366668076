//! Where live state is kept between runs: `$CTXJ_CACHE_DIR/live/`, else `<user cache dir>/ctxj/live/`
//! — never in a session's folder. Every file goes through the cache folder's guarded reader and
//! writer (`journal::cache_dir`: `0600` files in a `0700` folder, no symlinks followed, reads
//! capped at [`READ_CAP`], a new file renamed over the old, so a run cancelled mid-write leaves
//! the previous state whole); what is read is checked by parsing it (a damaged state refolds
//! from zero).

use std::path::{Path, PathBuf};

use super::compact::Observed;
use super::session::LiveSession;
use crate::import::Format;
use crate::journal::cache_dir::{self, CacheDir};

/// Observations kept in the user's compaction record.
const KEEP_OBSERVED: usize = 500;

/// The largest state or record file read (a larger one is ignored unread).
pub const READ_CAP: u64 = 64 << 20;

/// The live state folder under the run's cache folder `base` (created `0700` when missing; `None`
/// inside a session, or when the run keeps no cache: `--no-cache` hands no `base`, and then
/// nothing is read or written).
pub fn dir(base: Option<&Path>) -> Option<PathBuf> {
    let d = CacheDir::new(base?, "live").ok()?;
    d.ensure().ok()?;
    Some(d.path().to_path_buf())
}

/// The state file of the session followed at `transcript` (named by a hash of its path).
pub fn state_file(dir: &Path, transcript: &Path) -> PathBuf {
    let key = crate::projection::hash::content_key(0x6c69_7665, transcript.as_os_str().as_encoded_bytes());
    dir.join(format!("{:032x}.json", key))
}

/// The session at `transcript` (of `agent`, detected when `None`), resumed from its state in
/// `dir` when there is one that follows it, else opened from zero.
pub fn load(dir: &Path, transcript: &Path, agent: Option<Format>) -> Result<LiveSession, super::LiveError> {
    let saved = cache_dir::read_private(&state_file(dir, transcript), READ_CAP);
    match saved.and_then(|b| LiveSession::resume(&b, transcript)).filter(|s| agent.is_none_or(|a| a == s.agent())) {
        Some(s) => Ok(s),
        None => LiveSession::open(transcript, agent),
    }
}

/// Settles the session ([`LiveSession::settle`]: its saved state stays as small however long
/// it grows) and saves its state in `dir`.
pub fn save(dir: &Path, s: &mut LiveSession) -> Result<(), crate::journal::session::SessionError> {
    crate::journal::session::guard_not_in_session(dir, true)?;
    s.settle();
    cache_dir::write_private(&state_file(dir, s.main()), &s.save())
}

/// The compactions this user's sessions recorded (`compactions.json`).
pub fn observed(dir: &Path) -> Vec<Observed> {
    cache_dir::read_private(&dir.join("compactions.json"), READ_CAP)
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
    cache_dir::write_private(&dir.join("compactions.json"), &bytes).is_ok()
}
