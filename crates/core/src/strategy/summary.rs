//! The deterministic five-section summary of replayed compactions (spec `strategies.md` §2).
//!
//! No model is called. Built from the summarized blocks S, sections separated by `\n`, no
//! trailing newline; "cut to L" is the first L characters + `…` when longer; any secret-looking
//! match becomes `[REDACTED]` (seed `002_*`: secrets never reach a summary).

use std::sync::OnceLock;

use regex::Regex;
use serde_json::Value;

use crate::projection::Block;

use super::per_tool::PATH_KEYS;

/// The redaction pattern of the spec.
pub const SECRET_PATTERN: &str = r"(sk|pk|rk|ghp|gho|ghu|ghs|xoxb|xoxp)[-_][A-Za-z0-9_-]{16,}|AKIA[0-9A-Z]{16}";

fn secret_re() -> &'static Regex {
    static RE: OnceLock<Regex> = OnceLock::new();
    RE.get_or_init(|| Regex::new(SECRET_PATTERN).expect("valid pattern"))
}

/// Replaces every match of [`SECRET_PATTERN`] with `[REDACTED]`.
pub fn redact(s: &str) -> String {
    secret_re().replace_all(s, "[REDACTED]").into_owned()
}

/// Whether `s` holds a match of [`SECRET_PATTERN`] (what [`redact`] would replace): a recorded
/// summary that does breaks seed 002's rule (`audit`'s `compact-secret`).
pub fn has_secret(s: &str) -> bool {
    secret_re().is_match(s)
}

/// "Cut to L": more than `l` characters → the first `l` + `…`. When the cut falls inside a secret,
/// the part of the secret that survives the cut is redacted too (so no prefix of a secret leaks).
pub fn cut(s: &str, l: usize) -> String {
    let Some((at, _)) = s.char_indices().nth(l) else { return s.to_string() };
    let mut head = s[..at].to_string();
    if let Some(m) = secret_re().find_iter(s).find(|m| m.start() < at && at < m.end()) {
        head.replace_range(m.start().., "[REDACTED]");
    }
    head.push('…');
    head
}

