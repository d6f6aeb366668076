//! The output of `ctxj diff`: a summary line, the blocks only on one side and the changed ones,
//! then a unified diff of the rendered views; or all of it as JSON.

use serde::Serialize;
use std::time::{Duration, Instant};

use similar::TextDiff;

use crate::render::format::{signed_thousands, thousands};
use crate::render::projection::{write_view, Plain};
use crate::render::style::Paint;
use ctxj_core::projection::Block;
use ctxj_core::strategy::view::Entry;
use ctxj_core::strategy::{View, ViewDiff};
use ctxj_core::text::escape_line;

/// Rendered lines (both sides together) above which `diff` compares only the blocks that differ,
/// unless `--full` is given.
pub const TEXT_DIFF_LINES: usize = 20_000;
/// Lines of one block's rendered text that the bounded diff compares at most.
pub const BLOCK_DIFF_LINES: usize = 2_000;
/// How long the line diff searches for a minimal diff; past it the diff is still correct, only
/// longer than it could be. `--full` does not lift it.
pub const DIFF_DEADLINE: Duration = Duration::from_secs(5);

/// A unified diff of two views, and what was left out of it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct TextDiffOut {
    pub diff: String,
    /// Set when the diff covers only the differing blocks (the size cap): what it covers and how
    /// to get everything.
    pub note: Option<String>,
}

fn render(v: &View) -> String {
    let mut s = String::new();
    write_view(&mut s, v, &Plain, false, None);
    s
}

/// Lines of `b` as [`write_view`] renders it (a header, the text's lines, one per call, one for
/// the tool schemas), counted without rendering it: deciding whether a diff is too long must not
/// build two copies of a long session's whole request (issue 15: 941 MiB at 20,000 turns).
fn block_lines(b: &Block) -> usize {
    let text = b.text();
    let body = if text.is_empty() { 0 } else { memchr::memchr_iter(b'\n', text.as_bytes()).count() + 1 };
    let extra = match b {
        Block::Assistant { calls, .. } => calls.len(),
        Block::System { tools: Some(_), .. } => 1,
        _ => 0,
    };
    1usize.saturating_add(body).saturating_add(extra)
}

fn view_lines(v: &View) -> usize {
    v.blocks.iter().map(block_lines).fold(0, usize::saturating_add)
}

/// The blocks of `v` at `idx` (in order) rendered, each cut at [`BLOCK_DIFF_LINES`] lines;
/// whether any was cut.
fn render_blocks(v: &View, idx: &[usize]) -> (String, bool) {
    let mut out = String::new();
    let mut cut = false;
    for &i in idx {
        let one = View { label: String::new(), blocks: vec![v.blocks[i].clone()], origins: vec![v.origins[i]] };
        let text = render(&one);
        let mut lines = text.split_inclusive('\n');
        for line in lines.by_ref().take(BLOCK_DIFF_LINES) {
            out.push_str(line);
        }
        let more = lines.count();
        if more > 0 {
            cut = true;
            out.push_str(&format!("… {} more lines of this block not diffed (--full)\n", thousands(more as u64)));
        }
    }
    (out, cut)
}

fn unified(a: &str, b: &str, l: &View, r: &View) -> String {
    TextDiff::configure()
        .deadline(Instant::now() + DIFF_DEADLINE)
        .diff_lines(a, b)
        .unified_diff()
        .context_radius(3)
        .header(&escape_line(&l.label), &escape_line(&r.label))
        .to_string()
}

/// The differing blocks, in order: (left index, right index) of changed pairs, removed blocks
/// (left only) and added ones (right only), taken while both sides stay within
/// [`TEXT_DIFF_LINES`] rendered lines (each block counted at most [`BLOCK_DIFF_LINES`]); and how
/// many differing blocks there are in all.
fn differing(l: &View, r: &View) -> (Vec<usize>, Vec<usize>, usize, usize) {
    let m = ctxj_core::projection::diff::match_blocks(&l.blocks, &r.blocks);
    let mut items: Vec<(Option<usize>, Option<usize>)> =
        m.changed().into_iter().map(|(a, b)| (Some(a), Some(b))).collect();
    items.extend(m.removed.iter().map(|&a| (Some(a), None)));
    items.extend(m.added().map(|b| (None, Some(b))));
    // In request order: by the right side's position, removed blocks where they stood on the left.
    items.sort_by_key(|&(a, b)| (b.or(a).unwrap_or(0), b.is_some()));
    let all = items.len();
    let lines = |v: &View, i: Option<usize>| i.map_or(0, |i| block_lines(&v.blocks[i]).min(BLOCK_DIFF_LINES + 1));
    let (mut left, mut right, mut budget) = (Vec::new(), Vec::new(), 0usize);
    let mut shown = 0;
    for (a, b) in items {
        let need = lines(l, a).max(lines(r, b));
        if shown > 0 && budget.saturating_add(need) > TEXT_DIFF_LINES {
            break;
        }
        budget = budget.saturating_add(need);
        left.extend(a);
        right.extend(b);
        shown += 1;
    }
    left.sort_unstable();
    right.sort_unstable();
    (left, right, shown, all)
}

