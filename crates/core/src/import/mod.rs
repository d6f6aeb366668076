//! Import of foreign transcripts (Claude Code, Codex, pi and OpenClaw, Gemini CLI, Qwen Code,
//! Kimi Code, Cline, OpenCode and Kilo) into journal-v1 records in memory.
//!
//! Every reader turns one transcript file into a [`Journal`] built with
//! [`Journal::from_records`] plus an [`ImportReport`] that says what the format did not record
//! (no system prompt, no tool schemas, …), which lines were skipped and why, and which branches or
//! side sessions were left out. Nothing is invented: what is missing stays missing and is listed.
//!
//! * [`detect`] recognises a format by the content of the first lines (file names only break
//!   ties);
//! * [`claude_code`], [`codex`], [`pi`] (also OpenClaw), [`gemini`], [`qwen`], [`kimi`], [`cline`]
//!   and [`opencode`] (an SQLite store, one session of it per import, or a legacy `storage/` session file) are the readers (`parts` holds the Gemini API `Content` walk Gemini CLI and Qwen Code share);
//!   (the compaction rules their sources document are `check::agents`'s, for `audit`); [`detect::describe`] says
//!   what a file no reader claims is;
//! * [`load`] is what the CLI's `Ctx::load` calls: a ctxj session, a transcript file, or a folder
//!   holding exactly one session;
//! * [`scan`] finds every session under a folder (for folder arguments and `ctxj sessions`);
//!   [`write`] serialises a journal as a journal-v1 session (for `ctxj import`). Usage accounting
//!   and session summaries live in [`crate::usage`].
//!
//! Readers never panic on odd lines: a line that is not JSON, not an object, or has no usable
//! `type` is skipped and counted. Only a file with no usable line at all is an error, reported
//! with its path, line and offset.

pub mod claude_code;
pub mod cline;
pub mod codex;
mod content;
pub mod detect;
pub mod gemini;
mod image;
pub mod kimi;
mod lines;
mod load;
pub mod opencode;
mod parts;
pub mod pi;
pub mod qwen;
mod report;
pub mod scan;
mod sqlite;
pub mod write;

use std::fmt;

use crate::journal::{JournalError, SessionError};

pub(crate) use crate::tokens::image::Rule as ImageRule;
pub use detect::{detect_bytes, detect_file};
pub(crate) use image::{attach, image_text, Image};
pub use image::{base64_decode, IMAGE_NO_RULE_NOTE, IMAGE_UNSIZED_NOTE};
pub(crate) use lines::{f, s, u, Builder};
pub use lines::{parse_lines, Line};
pub use load::{import_bytes, import_file, load, load_path, Loaded};
pub use report::{Child, Dropped, ImportReport, Imported};

/// A transcript format ctxj reads.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum Format {
    ClaudeCode,
    Codex,
    Pi,
    Ctxj,
    GeminiCli,
    QwenCode,
    KimiCode,
    Cline,
    /// An OpenCode or Kilo CLI SQLite store (`opencode.db`, `kilo.db`).
    OpenCode,
}

impl Format {
    /// The name used by `--from` and in reports.
    pub fn name(self) -> &'static str {
        match self {
            Format::ClaudeCode => "claude-code",
            Format::Codex => "codex",
            Format::Pi => "pi",
            Format::Ctxj => "ctxj",
            Format::GeminiCli => "gemini",
            Format::QwenCode => "qwen",
            Format::KimiCode => "kimi",
            Format::Cline => "cline",
            Format::OpenCode => "opencode",
        }
    }

    /// What a file of this format is, for messages ("a Codex transcript").
    pub fn describe(self) -> &'static str {
        match self {
            Format::ClaudeCode => "a Claude Code transcript",
            Format::Codex => "a Codex transcript",
            Format::Pi => "a pi transcript",
            Format::Ctxj => "a ctxj journal",
            Format::GeminiCli => "a Gemini CLI session",
            Format::QwenCode => "a Qwen Code session",
            Format::KimiCode => "a Kimi Code wire log",
            Format::Cline => "a Cline conversation",
            Format::OpenCode => "an OpenCode or Kilo store",
        }
    }
}

impl fmt::Display for Format {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())
    }
}

/// What `--from` asked for: detect, or force one format.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum FromFormat {
    #[default]
    Auto,
    Fixed(Format),
}

