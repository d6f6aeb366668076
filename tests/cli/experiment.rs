//! `ctxj experiment` and the bundled experiment `sample-journals/experiment-bugfix/` (issue 19):
//! seed 001's relations reproduced, intervals reproducible, replays marked, mixed formats as arms,
//! the `outcome` record read and validated, and bad manifests refused with exit 2.

#[path = "../../examples/gen_experiment.rs"]
#[allow(dead_code)]
mod gen_experiment;

use std::path::{Path, PathBuf};

use serde_json::Value;

use crate::common::{ctxj, repo, shared_samples, snapshot};

fn bundled() -> PathBuf {
    repo().join("sample-journals/experiment-bugfix")
}

fn manifest() -> PathBuf {
    bundled().join("experiment.toml")
}

/// `ctxj experiment <manifest> <extra…> --format json`, parsed.
fn json(manifest: &Path, extra: &[&str]) -> Value {
    let out = ctxj().arg("experiment").arg(manifest).args(extra).args(["--format", "json"]).output().unwrap();
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
    serde_json::from_slice(&out.stdout).unwrap()
}

fn arm<'a>(doc: &'a Value, label: &str) -> &'a Value {
    doc["arms"].as_array().unwrap().iter().find(|a| a["label"] == label).unwrap_or_else(|| panic!("no arm {label}"))
}

fn metric<'a>(arm: &'a Value, name: &str) -> &'a Value {
    arm["metrics"].as_array().unwrap().iter().find(|m| m["metric"] == name).unwrap()
}

fn cost_ratio(doc: &Value, label: &str) -> (f64, f64, f64) {
    let v = &metric(arm(doc, label), "cost")["vs_reference"];
    let i = v["interval"].as_array().unwrap();
    (v["value"].as_f64().unwrap(), i[0].as_f64().unwrap(), i[1].as_f64().unwrap())
}

#[test]
fn the_bundled_experiment_reproduces_the_seeds_relations() {
    let doc = json(&manifest(), &[]);
    assert_eq!(doc["schema"], "ctxj.experiment/1");
    assert_eq!(doc["reference"], "baseline");
    let passes = |l: &str| (arm(&doc, l)["passed"].as_u64().unwrap(), arm(&doc, l)["judged"].as_u64().unwrap());
    // Pass rates: truncate-500 0/3, the other three 3/3.
    assert_eq!(passes("baseline"), (3, 3));
    assert_eq!(passes("truncate-500"), (0, 3));
    assert_eq!(passes("age-truncate-500-keep-3"), (3, 3));
    assert_eq!(passes("compact-at-12000-structured"), (3, 3));
    // Cost: truncate-500 several times baseline, its whole interval above 1, the dearest. The
    // two others are dearer than baseline here, not on par as in the seed (docs/experiments.md
    // says why): age-truncate loses the cache, and the compaction arm pays for its summarizer
    // call (`compact.usage`, issue 30) while its runs are too short for the compaction to pay off.
    let (t, tlo, _) = cost_ratio(&doc, "truncate-500");
    assert!((4.0..8.0).contains(&t) && tlo > 2.0, "truncate-500: {t}× from {tlo}");
    let (a, _, ahi) = cost_ratio(&doc, "age-truncate-500-keep-3");
    let (c, clo, chi) = cost_ratio(&doc, "compact-at-12000-structured");
    assert!(ahi < tlo && chi < tlo && clo > 1.0, "age {a} (to {ahi}), compact {clo}–{chi}, truncate from {tlo}");
    assert!(a < t && c < t, "cost order: compact {c}, age {a} < truncate {t}");
    assert!(metric(arm(&doc, "compact-at-12000-structured"), "compactions")["mean"].as_f64().unwrap() == 1.0);
    // The verdicts say it in words, and no more than the intervals.
    let verdict = |l: &str| arm(&doc, l)["verdict"].as_str().unwrap().to_string();
    assert!(
        verdict("truncate-500").starts_with("fewer passes than baseline (0/3 vs 3/3); 4.8× the cost, interval 3."),
        "{}",
        verdict("truncate-500")
    );
    assert!(verdict("age-truncate-500-keep-3").contains("fewer cache hits"));
    assert_eq!(doc["runs"].as_array().unwrap().len(), 12);
}

