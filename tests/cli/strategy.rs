//! Strategies: `show --strategy`, `diff`, `turns` (issue 3).

use predicates::prelude::*;
use serde_json::Value;

use crate::common::*;

/// A small bug-fix session: api.ts is read at turn 2 (its result holds the bug line), then two
/// more reads push it out of the last results.
fn bugfix() -> String {
    let api = format!(
        "export function handle(request) {{\n{}\n  const id = request.payload.id as number;\n  return id;\n}}\n",
        "  // filler line of the api module\n".repeat(30)
    );
    let lines = [
        r#"{"rev":1,"ts":"2026-11-29T10:00:00Z","kind":"session","id":"bf","model":"vendor/model-x"}"#.to_string(),
        r#"{"rev":2,"ts":"2026-11-29T10:00:00Z","kind":"system","text":"You are a coding agent."}"#.to_string(),
        r#"{"rev":3,"ts":"2026-11-29T10:00:01Z","kind":"user","id":"u1","text":"The todo id is wrong; fix it."}"#.to_string(),
        r#"{"rev":4,"ts":"2026-11-29T10:00:02Z","kind":"assistant","id":"a1","text":"","calls":[{"id":"c1","tool":"read","args":{"path":"src/api.ts"}}]}"#.to_string(),
        serde_json::json!({"rev":5,"ts":"2026-11-29T10:00:03Z","kind":"result","call":"c1","tool":"read","text":api,"bytes":api.len()}).to_string(),
        r#"{"rev":6,"ts":"2026-11-29T10:00:04Z","kind":"assistant","id":"a2","text":"","calls":[{"id":"c2","tool":"read","args":{"path":"src/db.ts"}}]}"#.to_string(),
        serde_json::json!({"rev":7,"ts":"2026-11-29T10:00:05Z","kind":"result","call":"c2","tool":"read","text":"x".repeat(800),"bytes":800}).to_string(),
        r#"{"rev":8,"ts":"2026-11-29T10:00:06Z","kind":"assistant","id":"a3","text":"","calls":[{"id":"c3","tool":"run","args":{"command":"npm test"}}]}"#.to_string(),
        serde_json::json!({"rev":9,"ts":"2026-11-29T10:00:07Z","kind":"result","call":"c3","tool":"run","text":"y".repeat(900),"bytes":900,"is_error":true}).to_string(),
        r#"{"rev":10,"ts":"2026-11-29T10:00:08Z","kind":"assistant","id":"a4","text":"","calls":[{"id":"c4","tool":"read","args":{"path":"src/ui.ts"}}]}"#.to_string(),
        serde_json::json!({"rev":11,"ts":"2026-11-29T10:00:09Z","kind":"result","call":"c4","tool":"read","text":"z".repeat(700),"bytes":700}).to_string(),
        r#"{"rev":12,"ts":"2026-11-29T10:00:10Z","kind":"assistant","id":"a5","text":"The id is parsed as a string.","calls":[{"id":"c5","tool":"edit","args":{"path":"src/api.ts"}}]}"#.to_string(),
        r#"{"rev":13,"ts":"2026-11-29T10:00:11Z","kind":"result","call":"c5","tool":"edit","text":"ok","bytes":2}"#.to_string(),
        r#"{"rev":14,"ts":"2026-11-29T10:00:12Z","kind":"assistant","id":"a6","text":"Fixed."}"#.to_string(),
    ];
    lines.join("\n") + "\n"
}

const BUG: &str = "request.payload.id as number";

/// The canonical request of every turn under `strategy` (via `show --json`).
fn requests(dir: &std::path::Path, strategy: &str) -> Vec<Vec<Value>> {
    let turns = {
        let out = ctxj().args(["turns", "--json", "--strategy", strategy]).arg(dir).output().unwrap();
        assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
        serde_json::from_slice::<Value>(&out.stdout).unwrap()["turns"].as_array().unwrap().len()
    };
    (1..=turns)
        .map(|k| {
            let out = ctxj()
                .args(["show", "--json", "--strategy", strategy, "--at", "turn", &k.to_string()])
                .arg(dir)
                .output()
                .unwrap();
            assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
            serde_json::from_slice(&out.stdout).unwrap()
        })
        .collect()
}

fn bug_in_results(req: &[Value]) -> bool {
    req.iter().any(|b| b["type"] == "result" && b["text"].as_str().unwrap().contains(BUG))
}

