//! Prompt-cache simulation, prices and cost (spec `strategies.md` §4–§6).
//!
//! * [`model`]: the four cache models (`ideal`, `openai`, `anthropic`, `gemini`) over block keys
//!   and token counts, and cache-break detection;
//! * [`billed`]: the session as the provider billed it, and its recorded cache breaks;
//! * [`prices`]: the built-in dated price table and LiteLLM's JSON format;
//! * [`pricing`]: the one choice of cache model and price for a session;
//! * [`replay`]: a strategy replayed turn by turn through a cache model, priced, with its cache
//!   breaks explained ([`options`] it runs with, [`figures`] it returns, [`explain`] the breaks,
//!   `memo` its per-replay block memo, `caches` its provider side);
//! * [`environment`]: what every replay shares with the provider's record;
//! * [`marks`]: what `ctxj turns` marks per turn (prompt size, over the window, recorded break);
//! * [`window`]: context windows and minimum cacheable prompts, and the requests that cross them.

pub mod billed;
mod caches;
pub mod compare;
pub mod environment;
pub mod explain;
pub mod figures;
pub mod marks;
mod memo;
pub mod model;
pub mod options;
pub mod prices;
pub mod pricing;
pub mod replay;
pub mod summarizer;
pub mod window;

pub use billed::{billed, Billed, BreakCause, RecordedBreak};
pub use compare::{compare, Comparison};
pub use environment::{Environment, EnvironmentSummary, ProviderBreaks};
pub use figures::{LimitCheck, Simulation, Summary, TurnFigures};
pub use model::{CacheModel, Simulator};
pub use options::Options;
pub use prices::{Price, PriceTable};
pub use pricing::{cost_ratio, load_table, load_table_checked, Pricing, PricingChoice, PricingError};
pub use replay::{simulate, simulate_observed};
pub use window::Limits;
