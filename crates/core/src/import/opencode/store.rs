//! OpenCode's and Kilo's SQLite store: recognising it, opening it read-only without writing
//! beside it, listing its sessions, and reading one session's `message` and `part` rows (ordered
//! by id) for [`super::messages::build`].

use std::collections::HashMap;
use std::path::Path;

use serde_json::{Map, Value};

use super::messages::build;
use crate::import::{Format, ImportError, ImportReport, Imported};

/// One session of a store, for listings and for choosing what to open.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct StoreSession {
    pub id: String,
    pub parent: Option<String>,
    pub title: String,
}

/// Whether SQLite bytes (the head of a file) hold OpenCode's tables `session`, `message`, `part`.
/// How a read command names session `id` of the store at `path`: `<path>#<id>`.
pub fn part_spec(path: &Path, id: &str) -> String {
    format!("{}#{id}", path.display())
}

pub fn is_store(bytes: &[u8]) -> bool {
    if !bytes.starts_with(b"SQLite format 3\0") {
        return false;
    }
    has_store_tables(&crate::import::sqlite::sqlite_tables(bytes))
}

/// Whether a table list is an OpenCode/Kilo store's (`session`, `message`, `part`).
pub fn has_store_tables(tables: &[String]) -> bool {
    ["session", "message", "part"].iter().all(|t| tables.iter().any(|x| x == t))
}

/// Opens a store read-only without writing beside it ([`crate::journal::sqlite`]).
fn open(path: &Path) -> Result<crate::journal::sqlite::ReadOnly, ImportError> {
    crate::journal::sqlite::open_read_only(path)
        .map_err(|err| ImportError::Io { path: path.display().to_string(), err })
}

fn sql_err(path: &Path, e: rusqlite::Error) -> ImportError {
    ImportError::Io { path: path.display().to_string(), err: std::io::Error::other(e) }
}

/// The sessions of a store, oldest first.
pub fn sessions(path: &Path) -> Result<Vec<StoreSession>, ImportError> {
    let (c, _tmp) = open(path)?;
    list(&c).map_err(|e| sql_err(path, e))
}

fn list(c: &rusqlite::Connection) -> rusqlite::Result<Vec<StoreSession>> {
    let mut st = c.prepare("SELECT id, parent_id, title FROM session ORDER BY time_created, id")?;
    let rows = st.query_map([], |r| {
        Ok(StoreSession {
            id: r.get(0)?,
            parent: r.get::<_, Option<String>>(1)?,
            title: r.get::<_, Option<String>>(2)?.unwrap_or_default(),
        })
    })?;
    rows.collect()
}

/// The harness name of a store: `kilo` for `kilo.db`, else `opencode`.
fn harness_of(path: &Path) -> &'static str {
    match path.file_name().and_then(|n| n.to_str()) {
        Some(n) if n.starts_with("kilo") => "kilo",
        _ => "opencode",
    }
}

/// Imports session `part` of the store at `path` (the only main session when `part` is `None`).
pub(super) fn read(path: &Path, part: Option<&str>) -> Result<Imported, ImportError> {
    let (c, _tmp) = open(path)?;
    let all = list(&c).map_err(|e| sql_err(path, e))?;
    let known = || all.iter().map(|x| x.id.as_str()).collect::<Vec<_>>().join(", ");
    let session = match part {
        Some(p) => all.iter().find(|x| x.id == p).ok_or_else(|| ImportError::NoSuchPart {
            path: path.display().to_string(),
            name: p.to_string(),
            known: known(),
        })?,
        None => {
            let mains: Vec<&StoreSession> = all.iter().filter(|x| x.parent.is_none()).collect();
            match mains.as_slice() {
                [one] => *one,
                _ => {
                    return Err(ImportError::StoreAmbiguous {
                        path: path.display().to_string(),
                        n: mains.len(),
                        known: mains.iter().map(|x| x.id.as_str()).collect::<Vec<_>>().join(", "),
                    })
                }
            }
        }
    };
    let messages = rows(&c, "SELECT id, data FROM message WHERE session_id = ?1 ORDER BY id", &session.id)
        .map_err(|e| sql_err(path, e))?;
    let parts = rows(&c, "SELECT message_id, data FROM part WHERE session_id = ?1 ORDER BY id", &session.id)
        .map_err(|e| sql_err(path, e))?;
    let mut report = ImportReport::new(Format::OpenCode, path);
    report.lines = messages.len() + parts.len();
    let mut by_msg: HashMap<String, Vec<Map<String, Value>>> = HashMap::new();
    for (mid, data) in parts {
        match serde_json::from_str::<Value>(&data) {
            Ok(Value::Object(o)) => by_msg.entry(mid).or_default().push(o),
            _ => report.skip("part whose data is not a JSON object"),
        }
    }
    let mut msgs: Vec<(String, Map<String, Value>)> = Vec::new();
    for (id, data) in messages {
        match serde_json::from_str::<Value>(&data) {
            Ok(Value::Object(o)) => msgs.push((id, o)),
            _ => report.skip("message whose data is not a JSON object"),
        }
    }
    for child in all.iter().filter(|x| x.parent.as_deref() == Some(session.id.as_str())) {
        report.children.push(crate::import::Child {
            spec: part_spec(path, &child.id),
            role: "subagent".into(),
            lines: 0,
        });
    }
    Ok(build(path, &session.id, harness_of(path), &msgs, &by_msg, report))
}

