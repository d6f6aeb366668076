//! Builders for journals made in memory, for the strategy unit and property tests.

use serde_json::{json, Value};

use crate::journal::{Body, Journal, Record};
use crate::projection::Block;
use crate::tokens::CharEstimator;

use super::{parse, replay, Origin};

pub fn journal(bodies: Vec<Value>) -> Journal {
    let records = bodies
        .into_iter()
        .enumerate()
        .map(|(i, v)| {
            let kind = v["kind"].as_str().unwrap().to_string();
            Record {
                rev: i as u64 + 1,
                rev_recorded: true,
                ts: format!("2026-11-29T10:{:02}:{:02}Z", (i / 60) % 60, i % 60).into(),
                line: i + 1,
                offset: 0,
                body: Body::from_value(&kind, v).unwrap(),
            }
        })
        .collect();
    Journal::from_records("mem.jsonl", records)
}

/// A journal parsed from its JSONL lines, as a file would be.
pub fn from_lines(lines: &[&str]) -> Journal {
    let text = lines.join("\n") + "\n";
    crate::journal::parse_bytes(std::path::Path::new("j.jsonl"), text.as_bytes(), Default::default())
        .expect("valid journal")
}

pub fn session() -> Value {
    json!({"kind":"session","id":"s","model":"vendor/model-x"})
}
pub fn session_ctx(ctx: Value) -> Value {
    json!({"kind":"session","id":"s","model":"vendor/model-x","ctx":ctx})
}
pub fn system(t: &str) -> Value {
    json!({"kind":"system","text":t})
}
pub fn user(id: &str, t: &str) -> Value {
    json!({"kind":"user","id":id,"text":t})
}
pub fn user_att(id: &str, t: &str, att: &str, path: &str, preview: &str, bytes: u64) -> Value {
    json!({"kind":"user","id":id,"text":t,"attachments":[{"id":att,"path":path,"bytes":bytes,"preview":preview}]})
}
pub fn notice(id: &str, t: &str, topic: Option<&str>) -> Value {
    match topic {
        Some(tp) => json!({"kind":"notice","id":id,"text":t,"topic":tp}),
        None => json!({"kind":"notice","id":id,"text":t}),
    }
}
pub fn call(id: &str, tool: &str, args: &str) -> Value {
    json!({"id":id,"tool":tool,"args":serde_json::from_str::<Value>(args).unwrap()})
}
pub fn assistant(id: &str, t: &str, calls: Vec<Value>) -> Value {
    json!({"kind":"assistant","id":id,"text":t,"calls":calls})
}
pub fn assistant_usage(id: &str, t: &str, calls: Vec<Value>, prompt: u64) -> Value {
    json!({"kind":"assistant","id":id,"text":t,"calls":calls,"usage":{"prompt_tokens":prompt}})
}
pub fn result(c: &str, tool: &str, t: &str) -> Value {
    json!({"kind":"result","call":c,"tool":tool,"text":t,"bytes":t.len()})
}
pub fn error_result(c: &str, tool: &str, t: &str) -> Value {
    json!({"kind":"result","call":c,"tool":tool,"text":t,"bytes":t.len(),"is_error":true})
}
pub fn mirror(mrev: u64, base: u64, status: &str, service: &[&str]) -> Value {
    json!({"kind":"mirror","mirror_rev":mrev,"base_rev":base,"status":status,"draft":{"blocks":[]},"service_calls":service})
}

/// Every request of a replay (with the char estimator).
pub fn requests(j: &Journal, name: &str) -> Vec<(Vec<Block>, Vec<Origin>)> {
    let s = parse(name).unwrap();
    let mut v = Vec::new();
    replay(j, &s, &CharEstimator, |r| {
        assert_eq!(r.blocks.len(), r.origins.len());
        v.push((r.blocks.to_vec(), r.origins.to_vec()));
    });
    v
}

/// The texts of the result blocks of a request.
pub fn result_texts(blocks: &[Block]) -> Vec<String> {
    blocks.iter().filter(|b| matches!(b, Block::Result { .. })).map(|b| b.text().to_string()).collect()
}

/// The ids (or type for system/summary) of a request.
pub fn ids(blocks: &[Block]) -> Vec<String> {
    blocks.iter().map(|b| b.id().map_or_else(|| b.type_name().to_string(), str::to_string)).collect()
}