#[test]
fn the_table_shows_each_arm_and_its_verdict() {
    let out = ctxj().arg("experiment").arg(manifest()).output().unwrap();
    assert_eq!(out.status.code(), Some(0));
    let text = String::from_utf8(out.stdout).unwrap();
    for l in ["baseline", "truncate-500", "age-truncate-500-keep-3", "compact-at-12000-structured"] {
        assert!(text.contains(&format!("{l}: ")), "no verdict for {l}:\n{text}");
    }
    assert!(text.contains("0/3") && text.contains("3/3"), "{text}");
    assert!(text.contains("interval"), "{text}");
}

#[test]
fn intervals_are_reproducible_and_follow_the_seed() {
    let a = json(&manifest(), &[]);
    let b = json(&manifest(), &[]);
    assert_eq!(a, b, "two runs of the same manifest differ");
    let c = json(&manifest(), &["--seed", "2"]);
    assert_eq!(c["seed"], 2);
    // With three runs a resample mean takes one of ten values, so the 2.5% and 97.5% points
    // hardly ever move with the seed (the interval of a mean is the runs' range: each extreme is
    // drawn with 1/27 > 2.5%); that another seed draws other resamples is a unit test
    // (experiment::stats).
    let range = |d: &Value| metric(arm(d, "truncate-500"), "cost")["interval"].clone();
    let runs: Vec<f64> = a["runs"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|r| r["arm"] == "truncate-500")
        .map(|r| r["measures"]["cost"].as_f64().unwrap())
        .collect();
    let (lo, hi) = runs.iter().fold((f64::MAX, f64::MIN), |(l, h), x| (l.min(*x), h.max(*x)));
    assert_eq!(range(&c), serde_json::json!([lo, hi]));
    // The point estimates do not depend on the seed.
    assert_eq!(metric(arm(&a, "truncate-500"), "cost")["mean"], metric(arm(&c, "truncate-500"), "cost")["mean"]);
}

/// The canonical disagreement (docs/experiments.md): replaying baseline's successful runs under
/// truncate-500 makes it look no dearer than recorded, while the real truncate-500 runs cost
/// several times baseline and never pass.
#[test]
fn replays_are_marked_and_show_the_truncate_500_inversion() {
    let doc = json(&manifest(), &["--replay", "truncate-500"]);
    let r = arm(&doc, "replay:truncate-500");
    assert_eq!(r["kind"], "replay");
    assert_eq!(r["strategy"], "truncate-500");
    assert_eq!(r["of"], "baseline");
    assert_eq!(r["judged"], 0);
    assert!(r["verdict"].as_str().unwrap().contains("a replay cannot say whether the run would pass"));
    let (replayed, _, _) = cost_ratio(&doc, "replay:truncate-500");
    let (real, real_lo, _) = cost_ratio(&doc, "truncate-500");
    assert!(replayed < 1.5 && real_lo > 2.0, "replay {replayed}× vs real {real}×");
    let table = ctxj().arg("experiment").arg(manifest()).args(["--replay", "truncate-500"]).output().unwrap();
    let text = String::from_utf8(table.stdout).unwrap();
    assert!(text.contains("truncate-500 [replay of baseline]") && text.contains("n/a (replay)"), "{text}");
    let bad = ctxj().arg("experiment").arg(manifest()).args(["--replay", "no-such-strategy"]).output().unwrap();
    assert_eq!(bad.status.code(), Some(2));
}

