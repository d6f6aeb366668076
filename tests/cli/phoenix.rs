//! Issue 32: a real OTLP receiver. Real shared sessions (a Claude Code project, subagents
//! included) are sent with `ctxj export --endpoint --include-content` to **Arize Phoenix** (`phoenix serve`,
//! pinned in `fleet/requirements.txt`, on a free port with a temporary working directory and
//! SQLite), and read back through Phoenix's own REST API (`GET /v1/projects/default/spans`) and
//! GraphQL (the project's token and cost totals): the hex trace and span ids are the OTLP JSON's,
//! the tree holds (the subagent under its `execute_tool Task` span, that one under the chat span
//! that called it), every LLM span's tokens are what ctxj sent and add up — in Phoenix's own
//! count too — to `ctxj usage --json`, ctxj's cost attribute adds up to `usage`'s cost, and the
//! content arrived redacted. Phoenix prices the spans itself; its figure is printed, not
//! compared (docs/fleet.md says how much and why it differs).
//!
//! Needs `.venv-fleet/bin/phoenix` (`.ci/run` installs it; build.rs's `ctxj_has_phoenix`).

use std::collections::{BTreeMap, BTreeSet, HashMap};
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

use serde_json::{json, Value};

use crate::common::*;

/// A shared project of real Claude Code sessions: two with subagents (`4d5611e5…` starts
/// `agent-a2898e3` with a `Task` call) and compaction side files, three with one-hour cache writes.
const PROJECT: &str = "claude-code/projects/spotter";

/// How long Phoenix may take to start and to store what it was sent (both wait on a database
/// migration and a bulk inserter; minutes on this project's loaded 2-core machine).
const PATIENCE: Duration = Duration::from_secs(600);

fn phoenix_bin() -> PathBuf {
    let bin = repo().join(".venv-fleet/bin/phoenix");
    assert!(
        bin.is_file(),
        "{} is missing: this test needs Arize Phoenix (.ci/run installs it from fleet/requirements.txt). \
         Outside CI the test is ignored when build.rs finds it absent (after installing it, `touch build.rs`); \
         under CI=true it must exist.",
        bin.display()
    );
    bin
}

fn free_port() -> u16 {
    std::net::TcpListener::bind("127.0.0.1:0").unwrap().local_addr().unwrap().port()
}

/// `phoenix serve`, running (killed on drop), and where its log goes.
struct Phoenix {
    child: Child,
    port: u16,
    log: PathBuf,
}

impl Phoenix {
    fn start(dir: &Path) -> Phoenix {
        let (port, grpc) = (free_port(), free_port());
        let log = dir.join("phoenix.log");
        let child = hermetic(&mut Command::new(phoenix_bin()))
            .arg("serve")
            .env("PHOENIX_WORKING_DIR", dir.join("work"))
            .env("PHOENIX_HOST", "127.0.0.1")
            .env("PHOENIX_PORT", port.to_string())
            .env("PHOENIX_GRPC_PORT", grpc.to_string())
            .env("PHOENIX_TELEMETRY_ENABLED", "false")
            .stdin(Stdio::null())
            .stdout(std::fs::File::create(&log).unwrap())
            .stderr(std::fs::File::create(dir.join("phoenix.err")).unwrap())
            .spawn()
            .unwrap();
        let mut p = Phoenix { child, port, log };
        p.wait_for(|p| p.get("/healthz").is_some_and(|b| b.trim() == "OK"), "to start");
        p
    }

    fn url(&self, path: &str) -> String {
        format!("http://127.0.0.1:{}{path}", self.port)
    }

    fn get(&self, path: &str) -> Option<String> {
        let mut r = ureq::get(&self.url(path)).call().ok()?;
        r.body_mut().with_config().limit(64 << 20).read_to_string().ok()
    }

    fn graphql(&self, query: &str) -> Value {
        let body = json!({ "query": query }).to_string();
        let mut r = ureq::post(&self.url("/graphql")).header("Content-Type", "application/json").send(&body).unwrap();
        let v: Value = serde_json::from_str(&r.body_mut().read_to_string().unwrap()).unwrap();
        assert!(v.get("errors").is_none_or(Value::is_null), "{v}");
        v["data"].clone()
    }

    /// Polls `ok` every second until it holds, or panics after [`PATIENCE`] (or when Phoenix
    /// died) with the end of its log.
    fn wait_for(&mut self, ok: impl Fn(&Phoenix) -> bool, what: &str) {
        let t = Instant::now();
        while !ok(self) {
            let dead = self.child.try_wait().unwrap();
            if dead.is_some() || t.elapsed() > PATIENCE {
                let log = std::fs::read_to_string(&self.log).unwrap_or_default()
                    + &std::fs::read_to_string(self.log.with_extension("err")).unwrap_or_default();
                let tail: String = log.chars().rev().take(3000).collect::<Vec<_>>().into_iter().rev().collect();
                panic!("Phoenix failed {what} (exit {dead:?}, {:?}):\n{tail}", t.elapsed());
            }
            std::thread::sleep(Duration::from_secs(1));
        }
    }

