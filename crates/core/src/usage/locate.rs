//! Finding a session by any name `ctxj sessions` and `ctxj usage` show for it: the path as listed
//! (relative to the folder it was found under), `project/session` (usage's session key), the
//! bare session id, or a unique prefix of it. The one resolution every read command uses
//! (through the CLI's session loading) for a name that is not a path as given.
//!
//! The id of a transcript file is the UUID its file name ends with (Claude Code
//! `<uuid>.jsonl`, Codex `rollout-<time>-<uuid>.jsonl`, pi `<time>_<uuid>.jsonl`), else its
//! stem; a Claude Code subagent file's is `<session uuid>/<stem>` (as `sessions` shows it).

use std::path::{Path, PathBuf};

/// A name that matches no session, or more than one.
#[derive(Debug, thiserror::Error)]
pub enum LocateError {
    #[error("no session {name:?} under {searched}: give a path, the id or a unique id prefix that `ctxj sessions` lists, or `project/session`")]
    NotFound { name: String, searched: String },
    #[error("{name:?} matches {} sessions; give more of the id or the path:\n{}", .candidates.len(), list(.candidates))]
    Ambiguous { name: String, candidates: Vec<PathBuf> },
}

/// At most ten candidates, one a line (escaped), and how many more.
fn list(c: &[PathBuf]) -> String {
    let mut lines: Vec<String> =
        c.iter().take(10).map(|p| format!("  {}", crate::text::escape_line(&p.display().to_string()))).collect();
    if c.len() > 10 {
        lines.push(format!("  … and {} more", c.len() - 10));
    }
    lines.join("\n")
}

/// The trailing UUID of `stem` (8-4-4-4-12 hex digits), if it ends with one.
fn trailing_uuid(stem: &str) -> Option<&str> {
    let tail = stem.get(stem.len().checked_sub(36)?..)?;
    let ok = tail.char_indices().all(|(i, c)| match i {
        8 | 13 | 18 | 23 => c == '-',
        _ => c.is_ascii_hexdigit(),
    });
    ok.then_some(tail)
}

/// The keys a transcript file answers to: its id, and `project/id` (its folder's name first).
fn keys(path: &Path) -> Option<(String, String)> {
    let stem = path.file_stem()?.to_str()?;
    let dir = path.parent()?;
    let dir_name = dir.file_name()?.to_str()?;
    if dir_name == "subagents" {
        let session = dir.parent()?.file_name()?.to_str()?;
        let id = format!("{session}/{stem}");
        return Some((id.clone(), id));
    }
    let id = trailing_uuid(stem).unwrap_or(stem).to_string();
    Some((id.clone(), format!("{dir_name}/{id}")))
}

/// Every `*.jsonl` under `roots` (no symlinks followed), in walk order.
fn files(roots: &[PathBuf]) -> Vec<PathBuf> {
    roots
        .iter()
        .flat_map(|r| walkdir::WalkDir::new(r).follow_links(false).sort_by_file_name().into_iter().flatten())
        .filter(|e| e.file_type().is_file() && e.path().extension().is_some_and(|x| x == "jsonl"))
        .map(walkdir::DirEntry::into_path)
        .collect()
}

