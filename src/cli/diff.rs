//! `ctxj diff`: two projections side by side — two strategies at one turn, two revisions or
//! turns of the recorded projection, or a strategy against the recorded request. A block-level
//! summary first, then a unified diff of the rendered projections. Exit 0 equal, 1 different.

use std::collections::HashMap;
use std::io::Write;

use anyhow::Result;
use similar::TextDiff;

use ctxj::journal::Journal;
use ctxj::projection::Block;
use ctxj::render::format::{signed_thousands, thousands};
use ctxj::render::projection::Plain;
use ctxj::text::escape_line;

use super::show::{parse_strategy, recorded_view, strategy_view, write_view, View};
use super::{At, Ctx, EXIT_FINDINGS, EXIT_OK};
use ctxj::render::style::Paint;

/// Diff two projections: strategies, revisions or turns.
///
/// Each side is a strategy (--strategy NAME) or a position (--at rev N | --at turn K):
///   two --strategy, at most one --at turn K   both strategies at turn K (default: the last turn)
///   two --at, no --strategy                  the recorded projection at both positions
///   one --at, no --strategy                  that position against the end of the journal
///   one --strategy, no/one --at              the recorded request against the strategy's (same turn)
///   one --strategy, two --at                 that strategy at both turns
///   two --strategy, two --at                 each strategy at its position, in order
///
/// Output: one summary line (the only line when the sides are equal), the blocks only on one
/// side and the blocks whose text changed (ids, chars, delta), then a unified diff of the rendered
/// projections. Exit status like diff(1): 0 equal, 1 different, 2 error.
///
/// Strategy names: recorded, baseline, truncate-N, age-truncate-N-keep-K, mid-truncate-N,
/// sliding-N[-pin], per-tool-keep-K, elide-keep-K, elide-B-T-keep-K,
/// compact-at-N[t][-structured][-repeat|-chain], tiered, tiered-fast.
///
/// Examples:
///   ctxj diff sample-journals/bugfix-todo --strategy baseline --strategy truncate-500 --at turn 9
///   ctxj diff sample-journals/long-elision --at rev 40 --at rev 41
///   ctxj diff sample-journals/bugfix-todo --strategy truncate-500 --stat
///   ctxj diff sample-journals/bugfix-todo --strategy compact-at-12000-structured --json
#[derive(Debug, clap::Args)]
#[command(verbatim_doc_comment)]
pub struct Args {
    /// Session directory, journal.jsonl path, or session id under --root.
    pub session: String,
    /// A side replayed with this strategy (give it twice for two strategies).
    #[arg(long, value_name = "NAME")]
    pub strategy: Vec<String>,
    /// A side's position: `rev N` or `turn K` (give it twice for two positions).
    #[arg(long, num_args = 2, value_names = ["rev|turn", "N"])]
    pub at: Vec<String>,
    /// The block-level summary only, no text diff.
    #[arg(long)]
    pub stat: bool,
    /// Machine-readable output.
    #[arg(long)]
    pub json: bool,
}

/// What one side is.
enum Side {
    Recorded(Option<At>),
    Strategy(String, Option<At>),
}

fn sides(strategies: &[String], at: &[At]) -> Result<(Side, Side)> {
    use Side::*;
    let s = |i: usize, a: Option<At>| Strategy(strategies[i].clone(), a);
    Ok(match (strategies.len(), at.len()) {
        (0, 0) => anyhow::bail!("diff needs two sides: --strategy NAME and/or --at rev N | --at turn K (see --help)"),
        (0, 1) => (Recorded(Some(at[0])), Recorded(None)),
        (0, 2) => (Recorded(Some(at[0])), Recorded(Some(at[1]))),
        (1, 0) => (Strategy("recorded".into(), None), s(0, None)),
        (1, 1) => (Strategy("recorded".into(), Some(at[0])), s(0, Some(at[0]))),
        (1, 2) => (s(0, Some(at[0])), s(0, Some(at[1]))),
        (2, 0) => (s(0, None), s(1, None)),
        (2, 1) => (s(0, Some(at[0])), s(1, Some(at[0]))),
        (2, 2) => (s(0, Some(at[0])), s(1, Some(at[1]))),
        _ => anyhow::bail!("diff compares two sides: at most two --strategy and two --at"),
    })
}

