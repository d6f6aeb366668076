//! The `--prices` parser (LiteLLM's JSON): arbitrary bytes through `PriceTable::from_litellm`,
//! then a look-up and a cost. No panic, no error message with a raw control character.
#![no_main]

use ctxj_core::cache::prices::PriceTable;
use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    match PriceTable::from_litellm("fuzz.json", data) {
        Ok(t) => {
            assert!(!t.is_empty());
            for slug in ["claude-opus-4-6", "gpt-5", "gemini/gemini-2.5-flash"] {
                if let Some((_, p)) = t.lookup(slug) {
                    let _ = p.cost(u64::MAX, u64::MAX, u64::MAX, u64::MAX);
                }
            }
        }
        Err(e) => {
            let _ = e.to_string();
        }
    }
});
