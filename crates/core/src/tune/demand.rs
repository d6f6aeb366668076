//! Demand for earlier tool results (`docs/tune.md`, "Demand-weighted retention").
//!
//! An *artifact* is a file path, a URL or a whole shell command named in a tool call's
//! arguments. A call at turn t that names an artifact *demands* the result of the latest earlier
//! call of each tool that named the same artifact (the content of the file, page or command
//! output arrived there). The demanded tokens are that result's raw estimate. A configuration
//! *retains* a demand when the result is still verbatim in its simulated request at turn t.
//! Demands are read once per session from the journal; each replay only checks them.

use std::collections::{HashMap, HashSet};

use serde_json::Value;

use crate::journal::{Body, Journal};
use crate::projection::Block;
use crate::strategy::Origin;
use crate::tokens::Estimator;

/// One demand: the call of `turn` that names `artifact` needs the result of `source_call`.
#[derive(Debug, Clone, PartialEq, Eq, serde::Serialize, schemars::JsonSchema)]
pub struct Demand {
    pub turn: usize,
    pub artifact: String,
    /// The call (id) whose result carried the artifact's content, and its turn.
    pub source_call: String,
    pub source_turn: usize,
    /// Raw token estimate of that result.
    pub tokens: u64,
}

/// A session's demands, in turn order, and its edited files (for the artifact trail).
#[derive(Debug, Clone, Default)]
pub struct Demands {
    pub events: Vec<Demand>,
    /// Per edited path: its last edit and last read.
    pub edited: Vec<Edited>,
}

/// An edited file of the session (artifact trail).
#[derive(Debug, Clone, PartialEq, Eq, PartialOrd, Ord)]
pub struct Edited {
    pub path: String,
    /// The last edit call (id) and its turn.
    pub edit: String,
    pub turn: usize,
    /// The last read call (id), if the file was read.
    pub read: Option<String>,
}

impl Demands {
    /// Σ demanded tokens.
    pub fn tokens(&self) -> u64 {
        self.events.iter().map(|d| d.tokens).sum()
    }
}

/// Tools whose calls write a file (Claude Code, Codex, pi, and the usual lower-case names).
const EDIT_TOOLS: &[&str] =
    &["Edit", "MultiEdit", "Write", "NotebookEdit", "edit", "write", "apply_patch", "str_replace", "write_file"];
/// Tools whose calls read a file.
const READ_TOOLS: &[&str] = &["Read", "read", "read_file", "cat", "view"];
/// Argument keys whose whole string is an artifact.
const WHOLE_KEYS: &[&str] = &["path", "file_path", "filePath", "file", "notebook_path", "url", "command", "cmd"];

/// The artifacts named in a call's arguments: whole values of the keys above, and in every
/// string the words that look like paths (`a/b`, `name.ext`) or URLs. Sorted, unique.
pub fn artifacts(args: &Value) -> Vec<String> {
    let mut out = HashSet::new();
    walk(args, None, &mut out);
    let mut v: Vec<String> = out.into_iter().collect();
    v.sort();
    v
}

fn walk(v: &Value, key: Option<&str>, out: &mut HashSet<String>) {
    match v {
        Value::String(s) => {
            // Codex hands some arguments as a JSON string.
            if key.is_none() && s.starts_with('{') {
                if let Ok(inner) = serde_json::from_str::<Value>(s) {
                    return walk(&inner, None, out);
                }
            }
            if key.is_some_and(|k| WHOLE_KEYS.contains(&k)) && !s.trim().is_empty() {
                out.insert(normalize(s.trim()));
            }
            words(s, out);
        }
        Value::Array(a) => a.iter().for_each(|x| walk(x, key, out)),
        Value::Object(m) => m.iter().for_each(|(k, x)| walk(x, Some(k), out)),
        _ => {}
    }
}

fn normalize(s: &str) -> String {
    s.strip_prefix("./").unwrap_or(s).to_string()
}

/// Path- and URL-like words of `s`.
fn words(s: &str, out: &mut HashSet<String>) {
    let seps = |c: char| c.is_whitespace() || "'\"`,;()<>|&=[]{}".contains(c);
    for w in s.split(seps) {
        // `src/a.rs:12` names `src/a.rs`.
        let w = w.trim_end_matches([':', '.']);
        let w = match w.find(':') {
            Some(i) if !w.starts_with("http") && w[i + 1..].bytes().all(|b| b.is_ascii_digit() || b == b':') => &w[..i],
            _ => w,
        };
        if w.len() < 3 {
            continue;
        }
        if w.starts_with("http://") || w.starts_with("https://") || looks_like_path(w) {
            out.insert(normalize(w));
        }
    }
}

