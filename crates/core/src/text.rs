//! Text at the bottom of the layering: escaping untrusted text for terminals, character counts,
//! and numbers grouped by thousands.
//! It imports nothing from the crate, so every layer may use it.
//!
//! Journal text is untrusted: tool output may carry ANSI CSI/OSC sequences
//! (an OSC 52 clipboard write, say), `\r` overwrite tricks, or bidi overrides. Everything that
//! reaches a terminal goes through [`escape_line`] or [`escape_block`] first.

use std::fmt::Write;

/// Whether `c` must not be written raw to a terminal (newline and tab excepted by callers).
fn dangerous(c: char) -> bool {
    c.is_control() // C0, DEL, C1
        || matches!(c, '\u{200E}' | '\u{200F}' | '\u{202A}'..='\u{202E}' | '\u{2066}'..='\u{2069}')
}

fn push_escaped(out: &mut String, c: char) {
    match c {
        '\r' => out.push_str("\\r"),
        '\n' => out.push_str("\\n"),
        '\t' => out.push_str("\\t"),
        '\u{1b}' => out.push_str("\\e"),
        c if (c as u32) < 0x100 => {
            let _ = write!(out, "\\x{:02x}", c as u32);
        }
        c => {
            let _ = write!(out, "\\u{{{:x}}}", c as u32);
        }
    }
}

/// Escapes every control character, newlines included: for one-line fields.
pub fn escape_line(s: &str) -> String {
    if !s.chars().any(dangerous) {
        return s.to_string();
    }
    let mut out = String::with_capacity(s.len() + 8);
    for c in s.chars() {
        if dangerous(c) {
            push_escaped(&mut out, c);
        } else {
            out.push(c);
        }
    }
    out
}

/// Escapes control characters but keeps `\n` and `\t`: for multi-line content.
pub fn escape_block(s: &str) -> String {
    if !s.chars().any(|c| dangerous(c) && c != '\n' && c != '\t') {
        return s.to_string();
    }
    let mut out = String::with_capacity(s.len() + 8);
    for c in s.chars() {
        if dangerous(c) && c != '\n' && c != '\t' {
            push_escaped(&mut out, c);
        } else {
            out.push(c);
        }
    }
    out
}

/// A short, escaped excerpt of raw bytes (lossy UTF-8), at most `max` characters.
pub fn escape_excerpt(bytes: &[u8], max: usize) -> String {
    let head = &bytes[..bytes.len().min(max * 4)];
    let s = String::from_utf8_lossy(head);
    let cut: String = s.chars().take(max).collect();
    let more = s.chars().count() > max || head.len() < bytes.len();
    let mut e = escape_line(&cut);
    if more {
        e.push('…');
    }
    e
}

/// Number of characters (Unicode scalar values).
pub fn chars(s: &str) -> usize {
    // Count non-continuation bytes; faster than chars().count() on long ASCII text. Summed as
    // u8 per chunk of 255 bytes (it cannot overflow), which vectorizes 16+ bytes a step, where a
    // usize count took 4 (issue 20: `truncate-N` counts what it cuts off every result).
    s.as_bytes().chunks(255).map(|c| usize::from(c.iter().map(|&b| u8::from((b as i8) >= -0x40)).sum::<u8>())).sum()
}

/// Groups digits by thousands: 41220 → "41,220".
pub fn thousands(n: u64) -> String {
    let s = n.to_string();
    let mut out = String::with_capacity(s.len() + s.len() / 3);
    for (i, ch) in s.chars().enumerate() {
        if i > 0 && (s.len() - i) % 3 == 0 {
            out.push(',');
        }
        out.push(ch);
    }
    out
}

/// A count and its noun, the number grouped and the noun plural unless the count is one:
/// `count(1, "turn", "turns")` → "1 turn", `count(22190, "block", "blocks")` → "22,190 blocks".
pub fn count(n: usize, one: &str, many: &str) -> String {
    format!("{} {}", thousands(n as u64), if n == 1 { one } else { many })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn escapes_ansi_osc_and_cr() {
        let s = "ok\x1b[31mred\x1b]52;c;aGk=\x07\rX\u{202e}";
        let e = escape_block(s);
        assert!(!e.chars().any(|c| c.is_control() && c != '\n'));
        assert_eq!(e, "ok\\e[31mred\\e]52;c;aGk=\\x07\\rX\\u{202e}");
        assert_eq!(escape_line("a\nb"), "a\\nb");
        assert_eq!(escape_block("a\nb\tc"), "a\nb\tc");
    }

    #[test]
    fn counts_chars() {
        assert_eq!(chars("héllo…"), 6);
        // Across the 255-byte chunks, multi-byte characters straddling their edges included.
        for n in [254, 255, 256, 1000] {
            for pre in ["", "a", "ab"] {
                let s = format!("{pre}{}", "é€😀x".repeat(n));
                assert_eq!(chars(&s), s.chars().count());
            }
        }
        assert_eq!(chars(&" ".repeat(100_000)), 100_000);
    }

    #[test]
    fn excerpt_is_short_and_safe() {
        let e = escape_excerpt(b"\x1b[2J\xff\xfe abc", 5);
        assert!(!e.contains('\x1b'));
        assert!(e.ends_with('…'));
    }
}
