//! `ctxj` — the command line's library half: the renderers that shape the typed results of
//! [`ctxj_core`] into tables, text, JSON, CSV, OTLP and the self-contained HTML page.
//!
//! Every rule of the spec lives in `ctxj-core` (`crates/core`); this crate only shapes and prints.
//! The crate boundary holds the layering: `ctxj-core` cannot name anything here.

#![forbid(unsafe_code)]

pub mod render;
