//! Deterministic filler text for synthetic journals: source files, shell and test output, grep
//! and ls listings, prose. Built line by line from small vocabularies so that gigabytes are cheap
//! to produce and still tokenize like real agent traffic (code, paths, numbers, some non-ASCII).

use std::fmt::Write as _;

use rand::seq::SliceRandom;
use rand::Rng;
use rand_chacha::ChaCha8Rng;
use serde_json::{json, Value};

use crate::projection::Block;

const WORDS: &[&str] = &[
    "journal",
    "record",
    "projection",
    "block",
    "cache",
    "token",
    "budget",
    "target",
    "elide",
    "clear",
    "mirror",
    "compact",
    "summary",
    "request",
    "session",
    "parser",
    "index",
    "offset",
    "window",
    "reserve",
    "estimate",
    "replay",
    "strategy",
    "result",
    "call",
    "tool",
    "args",
    "hash",
    "prefix",
    "marker",
    "export",
    "import",
    "config",
    "render",
    "table",
    "writer",
    "reader",
    "buffer",
    "stream",
    "chunk",
    "line",
    "error",
    "warning",
    "value",
    "field",
    "schema",
    "model",
    "turn",
    "revision",
    "draft",
    "status",
    "commit",
    "path",
    "file",
    "spill",
    "attachment",
    "preview",
    "notice",
    "user",
    "assistant",
    "system",
    "worker",
    "queue",
    "retry",
    "timeout",
    "client",
    "server",
    "handler",
    "router",
    "metrics",
    "report",
    "invoice",
    "ledger",
    "account",
    "order",
];

const CRATES: &[&str] = &["core", "export", "ledger", "api", "cli", "storage", "auth", "billing"];

const PROSE: &[&str] = &[
    "I will look at the failing test first.",
    "The parser drops the last line when it has no newline.",
    "Let me read the module that builds the index.",
    "That explains the off-by-one in the offsets.",
    "Running the focused test again to confirm the fix.",
    "The export path still formats totals with the wrong locale — fixing that next.",
    "The cache key must include the encoding, otherwise counts collide.",
    "Now the whole suite passes; checking clippy.",
    "I'll grep for other callers before changing the signature.",
    "Résumé of the change: the reader now keeps the torn tail as a warning.",
    "This is the same file I read earlier; the edit above is still in place.",
    "The error comes from the retry loop, not from the client.",
];

pub fn word(rng: &mut ChaCha8Rng) -> &'static str {
    WORDS.choose(rng).expect("non-empty")
}

fn ident(rng: &mut ChaCha8Rng) -> String {
    format!("{}_{}", word(rng), word(rng))
}

pub fn file_path(rng: &mut ChaCha8Rng, i: usize) -> String {
    let c = CRATES.choose(rng).expect("non-empty");
    format!("crates/{c}/src/{}_{i}.rs", word(rng))
}

pub fn prose(rng: &mut ChaCha8Rng, min: usize, max: usize) -> String {
    let n = rng.gen_range(min..max.max(min + 1));
    let mut s = String::with_capacity(n + 80);
    while s.len() < n {
        if !s.is_empty() {
            s.push(' ');
        }
        s.push_str(PROSE.choose(rng).expect("non-empty"));
    }
    s
}

pub fn task(rng: &mut ChaCha8Rng) -> String {
    let verbs = ["Fix", "Refactor", "Add tests for", "Speed up", "Document", "Investigate"];
    let v = verbs.choose(rng).expect("non-empty");
    format!(
        "{v} the {} {} in crates/{}: {} Keep the public API stable and run the tests when done.",
        word(rng),
        word(rng),
        CRATES.choose(rng).expect("non-empty"),
        prose(rng, 40, 300)
    )
}

