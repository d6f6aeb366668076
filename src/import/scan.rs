//! Finding sessions under a folder: every `*.jsonl` whose content is a ctxj journal or a
//! transcript of a supported format. Claude Code subagent files
//! (`<session>/subagents/agent-*.jsonl`) are found too, with their parent transcript.

use std::path::{Path, PathBuf};

use super::{detect_file, Format, FromFormat};

/// One session file found by [`find_sessions`].
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Found {
    pub path: PathBuf,
    /// A side session inside the file (none from a plain scan).
    pub part: Option<String>,
    pub format: Format,
    /// For a subagent file: the parent transcript (or the parent session folder when the
    /// transcript itself is absent).
    pub parent: Option<PathBuf>,
}

/// Every session file under `dir`, sorted by path. Unreadable entries are ignored.
pub fn find_sessions(dir: &Path, from: FromFormat) -> Vec<Found> {
    let mut out = Vec::new();
    for e in walkdir::WalkDir::new(dir).follow_links(false).sort_by_file_name().into_iter().flatten() {
        if !e.file_type().is_file() {
            continue;
        }
        let p = e.path();
        if p.extension().is_none_or(|x| x != "jsonl") {
            continue;
        }
        let format = match from {
            FromFormat::Fixed(f) => f,
            FromFormat::Auto => match detect_file(p) {
                Some(f) => f,
                None => continue,
            },
        };
        out.push(Found { path: p.to_path_buf(), part: None, format, parent: parent_of(p, format) });
    }
    out
}

/// `<dir>/<stem>/subagents/agent-x.jsonl` → `<dir>/<stem>.jsonl` (or `<dir>/<stem>`).
pub fn parent_of(p: &Path, format: Format) -> Option<PathBuf> {
    if format != Format::ClaudeCode {
        return None;
    }
    let sub = p.parent()?;
    if sub.file_name()? != "subagents" {
        return None;
    }
    let sess = sub.parent()?;
    let file = PathBuf::from(format!("{}.jsonl", sess.display()));
    Some(if file.is_file() { file } else { sess.to_path_buf() })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn subagent_files_point_at_their_parent() {
        let d = tempfile::tempdir().unwrap();
        let main = d.path().join("abc.jsonl");
        std::fs::write(&main, "{\"type\":\"user\",\"uuid\":\"u\",\"message\":{\"role\":\"user\",\"content\":\"x\"}}\n")
            .unwrap();
        std::fs::create_dir_all(d.path().join("abc/subagents")).unwrap();
        let sub = d.path().join("abc/subagents/agent-1.jsonl");
        std::fs::write(&sub, "{\"type\":\"user\",\"uuid\":\"v\",\"isSidechain\":true,\"message\":{\"role\":\"user\",\"content\":\"y\"}}\n").unwrap();
        std::fs::write(d.path().join("notes.jsonl"), "42\n").unwrap();
        let f = find_sessions(d.path(), FromFormat::Auto);
        assert_eq!(f.len(), 2);
        let m = f.iter().find(|x| x.path == main).unwrap();
        assert_eq!(m.parent, None);
        let s = f.iter().find(|x| x.path == sub).unwrap();
        assert_eq!(s.parent.as_deref(), Some(main.as_path()));
    }
}

/// One line of `ctxj sessions`: what a session is and what it cost.
#[derive(Debug, Clone, Default, serde::Serialize)]
pub struct SessionSummary {
    /// What to pass to a read command to open it.
    pub spec: String,
    pub format: &'static str,
    /// `main`, `sidechain`, `subagent` or `compaction call`.
    pub role: String,
    /// The parent transcript of a side session.
    pub parent: Option<String>,
    pub id: String,
    pub start: Option<String>,
    pub model: Option<String>,
    pub turns: usize,
    /// Σ provider-reported prompt tokens (cached included).
    pub prompt_tokens: u64,
    pub cached_tokens: u64,
    /// cached / prompt, when any prompt tokens were reported.
    pub cached_share: Option<f64>,
    pub compactions: usize,
    /// Side sessions listed with this one (sidechains, subagents).
    pub side_sessions: usize,
    /// Why the session could not be read (the other fields are then empty).
    pub error: Option<String>,
}

