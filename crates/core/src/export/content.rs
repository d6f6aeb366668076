//! The message content of a recorded call, for `ctxj export --include-content` (off by
//! default: prompts and tool results can hold secrets).
//!
//! A call's **input** is what the transcript recorded since the previous response — the user's
//! prompt and the tool results it sent back — not the whole conversation the request carried
//! (that repeats every earlier turn; a tracing backend shows the turns in order anyway). Its
//! **output** is the response: its text and its tool calls (name and arguments). Both are
//! redacted with the one redaction rule ctxj has ([`crate::strategy::summary::redact`], the
//! pattern of `audit`'s `compact-secret`) and bounded to [`CONTENT_LIMIT`] characters each; a
//! text that was cut ends with a note saying how much was sent.

use crate::journal::{AssistantRec, Body, Record};
use crate::strategy::summary::redact;

/// Characters of input and of output each a span carries at most (about 8 KiB of ASCII: a
/// backend keeps the span, the UI shows the start of a long tool result).
pub const CONTENT_LIMIT: usize = 8192;

/// A recorded call's content, redacted and bounded.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Content {
    pub input: String,
    pub output: String,
    /// Whether the input or the output was cut to [`CONTENT_LIMIT`].
    pub cut: bool,
}

/// The text one record adds to the next request's input (`None`: nothing a reader would call
/// content — session metadata, elisions, model switches).
pub fn input_part(rec: &Record) -> Option<String> {
    match &rec.body {
        Body::User(u) => Some(u.text.to_string()),
        Body::Result(r) => Some(format!("[{} result] {}", r.tool, r.text)),
        Body::Compact(c) => Some(format!("[compaction summary] {}", c.summary)),
        _ => None,
    }
}

/// The text of a response: its text, then one line per tool call (`[call Tool] {args}`).
pub fn output_of(a: &AssistantRec) -> String {
    let mut parts: Vec<String> = vec![];
    if !a.text.is_empty() {
        parts.push(a.text.to_string());
    }
    for c in &a.calls {
        parts.push(format!("[call {}] {}", c.tool, c.args));
    }
    parts.join("\n")
}

impl Content {
    /// The content of a call from its input parts and its response's text: redacted, then cut.
    pub fn new(input: &[String], output: &str) -> Content {
        let (input, cut_in) = bounded(&redact(&input.join("\n")));
        let (output, cut_out) = bounded(&redact(output));
        Content { input, output, cut: cut_in || cut_out }
    }
}

/// `s` cut to [`CONTENT_LIMIT`] characters with a note naming how many were sent, and whether
/// it was cut. Redaction comes first, so a cut cannot leave part of a secret unredacted.
fn bounded(s: &str) -> (String, bool) {
    let Some((at, _)) = s.char_indices().nth(CONTENT_LIMIT) else { return (s.to_string(), false) };
    let total = s.chars().count();
    (format!("{}… [cut by ctxj: {CONTENT_LIMIT} of {total} characters sent]", &s[..at]), true)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn content_is_redacted_before_it_is_cut() {
        let key = "sk-ant-api03-abcdefghijklmnopqrstuvwxyz";
        let c = Content::new(&[format!("use {key} please")], &format!("[call Bash] {{\"cmd\":\"export K={key}\"}}"));
        assert_eq!(c.input, "use [REDACTED] please");
        assert!(!c.output.contains(key) && c.output.contains("[REDACTED]"), "{c:?}");
        assert!(!c.cut);
        // A secret across the limit is redacted whole, not cut into a leaking prefix.
        let long = format!("{}{key}", "x".repeat(CONTENT_LIMIT - 5));
        let c = Content::new(&[long], "");
        assert!(c.cut && !c.input.contains("sk-ant"), "{}", &c.input[CONTENT_LIMIT - 10..]);
    }

    #[test]
    fn a_cut_text_says_how_much_was_sent() {
        let c = Content::new(&["é".repeat(CONTENT_LIMIT + 10)], "ok");
        assert!(c.cut);
        assert_eq!(c.input.chars().filter(|&ch| ch == 'é').count(), CONTENT_LIMIT);
        assert!(c
            .input
            .ends_with(&format!("[cut by ctxj: {CONTENT_LIMIT} of {} characters sent]", CONTENT_LIMIT + 10)));
        assert_eq!(c.output, "ok");
        let c = Content::new(&["a".repeat(CONTENT_LIMIT)], "");
        assert!(!c.cut && c.input.len() == CONTENT_LIMIT, "exactly the limit is not cut");
    }
}
