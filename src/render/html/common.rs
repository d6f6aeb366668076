//! What every part of the page shares: [`escape`] (every journal string goes through it), the
//! series colours, dashes, markers and legend swatches, the `n/a`, money-tick and signed formats, a verdict's colour.

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

/// Series colours, by strategy index (cycled; each index also has its own dash pattern and
/// marker, so two series never look alike and one drawn over an identical one still shows).
pub(super) const COLORS: [&str; 8] =
    ["#0969da", "#cf222e", "#1a7f37", "#bf8700", "#8250df", "#0a7f8c", "#bc4c00", "#6e7781"];

/// Dash patterns by index (the first solid); 7 patterns against 8 colours, so colour, dash and
/// marker repeat together only after 56 series.
const DASHES: [&str; 7] = ["", "9 4", "3 3", "12 3 3 3", "6 2", "2 5", "14 4 2 4 2 4"];

pub(super) fn color(i: usize) -> &'static str {
    COLORS[i % COLORS.len()]
}

/// The ` stroke-dasharray` attribute of series `i` (empty for the solid first one).
pub(super) fn dash(i: usize) -> String {
    match DASHES[i % DASHES.len()] {
        "" => String::new(),
        d => format!(" stroke-dasharray=\"{d}\""),
    }
}

/// The marker of series `i` centred on (`x`, `y`): circle, square, triangle, diamond, inverted
/// triangle, plus, cross; `title` (already escaped) is its tooltip, when it has one.
pub(super) fn marker(i: usize, x: f64, y: f64, title: Option<&str>) -> String {
    let c = color(i);
    let tip = title.map_or_else(String::new, |t| format!("<title>{t}</title>"));
    let shape = |d: String| format!("<path class=\"mk\" d=\"{d}\" fill=\"{c}\" stroke=\"{c}\">{tip}</path>");
    match i % 7 {
        0 => format!("<circle class=\"mk\" cx=\"{x:.1}\" cy=\"{y:.1}\" r=\"3\" fill=\"{c}\">{tip}</circle>"),
        1 => shape(format!("M{:.1} {:.1}h6v6h-6z", x - 3.0, y - 3.0)),
        2 => shape(format!("M{x:.1} {:.1}l3.5 6h-7z", y - 3.5)),
        3 => shape(format!("M{x:.1} {:.1}l3.5 3.5l-3.5 3.5l-3.5 -3.5z", y - 3.5)),
        4 => shape(format!("M{x:.1} {:.1}l3.5 -6h-7z", y + 3.5)),
        5 => shape(format!("M{:.1} {y:.1}h8M{x:.1} {:.1}v8", x - 4.0, y - 4.0))
            .replace("<path", "<path stroke-width=\"2\""),
        _ => shape(format!("M{:.1} {:.1}l7 7M{:.1} {:.1}l-7 7", x - 3.5, y - 3.5, x + 3.5, y - 3.5))
            .replace("<path", "<path stroke-width=\"2\""),
    }
}

/// A legend swatch of series `i`: a short stretch of its line, dash and marker.
pub(super) fn swatch(i: usize) -> String {
    format!(
        "<svg class=\"sw\" width=\"30\" height=\"12\" viewBox=\"0 0 30 12\" aria-hidden=\"true\">\
<line x1=\"1\" y1=\"6\" x2=\"29\" y2=\"6\" stroke=\"{}\" stroke-width=\"2\"{}/>{}</svg>",
        color(i),
        dash(i),
        marker(i, 15.0, 6.0, None)
    )
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
