//! Serialising a journal as a journal-v1 session directory (for `ctxj import`).
//!
//! Each record becomes one line with the keys `rev`, `ts`, `kind` first and the kind's fields in
//! the order of spec §2; optional fields that are absent stay absent. Every `assistant` record
//! gets the `prompt_sha256` of its request, computed with the recorded projection, so that
//! `ctxj validate` can check the written session. Attachment payloads the transcript held inline
//! are written under `<user-id>.att/`.

use std::path::{Path, PathBuf};

use crate::journal::session::{guard_not_in_session, guard_write, write_guarded, Keep};
use crate::journal::{AssistantRec, Body, Journal};
use crate::projection::{for_each_request, RequestHasher};

/// Why a session could not be written.
#[derive(Debug, thiserror::Error)]
pub enum WriteError {
    #[error("{0}: a session already exists there (journal.jsonl); pass --force to overwrite it")]
    Exists(String),
    #[error(transparent)]
    Refused(#[from] crate::journal::SessionError),
    #[error("{path}: {err}")]
    Io { path: String, err: std::io::Error },
}

/// What [`write_session`] wrote.
#[derive(Debug, Clone, Default, serde::Serialize, schemars::JsonSchema)]
pub struct Written {
    pub journal: PathBuf,
    pub records: usize,
    pub turns: usize,
    pub files: usize,
    pub bytes: u64,
}

/// The journal as JSONL text, with `prompt_sha256` set on every assistant record.
pub fn to_jsonl(journal: &Journal) -> String {
    let mut sha = vec![None; journal.records.len()];
    let mut hasher = RequestHasher::default();
    for_each_request(journal, |_, idx, p| sha[idx] = Some(hasher.sha256(p)));
    let mut out = String::new();
    for (r, sha) in journal.records.iter().zip(sha) {
        // The recorded projection's hash replaces whatever the transcript carried.
        let with_sha;
        let body = match (&r.body, sha) {
            (Body::Assistant(a), Some(sha)) => {
                with_sha = Body::Assistant(AssistantRec { prompt_sha256: Some(sha), ..a.clone() });
                &with_sha
            }
            (body, _) => body,
        };
        let line = Line { rev: r.rev, ts: &r.ts, kind: r.kind(), body };
        out.push_str(&serde_json::to_string(&line).expect("records always serialise"));
        out.push('\n');
    }
    out
}

/// Writes `journal` (and `files`: relative path, base64 payload) as a session in `dir`.
/// Refuses an existing `journal.jsonl` unless `force`, and the transcript's own folder always.
pub fn write_session(
    dir: &Path,
    journal: &Journal,
    files: &[(String, crate::journal::Text)],
    source: &Path,
    force: bool,
) -> Result<Written, WriteError> {
    let io = |p: &Path| {
        let path = p.display().to_string();
        move |err| WriteError::Io { path, err }
    };
    let source_dir = match source.parent() {
        Some(p) if !p.as_os_str().is_empty() => p,
        _ => Path::new("."),
    };
    guard_write(dir, source_dir, Keep::Exactly)?;
    let jpath = dir.join(crate::journal::session::JOURNAL_FILE);
    if jpath.exists() && !force {
        return Err(WriteError::Exists(dir.display().to_string()));
    }
    // Never below another session directory (the output itself may be an earlier import).
    guard_not_in_session(dir, false)?;
    std::fs::create_dir_all(dir).map_err(io(dir))?;
    let text = to_jsonl(journal);
    write_guarded(&jpath, text.as_bytes(), &[source])?;
    let mut n = 0;
    for (rel, data) in files {
        // Names are built by the importers from ids; refuse anything that could leave `dir`.
        if rel.starts_with('/') || rel.contains('\\') || rel.split('/').any(|c| c == ".." || c == "." || c.is_empty()) {
            continue;
        }
        let Some(bytes) = super::base64_decode(data) else { continue };
        let p = dir.join(rel);
        if let Some(parent) = p.parent() {
            if std::fs::symlink_metadata(parent).is_ok_and(|m| m.file_type().is_symlink()) {
                return Err(crate::journal::SessionError::Confined {
                    path: parent.display().to_string(),
                    why: "is a symbolic link: refusing to write through it",
                }
                .into());
            }
            std::fs::create_dir_all(parent).map_err(io(parent))?;
        }
        write_guarded(&p, &bytes, &[source])?;
        n += 1;
    }
    Ok(Written {
        journal: jpath,
        records: journal.records.len(),
        turns: journal.turns.len(),
        files: n,
        bytes: text.len() as u64,
    })
}

/// One journal line: `rev`, `ts`, `kind` first, then the kind's fields in spec order (the
/// record types' own `Serialize`), absent optional fields left out.
#[derive(serde::Serialize)]
struct Line<'a> {
    rev: u64,
    ts: &'a str,
    kind: &'a str,
    #[serde(flatten)]
    body: &'a Body,
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::journal::{parse_bytes, ReadOptions};

    #[test]
    fn written_journal_reads_back_with_matching_hashes() {
        let src = r#"{"type":"user","uuid":"u1","parentUuid":null,"timestamp":"2026-01-01T00:00:00Z","message":{"role":"user","content":"hi"}}
{"type":"assistant","uuid":"a1","parentUuid":"u1","requestId":"r","timestamp":"2026-01-01T00:00:01Z","message":{"id":"m1","model":"c","content":[{"type":"tool_use","id":"t1","name":"Bash","input":{"command":"ls","n":1.50}}],"usage":{"input_tokens":1,"output_tokens":2}}}
{"type":"user","uuid":"r1","parentUuid":"a1","timestamp":"2026-01-01T00:00:02Z","message":{"role":"user","content":[{"type":"tool_result","tool_use_id":"t1","content":"x"}]}}
{"type":"assistant","uuid":"a2","parentUuid":"r1","requestId":"r2","timestamp":"2026-01-01T00:00:03Z","message":{"id":"m2","model":"c","content":[{"type":"text","text":"ok"}]}}
"#;
        let im = super::super::claude_code::read(Path::new("t.jsonl"), src.as_bytes(), None).unwrap();
        let text = to_jsonl(&im.journal);
        assert!(text.contains(r#""n":1.50"#), "numbers keep their text: {text}");
        let back = parse_bytes(Path::new("j"), text.as_bytes(), ReadOptions::default()).unwrap();
        assert_eq!(back.records.len(), im.journal.records.len());
        let mut n = 0;
        let mut h = RequestHasher::new();
        for_each_request(&back, |k, idx, p| {
            assert_eq!(h.sha256(p), p.sha256(), "incremental hash, turn {k}");
            let Body::Assistant(a) = &back.records[idx].body else { panic!() };
            assert_eq!(a.prompt_sha256.as_deref(), Some(p.sha256().as_str()), "turn {k}");
            n += 1;
        });
        assert_eq!(n, 2);
    }
}
