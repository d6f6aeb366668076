//! Flags resolved once (issue 27): the bugs of flags each command declared and parsed on its own,
//! each pinned by a test named after it.

use crate::common::{ctxj, sample};

/// The `prompt_tokens` of every row of `ctxj turns --json` with `extra` flags.
fn turn_tokens(extra: &[&str]) -> Vec<u64> {
    let out = ctxj().arg("turns").arg(sample("bugfix-todo")).arg("--json").args(extra).output().unwrap();
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
    let v: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    v["turns"].as_array().expect("turns").iter().map(|t| t["prompt_tokens"].as_u64().expect("prompt_tokens")).collect()
}

/// Bug: `turns` counted with the session's tokenizer whatever `--encoding` said (it did not take
/// the flag); now it counts with the one asked for.
#[test]
fn regression_turns_ignored_encoding() {
    let (o200k, cl100k) = (turn_tokens(&["--encoding", "o200k_base"]), turn_tokens(&["--encoding", "cl100k_base"]));
    assert_eq!(o200k, turn_tokens(&[]), "o200k_base is the default of this session");
    assert_eq!(o200k.len(), cl100k.len());
    assert_ne!(o200k, cl100k, "another tokenizer gives other counts");
}

/// Bug: `show -s` and `diff` replayed token-counted strategies with the session's tokenizer and
/// had no `--encoding`; the flag now reaches the estimator (an unknown name is refused, exit 2).
#[test]
fn regression_show_and_diff_ignored_encoding() {
    let bugfix = sample("bugfix-todo");
    for args in [vec!["show", "-s", "compact-at-2000t"], vec!["diff", "-s", "baseline", "-s", "compact-at-2000t"]] {
        let out = ctxj().args(&args).arg(&bugfix).args(["--encoding", "p50k_base"]).output().unwrap();
        assert_eq!(out.status.code(), Some(2), "{args:?}");
        assert!(String::from_utf8_lossy(&out.stderr).contains("p50k_base"), "{args:?}");
        let ok = ctxj().args(&args).arg(&bugfix).args(["--encoding", "cl100k_base"]).output().unwrap();
        assert!(ok.status.code().is_some_and(|c| c < 2), "{args:?}: {}", String::from_utf8_lossy(&ok.stderr));
    }
}

/// Bug: `turns --prices` loaded the table without the unknown-key policy of `cache` and `report`
/// (no warning, and `--strict` did not refuse it).
#[test]
fn regression_turns_prices_skipped_the_unknown_key_policy() {
    let dir = tempfile::tempdir().unwrap();
    let prices = dir.path().join("prices.json");
    std::fs::write(
        &prices,
        r#"{"gpt-4.1": {"input_cost_per_token": 2e-6, "output_cost_per_token": 8e-6, "cache_read_input_tokn_cost": 5e-7}}"#,
    )
    .unwrap();
    let out = ctxj().arg("turns").arg(sample("bugfix-todo")).arg("--prices").arg(&prices).output().unwrap();
    assert_eq!(out.status.code(), Some(0));
    let err = String::from_utf8(out.stderr).unwrap();
    assert!(err.contains("unknown key(s) ignored: cache_read_input_tokn_cost"), "{err}");
    let out =
        ctxj().arg("turns").arg(sample("bugfix-todo")).arg("--strict").arg("--prices").arg(&prices).output().unwrap();
    assert_eq!(out.status.code(), Some(2));
    assert!(String::from_utf8(out.stderr).unwrap().contains("(--strict)"));
}

/// Bug: `cache` compared a strategy given twice with itself (only `report` refused it); a list
/// of strategies now refuses a repeated name everywhere, while `diff` keeps two sides.
#[test]
fn regression_cache_accepted_a_strategy_twice() {
    for cmd in ["cache", "export"] {
        let out = ctxj().arg(cmd).arg(sample("bugfix-todo")).args(["-s", "sliding-8", "-s", "sliding-8"]).output();
        let out = out.unwrap();
        assert_eq!(out.status.code(), Some(2), "{cmd}");
        assert!(String::from_utf8_lossy(&out.stderr).contains("--strategy sliding-8 is given twice"), "{cmd}");
    }
}

/// `--cache` and `--provider-breaks` are parsed by clap into their types: a wrong value is a
/// usage error naming the possible values (no `_ =>` fallback left to reach).
#[test]
fn cache_and_provider_breaks_values_are_typed() {
    let out = ctxj().args(["turns", "--provider-breaks", "sometimes"]).arg(sample("bugfix-todo")).output().unwrap();
    assert_eq!(out.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&out.stderr).contains("[possible values: replay, ignore]"));
    let out = ctxj().args(["report", "--cache", "lru", "-o", "/tmp/x.html"]).arg(sample("bugfix-todo")).output();
    assert_eq!(out.unwrap().status.code(), Some(2));
}

/// Bug: `audit` counted with the session's tokenizer (`check::audit_as` chose it) and had no
/// `--encoding`; the flag now reaches the audit's estimator (an unknown name is refused, exit 2).
#[test]
fn regression_audit_ignored_encoding() {
    let out = ctxj().arg("audit").arg(sample("bugfix-todo")).args(["--encoding", "p50k_base"]).output().unwrap();
    assert_eq!(out.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&out.stderr).contains("p50k_base"));
    let ok = ctxj().arg("audit").arg(sample("bugfix-todo")).args(["--encoding", "cl100k_base"]).output().unwrap();
    assert!(ok.status.code().is_some_and(|c| c < 2), "{}", String::from_utf8_lossy(&ok.stderr));
}
