//! Tables that fit the terminal: numbers right-aligned and never wrapped; when the table is
//! wider than the terminal, low-value columns are dropped (highest `drop` first, like ccusage's
//! compact mode), then the widest text column is cut with `…` — or, for a column of names
//! ([`Column::name`]: session paths and keys a user copies) or of prose ([`Column::prose`]:
//! causes, messages, model lists), wrapped onto more lines whole.
//!
//! The table is streamed (issue 31: `usage` over 50,000 transcripts took 358 MiB, comfy-table
//! holding every cell): the rows come from a source that can be read more than once
//! ([`fit_to`]); one pass measures each column, then comfy-table lays out [`CHUNK`] rows at a time
//! with the measured widths fixed, so every chunk's lines are the whole table's lines and memory
//! holds one chunk, not the table.

use std::io::{self, Write};

use comfy_table::{presets, CellAlignment, ColumnConstraint, ContentArrangement, Table, Width};

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

/// Rows laid out by one comfy-table at a time.
pub const CHUNK: usize = 512;

/// A source of rows that can be read more than once: calls its argument with each row in order.
pub type RowSource<'a> = &'a dyn Fn(&mut dyn FnMut(Vec<String>));

/// A cut or wrap of one column to a width, applied to every cell of it, in order ([`shrink`]).
#[derive(Debug, Clone, Copy)]
struct Edit {
    col: usize,
    target: usize,
}

/// One table's choices so far: the columns kept and the edits made.
struct Shape<'a> {
    columns: &'a [Column],
    keep: Vec<usize>,
    edits: Vec<Edit>,
    layout: Layout,
}

impl Shape<'_> {
    /// `row` with every edit applied.
    fn edited(&self, mut row: Vec<String>) -> Vec<String> {
        for e in &self.edits {
            if let Some(c) = row.get_mut(e.col) {
                *c = if self.columns[e.col].wrap { wrap(c, e.target) } else { cut(c, e.target, self.layout.ascii) };
            }
        }
        row
    }

    /// A comfy-table of `rows` over the kept columns, with the header or without, each column
    /// fixed to `widths` (content widths, by column index) when given.
    fn table(&self, rows: &[Vec<String>], header: bool, widths: Option<&[u16]>) -> Table {
        let mut t = Table::new();
        t.load_preset(if self.layout.ascii { presets::ASCII_FULL_CONDENSED } else { presets::UTF8_FULL_CONDENSED });
        t.set_content_arrangement(ContentArrangement::Disabled);
        if header {
            t.set_header(self.keep.iter().map(|&i| self.columns[i].header));
        }
        for r in rows {
            t.add_row(self.keep.iter().map(|&i| r.get(i).cloned().unwrap_or_default()));
        }
        if let Some(w) = widths {
            t.set_constraints(
                self.keep.iter().map(|&i| ColumnConstraint::Absolute(Width::Fixed(w[i].saturating_add(2)))),
            );
        }
        for (ci, &i) in self.keep.iter().enumerate() {
            if self.columns[i].numeric {
                if let Some(c) = t.column_mut(ci) {
                    c.set_cell_alignment(CellAlignment::Right);
                }
            }
        }
        t
    }

    /// Each edited row of `rows`, in chunks of [`CHUNK`].
    fn chunks(&self, rows: RowSource, f: &mut dyn FnMut(&[Vec<String>], bool)) {
        let mut buf = Vec::with_capacity(CHUNK.min(64));
        let mut first = true;
        rows(&mut |r| {
            buf.push(self.edited(r));
            if buf.len() == CHUNK {
                f(&buf, first);
                first = false;
                buf.clear();
            }
        });
        if !buf.is_empty() || first {
            f(&buf, first);
        }
    }

    /// Per column index: comfy-table's content width (header included) and the widest cell's
    /// visible width (rows only, for [`shrink`]).
    fn measure(&self, rows: RowSource) -> (Vec<u16>, Vec<usize>) {
        let (mut comfy, mut widest) = (vec![0u16; self.columns.len()], vec![0usize; self.columns.len()]);
        self.chunks(rows, &mut |chunk, _| {
            for (ci, w) in self.table(chunk, true, None).column_max_content_widths().into_iter().enumerate() {
                let i = self.keep[ci];
                comfy[i] = comfy[i].max(w);
            }
            for r in chunk {
                for &i in &self.keep {
                    widest[i] = widest[i].max(r.get(i).map_or(0, |c| width_of(c)));
                }
            }
        });
        (comfy, widest)
    }

    /// The table's lines in order (no line ends), laid out a chunk at a time with `widths`.
    fn lines(&self, rows: RowSource, widths: &[u16], out: &mut dyn FnMut(&str) -> io::Result<()>) -> io::Result<()> {
        let mut bottom = String::new();
        let mut result = Ok(());
        self.chunks(rows, &mut |chunk, first| {
            if result.is_err() {
                return;
            }
            let text = self.table(chunk, first, Some(widths)).to_string();
            let mut lines: Vec<&str> = text.lines().collect();
            // Every chunk but the first lacks the top border and header; all but the last, the bottom.
            if let Some(last) = lines.pop() {
                bottom = last.to_string();
            }
            result = lines.iter().skip(usize::from(!first)).try_for_each(|l| out(l));
        });
        result?;
        out(&bottom)
    }

    /// The widest line of the table laid out with `widths`.
    fn width(&self, rows: RowSource, widths: &[u16]) -> usize {
        let mut w = 0;
        let _ = self.lines(rows, widths, &mut |l| {
            w = w.max(visible(l));
            Ok(())
        });
        w
    }
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

