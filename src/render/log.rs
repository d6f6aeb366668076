//! The output of `ctxj log`: one row per record — what it did to the projection, and the size
//! after it — as a table or a JSON array.

use serde::Serialize;

use crate::journal::{Body, Journal, Record};
use crate::projection::{Block, Projection, Replayer};
use crate::render::format::{signed_thousands, thousands};
use crate::render::style::table;
use crate::text::escape_line;

/// One row of the log.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
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
/// ([`write_json`]), so a million records never hold every row and the whole JSON text at once.
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
            thousands(crate::text::chars(&s.text) as u64),
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
        Body::Unknown { kind } => format!("unknown kind {kind:?}: kept, ignored"),
    }
}

/// The JSON array (one line, no newline).
pub fn json(rows: &[Row]) -> serde_json::Result<String> {
    serde_json::to_string(rows)
}

/// Writes the JSON array of `rows` one row at a time: the same bytes as [`json`], no newline.
pub fn write_json(out: &mut impl std::io::Write, rows: impl Iterator<Item = Row>) -> serde_json::Result<()> {
    out.write_all(b"[").map_err(serde_json::Error::io)?;
    for (i, row) in rows.enumerate() {
        if i > 0 {
            out.write_all(b",").map_err(serde_json::Error::io)?;
        }
        serde_json::to_writer(&mut *out, &row)?;
    }
    out.write_all(b"]").map_err(serde_json::Error::io)
}

/// The table (no trailing newline).
pub fn text(rows: &[Row]) -> String {
    let mut t = table(&["rev", "time", "kind", "effect", "blocks", "chars"]);
    for r in rows {
        let mut effect = escape_line(&r.effect);
        for n in &r.notes {
            effect.push_str(&format!("; note: {}", escape_line(n)));
        }
        t.add_row(vec![
            r.rev.to_string(),
            escape_line(&r.ts),
            escape_line(&r.kind),
            effect,
            r.blocks.to_string(),
            thousands(r.chars as u64),
        ]);
    }
    t.to_string()
}

#[cfg(test)]
mod tests {
    use super::*;

    /// `log --json` streams its rows (issue 21); the bytes are those of the whole array.
    #[test]
    fn streamed_json_is_the_whole_array_byte_for_byte() {
        let root = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("sample-journals");
        for sample in ["bugfix-todo", "long-elision", "compaction", "spill-attach"] {
            let path = root.join(sample).join("journal.jsonl");
            let bytes = std::fs::read(&path).expect("sample journal");
            let j = crate::journal::parse_bytes(&path, &bytes, Default::default()).expect("valid sample");
            let mut streamed = Vec::new();
            write_json(&mut streamed, Rows::new(&j)).unwrap();
            assert_eq!(String::from_utf8(streamed).unwrap(), json(&rows(&j)).unwrap(), "{sample}");
        }
    }
}
