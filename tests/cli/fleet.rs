//! Issue 18: the Spark job for real — `fleet/ctxj_spark.py` in `local[2]` over the bundled
//! transcripts plus a synthetic tree of 2,000 small sessions; its Parquet requests and rollups,
//! DuckDB and polars over `ctxj export`'s NDJSON and the OTLP lines (parsed strictly by protobuf) all
//! give `ctxj usage`'s totals (`fleet/check_fleet.py` computes theirs); polars reads the Parquet with
//! its default settings too.
//!
//! Needs the fleet venv and a JRE (`.ci/run` installs both; build.rs's `ctxj_has_fleet`).

use std::path::{Path, PathBuf};
use std::process::Command;

use serde_json::Value;

use crate::common::*;

/// `.venv-fleet/bin/python`, checked to import pyspark.
fn fleet_python() -> PathBuf {
    let py = repo().join(".venv-fleet/bin/python");
    let ok = hermetic(&mut Command::new(&py))
        .args(["-c", "import pyspark, pyarrow, duckdb, polars, opentelemetry.proto"])
        .output()
        .is_ok_and(|o| o.status.success());
    assert!(
        ok,
        "{} with pyspark, pyarrow, duckdb, polars and opentelemetry-proto is missing: this test needs it (.ci/run \
         installs it from fleet/requirements.txt, and a JRE). Outside CI the test is ignored when build.rs finds \
         it absent (after installing it, `touch build.rs`); under CI=true it must exist.",
        py.display()
    );
    py
}

fn run(c: &mut Command) -> String {
    let o = c.output().unwrap();
    assert!(
        o.status.success(),
        "{c:?}:\n{}\n{}",
        String::from_utf8_lossy(&o.stdout),
        String::from_utf8_lossy(&o.stderr)
    );
    String::from_utf8(o.stdout).unwrap()
}

fn ctxj_to(args: &[&str], inputs: &[&Path], file: &Path) {
    let out = ctxj().current_dir(repo()).args(args).args(inputs).output().unwrap();
    assert!(out.status.success(), "{args:?}: {}", String::from_utf8_lossy(&out.stderr));
    std::fs::write(file, out.stdout).unwrap();
}

/// Totals of one strategy as check_fleet.py prints them, against usage's.
fn same_as_usage(what: &str, got: &Value, usage: &Value) {
    let pairs = [
        ("requests", "calls"),
        ("input_tokens", "input"),
        ("output_tokens", "output"),
        ("cache_read_tokens", "cache_read"),
        ("cache_write_tokens", "cache_creation"),
    ];
    for (ours, theirs) in pairs {
        assert_eq!(got[ours].as_u64(), usage[theirs].as_u64(), "{what}: {ours}: {got} vs {usage}");
    }
    let (a, b) = (got["cost_usd"].as_f64().unwrap(), usage["cost_usd"].as_f64().unwrap());
    assert!((a - b).abs() < 1e-6 * b.max(1.0), "{what}: cost {a} vs {b}");
}

