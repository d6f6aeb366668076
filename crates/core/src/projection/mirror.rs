//! Mirror drafts (`LIVE_CONTEXT.json`): parsing the `draft.blocks` of a `mirror` record into
//! [`Block`]s ([`draft_blocks`] from the record's JSON text, [`parse_draft`] from a `Value`) and
//! checking a draft against the `restore()` rules R1–R6 of spec §2 ([`check_draft`],
//! [`check_base_rev`], [`rewritten_results`]). Applying an accepted draft lives in
//! [`super::recorded`]; it applies only after a `ctx` commit call ([`is_commit`]).

use std::collections::{HashMap, HashSet};
use std::sync::Arc;

use serde_json::Value;

use crate::journal::MirrorDraft;

use super::block::{canonical_value, Block, BlockCall};
use super::markers::is_marker;

/// Whether a call is `ctx commit` (journal-v1 §2 `mirror`: an empty object also means commit;
/// seed 000: editing `LIVE_CONTEXT.json` without it applies nothing).
pub fn is_commit(tool: &str, args: &Value) -> bool {
    tool == "ctx"
        && match args.get("action") {
            None => args.as_object().is_some_and(|o| o.is_empty()) || args.is_null(),
            Some(a) => a.as_str() == Some("commit"),
        }
}

/// The blocks of a recorded draft, parsed from its JSON text: straight into blocks when the text
/// allows it ([`fast_blocks`]), else through a `Value` (dropped before this returns). Either way
/// the result is [`parse_draft`]'s. Errors say which block is malformed.
pub fn draft_blocks(draft: &MirrorDraft) -> Result<Vec<Block>, String> {
    if let Some(blocks) = draft.plain_json().and_then(fast_blocks) {
        return Ok(blocks);
    }
    parse_draft(&draft.parse()?)
}

/// Parses a draft object `{"blocks": [...]}` into blocks. Errors say which block is malformed.
pub fn parse_draft(draft: &Value) -> Result<Vec<Block>, String> {
    let blocks =
        draft.get("blocks").and_then(Value::as_array).ok_or_else(|| "draft has no `blocks` array".to_string())?;
    blocks.iter().enumerate().map(|(i, b)| parse_block(b).map_err(|e| format!("draft block {}: {e}", i + 1))).collect()
}

/// The fields of a block by name: a JSON object's, or the ones [`fast_blocks`] picked out.
trait Fields {
    fn get(&self, k: &str) -> Option<&Value>;
}

impl Fields for serde_json::Map<String, Value> {
    fn get(&self, k: &str) -> Option<&Value> {
        serde_json::Map::get(self, k)
    }
}

/// A draft block with only the fields [`block_from`] reads (any other is skipped, as the `Value`
/// path ignores it); each is `Some` whenever present, `null` included.
#[derive(serde::Deserialize)]
struct FastBlock {
    #[serde(rename = "type", default, deserialize_with = "present")]
    ty: Option<Value>,
    #[serde(default, deserialize_with = "present")]
    id: Option<Value>,
    #[serde(default, deserialize_with = "present")]
    text: Option<Value>,
    #[serde(default, deserialize_with = "present")]
    user: Option<Value>,
    #[serde(default, deserialize_with = "present")]
    call: Option<Value>,
    #[serde(default, deserialize_with = "present")]
    tool: Option<Value>,
    #[serde(default, deserialize_with = "present")]
    calls: Option<Value>,
    #[serde(default, deserialize_with = "present")]
    tools: Option<Value>,
}

fn present<'de, D: serde::Deserializer<'de>>(d: D) -> Result<Option<Value>, D::Error> {
    serde::Deserialize::deserialize(d).map(Some)
}

impl Fields for FastBlock {
    fn get(&self, k: &str) -> Option<&Value> {
        match k {
            "type" => self.ty.as_ref(),
            "id" => self.id.as_ref(),
            "text" => self.text.as_ref(),
            "user" => self.user.as_ref(),
            "call" => self.call.as_ref(),
            "tool" => self.tool.as_ref(),
            "calls" => self.calls.as_ref(),
            "tools" => self.tools.as_ref(),
            _ => None,
        }
    }
}

