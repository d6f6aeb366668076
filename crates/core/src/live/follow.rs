//! What `ctxj watch` follows: the sessions written to recently, in a folder or file the user
//! named, or in the current project's folder under each agent's default home ([`targets`]), and
//! the short name each is shown under ([`short_name`]).

use std::path::{Path, PathBuf};
use std::time::{Duration, SystemTime};

use super::find;

/// Why there is nothing to follow.
#[derive(Debug, thiserror::Error)]
pub enum FollowError {
    #[error("{0}: no such file or folder")]
    Missing(String),
    #[error("the current folder: {0}")]
    Cwd(std::io::Error),
}

/// Which sessions to follow.
#[derive(Debug, Clone)]
pub struct Targets {
    /// A transcript or a folder the user named (`None`: the current project's folders).
    pub target: Option<PathBuf>,
    /// Only sessions written to within this many minutes.
    pub live_minutes: u64,
    /// Every live session, not only the newest of each folder.
    pub all: bool,
}

impl Targets {
    /// The sessions to follow now: (transcript, the folder it was found in — `None` when the
    /// user named the file itself).
    pub fn now(&self) -> Result<Vec<(PathBuf, Option<PathBuf>)>, FollowError> {
        let within = Duration::from_secs(self.live_minutes.saturating_mul(60));
        let now = SystemTime::now();
        let folders: Vec<PathBuf> = match &self.target {
            Some(t) if t.is_file() => return Ok(vec![(t.clone(), None)]),
            Some(t) if t.is_dir() => vec![t.clone()],
            Some(t) => return Err(FollowError::Missing(crate::text::escape_line(&t.display().to_string()))),
            None => {
                let cwd = std::env::current_dir().map_err(FollowError::Cwd)?;
                let roots = crate::usage::existing_default_roots(None);
                find::project_folders(&roots, &cwd, self.all).into_iter().map(|(d, _)| d).collect()
            }
        };
        Ok(folders
            .iter()
            .flat_map(|d| find::live_in(d, now, within, self.all).into_iter().map(move |p| (p, Some(d.clone()))))
            .collect())
    }
}

/// The last 8 characters of the file's stem: the tail of the session id for every agent (the
/// stems of Codex and pi begin with a date).
pub fn short_name(p: &Path) -> String {
    let stem: Vec<char> = p.file_stem().map(|s| s.to_string_lossy().chars().collect()).unwrap_or_default();
    stem[stem.len().saturating_sub(8)..].iter().collect()
}

/// The file name of a session's state under the watch state folder: its stem with path and dot
/// characters replaced, so a crafted name cannot leave the folder.
pub fn state_file_name(main: &Path) -> String {
    let stem = main.file_stem().map(|s| s.to_string_lossy().into_owned()).unwrap_or_default();
    format!("{}.json", stem.replace(['/', '\\', '.'], "_"))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn short_names_are_the_tail_of_the_id() {
        assert_eq!(
            short_name(Path::new("/x/rollout-2026-01-25T10-32-00-019bf4b5-e7b0-75a0-8bf2-05fbf1b13c9b.jsonl")),
            "f1b13c9b"
        );
        assert_eq!(short_name(Path::new("ab.jsonl")), "ab");
    }

    #[test]
    fn a_missing_target_is_named() {
        let t = Targets { target: Some(PathBuf::from("/nonexistent/ctxj")), live_minutes: 5, all: false };
        assert!(matches!(t.now(), Err(FollowError::Missing(_))));
    }

    #[test]
    fn state_files_stay_in_their_folder() {
        assert_eq!(state_file_name(Path::new("/a/..\\x.y.jsonl")), "___x_y.json");
    }
}
