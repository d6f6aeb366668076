//! Codex rollouts counted the way ccusage 20.0.24's `ccusage codex` counts them: one entry per
//! `event_msg/token_count` with `info`, from `last_token_usage`; a repeated `token_count` (the
//! same `total_token_usage`, only the rate limits changed) is counted once, and the all-zero
//! estimate Codex writes after a compaction adds nothing. Codex's `input_tokens` include the
//! cached part: `input` = input − cached, `cache_read` = cached, no cache writes; reasoning tokens
//! are already inside `output_tokens`. The model is the last `turn_context`'s; before the first
//! one (rollouts older than ~0.40 have none), Codex's default of the time, `gpt-5`, as in ccusage.
//!
//! A forked thread (its `session_meta` names `forked_from_id`: a subagent spawned with the
//! parent's context, a `/fork`) starts with a copy of the parent's rollout, which Codex persists
//! in one write when the thread starts (`InitialHistory::Forked` → `persist_rollout_items`): the
//! parent's `session_meta`, then its items and `token_count`s, all stamped with that moment.
//! Those `token_count`s bill the parent's calls, which the parent's own rollout already holds; they
//! are the [`ForkCopy`] and count nothing here (their totals stay the running baseline), as in
//! ccusage 20.0.24 for subagent threads.

use std::borrow::Cow;
use std::path::Path;
use std::sync::{Arc, LazyLock};

use memchr::memmem::Finder;
use serde::Deserialize;
use serde_json::Value;

use crate::import::codex::{ForkCopy, LEGACY_DEFAULT_MODEL};

use super::entry::{count as n, present, read_lines, str_at, Compaction, Parse, Read, SessionKey, Tokens, UsageEntry};
use crate::journal::typed::object_or_null;

/// The session of a rollout: the folder under `sessions/` and the file stem (ccusage's id is
/// `project/session`).
pub fn session_of(path: &Path) -> SessionKey {
    let stem = path.file_stem().map(|s| s.to_string_lossy().into_owned()).unwrap_or_default();
    let comps: Vec<String> = path.components().map(|c| c.as_os_str().to_string_lossy().into_owned()).collect();
    let project = match comps.iter().rposition(|c| c == "sessions") {
        Some(i) if comps.len() > i + 2 => comps[i + 1..comps.len() - 1].join("/"),
        _ => String::new(),
    };
    SessionKey { agent: super::Agent::Codex, project, session: stem }
}

/// The entries and compactions of one rollout.
pub fn read_file(file: usize, path: &Path, parse: Parse) -> Read {
    match crate::journal::input::read_regular(path) {
        Ok(bytes) => read_bytes_with(file, path, &bytes, parse),
        Err(_) => Read::default(),
    }
}

/// What a rollout line tells `usage`, read either way.
#[derive(Debug, Default, PartialEq)]
struct Fields {
    ts: String,
    kind: Option<String>,
    payload_kind: Option<String>,
    model: Option<String>,
    /// `payload.info` when it is an object: its `total_token_usage` and `last_token_usage`.
    info: Option<(Option<Value>, Option<Value>)>,
    /// A `session_meta` naming the thread it was forked from.
    forked: bool,
}

/// The fields typed strictly (see `journal::typed`); the rest of the line (a `compacted`
/// line's whole history) is skipped unbuilt.
#[derive(Deserialize)]
struct TypedLine<'a> {
    #[serde(default, borrow)]
    timestamp: Option<Cow<'a, str>>,
    #[serde(rename = "type", default, borrow)]
    kind: Option<Cow<'a, str>>,
    #[serde(default, borrow, deserialize_with = "object_or_null")]
    payload: Option<TypedPayload<'a>>,
}

#[derive(Deserialize)]
struct TypedPayload<'a> {
    #[serde(rename = "type", default, borrow)]
    kind: Option<Cow<'a, str>>,
    #[serde(default, borrow)]
    model: Option<Cow<'a, str>>,
    #[serde(default, deserialize_with = "object_or_null")]
    info: Option<TypedInfo>,
    #[serde(default, borrow)]
    forked_from_id: Option<Cow<'a, str>>,
}