fn rows(c: &rusqlite::Connection, q: &str, session: &str) -> rusqlite::Result<Vec<(String, String)>> {
    let mut st = c.prepare(q)?;
    let it = st.query_map([session], |r| Ok((r.get::<_, String>(0)?, r.get::<_, String>(1)?)))?;
    it.collect()
}

#[cfg(test)]
mod tests {
    use super::super::messages::INTERRUPTED;
    use super::*;
    use crate::journal::Body;
    use std::path::PathBuf;

    /// A synthetic store (hand-written from the v1.2.10 schema, not a recording): one session
    /// with a multi-step assistant message, an error, an interrupted call, a prune and an auto
    /// compaction with its summary message; and a child session.
    fn store(dir: &Path) -> PathBuf {
        let p = dir.join("opencode.db");
        let c = rusqlite::Connection::open(&p).unwrap();
        c.execute_batch(
            "CREATE TABLE session (id TEXT PRIMARY KEY, project_id TEXT, parent_id TEXT, title TEXT, version TEXT, time_created INTEGER);
             CREATE TABLE message (id TEXT PRIMARY KEY, session_id TEXT, time_created INTEGER, time_updated INTEGER, data TEXT);
             CREATE TABLE part (id TEXT PRIMARY KEY, message_id TEXT, session_id TEXT, time_created INTEGER, time_updated INTEGER, data TEXT);
             INSERT INTO session VALUES ('ses_b', 'p', NULL, 'main', '1.2.10', 1), ('ses_c', 'p', 'ses_b', 'child', '1.2.10', 2);",
        )
        .unwrap();
        let msgs = [
            (
                "msg_01",
                r#"{"role":"user","time":{"created":1000},"agent":"build","model":{"providerID":"anthropic","modelID":"claude-sonnet-4-5"}}"#,
            ),
            (
                "msg_02",
                r#"{"role":"assistant","time":{"created":2000,"completed":3000},"parentID":"msg_01","modelID":"claude-sonnet-4-5","providerID":"anthropic","tokens":{"input":7,"output":3,"reasoning":0,"cache":{"read":90,"write":0}}}"#,
            ),
            ("msg_03", r#"{"role":"user","time":{"created":6000},"model":{"modelID":"claude-sonnet-4-5"}}"#),
            (
                "msg_04",
                r#"{"role":"assistant","time":{"created":7000},"parentID":"msg_03","modelID":"claude-sonnet-4-5","tokens":{"input":9,"output":1,"cache":{"read":0,"write":0}}}"#,
            ),
            (
                "msg_04e",
                r#"{"role":"assistant","time":{"created":7500},"parentID":"msg_03","modelID":"claude-sonnet-4-5","error":{"name":"APIError"},"tokens":{"input":0,"output":0,"cache":{"read":0,"write":0}}}"#,
            ),
            ("msg_05", r#"{"role":"user","time":{"created":8000}}"#),
            (
                "msg_06",
                r#"{"role":"assistant","time":{"created":9000},"parentID":"msg_05","summary":true,"mode":"compaction","modelID":"claude-sonnet-4-5","tokens":{"input":500,"output":40,"cache":{"read":0,"write":0}}}"#,
            ),
            ("msg_07", r#"{"role":"user","time":{"created":10000}}"#),
            (
                "msg_08",
                r#"{"role":"assistant","time":{"created":11000},"parentID":"msg_07","modelID":"claude-opus-4-5","tokens":{"input":20,"output":2,"cache":{"read":0,"write":30}}}"#,
            ),
        ];
        for (id, d) in msgs {
            c.execute("INSERT INTO message VALUES (?1, 'ses_b', 0, 0, ?2)", [id, d]).unwrap();
        }
        let parts = [
            ("prt_01", "msg_01", r#"{"type":"text","text":"list files"}"#),
            ("prt_02", "msg_01", r#"{"type":"text","text":"hidden","ignored":true}"#),
            ("prt_03", "msg_02", r#"{"type":"step-start"}"#),
            ("prt_04", "msg_02", r#"{"type":"reasoning","text":"hm"}"#),
            (
                "prt_05",
                "msg_02",
                r#"{"type":"tool","callID":"c1","tool":"bash","state":{"status":"completed","input":{"command":"ls"},"output":"a\nb","time":{"start":1,"end":2,"compacted":5000}}}"#,
            ),
            (
                "prt_06",
                "msg_02",
                r#"{"type":"step-finish","reason":"tool-calls","tokens":{"input":5,"output":1,"reasoning":0,"cache":{"read":40,"write":0}}}"#,
            ),
            ("prt_07", "msg_02", r#"{"type":"step-start"}"#),
            ("prt_08", "msg_02", r#"{"type":"text","text":"two files"}"#),
            (
                "prt_09",
                "msg_02",
                r#"{"type":"tool","callID":"c2","tool":"read","state":{"status":"running","input":{"path":"a"}}}"#,
            ),
            (
                "prt_10",
                "msg_02",
                r#"{"type":"step-finish","reason":"stop","tokens":{"input":7,"output":3,"reasoning":0,"cache":{"read":90,"write":0}}}"#,
            ),
            ("prt_11", "msg_03", r#"{"type":"text","text":"again"}"#),
            ("prt_11b", "msg_04", r#"{"type":"text","text":"again done"}"#),
            ("prt_12", "msg_05", r#"{"type":"compaction","auto":true}"#),
            ("prt_13", "msg_06", r#"{"type":"text","text":"Goal\nlist files"}"#),
            ("prt_14", "msg_07", r#"{"type":"text","text":"Continue if you have next steps","synthetic":true}"#),
            ("prt_15", "msg_08", r#"{"type":"text","text":"done"}"#),
        ];
        for (id, m, d) in parts {
            c.execute("INSERT INTO part VALUES (?1, ?2, 'ses_b', 0, 0, ?3)", [id, m, d]).unwrap();
        }
        p
    }

    #[test]
    fn steps_tool_states_prune_and_compaction() {
        let d = tempfile::tempdir().unwrap();
        let p = store(d.path());
        let im = read(&p, None).unwrap();
        let recs = &im.journal.records;
        let kinds: Vec<&str> = recs.iter().map(|r| r.body.kind()).collect();
        assert_eq!(
            kinds,
            vec![
                "session",
                "user",
                "assistant",
                "result",
                "assistant",
                "result",
                "user",
                "elide",
                "assistant",
                "compact",
                "user",
                "assistant"
            ]
        );
        let Body::Session(sr) = &recs[0].body else { unreachable!() };
        assert_eq!((sr.harness.as_deref(), sr.model.as_deref()), (Some("opencode"), Some("claude-sonnet-4-5")));
        let Body::User(u1) = &recs[1].body else { unreachable!() };
        assert_eq!(&*u1.text, "list files");
        // One assistant per step, each with its own step-finish usage (input excludes the cache).
        let Body::Assistant(a1) = &recs[2].body else { unreachable!() };
        assert_eq!(a1.usage.as_ref().unwrap().prompt_tokens, Some(45));
        let Body::Assistant(a2) = &recs[4].body else { unreachable!() };
        assert_eq!((a2.usage.as_ref().unwrap().prompt_tokens, &*a2.text), (Some(97), "two files"));
        let Body::Result(r2) = &recs[5].body else { unreachable!() };
        assert_eq!((&*r2.text, r2.is_error), (INTERRUPTED, Some(true)));
        // The prune at 5000 ms elides c1 before the first step that started after it (msg_04).
        let Body::Elide(el) = &recs[7].body else { unreachable!() };
        assert_eq!((el.by.as_deref(), el.calls.clone()), (Some("auto"), vec!["c1".to_string()]));
        // The compaction request and its summary message are one compact keeping nothing.
        let Body::Compact(c) = &recs[9].body else { unreachable!() };
        assert_eq!((&*c.summary, c.trigger.as_deref(), c.first_kept), ("Goal\nlist files", Some("auto"), Some(10)));
        assert_eq!(c.tokens_before, Some(500.0));
        let Body::Assistant(a3) = &recs[11].body else { unreachable!() };
        assert_eq!(a3.model.as_deref(), Some("claude-opus-4-5"));
        assert_eq!(a3.usage.as_ref().unwrap().cache_write_tokens, Some(30));
        assert!(im.report.skipped.contains_key("assistant message with an error and no content"));
        assert!(im.report.skipped.contains_key("summarisation call (read as its compaction)"));
        assert_eq!(im.report.children.len(), 1);
        assert_eq!(im.report.missing, vec!["system prompt", "tool schemas"]);
        // Naming the child, and a wrong name.
        assert!(read(&p, Some("ses_c")).is_ok());
        assert!(matches!(read(&p, Some("nope")), Err(ImportError::NoSuchPart { .. })));
        // Nothing was written beside the store.
        let names: Vec<String> = std::fs::read_dir(d.path())
            .unwrap()
            .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
            .collect();
        assert_eq!(names, vec!["opencode.db"]);
    }

    /// OpenCode's prune was written as a `clear`, which journal-v1 reserves for the model's
    /// `ctx clear` action: `validate` failed every imported session with a prune (`clear-call`).
    #[test]
    fn regression_opencode_prune_was_a_clear_that_failed_validate() {
        let d = tempfile::tempdir().unwrap();
        let im = read(&store(d.path()), None).unwrap();
        let findings = crate::check::validate::validate(&im.journal, None);
        let errors: Vec<_> =
            findings.iter().filter(|f| f.rule == "clear-call" || f.rule.starts_with("elide")).collect();
        assert!(errors.is_empty(), "{errors:?}");
    }
}
