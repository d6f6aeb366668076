//! The output of `ctxj diff`: a summary line, the blocks only on one side and the changed ones,
//! then a unified diff of the rendered views; or all of it as JSON.

use serde::Serialize;
use similar::TextDiff;

use crate::render::format::{signed_thousands, thousands};
use crate::render::projection::{write_view, Plain};
use crate::render::style::Paint;
use crate::strategy::view::{Entry, Side};
use crate::strategy::{View, ViewDiff};
use crate::text::escape_line;

/// The unified diff of the two views rendered as text (block numbers left out, so a dropped block
/// does not renumber the rest).
pub fn text_diff(l: &View, r: &View) -> String {
    let render = |v: &View| {
        let mut s = String::new();
        write_view(&mut s, v, &Plain, false, None);
        s
    };
    let (a, b) = (render(l), render(r));
    TextDiff::from_lines(&a, &b)
        .unified_diff()
        .context_radius(3)
        .header(&escape_line(&l.label), &escape_line(&r.label))
        .to_string()
}

#[derive(Serialize)]
struct Json<'a> {
    left: &'a Side,
    right: &'a Side,
    equal: bool,
    only_left: &'a [Entry],
    only_right: &'a [Entry],
    changed: &'a [Entry],
    diff: Option<&'a str>,
}

/// The JSON object of `ctxj diff --json` (one line, no newline).
pub fn json(d: &ViewDiff, text_diff: Option<&str>) -> serde_json::Result<String> {
    serde_json::to_string(&Json {
        left: &d.left,
        right: &d.right,
        equal: d.equal,
        only_left: &d.only_left,
        only_right: &d.only_right,
        changed: &d.changed,
        diff: text_diff,
    })
}

fn headline(d: &ViewDiff) -> String {
    let (l, r) = (&d.left, &d.right);
    format!(
        "{} ({}, {} chars) → {} ({}, {} chars): {} only left, {} only right, {} changed, {} chars",
        escape_line(&l.label),
        crate::render::format::count(l.blocks, "block", "blocks"),
        thousands(l.chars as u64),
        escape_line(&r.label),
        crate::render::format::count(r.blocks, "block", "blocks"),
        thousands(r.chars as u64),
        d.only_left.len(),
        d.only_right.len(),
        d.changed.len(),
        signed_thousands(r.chars as i64 - l.chars as i64)
    )
}

/// The human output of `ctxj diff`.
pub fn text(d: &ViewDiff, text_diff: Option<&str>, paint: &Paint) -> String {
    if d.equal {
        return format!(
            "identical: {} = {} · {} · {} chars\n",
            escape_line(&d.left.label),
            escape_line(&d.right.label),
            crate::render::format::count(d.left.blocks, "block", "blocks"),
            thousands(d.left.chars as u64)
        );
    }
    let mut s = paint.bold(&headline(d));
    s.push('\n');
    let chars = |x: Option<usize>| thousands(x.unwrap_or(0) as u64);
    for e in &d.only_left {
        let line = format!("- {} {} · {} chars", e.kind, escape_line(&e.id), chars(e.left_chars));
        s.push_str(&format!("  {}\n", paint.red(&line)));
    }
    for e in &d.only_right {
        let line = format!("+ {} {} · {} chars", e.kind, escape_line(&e.id), chars(e.right_chars));
        s.push_str(&format!("  {}\n", paint.green(&line)));
    }
    for e in &d.changed {
        let (a, b) = (e.left_chars.unwrap_or(0), e.right_chars.unwrap_or(0));
        let line = format!(
            "~ {} {} · {} → {} chars ({})",
            e.kind,
            escape_line(&e.id),
            thousands(a as u64),
            thousands(b as u64),
            signed_thousands(b as i64 - a as i64)
        );
        s.push_str(&format!("  {}\n", paint.yellow(&line)));
    }
    if let Some(diff) = text_diff {
        s.push('\n');
        for line in diff.split_inclusive('\n') {
            let line = line.trim_end_matches('\n');
            let styled = if line.starts_with("+++") || line.starts_with("---") {
                paint.bold(line)
            } else if line.starts_with('+') {
                paint.green(line)
            } else if line.starts_with('-') {
                paint.red(line)
            } else if line.starts_with("@@") {
                paint.cyan(line)
            } else {
                line.to_string()
            };
            s.push_str(&styled);
            s.push('\n');
        }
    }
    s
}
