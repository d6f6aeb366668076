//! Generates the bundled experiment `sample-journals/experiment-bugfix/`: seed 001's TypeScript
//! TODO-app bug hunt run k = 3 times under each of four context strategies — `baseline`,
//! `truncate-500`, `age-truncate-500-keep-3`, `compact-at-12000-structured` — with an `outcome`
//! record per run and the experiment manifest. SYNTHETIC: scripted from the seed's narrative, not
//! recorded (the README written next to the runs says so).
//!
//! `cargo run --example gen_experiment [OUT_DIR]` writes `<OUT_DIR>/experiment-bugfix/`;
//! `OUT_DIR` defaults to the repository's `sample-journals/`. The output is deterministic (no
//! clock, no environment, fixed ChaCha8 seeds, whose streams `rand_chacha` keeps stable), and a
//! test regenerates it and compares byte for byte.
//!
//! The fixture's files and test outputs are read from the committed `bugfix-todo` sample (the
//! same task), so the two samples never disagree. The harness model:
//! * every `assistant` record carries `usage` and the `prompt_sha256` of the library's own
//!   recorded projection of the records written so far;
//! * provider tokens are canonical bytes / 4 per block; `cached_tokens` follow an implicit prefix
//!   cache (Gemini 2.5 Flash: the longest block prefix shared with a request of the last
//!   5 minutes, at least 2,048 tokens, the model's minimum);
//! * `truncate-500` cuts every tool result to its first 500 characters as the harness hands it
//!   over (the bug line of `src/api.ts` lies after them, so those runs wander and fail);
//!   `age-truncate-500-keep-3` collapses results longer than 500 characters once three newer
//!   results exist (an `elide` record: journal-v1 has no partial-truncation record);
//!   `compact-at-12000-structured` compacts once, with the five-section summary, before the first
//!   turn whose conversation size (strategies.md §2) exceeds 12,000 characters, pinning the first
//!   user message and cutting where the library's replay cuts; its `compact` record carries the
//!   summarizer request's `usage` (a ctxj extension of journal-v1), so the arm pays for the call.
//! * the `harness` field names the strategy (`pi-agent 0.9 (transformContext: …)`), so `audit`
//!   judges each run by the `pi-agent` profile: by its strategy, not by journal-v1's budget.

use std::path::{Path, PathBuf};

use ctxj_core::journal::{parse_bytes, Body, Journal, ReadOptions};
use ctxj_core::projection::{state_at_rev, Block, Projection};
use ctxj_core::strategy::compact::{plan_cut, INSTRUCTION};
use rand::{Rng, SeedableRng};
use rand_chacha::ChaCha8Rng;
use serde_json::{json, Map, Value};
use sha2::{Digest, Sha256};

fn main() {
    let out = std::env::args_os()
        .nth(1)
        .map(PathBuf::from)
        .unwrap_or_else(|| Path::new(env!("CARGO_MANIFEST_DIR")).join("sample-journals"));
    if let Err(e) = generate(&out) {
        eprintln!("gen_experiment: {e}");
        std::process::exit(1);
    }
    println!("wrote {}", out.join(NAME).display());
}

const NAME: &str = "experiment-bugfix";
const MODEL: &str = "google/gemini-2.5-flash";
const TTL_MS: u64 = 5 * 60 * 1000;
/// Gemini 2.5 Flash's minimum cacheable prompt (ctxj's own table, `cache::window`): a shorter shared prefix
/// reads nothing from the cache.
const CACHE_MIN: u64 = 2048;
/// compact-at-12000-structured's threshold, in characters of conversation.
const COMPACT_AT: u64 = 12_000;
const STRATEGIES: [&str; 4] = ["baseline", "truncate-500", "age-truncate-500-keep-3", "compact-at-12000-structured"];

