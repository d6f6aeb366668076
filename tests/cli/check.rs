//! `validate` and `audit`: every purpose-built invalid journal produces exactly its finding, the
//! clean base and every bundled sample validate clean, audit savings add up.

use std::path::{Path, PathBuf};

use serde_json::Value;

use crate::common::*;

fn data(rel: &str) -> PathBuf {
    repo().join("tests/data").join(rel)
}

/// One row of `tests/data/invalid/README.md`.
struct Case {
    file: String,
    command: String,
    expect: Vec<(String, u64)>,
}

fn cases() -> Vec<Case> {
    let readme = std::fs::read_to_string(data("invalid/README.md")).unwrap();
    readme
        .lines()
        .filter(|l| l.starts_with("| `"))
        .map(|l| {
            let cells: Vec<&str> = l.split('|').map(str::trim).collect();
            let file = cells[1].trim_matches('`').to_string();
            let expect = cells[3]
                .split(", ")
                .map(|e| {
                    let (rule, rev) = e.split_once(" rev ").unwrap_or_else(|| panic!("bad expectation {e:?}"));
                    (rule.to_string(), rev.parse().unwrap())
                })
                .collect();
            Case { file, command: cells[2].to_string(), expect }
        })
        .collect()
}

fn run_json(command: &str, path: &Path, extra: &[&str]) -> (Value, i32) {
    let out = ctxj().arg(command).arg(path).arg("--json").args(extra).output().unwrap();
    let code = out.status.code().unwrap();
    let v: Value = serde_json::from_slice(&out.stdout).unwrap_or_else(|e| {
        panic!("{command} {}: not JSON ({e}): {}", path.display(), String::from_utf8_lossy(&out.stderr))
    });
    (v, code)
}

fn findings(v: &Value) -> Vec<(String, String, u64)> {
    v["findings"]
        .as_array()
        .unwrap()
        .iter()
        .map(|f| {
            (
                f["severity"].as_str().unwrap().to_string(),
                f["rule"].as_str().unwrap().to_string(),
                f["rev"].as_u64().unwrap(),
            )
        })
        .collect()
}

/// Checks one case; returns what is wrong, if anything.
fn check_case(c: &Case) -> Result<(), String> {
    let path = data("invalid").join(&c.file);
    if !path.exists() {
        return Err(format!("{} listed in the README but absent", c.file));
    }
    let (v, code) = run_json(&c.command, &path, &[]);
    let got = findings(&v);
    let rules: Vec<&str> = c.expect.iter().map(|(r, _)| r.as_str()).collect();
    // exactly the expected findings of the expected rules …
    let mut of_rules: Vec<(String, u64)> =
        got.iter().filter(|(_, r, _)| rules.contains(&r.as_str())).map(|(_, r, rev)| (r.clone(), *rev)).collect();
    of_rules.sort();
    let mut want = c.expect.clone();
    want.sort();
    if of_rules != want {
        return Err(format!("{}: expected {want:?}, findings {got:?}", c.file));
    }
    // … and no other error
    let other: Vec<_> = got.iter().filter(|(s, r, _)| s == "error" && !rules.contains(&r.as_str())).collect();
    if !other.is_empty() {
        return Err(format!("{}: unexpected errors {other:?}", c.file));
    }
    let want_code = if got.iter().any(|(s, _, _)| s == "error") { 1 } else { 0 };
    if code != want_code {
        return Err(format!("{}: exit code {code}, expected {want_code}", c.file));
    }
    Ok(())
}

#[test]
fn every_invalid_journal_produces_exactly_its_finding() {
    use rayon::prelude::*;
    let cases = cases();
    assert!(cases.len() >= 30, "README lists {} journals", cases.len());
    // one process per journal, run in parallel
    let failures: Vec<String> = cases.par_iter().filter_map(|c| check_case(c).err()).collect();
    assert!(failures.is_empty(), "{}", failures.join("\n"));
    // every journal in the folder is listed
    let listed: std::collections::HashSet<&str> = cases.iter().map(|c| c.file.split('/').next().unwrap()).collect();
    for e in std::fs::read_dir(data("invalid")).unwrap().flatten() {
        let name = e.file_name().to_string_lossy().into_owned();
        if name != "README.md" {
            assert!(listed.contains(name.as_str()), "{name} is not listed in tests/data/invalid/README.md");
        }
    }
}

