//! The output of `ctxj log`: one row per record — what it did to the projection, and the size
//! after it — as a table fitted to the terminal or the `ctxj.log/1` document.

use std::cell::RefCell;
use std::io::Write;

use serde::Serialize;

use crate::render::fit::{fit, Column, Layout};
use crate::render::format::{signed_thousands, thousands};
use crate::render::rows::{OutputFormat, RowsError};
use ctxj_core::journal::{Body, Journal, Record};
use ctxj_core::projection::{Block, Projection, Replayer};
use ctxj_core::text::escape_line;

/// One row of the log.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, schemars::JsonSchema)]
pub struct Row {
    pub rev: u64,
    pub ts: String,
    pub kind: String,
    pub line: usize,
    pub effect: String,
    pub blocks: usize,
    pub chars: usize,
    #[serde(rename = "delta_chars")]
    pub delta: i64,
    pub notes: Vec<String>,
}

/// Walks the journal once and describes each record.
pub fn rows(journal: &Journal) -> Vec<Row> {
    Rows::new(journal).collect()
}

/// The rows of [`rows`], one record at a time: `log --json` writes each as it is made
/// ([`write_streamed`]), so a million records never hold every row and the whole JSON text at once.
pub struct Rows<'j> {
    r: Replayer<'j>,
    records: std::slice::Iter<'j, Record>,
    chars: usize,
    turn: usize,
}

impl<'j> Rows<'j> {
    pub fn new(journal: &'j Journal) -> Self {
        Rows { r: Replayer::new(journal), records: journal.records.iter(), chars: 0, turn: 0 }
    }
}

impl Iterator for Rows<'_> {
    type Item = Row;

    fn next(&mut self) -> Option<Row> {
        let rec = self.records.next()?;
        let before_len = self.r.projection().conv.len();
        let notes = self.r.step().unwrap_or_default();
        let p = self.r.projection();
        let appends_only = matches!(rec.body, Body::Notice(_) | Body::User(_) | Body::Assistant(_) | Body::Result(_));
        let after = if appends_only && p.conv.len() >= before_len {
            self.chars + p.conv[before_len..].iter().map(|b| b.block.chars()).sum::<usize>()
        } else {
            p.chars()
        };
        let delta = after as i64 - self.chars as i64;
        if matches!(rec.body, Body::Assistant(_)) {
            self.turn += 1;
        }
        let effect = describe(rec, p, delta, self.turn, before_len);
        self.chars = after;
        Some(Row {
            rev: rec.rev,
            ts: rec.ts.to_string(),
            kind: rec.kind().to_string(),
            line: rec.line,
            effect,
            blocks: p.len(),
            chars: after,
            delta,
            notes,
        })
    }
}

fn list(ids: &[String]) -> String {
    const MAX: usize = 6;
    let mut s = ids.iter().take(MAX).cloned().collect::<Vec<_>>().join(", ");
    if ids.len() > MAX {
        s.push_str(&format!(" and {} more", ids.len() - MAX));
    }
    s
}

fn describe(rec: &Record, p: &Projection, delta: i64, turn: usize, before_len: usize) -> String {
    let d = || format!("({} chars)", signed_thousands(delta));
    match &rec.body {
        Body::Session(s) => format!("session {} · model {}", s.id, s.model.as_deref().unwrap_or("?")),
        Body::System(s) => format!(
            "system prompt set ({} chars{})",
            thousands(ctxj_core::text::chars(&s.text) as u64),
            s.tools.as_ref().and_then(|t| t.as_array()).map_or(String::new(), |t| format!(", {} tools", t.len()))
        ),
        Body::Notice(n) => format!("notice {}{}", n.id, n.topic.as_ref().map_or(String::new(), |t| format!(" [{t}]"))),
        Body::User(u) => {
            let a = if u.attachments.is_empty() {
                String::new()
            } else {
                format!(" + {} attachment(s)", u.attachments.len())
            };
            format!("user {}{a} {}", u.id, d())
        }
        Body::Assistant(a) => {
            let mut s = format!("turn {turn}: assistant {}", a.id);
            if !a.calls.is_empty() {
                let tools: Vec<String> = a.calls.iter().map(|c| format!("{} {}", c.tool, c.id)).collect();
                s.push_str(&format!(" → {}", list(&tools)));
            }
            if let Some(pt) = a.usage.as_ref().and_then(|u| u.prompt_tokens) {
                s.push_str(&format!(" · prompt {} tok", thousands(pt)));
            }
            s
        }
        Body::Result(r) => {
            if p.conv.len() == before_len {
                format!("result {} ({}) dropped: mirror service call", r.call, r.tool)
            } else {
                format!("result {} ({}) {}", r.call, r.tool, d())
            }
        }
        Body::Elide(e) => format!("elided {} {}", list(&e.calls), d()),
        Body::Clear(c) if c.cleared.is_empty() => {
            format!("nothing to clear{}", c.message.as_ref().map_or(String::new(), |m| format!(" ({m:?})")))
        }
        Body::Clear(c) => format!("cleared {} {}", list(&c.cleared), d()),
        Body::Mirror(m) if m.accepted() => format!(
            "mirror r{} accepted (base rev {}, {} service calls removed) {}",
            m.mirror_rev,
            m.base_rev,
            m.service_calls.len(),
            d()
        ),
        Body::Mirror(m) => {
            format!("mirror r{} rejected: {}", m.mirror_rev, m.reason.as_deref().unwrap_or("no reason given"))
        }
        Body::Compact(c) => {
            let keep = match (&c.kept, c.first_kept) {
                (Some(k), _) => format!("kept {} blocks", k.len()),
                (None, Some(f)) => format!("kept from rev {f}"),
                (None, None) => "kept nothing".into(),
            };
            let summaries = p.summaries.iter().filter(|b| matches!(b, Block::Summary { .. })).count();
            format!(
                "compacted ({}, {}): {keep}, {} summary block(s) {}",
                c.trigger.as_deref().unwrap_or("?"),
                if c.chains() { "chain" } else { "rotate" },
                summaries,
                d()
            )
        }
        Body::Model(m) => format!("model → {} (from the next turn)", m.model),
        Body::Outcome(o) => format!(
            "outcome: {} ({}){}",
            if o.passed { "passed" } else { "failed" },
            escape_line(&o.check),
            o.detail.as_deref().map(|d| format!(": {}", escape_line(d))).unwrap_or_default()
        ),
        Body::Unknown { kind } => format!("unknown kind {kind:?}: kept, ignored"),
    }
}