/// Writes `out/experiment-bugfix/` (replaced if present).
pub fn generate(out: &Path) -> std::io::Result<()> {
    let fx = Fixture::load()?;
    let dir = out.join(NAME);
    if dir.exists() {
        std::fs::remove_dir_all(&dir)?;
    }
    for (s, strategy) in STRATEGIES.iter().enumerate() {
        for k in 1..=3u64 {
            let mut h = Harness::new(strategy, &fx, 0x5EED_0001 + 97 * s as u64 + k, k + 3 * s as u64);
            match *strategy {
                "truncate-500" => wander(&mut h, &fx, k),
                _ => solve(&mut h, &fx, k),
            }
            let run = dir.join("runs").join(format!("{strategy}-{k}"));
            std::fs::create_dir_all(&run)?;
            std::fs::write(run.join("journal.jsonl"), h.finish())?;
        }
    }
    std::fs::write(dir.join("experiment.toml"), MANIFEST)?;
    std::fs::write(dir.join("README.md"), README)?;
    Ok(())
}

// ---------------------------------------------------------------------------------------------
// The fixture, taken from the bugfix-todo sample
// ---------------------------------------------------------------------------------------------

struct Fixture {
    system: Value,
    user: String,
    listing: String,
    test: String,
    api: String,
    storage: String,
    types: String,
    failing: String,
    passing: String,
    /// The fixed `src/api.ts` (bugfix-todo's second, correct write).
    fixed: String,
}

impl Fixture {
    fn load() -> std::io::Result<Fixture> {
        let path = Path::new(env!("CARGO_MANIFEST_DIR")).join("sample-journals/bugfix-todo/journal.jsonl");
        let text = std::fs::read_to_string(path)?;
        let recs: Vec<Value> = text.lines().map(|l| serde_json::from_str(l).expect("bugfix-todo parses")).collect();
        let s = |rev: usize, key: &str| recs[rev - 1][key].as_str().expect("a string field").to_string();
        let mut system = recs[1].clone();
        let o = system.as_object_mut().expect("an object");
        for k in ["rev", "ts", "kind"] {
            o.remove(k);
        }
        Ok(Fixture {
            system,
            user: s(3, "text"),
            listing: s(5, "text"),
            test: s(7, "text"),
            failing: s(9, "text"),
            api: s(11, "text"),
            storage: s(13, "text"),
            types: s(15, "text"),
            passing: s(25, "text"),
            fixed: recs[21]["calls"][0]["args"]["content"].as_str().expect("the fix").to_string(),
        })
    }
}

// ---------------------------------------------------------------------------------------------
// The harness model
// ---------------------------------------------------------------------------------------------

/// An earlier request: when it was sent, and per leading block count its prefix hash and tokens.
struct Sent {
    at: u64,
    keys: Vec<[u8; 32]>,
    tokens: Vec<u64>,
}

struct Harness {
    strategy: &'static str,
    lines: Vec<String>,
    rev: u64,
    now: u64,
    rng: ChaCha8Rng,
    calls: u64,
    turns: u64,
    sent: Vec<Sent>,
    elided: Vec<String>,
    /// compact-at compacts once.
    compacted: bool,
}

impl Harness {
    fn new(strategy: &'static str, fx: &Fixture, seed: u64, slot: u64) -> Harness {
        // Runs one after the other, an hour apart, from 2026-11-30 09:00 UTC.
        let start = 1_764_493_200_000 + slot * 3_600_000;
        let mut h = Harness {
            strategy,
            lines: Vec::new(),
            rev: 0,
            now: start,
            rng: ChaCha8Rng::seed_from_u64(seed),
            calls: 0,
            turns: 0,
            sent: Vec::new(),
            elided: Vec::new(),
            compacted: false,
        };
        let id = format!("exp-bugfix-{strategy}-{slot}");
        h.record(
            "session",
            json!({"id": id, "model": MODEL, "harness": format!("pi-agent 0.9 (transformContext: {strategy})"),
                   "ctx": {"ctx_window": 1_048_576}}),
        );
        h.record("system", fx.system.clone());
        h.wait(800, 2_000);
        let user = fx.user.clone();
        h.record("user", json!({"id": "u_1", "text": user}));
        h
    }