#[test]
fn every_rule_has_an_invalid_journal() {
    let cases = cases();
    for r in ctxj_core::check::RULES {
        let command = match r.check {
            ctxj_core::check::rules::Check::Validate => "validate",
            ctxj_core::check::rules::Check::Audit => "audit",
        };
        assert!(
            cases.iter().any(|c| c.command == command && c.expect.iter().any(|(id, _)| id == r.id)),
            "no invalid journal for {command} rule {}",
            r.id
        );
    }
}

#[test]
fn warnings_fail_only_with_deny_warnings() {
    let p = data("invalid/unknown-kind.jsonl");
    ctxj().arg("validate").arg(&p).assert().code(0);
    ctxj().arg("validate").arg(&p).args(["--deny", "warnings"]).assert().code(1);
    let p = data("invalid/call-unanswered.jsonl");
    ctxj().arg("validate").arg(&p).args(["--deny", "warnings"]).assert().code(0);
}

#[test]
fn the_base_validates_clean_and_shows_its_rejected_draft_as_info() {
    let p = data("valid/check-base");
    let (v, code) = run_json("validate", &p, &["--deny", "warnings"]);
    assert_eq!(code, 0);
    assert_eq!(findings(&v), [("info".to_string(), "mirror-rejected-ok".to_string(), 27)]);
    let out = ctxj().arg("validate").arg(&p).output().unwrap();
    let text = String::from_utf8(out.stdout).unwrap();
    assert!(text.contains("correctly rejected"), "{text}");
    assert!(text.contains("0 errors, 0 warnings, 1 info"), "{text}");
}

#[test]
fn unusable_input_exits_2() {
    let d = session_with("{\"rev\":1,\"kind\":\"session\",\"id\":\"s\"}\nnot json\n{\"rev\":3,\"kind\":\"x\"}\n");
    ctxj().arg("validate").arg(d.path()).assert().code(2);
    ctxj().arg("audit").arg(d.path()).assert().code(2);
    ctxj().args(["validate", "/nonexistent/session"]).assert().code(2);
}

#[test]
fn journal_text_in_findings_is_escaped() {
    let j = concat!(
        r#"{"rev":1,"ts":"2026-11-29T10:00:00Z","kind":"session","id":"s"}"#,
        "\n",
        r#"{"rev":2,"ts":"2026-11-29T10:00:01Z","kind":"result","call":"c\u001b]52;c;aGk=\u0007x","tool":"run","text":"t"}"#,
        "\n",
    );
    let d = session_with(j);
    let out = ctxj().arg("validate").arg(d.path()).output().unwrap();
    assert_eq!(out.status.code(), Some(1));
    assert!(!out.stdout.contains(&0x1b), "raw ESC reached the terminal");
    assert!(String::from_utf8_lossy(&out.stdout).contains("result-orphan"));
}

#[test]
fn bundled_samples_validate_clean() {
    let samples = samples();
    assert!(!samples.is_empty(), "no sample journal found under sample-journals/");
    for s in &samples {
        let (v, code) = run_json("validate", &sample(s), &["--deny", "warnings"]);
        assert_eq!(code, 0, "sample {s} does not validate clean: {:?}", findings(&v));
    }
    if samples.iter().any(|s| s == "long-elision") {
        let (v, _) = run_json("validate", &sample("long-elision"), &[]);
        assert!(
            findings(&v).iter().any(|(sev, r, _)| sev == "info" && r == "mirror-rejected-ok"),
            "long-elision's rejected draft should show as correctly rejected: {:?}",
            findings(&v)
        );
    }
}

fn assert_savings_add_up(v: &Value, what: &str) {
    let decisions = v["decisions"].as_array().unwrap();
    let mut running = 0i64;
    for d in decisions {
        running += d["saved"].as_i64().unwrap();
        assert_eq!(d["total"].as_i64().unwrap(), running, "{what}: running total at rev {}", d["rev"]);
    }
    assert_eq!(v["total_saved"].as_i64().unwrap(), running, "{what}: total");
}

