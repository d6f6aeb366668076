//! The cause of a cache miss as the harness or the provider reports it, beside the one ctxj
//! infers from the usage lines (`events::judge_call`). Two places carry it, both newer than the
//! documentation snapshot ctxj was written from (`../shared/design/live-and-tune.md` §1.3,
//! unconfirmed), so every field is optional and anything else reads as absent:
//!
//! * the transcript's assistant lines: `message.diagnostics.cache_miss_reason.type` (Claude Code
//!   2.1.220+, the provider's cache-diagnosis beta; e.g. `system_changed`) — [`scan`];
//! * Claude Code's status-line input: `prompt_cache.last_miss_cause.causes` (2.1.260+; e.g.
//!   `tools_changed`, `ttl_expired_5m`) — read by `input::StatusInput`.
//!
//! The text is untrusted: it is cut to [`MAX_CAUSE`] characters here and escaped where rendered.

use std::borrow::Cow;

use serde::Deserialize;

use crate::cache::billed::BreakCause;

/// The longest cause kept, in characters.
pub const MAX_CAUSE: usize = 48;

/// A cause a transcript line reported for its call's cache miss.
#[derive(Debug, Clone, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
pub struct Reported {
    /// The line's time.
    pub ts: String,
    pub cause: String,
}

#[derive(Deserialize)]
struct Line<'a> {
    #[serde(default, borrow)]
    timestamp: Option<Cow<'a, str>>,
    #[serde(default)]
    message: Option<Message>,
}

#[derive(Deserialize)]
struct Message {
    #[serde(default)]
    diagnostics: Option<serde_json::Value>,
}

/// A cause as kept: trimmed, at most [`MAX_CAUSE`] characters, `None` when empty.
pub fn clean(s: &str) -> Option<String> {
    let s: String = s.trim().chars().take(MAX_CAUSE).collect();
    (!s.is_empty()).then_some(s)
}

/// The miss causes reported on Claude Code `lines`, in order.
pub fn scan(lines: &[u8]) -> Vec<Reported> {
    let finder = memchr::memmem::Finder::new(b"cache_miss_reason");
    crate::journal::typed::lines(lines)
        .filter(|l| finder.find(l).is_some())
        .filter_map(|l| serde_json::from_slice::<Line>(l).ok())
        .filter_map(|l| {
            let d = l.message?.diagnostics?;
            let cause = clean(d.get("cache_miss_reason")?.get("type")?.as_str()?)?;
            Some(Reported { ts: l.timestamp.map(Cow::into_owned).unwrap_or_default(), cause })
        })
        .collect()
}

/// The cause reported for the call written after `after` (the previous call's time) and before
/// `before` (the next call's; `None`: none yet): the last such line's, since a call's lines come
/// after the previous call's.
pub fn for_call<'a>(reported: &'a [Reported], after: Option<&str>, before: Option<&str>) -> Option<&'a str> {
    reported
        .iter()
        .rev()
        .find(|r| after.is_none_or(|a| r.ts.as_str() > a) && before.is_none_or(|b| r.ts.as_str() < b))
        .map(|r| r.cause.as_str())
}

/// The causes of `ctxj cache` a reported cause name stands for: Claude Code's `prompt_cache`
/// names (`tools_changed`, `system_prompt_changed`, `model_changed`, `messages_rewritten`,
/// `ttl_expired_5m`, `ttl_expired_1h`, `likely_server_side`) and the provider's
/// `cache_miss_reason` (`system_changed`), as third-party notes list them
/// (`../shared/design/live-and-tune.md` §1.3, unconfirmed). Rewritten messages are what a
/// compaction does too. `None`: a name not known.
fn stands_for(name: &str) -> Option<&'static [BreakCause]> {
    use BreakCause::*;
    Some(match name {
        "tools_changed" | "system_prompt_changed" | "system_changed" => &[SystemOrTools],
        "model_changed" => &[ModelSwitch],
        "messages_rewritten" => &[PrefixChange, Compaction],
        "ttl_expired_5m" | "ttl_expired_1h" => &[Ttl],
        "likely_server_side" => &[Provider],
        _ => return None,
    })
}

/// Whether a reported cause agrees with the one ctxj inferred from the usage lines
/// (`events::judge_call`; `None` there: none of compaction, model switch or idle past the
/// lifetime, so a system/tools change, a prefix change or the provider). Several causes joined
/// with `+` agree when one does. `None`: no part is a name ctxj knows, so nothing is judged.
pub fn agrees(reported: &str, inferred: Option<BreakCause>) -> Option<bool> {
    let ours: &[BreakCause] = match &inferred {
        Some(c) => std::slice::from_ref(c),
        None => &[BreakCause::SystemOrTools, BreakCause::PrefixChange, BreakCause::Provider],
    };
    let known: Vec<&[BreakCause]> = reported.split('+').filter_map(|n| stands_for(n.trim())).collect();
    (!known.is_empty()).then(|| known.iter().any(|k| k.iter().any(|c| ours.contains(c))))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn causes_are_read_from_the_diagnostics_and_matched_to_their_call() {
        let lines = concat!(
            r#"{"type":"assistant","timestamp":"2026-05-01T10:00:00Z","message":{"usage":{}}}"#,
            "\n",
            r#"{"type":"assistant","timestamp":"2026-05-01T10:05:00Z","message":{"diagnostics":{"cache_miss_reason":{"type":"system_changed","cache_missed_input_tokens":900}}}}"#,
            "\n",
            r#"{"type":"assistant","timestamp":"2026-05-01T10:06:00Z","message":{"diagnostics":{"cache_miss_reason":{"type":7}}}}"#,
            "\n",
            r#"{"timestamp":"2026-05-01T10:07:00Z","message":{"diagnostics":{"cache_miss_reason":"x"}}}"#,
            "\n"
        );
        let r = scan(lines.as_bytes());
        assert_eq!(r, vec![Reported { ts: "2026-05-01T10:05:00Z".into(), cause: "system_changed".into() }]);
        let call = for_call(&r, Some("2026-05-01T10:00:00Z"), Some("2026-05-01T10:06:00Z"));
        assert_eq!(call, Some("system_changed"));
        assert_eq!(for_call(&r, Some("2026-05-01T10:05:00Z"), None), None, "a later call's miss has no cause");
        assert_eq!(clean(&"x".repeat(100)).map(|s| s.len()), Some(MAX_CAUSE));
        assert_eq!(clean("  "), None);
    }

    #[test]
    fn a_reported_cause_agrees_or_differs_with_the_inferred_one() {
        use BreakCause::*;
        assert_eq!(agrees("system_changed", None), Some(true), "ctxj's unexplained: system, prefix or provider");
        assert_eq!(agrees("ttl_expired_5m", None), Some(false));
        assert_eq!(agrees("ttl_expired_1h", Some(Ttl)), Some(true));
        assert_eq!(agrees("tools_changed", Some(Ttl)), Some(false));
        assert_eq!(agrees("messages_rewritten", Some(Compaction)), Some(true));
        assert_eq!(agrees("tools_changed+model_changed", Some(ModelSwitch)), Some(true), "one of several");
        assert_eq!(agrees("something_new", Some(Ttl)), None, "an unknown name is not judged");
    }
}
