//! Rendering: number formatting, styles and tables, the projection view, and each command's
//! results shaped into tables, text and JSON (the library's typed results in, strings out).
//! Terminal-safe escaping lives below every layer, in [`ctxj_core::text`].

pub mod cache;
pub mod cache_billed;
pub mod cache_limits;
pub mod cache_wire;
pub mod cache_words;
pub mod check;
pub mod diff;
pub mod experiment;
pub mod experiment_html;
pub mod export;
pub mod fit;
pub mod format;
pub mod html;
pub mod import;
pub mod live;
pub mod live_watch;
pub mod log;
pub mod otlp;
pub mod projection;
pub mod rows;
pub mod schema;
pub mod sessions;
pub mod show;
pub mod style;
pub mod tokens;
pub mod tune;
pub mod turns;
pub mod usage;
