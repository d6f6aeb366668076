//! The one writer of machine-readable rows for every command that prints rows: `json` (the
//! whole document, pretty), `ndjson` (one compact JSON row a line) and `csv` (one line a row,
//! nested objects flattened to `a.b` columns, lists of plain values joined with `;`, lists of
//! objects left out; text cells that a spreadsheet would run as a formula get a leading `'` (a plain `-name` does not);
//! control and bidi characters of text cells are escaped for the terminal by
//! `ctxj_core::text::escape_line`, as in every other output — `\e`, `\x07`, `\r`, `\u{202e}`;
//! no rows print nothing).

use std::io::Write;

use serde::Serialize;
use serde_json::{Map, Value};

/// `--format`.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub enum OutputFormat {
    #[default]
    Table,
    Json,
    Ndjson,
    Csv,
}

/// A row writing error.
#[derive(Debug, thiserror::Error)]
pub enum RowsError {
    #[error(transparent)]
    Io(#[from] std::io::Error),
    #[error(transparent)]
    Json(#[from] serde_json::Error),
    #[error(transparent)]
    Csv(#[from] csv::Error),
}

/// Writes `doc` (json) or its `rows` (ndjson, csv); `Table` writes nothing.
pub fn write_rows<D: Serialize, R: Serialize>(
    out: &mut dyn Write,
    format: OutputFormat,
    doc: &D,
    rows: &[R],
) -> Result<(), RowsError> {
    match format {
        OutputFormat::Table => {}
        OutputFormat::Json => {
            serde_json::to_writer_pretty(&mut *out, doc)?;
            writeln!(out)?;
        }
        OutputFormat::Ndjson => {
            for r in rows {
                serde_json::to_writer(&mut *out, r)?;
                writeln!(out)?;
            }
        }
        OutputFormat::Csv => write_csv(out, rows)?,
    }
    Ok(())
}

/// The whole output of a command that prints rows: `table()` for `Table`, else [`write_rows`].
pub fn write_output<D: Serialize, R: Serialize>(
    out: &mut dyn Write,
    format: OutputFormat,
    doc: &D,
    rows: &[R],
    table: impl FnOnce() -> String,
) -> Result<(), RowsError> {
    write_output_streamed(out, format, doc, rows, |o| o.write_all(table().as_bytes()))
}

/// [`write_output`] with a table that writes itself (streamed, not built as one string first).
pub fn write_output_streamed<D: Serialize, R: Serialize>(
    out: &mut dyn Write,
    format: OutputFormat,
    doc: &D,
    rows: &[R],
    table: impl FnOnce(&mut dyn Write) -> std::io::Result<()>,
) -> Result<(), RowsError> {
    match format {
        OutputFormat::Table => Ok(table(out)?),
        f => write_rows(out, f, doc, rows),
    }
}

fn flatten(prefix: &str, v: &Value, out: &mut Vec<(String, String)>) {
    let name = |k: &str| if prefix.is_empty() { k.to_string() } else { format!("{prefix}.{k}") };
    match v {
        Value::Object(o) => o.iter().for_each(|(k, v)| flatten(&name(k), v, out)),
        Value::Array(a) if a.iter().any(|x| x.is_object() || x.is_array()) => {}
        Value::Array(a) => out.push((prefix.to_string(), a.iter().map(scalar).collect::<Vec<_>>().join(";"))),
        v => out.push((prefix.to_string(), scalar(v))),
    }
}

fn scalar(v: &Value) -> String {
    match v {
        Value::Null => String::new(),
        // A CSV on a terminal is text on a terminal: ESC, BEL, CR and bidi overrides from model
        // names or labels are escaped like everywhere else (issue 31: an OSC 52 clipboard write).
        Value::String(s) => defuse(&ctxj_core::text::escape_line(s)),
        v => v.to_string(),
    }
}

/// A text cell starting with `=`, `@`, tab or CR gets a leading `'` so a spreadsheet shows it
/// instead of running it; so does one starting with `+` or `-` unless the rest is a plain name
/// ([`plain_name`]): Claude Code's and pi's project folders (`-home-user-demo`) keep the key they
/// have in JSON, NDJSON and Parquet, since a name of letters, digits and `._/~:-` calls no
/// function, reaches no other program and reads no other sheet.
pub fn defuse(s: &str) -> String {
    match s.chars().next() {
        Some('+' | '-') if plain_name(&s[1..]) => s.to_string(),
        Some('=' | '+' | '-' | '@' | '\t' | '\r') => format!("'{s}"),
        _ => s.to_string(),
    }
}

/// Letters, digits and `._/~:-` only: what project folders and session names are made of, and
/// nothing a formula needs to do harm (no call parentheses, `|` of DDE, `!` of a sheet
/// reference, quotes, spaces or operators besides the sign).
fn plain_name(rest: &str) -> bool {
    rest.chars().all(|c| c.is_alphanumeric() || matches!(c, '.' | '_' | '/' | '~' | ':' | '-'))
}

fn write_csv<R: Serialize>(out: &mut dyn Write, rows: &[R]) -> Result<(), RowsError> {
    // No rows, no columns to name: nothing at all rather than an empty header line.
    if rows.is_empty() {
        return Ok(());
    }
    let mut flat: Vec<Vec<(String, String)>> = Vec::with_capacity(rows.len());
    let mut header: Vec<String> = Vec::new();
    for r in rows {
        let mut cells = Vec::new();
        flatten("", &serde_json::to_value(r)?, &mut cells);
        for (k, _) in &cells {
            if !header.contains(k) {
                header.push(k.clone());
            }
        }
        flat.push(cells);
    }
    let mut w = csv::Writer::from_writer(out);
    w.write_record(&header)?;
    for cells in flat {
        let m: Map<String, Value> = cells.into_iter().map(|(k, v)| (k, Value::String(v))).collect();
        w.write_record(header.iter().map(|h| m.get(h).and_then(Value::as_str).unwrap_or("")))?;
    }
    w.flush()?;
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn csv_flattens_and_defuses_formulas() {
        let rows = vec![
            serde_json::json!({"key": "=cmd()", "t": {"input": 1}, "models": ["a", "b"], "sub": [{"x": 1}]}),
            serde_json::json!({"key": "b", "t": {"input": 2}, "extra": null}),
        ];
        let mut buf = Vec::new();
        write_rows(&mut buf, OutputFormat::Csv, &(), &rows).unwrap();
        let s = String::from_utf8(buf).unwrap();
        assert_eq!(s, "key,t.input,models,extra\n'=cmd(),1,a;b,\nb,2,,\n");
        let mut buf = Vec::new();
        write_rows(&mut buf, OutputFormat::Ndjson, &(), &rows).unwrap();
        assert_eq!(String::from_utf8(buf).unwrap().lines().count(), 2);
    }

    /// Issue 32: CSV prefixed `'` to every project name starting with `-` (every Claude Code and
    /// pi project), so CSV and NDJSON/Parquet disagreed on project keys.
    #[test]
    fn regression_csv_keeps_project_keys_equal_across_formats() {
        assert_eq!(defuse("-home-user-demo"), "-home-user-demo");
        assert_eq!(defuse("--Users-x-dev--/crud"), "--Users-x-dev--/crud");
        // Still defused: calls, DDE, sheet references, spaces, other leading characters.
        for bad in ["-2+3+cmd|' /C calc'!A0", "+SUM(A1:A9)", "-A1*2", "- 1", "=1", "@SUM(1)", "\tx"] {
            assert!(defuse(bad).starts_with('\''), "{bad}");
        }
    }

    /// Issue 31: CSV wrote raw ESC/BEL/CR/RLO from model names and labels to the terminal (an
    /// OSC 52 clipboard write went through).
    #[test]
    fn regression_csv_escapes_terminal_control_characters() {
        let rows = vec![serde_json::json!({"model": "\u{1b}]52;c;aGk=\u{7}x\r\u{202e}y", "label": "\u{1b}[31mred"})];
        let mut buf = Vec::new();
        write_rows(&mut buf, OutputFormat::Csv, &(), &rows).unwrap();
        let s = String::from_utf8(buf).unwrap();
        assert!(!s.chars().any(|c| c.is_control() && c != '\n' || c == '\u{202e}'), "{s:?}");
        assert_eq!(s, "model,label\n\\e]52;c;aGk=\\x07x\\r\\u{202e}y,\\e[31mred\n");
    }
}
