//! `--cache`, `--model`, `--prices`, `--window`, `--provider-breaks` ([`PricingArgs`]) resolved
//! into one [`Pricing`], the price table loaded one way with one unknown-key policy.

use std::path::PathBuf;

use anyhow::Result;

use ctxj_core::cache::{self, CacheModel, Pricing, PricingChoice, ProviderBreaks};
use ctxj_core::journal::Journal;

use super::super::Ctx;

/// `--cache` values.
#[derive(Debug, Clone, Copy, PartialEq, Eq, clap::ValueEnum)]
pub enum CacheArg {
    Ideal,
    #[value(name = "openai")]
    OpenAi,
    Anthropic,
    Gemini,
}

impl CacheArg {
    fn model(self) -> CacheModel {
        match self {
            CacheArg::Ideal => CacheModel::Ideal,
            CacheArg::OpenAi => CacheModel::OpenAi,
            CacheArg::Anthropic => CacheModel::Anthropic,
            CacheArg::Gemini => CacheModel::Gemini,
        }
    }
}

/// `--provider-breaks` values.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, clap::ValueEnum)]
pub enum ProviderBreaksArg {
    #[default]
    Replay,
    Ignore,
}

/// How requests are priced and cached: the flags of every command that simulates the prompt
/// cache (`cache`, `turns`, `report`), resolved into one [`Pricing`].
#[derive(Debug, Clone, Default, clap::Args)]
pub struct PricingArgs {
    /// Prompt-cache model (default: from the model slug).
    #[arg(long, value_enum, value_name = "MODEL")]
    pub cache: Option<CacheArg>,
    /// Price (and default cache model) as this model slug instead of the session's.
    #[arg(long, value_name = "SLUG")]
    pub model: Option<String>,
    /// LiteLLM model_prices_and_context_window.json to price with (its max_input_tokens and
    /// prompt_cache_min_tokens also give the context window and the cache minimum).
    #[arg(long, value_name = "FILE")]
    pub prices: Option<PathBuf>,
    /// Context window in tokens (default: the journal's ctx_window, else the model's); requests
    /// above it are flagged.
    #[arg(long, value_name = "TOKENS", value_parser = clap::value_parser!(u64).range(1..))]
    pub window: Option<u64>,
    /// replay (default): every simulated strategy repeats, at the same turns, the cache losses the
    /// provider recorded that no request change explains (causes provider, ttl, and
    /// system_or_tools without a system record); ignore: the simulated cache keeps what its model
    /// keeps.
    #[arg(long, value_enum, value_name = "MODE", default_value_t = ProviderBreaksArg::Replay)]
    pub provider_breaks: ProviderBreaksArg,
}

impl PricingArgs {
    /// The price table: `--prices` (its unknown keys named in a warning, or an error under
    /// `--strict`), else the built-in one. Call it before loading the session, so a bad table
    /// fails first.
    pub fn table(&self, ctx: &Ctx) -> Result<cache::PriceTable> {
        let t = cache::load_table_checked(self.prices.as_deref(), ctx.read.strict)?;
        if let Some(keys) = t.unknown_list() {
            let msg = format!("--prices {}: unknown key(s) ignored: {keys}", t.source);
            eprintln!("warning: {}", ctxj_core::text::escape_line(&msg));
        }
        Ok(t)
    }

    /// The flags as one typed [`PricingChoice`] (for library functions that price many sessions).
    pub fn choice(&self) -> PricingChoice {
        PricingChoice {
            model: self.model.clone(),
            cache: self.cache.map(CacheArg::model),
            window: self.window,
            provider_breaks: match self.provider_breaks {
                ProviderBreaksArg::Replay => ProviderBreaks::Replay,
                ProviderBreaksArg::Ignore => ProviderBreaks::Ignore,
            },
        }
    }

    /// The one [`Pricing`] of `journal` under these flags, with `table` from [`PricingArgs::table`].
    pub fn pricing(&self, journal: &Journal, table: cache::PriceTable) -> Pricing {
        self.choice().pricing(journal, table)
    }
}
