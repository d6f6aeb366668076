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

/// A session of `results` turns, each reading a result of `lines` lines.
fn many_results(results: usize, lines: usize) -> tempfile::TempDir {
    let text: String = (0..lines).map(|i| format!("row {i}\n")).collect();
    let mut recs = vec![
        serde_json::json!({"rev":1,"ts":"2026-11-29T10:00:00Z","kind":"session","id":"s","model":"openai/gpt-4.1"}),
        serde_json::json!({"rev":2,"ts":"2026-11-29T10:00:01Z","kind":"system","text":"sys"}),
        serde_json::json!({"rev":3,"ts":"2026-11-29T10:00:02Z","kind":"user","id":"u1","text":"go"}),
    ];
    for k in 0..results {
        let rev = 4 + 2 * k as u64;
        let call = format!("c{k}");
        recs.push(serde_json::json!({"rev":rev,"ts":"2026-11-29T10:00:03Z","kind":"assistant","id":format!("a{k}"),"text":"","calls":[{"id":call,"tool":"run","args":{"n":k}}]}));
        recs.push(serde_json::json!({"rev":rev+1,"ts":"2026-11-29T10:00:04Z","kind":"result","call":call,"tool":"run","text":text,"bytes":text.len()}));
    }
    let rev = 4 + 2 * results as u64;
    recs.push(serde_json::json!({"rev":rev,"ts":"2026-11-29T10:00:05Z","kind":"assistant","id":"end","text":"done"}));
    super::common::session_with(&recs.iter().map(|r| format!("{r}\n")).collect::<String>())
}

/// Regression (issue 15, "`diff` … bounded"): baseline against a strategy that rewrites every
/// result of a long session printed the text diff of every rewritten block. The block-only diff
/// takes the differing blocks in request order up to the line cap and names how many it shows.
#[test]
fn diff_of_many_rewritten_blocks_shows_the_first_within_the_cap() {
    let d = many_results(30, 1_000);
    let out =
        ctxj().args(["diff", "--strategy", "baseline", "--strategy", "truncate-500"]).arg(d.path()).output().unwrap();
    assert_eq!(out.status.code(), Some(1));
    let text = String::from_utf8(out.stdout).unwrap();
    let note = text.lines().find(|l| l.starts_with("note: ")).expect("a note");
    assert!(
        note.contains("the text diff shows only the first ") && note.contains(" of the 30 blocks that differ"),
        "{note}"
    );
    assert!(text.lines().count() < 2 * 20_000 + 200, "{} lines", text.lines().count());
    // The first rewritten result is diffed, the last is not.
    assert!(text.lines().any(|l| l.starts_with('-') && l.contains("c0 (run)")), "the first block is diffed");
    assert!(!text.lines().any(|l| l.starts_with('-') && l.contains("c29 (run)")), "the last block is past the cap");
}

/// `report --turns A..B` / `--last N`: the turn browser holds only those turns and says so; the
/// charts still cover every turn.
#[test]
fn report_turn_range_limits_the_browser() {
    let d = session_with(&tiny_turns(50));
    let out = tempfile::tempdir().unwrap();
    let file = out.path().join("r.html");
    let page = |args: &[&str]| {
        ctxj().arg("report").arg(d.path()).arg("-o").arg(&file).args(args).assert().success();
        std::fs::read_to_string(&file).unwrap()
    };
    let ids = |html: &str| -> Vec<String> {
        html.match_indices("<details class=\"turn\" id=\"turn-")
            .map(|(i, m)| html[i + m.len()..].split('"').next().unwrap().to_string())
            .collect()
    };
    let html = page(&["--turns", "10..12"]);
    assert_eq!(ids(&html), ["10", "11", "12"]);
    assert!(html.contains("holds 3 of the session's 50 turns, turns 10–12"));
    assert!(html.contains("href=\"#turn-50\""), "the charts keep every turn");
    let html = page(&["--last", "4"]);
    assert_eq!(ids(&html), ["47", "48", "49", "50"]);
    let html = page(&[]);
    assert_eq!(ids(&html).len(), 50);
    assert!(!html.contains("id=\"browser-range\""));
    for bad in [["--turns", "5..2"], ["--turns", "0..3"], ["--turns", "x"], ["--last", "0"]] {
        ctxj().arg("report").arg(d.path()).arg("-o").arg(&file).args(bad).assert().code(2);
    }
}