    fn ts(&self) -> String {
        let t = chrono::DateTime::from_timestamp_millis(self.now as i64).expect("time in range");
        t.format("%Y-%m-%dT%H:%M:%S%.3fZ").to_string()
    }

    fn wait(&mut self, lo: u64, hi: u64) {
        self.now += self.rng.gen_range(lo..=hi);
    }

    fn record(&mut self, kind: &str, fields: Value) {
        self.rev += 1;
        let mut m = Map::new();
        m.insert("rev".into(), json!(self.rev));
        m.insert("ts".into(), json!(self.ts()));
        m.insert("kind".into(), json!(kind));
        if let Value::Object(f) = fields {
            m.extend(f);
        }
        self.lines.push(serde_json::to_string(&Value::Object(m)).expect("serializable"));
    }

    fn text(&self) -> String {
        self.lines.iter().map(|l| format!("{l}\n")).collect()
    }

    fn journal(&self) -> Journal {
        parse_bytes(Path::new("gen"), self.text().as_bytes(), ReadOptions::default()).expect("generated journal parses")
    }

    fn projection(&self) -> Projection {
        state_at_rev(&self.journal(), u64::MAX)
    }

    /// One LLM call: the strategy's step, then the `assistant` record. Returns the call ids.
    fn turn(&mut self, text: &str, calls: &[(&str, Value)]) -> Vec<String> {
        match self.strategy {
            "age-truncate-500-keep-3" => self.age(),
            "compact-at-12000-structured" => self.compact_if_due(),
            _ => {}
        }
        let p = self.projection();
        let blocks: Vec<&Block> = p.blocks().collect();
        let tokens: Vec<u64> = blocks.iter().map(|b| tokens_of(b)).collect();
        let prompt = 3 + tokens.iter().sum::<u64>();
        let ids: Vec<String> = calls
            .iter()
            .map(|_| {
                self.calls += 1;
                format!("call_{}", self.calls)
            })
            .collect();
        self.turns += 1;
        let written =
            text.len() as u64 / 4 + calls.iter().map(|(t, a)| (t.len() + a.to_string().len()) as u64 / 4).sum::<u64>();
        let completion = written + self.rng.gen_range(8..=120);
        let latency = 700 + prompt / 30 + completion * 6;
        self.wait(latency, latency + latency / 2);
        let cached = self.cached(&blocks, &tokens);
        let mut a = json!({"id": format!("a_{}", self.turns), "text": text});
        if !calls.is_empty() {
            let list = calls.iter().zip(&ids).map(|((tool, args), id)| json!({"id": id, "tool": tool, "args": args}));
            a["calls"] = Value::Array(list.collect());
        }
        a["usage"] = json!({"prompt_tokens": prompt, "cached_tokens": cached, "completion_tokens": completion});
        a["prompt_sha256"] = json!(p.sha256());
        self.record("assistant", a);
        ids
    }

    /// Implicit prefix caching: the longest block prefix shared with a request of the last
    /// five minutes, when it is at least [`CACHE_MIN`] tokens.
    fn cached(&mut self, blocks: &[&Block], tokens: &[u64]) -> u64 {
        let mut keys = Vec::new();
        let mut cum = Vec::new();
        let mut h = Sha256::new();
        let mut sum = 3;
        for (b, t) in blocks.iter().zip(tokens) {
            h.update(b.canonical());
            keys.push(<[u8; 32]>::from(h.clone().finalize()));
            sum += t;
            cum.push(sum);
        }
        let now = self.now;
        let mut best = 0;
        for s in self.sent.iter().filter(|s| now.saturating_sub(s.at) <= TTL_MS) {
            let shared = s.keys.iter().zip(&keys).take_while(|(a, b)| a == b).count();
            if shared > 0 {
                best = best.max(s.tokens[shared - 1]);
            }
        }
        self.sent.push(Sent { at: now, keys, tokens: cum });
        if best >= CACHE_MIN {
            best
        } else {
            0
        }
    }

