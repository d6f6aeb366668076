//! `/context` parity for `ctxj tokens` (issue 17): the request as a share of the window, the
//! pressure level of the harness's profile, how far the next automatic cleanup is, the parts
//! sorted by size, and hints — which tool's results dominate, what `elide-keep-K` or a
//! `ctx clear` would free. Parts the journal does not record stay labelled as such.

use serde::Serialize;

use super::profile::{pct, Harness, Profile};
use std::collections::HashSet;

use crate::journal::{ClearRequest, Journal};
use crate::projection::clear::select;
use crate::projection::{markers, Block, Mark, ProjBlock, Projection};
use crate::tokens::breakdown::RequestTokens;
use crate::tokens::budget::in_force;
use crate::tokens::{calibrate, Estimator};

use super::elision::{self, frees, Candidate, Open};

/// One part of the request, as `/context` lists it.
#[derive(Debug, Clone, PartialEq, Serialize, schemars::JsonSchema)]
pub struct ContextPart {
    pub name: String,
    /// `None`: the journal does not record it.
    pub tokens: Option<u64>,
    pub items: usize,
    /// Estimated, not counted (an imported session's system prompt and tool schemas).
    pub inferred: bool,
}

/// The next automatic cleanup.
#[derive(Debug, Clone, PartialEq, Serialize, schemars::JsonSchema)]
pub struct Until {
    /// `elision` (journal-v1's budget) or `auto-compact`.
    pub what: &'static str,
    pub at: u64,
    pub left: u64,
    /// How far the request is past the point (0 before it): a distance, never "≈ 0 until".
    pub past: u64,
}

/// The `/context` view of one request.
#[derive(Debug, Clone, PartialEq, Serialize, schemars::JsonSchema)]
pub struct ContextView {
    pub harness: &'static str,
    /// ctxj's calibrated estimate.
    pub used: u64,
    pub window: Option<u64>,
    /// `used / window` in percent.
    pub percent: Option<f64>,
    /// `normal`, `warning`, `danger`, `critical`: how many of the profile's tiers are passed.
    pub level: &'static str,
    pub tiers: Vec<u64>,
    pub until: Option<Until>,
    /// What the harness keeps free below the window for its own compaction (Claude Code's
    /// "autocompact buffer": window − auto point; Command Code: the 10 % above tier 3).
    pub autocompact_buffer: Option<u64>,
    /// Window − used − that buffer (Claude Code's "free space").
    pub free_space: Option<u64>,
    /// Largest first; the tool results split by tool.
    pub parts: Vec<ContextPart>,
    /// The harness's own `/context` rows, in its order (Claude Code, Command Code; empty under
    /// the other profiles): calibrated tokens, `None` for a row the journal cannot know.
    pub categories: Vec<ContextPart>,
    pub hints: Vec<Hint>,
}