#[test]
fn ndjson_and_csv_have_a_row_per_arm_and_measure() {
    let nd = ctxj().arg("experiment").arg(manifest()).args(["--format", "ndjson"]).output().unwrap();
    let lines: Vec<Value> =
        String::from_utf8(nd.stdout).unwrap().lines().map(|l| serde_json::from_str(l).unwrap()).collect();
    assert_eq!(lines.len(), 4 * 8);
    assert_eq!(lines[0]["arm"], "baseline");
    assert_eq!(lines[0]["metric"], "cost");
    assert_eq!(lines[0]["kind"], "runs");
    let csv = ctxj().arg("experiment").arg(manifest()).args(["--format", "csv"]).output().unwrap();
    let text = String::from_utf8(csv.stdout).unwrap();
    let header = text.lines().next().unwrap();
    assert!(header.starts_with("arm,kind,runs,judged,passed,passes,metric,n,mean,sd,interval"), "{header}");
    assert_eq!(text.lines().count(), 1 + 4 * 8);
}

#[test]
fn the_generator_reproduces_the_bundled_experiment() {
    let out = tempfile::tempdir().unwrap();
    gen_experiment::generate(out.path()).unwrap();
    let files = |d: &Path| -> Vec<(PathBuf, Vec<u8>)> {
        snapshot(d).into_iter().map(|(p, b, _)| (p.strip_prefix(d).unwrap().to_path_buf(), b)).collect()
    };
    let (a, b) = (files(&bundled()), files(&out.path().join("experiment-bugfix")));
    assert_eq!(a.iter().map(|f| &f.0).collect::<Vec<_>>(), b.iter().map(|f| &f.0).collect::<Vec<_>>());
    for ((p, x), (_, y)) in a.iter().zip(&b) {
        assert!(x == y, "{}: the generator's output differs from the committed file", p.display());
    }
}

#[test]
fn every_bundled_run_passes_validate_and_ends_with_an_outcome() {
    let runs: Vec<PathBuf> = std::fs::read_dir(bundled().join("runs")).unwrap().map(|e| e.unwrap().path()).collect();
    assert_eq!(runs.len(), 12);
    for r in runs {
        let out = ctxj().arg("validate").arg(&r).output().unwrap();
        assert_eq!(out.status.code(), Some(0), "{}: {}", r.display(), String::from_utf8_lossy(&out.stdout));
        let log = ctxj().arg("log").arg(&r).output().unwrap();
        let text = String::from_utf8(log.stdout).unwrap();
        assert!(text.contains("outcome: passed") || text.contains("outcome: failed"), "{}", r.display());
    }
}

fn write(dir: &Path, name: &str, text: &str) -> PathBuf {
    let p = dir.join(name);
    std::fs::write(&p, text).unwrap();
    p
}

#[test]
fn an_outcome_without_a_check_or_before_any_turn_is_a_validate_error() {
    let d = tempfile::tempdir().unwrap();
    write(
        d.path(),
        "journal.jsonl",
        concat!(
            r#"{"rev":1,"ts":"2026-12-01T10:00:00Z","kind":"session","id":"s","model":"m"}"#,
            "\n",
            r#"{"rev":2,"ts":"2026-12-01T10:00:01Z","kind":"outcome","passed":true,"check":""}"#,
            "\n"
        ),
    );
    let out = ctxj().arg("validate").arg(d.path()).arg("--json").output().unwrap();
    let text = String::from_utf8(out.stdout).unwrap();
    assert_eq!(out.status.code(), Some(1), "{text}");
    assert_eq!(text.matches("outcome-shape").count(), 2, "{text}");
}