#[test]
fn audit_savings_add_up_to_the_total() {
    let p = data("valid/check-base");
    let (v, code) = run_json("audit", &p, &[]);
    assert_eq!(code, 0, "{:?}", findings(&v));
    let kinds: Vec<&str> = v["decisions"].as_array().unwrap().iter().map(|d| d["kind"].as_str().unwrap()).collect();
    assert_eq!(kinds, ["elide", "clear", "mirror", "mirror", "compact"]);
    assert_savings_add_up(&v, "check-base");
    let text = String::from_utf8(ctxj().arg("audit").arg(&p).output().unwrap().stdout).unwrap();
    let total = v["total_saved"].as_i64().unwrap();
    assert!(
        text.contains(&format!("(total ~{} this session)", ctxj::render::format::thousands(total as u64))),
        "{text}"
    );
    for s in samples() {
        let (v, _) = run_json("audit", &sample(&s), &[]);
        assert_savings_add_up(&v, &s);
    }
}

#[test]
fn rendered_tables() {
    for cmd in ["validate", "audit"] {
        let out = ctxj().current_dir(repo()).arg(cmd).arg("tests/data/valid/check-base").output().unwrap();
        insta::assert_snapshot!(format!("{cmd}_check_base"), String::from_utf8(out.stdout).unwrap());
    }
    let out = ctxj().current_dir(repo()).args(["validate", "tests/data/invalid/R3.jsonl"]).output().unwrap();
    insta::assert_snapshot!("validate_r3", String::from_utf8(out.stdout).unwrap());
}

/// Bug (issue 13): `audit` fell back to o200k_base on a session `encoding` ctxj does not know
/// while `show --strategy elide-…` and `tokens` refused it, so the commands disagreed on one
/// journal. Every command that counts tokens now refuses it with the same message.
#[test]
fn audit_and_show_agree_on_unknown_encoding() {
    let journal = std::fs::read_to_string(sample("bugfix-todo").join("journal.jsonl")).unwrap();
    let journal = journal.replacen("\"kind\":\"session\",", "\"kind\":\"session\",\"encoding\":\"p50k_base\",", 1);
    let d = session_with(&journal);
    let runs: [&[&str]; 3] = [&["audit"], &["show", "--strategy", "elide-keep-2"], &["tokens"]];
    for args in runs {
        let out = ctxj().args(args).arg(d.path()).output().unwrap();
        let err = String::from_utf8_lossy(&out.stderr);
        assert_eq!(out.status.code(), Some(2), "{args:?}: {err}");
        assert!(err.contains("unknown encoding \"p50k_base\" (the session's `encoding`)"), "{args:?}: {err}");
        assert!(err.contains("expected o200k_base or cl100k_base"), "{args:?}: {err}");
    }
    // --encoding overrides the session's hint.
    ctxj().args(["tokens", "--encoding", "cl100k_base"]).arg(d.path()).assert().code(0);
}

/// Issue 30: each omission and failure rule has a journal in `tests/data/valid/` that passes —
/// the same session doing what its profile's seed asks — and audits clean under the profile its
/// `harness` field names, warnings denied.
#[test]
fn every_valid_journal_audits_clean_under_its_own_profile() {
    let mut n = 0;
    for e in std::fs::read_dir(data("valid")).unwrap().flatten() {
        let path = e.path();
        if path.extension().is_none_or(|x| x != "jsonl") {
            continue;
        }
        n += 1;
        for command in ["validate", "audit"] {
            let (v, code) = run_json(command, &path, &["--deny", "warnings"]);
            assert_eq!(code, 0, "{command} {}: {:?}", path.display(), findings(&v));
        }
    }
    assert!(n >= 5, "only {n} valid journals");
}

/// Issue 30's done-when: every profile has an omission rule for its seed's (or its source's)
/// threshold, with a journal in `tests/data/invalid/` that reports it under that profile and a
/// twin in `tests/data/valid/` that does what the profile asks and passes (`--deny warnings`).
/// `ctxj`'s automatic cleanup is elision at the budget (journal-v1 §6), the others' compaction.
#[test]
fn every_profile_has_an_omission_journal_and_a_passing_twin() {
    for h in ctxj_core::check::profile::HARNESSES {
        let (bad, good, rule) = match h.name() {
            "ctxj" => (
                "invalid/elide-missing.jsonl".to_string(),
                "valid/check-base/journal.jsonl".to_string(),
                "elide-missing",
            ),
            n => (
                format!("invalid/compact-missing-{n}.jsonl"),
                format!("valid/compact-missing-{n}.jsonl"),
                "compact-missing",
            ),
        };
        omission_pair(h.name(), &bad, &good, rule);
    }
    // seed 003's fast-mode tiers, judged when the `harness` field records the mode: each rule
    // with its journal, against the twin that does what the tier asks
    for (bad, good, rule) in [
        ("compact-missing-command-code-fast", "compact-missing-command-code-fast", "compact-missing"),
        ("compact-missing-command-code-tier2", "compact-missing-command-code-tier2", "compact-missing"),
        ("trim-trigger-command-code", "compact-missing-command-code-fast", "trim-trigger"),
        ("trim-keep-command-code", "compact-missing-command-code-fast", "trim-keep"),
        ("trim-trigger-command-code-default", "command-code-default", "trim-trigger"),
    ] {
        omission_pair("command-code", &format!("invalid/{bad}.jsonl"), &format!("valid/{good}.jsonl"), rule);
    }
}