/// The one colour sequence that opens `s` when it styles the whole of `s` (`ESC[2m…ESC[0m`, as
/// `style::Paint` writes it), so a cut or wrapped cell can keep it on every line.
fn whole_style(s: &str) -> Option<&str> {
    let body = s.strip_suffix("\x1b[0m")?;
    let end = body.strip_prefix("\x1b[")?.find('m')? + 3;
    (!body[end..].contains('\x1b')).then(|| &body[..end])
}

/// `lines` (joined by newlines), each in `style` when there is one.
fn restyle(lines: &str, style: Option<&str>) -> String {
    match style {
        None => lines.to_string(),
        Some(code) => lines.split('\n').map(|l| format!("{code}{l}\x1b[0m")).collect::<Vec<_>>().join("\n"),
    }
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
    // A cut cell keeps a colour that styles all of it; any other loses its colour rather than a
    // sequence's end.
    let style = whole_style(s);
    let plain = strip_ansi(s);
    let s = plain.as_str();
    let len = s.chars().count();
    let keep = n.saturating_sub(1);
    let head = keep.div_ceil(2);
    let mut out: String = s.chars().take(head).collect();
    out.push(if ascii { '~' } else { '…' });
    out.extend(s.chars().skip(len - (keep - head)));
    restyle(&out, style)
}

/// `s` on lines of at most `n` characters, each break after a `/`, `-`, `_` or space when
/// one is in the last half of the line (else mid-word): every character kept, in order.
fn wrap(s: &str, n: usize) -> String {
    if width_of(s) <= n || n == 0 {
        return s.to_string();
    }
    let style = whole_style(s);
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
    restyle(&lines.join("\n"), style)
}

/// The cut (or wrap) of the widest text column by the `over` characters the table is too wide,
/// to no less than `floor`; `None` when there is nothing to cut.
fn shrink(s: &Shape, widest: &[usize], over: usize, floor: usize) -> Option<Edit> {
    let (w, cur) = s
        .keep
        .iter()
        .copied()
        .filter(|&i| !s.columns[i].numeric)
        .map(|i| (i, widest[i]))
        .max_by_key(|&(i, w)| (w, std::cmp::Reverse(i)))?;
    let target = cur.saturating_sub(over).max(floor).max(s.columns[w].header.chars().count());
    (target < cur).then_some(Edit { col: w, target })
}