#[test]
fn manifest_outcomes_override_the_journal_and_bad_manifests_exit_2() {
    let d = tempfile::tempdir().unwrap();
    let runs = bundled().join("runs");
    let m = write(
        d.path(),
        "e.toml",
        &format!(
            "reference = \"b\"\n[[arm]]\nlabel = \"b\"\nsessions = [\"{0}/baseline-*\"]\n[[arm]]\nlabel = \"t\"\n\
             sessions = [\"{0}/truncate-500-1\", \"{0}/truncate-500-2\"]\n[outcomes]\n\"{0}/truncate-500-1\" = true\n",
            runs.display()
        ),
    );
    let doc = json(&m, &[]);
    let t = arm(&doc, "t");
    assert_eq!((t["passed"].as_u64(), t["judged"].as_u64(), t["runs"].as_u64()), (Some(1), Some(2), Some(2)));
    let sources: Vec<&Value> = doc["runs"].as_array().unwrap().iter().map(|r| &r["outcome"]["source"]).collect();
    assert!(sources.contains(&&Value::from("manifest")) && sources.contains(&&Value::from("journal")));
    for (text, says) in [
        ("[[arm]]\nlabel = \"a\"\nsessions = [\"nothing-*\"]\n", "matches no session"),
        ("reference = \"x\"\n[[arm]]\nlabel = \"a\"\nsessions = [\"e.toml\"]\n", "not the label of an arm"),
        ("arm = 3\n", "not a valid experiment manifest"),
        ("[[arm]]\nlabel = \"a\"\nsessions = [\"[\"]\n", "bad glob"),
    ] {
        let m = write(d.path(), "bad.toml", text);
        let out = ctxj().arg("experiment").arg(&m).output().unwrap();
        let err = String::from_utf8(out.stderr).unwrap();
        assert_eq!(out.status.code(), Some(2), "{text}: {err}");
        assert!(err.contains(says), "{text}: {err}");
    }
    let out = ctxj().arg("experiment").arg(d.path().join("missing.toml")).output().unwrap();
    assert_eq!(out.status.code(), Some(2));
}

/// Arms of mixed formats: the bundled Claude Code, Codex and pi transcripts in one arm beside
/// ctxj journals in another.
#[test]
fn transcripts_of_every_format_are_runs() {
    let d = tempfile::tempdir().unwrap();
    let t = repo().join("sample-journals/transcripts");
    let m = write(
        d.path(),
        "e.toml",
        &format!(
            "[[arm]]\nlabel = \"journals\"\nsessions = [\"{}/baseline-*\"]\n[[arm]]\nlabel = \"agents\"\n\
             sessions = [\"{}/**/*.jsonl\"]\n",
            bundled().join("runs").display(),
            t.display()
        ),
    );
    let doc = json(&m, &[]);
    let formats: std::collections::BTreeSet<&str> =
        doc["runs"].as_array().unwrap().iter().map(|r| r["format"].as_str().unwrap()).collect();
    for f in ["ctxj", "claude-code", "codex", "pi"] {
        assert!(formats.contains(f), "no {f} run: {formats:?}");
    }
    assert_eq!(arm(&doc, "agents")["judged"], 0);
    assert!(arm(&doc, "agents")["verdict"].as_str().unwrap().starts_with("passes unknown"));
}

#[test]
#[cfg_attr(
    not(ctxj_has_samples),
    ignore = "needs ../shared/samples (fails under CI=true; once it is there, `touch build.rs`)"
)]
fn real_transcripts_of_mixed_formats_are_arms() {
    let s = shared_samples();
    let d = tempfile::tempdir().unwrap();
    let m = write(
        d.path(),
        "e.toml",
        &format!(
            "[[arm]]\nlabel = \"claude-code\"\nsessions = [\"{0}/claude-code/projects/spotter/*-*-*.jsonl\"]\n\
             [[arm]]\nlabel = \"codex+pi\"\nsessions = [\"{0}/codex/sessions/**/*.jsonl\", \"{0}/pi/sessions/**/*.jsonl\"]\n",
            s.display()
        ),
    );
    let doc = json(&m, &[]);
    let runs = doc["runs"].as_array().unwrap();
    assert!(runs.iter().any(|r| r["format"] == "codex") && runs.iter().any(|r| r["format"] == "pi"));
    let c = metric(arm(&doc, "codex+pi"), "cost");
    assert!(c["n"].as_u64().unwrap() >= 2 && c["interval"].is_array(), "{c}");
}

