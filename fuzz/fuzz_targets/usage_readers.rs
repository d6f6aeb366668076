//! The `ctxj usage` readers (Claude Code, Codex, pi): arbitrary bytes as one transcript of the
//! agent the first byte picks, through `read_bytes`, then grouped every way the command groups
//! (overflow checks on: the token sums must saturate, issue 21). The fast reads (a byte search
//! for the lines that can carry usage, typed reads of a few fields) must give what parsing every
//! line in full gives (issue 20) — whenever the bytes hold no `\`, since a key written with
//! escapes (`"us\u0061ge"`) is what the byte search is documented to miss.
#![no_main]

use std::path::Path;

use ctxj_core::usage::{claude, codex, pi, By, Options, Parse};
use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    let Some((&pick, bytes)) = data.split_first() else { return };
    let read_with = |parse| match pick % 3 {
        0 => claude::read_bytes_with(Path::new("projects/p/s.jsonl"), bytes, parse),
        1 => codex::read_bytes_with(0, Path::new("sessions/2026/01/01/rollout-x.jsonl"), bytes, parse),
        _ => pi::read_bytes_with(0, Path::new("sessions/p/1_x.jsonl"), bytes, parse),
    };
    let read = read_with(Parse::Fast);
    if !bytes.contains(&b'\\') {
        assert_eq!(format!("{read:?}"), format!("{:?}", read_with(Parse::Full)), "fast and full reads differ");
    }
    for by in [By::Session, By::Day, By::Week, By::Month, By::Model] {
        let opts = Options { by, tz: "UTC".parse().expect("UTC"), window: Default::default(), breakdown: true };
        let r = ctxj_core::usage::report::group(&read, vec![Path::new("t.jsonl").to_path_buf()], &opts);
        assert!(r.totals.total_tokens >= r.totals.tokens.output);
        let _ = serde_json::to_string(&r).expect("the report serialises");
    }
});
