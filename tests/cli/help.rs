//! The first run (issue 22): every `--help` and every README example runs as printed, each
//! `--help` is snapshotted, summaries are one line, flags mean the same on every command, and the
//! README's test command is the one `.ci/run` runs.

use std::path::{Path, PathBuf};
use std::process::Output;

use crate::common::{ctxj, hermetic, repo};

/// Every subcommand, in `ctxj --help` order, as clap lists it (no hand-kept list: a new command
/// gets its help snapshot and example runs without touching this file); `synth` is hidden and
/// built with the feature.
fn subcommands() -> Vec<String> {
    let out = ctxj().arg("--help").env("COLUMNS", "100").output().unwrap();
    let text = String::from_utf8(out.stdout).unwrap();
    let mut v: Vec<String> = text
        .lines()
        .skip_while(|l| *l != "Commands:")
        .skip(1)
        .take_while(|l| !l.is_empty())
        .filter_map(|l| {
            l.strip_prefix("  ").filter(|c| !c.starts_with(' '))?.split_whitespace().next().map(str::to_string)
        })
        .filter(|c| c != "help")
        .collect();
    assert!(v.len() > 10 && v[0] == "show", "the Commands: section of ctxj --help: {v:?}");
    if cfg!(feature = "synth") {
        v.push("synth".into());
    }
    v
}

/// `--help` as a 100-column terminal shows it (an example wider than that would wrap there).
fn help(args: &[&str]) -> String {
    let out = ctxj().env("COLUMNS", "100").env("LINES", "50").args(args).arg("--help").output().unwrap();
    assert!(out.status.success(), "ctxj {args:?} --help: {}", String::from_utf8_lossy(&out.stderr));
    String::from_utf8(out.stdout).unwrap()
}

/// The lines of the `Examples:` section of a help text, without their indent.
fn examples(help: &str) -> Vec<String> {
    let Some(i) = help.find("Examples:\n") else { return Vec::new() };
    help[i + "Examples:\n".len()..].lines().take_while(|l| l.starts_with("  ")).map(|l| l.trim().to_string()).collect()
}

/// What a runnable example starts with; anything else in an Examples section is a command that
/// wrapped (copy-paste would break) or prose.
const RUNNABLE: [&str; 2] = ["ctxj ", "mkdir -p "];

/// A copy of what the examples read (the bundled samples and transcripts, the example harness
/// config), a HOME holding the bundled transcripts where Claude Code, Codex and pi keep their logs
/// (so `ctxj usage` with no argument reads them, as on a user's machine), and an `out/` folder
/// standing for `/tmp/`.
fn sandbox() -> tempfile::TempDir {
    let d = tempfile::tempdir().unwrap();
    copy_dir(&repo().join("sample-journals"), &d.path().join("sample-journals"));
    std::fs::create_dir_all(d.path().join("docs")).unwrap();
    std::fs::copy(repo().join("docs/harness.toml"), d.path().join("docs/harness.toml")).unwrap();
    copy_dir(&repo().join("tests/data/valid"), &d.path().join("tests/data/valid"));
    copy_dir(&repo().join("tests/data/invalid"), &d.path().join("tests/data/invalid"));
    let (home, t) = (d.path().join("home"), repo().join("sample-journals/transcripts"));
    copy_dir(&t.join("claude-code/projects"), &home.join(".claude/projects"));
    copy_dir(&t.join("codex/sessions"), &home.join(".codex/sessions"));
    copy_dir(&t.join("pi/sessions"), &home.join(".pi/agent/sessions"));
    // A SYNTHETIC Gemini CLI chat log (the JSONL shape of its source; no real one is bundled), so
    // the examples of a usage-only agent run as on a user's machine.
    let gemini = home.join(".gemini/tmp/0f3c/chats");
    std::fs::create_dir_all(&gemini).unwrap();
    std::fs::write(
        gemini.join("session-2026-11-01T10-00-synthetic.jsonl"),
        [
            r#"{"sessionId":"synthetic-1","projectHash":"0f3c","startTime":"2026-11-01T10:00:00Z","kind":"main"}"#,
            r#"{"id":"m1","timestamp":"2026-11-01T10:00:05Z","type":"gemini","model":"gemini-2.5-pro","tokens":{"input":12000,"output":800,"cached":9000,"thoughts":120,"tool":0,"total":12920}}"#,
            r#"{"id":"m2","timestamp":"2026-11-01T10:01:05Z","type":"gemini","model":"gemini-2.5-pro","tokens":{"input":15000,"output":400,"cached":12000,"thoughts":60,"tool":0,"total":15460}}"#,
        ]
        .join("\n"),
    )
    .unwrap();
    std::fs::create_dir_all(d.path().join("out")).unwrap();
    d
}

