//! Which model call each Codex `token_count` bills, by the rollout's turn structure rather than
//! by line order.
//!
//! Codex writes a call's `event_msg/token_count` when the provider's `response.completed`
//! arrives; where the call's `response_item`s land relative to it depends on the version:
//! * up to ~0.4x (`codex_vscode` 0.40): a turn's items are recorded after the sampling request
//!   returns (`run_task` → `record_conversation_items`), so each call's `token_count` comes
//!   *before* its items ("usage first");
//! * later versions record each item as it completes (`OutputItemDone`), so the `token_count`
//!   comes after the call's items — and after the output of a tool that finished before the
//!   stream did (seen on the first call of 0.142 subagent threads) ("usage after");
//! * some rollouts (Desktop) have no `token_count` at all; `update_rate_limits` repeats the last
//!   one with only the rate limits changed; `recompute_token_usage` writes a zero-input estimate
//!   after a compaction.
//!
//! So a rollout is cut into segments at its turn boundaries (`task_started`/`task_complete`/
//! `turn_aborted`, an input message, `compacted`): a call never straddles one in any version.
//! Inside a segment the responses (what the model produced between two inputs, as the importer
//! writes them) and the billed usages (a `token_count` with a changed `total_token_usage` and a
//! non-zero input, ccusage's rule) are paired in order when they are as many; otherwise each
//! usage takes the latest unpaired response before it (usage after) or, when none, the first one
//! after it (usage first). A usage left over bills a call the rollout holds no output of (a local
//! compaction's summarising call, an aborted call): the importer keeps it as an empty assistant
//! record so that nothing billed is lost.
//!
//! A forked thread's copy of its parent's rollout ([`super::ForkCopy`]) keeps its
//! items (the fork's context) but not its `token_count`s: they bill the parent's calls.

use std::collections::HashMap;

use serde_json::{Map, Value};

use super::super::{s, u, ImportReport, Line};
use crate::journal::Usage;

/// `response_item` types the model produced: they start (or continue) a response.
pub(super) const MODEL_ITEMS: &[&str] = &[
    "reasoning",
    "function_call",
    "custom_tool_call",
    "local_shell_call",
    "web_search_call",
    "image_generation_call",
    "tool_search_call",
];

/// `response_item` types of tool outputs: they end a response (inputs of the next call).
/// `tool_search_output` answers a `tool_search_call` that Codex ran itself (`"execution":
/// "client"`, 0.142 Desktop: the definitions of deferred tools), so the model is sampled again.
pub(super) const TOOL_OUTPUTS: &[&str] =
    &["function_call_output", "custom_tool_call_output", "local_shell_call_output", "tool_search_output"];

/// `event_msg` types that open or close a user turn (`turn_*` are their aliases).
pub(super) const TURN_EVENTS: &[&str] =
    &["task_started", "task_complete", "turn_started", "turn_complete", "turn_aborted"];

/// What the pairing found: the usage of each response (keyed by the line of its first item) and
/// the usages billing no recorded response (keyed by their `token_count` line).
#[derive(Debug, Default)]
pub(super) struct Pairing {
    pub by_start: HashMap<usize, Usage>,
    pub orphans: HashMap<usize, Usage>,
}

/// A response start or a billed usage, in line order.
enum Ev {
    Start(usize),
    Use(usize, Usage),
}

/// What one line does to the pairing.
enum Role {
    /// A model-produced item (starts a response unless one is open).
    Model,
    /// A tool output: ends the open response.
    Output,
    /// A turn boundary: ends the open response and the segment.
    Boundary,
    Other,
}

fn payload(o: &Map<String, Value>) -> Option<&Map<String, Value>> {
    o.get("payload").and_then(Value::as_object)
}

fn role(line: &Line) -> Role {
    let Some(p) = payload(&line.obj) else { return Role::Other };
    let pt = s(p, "type").unwrap_or("");
    match s(&line.obj, "type") {
        Some("response_item") => match pt {
            "message" if s(p, "role") == Some("assistant") => Role::Model,
            "message" => Role::Boundary,
            t if MODEL_ITEMS.contains(&t) => Role::Model,
            t if TOOL_OUTPUTS.contains(&t) => Role::Output,
            _ => Role::Other,
        },
        Some("event_msg") if TURN_EVENTS.contains(&pt) => Role::Boundary,
        Some("compacted") => Role::Boundary,
        _ => Role::Other,
    }
}

