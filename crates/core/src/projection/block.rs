//! Blocks of a projection and the canonical JSON form of spec §4.
//!
//! The canonical bytes are the contract: `prompt_sha256` is their SHA-256. They are written here
//! and nowhere else.

use std::sync::Arc;

use serde_json::Value;
use sha2::{Digest, Sha256};

use crate::journal::Text;
use crate::text::chars;

/// A call as it stands in a projected assistant block (its `args` may be mirror-edited).
#[derive(Debug, Clone, PartialEq)]
pub struct BlockCall {
    pub id: String,
    pub tool: String,
    pub args: Arc<Value>,
}

/// One block of a projection (spec §4), in the canonical key order.
#[derive(Debug, Clone, PartialEq)]
pub enum Block {
    System { text: Text, tools: Option<Arc<Value>> },
    Summary { text: Text },
    User { id: String, text: Text },
    Attachment { id: String, user: String, text: Text },
    Notice { id: String, text: Text },
    Assistant { id: String, text: Text, calls: Vec<BlockCall> },
    Result { call: String, tool: String, text: Text },
}

impl Block {
    /// The system block of a `system` record.
    pub fn system(rec: &crate::journal::SystemRec) -> Block {
        Block::System { text: rec.text.clone(), tools: rec.tools.clone() }
    }

    /// The assistant block of an `assistant` record, every call kept: what the response
    /// visibly wrote (its text and tool calls).
    pub fn assistant(rec: &crate::journal::AssistantRec) -> Block {
        let calls =
            rec.calls.iter().map(|c| BlockCall { id: c.id.clone(), tool: c.tool.clone(), args: c.args.clone() });
        Block::Assistant { id: rec.id.clone(), text: rec.text.clone(), calls: calls.collect() }
    }

    /// The `type` string of the block.
    pub fn type_name(&self) -> &'static str {
        match self {
            Block::System { .. } => "system",
            Block::Summary { .. } => "summary",
            Block::User { .. } => "user",
            Block::Attachment { .. } => "attachment",
            Block::Notice { .. } => "notice",
            Block::Assistant { .. } => "assistant",
            Block::Result { .. } => "result",
        }
    }

    /// The block's id: `id` for user/assistant/notice/attachment, the `call` for a result.
    pub fn id(&self) -> Option<&str> {
        match self {
            Block::User { id, .. }
            | Block::Attachment { id, .. }
            | Block::Notice { id, .. }
            | Block::Assistant { id, .. } => Some(id),
            Block::Result { call, .. } => Some(call),
            Block::System { .. } | Block::Summary { .. } => None,
        }
    }

    pub fn text(&self) -> &str {
        self.shared_text()
    }

    /// The text as the shared `Arc` (cloning it copies no bytes).
    pub fn shared_text(&self) -> &Text {
        match self {
            Block::System { text, .. }
            | Block::Summary { text }
            | Block::User { text, .. }
            | Block::Attachment { text, .. }
            | Block::Notice { text, .. }
            | Block::Assistant { text, .. }
            | Block::Result { text, .. } => text,
        }
    }

    pub fn set_text(&mut self, new: Text) {
        match self {
            Block::System { text, .. }
            | Block::Summary { text }
            | Block::User { text, .. }
            | Block::Attachment { text, .. }
            | Block::Notice { text, .. }
            | Block::Assistant { text, .. }
            | Block::Result { text, .. } => *text = new,
        }
    }

    /// Characters of the block: its text, plus for each call the characters of `tool` and of
    /// its canonical `args`, plus the canonical tools JSON of a system block. This is the
    /// "conversation size" measure of `strategies.md` §2 (applied to one block).
    pub fn chars(&self) -> usize {
        let mut n = chars(self.text());
        match self {
            Block::Assistant { calls, .. } => {
                for c in calls {
                    n += chars(&c.tool) + chars(&canonical_value(&c.args));
                }
            }
            Block::System { tools: Some(t), .. } => n += chars(&canonical_value(t)),
            _ => {}
        }
        n
    }

    /// Appends the canonical JSON of this block to `out`.
    pub fn write_canonical(&self, out: &mut Vec<u8>) {
        fn s(out: &mut Vec<u8>, v: &str) {
            serde_json::to_writer(&mut *out, v).expect("writing a string to a Vec cannot fail");
        }
        fn key(out: &mut Vec<u8>, k: &str) {
            out.extend_from_slice(b",\"");
            out.extend_from_slice(k.as_bytes());
            out.extend_from_slice(b"\":");
        }
        out.extend_from_slice(b"{\"type\":\"");
        out.extend_from_slice(self.type_name().as_bytes());
        out.push(b'"');
        match self {
            Block::System { text, tools } => {
                key(out, "text");
                s(out, text);
                if let Some(t) = tools {
                    key(out, "tools");
                    write_value(out, t);
                }
            }
            Block::Summary { text } => {
                key(out, "text");
                s(out, text);
            }
            Block::User { id, text } | Block::Notice { id, text } => {
                key(out, "id");
                s(out, id);
                key(out, "text");
                s(out, text);
            }
            Block::Attachment { id, user, text } => {
                key(out, "id");
                s(out, id);
                key(out, "user");
                s(out, user);
                key(out, "text");
                s(out, text);
            }
            Block::Assistant { id, text, calls } => {
                key(out, "id");
                s(out, id);
                key(out, "text");
                s(out, text);
                if !calls.is_empty() {
                    key(out, "calls");
                    out.push(b'[');
                    for (i, c) in calls.iter().enumerate() {
                        if i > 0 {
                            out.push(b',');
                        }
                        out.extend_from_slice(b"{\"id\":");
                        s(out, &c.id);
                        key(out, "tool");
                        s(out, &c.tool);
                        key(out, "args");
                        write_value(out, &c.args);
                        out.push(b'}');
                    }
                    out.push(b']');
                }
            }
            Block::Result { call, tool, text } => {
                key(out, "call");
                s(out, call);
                key(out, "tool");
                s(out, tool);
                key(out, "text");
                s(out, text);
            }
        }
        out.push(b'}');
    }

    /// The canonical JSON of this block alone.
    pub fn canonical(&self) -> Vec<u8> {
        let mut v = Vec::with_capacity(self.text().len() + 64);
        self.write_canonical(&mut v);
        v
    }
}

