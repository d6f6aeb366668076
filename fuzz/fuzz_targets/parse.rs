//! The record parser: arbitrary bytes through `parse_bytes`, lenient and strict. Every error must
//! carry a position inside the input.
#![no_main]

use std::path::Path;

use ctxj_core::journal::{parse_bytes, ReadOptions};
use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    for strict in [false, true] {
        match parse_bytes(Path::new("fuzz.jsonl"), data, ReadOptions { strict }) {
            Ok(j) => {
                for r in &j.records {
                    assert!((r.offset as usize) < data.len());
                }
                let _ = j.warnings.iter().map(|w| w.to_string()).count();
            }
            Err(e) => {
                assert!(e.offset as usize <= data.len());
                let msg = e.to_string();
                // The message is terminal-safe: no raw control character but the excerpt's newline.
                assert!(!msg.chars().any(|c| c.is_control() && c != '\n'), "raw control in {msg:?}");
            }
        }
    }
});
