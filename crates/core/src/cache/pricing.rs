//! [`Pricing`]: the one choice of cache model and price for a session, shared by `ctxj cache`
//! and the report — the model slug (a flag, else the session's), the cache model (a flag, else
//! the slug's default, spec §4) and the price of the slug in a table.

use std::path::Path;
use std::sync::Arc;

use super::billed::Billed;
use super::environment::{Environment, ProviderBreaks};
use super::model::CacheModel;
use super::options::Options;
use super::prices::{Price, PriceError, PriceTable};
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
    /// `--model` was given: every turn of every replay is priced (and cached) as that model;
    /// otherwise each turn at the model the provider answered it with ([`Environment`]).
    pub forced_model: bool,
    /// Whether replays repeat the cache losses the provider recorded ([`ProviderBreaks`]).
    pub provider_breaks: ProviderBreaks,
}

/// How a run prices its sessions, resolved once from its flags (`--model`, `--cache`,
/// `--window`, `--provider-breaks`); [`PricingChoice::pricing`] applies it to each session.
#[derive(Debug, Clone, Default)]
pub struct PricingChoice {
    /// Price (and default cache model) as this slug instead of the session's.
    pub model: Option<String>,
    /// The cache model (`None`: the slug's default).
    pub cache: Option<CacheModel>,
    /// The context window (`None`: the journal's, else the model's).
    pub window: Option<u64>,
    pub provider_breaks: ProviderBreaks,
}

impl PricingChoice {
    /// The [`Pricing`] of `journal` under this choice, with `table`.
    pub fn pricing(&self, journal: &Journal, table: PriceTable) -> Pricing {
        Pricing::for_session(journal, self.model.as_deref(), self.cache, table)
            .with_window(self.window)
            .with_provider_breaks(self.provider_breaks)
    }
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
        Pricing {
            slug,
            cache: chosen,
            cache_from_slug: cache.is_none(),
            table,
            priced,
            limits,
            forced_model: model.is_some(),
            provider_breaks: ProviderBreaks::default(),
        }
    }

    /// `--provider-breaks`.
    pub fn with_provider_breaks(mut self, mode: ProviderBreaks) -> Pricing {
        self.provider_breaks = mode;
        self
    }

    /// The environment of `billed`'s session: each turn's model and price (unless `--model`), and
    /// the environment breaks to replay (unless `--provider-breaks ignore`).
    pub fn environment(&self, billed: &Billed) -> Environment {
        let n = billed.per_turn.iter().map(|t| t.turn).max().unwrap_or(0);
        let mut env = Environment {
            models: vec![None; n],
            prices: vec![None; n],
            recorded_costs: vec![None; n],
            writes_unbilled: billed.per_turn.iter().any(|t| t.cache_read.unwrap_or(0) > 0)
                && billed.per_turn.iter().filter(|t| t.prompt.is_some()).all(|t| t.cache_write == Some(0)),
            read_cap: vec![None; n],
            provider_read: vec![None; n],
            lost: vec![None; n],
            unmarked: vec![None; n],
            replayed: Vec::new(),
            kept_ms: None,
        };
        if !self.forced_model {
            let mut current: Option<String> = None;
            for t in &billed.per_turn {
                let (i, m) = (t.turn - 1, t.model.clone());
                env.prices[i] = m.as_deref().and_then(|m| self.table.lookup(m)).map(|(_, p)| p);
                env.recorded_costs[i] = t.cost.filter(|_| t.cost_recorded);
                if m.is_some() && m != current {
                    // A model switch (the session's first model is not one): the new model's
                    // first call read what the provider's cache of that model held.
                    if current.is_some() {
                        env.provider_read[i] = t.cache_read;
                    }
                    current = m.clone();
                }
                env.models[i] = m;
            }
        }
        // A provider that bills writes (Anthropic) bills as input only what lies past the last
        // breakpoint: where a call that wrote to the cache billed some, the harness's marker sat
        // there. (A route that reports no write at all bills what it cached as input: no marker.)
        for t in billed.per_turn.iter().filter(|t| t.cache_write.unwrap_or(0) > 0 && !env.writes_unbilled) {
            if let Some(input) = t.input.filter(|&i| i > 0) {
                env.unmarked[t.turn - 1] = Some(input);
            }
        }
        if self.provider_breaks == ProviderBreaks::Replay {
            env.kept_ms = billed.kept_idle_seconds.map(|s| (s * 1000.0) as i64);
            for b in billed.breaks.iter().filter(|b| b.environment) {
                // Within the break tolerance: the replay's blocks are estimates, so a read that
                // covered the system prompt and tools keeps the replay's estimate of them too.
                let tol = super::billed::TOLERANCE_TOKENS
                    .max((b.expected_read as f64 * super::billed::TOLERANCE_SHARE) as u64);
                env.read_cap[b.turn - 1] = Some(b.cache_read.saturating_add(tol));
                env.provider_read[b.turn - 1] = Some(b.cache_read);
                env.replayed.push(b.turn);
            }
            // A loss within the break tolerance: every replay loses as many tokens there (not
            // counted as a replayed break: none is reported).
            for &(turn, short) in &billed.unreported_losses {
                env.lost[turn - 1] = Some(short);
            }
        }
        env
    }

    /// [`Pricing::options`] with the session's [`Environment`] (per-message models, replayed
    /// environment breaks): what every replay of a session with a provider's record runs with.
    pub fn options_with(&self, billed: &Billed) -> Options {
        Options { env: Some(Arc::new(self.environment(billed))), ..self.options() }
    }

    /// `--window N`: the context window replayed requests are checked against.
    pub fn with_window(mut self, window: Option<u64>) -> Pricing {
        self.limits = self.limits.with_window(window);
        self
    }

    /// The simulation options: the cache model and the price, if any.
    pub fn options(&self) -> Options {
        Options {
            cache: self.cache,
            price: self.priced.as_ref().map(|(_, p)| *p),
            env: None,
            cache_min: self.limits.cache_min.map(|l| l.tokens),
        }
    }
}

/// `cost / baseline`, when both are known and the baseline is not free.
pub fn cost_ratio(cost: Option<f64>, baseline: Option<f64>) -> Option<f64> {
    match (cost, baseline) {
        (Some(c), Some(b)) if b > 0.0 => Some(c / b),
        _ => None,
    }
}