/// `bad` reports `rule` under `profile`; `good` passes under it with warnings denied.
fn omission_pair(profile: &str, bad: &str, good: &str, rule: &str) {
    let (v, _) = run_json("audit", &data(bad), &[]);
    assert_eq!(v["harness"], profile, "{bad}");
    assert!(findings(&v).iter().any(|(_, r, _)| r == rule), "{bad}: no {rule}: {:?}", findings(&v));
    let (v, code) = run_json("audit", &data(good), &["--deny", "warnings"]);
    assert_eq!(v["harness"], profile, "{good}");
    assert_eq!(code, 0, "{good}: {:?}", findings(&v));
}

/// Issue 30: Command Code's fast-mode tiers (50 %/80 %, seed 003) were never judged — a journal
/// could not say which `/compact-mode` ran, so a missed trim passed silently. With the mode in the
/// `harness` field they are judged; without it `audit` says they are unjudged instead of assuming
/// a mode, on the trim's row and at the first request fast mode would have trimmed.
#[test]
fn regression_command_code_fast_mode_tiers_were_unjudged() {
    let rules = |file: &str| -> Vec<(String, String, u64)> {
        let (v, _) = run_json("audit", &data(file), &[]);
        v["findings"]
            .as_array()
            .unwrap()
            .iter()
            .map(|f| {
                (f["severity"].as_str().unwrap().into(), f["rule"].as_str().unwrap().into(), f["rev"].as_u64().unwrap())
            })
            .collect()
    };
    // the same untrimmed session: a tier-1 omission in fast mode, nothing in default mode, an
    // info note when the mode is not recorded
    let fast = rules("invalid/compact-missing-command-code-fast.jsonl");
    assert_eq!(fast, [("warning".to_string(), "compact-missing".to_string(), 70)]);
    assert!(rules("valid/command-code-default.jsonl").is_empty());
    let unrecorded = rules("valid/command-code-mode-unrecorded.jsonl");
    assert_eq!(unrecorded, [("info".to_string(), "trim-unjudged".to_string(), 70)]);
    let (v, _) = run_json("audit", &data("valid/command-code-mode-unrecorded.jsonl"), &[]);
    assert!(v["findings"][0]["message"].as_str().unwrap().contains("unjudged, mode not recorded"), "{v}");
    // a trim with no mode recorded: its row says so, no verdict either way
    let (v, code) = run_json("audit", &data("invalid/trim-unjudged.jsonl"), &["--deny", "warnings"]);
    assert_eq!(code, 0, "{v}");
    let trim = v["decisions"].as_array().unwrap().iter().find(|d| d["kind"] == "elide").unwrap().clone();
    assert_eq!(trim["verdicts"]["trigger"], serde_json::json!(["trim-unjudged"]), "{trim}");
}

/// Issue 30: harness detection was exact-name only; the profile is the `harness` field's first
/// word, and every audit names it.
#[test]
fn regression_profile_detected_from_a_versioned_harness_field() {
    for (file, want) in [
        ("valid/compact-missing-veles.jsonl", "veles"),
        ("valid/compact-missing-claude-code.jsonl", "claude-code"),
        ("valid/compact-missing-command-code.jsonl", "command-code"),
        ("valid/compact-missing-pi-agent.jsonl", "pi-agent"),
    ] {
        let (v, _) = run_json("audit", &data(file), &[]);
        assert_eq!(v["harness"], want, "{file}");
    }
}

