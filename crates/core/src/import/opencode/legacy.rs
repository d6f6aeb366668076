//! OpenCode's legacy `storage/` JSON tree (OpenCode before 1.2, `storage/storage.ts` and
//! `session/index.ts` of anomalyco/opencode @ v1.1.65): one file per object, written as
//! `Storage.write(key, value)` at `storage/<key joined by />.json` —
//!
//! * session: `storage/session/<projectID>/<sessionID>.json`, `Session.Info` (`id`, `projectID`,
//!   `parentID?`, `title`, `version`, `time`);
//! * message: `storage/message/<sessionID>/<messageID>.json`, the whole `MessageV2.Info`;
//! * part: `storage/part/<messageID>/<partID>.json`, the whole part.
//!
//! A session is imported from its session file; its messages and their parts are read from the
//! same `storage/` folder and ordered by id (ascending ids are time-ordered, as the store's rows),
//! then go through the same messages → records rules as the SQLite store
//! ([`super::messages::build`]), so both give the same journal. Its children are the session
//! files of the same project whose `parentID` is its id. Only regular files are read (symbolic
//! links are not followed); nothing is written. The older `storage/session/{info,message,part}`
//! layout, which OpenCode itself migrated to this one on start, is not read.

use std::collections::HashMap;
use std::path::{Path, PathBuf};

use serde_json::{Map, Value};

use super::messages::build;
use crate::import::{Child, Format, ImportError, ImportReport, Imported};

/// Whether the bytes of a JSON file are a legacy session file (`Session.Info`: an `id` beginning
/// `ses`, a `projectID`, a `version` and a `time` object).
pub fn is_session(bytes: &[u8]) -> bool {
    if bytes.len() > 1 << 20 || bytes.iter().find(|b| !b.is_ascii_whitespace()) != Some(&b'{') {
        return false;
    }
    let Ok(Value::Object(o)) = serde_json::from_slice::<Value>(bytes) else { return false };
    let str_at = |k: &str| o.get(k).and_then(Value::as_str);
    str_at("id").is_some_and(|i| i.starts_with("ses"))
        && str_at("projectID").is_some()
        && str_at("version").is_some()
        && o.get("time").is_some_and(Value::is_object)
}

fn io(path: &Path, err: std::io::Error) -> ImportError {
    ImportError::Io { path: path.display().to_string(), err }
}

/// A JSON object file (a regular file only).
fn object(path: &Path) -> Result<Map<String, Value>, ImportError> {
    let bytes = crate::journal::input::read_regular(path).map_err(|e| io(path, e))?;
    match serde_json::from_slice::<Value>(&bytes) {
        Ok(Value::Object(o)) => Ok(o),
        _ => Err(ImportError::NotImported {
            path: path.display().to_string(),
            what: "not a JSON object".into(),
            hint: "an OpenCode storage file holds one".into(),
        }),
    }
}

/// The regular `*.json` files of a folder, sorted by name (none when it does not exist).
fn json_files(dir: &Path) -> Vec<PathBuf> {
    let mut v: Vec<PathBuf> = std::fs::read_dir(dir)
        .into_iter()
        .flatten()
        .flatten()
        .filter(|e| e.file_type().is_ok_and(|t| t.is_file()))
        .map(|e| e.path())
        .filter(|p| p.extension().is_some_and(|x| x == "json"))
        .collect();
    v.sort();
    v
}

/// The objects of a folder's JSON files, ordered by their `id` (else the file name); a file that
/// is not a JSON object is counted as skipped.
fn objects(dir: &Path, report: &mut ImportReport, what: &str) -> Vec<(String, Map<String, Value>)> {
    let mut v: Vec<(String, Map<String, Value>)> = Vec::new();
    for p in json_files(dir) {
        match object(&p) {
            Ok(o) => {
                let stem = p.file_stem().map(|s| s.to_string_lossy().into_owned()).unwrap_or_default();
                let id = o.get("id").and_then(Value::as_str).map_or(stem, str::to_string);
                v.push((id, o));
            }
            Err(_) => report.skip(format!("{what} file that is not a JSON object")),
        }
    }
    v.sort_by(|a, b| a.0.cmp(&b.0));
    v
}