#[derive(Deserialize)]
struct TypedInfo {
    #[serde(default, deserialize_with = "present")]
    total_token_usage: Option<Value>,
    #[serde(default, deserialize_with = "present")]
    last_token_usage: Option<Value>,
}

impl From<TypedLine<'_>> for Fields {
    fn from(l: TypedLine<'_>) -> Self {
        let own = |c: Option<Cow<str>>| c.map(Cow::into_owned);
        let (payload_kind, model, info, forked) = match l.payload {
            Some(p) => (
                own(p.kind),
                own(p.model),
                p.info.map(|i| (i.total_token_usage, i.last_token_usage)),
                p.forked_from_id.is_some(),
            ),
            None => (None, None, None, false),
        };
        Fields { ts: own(l.timestamp).unwrap_or_default(), kind: own(l.kind), payload_kind, model, info, forked }
    }
}

/// The fields of a fully parsed line.
fn from_value(v: &Value) -> Fields {
    let payload = v.get("payload").unwrap_or(&Value::Null);
    Fields {
        ts: str_at(v, "timestamp").unwrap_or_default(),
        kind: str_at(v, "type"),
        payload_kind: str_at(payload, "type"),
        model: str_at(payload, "model"),
        info: payload
            .get("info")
            .filter(|i| i.is_object())
            .map(|i| (i.get("total_token_usage").cloned(), i.get("last_token_usage").cloned())),
        forked: payload.get("forked_from_id").is_some_and(Value::is_string),
    }
}

static WANTED: LazyLock<[Finder<'static>; 4]> = LazyLock::new(|| {
    ["\"token_count\"", "\"turn_context\"", "\"compacted\"", "\"session_meta\""].map(|w| Finder::new(w.as_bytes()))
});

/// The entries and compactions of one rollout's bytes (`path` names the session).
pub fn read_bytes(file: usize, path: &Path, bytes: &[u8]) -> Read {
    read_bytes_with(file, path, bytes, Parse::Fast)
}

/// [`read_bytes`], parsing the way `parse` says: one [`Fold::feed`] of the whole.
pub fn read_bytes_with(file: usize, path: &Path, bytes: &[u8], parse: Parse) -> Read {
    let mut fold = Fold::default();
    fold.feed(bytes, parse);
    fold.read(file, path)
}

/// A rollout's lines as `usage` reads them, folded line by line: the model in force, the last
/// `total_token_usage` (a repeat of it is counted once), the calls and compactions so far.
/// Feeding a rollout in pieces cut at line ends gives what one feed of the whole gives (the live
/// engine, `crate::live`, feeds the appended lines).
#[derive(Debug, Clone, Default, PartialEq, serde::Serialize, serde::Deserialize)]
pub struct Fold {
    model: Option<String>,
    last_total: Option<Value>,
    /// (timestamp, model, tokens) of each counted call.
    calls: Vec<(String, Option<String>, Tokens)>,
    compactions: Vec<String>,
    duplicates: usize,
    #[serde(default)]
    fork: ForkCopy,
}

impl Fold {
    /// Folds `bytes` (complete lines).
    pub fn feed(&mut self, bytes: &[u8], parse: Parse) {
        let wanted = |line: &[u8]| WANTED.iter().any(|w| w.find(line).is_some());
        for f in read_lines(bytes, parse, wanted, |t: TypedLine| Fields::from(t), from_value) {
            match f.kind.as_deref() {
                Some("turn_context") => {
                    if let Some(m) = f.model {
                        self.model = Some(m);
                    }
                }
                Some("compacted") => self.compactions.push(f.ts),
                Some("session_meta") => self.fork.session_meta(&f.ts, f.forked),
                Some("event_msg") if f.payload_kind.as_deref() == Some("token_count") => {
                    let Some((total, last)) = f.info else { continue };
                    if self.fork.copied(&f.ts) {
                        self.last_total = total;
                        continue;
                    }
                    if total.is_some() && total == self.last_total {
                        self.duplicates += 1;
                        continue;
                    }
                    self.last_total = total;
                    let Some(last) = last else { continue };
                    let cached = n(&last, "cached_input_tokens");
                    let tokens = Tokens {
                        input: n(&last, "input_tokens").saturating_sub(cached),
                        output: n(&last, "output_tokens"),
                        cache_creation: 0,
                        cache_read: cached,
                    };
                    if tokens.is_zero() {
                        continue;
                    }
                    // Before ~0.40 no rollout line names the model: Codex's default then.
                    let model = self.model.clone().unwrap_or_else(|| LEGACY_DEFAULT_MODEL.to_string());
                    self.calls.push((f.ts, Some(model), tokens));
                }
                _ => {}
            }
        }
    }

