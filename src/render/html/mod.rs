//! Renders a [`ReportData`] as one self-contained HTML page.
//!
//! Inline CSS, inline SVG charts and one small inline script (allowed by its hash in the page's
//! Content-Security-Policy, which forbids every other script and every network load). Every
//! string that comes from the journal goes through [`escape`] — in text and in attribute values
//! alike — so a tool output holding `<script>` or `</style>` renders as text.
//!
//! Files by concern: [`common`] (escaping, colours), `assets.rs` (script and stylesheet), the
//! page's header and tables (`tables.rs`), the charts (`chart.rs`) and the turn browser
//! (`browser.rs`); this file assembles the page ([`write_page`]) and says what was written
//! ([`Written`]).

mod assets;
mod browser;
mod chart;
pub mod common;
mod tables;

use std::fmt::Write;

use base64::Engine as _;
use sha2::{Digest, Sha256};

use crate::render::format::thousands;
use ctxj_core::report::{ReportData, TurnView};

use assets::{SCRIPT, STYLE};
pub use browser::TurnChunks;
use browser::{browser, turn_view};
use chart::charts;
pub(crate) use chart::nice_step;
pub use common::escape;
use tables::{comparison, decisions, header};

/// Renders the whole page (the views from `d`).
pub fn render(d: &ReportData) -> String {
    let mut out = Vec::with_capacity(64 * 1024);
    // Writing to a Vec cannot fail, and every piece written is a `str`.
    let _ = write_page(&mut out, d, &mut InMemory(d));
    String::from_utf8(out).unwrap_or_default()
}

/// The views held in [`ReportData`] itself.
struct InMemory<'a>(&'a ReportData);

impl TurnChunks for InMemory<'_> {
    fn write(&mut self, s: usize, t: usize, h: &mut String) -> std::io::Result<()> {
        let st = &self.0.strategies[s];
        let k = st.views.partition_point(|v| v.turn < t);
        if let Some(v) = st.views.get(k).filter(|v| v.turn == t) {
            turn_view(h, &st.name, v);
        }
        Ok(())
    }
}

/// The turn browser's views rendered as they are built and kept in anonymous temporary files
/// (one per strategy, removed when dropped), so a long session's page is written to its file
/// piece by piece without the views or the page ever held whole in memory (issue 15).
pub struct Spill {
    names: Vec<String>,
    /// Per strategy: its file and where each view is in it.
    files: Vec<(std::fs::File, Vec<Spilled>)>,
    buf: String,
    /// The first write error, reported by [`Spill::finish`].
    err: Option<std::io::Error>,
}

/// A view in a [`Spill`] file: (turn, offset, length).
type Spilled = (usize, u64, usize);

impl Spill {
    /// A spill for the strategies `names`, in the order the report lists them.
    pub fn new(names: Vec<String>) -> std::io::Result<Spill> {
        let files = names.iter().map(|_| tempfile::tempfile().map(|f| (f, Vec::new()))).collect::<Result<_, _>>()?;
        Ok(Spill { names, files, buf: String::new(), err: None })
    }

    /// Renders strategy `s`'s view `v` into its file (views arrive in turn order).
    pub fn push(&mut self, s: usize, v: &TurnView) {
        use std::io::{Seek, SeekFrom, Write as _};
        let (Some((f, index)), Some(name), None) = (self.files.get_mut(s), self.names.get(s), &self.err) else {
            return;
        };
        self.buf.clear();
        turn_view(&mut self.buf, name, v);
        let r = f.seek(SeekFrom::End(0)).and_then(|at| f.write_all(self.buf.as_bytes()).map(|_| at));
        match r {
            Ok(at) => index.push((v.turn, at, self.buf.len())),
            Err(e) => self.err = Some(e),
        }
    }

    /// The first error writing the temporary files, if any.
    pub fn finish(&mut self) -> std::io::Result<()> {
        self.err.take().map_or(Ok(()), Err)
    }
}