/// The seed-001 story, on `dir`: the turn whose request first holds the api.ts result is `after`.
fn check_bug_line(dir: &std::path::Path) {
    let base = requests(dir, "baseline");
    let after = base.iter().position(|r| bug_in_results(r)).expect("api.ts is read");
    assert!(base[after..].iter().all(|r| bug_in_results(r)), "baseline keeps the bug line from then on");
    assert!(requests(dir, "truncate-500").iter().all(|r| !bug_in_results(r)), "truncate-500 hides the bug line");
    let age = requests(dir, "age-truncate-500-keep-3");
    assert!(bug_in_results(&age[after]), "age-truncate keeps the fresh read verbatim");
}

#[test]
fn bug_line_under_truncate_age_truncate_and_baseline() {
    let d = session_with(&bugfix());
    check_bug_line(d.path());
}

#[test]
fn bug_line_on_the_bundled_sample() {
    check_bug_line(&sample("bugfix-todo"));
}

#[test]
fn diff_of_a_side_against_itself_is_only_the_summary_line() {
    let d = session_with(&bugfix());
    for args in [
        vec!["--strategy", "age-truncate-500-keep-3", "--strategy", "age-truncate-500-keep-3"],
        vec!["--at", "rev", "9", "--at", "rev", "9"],
        vec!["--strategy", "recorded", "--strategy", "baseline"],
    ] {
        let out = ctxj().arg("diff").arg(d.path()).args(&args).output().unwrap();
        assert_eq!(out.status.code(), Some(0), "{args:?}: {}", String::from_utf8_lossy(&out.stderr));
        let s = String::from_utf8(out.stdout).unwrap();
        assert_eq!(s.lines().count(), 1, "{args:?}: {s}");
        assert!(s.starts_with("identical: "), "{s}");
    }
}

#[test]
fn diff_of_two_strategies_reports_blocks_and_text() {
    let d = session_with(&bugfix());
    let out = ctxj()
        .arg("diff")
        .arg(d.path())
        .args(["--strategy", "baseline", "--strategy", "truncate-500", "--at", "turn", "6"])
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(1));
    let s = String::from_utf8(out.stdout).unwrap();
    assert!(s.contains("~ result c1 · "), "{s}");
    assert!(s.contains("--- baseline · turn 6\n+++ truncate-500 · turn 6\n"), "{s}");
    assert!(s.contains(&format!("-      const id = {BUG};")), "{s}");
    assert!(!s.contains('\x1b'), "no colour off a terminal");
    // --stat: the summary only.
    let out = ctxj()
        .arg("diff")
        .arg(d.path())
        .args(["--strategy", "baseline", "--strategy", "truncate-500", "--stat"])
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(1));
    let s = String::from_utf8(out.stdout).unwrap();
    assert!(!s.contains("+++"), "{s}");
    // Issue 32: `--stat` was not a stat. It is one line per changed block with its size before
    // and after, under a summary line of the counts.
    assert!(s.lines().next().is_some_and(|l| l.contains(" changed, ")), "{s}");
    assert!(s.lines().any(|l| l.starts_with("  ~ result c1 · ") && l.contains(" → ") && l.ends_with(")")), "{s}");
    // --json
    let out = ctxj()
        .arg("diff")
        .arg(d.path())
        .args(["--strategy", "baseline", "--strategy", "sliding-3", "--json"])
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(1));
    let v: Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(v["equal"], false);
    let only: Vec<&str> = v["only_left"].as_array().unwrap().iter().map(|e| e["id"].as_str().unwrap()).collect();
    assert!(only.contains(&"u1") && only.contains(&"c1"), "{only:?}");
    assert!(v["diff"].as_str().unwrap().starts_with("--- baseline"));
}

#[test]
fn diff_colours_on_request() {
    let d = session_with(&bugfix());
    ctxj()
        .args(["--color", "always", "diff"])
        .arg(d.path())
        .args(["--strategy", "baseline", "--strategy", "truncate-500"])
        .assert()
        .code(1)
        .stdout(predicate::str::contains("\x1b[31m-"));
}