    /// A tool result as the strategy hands it to the model.
    fn result(&mut self, call: &str, tool: &str, full: &str) {
        let (lo, hi) = if tool == "run_tests" { (900, 2_400) } else { (10, 90) };
        self.wait(lo, hi);
        let shown = if self.strategy == "truncate-500" && full.chars().count() > 500 {
            let head: String = full.chars().take(500).collect();
            format!("{head}\n…[truncated {} chars]", full.chars().count() - 500)
        } else {
            full.to_string()
        };
        self.record("result", json!({"call": call, "tool": tool, "text": shown, "bytes": full.len()}));
    }

    /// age-truncate-500-keep-3: results longer than 500 characters collapse once three newer
    /// results exist.
    fn age(&mut self) {
        let j = self.journal();
        let results: Vec<(String, usize)> = j
            .records
            .iter()
            .filter_map(|r| match &r.body {
                Body::Result(x) => Some((x.call.clone(), x.text.chars().count())),
                _ => None,
            })
            .collect();
        let old = results.len().saturating_sub(3);
        let due: Vec<String> = results[..old]
            .iter()
            .filter(|(id, n)| *n > 500 && !self.elided.contains(id))
            .map(|(id, _)| id.clone())
            .collect();
        if !due.is_empty() {
            self.wait(1, 5);
            self.record("elide", json!({"by": "auto", "calls": due, "keep_results": 3}));
            self.elided.extend(due);
        }
    }

    /// compact-at-12000-structured, once (strategies.md §2): before the first turn whose
    /// conversation size (the characters of every block but the system block, calls' tool and
    /// args included: `Block::chars`) exceeds 12,000, the blocks after the pinned first user
    /// message are cut where the library's replay cuts (`strategy::compact::plan_cut`: the
    /// earliest cut whose tail fits 3,000 characters, at least 3 blocks, at least 5 summarized),
    /// and the summarizer's five-section summary replaces the rest. The record keeps the pinned
    /// message and the tail by id (`kept`), and carries the summarizer request's `usage`.
    fn compact_if_due(&mut self) {
        if self.compacted {
            return;
        }
        let p = self.projection();
        let chars: u64 = p.conv.iter().map(|b| b.block.chars() as u64).sum();
        if chars <= COMPACT_AT {
            return;
        }
        let pinned = p.conv.iter().position(|b| matches!(b.block, Block::User { .. }));
        let conv: Vec<&Block> =
            p.conv.iter().enumerate().filter(|(i, _)| Some(*i) != pinned).map(|(_, b)| &b.block).collect();
        let sizes: Vec<u64> = conv.iter().map(|b| b.chars() as u64).collect();
        let Some(cut) = plan_cut(&conv, &sizes, COMPACT_AT / 4) else { return };
        let kept: Vec<String> = pinned
            .map(|i| &p.conv[i].block)
            .into_iter()
            .chain(conv[cut..].iter().copied())
            .filter_map(|b| b.id().map(str::to_string))
            .collect();
        // The summarizer's request: the system block, the summarized blocks and the instruction.
        let summarized: u64 = conv[..cut].iter().map(|b| tokens_of(b)).sum();
        let prompt = 3 + p.system.as_ref().map_or(0, tokens_of) + summarized + INSTRUCTION.len() as u64 / 4 + 3;
        let completion = SUMMARY.len() as u64 / 4;
        let before = request_tokens(&p);
        let latency = 700 + prompt / 30 + completion * 6;
        self.wait(latency, latency + latency / 2); // the summarizer call
        self.record(
            "compact",
            json!({"trigger": "auto", "summary": SUMMARY, "kept": kept, "mode": "rotate",
                   "tokens_before": before, "tokens_after": 0,
                   "usage": {"prompt_tokens": prompt, "cached_tokens": 0, "completion_tokens": completion}}),
        );
        // tokens_after: the request the compaction leaves, by the same provider count.
        let after = request_tokens(&self.projection());
        let last = self.lines.pop().expect("the compact record");
        let mut v: Value = serde_json::from_str(&last).expect("own record");
        v["tokens_after"] = json!(after);
        self.lines.push(serde_json::to_string(&v).expect("serializable"));
        self.compacted = true;
    }

