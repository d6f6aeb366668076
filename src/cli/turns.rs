//! `ctxj turns`: one row per turn of a strategy's replay — blocks, characters, and what changed
//! against the previous request (appended only, or the prefix rewritten at a block), so cache
//! stability is visible without a model of the provider.

use std::io::Write;

use anyhow::Result;
use comfy_table::{Cell, CellAlignment};

use ctxj::journal::Journal;
use ctxj::projection::Block;
use ctxj::render::format::thousands;
use ctxj::strategy::{self, Origin};
use ctxj::text::escape_line;

use super::show::{estimator, parse_strategy};
use super::{Ctx, EXIT_OK};
use ctxj::render::style::Paint;

/// One row per turn: the request's blocks and characters, and how it relates to the previous one.
///
/// "appended N" means the request starts with the whole previous request (a prompt cache can
/// serve that prefix); "rewritten at block i (id)" means the prefix changed there, with what the
/// strategy did to that block ("truncated", "elided (turn 5)", "summary (turn 9)", …) or
/// "dropped" when the block left the request. Block numbers count from 1, as in `ctxj show`.
///
/// Examples:
///   ctxj turns sample-journals/bugfix-todo --strategy sliding-8
///   ctxj turns sample-journals/bugfix-todo --strategy age-truncate-500-keep-3 --json
///   ctxj turns sample-journals/long-elision
#[derive(Debug, clap::Args)]
#[command(verbatim_doc_comment)]
pub struct Args {
    /// Session directory, journal.jsonl path, or session id under --root.
    pub session: String,
    /// The strategy to replay (default: recorded, the journal's own projection).
    #[arg(long, value_name = "NAME", default_value = "recorded")]
    pub strategy: String,
    /// One JSON object per turn, as a JSON array.
    #[arg(long)]
    pub json: bool,
}

/// How a request relates to the previous one.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Change {
    First,
    /// Starts with the whole previous request; this many blocks follow it.
    Appended(usize),
    /// The prefix differs at this block index (from 0); its id (or type) and why.
    Rewritten {
        at: usize,
        id: String,
        why: String,
    },
}

/// Compares a request with the previous one.
pub fn change(prev: Option<&[Block]>, blocks: &[Block], origins: &[Origin]) -> Change {
    let Some(prev) = prev else { return Change::First };
    match (0..prev.len()).find(|&i| !blocks.get(i).is_some_and(|b| strategy::same_block(b, &prev[i]))) {
        None => Change::Appended(blocks.len() - prev.len()),
        Some(at) => {
            let (id, why) = match blocks.get(at) {
                Some(b) => {
                    let id = b.id().map_or_else(|| b.type_name().to_string(), str::to_string);
                    let why = if matches!(origins[at], Origin::Summary { .. } | Origin::RecordedSummary) {
                        format!("{} written", origins[at].describe())
                    } else if b.id().is_some() && b.id() == prev[at].id() {
                        format!("text changed: {}", origins[at].describe())
                    } else if blocks.iter().any(|x| x.id().is_some() && x.id() == prev[at].id()) {
                        format!("{} moved", prev[at].id().unwrap_or("block"))
                    } else if let Some(pid) = prev[at].id() {
                        format!("{pid} dropped")
                    } else {
                        match origins[at] {
                            Origin::Verbatim => format!("{} changed", b.type_name()),
                            o => o.describe(),
                        }
                    };
                    (id, why)
                }
                None => ("(end)".to_string(), "request shorter than the previous one".to_string()),
            };
            Change::Rewritten { at, id, why }
        }
    }
}

struct Row {
    turn: usize,
    rev: u64,
    blocks: usize,
    chars: usize,
    change: Change,
}

