//! JSON Schemas of every `--format json` document, generated from the Rust types that
//! serialize it (so the document and the code cannot drift). The committed copies live in
//! `docs/schema/ctxj.<name>-1.json`; a test holds them equal to these and validates each
//! command's real output against them (`CTXJ_BLESS_SCHEMA=1` rewrites them).

use schemars::generate::SchemaSettings;
use schemars::{JsonSchema, Schema};

/// The schema of `T` as serialized (a field left out when empty is not required), draft 2020-12.
fn schema_for<T: JsonSchema>() -> Schema {
    SchemaSettings::draft2020_12().for_serialize().into_generator().into_root_schema_for::<T>()
}

/// Every document: its name (the `schema` key is `ctxj.<name>/1`) and its JSON Schema.
pub fn all() -> Vec<(&'static str, Schema)> {
    vec![
        ("audit", schema_for::<super::check::AuditDoc>()),
        ("budget", schema_for::<super::tokens::BudgetDoc>()),
        ("cache", schema_for::<super::cache::CacheDoc>()),
        ("diff", schema_for::<super::diff::DiffDoc>()),
        // `export` prints rows only (NDJSON/CSV), each carrying the schema key: its schema is a row's.
        ("experiment", schema_for::<ctxj_core::experiment::Experiment>()),
        ("export", schema_for::<ctxj_core::export::row::ExportRow>()),
        ("import", schema_for::<super::import::ImportDoc>()),
        ("log", schema_for::<super::log::LogDoc>()),
        ("sessions", schema_for::<super::sessions::SessionsDoc>()),
        ("tokens", schema_for::<super::tokens::TokensDoc>()),
        ("tokens.per-turn", schema_for::<super::tokens::PerTurnDoc>()),
        ("tune", schema_for::<super::tune::TuneDoc>()),
        ("turns", schema_for::<super::turns::TurnsDoc>()),
        ("usage", schema_for::<ctxj_core::usage::UsageReport>()),
        ("validate", schema_for::<super::check::ValidateDoc>()),
        ("statusline", schema_for::<super::live::StatusDoc>()),
        ("watch", schema_for::<super::live_watch::WatchDoc>()),
    ]
}

/// The file name of `name`'s schema under `docs/schema/`.
pub fn file_name(name: &str) -> String {
    format!("ctxj.{name}-1.json")
}

/// The schema as committed: pretty JSON and a newline.
pub fn text(schema: &Schema) -> String {
    let mut s = serde_json::to_string_pretty(schema).unwrap_or_default();
    s.push('\n');
    s
}

#[cfg(test)]
mod tests {
    #[test]
    fn every_document_names_its_schema() {
        for (name, schema) in super::all() {
            let v = schema.as_value();
            assert_eq!(v["properties"]["schema"]["type"], "string", "{name}");
            assert!(v["required"].as_array().is_some_and(|r| r.iter().any(|k| k == "schema")), "{name}");
        }
    }
}