/// Issue 14 §3 in the report: the provider's recorded cache breaks (as `ctxj cache` finds them)
/// are marked on the charts and in the turn browser.
#[test]
fn report_marks_recorded_cache_breaks() {
    let mut s = String::from(
        "{\"rev\":1,\"ts\":\"2026-11-29T10:00:00Z\",\"kind\":\"session\",\"id\":\"b\",\"model\":\"anthropic/claude-sonnet-4-5\"}\n\
         {\"rev\":2,\"ts\":\"2026-11-29T10:00:00Z\",\"kind\":\"system\",\"text\":\"sys\"}\n",
    );
    // Reads grow with the prompt, then turn 3 reads nothing an hour later (the TTL expired).
    let usage = [(1000, 0, 1000, "10:00:01"), (1100, 1000, 100, "10:01:00"), (1200, 0, 1200, "11:30:00")];
    for (k, (prompt, read, write, ts)) in usage.iter().enumerate() {
        let rev = 3 + 2 * k;
        s.push_str(&format!(
            "{{\"rev\":{rev},\"ts\":\"2026-11-29T{ts}Z\",\"kind\":\"user\",\"id\":\"u{k}\",\"text\":\"go\"}}\n\
             {{\"rev\":{},\"ts\":\"2026-11-29T{ts}Z\",\"kind\":\"assistant\",\"id\":\"a{k}\",\"text\":\"ok\",\"usage\":{{\"prompt_tokens\":{prompt},\"cached_tokens\":{read},\"cache_write_tokens\":{write},\"completion_tokens\":5}}}}\n",
            rev + 1
        ));
    }
    let d = session_with(&s);
    let cache = ctxj().args(["cache", "--json"]).arg(d.path()).output().unwrap();
    let v: serde_json::Value = serde_json::from_slice(&cache.stdout).unwrap();
    let breaks = v["recorded"]["breaks"].as_array().expect("recorded breaks").clone();
    assert_eq!(breaks.len(), 1, "{breaks:?}");
    let (turn, cause) = (breaks[0]["turn"].as_u64().unwrap(), breaks[0]["cause"].as_str().unwrap().to_string());
    let out = tempfile::tempdir().unwrap();
    let file = out.path().join("r.html");
    ctxj().arg("report").arg(d.path()).arg("-o").arg(&file).assert().success();
    let html = std::fs::read_to_string(&file).unwrap();
    let mark = format!("<g class=\"rbreak\" data-turn=\"{turn}\" data-cause=\"{cause}\">");
    assert_eq!(html.matches(&mark).count(), 2, "on the prompt and hit-rate charts");
    let browser = &html[html.find(&format!("id=\"turn-{turn}\"")).unwrap()..];
    let browser = &browser[..browser.find("</details>").unwrap()];
    assert!(browser.contains(&format!("recorded cache break: {cause}")), "{browser}");
    assert!(browser.contains("class=\"rbreak-detail\""));
    assert_eq!(html.matches("class=\"rbreak-detail\"").count(), 1);
}

/// Issue 15: keys of a `--prices` file that LiteLLM's format does not define are named in a
/// warning, and are an error under `--strict`.
#[test]
fn prices_unknown_keys_warn_and_fail_under_strict() {
    let d = session_with(&tiny_turns(2));
    let dir = tempfile::tempdir().unwrap();
    let prices = dir.path().join("prices.json");
    std::fs::write(
        &prices,
        r#"{"gpt-4.1": {"input_cost_per_token": 2e-6, "output_cost_per_token": 8e-6, "cache_read_input_tokn_cost": 5e-7, "litellm_provider": "openai", "supports_vision": true}}"#,
    )
    .unwrap();
    let out = ctxj().arg("cache").arg(d.path()).arg("--prices").arg(&prices).output().unwrap();
    assert_eq!(out.status.code(), Some(0));
    let err = String::from_utf8(out.stderr).unwrap();
    assert!(err.contains("unknown key(s) ignored: cache_read_input_tokn_cost (1 entry)"), "{err}");
    assert!(!err.contains("litellm_provider") && !err.contains("supports_vision"), "{err}");
    let file = dir.path().join("r.html");
    let out = ctxj().arg("report").arg(d.path()).arg("--prices").arg(&prices).arg("-o").arg(&file).output().unwrap();
    assert!(String::from_utf8(out.stderr).unwrap().contains("cache_read_input_tokn_cost"));
    let out = ctxj().arg("cache").arg(d.path()).arg("--strict").arg("--prices").arg(&prices).output().unwrap();
    assert_eq!(out.status.code(), Some(2));
    let err = String::from_utf8(out.stderr).unwrap();
    assert!(err.contains("unknown key(s) cache_read_input_tokn_cost (1 entry) (--strict)"), "{err}");
}