fn write_value(out: &mut Vec<u8>, v: &Value) {
    serde_json::to_writer(out, v).expect("writing JSON to a Vec cannot fail");
}

/// Canonical (compact, order-preserving) JSON of a journal value.
pub fn canonical_value(v: &Value) -> String {
    serde_json::to_string(v).expect("serializing a Value cannot fail")
}

/// Writes the canonical JSON array of a sequence of blocks.
pub fn canonical_of<'a>(blocks: impl IntoIterator<Item = &'a Block>) -> Vec<u8> {
    let mut out = Vec::with_capacity(4096);
    out.push(b'[');
    for (i, b) in blocks.into_iter().enumerate() {
        if i > 0 {
            out.push(b',');
        }
        b.write_canonical(&mut out);
    }
    out.push(b']');
    out
}

/// Lowercase hex SHA-256.
pub fn sha256_hex(bytes: &[u8]) -> String {
    hex::encode(Sha256::digest(bytes))
}

/// How a decision changed a block, for display (`show`, `log`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum Mark {
    #[default]
    None,
    /// Collapsed by an `elide` record at this rev.
    Elided(u64),
    /// Cleared by a `clear` record at this rev.
    Cleared(u64),
    /// Edited by an accepted mirror draft with this `mirror_rev`.
    Edited(u64),
}

/// A conversation block with its source rev and how decisions marked it.
#[derive(Debug, Clone, PartialEq)]
pub struct ProjBlock {
    pub block: Block,
    /// The rev of the record that created the block (for an attachment, its `user` record).
    pub src_rev: u64,
    pub mark: Mark,
}

/// The ordered blocks a provider receives: the system block, summaries, the conversation.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Projection {
    pub system: Option<Block>,
    /// Summary blocks (always [`Block::Summary`]), oldest first.
    pub summaries: Vec<Block>,
    pub conv: Vec<ProjBlock>,
}

impl Projection {
    /// Every block in canonical order.
    pub fn blocks(&self) -> impl Iterator<Item = &Block> + '_ {
        self.system.iter().chain(self.summaries.iter()).chain(self.conv.iter().map(|b| &b.block))
    }

    /// The canonical JSON bytes of the whole request (spec §4).
    pub fn canonical(&self) -> Vec<u8> {
        canonical_of(self.blocks())
    }

    /// SHA-256 of the canonical bytes, lowercase hex.
    pub fn sha256(&self) -> String {
        sha256_hex(&self.canonical())
    }

    /// Number of blocks, system and summaries included.
    pub fn len(&self) -> usize {
        usize::from(self.system.is_some()) + self.summaries.len() + self.conv.len()
    }

    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    /// Characters of every block (see [`Block::chars`]).
    pub fn chars(&self) -> usize {
        self.blocks().map(Block::chars).sum()
    }

    /// Position of the conversation block with this id.
    pub fn position(&self, id: &str) -> Option<usize> {
        self.conv.iter().position(|b| b.block.id() == Some(id))
    }
}
