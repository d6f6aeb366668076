//! The first hour of a new user (issue 32): strict inputs with hints, sessions addressable by any
//! form `sessions` shows, ccusage's reports in `usage`. Each test is named after the friction it
//! pins.

use crate::common::{ctxj, sample};

fn stderr_of(args: &[&str]) -> (Option<i32>, String, String) {
    let out = ctxj().args(args).output().unwrap();
    (out.status.code(), String::from_utf8_lossy(&out.stdout).into_owned(), String::from_utf8_lossy(&out.stderr).into_owned())
}

/// Bug: `--at 10` got clap's generic "2 values required" with no hint of `turn 10`.
#[test]
fn regression_at_with_a_bare_number_had_no_hint() {
    let s = sample("bugfix-todo");
    let s = s.to_str().unwrap();
    for args in [vec!["show", s, "--at", "10"], vec!["show", "--at", "10", s], vec!["show", s, "--at=10"]] {
        let (code, _, err) = stderr_of(&args);
        assert_eq!(code, Some(2), "{args:?}");
        assert!(err.contains(r#"did you mean "turn 10" or "rev 10"?"#), "{args:?}: {err}");
    }
    let (code, _, _) = stderr_of(&["show", s, "--at", "turn", "1"]);
    assert_eq!(code, Some(0));
}

/// Bug: `sliding-0` was accepted and looked like the cheapest strategy.
#[test]
fn regression_sliding_0_was_accepted() {
    let s = sample("bugfix-todo");
    for strategy in ["sliding-0", "compact-at-0"] {
        let (code, _, err) = stderr_of(&["cache", s.to_str().unwrap(), "-s", strategy]);
        assert_eq!(code, Some(2), "{strategy}");
        assert!(err.contains("N ≥ 1"), "{strategy}: {err}");
    }
}

/// Bug: `--since` after `--until` printed an empty table with cost `?` and exited 0.
#[test]
fn regression_inverted_date_range_printed_an_empty_table() {
    let t = sample("transcripts");
    let (code, out, err) =
        stderr_of(&["usage", t.to_str().unwrap(), "--since", "2026-03-15", "--until", "2026-03-01"]);
    assert_eq!(code, Some(2), "{out}");
    assert!(out.is_empty(), "{out}");
    assert!(err.contains("is after --until"), "{err}");
}

/// Bug: `--help` showed `[env: CTXJ_ROOT=]` when the variable is unset.
#[test]
fn regression_help_showed_an_empty_env_value() {
    let (code, out, _) = stderr_of(&["show", "--help"]);
    assert_eq!(code, Some(0));
    assert!(out.contains("CTXJ_ROOT"), "the variable is still named");
    assert!(!out.contains("CTXJ_ROOT="), "{out}");
}

const CLAUDE: &str = "claude-code/projects/-home-user-demo/d597cea3-543d-431a-9de6-c68f0abb00fb.jsonl";

/// The records of `ctxj log <name> --json` run with `extra` arguments, or the error.
fn log_of(name: &str, extra: &[&str], env: &[(&str, &std::path::Path)]) -> Result<String, (Option<i32>, String)> {
    let mut c = ctxj();
    c.args(["log", "--json"]).args(extra).args(["--", name]);
    for (k, v) in env {
        c.env(k, v);
    }
    let out = c.output().unwrap();
    if !out.status.success() {
        return Err((out.status.code(), String::from_utf8_lossy(&out.stderr).into_owned()));
    }
    let v: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    Ok(v["records"].to_string())
}

/// Bug: `sessions` said any path shown works in every command, but the path as listed (relative
/// to the folder), the bare session id and `--root ~/.claude/projects` all failed.
#[test]
fn regression_sessions_were_not_addressable_as_listed() {
    let t = sample("transcripts");
    let root = t.to_str().unwrap();
    let want = log_of(t.join(CLAUDE).to_str().unwrap(), &[], &[]).expect("the absolute path");
    for name in [
        CLAUDE,
        "d597cea3-543d-431a-9de6-c68f0abb00fb",
        "d597",
        "claude-code/projects/-home-user-demo/d597cea3-543d-431a-9de6-c68f0abb00fb",
    ] {
        assert_eq!(log_of(name, &["--root", root], &[]).as_ref(), Ok(&want), "{name} --root");
    }
    let projects = t.join("claude-code/projects");
    let project_key = "-home-user-demo/d597cea3";
    assert_eq!(log_of(project_key, &["--root", projects.to_str().unwrap()], &[]).as_ref(), Ok(&want));
    // Without --root: the agents' default folders.
    let config = t.join("claude-code");
    assert_eq!(log_of("d597", &[], &[("CLAUDE_CONFIG_DIR", &config)]).as_ref(), Ok(&want), "default folders");
    assert_eq!(log_of("d597", &[], &[("CTXJ_ROOT", &projects)]).as_ref(), Ok(&want), "CTXJ_ROOT");
    assert!(log_of("019cebc9", &["--root", root], &[]).is_ok(), "a Codex id prefix");
    let (code, err) = log_of("ffffffff", &["--root", root], &[]).unwrap_err();
    assert_eq!(code, Some(2), "{err}");
}

/// An id prefix two sessions share is refused (exit 2) with both candidates named.
#[test]
fn an_ambiguous_id_prefix_lists_the_candidates() {
    let d = tempfile::tempdir().unwrap();
    let src = sample("transcripts").join(CLAUDE);
    let proj = d.path().join("proj");
    std::fs::create_dir_all(&proj).unwrap();
    for id in ["aaaa1111-543d-431a-9de6-c68f0abb00fb", "aaaa2222-543d-431a-9de6-c68f0abb00fb"] {
        std::fs::copy(&src, proj.join(format!("{id}.jsonl"))).unwrap();
    }
    let root = d.path().to_str().unwrap();
    let (code, err) = log_of("aaaa", &["--root", root], &[]).unwrap_err();
    assert_eq!(code, Some(2), "{err}");
    assert!(err.contains("aaaa1111") && err.contains("aaaa2222"), "{err}");
    assert!(log_of("aaaa2", &["--root", root], &[]).is_ok());
}

/// Bug: `sessions` was sorted by path, not by cost; `--order asc` lists the cheapest first.
#[test]
fn regression_sessions_were_not_sorted_by_cost() {
    let t = sample("transcripts");
    let costs = |extra: &[&str]| -> Vec<f64> {
        let out = ctxj().arg("sessions").arg(&t).args(["--format", "json"]).args(extra).output().unwrap();
        assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
        let v: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
        let rows = v["sessions"].as_array().unwrap().clone();
        rows.iter().filter(|r| r["parent"].is_null()).map(|r| r["cost_usd"].as_f64().unwrap_or(-1.0)).collect()
    };
    let desc = costs(&[]);
    assert!(desc.len() >= 3 && desc.windows(2).all(|w| w[0] >= w[1]), "{desc:?}");
    let asc = costs(&["--order", "asc"]);
    assert!(asc.windows(2).all(|w| w[0] <= w[1]), "{asc:?}");
}
