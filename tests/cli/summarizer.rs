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
    let marked: Vec<u64> = v["turns"]
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

/// `--summarizer CMD` end to end with a fake command: its stdout becomes the summary, the answer
/// is cached (the second run does not call it), failures exit 2 with one clear message.
#[test]
fn a_summarizer_command_writes_the_summary_and_is_cached() {
    let d = tempfile::tempdir().unwrap();
    let (cache, calls) = (d.path().join("cache"), d.path().join("calls"));
    let script = d.path().join("fake.sh");
    std::fs::write(
        &script,
        format!(
            "#!/bin/sh\nbytes=$(wc -c | tr -d ' ')\necho call >> '{}'\necho \"FAKE SUMMARY of $bytes bytes\"\n",
            calls.display()
        ),
    )
    .unwrap();
    let cmd = format!("sh '{}'", script.display());
    let run = |extra: &[&str]| {
        ctxj()
            .current_dir(repo())
            .env("CTXJ_CACHE_DIR", &cache)
            .env_remove("CTXJ_NO_CACHE")
            .args(["show", "sample-journals/bugfix-todo", "-s", "compact-at-2000t", "--summarizer"])
            .arg(&cmd)
            .args(extra)
            .output()
            .unwrap()
    };
    let out = run(&[]);
    assert_eq!(out.status.code(), Some(0), "{}", String::from_utf8_lossy(&out.stderr));
    let text = String::from_utf8(out.stdout).unwrap();
    assert!(text.contains("FAKE SUMMARY of "), "{text}");
    assert!(!text.contains("## Task Overview"), "the template is replaced: {text}");
    let n = || std::fs::read_to_string(&calls).unwrap().lines().count();
    assert_eq!(n(), 1);
    assert_eq!(files_under(&cache.join("summaries"), "txt").len(), 1, "cached in <cache>/summaries");
    let again = run(&[]);
    assert_eq!(again.stdout, text.as_bytes(), "repeatable");
    assert_eq!(n(), 1, "the second run reads the cache");
    // without the flag nothing runs: the template
    let plain = ctxj()
        .current_dir(repo())
        .args(["show", "sample-journals/bugfix-todo", "-s", "compact-at-2000t"])
        .output()
        .unwrap();
    assert!(String::from_utf8_lossy(&plain.stdout).contains("## Task Overview"));
    assert_eq!(n(), 1);
    // failures: exit status, timeout, empty output — exit 2, one message, nothing printed
    for (bad, timeout, want) in [
        ("echo broken >&2; exit 3", "30", "exited with exit status: 3: broken"),
        ("sleep 5", "1", "did not answer within 1 s (killed)"),
        ("cat > /dev/null", "30", "wrote no summary"),
    ] {
        let out = ctxj()
            .current_dir(repo())
            .env("CTXJ_CACHE_DIR", &cache)
            .args([
                "cache",
                "sample-journals/bugfix-todo",
                "-s",
                "compact-at-2000t",
                "--summarizer",
                bad,
                "--summarizer-timeout",
                timeout,
            ])
            .output()
            .unwrap();
        let err = String::from_utf8_lossy(&out.stderr);
        assert_eq!(out.status.code(), Some(2), "{bad}: {err}");
        assert!(err.contains(want), "{bad}: {err}");
        assert!(out.stdout.is_empty(), "{bad}: nothing printed");
    }
}

/// Issue 30: `--summarizer-timeout 0` silently meant one second; it is a usage error now.
#[test]
fn regression_summarizer_timeout_zero_is_refused() {
    let out = ctxj()
        .current_dir(repo())
        .args([
            "cache",
            "sample-journals/bugfix-todo",
            "-s",
            "compact-at-2000t",
            "--summarizer",
            "cat",
            "--summarizer-timeout",
            "0",
        ])
        .output()
        .unwrap();
    let err = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(2), "{err}");
    assert!(err.contains("--summarizer-timeout"), "{err}");
    assert!(out.stdout.is_empty());
}

/// Issue 31: `--no-cache` and `CTXJ_NO_CACHE` did not turn the summary cache off.
#[test]
fn regression_summary_cache_off_with_no_cache() {
    let d = tempfile::tempdir().unwrap();
    let cache = d.path().join("cache");
    for (flag, env) in [(Some("--no-cache"), None), (None, Some("1"))] {
        let mut c = ctxj();
        c.current_dir(repo()).env("CTXJ_CACHE_DIR", &cache).env_remove("CTXJ_NO_CACHE");
        if let Some(v) = env {
            c.env("CTXJ_NO_CACHE", v);
        }
        c.args(["show", "sample-journals/bugfix-todo", "-s", "compact-at-2000t", "--summarizer", "echo S"]);
        c.args(flag);
        let out = c.output().unwrap();
        assert_eq!(out.status.code(), Some(0), "{}", String::from_utf8_lossy(&out.stderr));
        assert!(!cache.join("summaries").exists(), "{flag:?} {env:?}: a summary was cached");
    }
}

/// Issue 31: with `CTXJ_CACHE_DIR` inside a session, summaries were written into the session
/// (the token memo refused the same folder); now both are refused with a warning.
#[test]
fn regression_summary_cache_inside_a_session_writes_nothing_there() {
    let d = tempfile::tempdir().unwrap();
    let session = d.path().join("s");
    std::fs::create_dir(&session).unwrap();
    std::fs::copy(repo().join("sample-journals/bugfix-todo/journal.jsonl"), session.join("journal.jsonl")).unwrap();
    let out = ctxj()
        .env("CTXJ_CACHE_DIR", session.join("cache"))
        .env_remove("CTXJ_NO_CACHE")
        .arg("show")
        .arg(&session)
        .args(["-s", "compact-at-2000t", "--summarizer", "echo S"])
        .output()
        .unwrap();
    let err = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(0), "{err}");
    assert!(err.contains("summaries not cached"), "{err}");
    assert!(!session.join("cache").exists(), "nothing written inside the session");
}