fn code_line(rng: &mut ChaCha8Rng, s: &mut String) {
    let _ = match rng.gen_range(0..10) {
        0 => writeln!(s, "pub fn {}(&self, {}: &{}) -> Result<u64> {{", ident(rng), word(rng), word(rng)),
        1 => writeln!(
            s,
            "    let {} = self.{}.get({}).copied().unwrap_or(0);",
            ident(rng),
            word(rng),
            rng.gen_range(0..999)
        ),
        2 => writeln!(s, "    // {} the {} before the {} is flushed", word(rng), word(rng), word(rng)),
        3 => writeln!(
            s,
            "    if {}.len() > {} {{ return Err(Error::{}); }}",
            word(rng),
            rng.gen_range(1..4096),
            word(rng)
        ),
        4 => writeln!(s, "}}"),
        5 => writeln!(s),
        6 => writeln!(s, "    for {} in {}.iter().filter(|x| x.{}) {{", word(rng), ident(rng), word(rng)),
        7 => writeln!(s, "use crate::{}::{{{}, {}}};", word(rng), word(rng), word(rng)),
        8 => writeln!(s, "    {}.push(format!(\"{{}} {}\", {}));", word(rng), word(rng), ident(rng)),
        _ => writeln!(s, "    assert_eq!({}({}), {});", ident(rng), rng.gen_range(0..100), rng.gen_range(0..10_000)),
    };
}

pub fn code(rng: &mut ChaCha8Rng, n: usize) -> String {
    let mut s = String::with_capacity(n + 100);
    while s.len() < n {
        code_line(rng, &mut s);
    }
    s
}

/// A shell command and its output of about `n` bytes; the flag says whether it failed.
pub fn shell(rng: &mut ChaCha8Rng, n: usize) -> (String, String, bool) {
    let c = CRATES.choose(rng).expect("non-empty");
    let mut s = String::with_capacity(n + 200);
    match rng.gen_range(0..4) {
        0 | 1 => {
            let fail = rng.gen_bool(0.15);
            let cmd = format!("cargo test -p {c} -- {} --nocapture", word(rng));
            let mut k = 0;
            s.push_str("running tests\n");
            while s.len() < n {
                k += 1;
                let _ = writeln!(s, "test {}::tests::{} ... ok", word(rng), ident(rng));
            }
            if fail {
                let _ = writeln!(
                    s,
                    "test {c}::tests::roundtrip ... FAILED\n\nfailures:\n---- roundtrip stdout ----\nthread 'roundtrip' panicked at crates/{c}/src/lib.rs:{}:5:\nassertion `left == right` failed\n  left: {}\n right: {}",
                    rng.gen_range(10..900),
                    rng.gen_range(0..100),
                    rng.gen_range(100..200)
                );
            }
            let _ = write!(
                s,
                "\ntest result: {}. {k} passed; {} failed",
                if fail { "FAILED" } else { "ok" },
                u8::from(fail)
            );
            (cmd, s, fail)
        }
        2 => {
            let cmd = format!("cargo build -p {c} 2>&1");
            while s.len() < n {
                let _ = writeln!(
                    s,
                    "warning: unused variable: `{}`\n  --> crates/{c}/src/{}.rs:{}:{}\n   |\n   = note: `#[warn(unused_variables)]` on by default",
                    word(rng),
                    word(rng),
                    rng.gen_range(1..2000),
                    rng.gen_range(1..80)
                );
            }
            s.push_str("    Finished `dev` profile [unoptimized + debuginfo] target(s) in 4.21s");
            (cmd, s, false)
        }
        _ => {
            let cmd = "git diff".to_string();
            while s.len() < n {
                let _ = writeln!(
                    s,
                    "diff --git a/crates/{c}/src/{0}.rs b/crates/{c}/src/{0}.rs\n@@ -{1},7 +{1},8 @@",
                    word(rng),
                    rng.gen_range(1..900)
                );
                for _ in 0..6 {
                    s.push(['+', '-', ' '][rng.gen_range(0..3)]);
                    code_line(rng, &mut s);
                }
            }
            (cmd, s, false)
        }
    }
}

/// Replaces one line of `content`: (old line, new line, new content).
pub fn edit(rng: &mut ChaCha8Rng, content: &str) -> (String, String, String) {
    let lines: Vec<&str> = content.lines().collect();
    if lines.is_empty() {
        let mut new = String::new();
        code_line(rng, &mut new);
        return (String::new(), new.clone(), new);
    }
    let i = rng.gen_range(0..lines.len());
    let old = lines[i].to_string();
    let mut new = String::new();
    code_line(rng, &mut new);
    let new = new.trim_end_matches('\n').to_string();
    let mut out = String::with_capacity(content.len() + new.len());
    for (k, l) in lines.iter().enumerate() {
        out.push_str(if k == i { &new } else { l });
        out.push('\n');
    }
    (old, new, out)
}

