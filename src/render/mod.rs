//! Rendering helpers shared by every command: terminal-safe text and colour.

pub mod projection;
pub mod text;