fn copy_dir(from: &Path, to: &Path) {
    std::fs::create_dir_all(to).unwrap();
    for e in std::fs::read_dir(from).unwrap() {
        let e = e.unwrap();
        let target = to.join(e.file_name());
        if e.file_type().unwrap().is_dir() {
            copy_dir(&e.path(), &target);
        } else {
            std::fs::copy(e.path(), &target).unwrap();
        }
    }
}

/// Runs one example line with bash (pipefail) in the sandbox, `ctxj` first on PATH; paths under
/// `/tmp/` land in the sandbox's `out/`.
fn run_example(sandbox: &Path, line: &str) -> Output {
    let bin = PathBuf::from(env!("CARGO_BIN_EXE_ctxj"));
    let path = std::env::join_paths(
        std::iter::once(bin.parent().unwrap().to_path_buf())
            .chain(std::env::split_paths(&std::env::var_os("PATH").unwrap_or_default())),
    )
    .unwrap();
    let line = line.replace("/tmp/", &format!("{}/out/", sandbox.display()));
    let mut c = std::process::Command::new("bash");
    hermetic(&mut c);
    c.env("PATH", path).env("HOME", sandbox.join("home")).current_dir(sandbox);
    c.args(["-o", "pipefail", "-c", &line]).output().unwrap()
}

/// Runs `lines`, collecting a description of each that fails (exit 2 or more, or `error:`).
fn run_all(sandbox: &Path, what: &str, lines: &[String], failures: &mut Vec<String>) {
    for line in lines {
        if !RUNNABLE.iter().any(|p| line.starts_with(p)) {
            failures.push(format!("{what}: not a runnable line (wrapped?): {line:?}"));
            continue;
        }
        let out = run_example(sandbox, line);
        let stderr = String::from_utf8_lossy(&out.stderr);
        let code = out.status.code().unwrap_or(-1);
        // 1 is a legitimate answer (differences, findings); 2 is a usage or input error.
        if !(code == 0 || code == 1)
            || stderr.contains("error:")
            || (out.stdout.is_empty() && line.starts_with("ctxj ") && !line.contains('>'))
        {
            failures.push(format!("{what}: `{line}` exited {code}: {stderr}"));
        }
    }
}

#[test]
fn every_help_snapshot() {
    insta::assert_snapshot!("help_ctxj", help(&[]));
    for cmd in subcommands() {
        let cmd = cmd.as_str();
        insta::assert_snapshot!(format!("help_{cmd}"), help(&[cmd]));
    }
}

#[test]
fn every_help_example_runs_as_printed() {
    let sandbox = sandbox();
    let mut failures = Vec::new();
    let top = examples(&help(&[]));
    assert!(top.len() >= 3, "ctxj --help has {} examples", top.len());
    run_all(sandbox.path(), "ctxj --help", &top, &mut failures);
    for cmd in subcommands() {
        let cmd = cmd.as_str();
        let ex = examples(&help(&[cmd]));
        assert!(ex.len() >= 2, "ctxj {cmd} --help has {} examples", ex.len());
        run_all(sandbox.path(), &format!("ctxj {cmd} --help"), &ex, &mut failures);
    }
    assert!(failures.is_empty(), "{}", failures.join("\n"));
}

/// The commands of the README's ```sh blocks and of its `$ ctxj …` transcripts.
fn readme_examples() -> Vec<String> {
    let readme = std::fs::read_to_string(repo().join("README.md")).unwrap();
    let mut v = Vec::new();
    let mut in_block = false;
    for l in readme.lines() {
        if l.starts_with("```") {
            in_block = !in_block;
            continue;
        }
        let l = l.trim_start_matches("$ ");
        // Synopses (`ctxj show <session> …`) are not commands; `ctxj synth` lines are benchmark
        // sizes (a 1 GiB journal) that tests/cli/perf.rs and scripts/bench cover.
        let synopsis = l.contains('<') || l.contains(" [-") || l.starts_with("ctxj synth ");
        if in_block && !synopsis && RUNNABLE.iter().any(|p| l.starts_with(p)) {
            assert!(!l.trim_end().ends_with('\\'), "README: a command continued over lines: {l}");
            v.push(l.to_string());
        }
    }
    v
}

