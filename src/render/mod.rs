//! Rendering helpers shared by every command: number formatting and the projection view.
//! Terminal-safe escaping lives below every layer, in [`crate::text`].

pub mod cache;
pub mod diff;
pub mod format;
pub mod html;
pub mod log;
pub mod projection;
pub mod show;
pub mod style;
pub mod turns;