impl TurnChunks for Spill {
    fn write(&mut self, s: usize, t: usize, h: &mut String) -> std::io::Result<()> {
        use std::io::{Read as _, Seek, SeekFrom};
        let Some((f, index)) = self.files.get_mut(s) else { return Ok(()) };
        let k = index.partition_point(|e| e.0 < t);
        let Some(&(_, at, len)) = index.get(k).filter(|e| e.0 == t) else { return Ok(()) };
        f.seek(SeekFrom::Start(at))?;
        let mut bytes = vec![0; len];
        f.read_exact(&mut bytes)?;
        h.push_str(&String::from_utf8(bytes).map_err(|e| std::io::Error::new(std::io::ErrorKind::InvalidData, e))?);
        Ok(())
    }
}

/// Writes the page to `w` piece by piece (the sections before the turn browser, then one turn
/// at a time, its views from `views`); returns the bytes written.
pub fn write_page(w: &mut dyn std::io::Write, d: &ReportData, views: &mut dyn TurnChunks) -> std::io::Result<u64> {
    let mut h = String::with_capacity(64 * 1024);
    let hash = base64::engine::general_purpose::STANDARD.encode(Sha256::digest(SCRIPT.as_bytes()));
    let title = format!("ctxj report — {}", d.header.session);
    let _ = write!(
        h,
        "<!DOCTYPE html>\n<html lang=\"en\">\n<head>\n<meta charset=\"utf-8\">\n\
<meta http-equiv=\"Content-Security-Policy\" content=\"default-src 'none'; style-src 'unsafe-inline'; \
script-src 'sha256-{hash}'; img-src data:; base-uri 'none'; form-action 'none'\">\n\
<meta name=\"viewport\" content=\"width=device-width, initial-scale=1\">\n\
<meta name=\"generator\" content=\"ctxj {}\">\n<title>{}</title>\n<style>{STYLE}</style>\n</head>\n<body>\n",
        env!("CARGO_PKG_VERSION"),
        escape(&title)
    );
    header(&mut h, d);
    charts(&mut h, d);
    comparison(&mut h, d);
    decisions(&mut h, d);
    let mut written = h.len() as u64;
    w.write_all(h.as_bytes())?;
    h.clear();
    written += browser(w, &mut h, d, views)?;
    h.clear();
    let _ = write!(h, "<script>{SCRIPT}</script>\n</body>\n</html>\n");
    w.write_all(h.as_bytes())?;
    Ok(written + h.len() as u64)
}

/// What `ctxj report` wrote: the line it prints, or its JSON.
#[derive(Debug, Clone, serde::Serialize)]
pub struct Written {
    pub output: String,
    pub bytes: usize,
    pub strategies: Vec<String>,
    pub turns: usize,
    pub notes: Vec<String>,
}

impl Written {
    pub fn new(output: &std::path::Path, bytes: usize, d: &ReportData) -> Written {
        Written {
            output: output.display().to_string(),
            bytes,
            strategies: d.strategies.iter().map(|s| s.name.clone()).collect(),
            turns: d.header.turns,
            notes: d.notes.clone(),
        }
    }

    /// "wrote PATH (N bytes): S strategies, T turns", the path escaped.
    pub fn text(&self) -> String {
        format!(
            "wrote {} ({} bytes): {}, {}",
            ctxj_core::text::escape_line(&self.output),
            thousands(self.bytes as u64),
            super::format::count(self.strategies.len(), "strategy", "strategies"),
            super::format::count(self.turns, "turn", "turns")
        )
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn escape_covers_text_and_attributes() {
        assert_eq!(escape("<script>a&b</script>"), "&lt;script&gt;a&amp;b&lt;/script&gt;");
        assert_eq!(escape("x\"y'z"), "x&quot;y&#39;z");
        assert_eq!(escape("a\nb\tc"), "a\nb\tc");
    }

    #[test]
    fn escape_makes_controls_visible() {
        assert_eq!(escape("\u{1b}[31mred"), "\\e[31mred");
        assert_eq!(escape("a\u{202e}b"), "a\\u{202e}b");
    }
}
