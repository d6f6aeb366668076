//! Tables that fit the terminal: numbers right-aligned and never wrapped; when the table is
//! wider than the terminal, low-value columns are dropped (highest `drop` first, like ccusage's
//! compact mode), then the widest text column is cut with `…` — or, for a column of names
//! ([`Column::name`]: session paths and keys a user copies) or of prose ([`Column::prose`]:
//! causes, messages, model lists), wrapped onto more lines whole.

use comfy_table::{presets, CellAlignment, ContentArrangement, Table};

/// One column: its header, whether it holds numbers (right-aligned), and when it goes
/// (0 = never; higher numbers are dropped first).
#[derive(Debug, Clone, Copy)]
pub struct Column {
    pub header: &'static str,
    pub numeric: bool,
    pub drop: u8,
    /// Wrapped, never cut: a name must stay whole to be given back to a command.
    pub wrap: bool,
}

impl Column {
    pub const fn text(header: &'static str, drop: u8) -> Column {
        Column { header, numeric: false, drop, wrap: false }
    }
    pub const fn number(header: &'static str, drop: u8) -> Column {
        Column { header, numeric: true, drop, wrap: false }
    }
    /// A column of names (session paths, keys): wrapped onto more lines when too wide, not cut.
    pub const fn name(header: &'static str, drop: u8) -> Column {
        Column { header, numeric: false, drop, wrap: true }
    }
    /// A column of prose (a break's cause, an audit message, model lists): wrapped at spaces and
    /// dashes when too wide, never cut — a cut sentence loses its meaning and two cut model names
    /// can read the same (issue 32).
    pub const fn prose(header: &'static str, drop: u8) -> Column {
        Column { header, numeric: false, drop, wrap: true }
    }
}

/// Border style: box-drawing characters, or `--ascii`.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct Layout {
    /// Terminal width in columns (`None`: no limit).
    pub width: Option<usize>,
    pub ascii: bool,
}

fn build(columns: &[Column], keep: &[usize], rows: &[Vec<String>], layout: Layout) -> String {
    let mut t = Table::new();
    t.load_preset(if layout.ascii { presets::ASCII_FULL_CONDENSED } else { presets::UTF8_FULL_CONDENSED });
    t.set_content_arrangement(ContentArrangement::Disabled);
    t.set_header(keep.iter().map(|&i| columns[i].header));
    for r in rows {
        t.add_row(keep.iter().map(|&i| r.get(i).cloned().unwrap_or_default()));
    }
    for (ci, &i) in keep.iter().enumerate() {
        if columns[i].numeric {
            if let Some(c) = t.column_mut(ci) {
                c.set_cell_alignment(CellAlignment::Right);
            }
        }
    }
    t.to_string()
}

/// `s` without its ANSI colour sequences (`ESC [ … m`).
fn strip_ansi(s: &str) -> String {
    let mut out = String::with_capacity(s.len());
    let mut it = s.chars();
    while let Some(c) = it.next() {
        if c == '\x1b' {
            it.by_ref().find(|&c| c == 'm');
        } else {
            out.push(c);
        }
    }
    out
}

/// Characters a terminal shows for `s` (colour sequences take none).
fn visible(s: &str) -> usize {
    if s.contains('\x1b') {
        strip_ansi(s).chars().count()
    } else {
        s.chars().count()
    }
}

fn width_of(s: &str) -> usize {
    s.lines().map(visible).max().unwrap_or(0)
}

/// Cuts `s` to `n` characters in the middle, so both a path's start and its file name stay,
/// marked `…` (`~` with ASCII borders).
fn cut(s: &str, n: usize, ascii: bool) -> String {
    if visible(s) <= n {
        return s.to_string();
    }
    // A cut cell loses its colour rather than a sequence's end.
    let plain = strip_ansi(s);
    let s = plain.as_str();
    let len = s.chars().count();
    let keep = n.saturating_sub(1);
    let head = keep.div_ceil(2);
    let mut out: String = s.chars().take(head).collect();
    out.push(if ascii { '~' } else { '…' });
    out.extend(s.chars().skip(len - (keep - head)));
    out
}

/// `s` on lines of at most `n` characters, each break after a `/`, `-`, `_` or space when
/// one is in the last half of the line (else mid-word): every character kept, in order.
fn wrap(s: &str, n: usize) -> String {
    if width_of(s) <= n || n == 0 {
        return s.to_string();
    }
    let plain = strip_ansi(s);
    let mut lines = Vec::new();
    for line in plain.lines() {
        let mut rest: Vec<char> = line.chars().collect();
        while rest.len() > n {
            let at = (n / 2..n).rev().find(|&i| matches!(rest[i], '/' | '-' | '_' | ' ')).map_or(n, |i| i + 1);
            lines.push(rest.drain(..at).collect::<String>());
        }
        lines.push(rest.into_iter().collect());
    }
    lines.join("\n")
}

/// The widest text column of `keep` and its width.
fn widest_text(columns: &[Column], keep: &[usize], rows: &[Vec<String>]) -> Option<(usize, usize)> {
    keep.iter()
        .copied()
        .filter(|&i| !columns[i].numeric)
        .map(|i| (i, rows.iter().map(|r| r.get(i).map_or(0, |c| width_of(c))).max().unwrap_or(0)))
        .max_by_key(|&(i, w)| (w, std::cmp::Reverse(i)))
}