#[test]
fn every_readme_example_runs() {
    let sandbox = sandbox();
    let lines = readme_examples();
    assert!(lines.len() >= 30, "the README has {} ctxj examples", lines.len());
    let mut failures = Vec::new();
    run_all(sandbox.path(), "README", &lines, &mut failures);
    assert!(failures.is_empty(), "{}", failures.join("\n"));
}

#[test]
fn the_readme_test_command_is_the_one_ci_runs_and_shares_the_first_commands_build() {
    let readme = std::fs::read_to_string(repo().join("README.md")).unwrap();
    let ci = std::fs::read_to_string(repo().join(".ci/run")).unwrap();
    let test_cmd = "cargo test --locked --features synth";
    let first_block: Vec<&str> = readme.split("```sh\n").nth(1).unwrap().split("```").next().unwrap().lines().collect();
    // The first command builds the test profile's binary; the second runs the tests against it.
    assert!(first_block[0].starts_with(&format!("{test_cmd} --no-run")), "{first_block:?}");
    assert!(first_block.iter().any(|l| l.starts_with("target/debug/ctxj show sample-journals/")), "{first_block:?}");
    assert!(first_block.iter().any(|l| l.starts_with(&format!("{test_cmd} "))), "{first_block:?}");
    assert!(ci.lines().any(|l| l.trim() == test_cmd), ".ci/run does not run `{test_cmd}`");
    assert!(readme.contains("cargo install --locked --path ."), "install without --locked");
}

/// Issue 32: the user's route (install, then `usage` on your own logs) came after two paragraphs of
/// build times and test inputs. The developer's three commands stay at the top (the test above);
/// the first sections are now the user's, the build notes come after them.
#[test]
fn regression_the_users_route_came_after_the_build_notes() {
    let readme = std::fs::read_to_string(repo().join("README.md")).unwrap();
    let headings: Vec<&str> = readme.lines().filter(|l| l.starts_with("## ")).collect();
    assert_eq!(headings.first(), Some(&"## Install"), "{headings:?}");
    let at = |h: &str| headings.iter().position(|x| *x == h).unwrap_or_else(|| panic!("no {h}: {headings:?}"));
    assert!(at("## On your own logs") < at("## Building and testing"), "{headings:?}");
    let first_section = readme.find("\n## ").unwrap();
    assert!(!readme[..first_section].contains("2-core machine"), "build times before the user's route");
}

#[test]
fn the_sha256_example_prints_the_turns_prompt_sha256() {
    let sandbox = sandbox();
    let line = examples(&help(&["show"])).into_iter().find(|l| l.contains("sha256sum")).expect("a sha256 example");
    let out = run_example(sandbox.path(), &line);
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
    let printed = String::from_utf8(out.stdout).unwrap();
    let journal = std::fs::read_to_string(repo().join("sample-journals/bugfix-todo/journal.jsonl")).unwrap();
    let turn3: serde_json::Value = journal
        .lines()
        .map(|l| serde_json::from_str::<serde_json::Value>(l).unwrap())
        .filter(|r| r["kind"] == "assistant")
        .nth(2)
        .unwrap();
    let want = turn3["prompt_sha256"].as_str().unwrap();
    assert!(line.contains("--at turn 3"), "{line}");
    assert_eq!(printed.split_whitespace().next(), Some(want), "{line}");
}

#[test]
fn summaries_are_one_sentence_on_one_line() {
    for cmd in subcommands() {
        let cmd = cmd.as_str();
        let short = ctxj().args([cmd, "-h"]).output().unwrap();
        let first = String::from_utf8(short.stdout).unwrap().lines().next().unwrap_or_default().to_string();
        assert!(first.ends_with('.'), "ctxj {cmd} -h: the summary is cut by a line break: {first:?}");
    }
    let top = help(&[]);
    assert!(!top.contains("for a\n"), "{top}");
}

#[test]
fn reading_flags_only_on_commands_that_read_a_session() {
    for cmd in ["budget --model m", "completions bash", "usage sample-journals/transcripts"] {
        for flag in ["--strict", "--root .", "--from pi"] {
            let args: Vec<&str> = cmd.split(' ').chain(flag.split(' ')).collect();
            let out = ctxj().current_dir(repo()).args(&args).output().unwrap();
            assert_eq!(out.status.code(), Some(2), "ctxj {args:?} accepted {flag}");
        }
    }
    for cmd in ["show", "log", "turns", "tokens", "cache", "validate", "audit"] {
        let h = help(&[cmd]);
        assert!(h.contains("--strict") && h.contains("--root <DIR>") && h.contains("--from <FORMAT>"), "{cmd}: {h}");
        ctxj()
            .current_dir(repo())
            .args([cmd, "bugfix-todo", "--root", "sample-journals", "--strict"])
            .assert()
            .success();
    }
    let h = help(&["sessions"]);
    assert!(h.contains("--from <FORMAT>") && !h.contains("--strict"), "{h}");
}