    fn outcome(&mut self, passed: bool, detail: &str) {
        self.wait(2_000, 4_000);
        self.record(
            "outcome",
            json!({"passed": passed, "check": "node --experimental-strip-types --test", "detail": detail}),
        );
    }

    /// The finished journal, checked against the library.
    fn finish(&self) -> String {
        let j = self.journal();
        let mut turns = 0;
        ctxj_core::projection::for_each_request(&j, |turn, idx, req| {
            turns = turn;
            let Body::Assistant(a) = &j.records[idx].body else { unreachable!() };
            assert_eq!(a.prompt_sha256.as_deref(), Some(req.sha256().as_str()), "turn {turn}: prompt_sha256");
        });
        assert!(turns > 0);
        self.text()
    }
}

/// The provider's token count of a block in this model: canonical bytes / 4, plus 3.
fn tokens_of(b: &Block) -> u64 {
    b.canonical().len() as u64 / 4 + 3
}

/// The provider's token count of a whole request: 3 + its blocks'.
fn request_tokens(p: &Projection) -> u64 {
    3 + p.blocks().map(tokens_of).sum::<u64>()
}

const SUMMARY: &str = "<summary>\n## Task Overview\nMake the failing test in test/tasklist.test.ts pass by fixing \
the bug under src/.\n## Current State\n- src/api.ts: modified (complete case now coerces the id with Number()).\n\
- src/storage.ts, src/types.ts: analyzed, unchanged.\n- Test suite: the last run failed to load test/tasklist.test.ts.\n\
## Important Discoveries\n- Root cause: src/api.ts `complete` cast `request.payload.id as number`; a JSON request \
passes the string \"1\" and TaskStore.markComplete compares with `===`.\n- Did NOT work: rewriting src/api.ts without \
the `parseRequest` export — the test file imports it.\n## Next Steps\nRestore `parseRequest` in src/api.ts, keep the \
Number() coercion, run the tests.\n## Context to Preserve\nChange src/ only; the tests are the specification.\n</summary>";

// ---------------------------------------------------------------------------------------------
// The runs
// ---------------------------------------------------------------------------------------------

/// Every run starts the same way: the layout, the test, the failing suite.
fn opening(h: &mut Harness, fx: &Fixture) {
    let c = h.turn("I'll start by looking at the project layout.", &[("list_files", json!({"path": "."}))]);
    h.result(&c[0], "list_files", &fx.listing);
    let c = h.turn("", &[("read_file", json!({"path": "test/tasklist.test.ts"}))]);
    h.result(&c[0], "read_file", &fx.test);
    let c = h.turn("Let me run the suite to see the failure.", &[("run_tests", json!({}))]);
    h.result(&c[0], "run_tests", &fx.failing);
}

