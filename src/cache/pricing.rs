//! [`Pricing`]: the one choice of cache model and price for a session, shared by `ctxj cache`
//! and the report — the model slug (a flag, else the session's), the cache model (a flag, else
//! the slug's default, spec §4) and the price of the slug in a table.

use std::path::Path;

use super::model::CacheModel;
use super::prices::{Price, PriceError, PriceTable};
use super::replay::Options;
use super::window::Limits;
use crate::journal::Journal;

/// Why a price table cannot be loaded.
#[derive(Debug, thiserror::Error)]
pub enum PricingError {
    #[error("reading --prices {path}")]
    Read {
        path: String,
        #[source]
        source: std::io::Error,
    },
    #[error(transparent)]
    Table(#[from] PriceError),
    #[error("--prices {path}: unknown key(s) {keys} (--strict)")]
    UnknownKeys { path: String, keys: String },
}

/// [`load_table`] with the file's unknown keys (`PriceTable::unknown_keys`) an error when
/// `strict`; otherwise the caller warns about them.
pub fn load_table_checked(path: Option<&Path>, strict: bool) -> Result<PriceTable, PricingError> {
    let t = load_table(path)?;
    match (strict, t.unknown_list()) {
        (true, Some(keys)) => Err(PricingError::UnknownKeys { path: t.source.clone(), keys }),
        _ => Ok(t),
    }
}

/// The price table at `path` (LiteLLM's JSON), else the built-in one.
pub fn load_table(path: Option<&Path>) -> Result<PriceTable, PricingError> {
    let Some(p) = path else { return Ok(PriceTable::builtin()) };
    let shown = p.display().to_string();
    let bytes =
        crate::journal::input::read_regular(p).map_err(|source| PricingError::Read { path: shown.clone(), source })?;
    Ok(PriceTable::from_litellm(&shown, &bytes)?)
}

/// The cache model and price a session is simulated with.
#[derive(Debug, Clone)]
pub struct Pricing {
    /// The model slug priced (`--model`, else the session's), if any.
    pub slug: Option<String>,
    pub cache: CacheModel,
    /// Whether `cache` is the slug's default rather than asked for.
    pub cache_from_slug: bool,
    pub table: PriceTable,
    /// The table's entry for the slug: its name there and the price.
    pub priced: Option<(String, Price)>,
    /// The slug's context window and minimum cacheable prompt ([`Pricing::with_window`] overrides
    /// the window).
    pub limits: Limits,
}

impl Pricing {
    /// Chooses for `journal`: `model` overrides the session's slug, `cache` the slug's default
    /// cache model (`ideal` without a slug).
    pub fn for_session(
        journal: &Journal,
        model: Option<&str>,
        cache: Option<CacheModel>,
        table: PriceTable,
    ) -> Pricing {
        let slug = model.map(str::to_string).or_else(|| journal.session().and_then(|s| s.model.clone()));
        let chosen = cache.unwrap_or_else(|| slug.as_deref().map(CacheModel::for_slug).unwrap_or(CacheModel::Ideal));
        let priced = slug.as_deref().and_then(|s| table.lookup(s)).map(|(n, p)| (n.to_string(), p));
        let limits = Limits::for_session(journal, slug.as_deref(), &table);
        Pricing { slug, cache: chosen, cache_from_slug: cache.is_none(), table, priced, limits }
    }

    /// `--window N`: the context window replayed requests are checked against.
    pub fn with_window(mut self, window: Option<u64>) -> Pricing {
        self.limits = self.limits.with_window(window);
        self
    }

    /// The simulation options: the cache model and the price, if any.
    pub fn options(&self) -> Options {
        Options { cache: self.cache, price: self.priced.as_ref().map(|(_, p)| *p) }
    }
}

/// `cost / baseline`, when both are known and the baseline is not free.
pub fn cost_ratio(cost: Option<f64>, baseline: Option<f64>) -> Option<f64> {
    match (cost, baseline) {
        (Some(c), Some(b)) if b > 0.0 => Some(c / b),
        _ => None,
    }
}
