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