/// The runs that can see the bug line: baseline, age-truncate and compact. Each reads the
/// sources and re-reads the test before the fix, and takes a last look at `api.ts`; run 2 repeats
/// bugfix-todo's detour (the first rewrite drops `parseRequest`), run 3 runs the suite once more.
fn solve(h: &mut Harness, fx: &Fixture, k: u64) {
    opening(h, fx);
    let c = h.turn(
        "Test 3 fails: `complete` with the JSON payload `{\"id\":\"1\"}` returns `{ completed: false }`. The \
         request goes through parseRequest and Api.handle.",
        &[("read_file", json!({"path": "src/api.ts"}))],
    );
    h.result(&c[0], "read_file", &fx.api);
    let c = h.turn("", &[("read_file", json!({"path": "src/storage.ts"}))]);
    h.result(&c[0], "read_file", &fx.storage);
    let c = h.turn("", &[("read_file", json!({"path": "src/types.ts"}))]);
    h.result(&c[0], "read_file", &fx.types);
    let c = h.turn(
        "Checking exactly what test 3 sends and expects.",
        &[("read_file", json!({"path": "test/tasklist.test.ts"}))],
    );
    h.result(&c[0], "read_file", &fx.test);
    let found = "Found it. In `api.ts` the `complete` case passes `request.payload.id as number` to \
                 `markComplete`; the cast does no conversion, so the string \"1\" reaches `t.id === id`. Coercing \
                 with `Number()` as `get` does.";
    if k == 2 {
        let broken = fx.fixed.replace("export function parseRequest", "function parseRequest");
        let c = h.turn(found, &[("write_file", json!({"path": "src/api.ts", "content": broken}))]);
        h.result(&c[0], "write_file", &format!("wrote {} bytes to src/api.ts", broken.len()));
        let c = h.turn("", &[("run_tests", json!({}))]);
        h.result(
            &c[0],
            "run_tests",
            "exit_code: 1\n--- stdout ---\nTAP version 13\n# Subtest: test/tasklist.test.ts\nnot ok 1 - test/tasklist.test.ts\n  ---\n  \
             error: 'The requested module ''../src/api.ts'' does not provide an export named ''parseRequest'''\n  ...\n1..1\n# fail 1\n\n--- stderr ---\n",
        );
        let c = h.turn(
            "The test file no longer loads: I dropped the `parseRequest` export. Restoring it and keeping the `Number()` coercion.",
            &[("write_file", json!({"path": "src/api.ts", "content": fx.fixed}))],
        );
        h.result(&c[0], "write_file", &format!("wrote {} bytes to src/api.ts", fx.fixed.len()));
    } else {
        let c = h.turn(found, &[("write_file", json!({"path": "src/api.ts", "content": fx.fixed}))]);
        h.result(&c[0], "write_file", &format!("wrote {} bytes to src/api.ts", fx.fixed.len()));
    }
    let c = h.turn("", &[("run_tests", json!({}))]);
    h.result(&c[0], "run_tests", &fx.passing);
    let c =
        h.turn("All 4 tests pass. A last look at the final `api.ts`.", &[("read_file", json!({"path": "src/api.ts"}))]);
    h.result(&c[0], "read_file", &fx.fixed);
    if k == 3 {
        let c = h.turn("", &[("run_tests", json!({}))]);
        h.result(&c[0], "run_tests", &fx.passing);
    }
    h.turn(
        "Fixed. Root cause: `src/api.ts` cast `request.payload.id as number`, which does no runtime conversion; \
         `Number(request.payload.id)` coerces at the API boundary. The whole suite passes (4/4).",
        &[],
    );
    h.outcome(true, "4/4 tests pass");
}