    /// Every span of the default project, through the REST API (pages of 1,000).
    fn spans(&self) -> Vec<Value> {
        let mut out = vec![];
        let mut cursor: Option<String> = None;
        loop {
            let mut path = "/v1/projects/default/spans?limit=1000".to_string();
            if let Some(c) = &cursor {
                path.push_str(&format!("&cursor={c}"));
            }
            let Some(body) = self.get(&path) else { return out };
            let page: Value = serde_json::from_str(&body).unwrap();
            out.extend(page["data"].as_array().cloned().unwrap_or_default());
            match page["next_cursor"].as_str() {
                Some(c) => cursor = Some(c.to_string()),
                None => return out,
            }
        }
    }
}

impl Drop for Phoenix {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

fn hex(v: &Value) -> String {
    v.as_str().unwrap().to_string()
}

#[test]
#[cfg_attr(
    not(all(ctxj_has_samples, ctxj_has_phoenix)),
    ignore = "needs ../shared/samples and Arize Phoenix in .venv-fleet (fails under CI=true; once they are there, `touch build.rs`)"
)]
fn a_real_session_reaches_arize_phoenix_with_ids_tree_tokens_and_cost_of_usage() {
    let shared = shared_samples();
    let inputs = [shared.join(PROJECT)];
    let d = tempfile::tempdir().unwrap();
    let mut phoenix = Phoenix::start(d.path());

    let sent = ctxj()
        // A loaded Phoenix answers its first requests slowly: wait as long as it takes to start.
        .args(["export", "--include-content", "--timeout", &PATIENCE.as_secs().to_string()])
        .args(["--endpoint", &phoenix.url("")])
        .args(&inputs)
        .output()
        .unwrap();
    let err = String::from_utf8_lossy(&sent.stderr);
    assert!(sent.status.success(), "{err}");
    let n: usize = err
        .split_once("sent ")
        .and_then(|(_, r)| r.split_once(' '))
        .and_then(|(n, _)| n.parse().ok())
        .unwrap_or_else(|| panic!("{err}"));
    phoenix.wait_for(|p| p.spans().len() >= n, "to store every span sent");
    let spans = phoenix.spans();
    assert_eq!(spans.len(), n, "Phoenix stored each span once");

    // What ctxj meant to send, in OTLP JSON (the same span model): by span id.
    let json = ctxj().args(["export", "--include-content", "--format", "otlp-json"]).args(&inputs).output().unwrap();
    let mut want: HashMap<String, Value> = HashMap::new();
    for l in String::from_utf8(json.stdout).unwrap().lines() {
        let v: Value = serde_json::from_str(l).unwrap();
        for s in v["resourceSpans"][0]["scopeSpans"][0]["spans"].as_array().unwrap() {
            let attrs: serde_json::Map<String, Value> = s["attributes"]
                .as_array()
                .unwrap()
                .iter()
                .map(|a| {
                    let v = a["value"].as_object().unwrap().values().next().unwrap().clone();
                    (hex(&a["key"]), v)
                })
                .collect();
            want.insert(hex(&s["spanId"]), json!({ "trace": s["traceId"], "attributes": attrs }));
        }
    }

    // Ids: Phoenix's hex ids are ctxj's (16 and 8 bytes), one trace for the session and its subagents.
    let ids: BTreeSet<(String, String)> =
        spans.iter().map(|s| (hex(&s["context"]["trace_id"]), hex(&s["context"]["span_id"]))).collect();
    let want_ids: BTreeSet<(String, String)> = want.iter().map(|(id, v)| (hex(&v["trace"]), id.clone())).collect();
    assert_eq!(ids, want_ids);
    assert!(ids.iter().all(|(t, s)| t.len() == 32 && s.len() == 16), "{ids:?}");

    // The tree: one root per trace (a session with its subagents); every other span's parent was
    // stored, in its trace; the subagent under its Task span, that one under the chat span that
    // called it.
    let by_id: HashMap<String, &Value> = spans.iter().map(|s| (hex(&s["context"]["span_id"]), s)).collect();
    let traces: BTreeSet<&String> = ids.iter().map(|(t, _)| t).collect();
    let roots: Vec<&Value> = spans.iter().filter(|s| s["parent_id"].is_null()).collect();
    assert_eq!(roots.len(), traces.len(), "{roots:?}");
    assert!(roots.iter().all(|r| r["span_kind"] == "AGENT" && r["attributes"]["ctxj.parent_session"].is_null()));
    for s in &spans {
        if let Some(p) = s["parent_id"].as_str() {
            let parent = by_id.get(p).unwrap_or_else(|| panic!("the parent of {} was not stored", s["name"]));
            assert_eq!(parent["context"]["trace_id"], s["context"]["trace_id"]);
        }
    }
    let sub = spans
        .iter()
        .find(|s| s["span_kind"] == "AGENT" && s["attributes"]["gen_ai.conversation.id"] == "agent-a2898e3")
        .expect("the subagent a2898e3's root span");
    let task = by_id[sub["parent_id"].as_str().unwrap()];
    assert_eq!((task["name"].as_str(), task["span_kind"].as_str()), (Some("execute_tool Task"), Some("TOOL")));
    assert_eq!(by_id[task["parent_id"].as_str().unwrap()]["span_kind"], "LLM");

    // Tokens, per span as sent, and in total as `usage` counts them — in Phoenix's own count too.
    let usage: Value =
        serde_json::from_slice(&ctxj().args(["usage", "--json"]).args(&inputs).output().unwrap().stdout).unwrap();
    let total = &usage["totals"];
    let llm: Vec<&Value> = spans.iter().filter(|s| s["span_kind"] == "LLM").collect();
    assert_eq!(llm.len() as u64, total["calls"].as_u64().unwrap());
    let keys = [
        "llm.token_count.prompt",
        "llm.token_count.completion",
        "llm.token_count.prompt_details.cache_read",
        "llm.token_count.prompt_details.cache_write",
        "ctxj.cache_write_1h_tokens",
    ];
    for s in &llm {
        let sent = &want[&hex(&s["context"]["span_id"])]["attributes"];
        for k in keys {
            assert_eq!(Some(span_int(s, k)), sent[k].as_str().and_then(|v| v.parse().ok()), "{k} of {}", s["name"]);
        }
    }
    let sum = |k: &str| llm.iter().map(|s| span_int(s, k)).sum::<u64>();
    let [input, read, write, output] = usage_tokens(total);
    assert_eq!(sum("llm.token_count.prompt"), input + read + write);
    assert_eq!(sum("llm.token_count.prompt_details.cache_read"), read);
    assert_eq!(sum("llm.token_count.prompt_details.cache_write"), write);
    assert_eq!(sum("llm.token_count.completion"), output);
    assert!(sum("ctxj.cache_write_1h_tokens") > 0, "Claude Code 2.1.x writes one-hour cache entries");
    let project = phoenix.graphql(
        "{ projects { edges { node { name tokenCountTotal tokenCountPrompt tokenCountCompletion \
         costSummary { total { cost } } } } } }",
    );
    let p = &project["projects"]["edges"][0]["node"];
    assert_eq!(p["tokenCountTotal"].as_f64(), total["total_tokens"].as_f64(), "{p}");
    assert_eq!(p["tokenCountPrompt"].as_f64(), Some((input + read + write) as f64), "{p}");
    assert_eq!(p["tokenCountCompletion"].as_f64(), Some(output as f64), "{p}");

    // Cost: ctxj's own attribute, summed, is `usage`'s; Phoenix's priced figure is its own.
    let cost = |k: &str| llm.iter().filter_map(|s| s["attributes"][k].as_f64()).sum::<f64>();
    let billed = total["cost_usd"].as_f64().unwrap();
    for k in ["ctxj.cost_usd", "gen_ai.usage.cost", "llm.cost.total"] {
        assert!((cost(k) - billed).abs() < 1e-6, "{k}: {} vs usage's {billed}", cost(k));
    }
    let priced = p["costSummary"]["total"]["cost"].as_f64();
    eprintln!("usage bills ${billed:.4}; Phoenix prices the same spans at ${:.4}", priced.unwrap_or(f64::NAN));

    // Times: chat spans last as long as the transcript tells (not 0 ms).
    assert!(llm.iter().any(|s| s["start_time"] != s["end_time"]), "every chat span lasts 0 ms");

    // Content: on every LLM span, as sent, with no secret left (the redaction rule's pattern).
    let secret = regex::Regex::new(ctxj_core::strategy::summary::SECRET_PATTERN).unwrap();
    let mut models = BTreeMap::new();
    for s in &llm {
        let sent = &want[&hex(&s["context"]["span_id"])]["attributes"];
        for k in ["input.value", "output.value"] {
            let v = s["attributes"][k].as_str().unwrap_or_else(|| panic!("{k} missing: {s}"));
            assert_eq!(Some(v), sent[k].as_str(), "{k}");
            assert!(!secret.is_match(v), "{k} holds a secret");
        }
        *models.entry(s["attributes"]["llm.model_name"].as_str().unwrap_or("?")).or_insert(0) += 1;
    }
    assert!(llm.iter().any(|s| !s["attributes"]["input.value"].as_str().unwrap().is_empty()));
    assert!(!models.is_empty(), "{models:?}");
}