#[test]
fn usage_errors_exit_2() {
    let d = session_with(&bugfix());
    ctxj()
        .arg("diff")
        .arg(d.path())
        .args(["--strategy", "truncate-five"])
        .assert()
        .code(2)
        .stderr(predicate::str::contains("age-truncate-500-keep-3").and(predicate::str::contains("tiered-fast")));
    ctxj().arg("diff").arg(d.path()).assert().code(2).stderr(predicate::str::contains("two sides"));
    ctxj()
        .arg("show")
        .arg(d.path())
        .args(["--strategy", "baseline", "--at", "rev", "4"])
        .assert()
        .code(2)
        .stderr(predicate::str::contains("turn K"));
    ctxj().arg("turns").arg(d.path()).args(["--strategy", "nope"]).assert().code(2);
    ctxj()
        .arg("show")
        .arg(d.path())
        .args(["--strategy", "baseline", "--at", "turn", "99"])
        .assert()
        .code(2)
        .stderr(predicate::str::contains("6 turns"));
}

#[test]
fn show_strategy_tags_changed_blocks_and_defaults_to_the_last_turn() {
    let d = session_with(&bugfix());
    let out = ctxj().arg("show").arg(d.path()).args(["--strategy", "per-tool-keep-1"]).output().unwrap();
    assert!(out.status.success());
    let s = String::from_utf8(out.stdout).unwrap();
    assert!(s.contains("per-tool-keep-1 · turn 6"), "{s}");
    assert!(s.contains("[stale read: src/api.ts; read again if needed]"), "{s}");
    assert!(s.contains("[stale read]"), "{s}");
    // recorded through --strategy is the recorded request of the last turn, byte for byte.
    let a = ctxj().arg("show").arg(d.path()).args(["--strategy", "recorded", "--json"]).output().unwrap();
    let b = ctxj().arg("show").arg(d.path()).args(["--at", "turn", "6", "--json"]).output().unwrap();
    assert_eq!(a.stdout, b.stdout);
}

#[test]
fn turns_shows_cache_behaviour() {
    let d = session_with(&bugfix());
    let rows = |s: &str| -> Vec<Value> {
        let out = ctxj().arg("turns").arg(d.path()).args(["--json", "--strategy", s]).output().unwrap();
        let doc: Value = serde_json::from_slice(&out.stdout).unwrap();
        assert_eq!(doc["schema"], "ctxj.turns/1");
        doc["turns"].as_array().unwrap().clone()
    };
    let base = rows("baseline");
    assert_eq!(base.len(), 6);
    assert_eq!(base[0]["change"], "first");
    assert!(base[1..].iter().all(|r| r["change"] == "appended"));
    // age-truncate rewrites exactly where a result ages out: api.ts when the 4th result arrives
    // (turn 5), db.ts with the 5th (turn 6).
    let age = rows("age-truncate-500-keep-3");
    let rewritten: Vec<(u64, &str)> = age
        .iter()
        .filter(|r| r["change"] == "rewritten")
        .map(|r| (r["turn"].as_u64().unwrap(), r["id"].as_str().unwrap()))
        .collect();
    assert_eq!(rewritten, [(5, "c1"), (6, "c2")], "{age:?}");
    assert_eq!(age[4]["why"], "text changed: truncated");
    let sliding = rows("sliding-3");
    assert!(sliding.iter().filter(|r| r["change"] == "rewritten").count() >= 3);
    let out = ctxj().arg("turns").arg(d.path()).args(["--strategy", "sliding-3"]).output().unwrap();
    let s = String::from_utf8(out.stdout).unwrap();
    assert!(s.contains("prefix rewritten at block 2"), "{s}");
}

#[test]
fn compaction_replays_write_the_summary() {
    let d = session_with(&bugfix());
    let out =
        ctxj().arg("show").arg(d.path()).args(["--strategy", "compact-at-1600-structured", "--json"]).output().unwrap();
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
    let v: Vec<Value> = serde_json::from_slice(&out.stdout).unwrap();
    let types: Vec<&str> = v.iter().map(|b| b["type"].as_str().unwrap()).collect();
    assert_eq!(types[..3], ["system", "user", "summary"], "{types:?}");
    let summary = v[2]["text"].as_str().unwrap();
    assert!(
        summary.starts_with("## Task Overview\nThe todo id is wrong; fix it.\n## Current State\n- src/api.ts\n"),
        "{summary}"
    );
}

const EVERY: &[&str] = &[
    "recorded",
    "baseline",
    "truncate-500",
    "age-truncate-500-keep-3",
    "mid-truncate-2000",
    "sliding-8",
    "sliding-8-pin",
    "per-tool-keep-2",
    "elide-keep-5",
    "elide-4000-2000-keep-2",
    "compact-at-12000-structured",
    "compact-at-2000t-repeat",
    "compact-at-6000-chain",
    "tiered",
    "tiered-fast",
];