#[test]
fn one_name_per_concept() {
    for cmd in ["show", "diff", "turns", "tokens", "cache", "report"] {
        assert!(help(&[cmd]).contains("-s, --strategy <NAME>"), "{cmd}");
    }
    for cmd in ["import", "report"] {
        assert!(help(&[cmd]).contains("-o, --output <"), "{cmd}");
    }
    for cmd in ["show", "diff", "turns", "tokens"] {
        assert!(help(&[cmd]).contains("--at <rev|turn> <N>"), "{cmd}");
    }
    for cmd in ["cache", "report"] {
        assert!(help(&[cmd]).contains("[possible values: ideal, openai, anthropic, gemini]"), "{cmd}");
    }
    // --out stays a hidden alias of -o/--output.
    let d = tempfile::tempdir().unwrap();
    ctxj()
        .current_dir(repo())
        .args(["import", "sample-journals/transcripts/pi", "--out"])
        .arg(d.path().join("s"))
        .assert()
        .success();
    assert!(!help(&["import"]).contains("--out "));
}

#[test]
fn regression_negative_at_gets_our_message_not_clap_hint() {
    for (cmd, at) in [("show", "-1"), ("turns", "-1"), ("tokens", "-3"), ("diff", "-1")] {
        let out =
            ctxj().current_dir(repo()).args([cmd, "sample-journals/bugfix-todo", "--at", "turn", at]).output().unwrap();
        let err = String::from_utf8_lossy(&out.stderr);
        assert_eq!(out.status.code(), Some(2), "{cmd}: {err}");
        assert!(err.contains(&format!("--at turn {at}: positions are whole numbers from 1")), "{cmd}: {err}");
        assert!(!err.contains("'--"), "{cmd}: clap's hint: {err}");
    }
    let out = ctxj()
        .current_dir(repo())
        .args(["turns", "sample-journals/bugfix-todo", "--at", "turn", "99"])
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&out.stderr).contains("--at turn 99: the journal has 13 turns"));
}

#[test]
fn turns_at_prints_that_turn_only() {
    let out = ctxj()
        .current_dir(repo())
        .args(["turns", "sample-journals/long-elision", "--at", "turn", "12", "--json"])
        .output()
        .unwrap();
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
    let v: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    let rows = v.as_array().or_else(|| v["turns"].as_array()).expect("rows");
    assert_eq!(rows.len(), 1, "{v}");
    assert_eq!(rows[0]["turn"], 12);
    let text = ctxj()
        .current_dir(repo())
        .args(["turns", "sample-journals/long-elision", "--at", "turn", "12"])
        .output()
        .unwrap();
    let text = String::from_utf8(text.stdout).unwrap();
    assert!(text.contains("· 1 turn\n") && text.contains("0 prefix rewrites in 1 turn\n"), "{text}");
}

#[test]
fn cache_per_turn_footnote_only_when_something_is_estimated() {
    let out = ctxj().current_dir(repo()).args(["cache", "sample-journals/bugfix-todo", "--per-turn"]).output().unwrap();
    let text = String::from_utf8(out.stdout).unwrap();
    assert!(!text.contains("~ = "), "every output is recorded, yet: {text}");
}

#[test]
fn no_internal_terms_in_user_text() {
    let budget = ctxj().args(["budget", "--model", "m"]).output().unwrap();
    let all = format!("{}{}", String::from_utf8_lossy(&budget.stdout), help(&["budget"]));
    assert!(!all.contains("seed"), "{all}");
    let d = tempfile::tempdir().unwrap();
    let html = d.path().join("r.html");
    let out = ctxj()
        .current_dir(repo())
        .args(["report", "sample-journals/bugfix-todo", "-s", "baseline", "-o"])
        .arg(&html)
        .output()
        .unwrap();
    assert!(
        String::from_utf8_lossy(&out.stdout).contains(": 1 strategy, 13 turns"),
        "{}",
        String::from_utf8_lossy(&out.stdout)
    );
    assert!(!std::fs::read_to_string(&html).unwrap().contains("seed"));
}