/// Why a transcript could not be imported.
#[derive(Debug, thiserror::Error)]
pub enum ImportError {
    #[error(transparent)]
    Session(#[from] SessionError),
    #[error(transparent)]
    Journal(#[from] JournalError),
    #[error("{path}: {err}")]
    Io { path: String, err: std::io::Error },
    #[error("{path}: {looked_like}: not a transcript ctxj knows (ctxj reads ctxj journals and the logs of Claude Code, Codex, pi, OpenClaw, Gemini CLI, Qwen Code, Kimi Code, Cline, OpenCode and Kilo); force a format with --from")]
    Unknown { path: String, looked_like: String },
    #[error("{path}: {what}; {hint}")]
    NotImported { path: String, what: String, hint: String },
    #[error("{path}: {n} sessions found in this folder; name one of them (see `ctxj sessions {path}`)")]
    Ambiguous { path: String, n: usize },
    #[error("{path}: {n} main sessions in this store; name one as {path}#<session id> (known: {known})")]
    StoreAmbiguous { path: String, n: usize, known: String },
    #[error("{path}: no session found in this folder")]
    EmptyFolder { path: String },
    #[error(
        "{path}: --from {forced} expects {expected}, but the content is {found}; drop --from or name the right format"
    )]
    WrongFormat { path: String, forced: &'static str, expected: &'static str, found: &'static str },
    #[error("{path}: not one record read as {format} from {lines} line(s) (skipped: {skipped}); is --from right?")]
    NothingRead { path: String, format: &'static str, lines: usize, skipped: String },
    #[error("{path}: no side session {name:?} in this transcript (known: {known})")]
    NoSuchPart { path: String, name: String, known: String },
}

#[cfg(test)]
mod props {
    use super::*;
    use crate::journal::{Body, ReadOptions};
    use proptest::prelude::{prop_assert, prop_assert_eq, prop_oneof, proptest, Just, ProptestConfig, Strategy};
    use std::collections::HashSet;
    use std::path::Path;

    /// Line fragments in the shape of all three formats, with ids drawn from a small pool so
    /// that links, duplicates, forks and dangling references all occur.
    fn line() -> impl Strategy<Value = String> {
        let id = proptest::sample::select(vec!["a", "b", "c", "d", "e"]);
        let ty = proptest::sample::select(vec![
            "user",
            "assistant",
            "system",
            "progress",
            "summary",
            "message",
            "compaction",
            "model_change",
            "session",
            "response_item",
            "event_msg",
            "compacted",
            "turn_context",
            "weird",
        ]);
        let block = proptest::sample::select(vec![
            r#"{"type":"text","text":"t"}"#,
            r#"{"type":"tool_use","id":"T1","name":"Bash","input":{"command":"ls"}}"#,
            r#"{"type":"tool_result","tool_use_id":"T1","content":"r"}"#,
            r#"{"type":"tool_result","tool_use_id":"T9","content":[{"type":"image","source":{"data":"QUJD"}}]}"#,
            r#"{"type":"image","source":{"type":"base64","media_type":"image/png","data":"QUJD"}}"#,
            r#"{"type":"toolCall","id":"T1","name":"read","arguments":{}}"#,
            r#"{"type":"thinking","thinking":"x"}"#,
            r#"null"#,
        ]);
        prop_oneof![
            (ty.clone(), id.clone(), id.clone(), id.clone(), block.clone(), 0u64..5).prop_map(|(t, u, p, m, b, n)| format!(
                r#"{{"type":"{t}","uuid":"{u}","parentUuid":"{p}","requestId":"r{n}","timestamp":"2026-01-0{}T00:00:00Z","message":{{"id":"{m}","role":"user","model":"m","content":[{b}],"usage":{{"input_tokens":{n},"output_tokens":1}}}},"subtype":"compact_boundary"}}"#,
                n + 1
            )),
            (ty.clone(), id.clone(), block).prop_map(|(t, u, b)| format!(
                r#"{{"type":"{t}","id":"{u}","parentId":"a","firstKeptEntryId":"b","firstKeptEntryIndex":2,"summary":"s","message":{{"role":"toolResult","toolCallId":"T1","content":[{b}]}}}}"#
            )),
            (ty, proptest::sample::select(vec!["message", "function_call", "function_call_output", "token_count", "compaction"]))
                .prop_map(|(t, pt)| format!(
                    r#"{{"type":"{t}","payload":{{"type":"{pt}","role":"user","call_id":"C","content":[{{"type":"input_text","text":"x"}}],"info":{{"total_token_usage":{{"input_tokens":1}},"last_token_usage":{{"input_tokens":1}}}},"replacement_history":[{{"type":"message","role":"user","content":[]}}]}}}}"#
                )),
            (proptest::sample::select(vec!["user", "gemini", "info", "assistant", "tool_result", "system"]), id.clone(), id.clone()).prop_map(|(t, i, p)| format!(
                r#"{{"id":"{i}","uuid":"{i}","parentUuid":"{p}","type":"{t}","subtype":"chat_compression","content":[{{"text":"x"}}],"tokens":{{"input":3,"cached":1}},"toolCalls":[{{"id":"T1","name":"ls","result":[{{"functionResponse":{{"id":"T1","response":{{"output":"o"}}}}}}]}}],"message":{{"parts":[{{"functionCall":{{"id":"T1","name":"ls"}}}},{{"functionResponse":{{"name":"ls","response":{{"error":"e"}}}}}}]}},"usageMetadata":{{"promptTokenCount":2}},"systemPayload":{{"compressedHistory":[{{"parts":[{{"text":"s"}}]}}]}}}}"#
            )),
            id.clone().prop_map(|i| format!(r#"{{"$rewindTo":"{i}"}}"#)),
            Just(r#"{"$set":{"messages":[{"type":"user","content":"c"}]}}"#.to_string()),
            Just(r#"{"type": null}"#.to_string()),
            Just("[1,2]".to_string()),
            Just("not json".to_string()),
            Just("{}".to_string()),
        ]
    }

    proptest! {
        #![proptest_config(ProptestConfig::with_cases(300))]
        #[test]
        fn readers_never_panic_and_build_well_formed_journals(lines in proptest::collection::vec(line(), 0..25)) {
            let bytes = lines.join("\n");
            let _ = detect_bytes(bytes.as_bytes(), "x.jsonl");
            for fmt in [Format::ClaudeCode, Format::Codex, Format::Pi, Format::GeminiCli, Format::QwenCode, Format::KimiCode, Format::Cline] {
                let Ok(im) = import_bytes(Path::new("x.jsonl"), bytes.as_bytes(), fmt, None) else { continue };
                let j = &im.journal;
                let mut calls = HashSet::new();
                let mut ids = HashSet::new();
                let mut last = String::new();
                for (i, r) in j.records.iter().enumerate() {
                    prop_assert_eq!(r.rev, i as u64 + 1);
                    prop_assert!(r.ts.to_string() >= last || last.is_empty(), "{:?}: ts goes back", fmt);
                    last = r.ts.to_string();
                    match &r.body {
                        Body::Session(_) => prop_assert_eq!(i, 0),
                        Body::Assistant(a) => {
                            prop_assert!(ids.insert(a.id.clone()), "{:?}: duplicate id {}", fmt, a.id);
                            for c in &a.calls {
                                prop_assert!(calls.insert(c.id.clone()), "{:?}: duplicate call {}", fmt, c.id);
                            }
                        }
                        Body::User(u) => {
                            prop_assert!(ids.insert(u.id.clone()), "{:?}: duplicate id {}", fmt, u.id);
                            for a in &u.attachments {
                                prop_assert!(ids.insert(a.id.clone()));
                            }
                        }
                        Body::Notice(n) => prop_assert!(ids.insert(n.id.clone())),
                        Body::Result(res) => prop_assert!(calls.contains(&res.call), "{:?}: result before its call", fmt),
                        _ => {}
                    }
                }
                // The projection and the writer accept whatever was built, and the writer's
                // incremental request hash is the projection's own.
                let _ = crate::projection::state_at_rev(j, u64::MAX);
                let mut h = crate::projection::RequestHasher::new();
                let mut same = true;
                crate::projection::for_each_request(j, |_, _, p| same &= h.sha256(p) == p.sha256());
                prop_assert!(same, "{:?}: incremental hash differs", fmt);
                let text = write::to_jsonl(j);
                prop_assert!(crate::journal::parse_bytes(Path::new("w"), text.as_bytes(), ReadOptions::default()).is_ok());
            }
        }
    }
}
