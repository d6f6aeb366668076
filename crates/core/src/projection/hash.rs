//! Incremental `prompt_sha256` (spec §4) over successive requests that share a prefix.
//!
//! The canonical bytes of a request are `[` + its blocks' canonical JSON joined by `,` + `]`.
//! Requests of an append-mostly journal extend each other, so [`RequestHasher`] keeps the SHA-256
//! state after every block of the previous request: a request whose first `k` blocks equal the
//! previous request's first `k` resumes from the saved state after block `k` and hashes only its
//! new blocks. Over a whole journal the bytes hashed are the bytes that changed, not
//! turns × history.
//!
//! Block equality is [`Block`]'s `PartialEq`, which compares `Arc` texts and args by pointer first
//! (std specialises `Arc<T: Eq>`), so an unchanged block shared with the replayer costs a pointer
//! comparison; a block rebuilt with equal content compares by content and is still reused.

use std::sync::OnceLock;

use sha2::{Digest, Sha256};
use xxhash_rust::xxh3::{xxh3_128_with_seed, Xxh3};

use super::block::{canonical_value, Block, Projection};

/// A random seed drawn once per process for in-process content keys ([`content_key`],
/// [`block_key`]): a journal's author cannot know it, so cannot craft texts whose keys collide.
pub fn process_seed() -> u64 {
    static SEED: OnceLock<u64> = OnceLock::new();
    *SEED.get_or_init(|| {
        use std::hash::BuildHasher;
        // std's RandomState is seeded from the OS's random source once per process.
        std::collections::hash_map::RandomState::new().hash_one(0x6374_786a_u64)
    })
}

/// A 128-bit key for memo maps: XXH3-128 of `bytes` under `seed`. Not cryptographic; see
/// `docs/performance.md` ("Keys") for why collisions are not a security matter here. The token
/// memo keys texts with it, the cache simulation prefixes of block keys.
pub fn content_key(seed: u64, bytes: &[u8]) -> u128 {
    xxh3_128_with_seed(bytes, seed)
}

/// The key of a block's content under `seed`: two blocks get the same key exactly when their
/// canonical JSON ([`Block::write_canonical`]) is the same (up to XXH3-128 collisions), without
/// writing that JSON. It hashes what the canonical form is made of, each field length-prefixed
/// (so the encoding is injective): the type, the strings as they are (JSON escaping is
/// injective, so equal strings are equal escaped strings), whether `tools` / `calls` are
/// present, and each `args` / `tools` value's canonical JSON (small, and the one place values
/// are written).
pub fn block_key(seed: u64, b: &Block) -> u128 {
    let mut h = Xxh3::with_seed(seed);
    let mut field = |s: &[u8]| {
        h.update(&(s.len() as u64).to_le_bytes());
        h.update(s);
    };
    field(b.type_name().as_bytes());
    match b {
        Block::System { text, tools } => {
            field(text.as_bytes());
            match tools {
                Some(t) => field(canonical_value(t).as_bytes()),
                None => field(b"\xff absent"),
            }
        }
        Block::Summary { text } => field(text.as_bytes()),
        Block::User { id, text } | Block::Notice { id, text } => {
            field(id.as_bytes());
            field(text.as_bytes());
        }
        Block::Attachment { id, user, text } => {
            field(id.as_bytes());
            field(user.as_bytes());
            field(text.as_bytes());
        }
        Block::Assistant { id, text, calls } => {
            field(id.as_bytes());
            field(text.as_bytes());
            field(&(calls.len() as u64).to_le_bytes());
            for c in calls {
                field(c.id.as_bytes());
                field(c.tool.as_bytes());
                field(canonical_value(&c.args).as_bytes());
            }
        }
        Block::Result { call, tool, text } => {
            field(call.as_bytes());
            field(tool.as_bytes());
            field(text.as_bytes());
        }
    }
    h.digest128()
}

/// Hashes successive requests, reusing the longest shared block prefix.
#[derive(Clone)]
pub struct RequestHasher {
    /// Blocks of the previous request.
    prev: Vec<Block>,
    /// `states[i]`: SHA-256 state after `[` and the first `i` blocks (with their separators).
    states: Vec<Sha256>,
    /// `ends[i]`: canonical byte length after the first `i` blocks (without the closing `]`).
    ends: Vec<u64>,
    buf: Vec<u8>,
    last: HashStats,
}

/// What the last call to [`RequestHasher::hash`] did.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct HashStats {
    /// Leading blocks shared with the previous request (not hashed again).
    pub shared_blocks: usize,
    /// Canonical bytes of those shared blocks, `[` and separators included.
    pub shared_bytes: u64,
    /// Canonical bytes of the whole request, `[` and `]` included.
    pub total_bytes: u64,
    /// Blocks in the request.
    pub blocks: usize,
}

impl Default for RequestHasher {
    fn default() -> Self {
        Self::new()
    }
}