/// Builds the view of `r` (the counted request whose blocks are `blocks`) under `harness`.
pub fn context_view(
    journal: &Journal,
    r: &RequestTokens,
    blocks: &[Block],
    est: &dyn Estimator,
    harness: Harness,
) -> ContextView {
    let p: Profile = Harness::profile_of(journal, Some(harness));
    let s = in_force(&r.settings);
    // the model's window from the table `cache` uses (a 1M-window model is not "165 % of 200k")
    let table = crate::cache::PriceTable::builtin();
    let of_model = r.model.as_deref().and_then(|m| crate::cache::Limits::for_session(journal, Some(m), &table).window);
    let window = p.window(&s, of_model.map(|l| l.tokens));
    let used = r.calibrated;
    let percent = window.filter(|w| *w > 0).map(|w| used as f64 * 100.0 / w as f64);
    let passed = window.map_or(0, |w| p.tiers.iter().filter(|t| used >= pct(w, **t)).count());
    let level = ["normal", "warning", "danger", "critical"][passed.min(3)];
    let point = p.auto_point(&s, window);
    // Command Code shows the distance only once usage passes 40 % (seed 003, /context).
    let quiet = harness == Harness::CommandCode && percent.is_some_and(|x| x < 40.0);
    let until = point.filter(|_| !quiet).map(|at| Until {
        what: if matches!(harness, Harness::Ctxj | Harness::PiAgent) { "elision" } else { "auto-compact" },
        at,
        left: at.saturating_sub(used),
        past: used.saturating_sub(at),
    });
    let autocompact_buffer = window
        .zip(point)
        .filter(|_| !matches!(harness, Harness::Ctxj | Harness::PiAgent))
        .map(|(w, at)| w.saturating_sub(at));
    let free_space = window.map(|w| w.saturating_sub(used).saturating_sub(autocompact_buffer.unwrap_or(0)));
    let mut parts: Vec<ContextPart> = Vec::new();
    if let Some(x) = r.unrecorded_prefix {
        parts.push(ContextPart {
            name: match harness {
                // what Claude Code's and Command Code's /context list as their own rows
                Harness::ClaudeCode | Harness::CommandCode => {
                    "system prompt + tools + MCP tools + memory files + skills + agents (not recorded, inferred)".into()
                }
                _ => "system prompt + tool schemas (not recorded, inferred)".into(),
            },
            tokens: Some(x),
            items: 1,
            inferred: true,
        });
    }
    for part in &r.breakdown.parts {
        match part.name {
            "tool results" => {
                for (tool, (n, k)) in &r.breakdown.results_by_tool {
                    parts.push(ContextPart {
                        name: format!("{tool} results"),
                        tokens: Some(*n),
                        items: *k,
                        inferred: false,
                    });
                }
            }
            // the inferred part above stands for them
            _ if part.tokens.is_none() && r.unrecorded_prefix.is_some() => {}
            name => parts.push(ContextPart {
                name: if part.tokens.is_none() { format!("{name} (not recorded)") } else { name.to_string() },
                tokens: part.tokens,
                items: part.items,
                inferred: false,
            }),
        }
    }
    parts.retain(|x| x.tokens != Some(0));
    parts.sort_by(|a, b| b.tokens.cmp(&a.tokens).then_with(|| a.name.cmp(&b.name)));
    // A hint's share is the table's: of every part listed, the inferred prefix included.
    let listed: u64 = parts.iter().filter_map(|x| x.tokens).sum();
    let mut hints = hints(journal, r, blocks, est, s.keep_results, listed);
    match harness {
        // elision and `ctx clear` are journal-v1's levers only (a pi-agent journal is journal-v1)
        Harness::Ctxj | Harness::PiAgent => {}
        Harness::ClaudeCode | Harness::CommandCode => {
            hints.retain(|h| matches!(h, Hint::Dominates { .. }));
            // seed 003: /context suggests /compact from 50 %, insistently past 80 %
            if let (Some(x), Some(at)) = (percent.filter(|x| *x >= 50.0), point) {
                hints.push(Hint::Compact { percent: x, urgent: x >= 80.0, at });
            }
        }
        // the imported agents' lever is their own compaction, which the hints of journal-v1 are not
        _ => hints.retain(|h| matches!(h, Hint::Dominates { .. })),
    }
    let categories = categories(harness, r, blocks, est, used, free_space, autocompact_buffer);
    ContextView {
        categories,
        harness: harness.name(),
        used,
        window,
        percent,
        level,
        tiers: p.tiers.to_vec(),
        until,
        autocompact_buffer,
        free_space,
        parts,
        hints,
    }
}

/// The rows Claude Code's `/context` lists (system prompt, system tools, MCP tools, custom
/// agents, memory files, skills, messages, free space, autocompact buffer) and Command Code's
/// (seed 003: system prompt, memory, taste, system tools, MCP, skills, subagents, messages), in
/// calibrated tokens so they add up to `used`. A journal records the system prompt and the tool
/// schemas (MCP tools are those named `mcp__…`, Claude Code's convention) and the conversation
/// ("messages": every block after the system block, with the request framing); memory files,
/// skills, agents and taste are not recorded apart (they live inside the system prompt or the
/// unrecorded prefix an imported session's usage reveals), so their rows say "not recorded".
fn categories(
    harness: Harness,
    r: &RequestTokens,
    blocks: &[Block],
    est: &dyn Estimator,
    used: u64,
    free_space: Option<u64>,
    buffer: Option<u64>,
) -> Vec<ContextPart> {
    let names: [&str; 8] = match harness {
        Harness::ClaudeCode => {
            ["System prompt", "System tools", "MCP tools", "Custom agents", "Memory files", "Skills", "Messages", ""]
        }
        Harness::CommandCode => {
            ["System prompt", "Memory", "Taste", "System tools", "MCP", "Skills", "Subagents", "Messages"]
        }
        _ => return Vec::new(),
    };
    let part = |name: &str| r.breakdown.parts.iter().find(|p| p.name == name);
    let cal = |n: u64| calibrate::apply(n, r.multiplier);
    let system = part("system prompt").and_then(|p| p.tokens).map(cal);
    let schemas = part("tool schemas").and_then(|p| p.tokens);
    // the MCP tools' share of the schemas, counted tool by tool
    let tools: Vec<&serde_json::Value> = blocks
        .iter()
        .filter_map(|b| match b {
            Block::System { tools: Some(t), .. } => t.as_array(),
            _ => None,
        })
        .flatten()
        .collect();
    let mcp: Vec<&serde_json::Value> =
        tools.iter().copied().filter(|t| t["name"].as_str().is_some_and(|n| n.starts_with("mcp__"))).collect();
    let mcp_raw: u64 = mcp.iter().map(|t| est.count(&crate::projection::block::canonical_value(t))).sum();
    let n_mcp = mcp.len();
    let (sys_tools, mcp) = match schemas {
        Some(all) => (Some(cal(all.saturating_sub(mcp_raw))), Some(cal(mcp_raw.min(all)))),
        None => (None, None),
    };
    let prefix = r.unrecorded_prefix;
    let known = system.unwrap_or(0) + sys_tools.unwrap_or(0) + mcp.unwrap_or(0) + prefix.unwrap_or(0);
    let messages = used.saturating_sub(known);
    let n_messages = blocks.iter().filter(|b| !matches!(b, Block::System { .. })).count();
    let row = |name: &str, tokens: Option<u64>, items: usize| ContextPart {
        name: name.to_string(),
        tokens,
        items,
        inferred: false,
    };
    let mut out = Vec::new();
    for name in names.into_iter().filter(|n| !n.is_empty()) {
        out.push(match name {
            "System prompt" => row(name, system, usize::from(system.is_some())),
            "System tools" => row(name, sys_tools, tools.len() - n_mcp),
            "MCP tools" | "MCP" => row(name, mcp, n_mcp),
            "Messages" => row(name, Some(messages), n_messages),
            _ => row(name, None, 0),
        });
    }
    if let Some(x) = prefix {
        // an imported session: what its usage shows beyond the counted blocks, the unrecorded rows
        // above together
        out.push(ContextPart { name: "unrecorded rows (inferred)".into(), tokens: Some(x), items: 1, inferred: true });
    }
    out.push(row("Free space", free_space, 0));
    if harness == Harness::ClaudeCode {
        out.push(row("Autocompact buffer", buffer, 0));
    }
    out
}