#[test]
fn report_experiment_draws_the_arms_and_never_writes_into_a_session() {
    let d = tempfile::tempdir().unwrap();
    let out = d.path().join("exp.html");
    let run = ctxj()
        .args(["report", "--experiment"])
        .arg(manifest())
        .args(["-s", "truncate-500", "-o"])
        .arg(&out)
        .arg("--json")
        .output()
        .unwrap();
    assert_eq!(run.status.code(), Some(0), "{}", String::from_utf8_lossy(&run.stderr));
    let doc: Value = serde_json::from_slice(&run.stdout).unwrap();
    assert_eq!((doc["arms"].as_u64(), doc["runs"].as_u64()), (Some(5), Some(12)));
    let html = std::fs::read_to_string(&out).unwrap();
    assert!(html.starts_with("<!DOCTYPE html>") && !html.contains("<script"));
    assert!(html.contains("truncate-500 (replay of baseline)"), "replays are named as replays");
    assert!(html.contains("cumulative cost") && html.contains("cache-hit rate") && html.contains("<circle"));
    // Into a run's session directory: refused, nothing written.
    let target = bundled().join("runs/baseline-1/exp.html");
    let refused = ctxj().args(["report", "--experiment"]).arg(manifest()).arg("-o").arg(&target).output().unwrap();
    assert_eq!(refused.status.code(), Some(2));
    assert!(!target.exists());
}

#[test]
fn the_bundled_experiment_table_snapshot() {
    let out = ctxj().arg("experiment").arg(manifest()).args(["--replay", "truncate-500", "--detail"]).output().unwrap();
    assert_eq!(out.status.code(), Some(0));
    insta::assert_snapshot!(String::from_utf8(out.stdout).unwrap());
}

/// Copies three bundled baseline runs into a fresh folder and writes `manifest` beside them.
fn three_runs(manifest: &str) -> (tempfile::TempDir, PathBuf) {
    let d = tempfile::tempdir().unwrap();
    for i in 1..=3 {
        let to = d.path().join(format!("runs/r{i}"));
        std::fs::create_dir_all(&to).unwrap();
        std::fs::copy(bundled().join(format!("runs/baseline-{i}/journal.jsonl")), to.join("journal.jsonl")).unwrap();
    }
    let m = write(d.path(), "e.toml", manifest);
    (d, m)
}

#[test]
fn regression_a_session_matched_twice_in_one_arm_is_one_run_and_a_note_says_so() {
    // 3 sessions, one of them named again as its journal file and through `./`: 3 runs, not 5.
    let (_d, m) = three_runs(
        "[[arm]]\nlabel = \"a\"\nsessions = [\"runs/r*\", \"runs/r1/journal.jsonl\", \"./runs/r2\"]\n\
         [[arm]]\nlabel = \"b\"\nsessions = [\"runs/r3\"]\n",
    );
    let doc = json(&m, &[]);
    assert_eq!(arm(&doc, "a")["runs"], 3, "{doc}");
    let notes: Vec<&str> = doc["notes"].as_array().unwrap().iter().map(|n| n.as_str().unwrap()).collect();
    assert_eq!(notes.iter().filter(|n| n.contains("counted once")).count(), 2, "{notes:?}");
    assert!(notes.iter().any(|n| n.contains("belong to both arms") && n.contains("runs/r3")), "{notes:?}");
}

