//! pi coding-agent sessions → journal-v1 records.

use std::path::Path;

use super::{Format, ImportError, ImportReport, Imported};

pub fn read(path: &Path, _bytes: &[u8]) -> Result<Imported, ImportError> {
    let _ = ImportReport::new(Format::Pi, path);
    Err(ImportError::Unknown { path: path.display().to_string() })
}
