//! The turn browser: per turn and strategy, the request's blocks and its change against the
//! previous request, written one turn at a time.

use std::fmt::Write;

use crate::render::format::{money, thousands};

use ctxj_core::report::{BlockView, Change, RecordedBreakView, ReportData, TurnView};

use super::common::escape;

/// Where the turn browser's views come from: `write(s, t, h)` appends strategy `s`'s view of
/// turn `t` (one of `ReportData::browser_turns`), rendered, to `h`.
pub trait TurnChunks {
    fn write(&mut self, s: usize, t: usize, h: &mut String) -> std::io::Result<()>;
}

/// The turn browser, written to `w` one turn at a time; returns the bytes written.
pub(super) fn browser(
    w: &mut dyn std::io::Write,
    h: &mut String,
    d: &ReportData,
    views: &mut dyn TurnChunks,
) -> std::io::Result<u64> {
    let _ = writeln!(
        h,
        "<section id=\"turns\">\n<h2>Turn browser</h2>\n<p class=\"muted\">Each turn's request per strategy, block by block, \
compared with the same strategy's previous request. Text is inlined only for blocks that are new or changed in that turn, \
and at most {} characters per block (longer texts say where they were cut). Click a turn in a chart to open it here.</p>",
        thousands(d.text_cap as u64)
    );
    let range = d.browser_turns.clone();
    let (shown, all) = (range.clone().count(), d.header.turns);
    if shown < all {
        let _ = writeln!(
            h,
            "<p class=\"callout\" id=\"browser-range\">This page's turn browser holds {} of the session's {} turns{} (<code>--turns</code> / <code>--last</code>); the charts and tables cover every turn.</p>",
            thousands(shown as u64),
            thousands(all as u64),
            if shown > 0 { format!(", turns {}–{}", range.start(), range.end()) } else { String::new() }
        );
    }
    let mut written = 0u64;
    let mut breaks = d.recorded_breaks.iter().peekable();
    for t in range {
        let mut sum = Vec::new();
        for s in &d.strategies {
            if let Some(f) = s.turns.get(t.wrapping_sub(1)) {
                sum.push(format!("{} {}", escape(&s.name), thousands(f.prompt_tokens)));
            }
        }
        while breaks.next_if(|b| b.turn < t).is_some() {}
        let brk = breaks.next_if(|b| b.turn == t);
        let _ = writeln!(
            h,
            "<details class=\"turn\" id=\"turn-{t}\"><summary><strong>Turn {t}</strong> <span class=\"muted\">· prompt tokens: {}</span>{}</summary>",
            sum.join(" · "),
            brk.map_or(String::new(), |b| format!(" <span class=\"rbreak\">recorded cache break: {}</span>", escape(&b.cause)))
        );
        if let Some(b) = brk {
            recorded_break(h, b);
        }
        for s in 0..d.strategies.len() {
            views.write(s, t, h)?;
        }
        h.push_str("</details>\n");
        written += h.len() as u64;
        w.write_all(h.as_bytes())?;
        h.clear();
    }
    h.push_str("</section>\n");
    w.write_all(h.as_bytes())?;
    Ok(written + h.len() as u64)
}

/// A recorded cache break in the turn browser: its cause, the tokens read again and the evidence.
fn recorded_break(h: &mut String, b: &RecordedBreakView) {
    let _ = writeln!(
        h,
        "<p class=\"rbreak-detail\" data-cause=\"{}\">Recorded cache break ({}): {} tokens processed again instead of read{} · {}</p>",
        escape(&b.cause),
        escape(&b.cause),
        thousands(b.rewritten_tokens),
        b.cost.map_or(String::new(), |c| format!(", {} extra", money(c))),
        escape(&crate::render::cache_words::evidence(&b.evidence))
    );
}