#[test]
fn regression_identical_arms_are_warned_about() {
    let (_d, m) = three_runs(
        "[[arm]]\nlabel = \"a\"\nsessions = [\"runs/r*\"]\n[[arm]]\nlabel = \"b\"\nsessions = [\"runs/r1\", \"runs/r2\", \"runs/r3\"]\n",
    );
    let out = ctxj().arg("experiment").arg(&m).output().unwrap();
    let text = String::from_utf8(out.stdout).unwrap();
    assert!(text.contains("hold the same 3 run(s)"), "{text}");
}

/// Two bare journal files (`r1.jsonl`, `r2.jsonl`) beside the manifest `e.toml`: an arm of
/// transcripts that are not in a session folder.
fn two_files() -> (tempfile::TempDir, PathBuf) {
    let d = tempfile::tempdir().unwrap();
    for i in 1..=2 {
        std::fs::copy(bundled().join(format!("runs/baseline-{i}/journal.jsonl")), d.path().join(format!("r{i}.jsonl")))
            .unwrap();
    }
    let m = write(d.path(), "e.toml", "[[arm]]\nlabel = \"a\"\nsessions = [\"r*.jsonl\"]\n");
    (d, m)
}

/// Issue 31: `report --experiment -o` silently overwrote an arm's transcript (exit 0); every
/// input of the experiment is refused as the output.
#[test]
fn regression_report_experiment_output_over_an_input_is_refused() {
    let (d, m) = two_files();
    for target in [d.path().join("r1.jsonl"), m.clone()] {
        let before = std::fs::read(&target).unwrap();
        let out = ctxj().args(["report", "--experiment"]).arg(&m).arg("-o").arg(&target).output().unwrap();
        assert_eq!(out.status.code(), Some(2), "{}: {}", target.display(), String::from_utf8_lossy(&out.stderr));
        assert_eq!(std::fs::read(&target).unwrap(), before, "{} was overwritten", target.display());
    }
}

/// Issue 31: the experiment page had no Content-Security-Policy (the report's has one).
#[test]
fn regression_experiment_page_has_a_content_security_policy() {
    let (d, m) = two_files();
    let page = d.path().join("out.html");
    let out = ctxj().args(["report", "--experiment"]).arg(&m).arg("-o").arg(&page).output().unwrap();
    assert_eq!(out.status.code(), Some(0), "{}", String::from_utf8_lossy(&out.stderr));
    let html = std::fs::read_to_string(&page).unwrap();
    assert!(html.contains("http-equiv=\"Content-Security-Policy\" content=\"default-src 'none';"), "{html}");
}

/// Issue 31: globs followed symlinks (two links to `.` made a practically endless walk) and one
/// `latest -> .` link counted each run many times; the walk enters a folder once and runs are
/// deduplicated by file identity.
#[cfg(unix)]
#[test]
fn regression_glob_walk_is_symlink_safe_and_dedupes_by_identity() {
    let (d, m) = three_runs("[[arm]]\nlabel = \"a\"\nsessions = [\"**/journal.jsonl\"]\n");
    std::os::unix::fs::symlink(".", d.path().join("latest")).unwrap();
    std::os::unix::fs::symlink(".", d.path().join("runs/again")).unwrap();
    std::os::unix::fs::symlink("r1", d.path().join("runs/best")).unwrap();
    let started = std::time::Instant::now();
    let doc = json(&m, &[]);
    assert!(started.elapsed() < std::time::Duration::from_secs(60));
    assert_eq!(arm(&doc, "a")["runs"], 3, "{}", doc["notes"]);
}

/// Issue 31: file names that are not UTF-8 were silently skipped by the glob (2 of 4 runs).
#[cfg(target_os = "linux")]
#[test]
fn regression_non_utf8_file_names_are_matched() {
    use std::os::unix::ffi::OsStrExt;
    let (d, m) = three_runs("[[arm]]\nlabel = \"a\"\nsessions = [\"runs/r*\"]\n");
    let odd = d.path().join("runs").join(std::ffi::OsStr::from_bytes(b"r\xff"));
    std::fs::create_dir(&odd).unwrap();
    std::fs::copy(bundled().join("runs/baseline-1/journal.jsonl"), odd.join("journal.jsonl")).unwrap();
    let doc = json(&m, &[]);
    assert_eq!(arm(&doc, "a")["runs"], 4, "{doc}");
}

