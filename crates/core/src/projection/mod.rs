//! The projection: what the provider received, rebuilt from records (spec §2–§5).
//!
//! [`block`] defines [`Block`] and its canonical JSON, [`markers`] the elision and clear marker
//! strings, [`clear`] the `ctx clear` selection rule, [`diff`] how one request relates to another, [`hash`] incremental request hashing, [`mirror`] parses mirror drafts and checks
//! them against rules R1–R6, and [`recorded`] applies the journal's own decisions
//! record by record to give the projection at any revision or turn.

pub mod at;
pub mod block;
pub mod clear;
pub mod diff;
pub mod hash;
pub mod markers;
pub mod mirror;
pub mod recorded;

pub use at::{projection_at, At, AtError};
pub use block::{Block, BlockCall, Mark, ProjBlock, Projection};
pub use hash::RequestHasher;
pub use recorded::{for_each_request, request_at_turn, state_at_rev, Replayer};
