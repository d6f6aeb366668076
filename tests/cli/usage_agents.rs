//! Issue 16: `usage` and `sessions` read the agents' default folders with no path, count Codex
//! and pi like ccusage 20.0.24 (`tests/data/ccusage/`), group by period in a time zone, fit the
//! terminal and print every `--format`.

use std::path::{Path, PathBuf};

use serde_json::Value;

use crate::common::*;

fn transcripts() -> PathBuf {
    repo().join("sample-journals").join("transcripts")
}

fn ccusage(name: &str) -> Value {
    serde_json::from_slice(&std::fs::read(repo().join("tests/data/ccusage").join(name)).unwrap()).unwrap()
}

fn run(args: &[&str], env: &[(&str, &str)]) -> (String, String) {
    let mut c = ctxj();
    c.args(args);
    for (k, v) in env {
        c.env(k, v);
    }
    let out = c.output().unwrap();
    let (o, e) = (String::from_utf8(out.stdout).unwrap(), String::from_utf8(out.stderr).unwrap());
    assert!(out.status.success(), "{args:?}: {e}");
    (o, e)
}

fn json(args: &[&str]) -> Value {
    serde_json::from_str(&run(args, &[]).0).unwrap()
}

/// A `HOME` holding the bundled Claude Code, Codex and pi logs in their default places.
fn home_with_all_three() -> tempfile::TempDir {
    let h = tempfile::tempdir().unwrap();
    let copy = |from: &Path, to: &Path| {
        for e in walkdir::WalkDir::new(from).into_iter().flatten().filter(|e| e.file_type().is_file()) {
            let dest = to.join(e.path().strip_prefix(from).unwrap());
            std::fs::create_dir_all(dest.parent().unwrap()).unwrap();
            std::fs::copy(e.path(), dest).unwrap();
        }
    };
    copy(&transcripts().join("claude-code/projects"), &h.path().join(".claude/projects"));
    copy(&transcripts().join("codex/sessions"), &h.path().join(".codex/sessions"));
    copy(&transcripts().join("pi/sessions"), &h.path().join(".pi/agent/sessions"));
    h
}

/// ccusage's rows keyed by `key`: [input, output, cache creation, cache read] and the cost.
fn theirs(file: &str, list: &str, key: &str, cost: &str) -> Vec<(String, [u64; 4], f64)> {
    let v = ccusage(file);
    v[list]
        .as_array()
        .unwrap()
        .iter()
        .map(|r| {
            let n = |f: &str| r[f].as_u64().unwrap();
            (
                r[key].as_str().unwrap().to_string(),
                [n("inputTokens"), n("outputTokens"), n("cacheCreationTokens"), n("cacheReadTokens")],
                r[cost].as_f64().unwrap(),
            )
        })
        .collect()
}

fn assert_rows_equal(ours: &Value, reference: &[(String, [u64; 4], f64)], what: &str) {
    let mut rows = ours["rows"].as_array().unwrap().clone();
    rows.sort_by_key(|r| r["key"].as_str().unwrap().to_string());
    let mut reference = reference.to_vec();
    reference.sort_by(|a, b| a.0.cmp(&b.0));
    assert_eq!(rows.len(), reference.len(), "{what}");
    for (o, (key, tokens, cost)) in rows.iter().zip(&reference) {
        assert!(o["key"].as_str().unwrap().ends_with(key.as_str()), "{what}: {} vs {key}", o["key"]);
        let n = |f: &str| o[f].as_u64().unwrap();
        assert_eq!([n("input"), n("output"), n("cache_creation"), n("cache_read")], *tokens, "{what} {key}");
        let ours = o["cost_usd"].as_f64().unwrap();
        assert!((ours - cost).abs() <= 1e-9 * cost.max(1.0), "{what} {key}: cost {ours} vs ccusage {cost}");
    }
}

fn compare_codex_and_pi(codex: &Path, pi: &Path, prefix: &str) {
    for (dir, agent, cost) in [(codex, "codex", "costUSD"), (pi, "pi", "totalCost")] {
        let d = dir.to_str().unwrap();
        let session = json(&["usage", "--json", "--timezone", "UTC", d]);
        assert_rows_equal(
            &session,
            &theirs(&format!("{prefix}{agent}-session.json"), "sessions", "sessionId", cost),
            agent,
        );
        let day = json(&["usage", "--json", "--by", "day", "--timezone", "UTC", d]);
        assert_rows_equal(&day, &theirs(&format!("{prefix}{agent}-daily.json"), "daily", "date", cost), agent);
    }
}

#[test]
fn codex_and_pi_usage_equals_ccusage_on_the_bundled_transcripts() {
    compare_codex_and_pi(&transcripts().join("codex"), &transcripts().join("pi/sessions"), "bundled-");
}