/// The blocks of a draft's JSON text without building a `Value` per block object (the
/// `IndexMap`s and keys were most of the work of re-applying mirrors). `None` for anything it
/// cannot decide exactly as [`parse_draft`] would — not an object, a duplicate key (the `Value`
/// keeps the last), a malformed block — and the caller then takes the `Value` path, which gives
/// the same blocks or the error message.
fn fast_blocks(json: &str) -> Option<Vec<Block>> {
    #[derive(serde::Deserialize)]
    struct Draft {
        blocks: Vec<FastBlock>,
    }
    let d: Draft = serde_json::from_str(json).ok()?;
    d.blocks.iter().map(|b| block_from(b).ok()).collect()
}

fn field<'a>(o: &'a impl Fields, k: &str) -> Result<&'a str, String> {
    match o.get(k) {
        Some(Value::String(s)) => Ok(s),
        Some(_) => Err(format!("`{k}` must be a string")),
        None => Err(format!("missing `{k}`")),
    }
}

/// Parses one block in the form of spec §4.
pub fn parse_block(v: &Value) -> Result<Block, String> {
    block_from(v.as_object().ok_or("a block must be an object")?)
}

fn block_from(o: &impl Fields) -> Result<Block, String> {
    let ty = field(o, "type")?;
    let text = || field(o, "text").map(Arc::<str>::from);
    let id = || field(o, "id").map(str::to_string);
    Ok(match ty {
        "system" => Block::System { text: text()?, tools: o.get("tools").cloned().map(Arc::new) },
        "summary" => Block::Summary { text: text()? },
        "user" => Block::User { id: id()?, text: text()? },
        "notice" => Block::Notice { id: id()?, text: text()? },
        "attachment" => Block::Attachment { id: id()?, user: field(o, "user")?.to_string(), text: text()? },
        "result" => {
            Block::Result { call: field(o, "call")?.to_string(), tool: field(o, "tool")?.to_string(), text: text()? }
        }
        "assistant" => {
            let text = match o.get("text") {
                None | Some(Value::Null) => Arc::from(""),
                Some(Value::String(s)) => Arc::from(s.as_str()),
                Some(_) => return Err("`text` must be a string".into()),
            };
            let calls = match o.get("calls") {
                None => Vec::new(),
                Some(Value::Array(a)) => a
                    .iter()
                    .map(|c| {
                        let co = c.as_object().ok_or("a call must be an object")?;
                        Ok(BlockCall {
                            id: field(co, "id")?.to_string(),
                            tool: field(co, "tool")?.to_string(),
                            args: Arc::new(co.get("args").cloned().ok_or("a call needs `args`")?),
                        })
                    })
                    .collect::<Result<_, String>>()?,
                Some(_) => return Err("`calls` must be an array".into()),
            };
            Block::Assistant { id: id()?, text, calls }
        }
        other => return Err(format!("unknown block type {other:?}")),
    })
}

/// A broken `restore()` rule.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Violation {
    /// `"R1"` … `"R6"`.
    pub rule: &'static str,
    /// The block concerned (its id, or the call id of a result), when there is one.
    pub block: Option<String>,
    pub message: String,
}

fn v(rule: &'static str, block: Option<&str>, message: String) -> Violation {
    Violation { rule, block: block.map(str::to_string), message }
}

/// The rule that guards the position of a block of this type.
fn order_rule(b: &Block) -> &'static str {
    match b {
        Block::User { .. } => "R1",
        Block::Assistant { .. } => "R2",
        _ => "R5",
    }
}

