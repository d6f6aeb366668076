//! The writers of `ctxj export`, one per format behind [`Exporter`]: NDJSON and CSV rows
//! (through the one row writer, [`super::rows`]) and OTLP JSON traces ([`super::otlp`]).

use std::io::Write;

use super::rows::{write_rows, OutputFormat, RowsError};
use ctxj_core::export::SessionRows;

/// `ctxj export --format`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ExportFormat {
    Ndjson,
    Csv,
    OtlpJson,
}

/// Writes sessions one at a time, in the order they come.
pub trait Exporter {
    fn session(&mut self, out: &mut dyn Write, s: &SessionRows) -> Result<(), RowsError>;

    /// Writes what was held back until every session had come.
    fn finish(&mut self, _out: &mut dyn Write) -> Result<(), RowsError> {
        Ok(())
    }
}

/// The writer of `format`.
pub fn exporter(format: ExportFormat) -> Box<dyn Exporter> {
    match format {
        ExportFormat::Ndjson => Box::new(Ndjson),
        ExportFormat::Csv => Box::new(Csv { header: false }),
        ExportFormat::OtlpJson => Box::new(super::otlp::Otlp::default()),
    }
}

/// One compact JSON row a line.
pub struct Ndjson;

impl Exporter for Ndjson {
    fn session(&mut self, out: &mut dyn Write, s: &SessionRows) -> Result<(), RowsError> {
        write_rows(out, OutputFormat::Ndjson, &(), &s.rows)
    }
}

/// CSV with one header line: every row has the same fields, so each session's header after the
/// first is dropped.
pub struct Csv {
    header: bool,
}

impl Exporter for Csv {
    fn session(&mut self, out: &mut dyn Write, s: &SessionRows) -> Result<(), RowsError> {
        if s.rows.is_empty() {
            return Ok(());
        }
        let mut buf = Vec::new();
        write_rows(&mut buf, OutputFormat::Csv, &(), &s.rows)?;
        // The header names are plain field names: its line ends at the first newline.
        let start = if self.header { buf.iter().position(|&b| b == b'\n').map_or(buf.len(), |i| i + 1) } else { 0 };
        self.header = true;
        out.write_all(&buf[start..])?;
        Ok(())
    }
}
