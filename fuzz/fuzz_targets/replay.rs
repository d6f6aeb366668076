//! Structured replay: the fuzz input is a program of small ops that write a syntactically valid
//! journal (ids from tiny pools, so records collide, refer to missing or future blocks, repeat,
//! and come in any order), which is then parsed and replayed like `projection`. Byte-level
//! mutation rarely gets past the JSON parser; this target reaches the elide / clear / mirror /
//! compact logic of the recorded projection with every ordering the spec forbids.
#![no_main]

use std::path::Path;

use ctxj_core::journal::{parse_bytes, ReadOptions};
use ctxj_core::projection::{for_each_request, state_at_rev, Replayer};
use ctxj::render::projection::{write_projection, Plain};
use libfuzzer_sys::fuzz_target;
use serde_json::{json, Value};

struct Ops<'a>(&'a [u8]);
impl Ops<'_> {
    fn byte(&mut self) -> Option<u8> {
        let (&b, rest) = self.0.split_first()?;
        self.0 = rest;
        Some(b)
    }
    fn pick(&mut self, n: u8) -> u8 {
        self.byte().map_or(0, |b| b % n)
    }
    fn id(&mut self, prefix: &str) -> String {
        format!("{prefix}{}", self.pick(4))
    }
    fn ids(&mut self) -> Vec<String> {
        let n = self.pick(4);
        (0..n).map(|_| {
            let p = ["c", "u", "a", "t", "n"][self.pick(5) as usize];
            self.id(p)
        }).collect()
    }
    fn text(&mut self) -> String {
        ["", "x", "é\u{1b}[2J\r", "[elided: run, 3 bytes, ls]", "long text long text long text long text long"]
            [self.pick(5) as usize]
            .to_string()
    }
    fn args(&mut self) -> Value {
        match self.pick(4) {
            0 => json!({"command": self.text()}),
            1 => json!({"path": "src/a.rs"}),
            2 => json!([1, 2.50, "x"]),
            _ => Value::Null,
        }
    }
}

fn block_of(ops: &mut Ops<'_>) -> Value {
    match ops.pick(8) {
        0 => json!({"type": "user", "id": ops.id("u"), "text": ops.text()}),
        1 => json!({"type": "assistant", "id": ops.id("a"), "text": ops.text(),
                    "calls": [{"id": ops.id("c"), "tool": "run", "args": ops.args()}]}),
        2 => json!({"type": "assistant", "id": ops.id("a"), "text": ops.text()}),
        3 => json!({"type": "result", "call": ops.id("c"), "tool": "run", "text": ops.text()}),
        4 => json!({"type": "notice", "id": ops.id("n"), "text": ops.text()}),
        5 => json!({"type": "attachment", "id": ops.id("t"), "user": ops.id("u"), "text": ops.text()}),
        6 => json!({"type": "summary", "text": ops.text()}),
        _ => json!({"type": "system", "text": ops.text()}),
    }
}

fuzz_target!(|data: &[u8]| {
    let mut ops = Ops(data);
    let mut out = String::new();
    let mut rev = 0u64;
    let mut mirror_rev = 0u64;
    while let Some(op) = ops.byte() {
        rev = match ops.pick(8) {
            0 => rev.saturating_sub(1).max(1), // duplicate / reversal
            1 => rev + 2,                      // gap
            _ => rev + 1,
        };
        let mut r = match op % 13 {
            0 => json!({"kind": "session", "id": "s", "model": "vendor/m", "ctx": {"keep_results": ops.pick(3)}}),
            1 => json!({"kind": "system", "text": ops.text(), "tools": [{"name": "run"}]}),
            2 => json!({"kind": "user", "id": ops.id("u"), "text": ops.text(),
                        "attachments": [{"id": ops.id("t"), "path": "u.att/p", "bytes": 10, "preview": ops.text()}]}),
            3 => {
                let calls: Vec<Value> = (0..ops.pick(3))
                    .map(|_| {
                        let tool = ["run", "read", "ctx"][ops.pick(3) as usize];
                        json!({"id": ops.id("c"), "tool": tool, "args": ops.args()})
                    })
                    .collect();
                json!({"kind": "assistant", "id": ops.id("a"), "text": ops.text(), "calls": calls})
            }
            4 | 5 => json!({"kind": "result", "call": ops.id("c"), "tool": "run", "text": ops.text(), "bytes": ops.pick(200)}),
            6 => json!({"kind": "elide", "by": "auto", "calls": ops.ids()}),
            7 => json!({"kind": "clear", "request": {"keep_last": ops.pick(3)}, "cleared": ops.ids()}),
            8 | 9 => {
                mirror_rev += 1;
                let blocks: Vec<Value> = (0..ops.pick(6)).map(|_| block_of(&mut ops)).collect();
                let draft = match ops.pick(6) {
                    0 => json!("not json"),
                    1 => json!({"blocks": 3}),
                    _ => json!({"blocks": blocks}),
                };
                let status = if ops.pick(4) == 0 { "rejected" } else { "accepted" };
                json!({"kind": "mirror", "mirror_rev": mirror_rev, "base_rev": ops.pick(40),
                       "status": status,
                       "draft": draft, "service_calls": ops.ids()})
            }
            10 => {
                let mode = if ops.pick(2) == 0 { "rotate" } else { "chain" };
                let mut c = json!({"kind": "compact", "trigger": "auto", "summary": ops.text(), "mode": mode});
                match ops.pick(3) {
                    0 => c["first_kept"] = json!(ops.pick(40)),
                    1 => c["kept"] = json!(ops.ids()),
                    _ => {}
                }
                c
            }
            11 => json!({"kind": "notice", "id": ops.id("n"), "text": ops.text(), "topic": "manage_context"}),
            _ => json!({"kind": "model", "model": "vendor/other", "ctx": {"context_budget": 10}}),
        };
        r["rev"] = json!(rev);
        r["ts"] = json!("2026-11-29T10:00:00Z");
        out.push_str(&r.to_string());
        out.push('\n');
    }
    let j = parse_bytes(Path::new("fuzz.jsonl"), out.as_bytes(), ReadOptions::default())
        .expect("a journal of valid records parses");
    let mut r = Replayer::new(&j);
    while r.step().is_some() {
        let _ = r.projection().chars();
    }
    for_each_request(&j, |_, _, p| {
        serde_json::from_slice::<Value>(&p.canonical()).expect("canonical bytes are JSON");
    });
    // A few revisions, not all: the target stays linear in the input.
    for rec in j.records.iter().step_by(j.records.len() / 4 + 1) {
        let _ = state_at_rev(&j, rec.rev);
    }
    let mut s = String::new();
    write_projection(&mut s, &state_at_rev(&j, u64::MAX), &Plain, None);
});
