//! The marker strings of spec §5 — the one place they are built.

use serde_json::Value;

use super::block::canonical_value;

/// Keeps the last `max` characters of `s`, prefixed with `…`, when it is longer than `max`.
pub fn tail(s: &str, max: usize) -> String {
    let n = s.chars().count();
    if n <= max {
        return s.to_string();
    }
    let skip = n - max;
    let mut out = String::with_capacity(s.len() - skip + 3);
    out.push('…');
    out.extend(s.chars().skip(skip));
    out
}

/// The `<tail>` of a call's args: `args.command` when it is a string, else the canonical JSON
/// of `args`, cut to its last `max` characters.
pub fn args_tail(args: &Value, max: usize) -> String {
    match args.as_object().and_then(|o| o.get("command")) {
        Some(Value::String(c)) => tail(c, max),
        _ => tail(&canonical_value(args), max),
    }
}

/// `[elided: <tool>, <bytes> bytes, <tail>]` for a result.
pub fn elided_result(tool: &str, bytes: u64, args: &Value) -> String {
    format!("[elided: {tool}, {bytes} bytes, {}]", args_tail(args, 40))
}

/// `[elided: attachment, <bytes> bytes, <tail of path>]` for an attachment.
pub fn elided_attachment(bytes: u64, path: &str) -> String {
    format!("[elided: attachment, {bytes} bytes, {}]", tail(path, 40))
}

/// `[cleared: <tool>, <bytes> bytes]`.
pub fn cleared(tool: &str, bytes: u64) -> String {
    format!("[cleared: {tool}, {bytes} bytes]")
}

/// Whether `text` is one of the markers above.
pub fn is_marker(text: &str) -> bool {
    (text.starts_with("[elided: ") || text.starts_with("[cleared: ")) && text.ends_with(']')
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn spec_examples() {
        let a: Value =
            serde_json::from_str(r#"{"command":"cargo test -p export -- part_1 --exact --nocapture"}"#).unwrap();
        assert_eq!(
            elided_result("run", 872, &a),
            "[elided: run, 872 bytes, … -p export -- part_1 --exact --nocapture]"
        );
        let b: Value = serde_json::from_str(r#"{"path":"src/export/part2.rs"}"#).unwrap();
        assert_eq!(elided_result("read", 2335, &b), r#"[elided: read, 2335 bytes, {"path":"src/export/part2.rs"}]"#);
        assert_eq!(cleared("read", 10), "[cleared: read, 10 bytes]");
        assert!(is_marker("[cleared: read, 10 bytes]"));
    }

    #[test]
    fn tail_counts_characters_not_bytes() {
        let s = "é".repeat(41);
        assert_eq!(tail(&s, 40), format!("…{}", "é".repeat(40)));
        assert_eq!(tail("abc", 3), "abc");
    }
}
