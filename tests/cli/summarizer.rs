//! The compaction summarizer's own request (issue 17): a replayed compaction is a request of its
//! own — the summarized blocks and the instruction in, the summary out — counted and priced in
//! `cache` (a Σ row, its cost in the strategy's) and marked in `turns`.

use serde_json::Value;

use crate::common::*;

fn json(args: &[&str]) -> Value {
    let out = ctxj().current_dir(repo()).args(args).output().unwrap();
    assert_eq!(out.status.code(), Some(0), "{args:?}: {}", String::from_utf8_lossy(&out.stderr));
    serde_json::from_slice(&out.stdout).unwrap()
}

/// Bug (issue 17): `compact-at-…` did not price the summarizer's request, so compaction looked
/// as cheap as baseline for the wrong reason.
#[test]
fn a_compaction_replay_prices_its_summarizer_request() {
    let v = json(&["cache", "sample-journals/bugfix-todo", "--strategy", "compact-at-2000t", "--per-turn", "--json"]);
    let s = &v["strategies"][0];
    let m = &s["summary"]["summarizer"];
    assert_eq!(m["calls"], 1, "{m}");
    assert!(m["prompt"].as_u64().unwrap() > 1000 && m["output"].as_u64().unwrap() > 50, "{m}");
    let turns = s["turns"].as_array().unwrap();
    let with: Vec<&Value> = turns.iter().filter(|t| t.get("summarizer").is_some()).collect();
    assert_eq!(with.len(), 1);
    assert_eq!(with[0]["turn"], 8);
    assert_eq!(with[0]["summarizer"]["summarized"], 10);
    // the strategy's cost is its turns' plus the summarizer's
    let turn_cost: f64 = turns.iter().map(|t| t["cost"].as_f64().unwrap()).sum();
    let sum_cost = m["cost"].as_f64().unwrap();
    assert!(sum_cost > 0.0);
    let total = s["summary"]["cost"].as_f64().unwrap();
    assert!((total - (turn_cost + sum_cost)).abs() < 1e-9, "{total} vs {turn_cost} + {sum_cost}");
    // baseline never calls it
    let v = json(&["cache", "sample-journals/bugfix-todo", "--strategy", "baseline", "--json"]);
    assert_eq!(v["strategies"][0]["summary"]["summarizer"]["calls"], 0);
}

#[test]
fn turns_and_cache_tables_mark_the_summarizer_request() {
    let out = ctxj()
        .current_dir(repo())
        .args(["turns", "sample-journals/bugfix-todo", "--strategy", "compact-at-2000t"])
        .output()
        .unwrap();
    let text = String::from_utf8(out.stdout).unwrap();
    let line = text.lines().find(|l| l.contains("8 Σ")).unwrap_or_else(|| panic!("{text}"));
    assert!(line.contains("summarizer request: 10 block(s) + instruction in"), "{line}");
    let v = json(&["turns", "sample-journals/bugfix-todo", "--strategy", "compact-at-2000t", "--json"]);
    let marked: Vec<u64> = v
        .as_array()
        .unwrap()
        .iter()
        .filter(|r| r.get("summarizer").is_some())
        .map(|r| r["turn"].as_u64().unwrap())
        .collect();
    assert_eq!(marked, [8]);
    let out = ctxj()
        .current_dir(repo())
        .args(["cache", "sample-journals/bugfix-todo", "--strategy", "compact-at-2000t", "--per-turn"])
        .output()
        .unwrap();
    let text = String::from_utf8(out.stdout).unwrap();
    assert!(text.lines().any(|l| l.contains("8 Σ") && l.contains("summarizer")), "{text}");
    assert!(text.contains("compact-at-2000t: 1 summarizer request(s)"), "{text}");
}
