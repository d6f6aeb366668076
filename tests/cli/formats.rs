//! Issue 16: every row-printing command prints `--format table|json|ndjson|csv`; each JSON
//! document carries `"schema": "ctxj.<name>/1"` and validates against the JSON Schema committed
//! in `docs/schema/`, which equals the one generated from the Rust types
//! (`CTXJ_BLESS_SCHEMA=1 cargo test --test cli formats` rewrites the committed files); the tables
//! of cache, turns, log, tokens, validate and audit fit the terminal.

use std::path::PathBuf;

use serde_json::Value;

use crate::common::*;

fn schema_dir() -> PathBuf {
    repo().join("docs/schema")
}

#[test]
fn committed_schemas_equal_the_generated_ones() {
    let bless = std::env::var_os("CTXJ_BLESS_SCHEMA").is_some();
    let all = ctxj::render::schema::all();
    for (name, schema) in &all {
        let path = schema_dir().join(ctxj::render::schema::file_name(name));
        let generated = ctxj::render::schema::text(schema);
        if bless {
            std::fs::create_dir_all(schema_dir()).unwrap();
            std::fs::write(&path, &generated).unwrap();
        }
        let committed = std::fs::read_to_string(&path)
            .unwrap_or_else(|e| panic!("{}: {e} (CTXJ_BLESS_SCHEMA=1 writes it)", path.display()));
        assert!(committed == generated, "{} differs from the types; rerun with CTXJ_BLESS_SCHEMA=1", path.display());
    }
    let files = std::fs::read_dir(schema_dir()).unwrap().count();
    assert_eq!(files, all.len(), "docs/schema holds a file no document generates");
}

/// What a command's document calls its rows (`ndjson`/`csv` print them), counted.
type Rows = fn(&Value) -> usize;

fn len(v: &Value, key: &str) -> usize {
    v[key].as_array().unwrap_or_else(|| panic!("no list {key}: {v}")).len()
}

/// (schema name, arguments, how many rows the document holds).
fn cases(out_dir: &str) -> Vec<(&'static str, Vec<String>, Rows)> {
    let a = |v: &[&str]| v.iter().map(|s| s.to_string()).collect::<Vec<_>>();
    vec![
        ("usage", a(&["usage", "sample-journals/transcripts", "--breakdown"]), |v| len(v, "rows")),
        ("sessions", a(&["sessions", "sample-journals/transcripts"]), |v| len(v, "sessions")),
        ("tune", a(&["tune", "sample-journals/transcripts/pi"]), |v| len(v, "configs")),
        ("log", a(&["log", "sample-journals/long-elision"]), |v| len(v, "records")),
        ("log", a(&["log", "sample-journals/transcripts/pi"]), |v| len(v, "records")),
        ("turns", a(&["turns", "sample-journals/bugfix-todo", "-s", "age-truncate-500-keep-3"]), |v| len(v, "turns")),
        ("cache", a(&["cache", "sample-journals/bugfix-todo", "-s", "recorded", "-s", "sliding-8"]), |v| {
            len(v, "strategies")
        }),
        ("cache", a(&["cache", "sample-journals/transcripts/claude-code", "--per-turn"]), |v| {
            v["strategies"].as_array().unwrap().iter().map(|s| s["turns"].as_array().unwrap().len()).sum()
        }),
        ("diff", a(&["diff", "sample-journals/bugfix-todo", "--strategy", "truncate-500", "--stat"]), |v| {
            len(v, "only_left") + len(v, "only_right") + len(v, "changed")
        }),
        ("tokens", a(&["tokens", "sample-journals/bugfix-todo"]), |v| len(v, "parts")),
        ("tokens.per-turn", a(&["tokens", "sample-journals/transcripts/codex", "--per-turn"]), |v| len(v, "turns")),
        ("validate", a(&["validate", "tests/data/invalid/R3.jsonl"]), |v| len(v, "findings")),
        ("audit", a(&["audit", "sample-journals/long-elision"]), |v| len(v, "decisions")),
        ("budget", a(&["budget", "--config", "docs/harness.toml", "--model", "anthropic/claude-sonnet-4-5"]), |v| {
            len(v, "settings")
        }),
        ("experiment", a(&["experiment", "sample-journals/experiment-bugfix/experiment.toml"]), |v| {
            v["arms"].as_array().unwrap().iter().map(|a| a["metrics"].as_array().unwrap().len()).sum()
        }),
        ("import", a(&["import", "sample-journals/transcripts/pi", "--force", "-o", out_dir]), |_| 1),
    ]
}