/// The billed usage of a `token_count` payload, or why it bills nothing (the reason is counted in
/// `skipped`). `last_total` is the `total_token_usage` of the previous one taken.
fn billed(p: &Map<String, Value>, last_total: &mut Option<Value>, report: &mut ImportReport) -> Option<Usage> {
    let info = match p.get("info") {
        None | Some(Value::Null) => {
            report.skip("token_count with info: null");
            return None;
        }
        Some(info) => info,
    };
    let total = info.get("total_token_usage").cloned();
    let last = info.get("last_token_usage").and_then(Value::as_object);
    let input = last.and_then(|l| u(l, "input_tokens")).unwrap_or(0);
    if input == 0 {
        report.skip("token_count estimate (zero input, e.g. after compaction)");
        *last_total = total;
        return None;
    }
    if total.is_some() && total == *last_total {
        report.skip("token_count repeating the previous total");
        return None;
    }
    *last_total = total;
    last.map(|l| Usage {
        prompt_tokens: Some(input),
        cached_tokens: Some(u(l, "cached_input_tokens").unwrap_or(0)),
        completion_tokens: Some(u(l, "output_tokens").unwrap_or(0)),
        // The reasoning the response produced; kept only when the response has a `reasoning`
        // item to send back (the importer's `flush`).
        reasoning_tokens: u(l, "reasoning_output_tokens").filter(|&n| n > 0),
        ..Default::default()
    })
}

/// Pairs every billed `token_count` of `lines` with the response it bills (see the module doc).
/// `model` is the rollout's first model: a later `turn_context` naming another ends the open
/// response, as it does in the importer.
pub(super) fn pair(lines: &[Line], mut model: Option<String>, report: &mut ImportReport) -> Pairing {
    let mut out = Pairing::default();
    let mut seg: Vec<Ev> = Vec::new();
    let mut open = false;
    let mut last_total = None;
    let mut fork = super::ForkCopy::default();
    for line in lines {
        match role(line) {
            Role::Model => {
                if !open {
                    open = true;
                    seg.push(Ev::Start(line.no));
                }
            }
            Role::Output => open = false,
            Role::Boundary => {
                open = false;
                resolve(std::mem::take(&mut seg), &mut out);
            }
            Role::Other => {
                let Some(p) = payload(&line.obj) else { continue };
                match s(&line.obj, "type") {
                    Some("turn_context") => {
                        if let Some(m) = s(p, "model") {
                            if model.as_deref() != Some(m) {
                                open = false;
                                model = Some(m.to_string());
                            }
                        }
                    }
                    Some("session_meta") => {
                        let forked = p.get("forked_from_id").is_some_and(Value::is_string);
                        fork.session_meta(s(&line.obj, "timestamp").unwrap_or(""), forked);
                    }
                    Some("event_msg") if s(p, "type") == Some("token_count") => {
                        if fork.copied(s(&line.obj, "timestamp").unwrap_or("")) {
                            report.skip("token_count copied from the parent thread (forked history)");
                            last_total = p.get("info").and_then(|i| i.get("total_token_usage")).cloned();
                            continue;
                        }
                        if let Some(usage) = billed(p, &mut last_total, report) {
                            seg.push(Ev::Use(line.no, usage));
                        }
                    }
                    _ => {}
                }
            }
        }
    }
    resolve(seg, &mut out);
    out
}

