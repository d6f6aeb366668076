//! Rendering helpers shared by every command: number formatting and the projection view.
//! Terminal-safe escaping lives below every layer, in [`crate::text`].

pub mod format;
pub mod projection;
pub mod sessions;
pub mod style;
pub mod usage;