fn looks_like_path(w: &str) -> bool {
    if w.starts_with('-') || !w.chars().all(|c| c.is_alphanumeric() || "/._-~@+".contains(c)) {
        return false;
    }
    if w.contains('/') {
        return w.chars().any(char::is_alphanumeric);
    }
    // `name.ext`: a non-empty stem and a 1–6 character alphanumeric extension with a letter.
    match w.rsplit_once('.') {
        Some((stem, ext)) => {
            !stem.is_empty()
                && (1..=6).contains(&ext.len())
                && ext.chars().all(|c| c.is_ascii_alphanumeric())
                && ext.chars().any(|c| c.is_ascii_alphabetic())
        }
        None => false,
    }
}

/// The demands of `journal` (module doc). Turns count `assistant` records from 1, as replays do.
pub fn demands(journal: &Journal, est: &dyn Estimator) -> Demands {
    // artifact → tool → (call, turn) of the latest call of that tool that named it.
    let mut latest: HashMap<String, HashMap<String, (String, usize)>> = HashMap::new();
    let mut tokens: HashMap<String, u64> = HashMap::new();
    let mut events = Vec::new();
    let mut edits: HashMap<String, (String, usize)> = HashMap::new();
    let mut reads: HashMap<String, String> = HashMap::new();
    let mut turn = 0;
    for rec in &journal.records {
        match &rec.body {
            Body::Result(r) => {
                let b = Block::Result { call: r.call.clone(), tool: r.tool.clone(), text: r.text.clone() };
                tokens.insert(r.call.clone(), est.block(&b));
            }
            Body::Assistant(a) => {
                turn += 1;
                let mut seen = HashSet::new();
                let named: Vec<(usize, Vec<String>)> =
                    a.calls.iter().enumerate().map(|(i, c)| (i, artifacts(&c.args))).collect();
                for (_, arts) in &named {
                    for art in arts {
                        for (call, src_turn) in latest.get(art).into_iter().flat_map(|m| m.values()) {
                            let Some(&t) = tokens.get(call) else { continue };
                            if seen.insert(call.clone()) {
                                events.push(Demand {
                                    turn,
                                    artifact: art.clone(),
                                    source_call: call.clone(),
                                    source_turn: *src_turn,
                                    tokens: t,
                                });
                            }
                        }
                    }
                }
                for (i, arts) in named {
                    let c = &a.calls[i];
                    for art in &arts {
                        latest.entry(art.clone()).or_default().insert(c.tool.clone(), (c.id.clone(), turn));
                    }
                    let path = ["file_path", "path", "filePath", "notebook_path"]
                        .iter()
                        .find_map(|k| c.args.get(*k).and_then(Value::as_str))
                        .map(normalize);
                    if let Some(p) = path {
                        if EDIT_TOOLS.contains(&c.tool.as_str()) {
                            edits.insert(p, (c.id.clone(), turn));
                        } else if READ_TOOLS.contains(&c.tool.as_str()) {
                            reads.insert(p, c.id.clone());
                        }
                    }
                }
            }
            _ => {}
        }
    }
    let mut edited: Vec<Edited> = edits
        .into_iter()
        .map(|(p, (edit, turn))| Edited { read: reads.get(&p).cloned(), path: p, edit, turn })
        .collect();
    edited.sort();
    Demands { events, edited }
}

/// The results (call ids) verbatim in a request, and the calls of its verbatim assistant blocks.
pub fn verbatim_calls<'a>(blocks: &'a [Block], origins: &[Origin]) -> (HashSet<&'a str>, HashSet<&'a str>) {
    let mut results = HashSet::new();
    let mut calls = HashSet::new();
    for (b, o) in blocks.iter().zip(origins) {
        if *o != Origin::Verbatim {
            continue;
        }
        match b {
            Block::Result { call, .. } => {
                results.insert(call.as_str());
            }
            Block::Assistant { calls: cs, .. } => calls.extend(cs.iter().map(|c| c.id.as_str())),
            _ => {}
        }
    }
    (results, calls)
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn artifacts_of_the_usual_calls() {
        assert_eq!(artifacts(&json!({"file_path": "/src/a.rs"})), vec!["/src/a.rs"]);
        let a = artifacts(&json!({"command": "cargo test -p core && cat ./src/lib.rs:12"}));
        assert!(a.contains(&"cargo test -p core && cat ./src/lib.rs:12".to_string()), "{a:?}");
        assert!(a.contains(&"src/lib.rs".to_string()), "{a:?}");
        assert!(!a.contains(&"test".to_string()) && !a.contains(&"-p".to_string()), "{a:?}");
        assert_eq!(artifacts(&json!({"url": "https://x.org/a"})), vec!["https://x.org/a"]);
        // Codex: arguments as a JSON string.
        assert_eq!(artifacts(&json!("{\"path\":\"Cargo.toml\"}")), vec!["Cargo.toml"]);
        assert!(artifacts(&json!({"pattern": "fn main", "n": 3})).is_empty());
        assert!(artifacts(&json!({"x": "v1.2 and 3.14"})).is_empty());
    }
}