/// Pairs the responses and usages of one segment.
fn resolve(seg: Vec<Ev>, out: &mut Pairing) {
    let starts: Vec<usize> = seg.iter().filter_map(|e| if let Ev::Start(n) = e { Some(*n) } else { None }).collect();
    let uses = seg.iter().filter(|e| matches!(e, Ev::Use(..))).count();
    if starts.len() == uses {
        let mut k = 0;
        for e in seg {
            if let Ev::Use(_, usage) = e {
                out.by_start.insert(starts[k], usage);
                k += 1;
            }
        }
        return;
    }
    // As many as there are not: by position. A segment whose first event is a usage writes usage
    // first (a usage takes the first unpaired response after it, else the latest before it);
    // otherwise usage after (the latest unpaired response before it, else the first after it).
    let usage_first = matches!(seg.first(), Some(Ev::Use(..)));
    let mut paired = vec![false; starts.len()];
    let mut seen = 0; // starts before the current event
    for e in seg {
        match e {
            Ev::Start(_) => seen += 1,
            Ev::Use(no, usage) => {
                let before = || (0..seen).rev().find(|&i| !paired[i]);
                let after = || (seen..starts.len()).find(|&i| !paired[i]);
                let pick = if usage_first { after().or_else(before) } else { before().or_else(after) };
                match pick {
                    Some(i) => {
                        paired[i] = true;
                        out.by_start.insert(starts[i], usage);
                    }
                    None => {
                        out.orphans.insert(no, usage);
                    }
                }
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn lines(text: &str) -> Vec<Line> {
        text.lines()
            .enumerate()
            .map(|(i, l)| Line {
                no: i + 1,
                offset: 0,
                obj: serde_json::from_str::<Value>(l).unwrap().as_object().unwrap().clone(),
            })
            .collect()
    }

    fn tc(total: u64, input: u64) -> String {
        format!(
            r#"{{"type":"event_msg","payload":{{"type":"token_count","info":{{"total_token_usage":{{"total_tokens":{total}}},"last_token_usage":{{"input_tokens":{input},"cached_input_tokens":0,"output_tokens":1}}}}}}}}"#
        )
    }
    const USER: &str = r#"{"type":"response_item","payload":{"type":"message","role":"user","content":[]}}"#;
    const CALL: &str =
        r#"{"type":"response_item","payload":{"type":"function_call","name":"x","arguments":"{}","call_id":"c"}}"#;
    const OUT: &str =
        r#"{"type":"response_item","payload":{"type":"function_call_output","call_id":"c","output":"o"}}"#;
    const SAY: &str = r#"{"type":"response_item","payload":{"type":"message","role":"assistant","content":[]}}"#;
    const START: &str = r#"{"type":"event_msg","payload":{"type":"task_started"}}"#;
    const DONE: &str = r#"{"type":"event_msg","payload":{"type":"task_complete"}}"#;

    fn inputs(p: &Pairing) -> Vec<(usize, u64)> {
        let mut v: Vec<(usize, u64)> = p.by_start.iter().map(|(k, u)| (*k, u.prompt_tokens.unwrap())).collect();
        v.sort();
        v
    }

    #[test]
    fn usage_first_pairs_each_token_count_with_the_items_after_it() {
        // 0.40: token_count, then the call's items (recorded after the sampling request returned).
        let text = [START, USER, &tc(10, 10), CALL, OUT, &tc(30, 20), SAY, DONE].join("\n");
        let mut r = ImportReport::new(super::super::super::Format::Codex, std::path::Path::new("x"));
        let p = pair(&lines(&text), None, &mut r);
        assert_eq!(inputs(&p), vec![(4, 10), (7, 20)]);
        assert!(p.orphans.is_empty());
    }

    #[test]
    fn usage_after_the_tool_output_bills_the_call_before_it() {
        // 0.142 subagent: the first token_count after the output of the call it bills.
        let text = [START, USER, CALL, OUT, &tc(10, 10), SAY, &tc(30, 20), DONE].join("\n");
        let mut r = ImportReport::new(super::super::super::Format::Codex, std::path::Path::new("x"));
        let p = pair(&lines(&text), None, &mut r);
        assert_eq!(inputs(&p), vec![(3, 10), (6, 20)]);
    }

    #[test]
    fn a_missing_or_extra_token_count_is_placed_by_position_and_repeats_bill_once() {
        // Usage first, the second call's token_count missing, a repeat, and a compaction call's
        // usage with no items: the first call keeps its usage, the compaction call is an orphan.
        let text = [START, USER, &tc(10, 10), &tc(10, 10), CALL, OUT, SAY, &tc(30, 20), DONE].join("\n");
        let mut r = ImportReport::new(super::super::super::Format::Codex, std::path::Path::new("x"));
        let p = pair(&lines(&text), None, &mut r);
        assert_eq!(inputs(&p), vec![(5, 10), (7, 20)]);
        assert_eq!(r.skipped["token_count repeating the previous total"], 1);
        // Usage first, the middle call's token_count missing: the third usage bills the third call.
        let text = [START, USER, &tc(10, 10), CALL, OUT, CALL, OUT, &tc(30, 20), SAY, DONE].join("\n");
        let p = pair(&lines(&text), None, &mut r);
        assert_eq!(inputs(&p), vec![(4, 10), (9, 20)]);
        // Usage after, the first call's token_count missing.
        let text = [START, USER, CALL, OUT, SAY, &tc(30, 20), DONE].join("\n");
        let p = pair(&lines(&text), None, &mut r);
        assert_eq!(inputs(&p), vec![(5, 20)]);
        let text = [START, USER, &tc(10, 10), CALL, OUT, &tc(30, 20), DONE].join("\n");
        let p = pair(&lines(&text), None, &mut r);
        assert_eq!(inputs(&p), vec![(4, 10)]);
        assert_eq!(p.orphans.keys().copied().collect::<Vec<_>>(), vec![6]);
    }
}