/// Checks `draft` against rules R1–R5, compared with `base`: the conversation blocks of the
/// projection at the mirror record's `base_rev` (every block but `system` and `summary`).
/// Equality is on canonical bytes. Returns every violation found, in draft order then base order.
pub fn check_draft<'a>(base: impl IntoIterator<Item = &'a Block>, draft: &[Block]) -> Vec<Violation> {
    let base: Vec<&Block> = base.into_iter().collect();
    let index: HashMap<&str, usize> =
        base.iter().enumerate().rev().filter_map(|(i, b)| b.id().map(|id| (id, i))).collect();
    let mut out = Vec::new();
    let mut in_draft: HashMap<&str, &Block> = HashMap::new();
    let mut last: Option<usize> = None;
    for d in draft {
        let Some(id) = d.id() else {
            out.push(v("R5", None, format!("the draft holds a {} block", d.type_name())));
            continue;
        };
        if in_draft.insert(id, d).is_some() {
            out.push(v("R5", Some(id), format!("{} {id} appears twice in the draft", d.type_name())));
            continue;
        }
        let Some(&bi) = index.get(id) else {
            out.push(v("R5", Some(id), format!("{} {id} is not in the projection at base_rev: added", d.type_name())));
            continue;
        };
        let b = base[bi];
        if b.type_name() != d.type_name() {
            out.push(v(
                "R5",
                Some(id),
                format!("{id} was a {} block, the draft makes it a {}", b.type_name(), d.type_name()),
            ));
            continue;
        }
        if last.is_some_and(|l| bi < l) {
            out.push(v(order_rule(d), Some(id), format!("{} {id} moved out of its place", d.type_name())));
        } else {
            last = Some(bi);
        }
        compare(b, d, &mut out);
    }
    for b in &base {
        let Some(id) = b.id() else { continue };
        if in_draft.contains_key(id) {
            continue;
        }
        match b {
            Block::User { .. } => out.push(v("R1", Some(id), format!("user block {id} removed"))),
            Block::Assistant { .. } => out.push(v("R2", Some(id), format!("assistant block {id} removed"))),
            Block::Notice { .. } | Block::Attachment { .. } => {
                out.push(v("R5", Some(id), format!("{} block {id} removed", b.type_name())))
            }
            _ => {}
        }
    }
    // R3: a call and its result are one unit.
    let draft_calls: HashSet<&str> = draft
        .iter()
        .flat_map(|b| match b {
            Block::Assistant { calls, .. } => calls.iter().map(|c| c.id.as_str()).collect::<Vec<_>>(),
            _ => Vec::new(),
        })
        .collect();
    let base_results: HashSet<&str> = base
        .iter()
        .filter_map(|b| match b {
            Block::Result { call, .. } => Some(call.as_str()),
            _ => None,
        })
        .collect();
    for b in &base {
        let Block::Assistant { calls, .. } = b else { continue };
        for c in calls {
            if !base_results.contains(c.id.as_str()) {
                continue;
            }
            let call_kept = draft_calls.contains(c.id.as_str());
            let result_kept = matches!(in_draft.get(c.id.as_str()), Some(Block::Result { .. }));
            if call_kept != result_kept {
                let what = if call_kept {
                    "its result was removed, the call kept"
                } else {
                    "the call was removed, its result kept"
                };
                out.push(v("R3", Some(&c.id), format!("call {}: {what}", c.id)));
            }
        }
    }
    out
}