/// Summarises a journal (any format once imported).
pub fn summarize_journal(j: &crate::journal::Journal) -> SessionSummary {
    use crate::journal::Body;
    let mut s = SessionSummary::default();
    if let Some(sess) = j.session() {
        s.id = sess.id.clone();
        s.model = sess.model.clone();
    }
    s.start = j.records.iter().map(|r| r.ts.to_string()).find(|t| !t.is_empty());
    s.turns = j.turns.len();
    for r in &j.records {
        match &r.body {
            Body::Assistant(a) => {
                if let Some(u) = &a.usage {
                    s.prompt_tokens += u.prompt_tokens.unwrap_or(0);
                    s.cached_tokens += u.cached_tokens.unwrap_or(0);
                }
                if s.model.is_none() {
                    s.model = a.model.clone();
                }
            }
            Body::Compact(_) => s.compactions += 1,
            _ => {}
        }
    }
    s.cached_share = (s.prompt_tokens > 0).then(|| s.cached_tokens as f64 / s.prompt_tokens as f64);
    s
}

/// Every session under `dir` (inline sidechains included), summarised, in path order.
pub fn summarize_folder(dir: &Path, from: FromFormat) -> Vec<SessionSummary> {
    use rayon::prelude::*;
    let found = find_sessions(dir, from);
    let per_file: Vec<Vec<SessionSummary>> = found
        .par_iter()
        .map(|f| {
            let role = match (&f.parent, f.path.file_name().map(|n| n.to_string_lossy().starts_with("agent-acompact")))
            {
                (Some(_), Some(true)) => "compaction call",
                (Some(_), _) => "subagent",
                _ => "main",
            };
            let parent = f.parent.as_ref().map(|p| p.display().to_string());
            let mut out = Vec::new();
            match super::import_file(&f.path, f.format, None) {
                Ok(im) => {
                    let mut s = summarize_journal(&im.journal);
                    s.side_sessions = im.report.children.len();
                    let children: Vec<super::Child> =
                        im.report.children.iter().filter(|c| c.role == "sidechain").cloned().collect();
                    s.spec = f.path.display().to_string();
                    s.format = f.format.name();
                    s.role = role.into();
                    s.parent = parent;
                    out.push(s);
                    for c in children {
                        let part = c.spec.rsplit('#').next().unwrap_or("").to_string();
                        let mut cs = match super::import_file(&f.path, f.format, Some(&part)) {
                            Ok(ci) => summarize_journal(&ci.journal),
                            Err(e) => SessionSummary { error: Some(e.to_string()), ..Default::default() },
                        };
                        cs.spec = c.spec.clone();
                        cs.format = f.format.name();
                        cs.role = "sidechain".into();
                        cs.parent = Some(f.path.display().to_string());
                        out.push(cs);
                    }
                }
                Err(e) => out.push(SessionSummary {
                    spec: f.path.display().to_string(),
                    format: f.format.name(),
                    role: role.into(),
                    parent,
                    error: Some(e.to_string()),
                    ..Default::default()
                }),
            }
            out
        })
        .collect();
    let mut rows: Vec<SessionSummary> = per_file.into_iter().flatten().collect();
    // Side sessions right after their parent.
    rows.sort_by(|a, b| {
        let ka = (a.parent.as_deref().unwrap_or(&a.spec).to_string(), a.parent.is_some(), a.spec.clone());
        let kb = (b.parent.as_deref().unwrap_or(&b.spec).to_string(), b.parent.is_some(), b.spec.clone());
        ka.cmp(&kb)
    });
    rows
}
