//! The harness-budget TOML parser (`budget --config`): arbitrary text through `Config::parse` and
//! `resolve`. No panic (overflow checks are on in this crate's release profile), every resolved
//! target below its budget, every error message terminal-safe.
#![no_main]

use ctxj_core::tokens::budget::{resolve, Config};
use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    let Ok(text) = std::str::from_utf8(data) else { return };
    match Config::parse("fuzz.toml", text) {
        Ok(c) => {
            for slug in ["", "anthropic/claude-opus-4-6", "gpt-5"] {
                let r = resolve(&c, slug);
                let (budget, target) = (r.get("context_budget"), r.get("context_target"));
                assert!(target < budget || budget == 0, "target {target} not below budget {budget}");
            }
        }
        Err(e) => {
            let _ = e.to_string();
        }
    }
});