/// The file `name` stands for under `roots` (folders searched recursively): `root/name` (the
/// path as listed, `.jsonl` optional), else the files whose id or `project/id` equals `name`,
/// else those they start with. A `#part` suffix (a side session) is kept on the result.
pub fn locate(name: &str, roots: &[PathBuf]) -> Result<String, LocateError> {
    let (base, part) = match name.rsplit_once('#') {
        Some((b, p)) if !b.is_empty() => (b, Some(p)),
        _ => (name, None),
    };
    let with_part = |p: &Path| match part {
        Some(part) => format!("{}#{part}", p.display()),
        None => p.display().to_string(),
    };
    let rel = Path::new(base);
    if rel.is_relative() && !rel.components().any(|c| matches!(c, std::path::Component::ParentDir)) {
        for r in roots {
            for candidate in [r.join(base), r.join(format!("{base}.jsonl"))] {
                if candidate.is_file() {
                    return Ok(with_part(&candidate));
                }
            }
        }
    }
    let all = files(roots);
    let key = |p: &Path| keys(p).filter(|_| p.file_name().is_some_and(|n| n != "journal.jsonl"));
    let pick = |test: &dyn Fn(&str, &str) -> bool| -> Vec<PathBuf> {
        all.iter().filter(|p| key(p).is_some_and(|(id, proj)| test(&id, &proj))).cloned().collect()
    };
    let mut found = pick(&|id, proj| id == base || proj == base);
    if found.is_empty() {
        // A prefix stays within one level: `d597` is the session, not its subagents too.
        let prefix = |k: &str| k.strip_prefix(base).is_some_and(|rest| !rest.contains('/'));
        found = pick(&|id, proj| prefix(id) || prefix(proj));
    }
    match found.len() {
        1 => Ok(with_part(&found[0])),
        0 => Err(LocateError::NotFound {
            name: name.to_string(),
            searched: roots.iter().map(|r| r.display().to_string()).collect::<Vec<_>>().join(", "),
        }),
        _ => Err(LocateError::Ambiguous { name: name.to_string(), candidates: found }),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn tree() -> tempfile::TempDir {
        let d = tempfile::tempdir().unwrap();
        for f in [
            "proj-a/d597cea3-543d-431a-9de6-c68f0abb00fb.jsonl",
            "proj-a/d597cea3-543d-431a-9de6-c68f0abb00fb/subagents/agent-a8abcfd.jsonl",
            "proj-b/d5aaaaaa-543d-431a-9de6-c68f0abb00fb.jsonl",
            "2026/03/14/rollout-2026-03-14T10-00-00-019cebc9-d900-7140-a16e-27c0b3cf5be4.jsonl",
            "proj-b/compact.jsonl",
        ] {
            let p = d.path().join(f);
            std::fs::create_dir_all(p.parent().unwrap()).unwrap();
            std::fs::write(&p, "{}\n").unwrap();
        }
        d
    }

    #[test]
    fn every_form_sessions_shows_resolves() {
        let d = tree();
        let roots = [d.path().to_path_buf()];
        let a = d.path().join("proj-a/d597cea3-543d-431a-9de6-c68f0abb00fb.jsonl").display().to_string();
        for name in [
            "proj-a/d597cea3-543d-431a-9de6-c68f0abb00fb.jsonl",
            "proj-a/d597cea3-543d-431a-9de6-c68f0abb00fb",
            "d597cea3-543d-431a-9de6-c68f0abb00fb",
            "d597",
            "proj-a/d5",
        ] {
            assert_eq!(locate(name, &roots).unwrap(), a, "{name}");
        }
        assert!(locate("019cebc9", &roots).unwrap().ends_with("019cebc9-d900-7140-a16e-27c0b3cf5be4.jsonl"));
        assert!(locate("d597cea3-543d-431a-9de6-c68f0abb00fb/agent-a8", &roots)
            .unwrap()
            .ends_with("agent-a8abcfd.jsonl"));
        assert_eq!(locate("d597#sidechain-1", &roots).unwrap(), format!("{a}#sidechain-1"));
        assert!(locate("proj-b/compact", &roots).unwrap().ends_with("compact.jsonl"));
    }

    #[test]
    fn an_ambiguous_prefix_lists_the_candidates() {
        let d = tree();
        let e = locate("d5", &[d.path().to_path_buf()]).unwrap_err();
        let LocateError::Ambiguous { candidates, .. } = &e else { panic!("{e}") };
        assert_eq!(candidates.len(), 2, "{e}");
        assert!(e.to_string().contains("proj-b/d5aaaaaa"), "{e}");
        assert!(matches!(locate("ffff", &[d.path().to_path_buf()]), Err(LocateError::NotFound { .. })));
    }
}
