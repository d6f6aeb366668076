//! Scale (issues 15 and 21): commands whose cost grew with turns × history, checked by the size
//! of what they write (never by time), and the bounded text diff of `ctxj diff`.

use super::common::{ctxj, session_with};

/// A journal of `turns` one-word turns (user, assistant) after a session and a system record.
fn tiny_turns(turns: usize) -> String {
    let mut s = String::from(
        "{\"rev\":1,\"ts\":\"2026-11-29T10:00:00Z\",\"kind\":\"session\",\"id\":\"tiny\",\"model\":\"openai/gpt-4.1\"}\n\
         {\"rev\":2,\"ts\":\"2026-11-29T10:00:00Z\",\"kind\":\"system\",\"text\":\"sys\"}\n",
    );
    for k in 0..turns {
        let rev = 3 + 2 * k;
        s.push_str(&format!(
            "{{\"rev\":{rev},\"ts\":\"2026-11-29T10:00:01Z\",\"kind\":\"user\",\"id\":\"u{k}\",\"text\":\"go\"}}\n\
             {{\"rev\":{},\"ts\":\"2026-11-29T10:00:02Z\",\"kind\":\"assistant\",\"id\":\"a{k}\",\"text\":\"ok\"}}\n",
            rev + 1
        ));
    }
    s
}

/// Bytes of the report of a `turns`-turn tiny journal with `recorded` and `baseline`.
fn report_bytes(turns: usize) -> usize {
    let d = session_with(&tiny_turns(turns));
    let out = tempfile::tempdir().unwrap();
    let file = out.path().join("r.html");
    ctxj().arg("report").arg(d.path()).arg("-o").arg(&file).assert().success();
    let html = std::fs::read_to_string(&file).unwrap();
    assert_eq!(html.matches("<details class=\"turn\" id=\"turn-").count(), turns);
    html.len()
}

/// Regression (issue 21, "`report` O(turns × blocks) memory"): 4,000 one-word turns took 41.7 s
/// and 7.6 GB because every turn of the browser held a copy of the whole request. The page (and
/// the model behind it) now holds per turn only what changed, so twice the turns is about twice
/// the bytes, not four times.
#[test]
fn report_of_many_tiny_turns_is_linear_in_size() {
    let (small, large) = (report_bytes(2_000), report_bytes(4_000));
    let ratio = large as f64 / small as f64;
    assert!(ratio < 2.3, "2,000 turns: {small} bytes, 4,000 turns: {large} bytes (×{ratio:.2})");
}

/// A session whose one result has `lines` short lines, then a final turn.
fn huge_result(lines: usize) -> tempfile::TempDir {
    let text: String = (0..lines).map(|i| format!("line {i}\n")).collect();
    super::report::session_with_result(&text)
}

/// Regression (issue 21, "`diff` without a deadline"): a result of 250,000 short lines against
/// its truncation took over 30 s. Past the line cap only the differing blocks are diffed, each
/// cut, and the output says so; `--full` lifts the cap.
#[test]
fn diff_of_a_huge_result_is_capped_with_a_note() {
    let d = huge_result(21_000);
    let capped =
        ctxj().args(["diff", "--strategy", "recorded", "--strategy", "truncate-500"]).arg(d.path()).output().unwrap();
    assert_eq!(capped.status.code(), Some(1));
    let text = String::from_utf8(capped.stdout).unwrap();
    assert!(text.contains("note: the two requests render to"), "{}", &text[..text.len().min(2000)]);
    assert!(text.contains("--full diffs the whole requests"));
    assert!(text.contains("more lines of this block not diffed (--full)"));
    assert!(text.lines().count() < 2_200, "{} lines", text.lines().count());

    let json = ctxj()
        .args(["diff", "--strategy", "recorded", "--strategy", "truncate-500", "--json"])
        .arg(d.path())
        .output()
        .unwrap();
    let v: serde_json::Value = serde_json::from_slice(&json.stdout).unwrap();
    assert!(v["diff_note"].as_str().unwrap().contains("more than 20,000"));

    let full = ctxj()
        .args(["diff", "--strategy", "recorded", "--strategy", "truncate-500", "--full"])
        .arg(d.path())
        .output()
        .unwrap();
    assert_eq!(full.status.code(), Some(1));
    let text = String::from_utf8(full.stdout).unwrap();
    assert!(!text.contains("note: "));
    assert!(text.lines().any(|l| l.starts_with('-') && l.ends_with("line 20999")), "the whole result is diffed");
}

/// A small diff stays whole: no note.
#[test]
fn diff_below_the_cap_has_no_note() {
    let d = huge_result(50);
    let out =
        ctxj().args(["diff", "--strategy", "recorded", "--strategy", "truncate-100"]).arg(d.path()).output().unwrap();
    assert_eq!(out.status.code(), Some(1));
    assert!(!String::from_utf8(out.stdout).unwrap().contains("note: "));
}
