//! Finding sessions under a folder: every regular file that may hold a session of some agent
//! ([`may_be_session`]: JSONL logs, the JSON files of Gemini CLI, Cline and OpenCode's legacy
//! layout, OpenCode's and Kilo's SQLite stores) whose content detection names a ctxj journal or a
//! transcript of a supported format. Symbolic links and other non-regular files are not read and
//! not followed, so nothing outside the folder is reached. Claude Code subagent files
//! (`<session>/subagents/agent-*.jsonl`) are found too, with their parent transcript.

use std::path::{Path, PathBuf};

use rayon::prelude::*;

use super::{detect_file, Format, FromFormat};

/// One session file found by [`find_sessions`].
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Found {
    pub path: PathBuf,
    /// A side session inside the file (none from a plain scan).
    pub part: Option<String>,
    pub format: Format,
    /// For a subagent file: the parent transcript. `None` for a main session and for an orphan
    /// (a subagent file whose parent transcript is absent), which is listed on its own.
    pub parent: Option<PathBuf>,
    /// `main`, `subagent`, `compaction call` or `orphan subagent`.
    pub role: &'static str,
}

/// Every session file under `dir`, sorted by path. Unreadable entries are ignored.
pub fn find_sessions(dir: &Path, from: FromFormat) -> Vec<Found> {
    let candidates: Vec<PathBuf> = walkdir::WalkDir::new(dir)
        .follow_links(false)
        .sort_by_file_name()
        .into_iter()
        .flatten()
        .filter(|e| e.file_type().is_file() && may_be_session(e.path()))
        .map(walkdir::DirEntry::into_path)
        .collect();
    // Detection reads the head of every file: in parallel, in walk order.
    candidates
        .par_iter()
        .filter_map(|p| {
            let format = match from {
                FromFormat::Fixed(f) => f,
                FromFormat::Auto => detect_file(p)?,
            };
            Some(found(p, format))
        })
        .collect()
}

/// Whether a file's name is that of a session file of some agent ctxj imports (detection then
/// reads its content): `*.jsonl` (every JSONL log), `*.json` (Gemini CLI's legacy chats, Cline's
/// `<id>.messages.json` and legacy `api_conversation_history.json`, OpenCode's legacy
/// `storage/session/<project>/<id>.json`), `*.db` (OpenCode's and Kilo's stores) and OpenClaw's
/// kept `<id>.jsonl.deleted.<ts>` / `<id>.jsonl.reset.<ts>` sessions. Files an
/// importer reads beside the session file are not sessions of their own: Cline's
/// `<id>.compaction.json` and `ui_messages.json`.
pub fn may_be_session(p: &Path) -> bool {
    let name = p.file_name().map(|n| n.to_string_lossy()).unwrap_or_default();
    // OpenClaw keeps a deleted or reset session as `<id>.jsonl.deleted.<ts>` / `.jsonl.reset.<ts>`
    if name.contains(".jsonl.deleted.") || name.contains(".jsonl.reset.") {
        return true;
    }
    match p.extension().and_then(|x| x.to_str()) {
        Some("jsonl" | "db") => true,
        Some("json") => !name.ends_with(".compaction.json") && name != "ui_messages.json",
        _ => false,
    }
}

/// A session file with its parent and role.
fn found(p: &Path, format: Format) -> Found {
    let compaction = super::claude_code::is_compaction_call(p);
    let (parent, role) = match parent_of(p, format) {
        Some(parent) if parent.is_file() => (Some(parent), if compaction { "compaction call" } else { "subagent" }),
        Some(_) => (None, "orphan subagent"),
        None => (None, "main"),
    };
    Found { path: p.to_path_buf(), part: None, format, parent, role }
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
        assert_eq!((m.role, s.role), ("main", "subagent"));
        // Without its parent transcript the subagent file is an orphan listed on its own.
        std::fs::remove_file(&main).unwrap();
        let f = find_sessions(d.path(), FromFormat::Auto);
        assert_eq!(f.len(), 1);
        assert_eq!((f[0].parent.as_deref(), f[0].role), (None, "orphan subagent"));
    }

    /// `sessions <folder>` looked only at `*.jsonl`: Gemini CLI's legacy `.json` chats, Cline's
    /// `messages.json` and OpenCode's `.db` stores were never listed. Sidecars stay out, and a
    /// symbolic link (here to a session outside the folder) is neither read nor followed.
    #[test]
    fn regression_sessions_folder_looked_only_at_jsonl() {
        let d = tempfile::tempdir().unwrap();
        let inside = d.path().join("in");
        std::fs::create_dir_all(inside.join("chats")).unwrap();
        let chat = inside.join("chats/session-1.json");
        let gemini = r#"{"sessionId":"s1","projectHash":"h","messages":[{"id":"m1","type":"user","content":"hi"}]}"#;
        std::fs::write(&chat, gemini).unwrap();
        std::fs::write(inside.join("chats/x.compaction.json"), gemini).unwrap();
        std::fs::write(inside.join("notes.txt"), gemini).unwrap();
        let outside = d.path().join("outside.json");
        std::fs::write(&outside, gemini).unwrap();
        #[cfg(unix)]
        std::os::unix::fs::symlink(&outside, inside.join("link.json")).unwrap();
        let f = find_sessions(&inside, FromFormat::Auto);
        assert_eq!(f.iter().map(|x| (x.path.clone(), x.format)).collect::<Vec<_>>(), [(chat, Format::GeminiCli)]);
        assert!(may_be_session(Path::new("a/kilo.db")) && may_be_session(Path::new("a/b.messages.json")));
        assert!(!may_be_session(Path::new("a/b.compaction.json")) && !may_be_session(Path::new("a/ui_messages.json")));
        assert!(!may_be_session(Path::new("a/opencode.db-wal")));
        assert!(may_be_session(Path::new("a/s.jsonl.deleted.2026-02-07T13-45-07.930Z")));
    }
}