#[test]
#[cfg_attr(
    not(ctxj_has_fleet),
    ignore = "needs .venv-fleet (pyspark) and java (fails under CI=true; once it is there, `touch build.rs`)"
)]
fn spark_rollups_duckdb_and_otlp_reproduce_the_direct_totals() {
    let py = fleet_python();
    let d = tempfile::tempdir_in(env!("CARGO_TARGET_TMPDIR")).unwrap();
    let tree = d.path().join("fleet");
    ctxj().args(["synth", "--sessions", "2000", "--seed", "18", "-o"]).arg(&tree).assert().success();
    let bundled = repo().join("sample-journals/transcripts");
    let inputs = [bundled.as_path(), tree.as_path()];

    let raw = ctxj().current_dir(repo()).args(["usage", "--json"]).args(inputs).output().unwrap();
    assert!(raw.status.success(), "{}", String::from_utf8_lossy(&raw.stderr));
    let usage: Value = serde_json::from_slice(&raw.stdout).unwrap();
    let usage = &usage["totals"];
    let (ndjson, otlp) = (d.path().join("rows.ndjson"), d.path().join("traces.jsonl"));
    ctxj_to(&["export", "-s", "sliding-8"], &inputs, &ndjson);
    ctxj_to(&["export", "--format", "otlp-json"], &inputs, &otlp);

    let out = d.path().join("out");
    // An input that does not exist is skipped (issue 32: it was PATH_NOT_FOUND); a second run in
    // append mode adds no row (the row ids are already there), so the totals below stay usage's.
    let job = |mode: &str| {
        run(hermetic(&mut Command::new(&py))
            .current_dir(repo())
            .arg("fleet/ctxj_spark.py")
            .args(["--master", "local[2]", "--partitions", "4", "-s", "sliding-8", "--show", "5", "--mode", mode])
            .arg("--ctxj")
            .arg(env!("CARGO_BIN_EXE_ctxj"))
            .arg("--input")
            .arg(&bundled)
            .arg("--input")
            .arg(d.path().join("no-codex-here"))
            .arg("--input")
            .arg(&tree)
            .arg("--output")
            .arg(&out))
    };
    let first = job("overwrite");
    assert!(first.contains("recorded: ") && first.contains("|day "), "{first}");
    let second = job("append");
    assert!(second.contains("recorded: "), "{second}");

    let checked = run(hermetic(&mut Command::new(&py))
        .current_dir(repo())
        .arg("fleet/check_fleet.py")
        .arg("--spark")
        .arg(&out)
        .arg("--ndjson")
        .arg(&ndjson)
        .arg("--otlp")
        .arg(&otlp));
    let c: Value = serde_json::from_str(&checked).unwrap();
    let table = &c["spark_table"];
    assert_eq!(table["duplicate_row_ids"], 0, "{table}");
    let ts = table["types"]["timestamp"].as_str().unwrap_or_default();
    assert!(ts.starts_with("TIMESTAMP"), "timestamp is typed, not text: {table}");
    assert_eq!(table["types"]["cwd"], "VARCHAR", "{table}");
    for what in
        ["spark_requests", "spark_rollups", "duckdb_ndjson", "polars_requests", "polars_rollups", "polars_ndjson"]
    {
        same_as_usage(what, &c[what]["recorded"], usage);
    }
    // Issue 32: polars reads the Parquet with its defaults, the timestamp as a time (not text).
    let polars_ts = c["polars_timestamp"].as_str().unwrap_or_default();
    assert!(polars_ts.starts_with("Datetime"), "{c}");
    for k in ["requests", "input_tokens", "output_tokens", "cache_read_tokens", "cache_write_tokens"] {
        let (p, s) = (&c["polars_requests"]["sliding-8"][k], &c["spark_requests"]["sliding-8"][k]);
        assert_eq!(p.as_u64(), s.as_u64(), "sliding-8 {k}: polars {p}, DuckDB {s}");
    }
    assert_eq!(c["polars_ndjson"]["sliding-8"]["requests"], c["duckdb_ndjson"]["sliding-8"]["requests"]);
    // The simulated strategy: the same figures through Spark as written directly.
    assert_eq!(c["spark_requests"]["sliding-8"]["requests"], c["duckdb_ndjson"]["sliding-8"]["requests"]);
    assert_eq!(
        c["spark_rollups"]["sliding-8"]["cache_read_tokens"],
        c["duckdb_ndjson"]["sliding-8"]["cache_read_tokens"]
    );
    assert!(c["duckdb_ndjson"]["sliding-8"]["requests"].as_u64().unwrap() > 9_000);
    // OTLP: a chat span per billed call; input_tokens includes the cached ones.
    let o = &c["otlp"];
    assert_eq!(o["chat_spans"].as_u64(), usage["calls"].as_u64());
    assert_eq!(o["lines"].as_u64().unwrap(), 2000 + 200 + 5, "one trace per session file");
    let prompt = ["input", "cache_read", "cache_creation"].iter().map(|k| usage[k].as_u64().unwrap()).sum::<u64>();
    assert_eq!(o["input_tokens"].as_u64(), Some(prompt));
    assert_eq!(o["cache_read"].as_u64(), usage["cache_read"].as_u64());
}

#[test]
#[cfg_attr(not(ctxj_has_python), ignore = "needs python3 (fails under CI=true; once it is there, `touch build.rs`)")]
fn session_keys_put_subagents_with_their_parent() {
    // The key function of the job, run by the plain python3 the other tests use.
    let code = "import sys; sys.path.insert(0, 'fleet'); import ctxj_spark as j; \
        print(j.session_key('s3a://b/p/abc/subagents/agent-1.jsonl'), j.session_key('s3a://b/p/abc.jsonl'), \
        j.session_key('/x/s1/journal.jsonl'), j._local_name('s3a://bucket/a/../b.jsonl'))";
    let out = run(hermetic(&mut Command::new(python3())).current_dir(repo()).args(["-c", code]));
    assert_eq!(out.trim(), "s3a://b/p/abc s3a://b/p/abc /x/s1 bucket/a/b.jsonl");
}

