//! Accounting over transcripts, not importing them: token and cost totals of Claude Code logs
//! with ccusage's rules ([`claude`], for `ctxj usage`) and one summary per session found under a
//! folder ([`sessions`], for `ctxj sessions`). Both sit on top of [`crate::import`], which turns
//! one transcript into records; prices come from [`crate::cache::prices`].

pub mod claude;
pub mod sessions;

pub use claude::{claude_files, usage, By, UsageReport};
pub use sessions::{summarize_folder, summarize_journal, SessionSummary};
