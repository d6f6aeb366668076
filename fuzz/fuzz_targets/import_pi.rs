//! The pi import reader: arbitrary bytes as a transcript. The reader may refuse the input
//! (an error naming a position), never panic; what it imports must replay like a journal, with
//! canonical bytes that are JSON. Format detection runs on the same bytes.
#![no_main]

use std::path::Path;

use ctxj_core::import::{detect_bytes, import_bytes, Format};
use ctxj_core::projection::{for_each_request, state_at_rev};
use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    let _ = detect_bytes(data, "fuzz.jsonl");
    let Ok(imported) = import_bytes(Path::new("fuzz.jsonl"), data, Format::Pi, None) else { return };
    let _ = imported.report.summary();
    let j = &imported.journal;
    for_each_request(j, |_, _, p| {
        serde_json::from_slice::<serde_json::Value>(&p.canonical()).expect("canonical bytes are JSON");
    });
    let _ = state_at_rev(j, u64::MAX).sha256();
});
