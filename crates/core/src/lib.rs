//! ctxj — audit what LLM coding agents send to their models.
//!
//! The crate is a library with a thin binary on top. Data flows one way:
//!
//! ```text
//! bytes ──► records ──► projection (per strategy, per turn) ──► tokens / cache / findings ──► rendering
//! journal   journal     projection, strategy                    tokens, cache, check            render (+ cli)
//! ```
//!
//! * [`journal`] maps a session's `journal.jsonl`, indexes its lines and parses typed
//!   [`journal::Record`]s (spec `journal-v1.md` §1–§2);
//! * [`projection`] turns records into the [`projection::Projection`] the provider received at any
//!   revision or turn, and writes its canonical JSON bytes (§3–§5);
//! * [`projection::diff`] is the one engine that relates a request to another (block identity,
//!   matching, the first block where the prefix breaks and why);
//! * [`report`] gathers the HTML report's data and the rows of `turns`;
//! * the `ctxj` crate on top (its `render` module and the binary's `cli`) shapes these typed results
//!   into tables, text, JSON and the self-contained HTML page; this crate cannot name it.
//!
//! Nothing on the left of the flow knows what is on its right: the reader knows no projection, the
//! projection knows no tokens, and no core module prints.

#![forbid(unsafe_code)]

pub mod cache;
pub mod check;
pub mod experiment;
pub mod export;
pub mod import;
pub mod journal;
pub mod live;
pub mod process;
pub mod projection;
pub mod report;
pub mod strategy;
#[cfg(feature = "synth")]
pub mod synth;
pub mod text;
pub mod tokens;
pub mod tune;
pub mod usage;