/// `ctxj log --format json`: the journal read and one row per record (the rows of `ndjson`
/// and `csv`).
#[derive(Debug, Clone, Serialize, schemars::JsonSchema)]
pub struct LogDoc {
    /// `ctxj.log/1`.
    pub schema: &'static str,
    /// The journal (or transcript) read.
    pub session: String,
    pub records: Vec<Row>,
}

impl LogDoc {
    pub fn new(session: String, records: Vec<Row>) -> LogDoc {
        LogDoc { schema: "ctxj.log/1", session, records }
    }
}

/// The table fitted to `layout` (the record time goes first, then blocks; the effect is cut in
/// the middle when it must be), with a trailing newline.
pub fn text(rows: &[Row], layout: Layout) -> String {
    let columns = [
        Column::number("rev", 0),
        Column::text("time", 2),
        Column::text("kind", 0),
        Column::prose("effect", 0),
        Column::number("blocks", 1),
        Column::number("chars", 0),
    ];
    let cells: Vec<Vec<String>> = rows
        .iter()
        .map(|r| {
            let mut effect = escape_line(&r.effect);
            for n in &r.notes {
                effect.push_str(&format!("; note: {}", escape_line(n)));
            }
            vec![
                r.rev.to_string(),
                escape_line(&r.ts),
                escape_line(&r.kind),
                effect,
                thousands(r.blocks as u64),
                thousands(r.chars as u64),
            ]
        })
        .collect();
    format!("{}\n", fit(&columns, &cells, layout))
}

/// The records of `journal`, not yet replayed: serialized as a sequence, they are replayed one
/// at a time as they are written.
struct Lazy<'j>(RefCell<Option<Rows<'j>>>);

impl Serialize for Lazy<'_> {
    fn serialize<S: serde::Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        s.collect_seq(self.0.borrow_mut().take().into_iter().flatten())
    }
}

/// [`LogDoc`] with its records replayed as they are written.
#[derive(Serialize)]
struct StreamedDoc<'a, 'j> {
    schema: &'static str,
    session: &'a str,
    records: Lazy<'j>,
}

/// `log --format json|ndjson` written record by record (issue 21: a million records held every
/// row at once): the same bytes as [`crate::render::rows::write_rows`] of the whole [`LogDoc`].
/// Table and CSV are not streamed (`None`: the caller writes them from the rows).
pub fn write_streamed(
    out: &mut dyn Write,
    format: OutputFormat,
    session: &str,
    journal: &Journal,
) -> Option<Result<(), RowsError>> {
    let write = |out: &mut dyn Write| -> Result<(), RowsError> {
        if format == OutputFormat::Json {
            let records = Lazy(RefCell::new(Some(Rows::new(journal))));
            serde_json::to_writer_pretty(&mut *out, &StreamedDoc { schema: "ctxj.log/1", session, records })?;
            writeln!(out)?;
        } else {
            for row in Rows::new(journal) {
                serde_json::to_writer(&mut *out, &row)?;
                writeln!(out)?;
            }
        }
        Ok(())
    };
    matches!(format, OutputFormat::Json | OutputFormat::Ndjson).then(|| write(out))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::render::rows::write_rows;

    /// `log --format json|ndjson` stream their rows (issue 21); the bytes are those of the whole
    /// document.
    #[test]
    fn streamed_json_is_the_whole_document_byte_for_byte() {
        let root = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("sample-journals");
        for sample in ["bugfix-todo", "long-elision", "compaction", "spill-attach"] {
            let path = root.join(sample).join("journal.jsonl");
            let bytes = std::fs::read(&path).expect("sample journal");
            let j = ctxj_core::journal::parse_bytes(&path, &bytes, Default::default()).expect("valid sample");
            let doc = LogDoc::new("s".into(), rows(&j));
            for format in [OutputFormat::Json, OutputFormat::Ndjson] {
                let (mut whole, mut streamed) = (Vec::new(), Vec::new());
                write_rows(&mut whole, format, &doc, &doc.records).unwrap();
                write_streamed(&mut streamed, format, "s", &j).expect("streamed").unwrap();
                assert_eq!(String::from_utf8(streamed).unwrap(), String::from_utf8(whole).unwrap(), "{sample}");
            }
        }
    }
}