impl RequestHasher {
    pub fn new() -> Self {
        let mut s = Sha256::new();
        s.update(b"[");
        RequestHasher { prev: Vec::new(), states: vec![s], ends: vec![1], buf: Vec::new(), last: HashStats::default() }
    }

    /// SHA-256 of the canonical bytes of `blocks` (the request, in canonical order).
    pub fn hash<'a>(&mut self, blocks: impl IntoIterator<Item = &'a Block>) -> [u8; 32] {
        let mut it = blocks.into_iter();
        let mut shared = 0;
        let mut first_new = None;
        for b in it.by_ref() {
            if shared < self.prev.len() && self.prev[shared] == *b {
                shared += 1;
            } else {
                first_new = Some(b);
                break;
            }
        }
        self.prev.truncate(shared);
        self.states.truncate(shared + 1);
        self.ends.truncate(shared + 1);
        let mut state = self.states[shared].clone();
        let mut end = self.ends[shared];
        for b in first_new.into_iter().chain(it) {
            self.buf.clear();
            if !self.prev.is_empty() {
                self.buf.push(b',');
            }
            b.write_canonical(&mut self.buf);
            state.update(&self.buf);
            end += self.buf.len() as u64;
            self.prev.push(b.clone());
            self.states.push(state.clone());
            self.ends.push(end);
        }
        state.update(b"]");
        self.last = HashStats {
            shared_blocks: shared,
            shared_bytes: self.ends[shared],
            total_bytes: end + 1,
            blocks: self.prev.len(),
        };
        state.finalize().into()
    }

    /// [`hash`](Self::hash) as lowercase hex, the form of `prompt_sha256`.
    pub fn hash_hex<'a>(&mut self, blocks: impl IntoIterator<Item = &'a Block>) -> String {
        hex::encode(self.hash(blocks))
    }

    /// The `prompt_sha256` of a whole request: the hasher every writer and checker uses.
    pub fn sha256(&mut self, p: &Projection) -> String {
        self.hash_hex(p.blocks())
    }

    /// What the last call reused and hashed.
    pub fn last(&self) -> HashStats {
        self.last
    }
}

#[cfg(test)]
mod tests {
    use std::sync::Arc;

    use super::*;
    use crate::projection::block::{canonical_of, sha256_hex};

    fn user(id: &str, text: &str) -> Block {
        Block::User { id: id.into(), text: Arc::from(text) }
    }

    #[test]
    fn matches_full_hash_through_append_edit_and_shrink() {
        let mut h = RequestHasher::new();
        let mut blocks: Vec<Block> = Vec::new();
        let check = |h: &mut RequestHasher, b: &[Block]| {
            assert_eq!(h.hash_hex(b), sha256_hex(&canonical_of(b)));
            assert_eq!(h.last().total_bytes, canonical_of(b).len() as u64);
        };
        check(&mut h, &blocks);
        for i in 0..6 {
            blocks.push(user(&format!("u{i}"), &"x".repeat(i * 7)));
            check(&mut h, &blocks);
            assert_eq!(h.last().shared_blocks, i);
        }
        blocks[2].set_text(Arc::from("edited"));
        check(&mut h, &blocks);
        assert_eq!(h.last().shared_blocks, 2);
        blocks.truncate(3);
        check(&mut h, &blocks);
        assert_eq!(h.last().shared_blocks, 3);
        blocks.remove(0);
        check(&mut h, &blocks);
        assert_eq!(h.last().shared_blocks, 0);
        check(&mut h, &[]);
    }

    #[test]
    fn equal_content_in_a_new_allocation_is_reused() {
        let mut h = RequestHasher::new();
        let a = vec![user("u1", "hello"), user("u2", "world")];
        h.hash(&a);
        let b = vec![user("u1", "hello"), user("u2", "world"), user("u3", "!")];
        assert_eq!(h.hash_hex(&b), sha256_hex(&canonical_of(&b)));
        assert_eq!(h.last().shared_blocks, 2);
        assert_eq!(h.last().shared_bytes, canonical_of(&a).len() as u64 - 1);
    }

    /// The hasher gives the projection's own hash at every turn of a journal with decisions
    /// (elide, clear, compact, mirror), where earlier blocks change between requests.
    #[test]
    fn every_turn_of_a_journal_with_decisions() {
        use crate::journal::{parse_bytes, Body, ReadOptions};
        use crate::projection::Replayer;
        let j = std::fs::read(concat!(env!("CARGO_MANIFEST_DIR"), "/../../tests/data/valid/check-base/journal.jsonl"))
            .unwrap();
        let journal = parse_bytes(std::path::Path::new("j"), &j, ReadOptions::default()).unwrap();
        let mut r = Replayer::new(&journal);
        let mut h = RequestHasher::new();
        let mut turns = 0;
        for rec in &journal.records {
            if matches!(rec.body, Body::Assistant(_)) {
                assert_eq!(h.sha256(r.projection()), r.projection().sha256(), "rev {}", rec.rev);
                turns += 1;
            }
            r.step();
        }
        assert_eq!(turns, 9);
        let empty = Projection::default();
        assert_eq!(RequestHasher::new().sha256(&empty), empty.sha256());
    }