/// Imports the session whose `storage/session/<project>/<id>.json` file is `path`.
pub fn read(path: &Path, part: Option<&str>) -> Result<Imported, ImportError> {
    let info = object(path)?;
    let project_dir = path.parent().unwrap_or(Path::new(""));
    let storage = project_dir.parent().filter(|d| d.file_name().is_some_and(|n| n == "session")).and_then(Path::parent);
    let Some(storage) = storage else {
        return Err(ImportError::NotImported {
            path: path.display().to_string(),
            what: "an OpenCode session file outside `storage/session/<project>/`".into(),
            hint: "its messages are read from the `storage/` folder it lies in".into(),
        });
    };
    if let Some(p) = part {
        return Err(ImportError::NoSuchPart {
            path: path.display().to_string(),
            name: p.to_string(),
            known: "none: a legacy session file holds one session; import a child by its own file".into(),
        });
    }
    let stem = path.file_stem().map(|s| s.to_string_lossy().into_owned()).unwrap_or_default();
    let id = info.get("id").and_then(Value::as_str).map_or(stem, str::to_string);
    let mut report = ImportReport::new(Format::OpenCode, path);
    let msgs = objects(&storage.join("message").join(&id), &mut report, "message");
    let mut parts: HashMap<String, Vec<Map<String, Value>>> = HashMap::new();
    let mut lines = 1 + msgs.len();
    for (mid, _) in &msgs {
        let ps = objects(&storage.join("part").join(mid), &mut report, "part");
        lines += ps.len();
        parts.insert(mid.clone(), ps.into_iter().map(|(_, o)| o).collect());
    }
    report.lines = lines;
    for child in json_files(project_dir) {
        let is_child =
            object(&child).ok().is_some_and(|o| o.get("parentID").and_then(Value::as_str) == Some(id.as_str()));
        if is_child {
            report.children.push(Child { spec: child.display().to_string(), role: "subagent".into(), lines: 0 });
        }
    }
    Ok(build(path, &id, "opencode", &msgs, &parts, report))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::journal::Body;

    fn write(root: &Path, rel: &str, v: Value) {
        let p = root.join(rel);
        std::fs::create_dir_all(p.parent().unwrap()).unwrap();
        std::fs::write(p, serde_json::to_string_pretty(&v).unwrap()).unwrap();
    }

    #[test]
    fn a_session_file_reads_its_messages_and_parts_from_storage() {
        let d = tempfile::tempdir().unwrap();
        let s = d.path().join("storage");
        let info = serde_json::json!({"id": "ses_a", "projectID": "p1", "title": "t", "version": "1.1.65",
            "time": {"created": 1000, "updated": 2000}});
        write(&s, "session/p1/ses_a.json", info.clone());
        write(
            &s,
            "session/p1/ses_b.json",
            serde_json::json!({"id": "ses_b", "parentID": "ses_a", "projectID": "p1",
            "title": "child", "version": "1.1.65", "time": {"created": 1500}}),
        );
        write(
            &s,
            "message/ses_a/msg_02.json",
            serde_json::json!({"id": "msg_02", "sessionID": "ses_a",
            "role": "assistant", "parentID": "msg_01", "modelID": "claude-sonnet-4-5", "time": {"created": 1200},
            "tokens": {"input": 5, "output": 2, "reasoning": 0, "cache": {"read": 10, "write": 3}}}),
        );
        write(
            &s,
            "message/ses_a/msg_01.json",
            serde_json::json!({"id": "msg_01", "sessionID": "ses_a",
            "role": "user", "time": {"created": 1100}}),
        );
        write(
            &s,
            "part/msg_01/prt_01.json",
            serde_json::json!({"id": "prt_01", "messageID": "msg_01",
            "sessionID": "ses_a", "type": "text", "text": "hi"}),
        );
        write(
            &s,
            "part/msg_02/prt_03.json",
            serde_json::json!({"id": "prt_03", "messageID": "msg_02",
            "sessionID": "ses_a", "type": "text", "text": "hello"}),
        );
        write(
            &s,
            "part/msg_02/prt_02.json",
            serde_json::json!({"id": "prt_02", "messageID": "msg_02",
            "sessionID": "ses_a", "type": "step-start"}),
        );
        std::fs::write(s.join("part/msg_02/prt_04.json"), b"not json").unwrap();
        let path = s.join("session/p1/ses_a.json");
        assert!(is_session(&std::fs::read(&path).unwrap()));
        assert!(!is_session(br#"{"id": "msg_01", "sessionID": "ses_a", "role": "user"}"#));
        let im = read(&path, None).unwrap();
        let kinds: Vec<&str> = im.journal.records.iter().map(|r| r.body.kind()).collect();
        assert_eq!(kinds, ["session", "user", "assistant"]);
        let Body::Assistant(a) = &im.journal.records[2].body else { unreachable!() };
        assert_eq!((&*a.text, a.usage.as_ref().unwrap().prompt_tokens), ("hello", Some(18)));
        assert_eq!(im.report.children.len(), 1);
        assert!(im.report.skipped.contains_key("part file that is not a JSON object"));
        // Outside `storage/session/<project>/`, and a named part: errors, not guesses.
        write(d.path(), "elsewhere/ses_a.json", info);
        assert!(matches!(read(&d.path().join("elsewhere/ses_a.json"), None), Err(ImportError::NotImported { .. })));
        assert!(matches!(read(&path, Some("x")), Err(ImportError::NoSuchPart { .. })));
    }
}