/// Compares one block of the draft with the same block at `base_rev` (same id and type).
fn compare(b: &Block, d: &Block, out: &mut Vec<Violation>) {
    match (b, d) {
        (Block::User { id, text: bt }, Block::User { text: dt, .. }) if bt != dt => {
            out.push(v("R1", Some(id), format!("user block {id}: text changed")));
        }
        (Block::Assistant { id, text: bt, calls: bc }, Block::Assistant { text: dt, calls: dc, .. }) => {
            if bt != dt {
                out.push(v("R2", Some(id), format!("assistant block {id}: text changed")));
            }
            let pos: HashMap<&str, usize> = bc.iter().enumerate().map(|(i, c)| (c.id.as_str(), i)).collect();
            let mut last: Option<usize> = None;
            for c in dc {
                let Some(&i) = pos.get(c.id.as_str()) else {
                    out.push(v("R5", Some(&c.id), format!("assistant block {id}: call {} added", c.id)));
                    continue;
                };
                if last.is_some_and(|l| i <= l) {
                    out.push(v("R5", Some(&c.id), format!("assistant block {id}: call {} moved", c.id)));
                } else {
                    last = Some(i);
                }
                let o = &bc[i];
                if o.tool != c.tool {
                    out.push(v(
                        "R4",
                        Some(&c.id),
                        format!("call {}: tool changed from {:?} to {:?}", c.id, o.tool, c.tool),
                    ));
                }
                if o.args != c.args {
                    let (ob, nb) = (canonical_value(&o.args).len(), canonical_value(&c.args).len());
                    if nb >= ob {
                        out.push(v(
                            "R4",
                            Some(&c.id),
                            format!("call {}: args changed without getting shorter ({ob} → {nb} bytes)", c.id),
                        ));
                    }
                }
            }
        }
        (Block::Result { call, tool: bt, text: bx }, Block::Result { tool: dt, text: dx, .. }) => {
            if bt != dt {
                out.push(v("R4", Some(call), format!("result {call}: tool changed from {bt:?} to {dt:?}")));
            }
            if bx != dx && dx.len() >= bx.len() {
                out.push(v(
                    "R4",
                    Some(call),
                    format!("result {call}: text changed without getting shorter ({} → {} bytes)", bx.len(), dx.len()),
                ));
            }
        }
        (Block::Notice { id, .. }, _) | (Block::Attachment { id, .. }, _) if b != d => {
            out.push(v("R5", Some(id), format!("{} block {id} changed", b.type_name())));
        }
        _ => {}
    }
}

/// R6: `base_rev` is at or after the last accepted `mirror` record before this one (its rev,
/// `last_accepted`), and before this record (`rev`).
pub fn check_base_rev(base_rev: u64, rev: u64, last_accepted: Option<u64>) -> Option<Violation> {
    if base_rev >= rev {
        return Some(v("R6", None, format!("base_rev {base_rev} is not before the mirror record (rev {rev})")));
    }
    if base_rev == 0 {
        return Some(v("R6", None, "base_rev 0 names no projection".into()));
    }
    match last_accepted {
        Some(l) if base_rev < l => Some(v(
            "R6",
            None,
            format!("base_rev {base_rev} is older than the last accepted mirror record (rev {l}): a stale mirror"),
        )),
        _ => None,
    }
}

