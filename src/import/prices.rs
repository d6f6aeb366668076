//! A minimal private price table for Claude models (USD per million tokens), used by
//! `ctxj usage` until the shared price table (`cache::prices`) lands in main. Source:
//! `../shared/formats/tokens-caching-pricing.md` (Anthropic list prices). One function is the
//! whole interface, so swapping the table is a one-line change.
//!
//! Not modelled: long-context (>200k) tiers and the `speed: "fast"` multiplier (ccusage applies
//! both), so costs can differ from ccusage's for such requests; token counts never do.

/// Prices of one model in USD per million tokens.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Price {
    pub input: f64,
    pub output: f64,
    /// 5-minute cache write.
    pub cache_write: f64,
    /// 1-hour cache write.
    pub cache_write_1h: f64,
    pub cache_read: f64,
}

const fn p(input: f64, output: f64, cache_write: f64, cache_read: f64) -> Price {
    Price { input, output, cache_write, cache_write_1h: input * 2.0, cache_read }
}

/// The price of a Claude model by name (`claude-opus-4-6`, `claude-sonnet-4-5-20250929`, …);
/// `None` for models the table does not know.
pub fn price(model: &str) -> Option<Price> {
    let m = model.to_ascii_lowercase();
    let has = |s: &str| m.contains(s);
    Some(if has("opus-4-5") || has("opus-4-6") || has("opus-4-7") || has("opus-4-8") || has("opus-5") {
        p(5.0, 25.0, 6.25, 0.5)
    } else if has("opus") {
        p(15.0, 75.0, 18.75, 1.5)
    } else if has("sonnet") {
        p(3.0, 15.0, 3.75, 0.3)
    } else if has("haiku-4") {
        p(1.0, 5.0, 1.25, 0.1)
    } else if has("3-5-haiku") || has("haiku-3-5") {
        p(0.8, 4.0, 1.0, 0.08)
    } else if has("haiku") {
        p(0.25, 1.25, 0.3, 0.03)
    } else {
        return None;
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn known_models() {
        assert_eq!(price("claude-opus-4-6").unwrap().input, 5.0);
        assert_eq!(price("claude-opus-4-1-20250805").unwrap().output, 75.0);
        assert_eq!(price("claude-sonnet-4-5-20250929").unwrap().cache_read, 0.3);
        assert_eq!(price("claude-haiku-4-5-20251001").unwrap().cache_write_1h, 2.0);
        assert!(price("gpt-5").is_none());
    }
}