/// The engine-free partition map of the job over the bundled transcripts, run by plain python3:
/// its rows as JSON.
fn partition_rows(extra_env: &[(&str, &Path)]) -> Vec<Value> {
    let code = "import sys, json, glob; sys.path.insert(0, 'fleet'); import ctxj_spark as j; \
        files = [(p, open(p, 'rb').read()) for p in sorted(glob.glob('sample-journals/transcripts/**/*.jsonl', recursive=True))]; \
        print(json.dumps(list(j.export_partition(files, sys.argv[1], ['sliding-8']))))";
    let mut c = Command::new(python3());
    hermetic(&mut c).current_dir(repo()).args(["-c", code]).arg(env!("CARGO_BIN_EXE_ctxj"));
    for (k, v) in extra_env {
        c.env(k, v);
    }
    serde_json::from_str(&run(&mut c)).unwrap()
}

/// Issue 32: the job's rows had no id (append mode duplicated them) and no working directory or
/// repository. Each row now has a `row_id` (SHA-256 of source, strategy and turn: the same on
/// every run) and the `cwd` / `repository` its transcript records.
#[test]
#[cfg_attr(not(ctxj_has_python), ignore = "needs python3 (fails under CI=true; once it is there, `touch build.rs`)")]
fn regression_spark_rows_had_no_id_and_no_working_directory() {
    let rows = partition_rows(&[]);
    assert!(rows.len() > 60, "{}", rows.len());
    let ids: std::collections::HashSet<&str> = rows.iter().map(|r| r["row_id"].as_str().unwrap()).collect();
    assert_eq!(ids.len(), rows.len(), "one id per row");
    assert!(ids.iter().all(|i| i.len() == 32 && i.bytes().all(|b| b.is_ascii_hexdigit())));
    let again: Vec<Value> = partition_rows(&[]);
    let ids_again: std::collections::HashSet<&str> = again.iter().map(|r| r["row_id"].as_str().unwrap()).collect();
    assert_eq!(ids, ids_again, "stable across runs");
    for r in &rows {
        assert_eq!(r["cwd"], "/home/user/demo", "{r}");
        let repo = if r["agent"] == "codex" { Value::from("https://github.com/example/todo.git") } else { Value::Null };
        assert_eq!(r["repository"], repo, "{r}");
    }
}

/// Issue 32: the documented job named `~/.codex/sessions` and died with PATH_NOT_FOUND for anyone
/// without it, and left out pi's folder. With no --input it reads the agents' folders that exist,
/// as `ctxj export --folders` lists them.
#[test]
#[cfg_attr(not(ctxj_has_python), ignore = "needs python3 (fails under CI=true; once it is there, `touch build.rs`)")]
fn regression_spark_job_needed_every_agent_folder() {
    let home = tempfile::tempdir().unwrap();
    for d in [".claude/projects", ".pi/agent/sessions"] {
        std::fs::create_dir_all(home.path().join(d)).unwrap();
    }
    let listed = run(hermetic(&mut Command::new(env!("CARGO_BIN_EXE_ctxj")))
        .env("HOME", home.path())
        .args(["export", "--folders"]));
    let want: Vec<Value> = ["claude-code:.claude/projects", "pi:.pi/agent/sessions"]
        .iter()
        .map(|s| {
            let (agent, rel) = s.split_once(':').unwrap();
            serde_json::json!({"agent": agent, "path": home.path().join(rel).to_str().unwrap()})
        })
        .collect();
    let got: Vec<Value> = listed.lines().map(|l| serde_json::from_str(l).unwrap()).collect();
    assert_eq!(got, want, "no codex folder here, pi's included");
    // The job's default inputs are those folders (python3 finds its own interpreter through PATH).
    let code = "import sys; sys.path.insert(0, 'fleet'); import ctxj_spark as j; print('\\n'.join(j.default_inputs(sys.argv[1])))";
    let mut c = Command::new(python3());
    let out = run(hermetic(&mut c)
        .current_dir(repo())
        .args(["-c", code])
        .arg(env!("CARGO_BIN_EXE_ctxj"))
        .env("HOME", home.path()));
    let paths: Vec<&str> = want.iter().map(|w| w["path"].as_str().unwrap()).collect();
    assert_eq!(out.lines().collect::<Vec<_>>(), paths);
}

