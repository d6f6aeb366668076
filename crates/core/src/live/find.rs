//! Which sessions are live: transcripts written to within a recent window, under a folder or
//! under each agent's default folder for the current project (Claude Code names a project's
//! folder after its path with every character but letters and digits made `-`; pi as
//! `--<path with / made ->--`; Codex keeps rollouts by date, so the newest one is taken).

use std::path::{Path, PathBuf};
use std::time::{Duration, SystemTime};

use crate::import::Format;
use crate::usage::sources::Root;

/// Claude Code's folder name for the project at `cwd`.
pub fn claude_project(cwd: &Path) -> String {
    cwd.to_string_lossy().chars().map(|c| if c.is_ascii_alphanumeric() { c } else { '-' }).collect()
}

/// pi's folder name for the project at `cwd`.
pub fn pi_project(cwd: &Path) -> String {
    let s = cwd.to_string_lossy();
    let s = s.trim_start_matches(['/', '\\']);
    format!("--{}--", s.replace(['/', '\\', ':'], "-"))
}

/// Transcripts (`.jsonl`, not Claude Code subagent files: their session follows them) under
/// `dir`, at most `depth` folders down, with their modification times.
pub fn transcripts_under(dir: &Path, depth: usize) -> Vec<(PathBuf, SystemTime)> {
    let mut out = Vec::new();
    let Ok(rd) = std::fs::read_dir(dir) else { return out };
    for e in rd.flatten() {
        let p = e.path();
        let Ok(ft) = e.file_type() else { continue };
        if ft.is_dir() && depth > 0 && p.file_name().is_none_or(|n| n != "subagents") {
            out.extend(transcripts_under(&p, depth - 1));
        } else if ft.is_file() && p.extension().is_some_and(|x| x == "jsonl") {
            if let Ok(m) = e.metadata().and_then(|m| m.modified()) {
                out.push((p, m));
            }
        }
    }
    out
}

/// The live transcripts under `dir`: modified within `within` of `now`; the newest one only
/// unless `all`.
pub fn live_in(dir: &Path, now: SystemTime, within: Duration, all: bool) -> Vec<PathBuf> {
    let mut found: Vec<(PathBuf, SystemTime)> = transcripts_under(dir, 6)
        .into_iter()
        .filter(|(_, m)| now.duration_since(*m).map_or(true, |age| age <= within))
        .collect();
    found.sort_by(|a, b| b.1.cmp(&a.1).then_with(|| a.0.cmp(&b.0)));
    if !all {
        found.truncate(1);
    }
    found.into_iter().map(|(p, _)| p).collect()
}

/// The folders to look in for the project at `cwd`: per default root of an agent whose logs hold
/// the requests (Claude Code, Codex, pi; usage-only agents have nothing to follow), the project's
/// own folder (Claude Code, pi) or the root (Codex; or every agent's root with `all`).
pub fn project_folders(roots: &[Root], cwd: &Path, all: bool) -> Vec<(PathBuf, Format)> {
    roots
        .iter()
        .filter_map(|r| {
            let agent = r.agent.format()?;
            let dir = match (agent, all) {
                (Format::ClaudeCode, false) => r.path.join(claude_project(cwd)),
                (Format::Pi, false) => r.path.join(pi_project(cwd)),
                _ => r.path.clone(),
            };
            Some((dir, agent))
        })
        .filter(|(d, _)| d.is_dir())
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn project_folder_names_follow_the_agents() {
        assert_eq!(claude_project(Path::new("/home/u/my.proj")), "-home-u-my-proj");
        assert_eq!(pi_project(Path::new("/home/u/proj")), "--home-u-proj--");
    }

    #[test]
    fn the_newest_recent_transcript_is_live_and_subagents_are_not_sessions() {
        let d = tempfile::tempdir().unwrap();
        std::fs::create_dir_all(d.path().join("s/subagents")).unwrap();
        for f in ["a.jsonl", "s.jsonl", "s/subagents/agent-1.jsonl"] {
            std::fs::write(d.path().join(f), "{}\n").unwrap();
            std::thread::sleep(Duration::from_millis(20));
        }
        let now = SystemTime::now();
        let newest = live_in(d.path(), now, Duration::from_secs(60), false);
        assert_eq!(newest, vec![d.path().join("s.jsonl")]);
        assert_eq!(live_in(d.path(), now, Duration::from_secs(60), true).len(), 2);
        let later = now + Duration::from_secs(3600);
        assert!(live_in(d.path(), later, Duration::from_secs(60), true).is_empty());
    }
}