/// `rows` with the widest text column cut by the `over` characters it is too wide, to no less
/// than `floor`; `None` when there is nothing to cut.
fn shrink(
    columns: &[Column],
    keep: &[usize],
    rows: &[Vec<String>],
    over: usize,
    floor: usize,
    ascii: bool,
) -> Option<Vec<Vec<String>>> {
    let (w, cur) = widest_text(columns, keep, rows)?;
    let target = cur.saturating_sub(over).max(floor).max(columns[w].header.chars().count());
    (target < cur).then(|| {
        rows.iter()
            .map(|r| {
                r.iter()
                    .enumerate()
                    .map(|(i, c)| match (i == w, columns[w].wrap) {
                        (true, true) => wrap(c, target),
                        (true, false) => cut(c, target, ascii),
                        _ => c.clone(),
                    })
                    .collect()
            })
            .collect()
    })
}

/// The table of `rows` (one cell per column) fitted to `layout`: first the widest text column is
/// cut to no less than 40 characters, then low-value columns go, then text is cut to 8.
pub fn fit(columns: &[Column], rows: &[Vec<String>], layout: Layout) -> String {
    let mut keep: Vec<usize> = (0..columns.len()).collect();
    let mut rows = rows.to_vec();
    let mut text = build(columns, &keep, &rows, layout);
    let Some(limit) = layout.width else { return text };
    let over = |t: &str| width_of(t).saturating_sub(limit);
    for floor in [40, 0] {
        while over(&text) > 0 {
            let Some(r) = shrink(columns, &keep, &rows, over(&text), floor.max(8), layout.ascii) else { break };
            rows = r;
            text = build(columns, &keep, &rows, layout);
        }
        if floor == 0 {
            break;
        }
        while over(&text) > 0 {
            let Some(&victim) = keep.iter().filter(|&&i| columns[i].drop > 0).max_by_key(|&&i| (columns[i].drop, i))
            else {
                break;
            };
            keep.retain(|&i| i != victim);
            text = build(columns, &keep, &rows, layout);
        }
    }
    text
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Issue 32: at 80–100 columns the cause of a cache break was cut from `turns` (and audit
    /// messages, model lists): the meaning went with the cut. Prose columns wrap and keep it all.
    #[test]
    fn regression_prose_is_wrapped_not_cut_at_narrow_widths() {
        let cols = [Column::number("turn", 0), Column::prose("change against the previous request", 0)];
        let why =
            "prefix diverged at block 12 (result c7): the strategy elided it; the provider re-reads 41,220 tokens";
        let rows = vec![vec!["14".to_string(), why.to_string()]];
        let t = fit(&cols, &rows, Layout { width: Some(60), ascii: true });
        assert!(t.lines().all(|l| l.chars().count() <= 60), "{t}");
        assert!(!t.contains('~') && !t.contains('…'), "nothing cut: {t}");
        let words: Vec<&str> = why.split(' ').collect();
        assert!(words.iter().all(|w| t.contains(w)), "every word kept: {t}");
    }

    #[test]
    fn drops_low_value_columns_first_and_keeps_numbers_whole() {
        let cols = [Column::text("name", 0), Column::number("tokens", 0), Column::number("extra", 1)];
        let rows = vec![vec!["a-very-long-session-name".to_string(), "1,234,567".into(), "99".into()]];
        let wide = fit(&cols, &rows, Layout { width: None, ascii: true });
        assert!(wide.contains("extra"));
        let narrow = fit(&cols, &rows, Layout { width: Some(30), ascii: true });
        assert!(!narrow.contains("extra"), "{narrow}");
        assert!(narrow.contains("1,234,567"));
        assert!(width_of(&narrow) <= 30, "{narrow}");
        assert!(narrow.contains('~'));
        assert!(narrow.lines().all(|l| l.is_ascii()));
    }

    /// Bug: session names were cut in the middle (`projects/claude-code…d-011d40f70b2a.jsonl`)
    /// even at 200 columns, so the name shown could not be given back to a command.
    #[test]
    fn regression_names_were_cut_in_the_middle() {
        let cols = [Column::name("session", 0), Column::number("cost", 0)];
        let name = "projects/claude-code-viewer/1f3e7a2b-8c1d-4f7e-9ccd-011d40f70b2a.jsonl";
        let rows = vec![vec![name.to_string(), "$0.09".into()]];
        let narrow = fit(&cols, &rows, Layout { width: Some(40), ascii: true });
        assert!(width_of(&narrow) <= 40, "{narrow}");
        assert!(!narrow.contains('~'), "{narrow}");
        let cells: String = narrow
            .lines()
            .filter_map(|l| l.strip_prefix("| "))
            .map(|l| l.split(" |").next().unwrap_or("").trim_end())
            .collect();
        assert!(cells.contains(name), "the name whole, in order: {narrow}");
    }

    #[test]
    fn colour_sequences_take_no_width() {
        let cols = [Column::text("name", 0), Column::text("what", 0)];
        let rows = vec![vec!["a".to_string(), "\x1b[33mprefix rewritten at block 4 (call_9): truncated\x1b[0m".into()]];
        let plain = fit(&cols, &rows, Layout { width: Some(60), ascii: true });
        assert!(plain.contains("\x1b[33mprefix"), "fits uncut: {plain}");
        let narrow = fit(&cols, &rows, Layout { width: Some(30), ascii: true });
        assert!(!narrow.contains('\x1b'), "a cut cell loses its colour whole: {narrow:?}");
        assert!(width_of(&narrow) <= 30, "{narrow}");
    }
}