/// Issue 32: completion scripts offered file names for `-s/--strategy`, `experiment --replay`
/// and `--at`. They offer the strategy families (the library's one list, as name starts and
/// examples) and the position keywords the `--at` parser reads, in bash, zsh and fish.
#[test]
fn regression_completions_offered_file_names_for_strategy_and_at() {
    let script = |shell: &str| {
        let out = ctxj().args(["completions", shell]).output().unwrap();
        assert!(out.status.success());
        String::from_utf8(out.stdout).unwrap()
    };
    let bash = script("bash");
    let strategy_words = ctxj_core::strategy::completion_words().join(" ");
    assert!(strategy_words.contains("truncate- ") && strategy_words.contains("compact-at- "), "{strategy_words}");
    // Every case of the option, in every subcommand that takes it.
    for (flag, words) in [
        ("--strategy", strategy_words.as_str()),
        ("-s", strategy_words.as_str()),
        ("--replay", strategy_words.as_str()),
        ("--at", "rev turn"),
    ] {
        let case = format!("\n                {flag})\n                    COMPREPLY=(");
        let cases: Vec<&str> = bash.split(&case).skip(1).map(|c| c.lines().next().unwrap()).collect();
        assert!(!cases.is_empty(), "no completion case for {flag}");
        for c in cases {
            assert_eq!(c, format!("$(compgen -W \"{words}\" -- \"${{cur}}\"))"), "{flag}");
        }
    }
    let zsh = script("zsh");
    assert!(zsh.contains(":rev|turn:(rev turn)") && zsh.contains(&format!(":NAME:({strategy_words})")), "zsh");
    let fish = script("fish");
    for l in fish.lines().filter(|l| l.contains(" -l strategy ") || l.contains(" -l at ")) {
        assert!(l.contains(" -r -f -a \""), "fish offers files: {l}");
    }
    // Offered, not enforced and not listed in the help: a number after `rev` still parses.
    assert!(!help(&["show"]).contains("[possible values: rev"), "the keywords stay out of --help");
}

/// Issue 32: the installed binary was 123 MB because release builds carried debuginfo
/// (`debug = 1`); full debuginfo belongs to the `profiling` profile only.
#[test]
fn regression_release_builds_carried_debuginfo() {
    let manifest = std::fs::read_to_string(repo().join("Cargo.toml")).unwrap();
    let release = manifest.split("[profile.release]").nth(1).expect("a [profile.release] section");
    let release = release.split("\n[").next().unwrap();
    let debug =
        release.lines().find_map(|l| l.trim().strip_prefix("debug").map(|v| v.trim_start_matches([' ', '=']).trim()));
    assert!(
        matches!(debug, Some("false" | "0" | "\"line-tables-only\"" | "\"none\"")),
        "[profile.release] debug = {debug:?}"
    );
}

/// Issue 32: `docs/rules.md` held an absolute path from a maintainer's machine. No document a
/// user reads names one (the bundled samples' `/home/user/…` is the transcripts' own).
#[test]
fn regression_docs_held_a_maintainers_absolute_path() {
    let re = regex::Regex::new(r"(/home/(?:[a-z][a-z0-9_-]*)|/Users/[A-Za-z]|/work/|/root/|[A-Z]:\\Users\\)").unwrap();
    let mut docs = vec![repo().join("README.md"), repo().join("fleet/README.md")];
    for e in std::fs::read_dir(repo().join("docs")).unwrap() {
        let p = e.unwrap().path();
        if p.extension().is_some_and(|x| x == "md") {
            docs.push(p);
        }
    }
    let mut found = vec![];
    for p in docs {
        let text = std::fs::read_to_string(&p).unwrap();
        for (i, l) in text.lines().enumerate() {
            for m in re.find_iter(l).filter(|m| m.as_str() != "/home/user") {
                found.push(format!("{}:{}: {}", p.display(), i + 1, m.as_str()));
            }
        }
    }
    assert!(found.is_empty(), "{found:#?}");
}

/// Issue 32: the output's jargon ("projection", "rev", "prefix diverged at block 1") had no
/// glossary a user could find: `docs/glossary.md` defines them and the README links it.
#[test]
fn regression_jargon_had_no_glossary_a_user_could_find() {
    let glossary = std::fs::read_to_string(repo().join("docs/glossary.md")).unwrap();
    for term in ["**projection**", "**rev**", "Prefix diverged at block 1", "**turn**", "**strategy**"] {
        assert!(glossary.contains(term), "docs/glossary.md lacks {term}");
    }
    let readme = std::fs::read_to_string(repo().join("README.md")).unwrap();
    assert!(readme.contains("](docs/glossary.md)"), "the README does not link docs/glossary.md");
}
