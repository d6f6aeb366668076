//! Mirror drafts (`LIVE_CONTEXT.json`): parsing the `draft.blocks` of a `mirror` record into
//! [`Block`]s. Checking a draft against rules R1–R6 lives with `validate`; applying an accepted
//! draft lives in [`super::recorded`].

use std::sync::Arc;

use serde_json::Value;

use super::block::{Block, BlockCall};

/// Parses a draft object `{"blocks": [...]}` into blocks. Errors say which block is malformed.
pub fn parse_draft(draft: &Value) -> Result<Vec<Block>, String> {
    let blocks =
        draft.get("blocks").and_then(Value::as_array).ok_or_else(|| "draft has no `blocks` array".to_string())?;
    blocks.iter().enumerate().map(|(i, b)| parse_block(b).map_err(|e| format!("draft block {}: {e}", i + 1))).collect()
}

fn field<'a>(o: &'a serde_json::Map<String, Value>, k: &str) -> Result<&'a str, String> {
    match o.get(k) {
        Some(Value::String(s)) => Ok(s),
        Some(_) => Err(format!("`{k}` must be a string")),
        None => Err(format!("missing `{k}`")),
    }
}

/// Parses one block in the form of spec §4.
pub fn parse_block(v: &Value) -> Result<Block, String> {
    let o = v.as_object().ok_or("a block must be an object")?;
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