/// truncate-500: `src/api.ts` is cut before its handler, so the agent never sees the bug line,
/// guesses at `storage.ts` and `types.ts`, and stops at the harness's turn limit.
fn wander(h: &mut Harness, fx: &Fixture, k: u64) {
    opening(h, fx);
    let c = h.turn(
        "The output is cut before the failing test. The request path goes through src/api.ts.",
        &[("read_file", json!({"path": "src/api.ts"}))],
    );
    h.result(&c[0], "read_file", &fx.api);
    let guesses = [
        ("src/storage.ts", "`api.ts` holds only the request types; the lookup must be in the store."),
        ("src/types.ts", "Maybe the id type is declared wrongly."),
        ("src/api.ts", "I still do not see a handler; reading api.ts again."),
        ("test/tasklist.test.ts", "Re-reading the test to see what it expects."),
    ];
    let rounds = 21 + 2 * k as usize;
    let mut storage = fx.storage.clone();
    for r in 0..rounds {
        let (path, why) = guesses[r % guesses.len()];
        let text = match path {
            "src/storage.ts" => storage.clone(),
            "src/types.ts" => fx.types.clone(),
            "src/api.ts" => fx.api.clone(),
            _ => fx.test.clone(),
        };
        let c = h.turn(why, &[("read_file", json!({"path": path}))]);
        h.result(&c[0], "read_file", &text);
        if r % 2 == 1 {
            // A guess: make the store tolerant of string ids.
            storage = format!(
                "{}\n// attempt {}: compare ids loosely\nexport const normalizeId = (id: unknown) => id;\n",
                fx.storage,
                r / 2 + 1
            );
            let c = h.turn(
                "Trying a change in the store so that string ids match.",
                &[("write_file", json!({"path": "src/storage.ts", "content": storage}))],
            );
            h.result(&c[0], "write_file", &format!("wrote {} bytes to src/storage.ts", storage.len()));
            let c = h.turn("", &[("run_tests", json!({}))]);
            h.result(&c[0], "run_tests", &fx.failing);
        }
    }
    h.turn("I could not find the cause: the visible parts of src/ look correct. The suite still fails on test 3.", &[]);
    h.outcome(false, "3/4 tests pass; test 3 still fails");
}

const MANIFEST: &str = r#"# The bundled experiment (SYNTHETIC runs: see README.md): seed 001's bug hunt, k = 3 runs under
# each of four context strategies. `ctxj experiment sample-journals/experiment-bugfix/experiment.toml`
name = "bugfix-todo, seed 001: four context strategies, 3 runs each (synthetic)"
reference = "baseline"
seed = 1

[[arm]]
label = "baseline"
sessions = ["runs/baseline-*"]

[[arm]]
label = "truncate-500"
sessions = ["runs/truncate-500-*"]

[[arm]]
label = "age-truncate-500-keep-3"
sessions = ["runs/age-truncate-500-keep-3-*"]

[[arm]]
label = "compact-at-12000-structured"
sessions = ["runs/compact-at-12000-structured-*"]
"#;

const README: &str = "# experiment-bugfix (synthetic)

These runs are **synthetic**: written by `examples/gen_experiment.rs` from the narrative of seed
001, not recorded from a model. They exist so that `ctxj experiment` has a bundled example whose
shape is known:

    ctxj experiment sample-journals/experiment-bugfix/experiment.toml
    ctxj experiment sample-journals/experiment-bugfix/experiment.toml --replay truncate-500

The task is seed 001's TypeScript TODO app (the same fixture as `../bugfix-todo`): a test fails
because `src/api.ts` casts a JSON id with `as number`. Each of four context strategies is run
three times on `google/gemini-2.5-flash`:

* `baseline` — every result verbatim; 3/3 pass.
* `truncate-500` — every tool result cut to 500 characters. The bug line of `src/api.ts` lies
  after them, so the agent never sees it, guesses at the store, and gives up: 0/3 pass, at several
  times the cost of baseline.
* `age-truncate-500-keep-3` — results longer than 500 characters collapse once three newer results
  exist (recorded as `elide` records: the journal has no partial-truncation record); 3/3 pass.
* `compact-at-12000-structured` — once the conversation exceeds 12,000 characters, the
  five-section summary replaces the older conversation (the first user message and a tail of
  about 3,000 characters kept); 3/3 pass.

Each run ends with an `outcome` record (journal-v1 §2). Usage follows a simple implicit prefix
cache model (5-minute lifetime, 2,048-token minimum: Gemini 2.5 Flash's); the summarizer call of a
compaction is not a turn of the run, but its `compact` record carries the call's `usage`, so the
compaction arm pays for it. Every run audits clean under the `pi-agent` profile its `harness` field
names (`ctxj audit --deny warnings`). Regenerate with `cargo run --example gen_experiment`.
";
