//! The one walk over a transcript message's content blocks, shared by the three importers.
//!
//! Claude Code, Codex and pi spell the same things differently (`tool_use` / `toolCall`,
//! `input` / `arguments`, `source.data` / `data` / a `data:` URL, `input_text` / `text`): a
//! [`Dialect`] names the spelling, [`walk`] turns the content (a string or an array of blocks)
//! into [`Piece`]s, and [`Calls`] gives tool calls their ids and matches results to them.

use std::collections::{HashMap, HashSet};
use std::sync::Arc;

use serde_json::Value;

use super::{Builder, Image, ImageRule, ImportReport};
use crate::journal::Call;

/// How one agent spells its content blocks.
pub(crate) struct Dialect {
    /// Block types that hold `text`.
    pub text: &'static [&'static str],
    /// The tool-call block type and the field that holds its arguments.
    pub call: &'static str,
    pub args: &'static str,
    /// Reads an image block (`None`: not an image of this dialect).
    pub image: fn(&Value) -> Option<Image>,
}

/// A content block, whatever the agent's spelling.
pub(crate) enum Piece<'a> {
    Text(&'a str),
    /// A tool call: id (may be empty), tool name, the block itself (for its arguments).
    Call {
        id: &'a str,
        name: &'a str,
        args: Value,
    },
    /// A Claude Code `tool_result` block.
    Result(&'a Value),
    Image(Image),
    Thinking,
    /// Any other typed block.
    Other,
}

/// The pieces of `content` with the block type each came from: a string is one `text` piece;
/// an array is walked block by block (blocks without a type are ignored); anything else holds
/// nothing.
pub(crate) fn walk<'a>(content: Option<&'a Value>, d: &Dialect) -> Vec<(&'a str, Piece<'a>)> {
    match content {
        Some(Value::String(t)) => vec![("text", Piece::Text(t))],
        Some(Value::Array(a)) => a.iter().filter_map(|blk| piece(blk, d)).collect(),
        _ => Vec::new(),
    }
}

fn piece<'a>(blk: &'a Value, d: &Dialect) -> Option<(&'a str, Piece<'a>)> {
    let ty = blk.get("type").and_then(Value::as_str)?;
    let str_of = |k: &str| blk.get(k).and_then(Value::as_str);
    let piece = match ty {
        t if d.text.contains(&t) => Piece::Text(str_of("text").unwrap_or("")),
        t if t == d.call => Piece::Call {
            id: str_of("id").unwrap_or(""),
            name: str_of("name").unwrap_or("?"),
            args: blk.get(d.args).cloned().unwrap_or(Value::Null),
        },
        "tool_result" => Piece::Result(blk),
        "thinking" | "redacted_thinking" => Piece::Thinking,
        _ => match (d.image)(blk) {
            Some(img) => Piece::Image(img),
            None => Piece::Other,
        },
    };
    Some((ty, piece))
}

/// Claude Code: `image` / `document` blocks with a `source` (base64 `data`, or a URL).
pub(crate) const CLAUDE: Dialect = Dialect { text: &["text"], call: "tool_use", args: "input", image: claude_image };

/// pi: `image` blocks with `mimeType` and `data`.
pub(crate) const PI: Dialect = Dialect { text: &["text"], call: "toolCall", args: "arguments", image: pi_image };

/// Codex message items: `input_image` with a `data:` URL (tool calls are items of their own).
pub(crate) const CODEX: Dialect =
    Dialect { text: &["input_text", "output_text", "text"], call: "", args: "", image: codex_image };

fn claude_image(blk: &Value) -> Option<Image> {
    let kind = match blk.get("type").and_then(Value::as_str)? {
        "image" => "image",
        "document" => "document",
        _ => return None,
    };
    let src = blk.get("source");
    Some(Image {
        kind,
        media: src.and_then(|s| s.get("media_type")).and_then(Value::as_str).unwrap_or(kind).to_string(),
        data: src
            .filter(|s| s.get("type").and_then(Value::as_str) != Some("url"))
            .and_then(|s| s.get("data"))
            .and_then(Value::as_str)
            .map(Arc::from),
    })
}

fn pi_image(blk: &Value) -> Option<Image> {
    (blk.get("type").and_then(Value::as_str)? == "image").then(|| Image {
        kind: "image",
        media: blk.get("mimeType").and_then(Value::as_str).unwrap_or("image").to_string(),
        data: blk.get("data").and_then(Value::as_str).map(Arc::from),
    })
}

fn codex_image(blk: &Value) -> Option<Image> {
    if blk.get("type").and_then(Value::as_str)? != "input_image" {
        return None;
    }
    let url = blk.get("image_url").and_then(Value::as_str).unwrap_or("");
    let (media, data) = match url.strip_prefix("data:") {
        Some(rest) if rest.contains(";base64,") => {
            let media = rest.split(';').next().unwrap_or("image").to_string();
            (media, rest.split_once(',').map(|x| Arc::from(x.1)))
        }
        _ => ("image".to_string(), None),
    };
    Some(Image { kind: "image", media, data })
}

/// The line of an image inside a tool result (a result has no attachments): the provider's
/// estimate under `rule` when the header gives the size ([`super::image_text`]), else a
/// placeholder line.
pub(crate) fn image_placeholder(img: &Image, rule: Option<ImageRule>, report: &mut ImportReport) -> String {
    report.lose("image inside a tool result (kept as a placeholder line)");
    match img.data.as_deref().filter(|d| !d.is_empty()) {
        Some(data) => super::image_text(&img.media, data, rule, report),
        None => format!("[image: {}, 0 bytes]", img.media),
    }
}

/// The tool calls of one import: each id once, each answered once.
#[derive(Default)]
pub(crate) struct Calls {
    tool: HashMap<String, String>,
    answered: HashSet<String>,
}

impl Calls {
    /// A new call, its id reserved in `b`; `None` (skipped as `dup`) for an empty or repeated id.
    pub fn add(
        &mut self,
        b: &mut Builder,
        id: &str,
        name: &str,
        args: Value,
        r: &mut ImportReport,
        dup: &str,
    ) -> Option<Call> {
        if id.is_empty() || self.tool.contains_key(id) {
            r.skip(dup);
            return None;
        }
        b.reserve(id);
        self.tool.insert(id.to_string(), name.to_string());
        Some(Call { id: id.to_string(), tool: name.to_string(), args: Arc::new(args) })
    }

    /// The tool of a call made earlier, or `None`.
    pub fn tool(&self, id: &str) -> Option<String> {
        self.tool.get(id).cloned()
    }

    /// The tool `id` called, when its result is the first one: a result without its call is
    /// skipped as `orphan` (and counted as dropped), a second result as `second`.
    pub fn answer(&mut self, id: &str, r: &mut ImportReport, orphan: &str, second: &str) -> Option<String> {
        let Some(tool) = self.tool(id) else {
            r.skip(orphan);
            r.dropped.results += 1;
            return None;
        };
        if !self.answered.insert(id.to_string()) {
            r.skip(second);
            return None;
        }
        Some(tool)
    }
}
