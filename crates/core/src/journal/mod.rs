//! The journal: bytes on disk to typed records.
//!
//! [`mmap`] opens the file read-only (the one module with `unsafe`), [`index`] finds line
//! boundaries with memchr, [`record`] defines the typed records of spec §2, [`reader`] parses lines
//! in parallel into a [`Journal`], and [`session`] resolves what the user named into a session
//! directory and confines every path inside it.

pub mod cache_dir;
pub mod error;
pub mod index;
pub mod input;
mod json;
mod line;
pub mod mmap;
mod numbers;
pub mod reader;
pub mod record;
mod scan;
pub mod session;
pub mod sqlite;
pub mod typed;

pub use error::{JournalError, JournalErrorKind, Warning};
pub use reader::{parse_bytes, Journal, ReadOptions};
pub use record::*;
pub use session::{Session, SessionError};
