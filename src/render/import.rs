//! The document of `ctxj import --format json` (`ctxj.import/1`).

use ctxj_core::import::write::Written;
use ctxj_core::import::ImportReport;

/// What was read and what was written.
#[derive(Debug, Clone, serde::Serialize, schemars::JsonSchema)]
pub struct ImportDoc {
    /// `ctxj.import/1`.
    pub schema: &'static str,
    /// The format read (`claude-code`, `codex`, `pi` or `ctxj`).
    pub format: String,
    pub written: Written,
    /// `null` for a ctxj journal copied as is.
    pub report: Option<ImportReport>,
}
