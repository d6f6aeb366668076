//! The projection: parse, then replay every record and every turn's request, build canonical
//! bytes and the rendered text view. Nothing may panic, and the canonical bytes must be JSON.
#![no_main]

use std::path::Path;

use ctxj_core::journal::{parse_bytes, ReadOptions};
use ctxj_core::projection::{for_each_request, state_at_rev, Replayer};
use ctxj::render::projection::{write_projection, Plain};
use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    let Ok(j) = parse_bytes(Path::new("fuzz.jsonl"), data, ReadOptions::default()) else { return };
    let mut r = Replayer::new(&j);
    while r.step().is_some() {
        let _ = r.projection().chars();
    }
    for_each_request(&j, |_, _, p| {
        let bytes = p.canonical();
        serde_json::from_slice::<serde_json::Value>(&bytes).expect("canonical bytes are JSON");
        let _ = p.sha256();
    });
    let end = state_at_rev(&j, u64::MAX);
    let mut s = String::new();
    write_projection(&mut s, &end, &Plain, None);
    assert!(!s.chars().any(|c| c.is_control() && c != '\n' && c != '\t'), "raw control in the view");
    if let Some(last) = j.records.last() {
        let _ = state_at_rev(&j, last.rev / 2);
    }
});
