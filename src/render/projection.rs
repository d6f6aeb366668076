//! The human view of a projection: one header line per block (type, id, chars, a marker when
//! elided, cleared, edited or summarized), then the content indented. All journal text is escaped.

use crate::render::format::thousands;
use ctxj_core::projection::{Block, Mark, Projection};
use ctxj_core::strategy::View;
use ctxj_core::text::{escape_block, escape_line};

/// Styling hooks so the library stays free of terminal decisions.
pub trait Style {
    fn header(&self, s: &str) -> String {
        s.to_string()
    }
    fn marker(&self, s: &str) -> String {
        s.to_string()
    }
    fn dim(&self, s: &str) -> String {
        s.to_string()
    }
}

/// No styling.
pub struct Plain;
impl Style for Plain {}

/// Extra text to show after a block (e.g. an expanded spill file).
pub type Extra<'a> = &'a dyn Fn(&Block) -> Option<String>;

/// Writes the human view of `p` into `out`.
pub fn write_projection(out: &mut String, p: &Projection, style: &dyn Style, extra: Option<Extra<'_>>) {
    let mut i = 0;
    let mut one = |out: &mut String, b: &Block, mark: Option<Mark>, src: Option<u64>| {
        i += 1;
        write_block(out, i, b, mark, src, style);
        if let Some(f) = extra {
            if let Some(x) = f(b) {
                out.push_str(&indent(&x));
            }
        }
    };
    if let Some(s) = &p.system {
        one(out, s, None, None);
    }
    for s in &p.summaries {
        one(out, s, None, None);
    }
    for b in &p.conv {
        one(out, &b.block, Some(b.mark), Some(b.src_rev));
    }
}

fn indent(s: &str) -> String {
    let mut o = String::with_capacity(s.len() + 16);
    for line in escape_block(s).split('\n') {
        o.push_str("    ");
        o.push_str(line);
        o.push('\n');
    }
    o
}

/// One block: header then indented content.
pub fn write_block(out: &mut String, n: usize, b: &Block, mark: Option<Mark>, src: Option<u64>, style: &dyn Style) {
    let mut h = format!("[{n}] {}", b.type_name());
    match b {
        Block::Result { call, tool, .. } => h.push_str(&format!(" {} ({})", escape_line(call), escape_line(tool))),
        Block::Attachment { id, user, .. } => h.push_str(&format!(" {} (of {})", escape_line(id), escape_line(user))),
        _ => {
            if let Some(id) = b.id() {
                h.push(' ');
                h.push_str(&escape_line(id));
            }
        }
    }
    let mut meta = format!(" · {} chars", thousands(b.chars() as u64));
    if let Some(r) = src {
        meta.push_str(&format!(" · rev {r}"));
    }
    out.push_str(&style.header(&h));
    out.push_str(&style.dim(&meta));
    let m = match (b, mark) {
        (Block::Summary { .. }, _) => Some("summarized".to_string()),
        (_, Some(Mark::Elided(r))) => Some(format!("elided @ rev {r}")),
        (_, Some(Mark::Cleared(r))) => Some(format!("cleared @ rev {r}")),
        (_, Some(Mark::Edited(m))) => Some(format!("edited by mirror r{m}")),
        _ => None,
    };
    if let Some(m) = m {
        out.push(' ');
        out.push_str(&style.marker(&format!("[{m}]")));
    }
    out.push('\n');
    if let Block::System { tools: Some(t), .. } = b {
        let n = t.as_array().map_or(0, Vec::len);
        out.push_str(&indent(&format!("(tools: {n} schemas)")));
    }
    if !b.text().is_empty() {
        out.push_str(&indent(b.text()));
    }
    if let Block::Assistant { calls, .. } = b {
        for c in calls {
            let args = ctxj_core::projection::block::canonical_value(&c.args);
            out.push_str(&indent(&format!("→ call {} {} {}", c.id, c.tool, args)));
        }
    }
}

impl Style for crate::render::style::Paint {
    fn header(&self, s: &str) -> String {
        self.bold(s)
    }
    fn marker(&self, s: &str) -> String {
        self.yellow(s)
    }
    fn dim(&self, s: &str) -> String {
        crate::render::style::Paint::dim(self, s)
    }
}

/// Writes the human view of a request: block headers (tagged with what the strategy did) and
/// indented, escaped content.
/// Without `numbered`, headers carry no `[n]` (so a dropped block does not renumber the rest).
pub fn write_view(out: &mut String, v: &View, style: &dyn Style, numbered: bool, extra: Option<Extra<'_>>) {
    for (i, (b, o)) in v.blocks.iter().zip(&v.origins).enumerate() {
        let mut one = String::new();
        write_block(&mut one, i + 1, b, None, None, style);
        if !numbered {
            let prefix = format!("[{}] ", i + 1);
            if let Some(p) = one.find(&prefix) {
                one.replace_range(p..p + prefix.len(), "");
            }
        }
        if matches!(b, Block::Summary { .. }) && o.is_changed() {
            // write_block tags every summary "[summarized]"; say which pass wrote it instead.
            one = one.replacen("[summarized]", &format!("[{}]", o.describe()), 1);
        } else if o.is_changed() {
            let nl = one.find('\n').unwrap_or(one.len());
            one.insert_str(nl, &format!(" {}", style.marker(&format!("[{}]", o.describe()))));
        }
        out.push_str(&one);
        if let Some(f) = extra {
            if let Some(x) = f(b) {
                out.push_str(&indent(&x));
            }
        }
    }
}
