//! `ctxj report`: the HTML page's structure, escaping and capping (no browser), the output-path
//! rules, and — when Chromium is installed — the real-browser checks of `scripts/browser-test`.

use std::path::{Path, PathBuf};

use super::common::{ctxj, repo, snapshot};

fn fixture(name: &str) -> PathBuf {
    repo().join("tests/data/report").join(name)
}

/// Runs `ctxj report` and returns the page.
fn report(session: &Path, extra: &[&str]) -> String {
    let out = tempfile::tempdir().unwrap();
    let file = out.path().join("r.html");
    ctxj().arg("report").arg(session).args(extra).arg("-o").arg(&file).assert().success();
    std::fs::read_to_string(&file).unwrap()
}

/// The text between the element with `id` and the next `end`.
fn section<'a>(html: &'a str, id: &str, end: &str) -> &'a str {
    let start = html.find(&format!("id=\"{id}\"")).unwrap_or_else(|| panic!("no element with id {id}"));
    let rest = &html[start..];
    &rest[..rest.find(end).unwrap_or_else(|| panic!("{id} is not closed by {end}"))]
}

fn journal_line(v: serde_json::Value) -> String {
    format!("{v}\n")
}

/// A session whose one result holds `text`.
pub(crate) fn session_with_result(text: &str) -> tempfile::TempDir {
    let recs = [
        serde_json::json!({"rev":1,"ts":"2026-11-29T10:00:00Z","kind":"session","id":"s","model":"openai/gpt-4.1"}),
        serde_json::json!({"rev":2,"ts":"2026-11-29T10:00:01Z","kind":"system","text":"sys"}),
        serde_json::json!({"rev":3,"ts":"2026-11-29T10:00:02Z","kind":"user","id":"u1","text":"go"}),
        serde_json::json!({"rev":4,"ts":"2026-11-29T10:00:03Z","kind":"assistant","id":"a1","text":"","calls":[{"id":"c1","tool":"run","args":{"command":"cat big"}}]}),
        serde_json::json!({"rev":5,"ts":"2026-11-29T10:00:04Z","kind":"result","call":"c1","tool":"run","text":text,"bytes":text.len()}),
        serde_json::json!({"rev":6,"ts":"2026-11-29T10:00:05Z","kind":"assistant","id":"a2","text":"done"}),
    ];
    super::common::session_with(&recs.into_iter().map(journal_line).collect::<String>())
}

#[test]
fn hostile_journal_text_is_escaped_everywhere() {
    let html = report(&fixture("hostile"), &[]);
    // Our one script, nothing from the journal.
    assert_eq!(html.matches("<script").count(), 1, "only the page's own script");
    assert!(!html.contains("<script>document.title"), "an injected script reached the page raw");
    assert!(
        html.contains("&lt;script&gt;document.title=&#39;pwned&#39;&lt;/script&gt;"),
        "the injection shows as text"
    );
    // `</style>` in the journal cannot end the page's style sheet: the only </style> is ours.
    assert_eq!(html.matches("</style>").count(), 1);
    let head = &html[..html.find("</head>").unwrap()];
    assert_eq!(head.matches("<title>").count(), 1);
    assert!(head.contains("<title>ctxj report — hostile-&lt;b&gt;x&lt;/b&gt;&quot;&#39;&amp;</title>"), "{head}");
    // Attribute values are escaped too: the call id with quotes is in data/title attributes.
    assert!(!html.contains("c1\"><script>"));
    assert!(!html.contains("<iframe") && !html.contains("<img") && !html.contains("<svg onload"));
    // Terminal escapes and bidi overrides are made visible.
    assert!(html.contains("\\e[31mhelp\\u{202e}"));
    assert!(!html.contains('\u{1b}') && !html.contains('\u{202e}'));
}