/// Issue 31: a manifest naming a file outside its folder (`~/.aws/credentials`, `../x`) printed
/// that file's first line in the error.
#[test]
fn regression_manifest_outside_file_content_is_not_printed() {
    let d = tempfile::tempdir().unwrap();
    std::fs::write(d.path().join("credentials"), "aws_secret_access_key = SECRET-LINE-1234\n").unwrap();
    let exp = d.path().join("exp");
    std::fs::create_dir(&exp).unwrap();
    let m = write(&exp, "e.toml", "[[arm]]\nlabel = \"a\"\nsessions = [\"../credentials\"]\n");
    let out = ctxj().arg("experiment").arg(&m).output().unwrap();
    let err = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(2), "{err}");
    assert!(!err.contains("SECRET-LINE"), "{err}");
    assert!(err.contains("outside the manifest's folder"), "{err}");
}

/// Issue 32: the experiment page's bars had no axis and no values: each bar chart now has a
/// value axis titled with its unit, and each arm's mean written beside its bar.
#[test]
fn regression_experiment_bars_had_no_axes_or_values() {
    let d = tempfile::tempdir().unwrap();
    let out = d.path().join("exp.html");
    let run = ctxj().args(["report", "--experiment"]).arg(manifest()).arg("-o").arg(&out).output().unwrap();
    assert_eq!(run.status.code(), Some(0), "{}", String::from_utf8_lossy(&run.stderr));
    let html = std::fs::read_to_string(&out).unwrap();
    let at = html.find("<h3>cost</h3>").expect("the cost bars");
    let bars = &html[at..at + html[at..].find("</svg>").unwrap()];
    assert!(bars.contains(">cost per run (US$)</text>"), "{bars}");
    assert!(bars.matches("<text class=\"tick\"").count() >= 2, "ticks on the value axis: {bars}");
    let arms = bars.matches("<rect ").count();
    assert!(arms > 0 && bars.matches("<text class=\"value\"").count() == arms, "a value per bar: {bars}");
    for (curve, y) in [
        ("<h3>cumulative cost (US$)</h3>", "cumulative cost (US$)"),
        ("<h3>cache-hit rate (%)</h3>", "cache-hit rate (%)"),
    ] {
        let at = html.find(curve).expect(curve);
        let svg = &html[at..at + html[at..].find("</svg>").unwrap()];
        assert!(svg.contains(">turn (LLM call)</text>") && svg.contains(&format!(">{y}</text>")), "{svg}");
    }
}

/// Issue 30: the bundled compaction runs cut before the last assistant turn without pinning the
/// first user message, measured canonical JSON instead of the conversation size of
/// strategies.md §2 (so ctxj's own replay of `compact-at-12000-structured` never compacted on
/// them), and left the summarizer call unpaid. Now each run compacts once, keeps `u_1`, and its
/// `compact` record's `usage` is billed.
#[test]
fn regression_bundled_compact_runs_did_not_follow_their_strategy() {
    for k in 1..=3 {
        let run = bundled().join(format!("runs/compact-at-12000-structured-{k}/journal.jsonl"));
        let text = std::fs::read_to_string(&run).unwrap();
        let compacts: Vec<Value> = text
            .lines()
            .map(|l| serde_json::from_str::<Value>(l).unwrap())
            .filter(|r| r["kind"] == "compact")
            .collect();
        assert_eq!(compacts.len(), 1, "run {k}: compact-at compacts once");
        let kept = compacts[0]["kept"].as_array().unwrap();
        assert_eq!(kept[0], "u_1", "run {k}: the first user message is pinned");
        assert!(kept.len() >= 4, "run {k}: at least 3 tail blocks: {kept:?}");
        let cache = ctxj().args(["cache", "--json"]).arg(&run).output().unwrap();
        let v: Value = serde_json::from_slice(&cache.stdout).unwrap();
        let calls = find_key(&v, "summarizer_calls").unwrap_or_else(|| panic!("no summarizer_calls: {v}"));
        assert_eq!(calls, 1, "run {k}: the summarizer call is billed");
    }
    // ctxj's own replay of the strategy compacts on the baseline runs too (a cache break at the
    // compaction), as the recorded arm does.
    let doc = json(&manifest(), &["--replay", "compact-at-12000-structured"]);
    let replay = doc["arms"].as_array().unwrap().iter().find(|a| a["kind"] == "replay").unwrap();
    assert!(metric(replay, "cache_breaks")["mean"].as_f64().unwrap() >= 1.0, "{replay}");
}