pub fn grep(rng: &mut ChaCha8Rng, pat: &str, n: usize) -> String {
    let mut s = String::with_capacity(n + 200);
    while s.len() < n {
        let _ = write!(
            s,
            "crates/{}/src/{}.rs:{}:",
            CRATES.choose(rng).expect("non-empty"),
            word(rng),
            rng.gen_range(1..3000)
        );
        let mut l = String::new();
        code_line(rng, &mut l);
        let _ = writeln!(s, "{} {pat}", l.trim_end());
    }
    s
}

pub fn ls(rng: &mut ChaCha8Rng, n: usize) -> String {
    let mut s = String::with_capacity(n + 100);
    while s.len() < n {
        let _ = writeln!(
            s,
            "-rw-r--r-- 1 dev dev {:>7} Nov  2 09:{:02} {}_{}.rs",
            rng.gen_range(100..90_000),
            rng.gen_range(0..60),
            word(rng),
            rng.gen_range(0..99)
        );
    }
    s
}

pub fn log_paste(rng: &mut ChaCha8Rng, n: usize) -> String {
    let mut s = String::with_capacity(n + 200);
    let mut t = 0u64;
    while s.len() < n {
        t += rng.gen_range(1..2000);
        let lvl = ["INFO", "WARN", "ERROR", "DEBUG"][rng.gen_range(0..4)];
        let _ = writeln!(
            s,
            "2026-11-02T08:{:02}:{:02}.{:03}Z {lvl} {}: {} {} failed after {}ms",
            (t / 60_000) % 60,
            (t / 1000) % 60,
            t % 1000,
            ident(rng),
            word(rng),
            word(rng),
            rng.gen_range(1..5000)
        );
    }
    s
}

/// The system prompt and the tool schemas.
pub fn system_prompt() -> (String, Value) {
    let text = "You are a coding agent working in a Rust workspace. Use the tools to read, search, edit and run code. \
                Keep answers short. The harness keeps your context within budget: old tool output may be elided; \
                you can manage your context yourself by editing LIVE_CONTEXT.json and calling ctx commit, or with \
                ctx clear. Never invent file contents; read them again if they were elided."
        .repeat(4);
    let tool = |name: &str, desc: &str, props: Value| json!({"name": name, "description": desc, "parameters": {"type": "object", "properties": props}});
    let tools = json!([
        tool("read", "Read a file.", json!({"path": {"type": "string"}})),
        tool(
            "edit",
            "Replace text in a file.",
            json!({"path": {"type": "string"}, "old": {"type": "string"}, "new": {"type": "string"}})
        ),
        tool("write", "Write a file.", json!({"path": {"type": "string"}, "content": {"type": "string"}})),
        tool("run", "Run a shell command.", json!({"command": {"type": "string"}})),
        tool("grep", "Search files.", json!({"pattern": {"type": "string"}, "path": {"type": "string"}})),
        tool("ls", "List a directory.", json!({"path": {"type": "string"}})),
        tool(
            "ctx",
            "Manage the context: status, commit, clear.",
            json!({"action": {"type": "string"}, "call_ids": {"type": "array"}, "before": {"type": "string"}, "keep_last": {"type": "integer"}, "tool": {"type": "string"}})
        ),
    ]);
    (text, tools)
}

/// A summary in the shape of strategies.md §2's template.
pub fn summary(rng: &mut ChaCha8Rng, task: &str, blocks: &[&Block]) -> String {
    let mut paths = Vec::new();
    for b in blocks {
        if let Block::Assistant { calls, .. } = b {
            for c in calls {
                if let Some(p) = c.args.get("path").and_then(Value::as_str) {
                    if !paths.iter().any(|x| x == p) && paths.len() < 20 {
                        paths.push(p.to_string());
                    }
                }
            }
        }
    }
    let mut s = String::new();
    let _ = writeln!(s, "## Task Overview\n{}", task.chars().take(300).collect::<String>());
    s.push_str("## Current State\n");
    for p in &paths {
        let _ = writeln!(s, "- {p}");
    }
    let _ = writeln!(s, "## Important Discoveries\n- {}\n## Next Steps\n{}", prose(rng, 40, 200), prose(rng, 40, 300));
    s.push_str("## Context to Preserve\n- keep the public API stable");
    s
}