#[test]
#[cfg_attr(not(ctxj_has_samples), ignore = "needs ../shared/samples (fails under CI=true)")]
fn codex_and_pi_usage_equals_ccusage_on_the_shared_samples() {
    let s = shared_samples();
    compare_codex_and_pi(&s.join("codex"), &s.join("pi/sessions"), "");
}

#[test]
fn no_argument_reads_every_agent_folder_of_home() {
    let h = home_with_all_three();
    let home = h.path().to_str().unwrap();
    let (out, err) = run(&["usage", "--json"], &[("HOME", home)]);
    let v: Value = serde_json::from_str(&out).unwrap();
    assert_eq!(v["schema"], "ctxj.usage/1");
    let agents: Vec<&str> = v["rows"].as_array().unwrap().iter().map(|r| r["agent"].as_str().unwrap()).collect();
    assert_eq!(agents.len(), 3, "{agents:?}");
    for a in ["claude-code", "codex", "pi"] {
        assert!(agents.contains(&a), "{agents:?}");
        assert!(err.contains(&format!("reading {a} logs in")), "{err}");
    }
    let (out, err) = run(&["usage", "--agent", "codex", "--json"], &[("HOME", home)]);
    assert!(!err.contains("claude-code"), "{err}");
    assert_eq!(serde_json::from_str::<Value>(&out).unwrap()["totals"]["agents"], serde_json::json!(["codex"]));
    let (out, _) = run(&["sessions", "--format", "ndjson"], &[("HOME", home)]);
    assert_eq!(out.lines().count(), 5, "{out}");
}

#[test]
fn no_argument_without_any_folder_is_a_usage_error() {
    let h = tempfile::tempdir().unwrap();
    ctxj().arg("usage").env("HOME", h.path()).assert().code(2).stderr(predicates::str::contains("no agent log folder"));
}

#[test]
fn periods_windows_and_zones() {
    let d = transcripts().join("codex");
    let d = d.to_str().unwrap();
    // 10:00 UTC on 2026-03-14 is already the 15th at UTC+14.
    let v = json(&["usage", "--json", "--by", "day", "--timezone", "Pacific/Kiritimati", d]);
    assert_eq!(v["rows"][0]["key"], "2026-03-15", "UTC+14");
    assert_eq!(v["timezone"], "Pacific/Kiritimati");
    let v = json(&["usage", "--json", "--by", "week", d]);
    assert_eq!(v["rows"][0]["key"], "2026-03-08", "weeks start on Sunday");
    let v = json(&["usage", "--json", "--by", "month", "--breakdown", d]);
    assert_eq!(v["rows"][0]["key"], "2026-03");
    assert_eq!(v["rows"][0]["breakdown"][0]["key"], "gpt-5.3-codex");
    let v = json(&["usage", "--json", "--since", "2026-03-15", d]);
    assert_eq!(v["rows"].as_array().unwrap().len(), 0);
    let v = json(&["usage", "--json", "--until", "2026-03-14T10:01:00Z", d]);
    assert!(v["totals"]["calls"].as_u64().unwrap() < 12);
    ctxj().args(["usage", "--timezone", "Mars/Base", d]).assert().code(2);
    ctxj().args(["usage", "--since", "soon", d]).assert().code(2);
}

#[test]
fn every_format_of_usage_and_sessions() {
    let d = transcripts();
    let d = d.to_str().unwrap();
    for cmd in ["usage", "sessions"] {
        let (csv, _) = run(&[cmd, "--format", "csv", d], &[]);
        let mut r = csv::Reader::from_reader(csv.as_bytes());
        assert!(r.headers().unwrap().iter().any(|h| h == "cache_hit"), "{csv}");
        assert!(r.records().count() >= 3, "{csv}");
        let (nd, _) = run(&[cmd, "--format", "ndjson", d], &[]);
        for l in nd.lines() {
            assert!(serde_json::from_str::<Value>(l).unwrap().is_object());
        }
        let (j, _) = run(&[cmd, "--format", "json", d], &[]);
        let (j2, _) = run(&[cmd, "--json", d], &[]);
        assert_eq!(j, j2);
        assert_eq!(serde_json::from_str::<Value>(&j).unwrap()["schema"], format!("ctxj.{cmd}/1"));
    }
}

#[test]
fn tables_fit_80_and_160_columns() {
    let d = transcripts();
    let d = d.to_str().unwrap();
    for cols in ["80", "160"] {
        for args in [vec!["usage", d, "--by", "day", "--breakdown"], vec!["sessions", d]] {
            let (out, _) = run(&args, &[("COLUMNS", cols)]);
            let limit: usize = cols.parse().unwrap();
            for l in out.lines() {
                assert!(l.chars().count() <= limit, "{args:?} at {cols}: {l}");
            }
            let name = format!("{}_{cols}", args[0]);
            insta::assert_snapshot!(name, out.replace(d, "<transcripts>"));
        }
    }
    let (ascii, _) = run(&["usage", d, "--ascii"], &[("COLUMNS", "80")]);
    assert!(ascii.is_ascii(), "{ascii}");
}