/// Results whose new text in `draft` is neither empty, nor a prefix of the old text, nor a
/// marker of §5: rewritten rather than removed (a warning of `validate`, not a rule violation).
/// A text that did not get shorter is left to R4.
pub fn rewritten_results<'a>(base: impl IntoIterator<Item = &'a Block>, draft: &[Block]) -> Vec<String> {
    let old: HashMap<&str, &str> = base
        .into_iter()
        .filter_map(|b| match b {
            Block::Result { call, text, .. } => Some((call.as_str(), &**text)),
            _ => None,
        })
        .collect();
    draft
        .iter()
        .filter_map(|d| match d {
            Block::Result { call, text, .. } => {
                let o = old.get(call.as_str())?;
                let changed = **text != **o;
                // a longer text is R4's finding, not a rewrite
                let shorter = text.len() < o.len();
                (changed && shorter && !text.is_empty() && !o.starts_with(&**text) && !is_marker(text))
                    .then(|| call.clone())
            }
            _ => None,
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn base() -> Vec<Block> {
        parse_draft(&json!({"blocks": [
            {"type":"user","id":"u1","text":"fix the bug"},
            {"type":"attachment","id":"p1","user":"u1","text":"preview"},
            {"type":"assistant","id":"a1","text":"reading","calls":[
                {"id":"c1","tool":"read","args":{"path":"src/lib.rs"}},
                {"id":"c2","tool":"run","args":{"command":"cargo test --all"}}]},
            {"type":"result","call":"c1","tool":"read","text":"fn main() {}\n// and forty more bytes of source code"},
            {"type":"result","call":"c2","tool":"run","text":"test ok"},
            {"type":"notice","id":"n1","text":"you manage your context"},
            {"type":"assistant","id":"a2","text":"DECIDED: keep it"}
        ]}))
        .unwrap()
    }

    fn edited(f: impl FnOnce(&mut Vec<serde_json::Value>)) -> Vec<Block> {
        let mut blocks: Vec<serde_json::Value> =
            base().iter().map(|b| serde_json::from_slice(&b.canonical()).unwrap()).collect();
        f(&mut blocks);
        parse_draft(&json!({ "blocks": blocks })).unwrap()
    }

    fn rules(d: &[Block]) -> Vec<(&'static str, Option<String>)> {
        check_draft(&base(), d).into_iter().map(|v| (v.rule, v.block)).collect()
    }

    #[test]
    fn typed_draft_parse_agrees_with_the_value_path() {
        let draft = |json: &str| {
            let line = format!(
                r#"{{"rev":1,"kind":"mirror","mirror_rev":1,"base_rev":1,"status":"accepted","draft":{json}}}"#
            );
            let j = crate::journal::reader::parse_bytes_for_test(&line);
            let crate::journal::Body::Mirror(m) = &j.records[0].body else { panic!() };
            m.draft.clone()
        };
        let taken = |json: &str| {
            let d = draft(json);
            let value = d.parse().map_err(|e| e.to_string()).and_then(|v| parse_draft(&v));
            assert_eq!(format!("{:?}", draft_blocks(&d)), format!("{value:?}"), "{json}");
            d.plain_json().and_then(fast_blocks).is_some()
        };
        let ok = [
            r#"{"blocks":[{"type":"user","id":"u1","text":"go \u00e9 \ud83d\ude00","extra":[1,{"x":null}]}]}"#,
            r#"{"v":1,"blocks":[{"type":"system","text":"s","tools":null},{"type":"system","text":"s"}]}"#,
            r#"{"blocks":[{"type":"assistant","id":"a","text":null,"calls":[{"id":"c","tool":"t","args":{"b":1.50,"a":[1e+400,-0.0]}}]}]}"#,
            r#"{"blocks":[{"type":"assistant","id":"a"},{"type":"result","call":"c","tool":"t","text":""}]}"#,
            r#"{"blocks":[{"id":"n","text":"x","type":"notice"},{"type":"attachment","id":"p","user":"u","text":"x"}]}"#,
            r#"{"blocks":[]}"#,
        ];
        for json in ok {
            assert!(taken(json), "the typed path declined {json}");
        }
        // What it cannot decide exactly goes the `Value` way, with the same result or message.
        let declined = [
            r#"{"blocks":[{"type":"user","id":"u1","text":"a","text":"b"}]}"#,
            r#"{"blocks":[{"type":"user","id":null,"text":"x"}]}"#,
            r#"{"blocks":[{"type":"assistant","id":"a","calls":[{"id":"c","tool":"t"}]}]}"#,
            r#"{"blocks":[{"type":"assistant","id":"a","calls":{}}]}"#,
            r#"{"blocks":[{"type":"mystery"}]}"#,
            r#"{"blocks":[{"type":"assistant","id":"a","calls":[{"id":"c","tool":"t","args":2E0}]}]}"#,
            r#"{"blocks":"nope"}"#,
            r#"[1]"#,
            "null",
        ];
        for json in declined {
            assert!(!taken(json), "the typed path took {json}");
        }
    }

    #[test]
    fn unchanged_and_shrunk_drafts_are_valid() {
        assert!(rules(&base()).is_empty());
        let d = edited(|b| {
            b[3]["text"] = json!("[cleared: read, 18 bytes]");
            b[2]["calls"][1]["args"] = json!({});
        });
        assert!(rules(&d).is_empty());
        // a call removed together with its result
        let d = edited(|b| {
            b[2]["calls"].as_array_mut().unwrap().remove(1);
            b.remove(4);
        });
        assert!(rules(&d).is_empty());
    }

    #[test]
    fn r1_user_text_and_presence() {
        assert_eq!(rules(&edited(|b| b[0]["text"] = json!("fix"))), [("R1", Some("u1".into()))]);
        let d = edited(|b| {
            b.remove(0);
        });
        assert_eq!(rules(&d), [("R1", Some("u1".into()))]);
    }

    #[test]
    fn r2_assistant_text_and_presence() {
        assert_eq!(rules(&edited(|b| b[6]["text"] = json!("keep"))), [("R2", Some("a2".into()))]);
        let d = edited(|b| {
            b.remove(6);
        });
        assert_eq!(rules(&d), [("R2", Some("a2".into()))]);
    }

    #[test]
    fn r3_call_and_result_are_one_unit() {
        let d = edited(|b| {
            b.remove(4);
        });
        assert_eq!(rules(&d), [("R3", Some("c2".into()))]);
        let d = edited(|b| {
            b[2]["calls"].as_array_mut().unwrap().remove(0);
        });
        assert_eq!(rules(&d), [("R3", Some("c1".into()))]);
    }

    #[test]
    fn r4_only_shrinking_and_identity_kept() {
        assert_eq!(
            rules(&edited(|b| b[3]["text"] = json!("fn main() {}\n// and forty more bytes of source code!"))),
            [("R4", Some("c1".into()))]
        );
        assert_eq!(rules(&edited(|b| b[4]["tool"] = json!("bash"))), [("R4", Some("c2".into()))]);
        assert_eq!(
            rules(&edited(|b| b[2]["calls"][0]["args"] = json!({"path":"src/main.rs"}))),
            [("R4", Some("c1".into()))]
        );
        assert_eq!(rules(&edited(|b| b[2]["calls"][0]["tool"] = json!("cat"))), [("R4", Some("c1".into()))]);
    }

    #[test]
    fn r5_nothing_added_moved_retyped_notices_and_attachments_unchanged() {
        assert_eq!(rules(&edited(|b| b[5]["text"] = json!("x"))), [("R5", Some("n1".into()))]);
        assert_eq!(rules(&edited(|b| b[1]["text"] = json!("p"))), [("R5", Some("p1".into()))]);
        let d = edited(|b| b.push(json!({"type":"user","id":"u9","text":"new"})));
        assert_eq!(rules(&d), [("R5", Some("u9".into()))]);
        let d = edited(|b| b.insert(0, json!({"type":"system","text":"s"})));
        assert_eq!(rules(&d), [("R5", None)]);
        let d = edited(|b| b.swap(5, 6));
        assert_eq!(rules(&d), [("R5", Some("n1".into()))]);
        let d = edited(|b| b[5] = json!({"type":"user","id":"n1","text":"you manage your context"}));
        assert_eq!(rules(&d), [("R5", Some("n1".into()))]);
        let d = edited(|b| {
            b.remove(5);
        });
        assert_eq!(rules(&d), [("R5", Some("n1".into()))]);
    }

    #[test]
    fn r6_base_rev_window() {
        assert!(check_base_rev(10, 20, Some(8)).is_none());
        assert!(check_base_rev(8, 20, Some(8)).is_none());
        assert_eq!(check_base_rev(7, 20, Some(8)).unwrap().rule, "R6");
        assert_eq!(check_base_rev(20, 20, None).unwrap().rule, "R6");
        assert_eq!(check_base_rev(0, 20, None).unwrap().rule, "R6");
    }

    #[test]
    fn rewritten_is_neither_empty_prefix_nor_marker() {
        let ok = edited(|b| {
            b[3]["text"] = json!("fn main()");
            b[4]["text"] = json!("");
        });
        assert!(rewritten_results(&base(), &ok).is_empty());
        let m = edited(|b| b[3]["text"] = json!("[cleared: read, 18 bytes]"));
        assert!(rewritten_results(&base(), &m).is_empty());
        let r = edited(|b| b[3]["text"] = json!("main fn"));
        assert_eq!(rewritten_results(&base(), &r), ["c1"]);
    }
}
