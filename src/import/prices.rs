//! Prices for `ctxj usage`, taken from the shared table (`cache::prices`, built-in LiteLLM-based
//! figures) behind one function. Claude Code adds one distinction the shared table does not
//! carry: 1-hour cache writes, priced at 2× input as Anthropic (and ccusage) do.
//!
//! Not modelled: ccusage's per-category >200k tiers and the `speed: "fast"` multiplier, so costs
//! can differ from ccusage's for such requests; token counts never do.

use std::sync::OnceLock;

use crate::cache::prices::PriceTable;

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

/// The price of a model by name (`claude-opus-4-6`, `claude-sonnet-4-5-20250929`, …); `None`
/// for models the built-in table does not know.
pub fn price(model: &str) -> Option<Price> {
    static TABLE: OnceLock<PriceTable> = OnceLock::new();
    let (_, p) = TABLE.get_or_init(PriceTable::builtin).lookup(model)?;
    Some(Price {
        input: p.input,
        output: p.output,
        cache_write: p.write_rate(),
        cache_write_1h: p.input * 2.0,
        cache_read: p.cached_rate(),
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
        assert!(price("no-such-model").is_none());
    }
}