    /// Blocks that differ in one field, or only in where a boundary between fields falls.
    fn tricky_blocks() -> Vec<Block> {
        use crate::projection::BlockCall;
        let call = |id: &str, tool: &str, args: serde_json::Value| BlockCall {
            id: id.into(),
            tool: tool.into(),
            args: Arc::new(args),
        };
        let t = |s: &str| -> crate::journal::Text { Arc::from(s) };
        vec![
            user("ab", "c"),
            user("a", "bc"),
            user("a", "b\"c"),
            user("a", "b\\\"c"),
            Block::Notice { id: "ab".into(), text: t("c") },
            Block::Summary { text: t("abc") },
            Block::System { text: t("s"), tools: None },
            Block::System { text: t("s"), tools: Some(Arc::new(serde_json::Value::Null)) },
            Block::System { text: t("s"), tools: Some(Arc::new(serde_json::json!([]))) },
            Block::Attachment { id: "a".into(), user: "u".into(), text: t("x") },
            Block::Attachment { id: "a".into(), user: "".into(), text: t("ux") },
            Block::Result { call: "c1".into(), tool: "run".into(), text: t("out") },
            Block::Result { call: "c1".into(), tool: "ru".into(), text: t("nout") },
            Block::Assistant { id: "a1".into(), text: t("x"), calls: vec![] },
            Block::Assistant { id: "a1".into(), text: t("x"), calls: vec![call("c", "t", serde_json::json!({}))] },
            Block::Assistant {
                id: "a1".into(),
                text: t("x"),
                calls: vec![call("c", "t", serde_json::json!({"a": 1}))],
            },
            Block::Assistant {
                id: "a1".into(),
                text: t("x"),
                calls: vec![call("c", "t", serde_json::json!({"a": "1"}))],
            },
            Block::Assistant {
                id: "a1".into(),
                text: t("x"),
                calls: vec![call("c", "t", serde_json::json!({})), call("d", "t", serde_json::json!({}))],
            },
            // The same content in new allocations: the same key.
            user("ab", "c"),
            Block::Assistant {
                id: "a1".into(),
                text: t("x"),
                calls: vec![call("c", "t", serde_json::json!({"a": 1}))],
            },
        ]
    }

    /// The block key partitions blocks exactly as their canonical JSON does.
    #[test]
    fn block_keys_agree_with_canonical_bytes() {
        let blocks = tricky_blocks();
        for a in &blocks {
            for b in &blocks {
                let same_bytes = a.canonical() == b.canonical();
                let same_key = block_key(7, a) == block_key(7, b);
                assert_eq!(same_key, same_bytes, "{a:?} vs {b:?}");
            }
        }
        assert_ne!(block_key(1, &blocks[0]), block_key(2, &blocks[0]), "the seed keys the hash");
        assert_ne!(content_key(1, b"x"), content_key(2, b"x"));
        assert_eq!(process_seed(), process_seed(), "one seed per process");
    }

    proptest::proptest! {
        /// Random users, notices and results: equal keys exactly when the canonical bytes are.
        #[test]
        fn block_keys_partition_like_canonical_bytes(
            specs in proptest::collection::vec((0u8..3, "[ab\"\\\\]{0,3}", "[ab\"\\\\\n]{0,4}"), 2..12)
        ) {
            let blocks: Vec<Block> = specs
                .iter()
                .map(|(k, id, text)| match k {
                    0 => user(id, text),
                    1 => Block::Notice { id: id.clone(), text: Arc::from(text.as_str()) },
                    _ => Block::Result { call: id.clone(), tool: text.clone(), text: Arc::from(id.as_str()) },
                })
                .collect();
            for a in &blocks {
                for b in &blocks {
                    proptest::prop_assert_eq!(block_key(3, a) == block_key(3, b), a.canonical() == b.canonical());
                }
            }
        }

        #[test]
        fn any_sequence_of_requests_hashes_like_from_scratch(
            ops in proptest::collection::vec((0u8..4, 0usize..8, "[a-z\"\\\\\n]{0,12}"), 1..40)
        ) {
            let mut h = RequestHasher::new();
            let mut blocks: Vec<Block> = Vec::new();
            for (op, at, text) in ops {
                match op {
                    0 | 1 => blocks.push(user(&format!("u{}", blocks.len()), &text)),
                    2 if !blocks.is_empty() => { let i = at % blocks.len(); blocks[i].set_text(Arc::from(text.as_str())); }
                    _ => { let n = blocks.len().min(at); blocks.truncate(blocks.len() - n); }
                }
                proptest::prop_assert_eq!(h.hash_hex(&blocks), sha256_hex(&canonical_of(&blocks)));
            }
        }
    }
}