/// Runs `export_partition` (engine-free, plain python3) over `files` (written under a temporary
/// folder as `name -> content`): its rows as JSON and its stderr.
fn partition_of(files: &[(&str, &[u8])]) -> (Vec<Value>, String) {
    let d = tempfile::tempdir().unwrap();
    let mut paths = Vec::new();
    for (name, content) in files {
        let p = d.path().join(name);
        std::fs::create_dir_all(p.parent().unwrap()).unwrap();
        std::fs::write(&p, content).unwrap();
        paths.push(p.to_str().unwrap().to_string());
    }
    let code = "import sys, json; sys.path.insert(0, 'fleet'); import ctxj_spark as j; \
        files = [(p, open(p, 'rb').read()) for p in sys.argv[2:]]; \
        print(json.dumps(list(j.export_partition(files, sys.argv[1], []))))";
    let o = hermetic(&mut Command::new(python3()))
        .current_dir(repo())
        .args(["-c", code])
        .arg(env!("CARGO_BIN_EXE_ctxj"))
        .args(&paths)
        .output()
        .unwrap();
    let err = String::from_utf8_lossy(&o.stderr).into_owned();
    assert!(o.status.success(), "{err}");
    (serde_json::from_slice(&o.stdout).unwrap(), err)
}

/// Issue 31: a partition holding only ctxj journals made `ctxj export` exit 2 ("no transcript …")
/// and the partition's task — the whole job — fail. Such a partition is skipped with a note.
#[test]
#[cfg_attr(not(ctxj_has_python), ignore = "needs python3 (fails under CI=true; once it is there, `touch build.rs`)")]
fn regression_spark_partition_of_only_ctxj_journals_failed_the_job() {
    let journal = std::fs::read(sample("bugfix-todo").join("journal.jsonl")).unwrap();
    let (rows, err) = partition_of(&[("a/s1/journal.jsonl", &journal), ("a/s2/journal.jsonl", &journal)]);
    assert!(rows.is_empty(), "{rows:?}");
    assert!(err.contains("skipped a partition of 2 file(s): none is a transcript ctxj exports"), "{err}");
}

/// Issue 31: a transcript with `u64::MAX` tokens failed the partition (a BIGINT, an Arrow int64,
/// cannot hold it). Counts past int64 are clamped to its maximum, as the OTLP export does, and
/// the row names them in `clamped_int64`; the partition says how many rows were clamped.
#[test]
#[cfg_attr(not(ctxj_has_python), ignore = "needs python3 (fails under CI=true; once it is there, `touch build.rs`)")]
fn regression_spark_u64_max_tokens_overflowed_int64() {
    let t = cc_max_usage_transcript(2);
    let (rows, err) = partition_of(&[("projects/p/0a0a0a0a-max.jsonl", t.as_bytes())]);
    assert_eq!(rows.len(), 2, "{rows:?}");
    let counts = ["prompt_tokens_recorded", "input_tokens", "cache_read_tokens", "cache_write_tokens", "output_tokens"];
    for r in &rows {
        let clamped = r["clamped_int64"].as_str().unwrap_or_default();
        for c in counts {
            assert_eq!(r[c].as_i64(), Some(i64::MAX), "{c}: {r}");
            assert!(clamped.split(',').any(|k| k == c), "{c} not named: {r}");
        }
    }
    assert!(err.contains("2 row(s) had counts past int64: clamped to 9223372036854775807"), "{err}");
    // A row within range names nothing.
    let (rows, _) = partition_of(&[(
        "projects/p/0a0a0a0a-small.jsonl",
        cc_max_usage_transcript(1).replace("18446744073709551615", "7").as_bytes(),
    )]);
    assert_eq!(rows[0]["clamped_int64"], Value::Null, "{rows:?}");
}

/// The Spark job over `input` into a fresh `out`: its exit code, stdout and stderr.
fn spark_job(py: &Path, input: &Path, out: &Path) -> (Option<i32>, String, String) {
    let o = hermetic(&mut Command::new(py))
        .current_dir(repo())
        .arg("fleet/ctxj_spark.py")
        .args(["--master", "local[2]", "--partitions", "2", "--show", "5"])
        .arg("--ctxj")
        .arg(env!("CARGO_BIN_EXE_ctxj"))
        .arg("--input")
        .arg(input)
        .arg("--output")
        .arg(out)
        .output()
        .unwrap();
    (o.status.code(), String::from_utf8_lossy(&o.stdout).into_owned(), String::from_utf8_lossy(&o.stderr).into_owned())
}

