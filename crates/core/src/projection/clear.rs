//! The selection rule of `ctx clear` (spec `journal-v1.md` §2, `clear`) — the one place it is
//! implemented. `validate` recomputes every recorded clear with it; strategies and generators
//! call it to take the same decision the harness would.
//!
//! 1. candidates: the `result` blocks of the projection, in projection order, that no earlier
//!    `elide` or `clear` named (attachments are never candidates);
//! 2. `call_ids` keeps the candidates named there (`[]` keeps none); `before` keeps those whose
//!    result block stands before the result of call `before` (an id with no result in the
//!    projection keeps none); with neither, every candidate stays selected;
//! 3. masks narrow, never widen: `tool` keeps only results of that tool, then `keep_last: N` drops
//!    the N last of what remains.

use std::collections::HashSet;

use crate::journal::ClearRequest;

use super::block::{Block, Projection};

/// The call ids a `clear` with `request` selects in `projection` (the projection at the clear
/// record's `rev − 1`). `already_named` holds every id named by an earlier `elide` or `clear`.
pub fn select(projection: &Projection, request: &ClearRequest, already_named: &HashSet<String>) -> Vec<String> {
    let results: Vec<(usize, &str, &str)> = projection
        .conv
        .iter()
        .enumerate()
        .filter_map(|(i, b)| match &b.block {
            Block::Result { call, tool, .. } => Some((i, call.as_str(), tool.as_str())),
            _ => None,
        })
        .collect();
    let mut selected: Vec<(usize, &str, &str)> =
        results.iter().copied().filter(|(_, call, _)| !already_named.contains(*call)).collect();
    if let Some(ids) = &request.call_ids {
        let named: HashSet<&str> = ids.iter().map(String::as_str).collect();
        selected.retain(|(_, call, _)| named.contains(call));
    }
    if let Some(before) = &request.before {
        match results.iter().find(|(_, call, _)| *call == before.as_str()) {
            Some(&(limit, _, _)) => selected.retain(|(i, _, _)| *i < limit),
            None => selected.clear(),
        }
    }
    if let Some(tool) = &request.tool {
        selected.retain(|(_, _, t)| *t == tool.as_str());
    }
    if let Some(n) = request.keep_last {
        let keep = selected.len().saturating_sub(usize::try_from(n).unwrap_or(usize::MAX));
        selected.truncate(keep);
    }
    selected.into_iter().map(|(_, call, _)| call.to_string()).collect()
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::projection::block::{Mark, ProjBlock};

    fn proj() -> Projection {
        // u1, a1(c1 read, c2 run), r c1, r c2, a2(c3 read), r c3, att, a3(c4 read), r c4
        let mut p = Projection::default();
        let mut push = |b: Block| p.conv.push(ProjBlock { block: b, src_rev: 1, mark: Mark::None });
        push(Block::User { id: "u1".into(), text: "go".into() });
        for (call, tool) in [("c1", "read"), ("c2", "run"), ("c3", "read"), ("c4", "read")] {
            if call == "c4" {
                push(Block::Attachment { id: "att".into(), user: "u1".into(), text: "x".into() });
            }
            push(Block::Result { call: call.into(), tool: tool.into(), text: "out".into() });
        }
        p
    }

    fn req(json: &str) -> ClearRequest {
        serde_json::from_str(json).unwrap()
    }

    fn sel(json: &str, named: &[&str]) -> Vec<String> {
        let named: HashSet<String> = named.iter().map(|s| s.to_string()).collect();
        select(&proj(), &req(json), &named)
    }

    #[test]
    fn no_filter_selects_every_result_not_yet_named_and_never_attachments() {
        assert_eq!(sel("{}", &[]), ["c1", "c2", "c3", "c4"]);
        assert_eq!(sel("{}", &["c2"]), ["c1", "c3", "c4"]);
    }

    #[test]
    fn call_ids_keep_only_named_candidates() {
        assert_eq!(sel(r#"{"call_ids":["c3","c1","zz"]}"#, &[]), ["c1", "c3"]);
        assert!(sel(r#"{"call_ids":[]}"#, &[]).is_empty());
        assert!(sel(r#"{"call_ids":["c1"]}"#, &["c1"]).is_empty(), "already cleared: nothing to clear");
    }

    #[test]
    fn before_keeps_results_standing_before_that_result() {
        assert_eq!(sel(r#"{"before":"c3"}"#, &[]), ["c1", "c2"]);
        assert!(sel(r#"{"before":"c1"}"#, &[]).is_empty());
        // an id with no result in the projection keeps none (not all)
        assert!(sel(r#"{"before":"nope"}"#, &[]).is_empty());
        // an attachment id is not a result either
        assert!(sel(r#"{"before":"att"}"#, &[]).is_empty());
        // the limit counts even when that result was itself cleared earlier
        assert_eq!(sel(r#"{"before":"c3"}"#, &["c3"]), ["c1", "c2"]);
    }

    #[test]
    fn masks_narrow_never_widen() {
        assert_eq!(sel(r#"{"tool":"read"}"#, &[]), ["c1", "c3", "c4"]);
        assert_eq!(sel(r#"{"keep_last":3,"tool":"read"}"#, &[]), Vec::<String>::new());
        assert_eq!(sel(r#"{"keep_last":1,"tool":"read"}"#, &[]), ["c1", "c3"]);
        // the tool mask applies to what call_ids selected; it never adds c3
        assert_eq!(sel(r#"{"call_ids":["c1","c2"],"tool":"read"}"#, &[]), ["c1"]);
        // keep_last drops from the end of what remains after the other filters
        assert_eq!(sel(r#"{"before":"c4","keep_last":1}"#, &[]), ["c1", "c2"]);
        assert!(sel(r#"{"keep_last":99}"#, &[]).is_empty());
        assert_eq!(sel(r#"{"keep_last":0}"#, &[]), ["c1", "c2", "c3", "c4"]);
    }

    #[test]
    fn call_ids_and_before_both_apply() {
        assert_eq!(sel(r#"{"call_ids":["c1","c4"],"before":"c3"}"#, &[]), ["c1"]);
    }

    mod props {
        use super::*;
        use proptest::prelude::*;

        fn projection(tools: &[u8]) -> Projection {
            let mut p = Projection::default();
            for (i, t) in tools.iter().enumerate() {
                let block = if *t == 3 {
                    Block::Attachment { id: format!("p{i}"), user: "u".into(), text: "x".into() }
                } else {
                    Block::Result { call: format!("c{i}"), tool: format!("t{t}"), text: "x".into() }
                };
                p.conv.push(ProjBlock { block, src_rev: 1, mark: Mark::None });
            }
            p
        }

        fn request() -> impl Strategy<Value = ClearRequest> {
            (
                proptest::option::of(proptest::collection::vec(0usize..12, 0..6)),
                proptest::option::of(0usize..14),
                proptest::option::of(0u64..6),
                proptest::option::of(0u8..3),
            )
                .prop_map(|(ids, before, keep_last, tool)| ClearRequest {
                    call_ids: ids.map(|v| v.into_iter().map(|i| format!("c{i}")).collect()),
                    before: before.map(|i| format!("c{i}")),
                    keep_last,
                    tool: tool.map(|t| format!("t{t}")),
                })
        }

        proptest! {
            /// The selection is an ordered subset of the unnamed results; a mask only narrows it.
            #[test]
            fn masks_narrow_never_widen(
                tools in proptest::collection::vec(0u8..4, 0..12),
                req in request(),
                named in proptest::collection::hash_set(0usize..12, 0..4),
            ) {
                let p = projection(&tools);
                let named: HashSet<String> = named.into_iter().map(|i| format!("c{i}")).collect();
                let sel = select(&p, &req, &named);
                let unmasked = select(&p, &ClearRequest { tool: None, keep_last: None, ..req.clone() }, &named);
                let order: Vec<String> = p.conv.iter().filter_map(|b| match &b.block {
                    Block::Result { call, .. } => Some(call.clone()),
                    _ => None,
                }).collect();
                // subset of the unmasked selection, in projection order, never a named or non-result block
                let mut it = unmasked.iter();
                for id in &sel {
                    prop_assert!(it.any(|u| u == id), "{id} not in the unmasked selection in order");
                    prop_assert!(!named.contains(id));
                    prop_assert!(order.contains(id));
                }
                if let Some(t) = &req.tool {
                    for id in &sel {
                        let i: usize = id[1..].parse().unwrap();
                        prop_assert_eq!(&format!("t{}", tools[i]), t);
                    }
                }
                if req.keep_last.is_none() && req.tool.is_none() {
                    prop_assert_eq!(&sel, &unmasked);
                }
                // call_ids and before only ever narrow "everything"
                let all = select(&p, &ClearRequest::default(), &named);
                for id in &unmasked {
                    prop_assert!(all.contains(id));
                }
            }
        }
    }
}