/// A hint, typed (the renderer words it).
#[derive(Debug, Clone, PartialEq, Serialize, schemars::JsonSchema)]
#[serde(tag = "hint", rename_all = "snake_case")]
pub enum Hint {
    /// One tool's results hold at least a fifth of the request.
    Dominates { tool: String, tokens: u64, results: usize, percent: f64 },
    /// `elide-keep-K` would collapse `results` older results and free ≈ `frees` tokens.
    Elide { keep: u64, results: usize, frees: u64 },
    /// `ctx clear {"keep_last": K, "tool": T}` would clear `results` and free ≈ `frees` tokens.
    Clear { keep: u64, tool: String, results: usize, frees: u64 },
    /// `/compact` now, at a task boundary, before the automatic point `at` (Claude Code, Command
    /// Code: their lever); `urgent` past 80 % of the window.
    Compact { percent: f64, urgent: bool, at: u64 },
}

/// The calibrated sum of what `cands` free.
fn calibrated(r: &RequestTokens, cands: &[Candidate]) -> u64 {
    calibrate::apply(cands.iter().map(|c| c.frees).sum(), r.multiplier)
}

fn hints(
    journal: &Journal,
    r: &RequestTokens,
    blocks: &[Block],
    est: &dyn Estimator,
    keep: u64,
    listed: u64,
) -> Vec<Hint> {
    let mut out = Vec::new();
    let total = listed.max(1);
    let top = r.breakdown.results_by_tool.iter().max_by_key(|(_, (n, _))| *n);
    if let Some((tool, (n, k))) = top.filter(|(_, (n, _))| n.saturating_mul(5) >= total) {
        out.push(Hint::Dominates {
            tool: tool.clone(),
            tokens: *n,
            results: *k,
            percent: *n as f64 * 100.0 / total as f64,
        });
    }
    let k = usize::try_from(keep).unwrap_or(usize::MAX);
    let results: Vec<&Block> = blocks.iter().filter(|b| matches!(b, Block::Result { .. })).collect();
    let named = HashSet::new();
    let open = Open { keep: k, attachments: false, named: &named };
    let count = &mut |m: &str| est.count(m);
    let cands = elision::candidates(journal, blocks.iter(), open, &mut |b| est.block(b), count);
    let elide = calibrated(r, &cands);
    if elide > 0 {
        out.push(Hint::Elide { keep, results: cands.len(), frees: elide });
    }
    if let Some((tool, _)) = top {
        // the one selection rule of `ctx clear`, on the request as a projection
        let p = Projection {
            system: None,
            summaries: Vec::new(),
            conv: blocks.iter().map(|b| ProjBlock { block: b.clone(), src_rev: 0, mark: Mark::None }).collect(),
        };
        let request = ClearRequest { keep_last: Some(keep), tool: Some(tool.clone()), ..ClearRequest::default() };
        let ids: HashSet<String> = select(&p, &request, &HashSet::new()).into_iter().collect();
        let chosen: Vec<&Block> =
            results.iter().copied().filter(|b| b.id().is_some_and(|id| ids.contains(id))).collect();
        let cleared = |b: &Block| match b {
            Block::Result { call, tool, .. } => {
                Some(markers::cleared(tool, journal.result(call).map_or(0, |x| x.bytes)))
            }
            _ => None,
        };
        let freed: Vec<Candidate> = (chosen.iter())
            .filter_map(|b| Some(Candidate { id: String::new(), frees: frees(est.block(b), &cleared(b)?, count) }))
            .collect();
        let n = calibrated(r, &freed);
        if n > 0 {
            out.push(Hint::Clear { keep, tool: tool.clone(), results: chosen.len(), frees: n });
        }
    }
    out
}