/// The unified diff of the two views rendered as text (block numbers left out, so a dropped block
/// does not renumber the rest).
///
/// Bounded unless `full`: when the two requests hold more than [`TEXT_DIFF_LINES`] lines
/// (counted per block, without rendering them), only the blocks that differ (matched by
/// identity, [`ctxj_core::projection::diff::match_blocks`]) are diffed, each cut at
/// [`BLOCK_DIFF_LINES`] lines, in request order until [`TEXT_DIFF_LINES`] lines per side, and
/// the note says so. The line diff always stops searching for a minimal diff after
/// [`DIFF_DEADLINE`].
pub fn text_diff(l: &View, r: &View, full: bool) -> TextDiffOut {
    let lines = view_lines(l).saturating_add(view_lines(r));
    if full || lines <= TEXT_DIFF_LINES {
        let (a, b) = (render(l), render(r));
        return TextDiffOut { diff: unified(&a, &b, l, r), note: None };
    }
    let (left, right, shown, all) = differing(l, r);
    let ((a, cut_a), (b, cut_b)) = (render_blocks(l, &left), render_blocks(r, &right));
    let which = match (shown < all, all) {
        (true, _) => {
            format!("the first {} of the {} blocks that differ", thousands(shown as u64), thousands(all as u64))
        }
        (false, 1) => "the one block that differs".to_string(),
        (false, _) => format!("the {} blocks that differ", thousands(all as u64)),
    };
    let note = format!(
        "the two requests render to {} lines (more than {}): the text diff shows only {which}{}; --full diffs the whole requests",
        thousands(lines as u64),
        thousands(TEXT_DIFF_LINES as u64),
        if cut_a || cut_b { format!(", each cut at {} lines", thousands(BLOCK_DIFF_LINES as u64)) } else { String::new() }
    );
    TextDiffOut { diff: unified(&a, &b, l, r), note: Some(note) }
}

/// `ctxj diff --format json`: the two sides, the blocks only on one side and the changed ones,
/// and the unified diff (`null` with `--stat` or when equal).
#[derive(Debug, Clone, Serialize, schemars::JsonSchema)]
pub struct DiffDoc {
    /// `ctxj.diff/1`.
    pub schema: &'static str,
    #[serde(flatten)]
    pub blocks: ViewDiff,
    pub diff: Option<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub diff_note: Option<String>,
}

/// A row of `diff --format ndjson|csv`: one block that differs (the `--stat` lines).
#[derive(Debug, Clone, Serialize, schemars::JsonSchema)]
pub struct DiffRow {
    /// `only_left`, `only_right` or `changed`.
    pub change: &'static str,
    #[serde(flatten)]
    pub entry: Entry,
}

/// The document of `ctxj diff`.
pub fn doc(d: &ViewDiff, text_diff: Option<&TextDiffOut>) -> DiffDoc {
    DiffDoc {
        schema: "ctxj.diff/1",
        blocks: d.clone(),
        diff: text_diff.map(|t| t.diff.clone()),
        diff_note: text_diff.and_then(|t| t.note.clone()),
    }
}

/// The blocks that differ, in the `--stat` order: only left, only right, changed.
pub fn rows(d: &DiffDoc) -> Vec<DiffRow> {
    let tag = |change, v: &[Entry]| v.iter().map(move |e| DiffRow { change, entry: e.clone() }).collect::<Vec<_>>();
    let b = &d.blocks;
    [tag("only_left", &b.only_left), tag("only_right", &b.only_right), tag("changed", &b.changed)].concat()
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
pub fn text(d: &ViewDiff, text_diff: Option<&TextDiffOut>, paint: &Paint) -> String {
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
    if let Some(t) = text_diff {
        s.push('\n');
        if let Some(note) = &t.note {
            s.push_str(&paint.bold(&format!("note: {note}")));
            s.push('\n');
        }
        for line in t.diff.split_inclusive('\n') {
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