fn resolve(journal: &Journal, side: Side) -> Result<View> {
    match side {
        Side::Recorded(at) => recorded_view(journal, at),
        Side::Strategy(name, at) => strategy_view(journal, &parse_strategy(&name)?, at),
    }
}

/// A block's key for matching the two sides: its id, `system`, or `summary #k`.
fn keys(blocks: &[Block]) -> Vec<String> {
    let mut k = 0;
    blocks
        .iter()
        .map(|b| match b {
            Block::System { .. } => "system".to_string(),
            Block::Summary { .. } => {
                k += 1;
                format!("summary #{k}")
            }
            b => b.id().unwrap_or_default().to_string(),
        })
        .collect()
}

/// One block in the summary.
struct Entry {
    key: String,
    ty: &'static str,
    left: Option<usize>,
    right: Option<usize>,
}

/// The block-level comparison.
struct Compare {
    only_left: Vec<Entry>,
    only_right: Vec<Entry>,
    changed: Vec<Entry>,
}

fn compare(l: &View, r: &View) -> Compare {
    let (lk, rk) = (keys(&l.blocks), keys(&r.blocks));
    let rmap: HashMap<&str, usize> = rk.iter().enumerate().map(|(i, k)| (k.as_str(), i)).collect();
    let lmap: HashMap<&str, usize> = lk.iter().enumerate().map(|(i, k)| (k.as_str(), i)).collect();
    let mut c = Compare { only_left: vec![], only_right: vec![], changed: vec![] };
    for (i, k) in lk.iter().enumerate() {
        let b = &l.blocks[i];
        match rmap.get(k.as_str()) {
            None => c.only_left.push(Entry { key: k.clone(), ty: b.type_name(), left: Some(b.chars()), right: None }),
            Some(&j) if r.blocks[j].canonical() != b.canonical() => c.changed.push(Entry {
                key: k.clone(),
                ty: b.type_name(),
                left: Some(b.chars()),
                right: Some(r.blocks[j].chars()),
            }),
            Some(_) => {}
        }
    }
    for (j, k) in rk.iter().enumerate() {
        if !lmap.contains_key(k.as_str()) {
            let b = &r.blocks[j];
            c.only_right.push(Entry { key: k.clone(), ty: b.type_name(), left: None, right: Some(b.chars()) });
        }
    }
    c
}

fn render(v: &View) -> String {
    let mut s = String::new();
    write_view(&mut s, v, &Plain, false, None);
    s
}

fn json_str(s: &str) -> String {
    serde_json::to_string(s).expect("string")
}