#[test]
fn page_loads_nothing_from_anywhere() {
    let html = report(&fixture("demo"), &[]);
    let re =
        regex::Regex::new(r#"(?i)\b(src|href|action|formaction|poster|data|xlink:href|srcset)="([^"]*)""#).unwrap();
    for c in re.captures_iter(&html) {
        assert!(c[2].starts_with('#'), "a URL attribute that is not a fragment: {}", &c[0]);
    }
    assert!(!html.contains("url("), "no CSS url()");
    assert!(!html.contains("@import"));
    // The Content-Security-Policy forbids loads and other scripts, and the hash matches our script.
    let csp = regex::Regex::new(r#"script-src 'sha256-([A-Za-z0-9+/=]+)'"#).unwrap();
    let hash = csp.captures(&html).expect("a CSP with a script hash")[1].to_string();
    assert!(html.contains("default-src 'none'"));
    let script = &html[html.rfind("<script>").unwrap() + 8..html.rfind("</script>").unwrap()];
    use sha2::Digest;
    let digest = sha2::Sha256::digest(script.as_bytes());
    assert_eq!(hash, base64_std(&digest), "the CSP hash must allow exactly the page's script");
}

/// An independent base64 (not the renderer's) for the CSP check.
fn base64_std(b: &[u8]) -> String {
    let alphabet: Vec<char> = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/".chars().collect();
    let mut bits = String::new();
    for x in b {
        bits.push_str(&format!("{x:08b}"));
    }
    while bits.len() % 6 != 0 {
        bits.push('0');
    }
    let mut out: String = bits
        .as_bytes()
        .chunks(6)
        .map(|c| alphabet[usize::from_str_radix(std::str::from_utf8(c).unwrap(), 2).unwrap()])
        .collect();
    while out.len() % 4 != 0 {
        out.push('=');
    }
    out
}

#[test]
fn charts_have_one_line_per_strategy_and_the_table_one_row() {
    let html = report(&fixture("demo"), &["-s", "recorded"]);
    let prompt = section(&html, "chart-prompt", "</figure>");
    assert!(prompt.contains("data-available=\"true\""));
    assert_eq!(prompt.matches("class=\"series\"").count(), 1);
    assert_eq!(prompt.matches("data-strategy=\"recorded\"").count(), 2, "the path and its legend entry");
    // Axes with units, hover values, and the decisions with their (missing) verdicts.
    assert!(prompt.contains("prompt tokens (estimated)") && prompt.contains("turn (LLM call)"));
    assert_eq!(prompt.matches("<a href=\"#turn-").count(), 14, "one hover column per turn");
    assert!(prompt.contains("<title>turn 7\nrecorded: "));
    assert_eq!(prompt.matches("class=\"decision ").count(), 2, "the elide and the clear");
    assert!(prompt.contains("rev 16 · elide before turn 7"));
    assert!(prompt.contains("verdict: warning: "), "the demo's decisions carry the audit's warnings");
    let table = section(&html, "comparison", "</table>");
    assert_eq!(table.matches("<tr data-strategy=").count(), 1);
    // Each chart is either drawn with one line per strategy or says it is not available.
    for id in ["chart-cost", "chart-hit"] {
        let fig = section(&html, id, "</figure>");
        if fig.contains("data-available=\"true\"") {
            assert_eq!(fig.matches("class=\"series\"").count(), 1, "{id}");
        } else {
            assert!(fig.contains("Not available: "), "{id}");
        }
    }
    // The provider's hit rate is drawn from the journal's usage, apart from the strategies' lines.
    assert!(section(&html, "chart-hit", "</figure>").contains("class=\"provider\""));
    // …whatever strategies are replayed: it describes what was actually sent.
    let html = report(&fixture("demo"), &["-s", "baseline"]);
    assert_eq!(section(&html, "chart-prompt", "</figure>").matches("class=\"provider\"").count(), 1);
    assert_eq!(section(&html, "chart-hit", "</figure>").matches("class=\"provider\"").count(), 1);
    assert!(html.contains("id=\"pass-rate-note\"") && html.contains("cannot show pass rates"));
}

#[test]
fn decisions_carry_the_verdicts_of_ctxj_audit() {
    let html = report(&fixture("demo"), &["-s", "recorded"]);
    let table = section(&html, "decision-table", "</table>");
    let o = ctxj().arg("audit").arg(fixture("demo")).arg("--json").output().unwrap();
    let audit: serde_json::Value = serde_json::from_slice(&o.stdout).unwrap();
    let decisions = audit["decisions"].as_array().unwrap();
    assert_eq!(table.matches("<tr><td class=\"num\">").count(), decisions.len());
    for d in decisions {
        let rev = d["rev"].as_u64().unwrap();
        let row_start = table.find(&format!("<tr><td class=\"num\">{rev}</td>")).expect("a row per decision");
        let row = &table[row_start..row_start + table[row_start..].find("</tr>").unwrap()];
        let mut rules: Vec<&str> = Vec::new();
        for (_, v) in d["verdicts"].as_object().unwrap() {
            rules.extend(v.as_array().unwrap().iter().map(|r| r.as_str().unwrap()));
        }
        if rules.is_empty() {
            assert!(row.contains("ok: no finding"), "{row}");
        }
        for r in rules {
            assert!(row.contains(&format!("{r}: ")), "rev {rev}: verdict {r} missing in {row}");
        }
        let saved = d["saved"].as_i64().unwrap();
        let shown = if saved < 0 { format!("−{}", -saved) } else { saved.to_string() };
        assert!(
            row.replace(',', "").contains(&format!("<td class=\"num\">{shown}</td>")),
            "rev {rev} saved {saved}: {row}"
        );
    }
}

/// The comparison table must say what `ctxj cache` says for the same strategies.
#[test]
fn comparison_agrees_with_ctxj_cache() {
    let strategies = ["baseline", "truncate-500", "age-truncate-500-keep-3"];
    let mut args = vec![];
    for s in strategies {
        args.extend(["-s", s]);
    }
    let html = report(&fixture("demo"), &args);
    let mut cache = ctxj();
    cache.arg("cache").arg(fixture("demo")).arg("--json");
    for s in strategies {
        cache.args(["--strategy", s]);
    }
    let o = cache.output().unwrap();
    let v: serde_json::Value = serde_json::from_slice(&o.stdout).unwrap();
    let table = section(&html, "comparison", "</table>");
    let num = regex::Regex::new(r#"<td class="num">([^<]*)</td>"#).unwrap();
    for st in v["strategies"].as_array().unwrap() {
        let sum = &st["summary"];
        let name = sum["strategy"].as_str().unwrap();
        let at = table.find(&format!("<tr data-strategy=\"{name}\">")).expect("a row per strategy");
        let row = &table[at..at + table[at..].find("</tr>").unwrap()];
        let cells: Vec<String> = num.captures_iter(row).map(|c| c[1].replace(',', "")).collect();
        // turns, peak, total, new, cached, hit rate, cost, vs baseline, breaks
        assert_eq!(cells[0], sum["turns"].to_string(), "{name} turns");
        assert_eq!(cells[1], sum["peak_prompt"].to_string(), "{name} peak");
        assert_eq!(cells[2], sum["prompt"].to_string(), "{name} total prompt");
        assert_eq!(cells[3], sum["new"].to_string(), "{name} new");
        assert_eq!(cells[4], sum["cache_read"].to_string(), "{name} cached");
        assert_eq!(cells[5], format!("{:.1}%", sum["cache_hit"].as_f64().unwrap() * 100.0), "{name} hit rate");
        // Money as every table prints it (`render::format::usd`), thousands separators removed.
        let usd = ctxj::render::format::usd(sum["cost"].as_f64().unwrap()).replace(',', "");
        assert_eq!(cells[6], usd, "{name} cost");
        assert_eq!(cells[7], format!("{:.2}×", st["cost_vs_baseline"].as_f64().unwrap()), "{name} vs baseline");
        assert_eq!(cells[8], sum["breaks"].to_string(), "{name} breaks");
    }
    // The cumulative-cost chart ends at each strategy's total cost.
    let cost = section(&html, "chart-cost", "</figure>");
    assert_eq!(cost.matches("class=\"series\"").count(), strategies.len());
    for st in v["strategies"].as_array().unwrap() {
        let sum = &st["summary"];
        let last = format!(
            "{} · turn 14: {}</title>",
            sum["strategy"].as_str().unwrap(),
            ctxj::render::format::usd(sum["cost"].as_f64().unwrap())
        );
        assert!(cost.contains(&last), "missing {last}");
    }
}

#[test]
fn header_shows_session_settings_and_recorded_totals() {
    let html = report(&fixture("demo"), &[]);
    let head = section(&html, "pass-rate-note", "</p>");
    assert!(!head.is_empty());
    for want in [
        "<dd>demo-report</dd>",
        "<dd>anthropic/claude-sonnet-4.5</dd>",
        "<dd>demo-harness</dd>",
        "<dd>14 (32 records)</dd>",
        "200,000 tokens / 100,000 tokens / 70,000 tokens",
        "14 turns with usage",
    ] {
        assert!(html.contains(want), "missing {want:?}");
    }
}

#[test]
fn turn_browser_lists_blocks_and_diffs() {
    let html = report(&fixture("demo"), &["-s", "recorded"]);
    assert_eq!(html.matches("<details class=\"turn\" id=\"turn-").count(), 14);
    let t7 = section(&html, "turn-7", "</details>\n<details class=\"turn\"");
    // Turn 7 follows the elision of c1 and c2: both changed, the prefix is rewritten.
    assert!(t7.contains("rewrites the previous request"), "{t7}");
    assert!(t7.contains("2 changed"));
    assert!(t7.contains("[elided: read, "));
    // A changed block says how big it was before: c1 shrank from its full text to the marker.
    let re = regex::Regex::new(r"<td>changed \(([\d,]+) → ([\d,]+) chars\)").unwrap();
    let sizes: Vec<(u64, u64)> = re
        .captures_iter(t7)
        .map(|c| (c[1].replace(',', "").parse().unwrap(), c[2].replace(',', "").parse().unwrap()))
        .collect();
    assert_eq!(sizes.len(), 2, "{t7}");
    assert!(sizes.iter().all(|(before, after)| after < before));
    let t2 = section(&html, "turn-2", "</details>\n<details class=\"turn\"");
    assert!(t2.contains("extends the previous request"));
    // Turn 2 = turn 1's system and user blocks (folded into one row) + a1 and its result c1 (new).
    assert!(
        t2.contains("<td class=\"num\">1–2</td><td colspan=\"3\">2 blocks as in the previous request</td>"),
        "{t2}"
    );
    assert_eq!(t2.matches("<tr class=\"added\">").count(), 2);
    // Only the new blocks carry their text.
    assert_eq!(t2.matches("<pre class=\"text\">").count(), 2);
}

#[test]
fn long_block_text_is_capped_and_says_so() {
    let big: String = "0123456789".repeat(500) + "TAIL-MARKER";
    let d = session_with_result(&big);
    let html = report(d.path(), &["-s", "recorded"]);
    assert!(!html.contains("TAIL-MARKER"), "the text past the cap is not inlined");
    assert!(html.contains("… cut: the first 2,000 of 5,011 characters are shown."));
    let html = report(d.path(), &["-s", "recorded", "--text-cap", "100"]);
    assert!(html.contains("… cut: the first 100 of 5,011 characters are shown."));
    let html = report(d.path(), &["-s", "recorded", "--text-cap", "6000"]);
    assert!(html.contains("TAIL-MARKER"));
    assert!(!html.contains("… cut:"));
}

#[test]
fn refuses_to_write_inside_the_session_directory() {
    let d = session_with_result("x");
    let before = snapshot(d.path());
    ctxj()
        .arg("report")
        .arg(d.path())
        .arg("-o")
        .arg(d.path().join("report.html"))
        .assert()
        .code(2)
        .stderr(predicates::str::contains("refusing to write inside the session directory"));
    std::fs::create_dir(d.path().join("sub")).unwrap();
    ctxj().arg("report").arg(d.path()).arg("-o").arg(d.path().join("sub/../sub/r.html")).assert().code(2);
    assert!(!d.path().join("sub/r.html").exists());
    // Through a symlink to the session directory, too.
    #[cfg(unix)]
    {
        let out = tempfile::tempdir().unwrap();
        std::os::unix::fs::symlink(d.path(), out.path().join("link")).unwrap();
        ctxj().arg("report").arg(d.path()).arg("-o").arg(out.path().join("link/r.html")).assert().code(2);
    }
    std::fs::remove_dir(d.path().join("sub")).unwrap();
    assert_eq!(before, snapshot(d.path()));
}

#[test]
fn usage_errors_exit_2() {
    let d = session_with_result("x");
    // The default output, in the current folder, is refused when that folder is the session's.
    ctxj()
        .current_dir(d.path())
        .arg("report")
        .arg(d.path())
        .assert()
        .code(2)
        .stderr(predicates::str::contains("--output"));
    let out = tempfile::tempdir().unwrap();
    let file = out.path().join("r.html");
    ctxj()
        .args(["report", "-s", "no-such-strategy-7"])
        .arg(d.path())
        .arg("-o")
        .arg(&file)
        .assert()
        .code(2)
        .stderr(predicates::str::contains("no-such-strategy-7"));
    ctxj().args(["report", "--cache", "bogus"]).arg(d.path()).arg("-o").arg(&file).assert().code(2);
    ctxj().args(["report", "--text-cap", "0"]).arg(d.path()).arg("-o").arg(&file).assert().code(2);
    ctxj().arg("report").arg(d.path()).arg("-o").arg(out.path().join("missing/r.html")).assert().code(2);
    assert!(!file.exists());
}

#[test]
fn json_summary_names_what_was_written() {
    let out = tempfile::tempdir().unwrap();
    let file = out.path().join("r.html");
    let o =
        ctxj().arg("report").arg(fixture("demo")).args(["-s", "recorded", "--json", "-o"]).arg(&file).output().unwrap();
    assert!(o.status.success());
    let v: serde_json::Value = serde_json::from_slice(&o.stdout).unwrap();
    assert_eq!(v["strategies"], serde_json::json!(["recorded"]));
    assert_eq!(v["turns"], 14);
    assert_eq!(v["bytes"].as_u64().unwrap(), std::fs::metadata(&file).unwrap().len());
}

#[test]
fn unpriced_model_says_why_cost_is_missing() {
    let d = super::common::session_with(
        &[
            serde_json::json!({"rev":1,"ts":"2026-11-29T10:00:00Z","kind":"session","id":"s","model":"acme/mystery-1"}),
            serde_json::json!({"rev":2,"ts":"2026-11-29T10:00:01Z","kind":"user","id":"u1","text":"go"}),
            serde_json::json!({"rev":3,"ts":"2026-11-29T10:00:02Z","kind":"assistant","id":"a1","text":"ok"}),
            serde_json::json!({"rev":4,"ts":"2026-11-29T10:00:03Z","kind":"user","id":"u2","text":"again"}),
            serde_json::json!({"rev":5,"ts":"2026-11-29T10:00:04Z","kind":"assistant","id":"a2","text":"ok"}),
        ]
        .into_iter()
        .map(journal_line)
        .collect::<String>(),
    );
    let html = report(d.path(), &["-s", "baseline"]);
    let cost = section(&html, "chart-cost", "</figure>");
    assert!(cost.contains("data-available=\"false\""));
    assert!(cost.contains("Not available: no price for acme/mystery-1"), "{cost}");
    let hit = section(&html, "chart-hit", "</figure>");
    assert!(hit.contains("data-available=\"true\""));
    assert_eq!(hit.matches("class=\"series\"").count(), 1);
    let table = section(&html, "comparison", "</table>");
    assert!(table.contains("<td class=\"num\">n/a</td>"), "cost is n/a");
}

#[test]
fn empty_journal_renders_a_page_that_says_so() {
    let d = super::common::session_with(
        "{\"rev\":1,\"ts\":\"2026-11-29T10:00:00Z\",\"kind\":\"session\",\"id\":\"empty\"}\n",
    );
    let html = report(d.path(), &["-s", "recorded"]);
    assert!(html.contains("The journal has no turns"));
    assert_eq!(section(&html, "comparison", "</table>").matches("<tr data-strategy=").count(), 1);
}

/// The real-browser checks: `scripts/browser-test` in Chromium (ignored when build.rs finds no
/// Chromium, failing under `CI=true`).
#[test]
#[cfg_attr(not(ctxj_has_chromium), ignore = "needs chromium (fails under CI=true; once it is there, `touch build.rs`)")]
fn renders_in_headless_chromium() {
    let browser = super::common::chromium();
    let out = super::common::hermetic(&mut std::process::Command::new("bash"))
        .arg(repo().join("scripts/browser-test"))
        .env("CTXJ_BIN", env!("CARGO_BIN_EXE_ctxj"))
        .env("CTXJ_BROWSER", &browser)
        .env("BROWSER_NO_INSTALL", "1")
        .output()
        .expect("running scripts/browser-test");
    let stdout = String::from_utf8_lossy(&out.stdout);
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(out.status.success(), "scripts/browser-test failed:\n{stdout}\n{stderr}");
    assert!(stdout.contains("all browser checks passed"), "{stdout}");
    assert!(stdout.contains("ok: fixture-hostile: the injected <script> is shown as text"));
}

/// Issue 32: `report` had no default output path (`-o` was required); it writes
/// `ctxj-report-<session id>.html` in the current folder, and says where.
#[test]
fn regression_report_without_output_writes_beside_the_working_directory() {
    let cwd = tempfile::tempdir().unwrap();
    let out =
        ctxj().current_dir(cwd.path()).arg("report").arg(repo().join("sample-journals/bugfix-todo")).output().unwrap();
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
    let page = cwd.path().join("ctxj-report-0b7e4f2a-bugfix-todo.html");
    assert!(page.is_file(), "no {}", page.display());
    assert!(String::from_utf8_lossy(&out.stdout).contains("ctxj-report-0b7e4f2a-bugfix-todo.html"));
}

/// Issue 32: the page never showed what the provider billed. The header's total must be
/// `cache --json`'s `recorded.cost`, and the cost chart's "as billed" line the running sum of the
/// per-turn billed cost `turns --json` shows.
#[test]
fn regression_report_never_showed_the_billed_total() {
    let html = report(&fixture("demo"), &["-s", "baseline"]);
    let o = ctxj().arg("cache").arg(fixture("demo")).args(["--json", "-s", "baseline"]).output().unwrap();
    let cache: serde_json::Value = serde_json::from_slice(&o.stdout).unwrap();
    let billed = cache["recorded"]["cost"].as_f64().expect("the demo's usage is priced");
    let total = section(&html, "billed-total", "</strong>");
    let usd: f64 = total.split("data-usd=\"").nth(1).and_then(|s| s.split('"').next()).unwrap().parse().unwrap();
    assert_eq!(usd, billed, "the header's billed total is cache --json's recorded.cost");
    assert!(total.ends_with(&ctxj::render::format::money(billed)), "{total}");
    let head = section(&html, "billed-total", "</dd>");
    assert!(
        head.contains("simulated: baseline $") && head.contains("max(1,024 tokens, 2% of the expected read)"),
        "{head}"
    );
    // The per-turn billed line, summed turn by turn.
    let o = ctxj().arg("turns").arg(fixture("demo")).arg("--json").output().unwrap();
    let turns: serde_json::Value = serde_json::from_slice(&o.stdout).unwrap();
    let cost = section(&html, "chart-cost", "</figure>");
    assert_eq!(cost.matches("<path class=\"provider\" data-provider=\"as billed\"").count(), 1, "{cost}");
    let mut sum = 0.0;
    for t in turns["turns"].as_array().unwrap() {
        let Some(c) = t["billed_usd"].as_f64() else { continue };
        sum += c;
        let point = ctxj::render::html::escape(&format!(
            "as billed · turn {}: {}",
            t["turn"],
            ctxj::render::format::money(sum)
        ));
        assert!(cost.contains(&point), "missing {point}");
    }
    assert!((sum - billed).abs() < 1e-9, "the line ends at the billed total");
}

/// Issue 32: two strategies with the same figures were drawn one exactly over the other, and
/// the page did not say so.
#[test]
fn regression_identical_series_hid_each_other() {
    // A truncation limit no result reaches replays exactly as `baseline`.
    let html = report(&fixture("demo"), &["-s", "baseline", "-s", "truncate-1000000"]);
    let prompt = section(&html, "chart-prompt", "</figure>");
    let path = |name: &str| {
        let at = prompt.find(&format!("<path class=\"series\" data-strategy=\"{name}\"")).unwrap();
        &prompt[at..at + prompt[at..].find("/>").unwrap()]
    };
    assert!(!path("baseline").contains("stroke-dasharray"), "the first series is solid");
    assert!(path("truncate-1000000").contains("stroke-dasharray"), "the second has a dash pattern");
    let plot = section(&html, "chart-prompt", "</svg>");
    assert_eq!(plot.matches("class=\"mk\"").count(), 2 * 14, "a marker per point of each series");
    let legend = section(&html, "chart-prompt", "</ul>");
    let entry = &legend[legend.find("<li data-strategy=\"truncate-1000000\">").unwrap()..];
    assert!(entry[..entry.find("</li>").unwrap()].contains("identical to baseline"), "{legend}");
    let first = &legend[legend.find("<li data-strategy=\"baseline\">").unwrap()..];
    assert!(!first[..first.find("</li>").unwrap()].contains("identical"), "the first of two is not the copy");
}

/// Issue 32: every chart of both pages has labelled axes with units, and the experiment's bars a
/// value axis and their values.
#[test]
fn regression_charts_had_unlabelled_axes() {
    let html = report(&fixture("demo"), &["-s", "baseline"]);
    for (id, y) in [
        ("chart-prompt", "prompt tokens (estimated)"),
        ("chart-cost", "cumulative cost (US$)"),
        ("chart-hit", "cached / prompt tokens (%)"),
    ] {
        let fig = section(&html, id, "</figure>");
        assert!(fig.contains(">turn (LLM call)</text>") && fig.contains(&format!(">{y}</text>")), "{id}");
    }
}