/// Issue 30: `elide-grew` flagged an elision that journal-v1 §6 forced — oldest first, the last
/// open result smaller than its marker, every open block taken (skipping it would have been
/// `elide-order`). The bundled `long-elision` does this; an elision that grows the request while
/// blocks stay open (`invalid/elide-grew.jsonl`) is still flagged.
#[test]
fn regression_elide_grew_flagged_an_elision_the_rule_forced() {
    let (v, _) = run_json("audit", &sample("long-elision"), &[]);
    let grew =
        v["decisions"].as_array().unwrap().iter().filter(|d| d["kind"] == "elide" && d["saved"].as_i64().unwrap() < 0);
    assert!(grew.count() >= 2, "long-elision should hold forced elisions that grow the request");
    assert!(!findings(&v).iter().any(|(_, r, _)| r == "elide-grew"), "{:?}", findings(&v));
    let (v, _) = run_json("audit", &data("invalid/elide-grew.jsonl"), &[]);
    assert!(findings(&v).iter().any(|(_, r, rev)| r == "elide-grew" && *rev == 10), "{:?}", findings(&v));
}

/// Issue 30: `estimate-drift` flagged the bundled `spill-attach`'s `estimate_after` (16% above
/// ctxj's recount) although the provider billed that very request within 2% of it: the harness
/// estimates provider tokens, so ctxj's recount drifted. The next request's `prompt_tokens` now
/// clears an after-figure; a figure nobody billed is still judged against ctxj's.
#[test]
fn regression_estimate_drift_on_an_estimate_the_provider_confirmed() {
    let (v, _) = run_json("audit", &sample("spill-attach"), &[]);
    let d = v["decisions"].as_array().unwrap().iter().find(|d| d["kind"] == "elide").unwrap().clone();
    let (ours, recorded) = (d["after"].as_f64().unwrap(), d["recorded_after"].as_f64().unwrap());
    assert!((recorded - ours).abs() > 0.10 * ours, "the sample no longer shows the case: {d}");
    assert!(!findings(&v).iter().any(|(_, r, _)| r == "estimate-drift"), "{:?}", findings(&v));
    // The same journal with the next request's usage removed: nothing confirms the figure.
    let text = std::fs::read_to_string(sample("spill-attach").join("journal.jsonl")).unwrap();
    let next = text.lines().find(|l| l.contains("\"rev\":19,")).unwrap();
    let stripped = next.replace("\"prompt_tokens\":", "\"unbilled\":");
    let d = session_with(&text.replace(next, &stripped));
    for f in ["call_2.out", "call_5.out", "u_1.att"] {
        let from = sample("spill-attach").join(f);
        copy_tree(&from, &d.path().join(f));
    }
    let (v, _) = run_json("audit", d.path(), &[]);
    assert!(findings(&v).iter().any(|(_, r, rev)| r == "estimate-drift" && *rev == 18), "{:?}", findings(&v));
}

fn copy_tree(from: &Path, to: &Path) {
    if from.is_dir() {
        std::fs::create_dir_all(to).unwrap();
        for e in std::fs::read_dir(from).unwrap().flatten() {
            copy_tree(&e.path(), &to.join(e.file_name()));
        }
    } else {
        std::fs::copy(from, to).unwrap();
    }
}

/// Issue 30: a journal-v1 `compact` record had no `usage`, so a compaction arm never paid for its
/// summarizer call; the optional `compact.usage` (docs/journal-format.md) is read and validated
/// like an assistant record's: a well-formed one validates clean, a negative count makes the
/// line invalid (exit 2, the line named).
#[test]
fn regression_compact_usage_is_read_and_validated() {
    let base = std::fs::read_to_string(data("valid/compact-missing-veles.jsonl")).unwrap();
    let with =
        |usage: &str| base.replacen("\"first_kept\": 9}", &format!("\"first_kept\": 9, \"usage\": {usage}}}"), 1);
    let d = tempfile::tempdir().unwrap();
    let ok = d.path().join("ok.jsonl");
    std::fs::write(&ok, with(r#"{"prompt_tokens": 2900, "completion_tokens": 40}"#)).unwrap();
    assert!(std::fs::read_to_string(&ok).unwrap().contains("\"usage\""));
    let (_, code) = run_json("validate", &ok, &["--deny", "warnings"]);
    assert_eq!(code, 0);
    let bad = d.path().join("bad.jsonl");
    std::fs::write(&bad, with(r#"{"prompt_tokens": -5, "completion_tokens": 40}"#)).unwrap();
    let out = ctxj().arg("validate").arg(&bad).output().unwrap();
    assert_eq!(out.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&out.stderr).contains(":13 "), "{}", String::from_utf8_lossy(&out.stderr));
}