pub(super) fn turn_view(h: &mut String, name: &str, v: &TurnView) {
    let df = &v.diff;
    let _ = writeln!(
        h,
        "<section class=\"tv\" data-strategy=\"{}\"><h3>{} · turn {}</h3>\n<p class=\"muted\">{} blocks · vs previous request: \
{} same, {} changed, {} added, {} removed{}</p>",
        escape(name),
        escape(name),
        v.turn,
        v.block_count,
        df.same,
        df.changed,
        df.added,
        df.removed.len(),
        if v.turn == 1 {
            " (first request)"
        } else if df.extends_previous {
            " · extends the previous request (prefix kept)"
        } else {
            " · <strong>rewrites the previous request's prefix</strong>"
        }
    );
    if !df.removed.is_empty() {
        h.push_str("<p class=\"removed\">removed: ");
        let parts: Vec<String> = df
            .removed
            .iter()
            .map(|(k, id, c)| {
                format!("{} {} ({} chars)", escape(k), escape(id.as_deref().unwrap_or("")), thousands(*c as u64))
            })
            .collect();
        h.push_str(&parts.join(", "));
        h.push_str("</p>\n");
    }
    h.push_str(
        "<table class=\"blocks\"><thead><tr><th class=\"num\">#</th><th>type</th><th>id</th><th>tool</th>\
<th class=\"num\">chars</th><th class=\"num\">tokens</th><th>vs previous</th></tr></thead><tbody>\n",
    );
    // The leading run the request repeats from the previous one, and any later run of unchanged
    // blocks, fold into one row each, so a long session's page grows with what changes per
    // turn, not with the whole request every turn.
    let k = &v.kept;
    let lead = v.blocks.iter().take_while(|b| b.change == Change::Same).count();
    let (mut i, run) = if k.blocks > 0 { (lead, k.blocks + lead) } else { (0, 0) };
    if run > 0 {
        let same = &v.blocks[..lead];
        let chars = k.chars + same.iter().map(|b| b.chars as u64).sum::<u64>();
        let tokens = k.tokens + same.iter().map(|b| b.tokens).sum::<u64>();
        same_run(h, 0, run, chars, tokens);
    }
    while i < v.blocks.len() {
        let run = v.blocks[i..].iter().take_while(|b| b.change == Change::Same).count();
        if run >= 2 {
            let blocks = &v.blocks[i..i + run];
            let chars = blocks.iter().map(|b| b.chars as u64).sum();
            same_run(h, k.blocks + i, run, chars, blocks.iter().map(|b| b.tokens).sum());
            i += run;
        } else {
            block_row(h, k.blocks + i, &v.blocks[i]);
            i += 1;
        }
    }
    h.push_str("</tbody></table>\n");
    for (i, b) in v.blocks.iter().enumerate() {
        if let Some(text) = &b.text {
            let _ = write!(
                h,
                "<details><summary>#{} {} {} — {} chars</summary><pre class=\"text\">{}</pre>",
                k.blocks + i + 1,
                escape(&b.kind),
                escape(b.id.as_deref().unwrap_or("")),
                thousands(b.chars as u64),
                escape(text)
            );
            if let Some(full) = b.capped_from {
                let _ = write!(
                    h,
                    "<p class=\"capped\">… cut: the first {} of {} characters are shown.</p>",
                    thousands(ctxj_core::text::chars(text) as u64),
                    thousands(full as u64)
                );
            }
            h.push_str("</details>\n");
        }
    }
    h.push_str("</section>\n");
}

/// One row for `n` blocks from index `from` that repeat the previous request.
fn same_run(h: &mut String, from: usize, n: usize, chars: u64, tokens: u64) {
    let range = if n == 1 { (from + 1).to_string() } else { format!("{}–{}", from + 1, from + n) };
    let _ = writeln!(
        h,
        "<tr class=\"same run\"><td class=\"num\">{range}</td><td colspan=\"3\">{n} block{} as in the previous request</td>\
<td class=\"num\">{}</td><td class=\"num\">{}</td><td>same</td></tr>",
        if n == 1 { "" } else { "s" },
        thousands(chars),
        thousands(tokens)
    );
}

fn block_row(h: &mut String, i: usize, b: &BlockView) {
    let (cls, mut label) = match b.change {
        Change::Same => ("same", "same".to_string()),
        Change::Changed => ("changed", "changed".to_string()),
        Change::Added => ("added", "new".to_string()),
    };
    if let Some(p) = b.previous_chars {
        let _ = write!(label, " ({} → {} chars)", thousands(p as u64), thousands(b.chars as u64));
    }
    if let Some(o) = &b.origin {
        let _ = write!(label, " · {}", escape(o));
    }
    let _ = writeln!(
        h,
        "<tr class=\"{cls}\"><td class=\"num\">{}</td><td>{}</td><td>{}</td><td>{}</td><td class=\"num\">{}</td><td class=\"num\">{}</td><td>{label}</td></tr>",
        i + 1,
        escape(&b.kind),
        escape(b.id.as_deref().unwrap_or("")),
        escape(b.tool.as_deref().unwrap_or("")),
        thousands(b.chars as u64),
        thousands(b.tokens)
    );
}
