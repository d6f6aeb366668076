//! The text of `ctxj show`: a header line, then the projection or a strategy's request.

use crate::render::format::thousands;
use crate::render::projection::{write_projection, write_view, Extra};
use crate::render::style::Paint;
use ctxj_core::journal::Journal;
use ctxj_core::projection::block::sha256_hex;
use ctxj_core::projection::{At, Projection};
use ctxj_core::strategy::View;
use ctxj_core::text::escape_line;

fn session_id(journal: &Journal) -> &str {
    journal.session().map_or("?", |s| s.id.as_str())
}

/// The recorded projection `p` at `at`, with its header line.
pub fn projection(
    journal: &Journal,
    at: Option<At>,
    p: &Projection,
    paint: &Paint,
    extra: Option<Extra<'_>>,
) -> String {
    let model = journal.session().and_then(|s| s.model.as_deref()).unwrap_or("?");
    let mut s = paint.bold(&format!(
        "session {} · {} · {} · {} · {} chars · sha256 {}",
        escape_line(session_id(journal)),
        escape_line(model),
        At::label(at, journal),
        crate::render::format::count(p.len(), "block", "blocks"),
        thousands(p.chars() as u64),
        &p.sha256()[..16]
    ));
    s.push('\n');
    if p.system.is_none() {
        s.push_str(&paint.dim("(no system prompt recorded in this journal)\n"));
    }
    write_projection(&mut s, p, paint, extra);
    s
}

/// A strategy's request `v` (whose canonical bytes are `canonical`), with its header line.
pub fn view(journal: &Journal, v: &View, canonical: &[u8], paint: &Paint, extra: Option<Extra<'_>>) -> String {
    let changed = v.origins.iter().filter(|o| o.is_changed()).count();
    let mut s = paint.bold(&format!(
        "session {} · strategy {} · {} · {} chars · {} changed by the strategy · sha256 {}",
        escape_line(session_id(journal)),
        escape_line(&v.label),
        crate::render::format::count(v.blocks.len(), "block", "blocks"),
        thousands(v.chars() as u64),
        changed,
        &sha256_hex(canonical)[..16]
    ));
    s.push('\n');
    write_view(&mut s, v, paint, true, extra);
    s
}