pub fn run(args: Args, ctx: &Ctx) -> Result<u8> {
    let at = At::parse_pairs(&args.at)?;
    for s in &args.strategy {
        parse_strategy(s)?;
    }
    let (ls, rs) = sides(&args.strategy, &at)?;
    let (_, journal) = ctx.load(&args.session)?;
    let l = resolve(&journal, ls)?;
    let r = resolve(&journal, rs)?;
    let (lc, rc) = (l.canonical(), r.canonical());
    let equal = lc == rc;
    let cmp = compare(&l, &r);
    let text_diff = if equal || args.stat {
        None
    } else {
        let (a, b) = (render(&l), render(&r));
        let d = TextDiff::from_lines(&a, &b)
            .unified_diff()
            .context_radius(3)
            .header(&escape_line(&l.label), &escape_line(&r.label))
            .to_string();
        Some(d)
    };
    let mut out = super::stdout();
    if args.json {
        let entry = |e: &Entry| {
            let n = |x: Option<usize>| x.map_or("null".to_string(), |v| v.to_string());
            let delta = match (e.left, e.right) {
                (Some(a), Some(b)) => (b as i64 - a as i64).to_string(),
                _ => "null".into(),
            };
            format!(
                "{{\"id\":{},\"type\":\"{}\",\"left_chars\":{},\"right_chars\":{},\"delta\":{}}}",
                json_str(&e.key),
                e.ty,
                n(e.left),
                n(e.right),
                delta
            )
        };
        let list = |v: &[Entry]| format!("[{}]", v.iter().map(entry).collect::<Vec<_>>().join(","));
        let side = |v: &View, c: &[u8]| {
            format!(
                "{{\"label\":{},\"blocks\":{},\"chars\":{},\"sha256\":\"{}\"}}",
                json_str(&v.label),
                v.blocks.len(),
                v.chars(),
                ctxj::projection::block::sha256_hex(c)
            )
        };
        writeln!(
            out,
            "{{\"left\":{},\"right\":{},\"equal\":{},\"only_left\":{},\"only_right\":{},\"changed\":{},\"diff\":{}}}",
            side(&l, &lc),
            side(&r, &rc),
            equal,
            list(&cmp.only_left),
            list(&cmp.only_right),
            list(&cmp.changed),
            text_diff.as_deref().map_or("null".to_string(), json_str)
        )?;
        out.flush()?;
        return Ok(if equal { EXIT_OK } else { EXIT_FINDINGS });
    }
    let paint = Paint::new(ctx.color);
    let mut s = String::new();
    if equal {
        s.push_str(&format!(
            "identical: {} = {} · {} blocks · {} chars\n",
            escape_line(&l.label),
            escape_line(&r.label),
            l.blocks.len(),
            thousands(l.chars() as u64)
        ));
        out.write_all(s.as_bytes())?;
        out.flush()?;
        return Ok(EXIT_OK);
    }
    let delta = r.chars() as i64 - l.chars() as i64;
    s.push_str(&paint.bold(&format!(
        "{} ({} blocks, {} chars) → {} ({} blocks, {} chars): {} only left, {} only right, {} changed, {} chars",
        escape_line(&l.label),
        l.blocks.len(),
        thousands(l.chars() as u64),
        escape_line(&r.label),
        r.blocks.len(),
        thousands(r.chars() as u64),
        cmp.only_left.len(),
        cmp.only_right.len(),
        cmp.changed.len(),
        signed_thousands(delta)
    )));
    s.push('\n');
    for e in &cmp.only_left {
        let line = format!("- {} {} · {} chars", e.ty, escape_line(&e.key), thousands(e.left.unwrap_or(0) as u64));
        s.push_str(&format!("  {}\n", paint.red(&line)));
    }
    for e in &cmp.only_right {
        let line = format!("+ {} {} · {} chars", e.ty, escape_line(&e.key), thousands(e.right.unwrap_or(0) as u64));
        s.push_str(&format!("  {}\n", paint.green(&line)));
    }
    for e in &cmp.changed {
        let (a, b) = (e.left.unwrap_or(0), e.right.unwrap_or(0));
        let line = format!(
            "~ {} {} · {} → {} chars ({})",
            e.ty,
            escape_line(&e.key),
            thousands(a as u64),
            thousands(b as u64),
            signed_thousands(b as i64 - a as i64)
        );
        s.push_str(&format!("  {}\n", paint.yellow(&line)));
    }
    if let Some(d) = text_diff {
        s.push('\n');
        for line in d.split_inclusive('\n') {
            let styled = if line.starts_with("+++") || line.starts_with("---") {
                paint.bold(line.trim_end_matches('\n'))
            } else if line.starts_with('+') {
                paint.green(line.trim_end_matches('\n'))
            } else if line.starts_with('-') {
                paint.red(line.trim_end_matches('\n'))
            } else if line.starts_with("@@") {
                paint.cyan(line.trim_end_matches('\n'))
            } else {
                line.trim_end_matches('\n').to_string()
            };
            s.push_str(&styled);
            s.push('\n');
        }
    }
    out.write_all(s.as_bytes())?;
    out.flush()?;
    Ok(EXIT_FINDINGS)
}