/// Builds the summary of `s` (the summarized blocks, in order). `first_user` is the text of the
/// session's first user block; `is_error(call)` says whether that result record has
/// `is_error: true`.
pub fn build(first_user: Option<&str>, s: &[Block], is_error: &dyn Fn(&str) -> bool) -> String {
    let mut out = String::new();
    out.push_str("## Task Overview\n");
    out.push_str(&first_user.map_or_else(|| "(none)".to_string(), |t| cut(t, 300)));

    out.push_str("\n## Current State");
    let mut paths: Vec<&str> = Vec::new();
    for b in s {
        let Block::Assistant { calls, .. } = b else { continue };
        for c in calls {
            let Some(o) = c.args.as_object() else { continue };
            for k in PATH_KEYS {
                if let Some(Value::String(p)) = o.get(*k) {
                    if paths.len() < 20 && !paths.contains(&p.as_str()) {
                        paths.push(p);
                    }
                }
            }
        }
    }
    if paths.is_empty() {
        out.push_str("\n- (none)");
    }
    for p in paths {
        out.push_str("\n- ");
        out.push_str(p);
    }

    out.push_str("\n## Important Discoveries");
    let errors: Vec<String> = s
        .iter()
        .filter_map(|b| match b {
            Block::Result { call, tool, text } if is_error(call) => {
                let first = text.split('\n').next().unwrap_or("");
                Some(format!("- {tool} {call}: {}", cut(first, 120)))
            }
            _ => None,
        })
        .take(10)
        .collect();
    if errors.is_empty() {
        out.push_str("\n- (none)");
    }
    for e in errors {
        out.push('\n');
        out.push_str(&e);
    }

    out.push_str("\n## Next Steps\n");
    let last = s.iter().rev().find_map(|b| match b {
        Block::Assistant { text, .. } if !text.is_empty() => Some(text),
        _ => None,
    });
    out.push_str(&last.map_or_else(|| "(none)".to_string(), |t| cut(t, 300)));

    out.push_str("\n## Context to Preserve");
    let users: Vec<&str> = s
        .iter()
        .filter_map(|b| match b {
            Block::User { text, .. } => Some(&**text),
            _ => None,
        })
        .collect();
    if users.is_empty() {
        out.push_str("\n- (none)");
    }
    for u in &users[users.len().saturating_sub(3)..] {
        out.push_str("\n- ");
        out.push_str(&cut(u, 200));
    }
    redact(&out)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::projection::BlockCall;
    use std::sync::Arc;

    fn asst(id: &str, text: &str, calls: &[(&str, &str, &str)]) -> Block {
        Block::Assistant {
            id: id.into(),
            text: text.into(),
            calls: calls
                .iter()
                .map(|(i, t, a)| BlockCall {
                    id: i.to_string(),
                    tool: t.to_string(),
                    args: Arc::new(serde_json::from_str(a).unwrap()),
                })
                .collect(),
        }
    }
    fn res(call: &str, tool: &str, text: &str) -> Block {
        Block::Result { call: call.into(), tool: tool.into(), text: text.into() }
    }
    fn usr(id: &str, text: &str) -> Block {
        Block::User { id: id.into(), text: text.into() }
    }

    #[test]
    fn the_template_exactly() {
        let s = vec![
            usr("u1", "fix the bug"),
            asst("a1", "", &[("c1", "read", r#"{"path":"src/api.ts"}"#), ("c2", "run", r#"{"command":"npm test"}"#)]),
            res("c1", "read", "export function f() {}"),
            res("c2", "run", "FAIL api.test.ts\nexpected 1 got 2"),
            asst("a2", "The id is parsed as a string.", &[("c3", "edit", r#"{"file_path":"src/api.ts","x":1}"#)]),
            res("c3", "edit", "ok"),
            usr("u2", "also add a test"),
        ];
        let got = build(Some("fix the bug"), &s, &|c| c == "c2");
        assert_eq!(
            got,
            "## Task Overview\nfix the bug\n## Current State\n- src/api.ts\n## Important Discoveries\n\
             - run c2: FAIL api.test.ts\n## Next Steps\nThe id is parsed as a string.\n\
             ## Context to Preserve\n- fix the bug\n- also add a test"
        );
    }

    #[test]
    fn empty_sections_and_cuts() {
        let long = "é".repeat(301);
        let got = build(Some(&long), &[res("c1", "run", "x")], &|_| false);
        assert_eq!(
            got,
            format!(
                "## Task Overview\n{}…\n## Current State\n- (none)\n## Important Discoveries\n- (none)\n\
                 ## Next Steps\n(none)\n## Context to Preserve\n- (none)",
                "é".repeat(300)
            )
        );
        let got = build(None, &[], &|_| false);
        assert!(got.starts_with("## Task Overview\n(none)\n"));
        assert!(!got.ends_with('\n'));
    }

    #[test]
    fn at_most_three_users_twenty_paths_ten_errors() {
        let mut s: Vec<Block> = (0..5).map(|i| usr(&format!("u{i}"), &format!("msg {i}"))).collect();
        for i in 0..25 {
            s.push(asst(&format!("a{i}"), "", &[(&format!("c{i}"), "read", &format!(r#"{{"path":"p{i}"}}"#))]));
            s.push(res(&format!("c{i}"), "read", &format!("err {i}")));
        }
        let got = build(Some("t"), &s, &|_| true);
        assert!(got.contains("- p19\n## Important"));
        assert!(!got.contains("- p20"));
        assert!(got.contains("- read c9: err 9\n## Next Steps"));
        assert!(got.ends_with("## Context to Preserve\n- msg 2\n- msg 3\n- msg 4"));
    }

    #[test]
    fn secrets_are_redacted() {
        let key = "sk-abcdefghijklmnopqrstuvwx";
        let aws = "AKIAABCDEFGHIJKLMNOP";
        let got = build(Some(&format!("use {key} and {aws} and ghp_short")), &[], &|_| false);
        assert!(got.starts_with("## Task Overview\nuse [REDACTED] and [REDACTED] and ghp_short\n"));
        // A cut inside a secret does not leak its prefix.
        let text = format!("{}{key}", "a".repeat(295));
        let got = build(Some(&text), &[], &|_| false);
        assert!(got.starts_with(&format!("## Task Overview\n{}[REDACTED]…\n", "a".repeat(295))), "{got}");
    }
}