fn run(args: &[String], extra: &[&str]) -> String {
    let out = ctxj().current_dir(repo()).args(args).args(extra).output().unwrap();
    let code = out.status.code();
    assert!(
        matches!(code, Some(0 | 1)),
        "{args:?} {extra:?} exited {code:?}: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    String::from_utf8(out.stdout).unwrap()
}

#[test]
fn every_format_of_every_row_command_matches_its_schema() {
    let tmp = tempfile::tempdir().unwrap();
    let out_dir = tmp.path().join("imported");
    let schemas: std::collections::BTreeMap<_, _> = ctxj::render::schema::all().into_iter().collect();
    for (name, args, rows) in cases(out_dir.to_str().unwrap()) {
        let json = run(&args, &["--format", "json"]);
        assert_eq!(json, run(&args, &["--json"]), "{args:?}: --json is --format json");
        let doc: Value = serde_json::from_str(&json).unwrap_or_else(|e| panic!("{args:?}: {e}\n{json}"));
        assert_eq!(doc["schema"], format!("ctxj.{name}/1"), "{args:?}");
        let validator = jsonschema::validator_for(schemas[name].as_value()).unwrap();
        let errors: Vec<String> =
            validator.iter_errors(&doc).map(|e| format!("{} at {}", e, e.instance_path())).collect();
        assert!(errors.is_empty(), "{args:?} does not match docs/schema/ctxj.{name}-1.json: {errors:#?}");
        let n = rows(&doc);
        let nd = run(&args, &["--format", "ndjson"]);
        assert_eq!(nd.lines().count(), n, "{args:?}: one ndjson line per row\n{nd}");
        for l in nd.lines() {
            assert!(serde_json::from_str::<Value>(l).unwrap().is_object(), "{args:?}: {l}");
        }
        let csv = run(&args, &["--format", "csv"]);
        let mut r = csv::Reader::from_reader(csv.as_bytes());
        assert_eq!(r.records().count(), n, "{args:?}: one csv record per row\n{csv}");
        if n > 0 {
            assert!(!r.headers().unwrap().is_empty(), "{args:?}: {csv}");
        }
    }
}

/// The widest line of `s`.
fn widest(s: &str) -> usize {
    s.lines().map(|l| l.chars().count()).max().unwrap_or(0)
}

fn table(args: &[&str], cols: &str) -> String {
    let out = ctxj().current_dir(repo()).args(args).env("COLUMNS", cols).output().unwrap();
    assert!(matches!(out.status.code(), Some(0 | 1)), "{args:?}: {}", String::from_utf8_lossy(&out.stderr));
    String::from_utf8(out.stdout).unwrap()
}

#[test]
fn cache_and_turns_tables_fit_80_100_and_160_columns() {
    let cases: [(&str, &[&str]); 3] = [
        ("cache", &["cache", "sample-journals/bugfix-todo", "-s", "recorded", "-s", "sliding-8", "-s", "truncate-500"]),
        ("cache_billed", &["cache", "sample-journals/transcripts/claude-code", "--per-turn"]),
        ("turns", &["turns", "sample-journals/bugfix-todo", "-s", "age-truncate-500-keep-3"]),
    ];
    for cols in ["80", "100", "160"] {
        for (name, args) in cases {
            let out = table(args, cols);
            // The cache break explanations under the tables are prose lines, not table rows.
            let tables: String =
                out.lines().filter(|l| l.starts_with(['┌', '│', '├', '└', '╞'])).collect::<Vec<_>>().join("\n");
            assert!(!tables.is_empty(), "{args:?}: {out}");
            assert!(widest(&tables) <= cols.parse().unwrap(), "{args:?} at {cols}:\n{tables}");
            insta::assert_snapshot!(format!("{name}_{cols}"), out);
        }
    }
}

#[test]
fn log_tokens_validate_and_audit_tables_fit_80_columns() {
    let cases: [&[&str]; 5] = [
        &["log", "sample-journals/long-elision"],
        &["tokens", "sample-journals/long-elision", "--per-turn"],
        &["tokens", "sample-journals/bugfix-todo"],
        &["validate", "tests/data/invalid/R3.jsonl"],
        &["audit", "sample-journals/long-elision"],
    ];
    for args in cases {
        let wide = table(args, "400");
        let out = table(args, "80");
        let tables: Vec<&str> = out.lines().filter(|l| l.starts_with(['┌', '│', '├', '└', '╞'])).collect();
        assert!(!tables.is_empty(), "{args:?}: {out}");
        for l in &tables {
            assert!(l.chars().count() <= 80, "{args:?}: {l}");
        }
        let ascii = ctxj().current_dir(repo()).args(args).arg("--ascii").output().unwrap();
        let ascii = String::from_utf8(ascii.stdout).unwrap();
        assert!(ascii.lines().any(|l| l.starts_with("+--")), "{args:?}: {ascii}");
        assert!(!ascii.contains(['┌', '│', '─', '╞', '┆']), "{args:?} --ascii: {ascii}");
        assert!(widest(&wide) >= widest(&out), "{args:?}");
    }
}