fn rows(journal: &Journal, s: &strategy::Strategy) -> Result<Vec<Row>> {
    let est = estimator(journal)?;
    // The previous request, updated in place (only blocks from the first change are cloned).
    let mut prev: Option<Vec<Block>> = None;
    // cum[i]: characters of the previous request's first i blocks (so a turn counts only the
    // blocks after the first change, not the whole history again).
    let mut cum: Vec<usize> = vec![0];
    let mut out = Vec::new();
    strategy::replay(journal, s, est.as_ref(), |r| {
        let c = change(prev.as_deref(), r.blocks, r.origins);
        let keep = match &c {
            Change::First => 0,
            Change::Appended(_) => cum.len() - 1,
            Change::Rewritten { at, .. } => *at,
        };
        cum.truncate(keep + 1);
        for b in &r.blocks[keep..] {
            let last = *cum.last().expect("cum starts with 0");
            cum.push(last + b.chars());
        }
        out.push(Row {
            turn: r.turn,
            rev: journal.records[r.record].rev,
            blocks: r.blocks.len(),
            chars: *cum.last().expect("cum starts with 0"),
            change: c,
        });
        let p = prev.get_or_insert_with(Vec::new);
        p.truncate(keep);
        p.extend(r.blocks[keep..].iter().cloned());
    });
    Ok(out)
}

pub fn run(args: Args, ctx: &Ctx) -> Result<u8> {
    let s = parse_strategy(&args.strategy)?;
    let (_, journal) = ctx.load(&args.session)?;
    let rows = rows(&journal, &s)?;
    let mut out = super::stdout();
    if args.json {
        let items: Vec<String> = rows
            .iter()
            .map(|r| {
                let change = match &r.change {
                    Change::First => r#""change":"first""#.to_string(),
                    Change::Appended(n) => format!(r#""change":"appended","appended":{n}"#),
                    Change::Rewritten { at, id, why } => format!(
                        r#""change":"rewritten","block":{},"id":{},"why":{}"#,
                        at + 1,
                        serde_json::to_string(id)?,
                        serde_json::to_string(why)?
                    ),
                };
                Ok(format!(
                    r#"{{"turn":{},"rev":{},"blocks":{},"chars":{},{change}}}"#,
                    r.turn, r.rev, r.blocks, r.chars
                ))
            })
            .collect::<Result<_, serde_json::Error>>()?;
        writeln!(out, "[{}]", items.join(","))?;
        out.flush()?;
        return Ok(EXIT_OK);
    }
    let paint = Paint::new(ctx.color);
    let mut t = ctxj::render::style::table(&["turn", "rev", "blocks", "chars", "change against the previous request"]);
    let mut rewrites = 0;
    for r in &rows {
        let change = match &r.change {
            Change::First => "first request".to_string(),
            Change::Appended(0) => "identical".to_string(),
            Change::Appended(n) => format!("appended {n}"),
            Change::Rewritten { at, id, why } => {
                rewrites += 1;
                paint.yellow(&format!(
                    "prefix rewritten at block {} ({}): {}",
                    at + 1,
                    escape_line(id),
                    escape_line(why)
                ))
            }
        };
        t.add_row(vec![
            Cell::new(r.turn).set_alignment(CellAlignment::Right),
            Cell::new(r.rev).set_alignment(CellAlignment::Right),
            Cell::new(r.blocks).set_alignment(CellAlignment::Right),
            Cell::new(thousands(r.chars as u64)).set_alignment(CellAlignment::Right),
            Cell::new(change),
        ]);
    }
    writeln!(out, "{}", paint.bold(&format!("strategy {} · {} turns", escape_line(&s.name), rows.len())))?;
    writeln!(out, "{t}")?;
    writeln!(out, "{} prefix rewrite(s) in {} turns", rewrites, rows.len())?;
    out.flush()?;
    Ok(EXIT_OK)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn u(id: &str, t: &str) -> Block {
        Block::User { id: id.into(), text: t.into() }
    }

    #[test]
    fn classifies_changes() {
        let a = vec![u("u1", "a"), u("u2", "b")];
        let o = vec![Origin::Verbatim; 3];
        assert_eq!(change(None, &a, &o), Change::First);
        let b = vec![u("u1", "a"), u("u2", "b"), u("u3", "c")];
        assert_eq!(change(Some(&a), &b, &o), Change::Appended(1));
        let c = vec![u("u1", "a"), u("u2", "B")];
        let oc = vec![Origin::Verbatim, Origin::Truncated];
        assert_eq!(
            change(Some(&a), &c, &oc),
            Change::Rewritten { at: 1, id: "u2".into(), why: "text changed: truncated".into() }
        );
        let d = vec![u("u2", "b"), u("u3", "c")];
        assert_eq!(change(Some(&a), &d, &o), Change::Rewritten { at: 0, id: "u2".into(), why: "u1 dropped".into() });
    }
}
