//! [`Options`]: what one replay ([`super::replay::simulate`]) runs with — the cache model, the
//! session's price and minimum cacheable prompt, and the [`Environment`] it shares with the
//! provider's record.

use std::sync::Arc;

use super::environment::Environment;
use super::model::CacheModel;
use super::prices::Price;

/// The options of one simulation.
#[derive(Debug, Clone)]
pub struct Options {
    pub cache: CacheModel,
    /// The session's price (`None`: costs are not computed unless `env` prices some turn).
    pub price: Option<Price>,
    /// What the replay shares with the provider's record ([`Pricing::options_with`]): each turn
    /// priced and cached at the model that answered it (a switch is a cold cache, as at the
    /// provider), and the provider's unexplained cache losses repeated at the same turns.
    ///
    /// [`Pricing::options_with`]: super::pricing::Pricing::options_with
    pub env: Option<Arc<Environment>>,
    /// The session model's minimum cacheable prompt, for turns whose own model has none
    /// (`None`: [`super::model::MIN_TOKENS`]).
    pub cache_min: Option<u64>,
}

impl Options {
    /// Options without an environment: one price and one cache for the whole run.
    pub fn plain(cache: CacheModel, price: Option<Price>) -> Options {
        Options { cache, price, env: None, cache_min: None }
    }

    /// Whether costs are computed: the session or some turn has a price.
    pub fn priced(&self) -> bool {
        self.price.is_some() || self.env.as_ref().is_some_and(|e| e.prices.iter().any(Option::is_some))
    }
}
