//! What every part of the page shares: [`escape`] (every journal string goes through it), the
//! series colours and dashes, the `n/a`, money-tick and signed formats, a verdict's colour.

use crate::render::format::thousands;
use ctxj_core::report::Decision;
use ctxj_core::text::escape_block;

/// HTML-escapes `s` for text content and for quoted attribute values (`&`, `<`, `>`, `"`, `'`).
/// Control characters other than newline and tab, and bidi overrides, are first made visible
/// (`\e`, `\x07`, `\u{202e}`, …) as in the terminal renderers, so a page shows what a journal
/// holds rather than what it pretends to hold.
pub fn escape(s: &str) -> String {
    let s = escape_block(s);
    let mut out = String::with_capacity(s.len() + 16);
    for c in s.chars() {
        match c {
            '&' => out.push_str("&amp;"),
            '<' => out.push_str("&lt;"),
            '>' => out.push_str("&gt;"),
            '"' => out.push_str("&quot;"),
            '\'' => out.push_str("&#39;"),
            c => out.push(c),
        }
    }
    out
}

/// Series colours, by strategy index (cycled, with a dash pattern after the first round).
pub(super) const COLORS: [&str; 8] =
    ["#0969da", "#cf222e", "#1a7f37", "#bf8700", "#8250df", "#0a7f8c", "#bc4c00", "#6e7781"];

pub(super) fn color(i: usize) -> &'static str {
    COLORS[i % COLORS.len()]
}

pub(super) fn dash(i: usize) -> &'static str {
    if i >= COLORS.len() {
        " stroke-dasharray=\"8 3\""
    } else {
        ""
    }
}

pub(super) fn money_tick(v: f64) -> String {
    if v == 0.0 {
        "$0".to_string()
    } else if v < 0.1 {
        format!("${v:.3}")
    } else if v < 10.0 {
        format!("${v:.2}")
    } else {
        format!("${v:.0}")
    }
}

pub(super) fn opt<T>(v: Option<T>, f: impl Fn(T) -> String) -> String {
    v.map(f).unwrap_or_else(|| "n/a".to_string())
}

pub(super) fn signed(v: i64) -> String {
    if v < 0 {
        format!("−{}", thousands(v.unsigned_abs()))
    } else {
        thousands(v as u64)
    }
}

pub(super) fn verdict_class(d: &Decision) -> (&'static str, &'static str) {
    match d.verdict.as_ref().map(|v| v.level.as_str()) {
        Some("ok") => ("v-ok", "#1a7f37"),
        Some("warning") => ("v-warning", "#bf8700"),
        Some(_) => ("v-error", "#cf222e"),
        None => ("v-none", "#6e7781"),
    }
}