/// The table of `rows` (one cell per column) fitted to `layout` (see [`fit_to`]), as a string.
pub fn fit(columns: &[Column], rows: &[Vec<String>], layout: Layout) -> String {
    let mut out = Vec::new();
    let source = |f: &mut dyn FnMut(Vec<String>)| rows.iter().for_each(|r| f(r.clone()));
    fit_to(columns, &source, layout, &mut out).expect("writing to memory does not fail");
    String::from_utf8(out).expect("the table of UTF-8 cells is UTF-8")
}

/// Writes the table of the rows of `rows` (read several times: measured, then written) fitted to
/// `layout`, lines separated by `\n` with none after the last: first the widest text column is
/// cut to no less than 40 characters, then low-value columns go, then text is cut to 8. Holds
/// at most [`CHUNK`] rows at a time.
pub fn fit_to(columns: &[Column], rows: RowSource, layout: Layout, out: &mut dyn Write) -> io::Result<()> {
    let mut s = Shape { columns, keep: (0..columns.len()).collect(), edits: Vec::new(), layout };
    let (mut comfy, mut widest) = s.measure(rows);
    if let Some(limit) = layout.width {
        let mut width = s.width(rows, &comfy);
        for floor in [40, 0] {
            while width > limit {
                let Some(e) = shrink(&s, &widest, width - limit, floor.max(8)) else { break };
                s.edits.push(e);
                (comfy, widest) = s.measure(rows);
                width = s.width(rows, &comfy);
            }
            if floor == 0 {
                break;
            }
            while width > limit {
                let Some(&victim) =
                    s.keep.iter().filter(|&&i| columns[i].drop > 0).max_by_key(|&&i| (columns[i].drop, i))
                else {
                    break;
                };
                s.keep.retain(|&i| i != victim);
                width = s.width(rows, &comfy);
            }
        }
    }
    let mut first = true;
    s.lines(rows, &comfy, &mut |l| {
        if !std::mem::take(&mut first) {
            out.write_all(b"\n")?;
        }
        out.write_all(l.as_bytes())
    })
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

    /// The whole table through one comfy-table, as `fit` built it before it was streamed.
    fn whole(columns: &[Column], rows: &[Vec<String>], ascii: bool) -> String {
        let s = Shape {
            columns,
            keep: (0..columns.len()).collect(),
            edits: Vec::new(),
            layout: Layout { width: None, ascii },
        };
        s.table(rows, true, None).to_string()
    }

    fn many_rows(n: usize) -> Vec<Vec<String>> {
        (0..n)
            .map(|i| {
                let name = if i % 97 == 0 {
                    format!("projects/p/{}-long/name/ü/{i}.jsonl", "x".repeat(i % 50))
                } else {
                    format!("s{i}")
                };
                vec![name, format!("{}", i * 1_234), if i % 3 == 0 { "a\nb".into() } else { String::new() }]
            })
            .collect()
    }

    /// Laid out a chunk at a time with the measured widths fixed, the table is byte for byte the
    /// table comfy-table lays out whole (several chunks, multi-line and non-ASCII cells).
    #[test]
    fn chunked_table_is_the_whole_table() {
        let cols = [Column::name("session", 0), Column::number("tokens", 0), Column::text("note", 1)];
        for n in [0, 1, CHUNK - 1, CHUNK, CHUNK + 1, 3 * CHUNK + 7] {
            let rows = many_rows(n);
            for ascii in [false, true] {
                assert_eq!(fit(&cols, &rows, Layout { width: None, ascii }), whole(&cols, &rows, ascii), "{n} rows");
            }
        }
    }

    /// Issue 31: the table held every cell of every row (50,000 sessions under `usage`: 358 MiB).
    /// Streamed, it reads at most one chunk ahead of what it has written, whatever the row count
    /// and whether it cuts or drops columns to fit.
    #[test]
    fn regression_usage_table_held_every_cell() {
        use std::cell::Cell;
        let cols = [Column::name("session", 0), Column::number("tokens", 0), Column::text("note", 1)];
        let rows = many_rows(5 * CHUNK);
        let made = Cell::new(0usize);
        let source = |f: &mut dyn FnMut(Vec<String>)| {
            made.set(0);
            for r in &rows {
                made.set(made.get() + 1);
                f(r.clone());
            }
        };
        /// Records, for each line written, how many rows the source had made by then.
        struct Probe<'a>(&'a Cell<usize>, Vec<usize>, usize);
        impl Write for Probe<'_> {
            fn write(&mut self, b: &[u8]) -> io::Result<usize> {
                self.2 += b.iter().filter(|&&c| c == b'\n').count();
                self.1.push(self.0.get());
                Ok(b.len())
            }
            fn flush(&mut self) -> io::Result<()> {
                Ok(())
            }
        }
        for width in [None, Some(30)] {
            let mut p = Probe(&made, Vec::new(), 0);
            fit_to(&cols, &source, Layout { width, ascii: true }, &mut p).unwrap();
            // Line k of the output (header: 3 lines) was written when at most k + CHUNK rows were made.
            assert!(p.2 >= rows.len(), "{width:?}: every row written ({} lines)", p.2);
            let mut lines = 0usize;
            for (k, &m) in p.1.iter().enumerate().step_by(2) {
                lines = lines.max(k / 2);
                assert!(m <= lines + CHUNK + 1, "{width:?}: {m} rows made by line {lines}");
            }
            assert_eq!(p.1[0], CHUNK, "{width:?}: the first line is written after one chunk, not the table");
        }
    }

    /// A cell coloured as a whole (a dim side session, a red error) keeps its colour on every line
    /// when wrapped and when cut; a cell with several colours loses them rather than cut one.
    #[test]
    fn a_wholly_coloured_cell_keeps_its_colour_when_wrapped_or_cut() {
        let dim = "\x1b[2m  └ projects/demo/d597cea3/subagents/agent-a8abcfd.jsonl (subagent)\x1b[0m";
        let wrapped = wrap(dim, 20);
        assert!(wrapped.lines().count() > 1);
        for l in wrapped.lines() {
            assert!(l.starts_with("\x1b[2m") && l.ends_with("\x1b[0m"), "{l:?}");
            assert!(visible(l) <= 20, "{l:?}");
        }
        assert_eq!(strip_ansi(&wrapped).replace('\n', ""), strip_ansi(dim));
        let short = cut(dim, 21, false);
        assert!(short.starts_with("\x1b[2m") && short.ends_with("\x1b[0m") && visible(&short) == 21, "{short:?}");
        let two = "\x1b[1ma\x1b[0m and \x1b[2mbbbbbbbbbbbbbbbbbbbbbbbbbbbbbb\x1b[0m";
        assert!(!cut(two, 10, false).contains('\x1b'));
    }

    #[test]
    fn colour_sequences_take_no_width() {
        let cols = [Column::text("name", 0), Column::text("what", 0)];
        let rows = vec![vec!["a".to_string(), "\x1b[33mprefix rewritten at block 4 (call_9): truncated\x1b[0m".into()]];
        let plain = fit(&cols, &rows, Layout { width: Some(60), ascii: true });
        assert!(plain.contains("\x1b[33mprefix"), "fits uncut: {plain}");
        let narrow = fit(&cols, &rows, Layout { width: Some(30), ascii: true });
        assert!(narrow.contains("\x1b[33m"), "a wholly coloured cell keeps its colour: {narrow:?}");
        assert_eq!(narrow.matches("\x1b[33m").count(), narrow.matches("\x1b[0m").count(), "every line closes it");
        assert!(width_of(&narrow) <= 30, "{narrow}");
    }
}