/// Issue 31: an empty input folder ended in an `AnalysisException` traceback (Spark cannot infer
/// the schema of the empty output it wrote). Now: "no transcripts", exit 2, no traceback.
#[test]
#[cfg_attr(
    not(ctxj_has_fleet),
    ignore = "needs .venv-fleet (pyspark) and java (fails under CI=true; once it is there, `touch build.rs`)"
)]
fn regression_spark_empty_input_folder_was_a_traceback() {
    let py = fleet_python();
    let d = tempfile::tempdir_in(env!("CARGO_TARGET_TMPDIR")).unwrap();
    std::fs::create_dir_all(d.path().join("in")).unwrap();
    let (code, _, err) = spark_job(&py, &d.path().join("in"), &d.path().join("out"));
    assert_eq!(code, Some(2), "{err}");
    assert!(err.contains("no transcripts: no *.jsonl file under"), "{err}");
    assert!(!err.contains("Traceback") && !err.contains("Exception"), "{err}");
}

/// Issue 31: a transcript whose name holds `:` (`2026-03-15T09:30:00.412Z_….jsonl`) failed the
/// job's write (Hadoop's checksummed local file system cannot make the `.<name>.crc` path:
/// "Relative path in absolute URI"). Read beside a `u64::MAX` transcript (clamped, the rollups
/// saturate instead of an ANSI overflow) and a session of only a ctxj journal (skipped).
#[test]
#[cfg_attr(
    not(ctxj_has_fleet),
    ignore = "needs .venv-fleet (pyspark) and java (fails under CI=true; once it is there, `touch build.rs`)"
)]
fn regression_spark_file_name_with_a_colon_failed_the_write() {
    let py = fleet_python();
    let d = tempfile::tempdir_in(env!("CARGO_TARGET_TMPDIR")).unwrap();
    let input = d.path().join("in");
    let pi = repo().join("sample-journals/transcripts/pi/sessions/--home-user-demo--");
    let pi = files_under(&pi, "jsonl").pop().unwrap();
    std::fs::create_dir_all(input.join("pi")).unwrap();
    std::fs::copy(&pi, input.join("pi/2026-03-15T09:30:00.412Z_c6cc9c7b.jsonl")).unwrap();
    std::fs::create_dir_all(input.join("cc/p")).unwrap();
    std::fs::write(input.join("cc/p/0a0a0a0a-max.jsonl"), cc_max_usage_transcript(2)).unwrap();
    std::fs::create_dir_all(input.join("ctxj/s1")).unwrap();
    std::fs::copy(sample("bugfix-todo").join("journal.jsonl"), input.join("ctxj/s1/journal.jsonl")).unwrap();
    let out = d.path().join("out");
    let (code, stdout, err) = spark_job(&py, &input, &out);
    assert_eq!(code, Some(0), "{err}");
    assert!(stdout.contains("recorded: "), "{stdout}");
    let code = "import sys, duckdb; o = sys.argv[1]; \
        print(duckdb.sql(f\"SELECT count(*) FILTER (WHERE source LIKE '%:00.412Z_c6cc9c7b.jsonl'), \
        count(*) FILTER (WHERE clamped_int64 IS NOT NULL), max(input_tokens) FROM read_parquet('{o}/requests/*/*.parquet')\").fetchall()[0]); \
        print(duckdb.sql(f\"SELECT max(prompt_tokens), sum(clamped_rows) FROM read_parquet('{o}/rollups/*.parquet')\").fetchall()[0])";
    let got = run(hermetic(&mut Command::new(&py)).args(["-c", code]).arg(&out));
    let lines: Vec<&str> = got.lines().collect();
    let (colon, clamped, max): (u64, u64, i64) = parse_tuple(lines[0]);
    assert!(colon > 0, "the pi transcript's rows: {got}");
    assert_eq!((clamped, max), (2, i64::MAX), "{got}");
    let (prompt, clamped_rows): (i64, i64) = parse_pair(lines[1]);
    assert_eq!((prompt, clamped_rows), (i64::MAX, 2), "the rollup saturates: {got}");
}

/// `(a, b, c)` as python prints a tuple of integers.
fn parse_tuple(s: &str) -> (u64, u64, i64) {
    let v: Vec<&str> = s.trim_matches(|c| c == '(' || c == ')').split(',').map(str::trim).collect();
    (v[0].parse().unwrap(), v[1].parse().unwrap(), v[2].parse().unwrap())
}

fn parse_pair(s: &str) -> (i64, i64) {
    let v: Vec<&str> = s.trim_matches(|c| c == '(' || c == ')').split(',').map(str::trim).collect();
    (v[0].parse().unwrap(), v[1].parse().unwrap())
}