    /// Takes out every call but the last `keep`, every compaction but the last `keep`, and the
    /// duplicates counted so far (what follows depends only on the model in force and the last
    /// total, which stay): the live engine keeps sums of what is taken out.
    pub fn settle(&mut self, keep: usize) -> Fold {
        Fold {
            calls: self.calls.drain(..self.calls.len().saturating_sub(keep)).collect(),
            compactions: self.compactions.drain(..self.compactions.len().saturating_sub(keep)).collect(),
            duplicates: std::mem::take(&mut self.duplicates),
            ..Fold::default()
        }
    }

    /// The priced entries and compactions folded so far, as file `file` at `path`.
    pub fn read(&self, file: usize, path: &Path) -> Read {
        let session = Arc::new(session_of(path));
        Read {
            entries: self
                .calls
                .iter()
                .map(|(ts, model, tokens)| {
                    UsageEntry::priced(session.clone(), file, ts.clone(), model.clone(), *tokens, None)
                })
                .collect(),
            compactions: self
                .compactions
                .iter()
                .map(|ts| Compaction { session: session.clone(), ts: ts.clone() })
                .collect(),
            duplicates: self.duplicates,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn repeated_token_count_counts_once_and_cached_input_is_split_off() {
        let d = tempfile::tempdir().unwrap();
        let p = d.path().join("sessions/2026/03/14/rollout-x.jsonl");
        std::fs::create_dir_all(p.parent().unwrap()).unwrap();
        let tc = |total: u64, input: u64| {
            format!(
                r#"{{"timestamp":"2026-03-14T10:00:00Z","type":"event_msg","payload":{{"type":"token_count","info":{{"total_token_usage":{{"input_tokens":{total}}},"last_token_usage":{{"input_tokens":{input},"cached_input_tokens":40,"output_tokens":5}}}}}}}}"#
            )
        };
        let text = [
            r#"{"type":"turn_context","payload":{"model":"gpt-5.3-codex"}}"#.to_string(),
            tc(100, 100),
            tc(100, 100),
            tc(250, 150),
        ]
        .join("\n");
        std::fs::write(&p, text).unwrap();
        let r = read_file(0, &p, Parse::Fast);
        assert_eq!(r.entries.len(), 2);
        assert_eq!(r.duplicates, 1);
        assert_eq!(r.entries[0].tokens, Tokens { input: 60, output: 5, cache_creation: 0, cache_read: 40 });
        assert_eq!(r.entries[0].session.key(), "2026/03/14/rollout-x");
        assert!(r.entries[0].cost.unwrap() > 0.0);
    }

    /// A Codex 0.34 rollout names no model (no `turn_context`): its calls were unpriced; ccusage
    /// and Codex's own default of the time say gpt-5. A later `turn_context` takes over.
    #[test]
    fn regression_rollout_without_turn_context_is_priced_as_gpt_5() {
        let d = tempfile::tempdir().unwrap();
        let p = d.path().join("sessions/2025/10/31/rollout-x.jsonl");
        std::fs::create_dir_all(p.parent().unwrap()).unwrap();
        let tc = |total: u64| {
            format!(
                r#"{{"timestamp":"2025-10-31T10:00:00Z","type":"event_msg","payload":{{"type":"token_count","info":{{"total_token_usage":{{"input_tokens":{total}}},"last_token_usage":{{"input_tokens":100,"cached_input_tokens":40,"output_tokens":5}}}}}}}}"#
            )
        };
        let text =
            [tc(100), r#"{"type":"turn_context","payload":{"model":"gpt-5-codex"}}"#.to_string(), tc(200)].join("\n");
        std::fs::write(&p, text).unwrap();
        let r = read_file(0, &p, Parse::Fast);
        assert_eq!(r.entries[0].model.as_deref(), Some(LEGACY_DEFAULT_MODEL));
        assert!(r.entries[0].cost.unwrap() > 0.0);
        assert_eq!(r.entries[1].model.as_deref(), Some("gpt-5-codex"));
    }

    /// A forked subagent thread as Codex writes it: its own `session_meta` (naming
    /// `forked_from_id`), then the parent's rollout copied in one write (the parent's
    /// `session_meta`, a turn, two `token_count`s), then the thread's own turn.
    pub(crate) fn forked_rollout() -> String {
        let tc = |ts: &str, total: u64, input: u64| {
            format!(
                r#"{{"timestamp":"2026-04-15T17:{ts}Z","type":"event_msg","payload":{{"type":"token_count","info":{{"total_token_usage":{{"input_tokens":{total}}},"last_token_usage":{{"input_tokens":{input},"cached_input_tokens":0,"output_tokens":5}}}}}}}}"#
            )
        };
        [
            r#"{"timestamp":"2026-04-15T17:58:29.448Z","type":"session_meta","payload":{"id":"child","forked_from_id":"parent","source":{"subagent":{"thread_spawn":{"parent_thread_id":"parent","depth":1}}}}}"#.to_string(),
            r#"{"timestamp":"2026-04-15T17:58:29.472Z","type":"session_meta","payload":{"id":"parent","source":"vscode"}}"#.into(),
            r#"{"timestamp":"2026-04-15T17:58:29.473Z","type":"event_msg","payload":{"type":"task_started"}}"#.into(),
            r#"{"timestamp":"2026-04-15T17:58:29.476Z","type":"turn_context","payload":{"model":"gpt-5.4"}}"#.into(),
            r#"{"timestamp":"2026-04-15T17:58:29.477Z","type":"response_item","payload":{"type":"message","role":"user","content":[{"type":"input_text","text":"look around"}]}}"#.into(),
            r#"{"timestamp":"2026-04-15T17:58:29.478Z","type":"response_item","payload":{"type":"function_call","name":"shell","arguments":"{}","call_id":"c1"}}"#.into(),
            tc("58:29.479", 1000, 1000),
            r#"{"timestamp":"2026-04-15T17:58:29.479Z","type":"response_item","payload":{"type":"function_call_output","call_id":"c1","output":"ok"}}"#.into(),
            r#"{"timestamp":"2026-04-15T17:58:29.480Z","type":"response_item","payload":{"type":"function_call","name":"spawn_agent","arguments":"{}","call_id":"c2"}}"#.into(),
            tc("58:29.480", 2100, 1100),
            r#"{"timestamp":"2026-04-15T17:58:29.499Z","type":"event_msg","payload":{"type":"task_started"}}"#.into(),
            r#"{"timestamp":"2026-04-15T17:58:29.513Z","type":"turn_context","payload":{"model":"gpt-5.4-mini"}}"#.into(),
            r#"{"timestamp":"2026-04-15T17:58:29.527Z","type":"response_item","payload":{"type":"message","role":"user","content":[{"type":"input_text","text":"explore the parser"}]}}"#.into(),
            tc("58:29.924", 2100, 1100),
            r#"{"timestamp":"2026-04-15T17:58:33.312Z","type":"response_item","payload":{"type":"function_call","name":"shell","arguments":"{}","call_id":"c3"}}"#.into(),
            tc("58:33.387", 2900, 800),
            r#"{"timestamp":"2026-04-15T17:58:43.544Z","type":"response_item","payload":{"type":"function_call_output","call_id":"c3","output":"ok"}}"#.into(),
            r#"{"timestamp":"2026-04-15T17:58:47.829Z","type":"response_item","payload":{"type":"message","role":"assistant","content":[{"type":"output_text","text":"done"}]}}"#.into(),
            tc("58:47.959", 3800, 900),
            r#"{"timestamp":"2026-04-15T17:58:48.000Z","type":"event_msg","payload":{"type":"task_complete"}}"#.into(),
        ]
        .join("\n")
            + "\n"
    }

    /// Regression (unseen sweep 2, Codex 0.119 subagent threads): the `token_count`s of the
    /// parent's history a forked thread starts with were counted again, billing the thread 2.5×
    /// what ccusage bills (the parent's calls, priced at the thread's model).
    #[test]
    fn regression_forked_thread_counted_the_parents_copied_token_counts() {
        let p = Path::new("sessions/2026/04/15/rollout-x.jsonl");
        let text = forked_rollout();
        for parse in [Parse::Fast, Parse::Full] {
            let r = read_bytes_with(0, p, text.as_bytes(), parse);
            let inputs: Vec<u64> = r.entries.iter().map(|e| e.tokens.input).collect();
            assert_eq!(inputs, vec![800, 900], "only the thread's own calls ({parse:?})");
            assert_eq!(r.entries[0].model.as_deref(), Some("gpt-5.4-mini"));
        }
        // The same rollout without `forked_from_id` (not a fork): every call counts.
        let plain = text.replacen(r#""forked_from_id":"parent","#, "", 1);
        assert_eq!(read_bytes(0, p, plain.as_bytes()).entries.len(), 4);
    }

    #[test]
    fn typed_reads_equal_the_full_parse_on_odd_lines() {
        let text = [
            r#"{"type":"turn_context","payload":{"model":"gpt-5.3-codex","x":[1,{"y":null}]}}"#,
            r#"{"type":"turn_context","payload":{"model":7}}"#,
            r#"{"type":"turn_context","payload":[{"model":"m"}]}"#,
            r#"{"timestamp":"t","type":"event_msg","payload":{"type":"token_count","info":{"total_token_usage":null,"last_token_usage":{"input_tokens":5}}}}"#,
            r#"{"timestamp":"t","type":"event_msg","payload":{"type":"token_count","info":{"total_token_usage":null,"last_token_usage":{"input_tokens":6}}}}"#,
            r#"{"type":"event_msg","payload":{"type":"token_count","info":{"total_token_usage":{"a":1,"b":2},"last_token_usage":{"output_tokens":1.0}}}}"#,
            r#"{"type":"event_msg","payload":{"type":"token_count","info":{"total_token_usage":{"b":2,"a":1},"last_token_usage":{"output_tokens":3}}}}"#,
            r#"{"type":"event_msg","payload":{"type":"token_count","info":{"last_token_usage":null}}}"#,
            r#"{"type":"event_msg","payload":{"type":"token_count","info":"none"}}"#,
            r#"{"type":"event_msg","payload":{"type":"token_count","type":"token_count","info":{"last_token_usage":{"input_tokens":9}}}}"#,
            r#"{"type":"compacted","timestamp":"t2","payload":{"message":"","replacement_history":[{"type":"message"}]}}"#,
            r#"{"type":"compacted","timestamp":9}"#,
        ]
        .join("\n");
        let p = Path::new("sessions/2026/03/14/rollout-x.jsonl");
        let fast = read_bytes_with(0, p, text.as_bytes(), Parse::Fast);
        assert_eq!(format!("{fast:?}"), format!("{:?}", read_bytes_with(0, p, text.as_bytes(), Parse::Full)));
        assert_eq!(
            (fast.entries.len(), fast.duplicates, fast.compactions.len()),
            (2, 2, 2),
            "a 1.0 is not a whole count here; {{a,b}} = {{b,a}}"
        );
    }
}
