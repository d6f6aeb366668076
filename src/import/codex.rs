//! OpenAI Codex rollouts (`sessions/YYYY/MM/DD/rollout-*.jsonl`) → journal-v1 records.

use std::path::Path;

use super::{Format, ImportError, ImportReport, Imported};

pub fn read(path: &Path, _bytes: &[u8]) -> Result<Imported, ImportError> {
    let _ = ImportReport::new(Format::Codex, path);
    Err(ImportError::Unknown { path: path.display().to_string() })
}