#[test]
fn every_strategy_replays_every_sample_without_machinery() {
    for name in samples() {
        let dir = sample(&name);
        for s in EVERY {
            // Token-counting strategies load the tokenizer in every process: run them on the
            // sample with the recorded machinery (long-elision) and one other only.
            let tokens = s.starts_with("elide") || s.starts_with("tiered") || s.contains("t-");
            if tokens && name != "long-elision" && name != "compaction" {
                continue;
            }
            let out = ctxj().arg("show").arg(&dir).args(["--json", "--strategy", s]).output().unwrap();
            assert!(out.status.success(), "{name} {s}: {}", String::from_utf8_lossy(&out.stderr));
            let v: Vec<Value> = serde_json::from_slice(&out.stdout).unwrap();
            if *s == "recorded" {
                continue;
            }
            for b in &v {
                let calls = b["calls"].as_array().map(Vec::as_slice).unwrap_or_default();
                assert!(calls.iter().all(|c| c["tool"] != "ctx"), "{name} {s}: a ctx call survived");
                assert!(b["type"] != "result" || b["tool"] != "ctx", "{name} {s}: a ctx result survived");
                if b["type"] == "notice" {
                    let text = b["text"].as_str().unwrap();
                    let journal = std::fs::read_to_string(dir.join("journal.jsonl")).unwrap();
                    let line = journal.lines().find(|l| l.contains(&format!("\"id\":{}", b["id"]))).unwrap();
                    assert!(
                        !["manage_context", "mirror_applied", "mirror_rejected"]
                            .iter()
                            .any(|t| line.contains(&format!("\"topic\":\"{t}\""))),
                        "{name} {s}: machinery notice {text:?} survived"
                    );
                }
            }
        }
    }
}

/// A journal whose tool output carries terminal escapes and a secret.
const HOSTILE: &str = concat!(
    r#"{"rev":1,"ts":"2026-11-29T10:00:00Z","kind":"session","id":"h","model":"vendor/model-x"}"#,
    "\n",
    r#"{"rev":2,"ts":"2026-11-29T10:00:00Z","kind":"system","text":"sys"}"#,
    "\n",
    r#"{"rev":3,"ts":"2026-11-29T10:00:01Z","kind":"user","id":"u1","text":"fix it, key sk-abcdefghijklmnopqrstuvwx"}"#,
    "\n",
    r#"{"rev":4,"ts":"2026-11-29T10:00:02Z","kind":"assistant","id":"a1","text":"","calls":[{"id":"c1","tool":"run","args":{"command":"make"}}]}"#,
    "\n",
    r#"{"rev":5,"ts":"2026-11-29T10:00:03Z","kind":"result","call":"c1","tool":"run","text":"\u001b]52;c;aGk=\u0007\u001b[31mFAIL\u001b[0m\rOK\u202e and a long tail of output","bytes":60,"is_error":true}"#,
    "\n",
    r#"{"rev":6,"ts":"2026-11-29T10:00:04Z","kind":"assistant","id":"a2","text":"done"}"#,
    "\n",
);

#[test]
fn hostile_text_is_escaped_in_show_diff_and_turns() {
    let d = session_with(HOSTILE);
    for args in [
        vec!["show", "--strategy", "truncate-20"],
        vec!["diff", "--strategy", "baseline", "--strategy", "mid-truncate-20"],
        vec!["turns", "--strategy", "sliding-2"],
    ] {
        let out = ctxj().args(&args).arg(d.path()).output().unwrap();
        let s = String::from_utf8(out.stdout).unwrap();
        assert!(
            !s.contains('\x1b') && !s.contains('\x07') && !s.contains('\r') && !s.contains('\u{202e}'),
            "{args:?}: {s}"
        );
    }
}

#[test]
fn snapshots_of_turns_and_diff() {
    let d = session_with(&bugfix());
    let out = ctxj().arg("turns").arg(d.path()).args(["--strategy", "age-truncate-500-keep-3"]).output().unwrap();
    insta::assert_snapshot!("turns_age_truncate", String::from_utf8(out.stdout).unwrap());
    let out = ctxj()
        .arg("diff")
        .arg(d.path())
        .args(["--strategy", "per-tool-keep-1", "--strategy", "sliding-4-pin", "--stat"])
        .output()
        .unwrap();
    insta::assert_snapshot!("diff_per_tool_vs_sliding_stat", String::from_utf8(out.stdout).unwrap());
}
