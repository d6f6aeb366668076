//! The `ctxj usage` readers (Claude Code, Codex, pi): arbitrary bytes as one transcript of the
//! agent the first byte picks, through `read_bytes`, then grouped every way the command groups
//! (overflow checks on: the token sums must saturate, issue 21).
#![no_main]

use std::path::Path;

use ctxj::usage::{claude, codex, pi, By, Options};
use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    let Some((&pick, bytes)) = data.split_first() else { return };
    let read = match pick % 3 {
        0 => claude::read_bytes(Path::new("projects/p/s.jsonl"), bytes),
        1 => codex::read_bytes(0, Path::new("sessions/2026/01/01/rollout-x.jsonl"), bytes),
        _ => pi::read_bytes(0, Path::new("sessions/p/1_x.jsonl"), bytes),
    };
    for by in [By::Session, By::Day, By::Week, By::Month, By::Model] {
        let opts = Options { by, tz: "UTC".parse().expect("UTC"), window: Default::default(), breakdown: true };
        let r = ctxj::usage::report::group(&read, vec![Path::new("t.jsonl").to_path_buf()], &opts);
        assert!(r.totals.total_tokens >= r.totals.tokens.output);
        let _ = serde_json::to_string(&r).expect("the report serialises");
    }
});