/// The first number under `key` anywhere in `v`.
fn find_key(v: &Value, key: &str) -> Option<u64> {
    match v {
        Value::Object(m) => m.get(key).and_then(|x| x.as_u64()).or_else(|| m.values().find_map(|x| find_key(x, key))),
        Value::Array(a) => a.iter().find_map(|x| find_key(x, key)),
        _ => None,
    }
}

/// Issue 30: the synthetic Gemini 2.5 Flash runs showed cache reads below the model's
/// 2,048-token minimum cacheable prompt (the generator used 1,024). Every recorded read is zero
/// or at least the minimum `cache` knows for the model.
#[test]
fn regression_synthetic_cache_reads_below_the_models_minimum() {
    let mut reads = 0;
    for e in std::fs::read_dir(bundled().join("runs")).unwrap() {
        let text = std::fs::read_to_string(e.unwrap().path().join("journal.jsonl")).unwrap();
        for l in text.lines() {
            let r: Value = serde_json::from_str(l).unwrap();
            let Some(c) = r["usage"]["cached_tokens"].as_u64() else { continue };
            assert!(c == 0 || c >= 2_048, "{}: {c} cached tokens", r["id"]);
            reads += u64::from(c > 0);
        }
    }
    assert!(reads > 0, "no cache read at all");
}

/// Issue 30: docs/experiments.md omitted that age-truncate loses the cache (7 % hits against
/// baseline's 65 %, contradicting seed 001's "keeps the cache"). The table's cache columns are
/// the bundled experiment's own measures: each arm's hit rate and breaks per run, as printed
/// there, equal what `ctxj experiment` computes, and age-truncate's row says it loses the cache.
#[test]
fn regression_docs_omitted_that_age_truncate_loses_the_cache() {
    let doc = json(&manifest(), &[]);
    let md = std::fs::read_to_string(repo().join("docs/experiments.md")).unwrap();
    for label in ["baseline", "truncate-500", "age-truncate-500-keep-3", "compact-at-12000-structured"] {
        let row = md
            .lines()
            .find(|l| l.starts_with(&format!("| {label} |")))
            .unwrap_or_else(|| panic!("docs/experiments.md has no row for {label}"));
        let cells: Vec<&str> = row.split('|').map(str::trim).collect();
        let a = arm(&doc, label);
        let hits = format!("{:.1} %", metric(a, "cache_hit_rate")["mean"].as_f64().unwrap() * 100.0);
        let breaks = metric(a, "cache_breaks")["mean"].as_f64().unwrap();
        assert_eq!(cells[4], hits, "{label}: cache hit column");
        let shown: f64 = cells[5].parse().unwrap_or_else(|_| panic!("{label}: breaks column {:?}", cells[5]));
        assert!((shown - breaks).abs() < 0.05, "{label}: {shown} breaks shown, {breaks} measured");
    }
    let age = md.lines().find(|l| l.starts_with("| age-truncate-500-keep-3 |")).unwrap();
    assert!(age.contains("loses the cache"), "{age}");
}
