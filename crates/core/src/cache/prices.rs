//! Model prices (`strategies.md` §5): a built-in dated table and LiteLLM's JSON format.
//!
//! Prices are $ per million tokens: input, cached input (read), cache write, output. A missing
//! cached price means reads cost 0.1 × input; a missing write price means writes (anthropic model
//! only) cost 1.25 × input — the spec's multipliers.
//!
//! Model look-up (both tables, and the context-window list of `window.rs`): the slug's canonical
//! name ([`normalize`]: proxy paths, Bedrock regions/providers/versions and Vertex versions
//! dropped, `.` read as `-`); an exact name wins, else the longest table name the slug extends by a
//! snapshot suffix only (`claude-haiku-4-5-20251001` → `claude-haiku-4-5`; `gpt-5.1-codex-mini` is
//! not `gpt-5.1`), else none; an OpenRouter `:free` variant costs nothing. Bedrock's geographic
//! profiles of Claude 4.5+ add 10 %. Tokens of one kind past 200k in one call cost the model's
//! long-context rate where it has one ([`Above200k`], ccusage's rule).

use std::collections::HashMap;

use serde_json::Value;

/// The date the built-in table was taken (LiteLLM 1.110.2 cross-checked with genai-prices 0.2.3;
/// see `docs/tokens-and-cache.md`).
pub const BUILTIN_DATE: &str = "2026-11-30";

/// One model's prices, $ per million tokens.
#[derive(Debug, Clone, Copy, PartialEq, serde::Serialize, schemars::JsonSchema)]
pub struct Price {
    pub input: f64,
    pub cached: Option<f64>,
    pub write: Option<f64>,
    pub output: f64,
    /// The long-context tier, where the model has one (not in the JSON reports).
    #[serde(skip)]
    #[schemars(skip)]
    pub above_200k: Above200k,
}

/// A model's rates for the tokens of one kind past the first [`TIER_THRESHOLD`] of one call
/// (LiteLLM's `…_above_200k_tokens` fields), $ per million; `None` keeps the base rate.
#[derive(Debug, Clone, Copy, PartialEq, Default)]
pub struct Above200k {
    pub input: Option<f64>,
    pub cached: Option<f64>,
    pub write: Option<f64>,
    pub output: Option<f64>,
}

/// Where a long-context tier starts: tokens of one kind in one call.
pub const TIER_THRESHOLD: u64 = 200_000;

/// `tokens` at `base`, those past [`TIER_THRESHOLD`] at `above` when the model has that tier —
/// per kind of token and call, as ccusage 20.0.24 (`cost.rs` `tiered_cost`) applies LiteLLM's
/// `…_above_200k_tokens` rates. In $ per million × tokens.
fn tiered(tokens: u64, base: f64, above: Option<f64>) -> f64 {
    match above {
        Some(a) if tokens > TIER_THRESHOLD => TIER_THRESHOLD as f64 * base + (tokens - TIER_THRESHOLD) as f64 * a,
        _ => tokens as f64 * base,
    }
}

impl Price {
    /// $ per million cached (read) tokens: the table's, else 0.1 × input.
    pub fn cached_rate(&self) -> f64 {
        self.cached.unwrap_or(self.input * 0.1)
    }

    /// $ per million cache-write tokens: the table's, else 1.25 × input.
    pub fn write_rate(&self) -> f64 {
        self.write.unwrap_or(self.input * 1.25)
    }

    /// $ per million 1-hour cache-write tokens (Claude Code records them apart): 2 × input, as
    /// Anthropic and ccusage price them.
    pub fn write_1h_rate(&self) -> f64 {
        self.input * 2.0
    }

    /// Cost in $ of one call as the provider bills it: plain `input`, cache writes with the
    /// five-minute and the one-hour lifetime, cache `read` and `output` tokens. The one formula
    /// `ctxj usage` and the billed session of `ctxj cache` share, so their costs agree to the cent.
    /// Tokens of one kind past [`TIER_THRESHOLD`] in the call cost the model's long-context rate
    /// ([`Above200k`]; a one-hour write's is 2 × the tier's input rate).
    pub fn billed(&self, input: u64, write_5m: u64, write_1h: u64, read: u64, output: u64) -> f64 {
        let a = &self.above_200k;
        (tiered(input, self.input, a.input)
            + tiered(output, self.output, a.output)
            + tiered(write_5m, self.write_rate(), a.write)
            + tiered(write_1h, self.write_1h_rate(), a.input.map(|i| i * 2.0))
            + tiered(read, self.cached_rate(), a.cached))
            / 1e6
    }

    /// Every rate times `factor` (a platform's premium).
    pub fn scaled(&self, factor: f64) -> Price {
        let a = &self.above_200k;
        let f = |x: Option<f64>| x.map(|x| x * factor);
        Price {
            input: self.input * factor,
            cached: f(self.cached),
            write: f(self.write),
            output: self.output * factor,
            above_200k: Above200k { input: f(a.input), cached: f(a.cached), write: f(a.write), output: f(a.output) },
        }
    }

    /// A price without a long-context tier.
    pub const fn flat(input: f64, cached: Option<f64>, write: Option<f64>, output: f64) -> Price {
        Price {
            input,
            cached,
            write,
            output,
            above_200k: Above200k { input: None, cached: None, write: None, output: None },
        }
    }

    /// Cost in $ of one request: `uncached` tokens of which `write` are cache writes, `cached`
    /// reads and `output` output tokens.
    /// Long-context tiers as in [`Price::billed`].
    pub fn cost(&self, uncached: u64, write: u64, cached: u64, output: u64) -> f64 {
        let a = &self.above_200k;
        (tiered(uncached.saturating_sub(write), self.input, a.input)
            + tiered(write.min(uncached), self.write_rate(), a.write)
            + tiered(cached, self.cached_rate(), a.cached)
            + tiered(output, self.output, a.output))
            / 1e6
    }
}

/// A built-in row: (name, input, cached, cache write, output).
type Row = (&'static str, f64, Option<f64>, Option<f64>, f64);

/// Built-in prices.
const BUILTIN: &[Row] = &[
    // Anthropic (5-minute write).
    ("claude-opus-5", 5.0, Some(0.5), Some(6.25), 25.0),
    ("claude-opus-4-8", 5.0, Some(0.5), Some(6.25), 25.0),
    ("claude-opus-4-7", 5.0, Some(0.5), Some(6.25), 25.0),
    ("claude-opus-4-6", 5.0, Some(0.5), Some(6.25), 25.0),
    ("claude-opus-4-5", 5.0, Some(0.5), Some(6.25), 25.0),
    ("claude-opus-4-1", 15.0, Some(1.5), Some(18.75), 75.0),
    ("claude-opus-4", 15.0, Some(1.5), Some(18.75), 75.0),
    ("claude-sonnet-5", 2.0, Some(0.2), Some(2.5), 10.0),
    ("claude-sonnet-4-6", 3.0, Some(0.3), Some(3.75), 15.0),
    ("claude-sonnet-4-5", 3.0, Some(0.3), Some(3.75), 15.0),
    ("claude-sonnet-4", 3.0, Some(0.3), Some(3.75), 15.0),
    ("claude-haiku-4-5", 1.0, Some(0.1), Some(1.25), 5.0),
    // Claude 3.x, Claude Code's models until mid-2025 (deprecated, still in old sessions; the
    // retired Claude 3 Opus and Sonnet are left unpriced, as LiteLLM's table and ccusage leave them).
    ("claude-3-7-sonnet", 3.0, Some(0.3), Some(3.75), 15.0),
    ("claude-3-5-sonnet", 3.0, Some(0.3), Some(3.75), 15.0),
    ("claude-3-5-haiku", 0.8, Some(0.08), Some(1.0), 4.0),
    ("claude-3-haiku", 0.25, Some(0.03), Some(0.3), 1.25),
    // Claude Code's aliases, read as the models they named when the table was taken.
    ("opus", 5.0, Some(0.5), Some(6.25), 25.0),
    ("sonnet", 3.0, Some(0.3), Some(3.75), 15.0),
    ("haiku", 1.0, Some(0.1), Some(1.25), 5.0),
    // OpenAI.
    ("gpt-4.1", 2.0, Some(0.5), None, 8.0),
    ("gpt-4.1-mini", 0.4, Some(0.1), None, 1.6),
    ("gpt-4.1-nano", 0.1, Some(0.025), None, 0.4),
    ("gpt-4o", 2.5, Some(1.25), None, 10.0),
    ("gpt-4o-mini", 0.15, Some(0.075), None, 0.6),
    ("gpt-5", 1.25, Some(0.125), None, 10.0),
    ("gpt-5.1", 1.25, Some(0.125), None, 10.0),
    // The Codex models Codex CLI serves (a tier word is a model of its own, priced apart).
    ("gpt-5-codex", 1.25, Some(0.125), None, 10.0),
    ("gpt-5.1-codex", 1.25, Some(0.125), None, 10.0),
    ("gpt-5.1-codex-max", 1.25, Some(0.125), None, 10.0),
    ("gpt-5.1-codex-mini", 0.25, Some(0.025), None, 2.0),
    ("gpt-5.2-codex", 1.75, Some(0.175), None, 14.0),
    ("gpt-5-pro", 15.0, None, None, 120.0),
    ("gpt-5-mini", 0.25, Some(0.025), None, 2.0),
    ("gpt-5-nano", 0.05, Some(0.005), None, 0.4),
    ("gpt-5.2", 1.75, Some(0.175), None, 14.0),
    ("gpt-5.3-codex", 1.75, Some(0.175), None, 14.0),
    ("gpt-5.4", 2.5, Some(0.25), None, 15.0),
    ("gpt-5.4-mini", 0.75, Some(0.075), None, 4.5),
    ("gpt-5.5", 5.0, Some(0.5), None, 30.0),
    ("gpt-5.6-sol", 4.0, Some(0.4), Some(5.0), 20.0),
    ("gpt-5.6-terra", 2.0, Some(0.2), Some(2.5), 12.0),
    ("gpt-5.6-luna", 0.2, Some(0.02), Some(0.25), 1.2),
    ("o1", 15.0, Some(7.5), None, 60.0),
    ("o3", 2.0, Some(0.5), None, 8.0),
    ("o3-mini", 1.1, Some(0.55), None, 4.4),
    ("o4-mini", 1.1, Some(0.275), None, 4.4),
    ("o3-pro", 20.0, None, None, 80.0),
    // Google (implicit caching; no write premium).
    ("gemini-2.5-pro", 1.25, Some(0.125), None, 10.0),
    ("gemini-2.5-flash", 0.3, Some(0.03), None, 2.5),
    ("gemini-2.5-flash-lite", 0.1, Some(0.01), None, 0.4),
    ("gemini-3.1-pro-preview", 2.0, Some(0.2), None, 12.0),
    // Other models real logs use (the unseen sweeps: Hermes, Gemini CLI, Claude Code through
    // MiniMax's Anthropic-compatible endpoint, Codex through Ollama's cloud, Kimi Code), at the
    // first-party LiteLLM 1.110.2 entry ccusage 20.0.24 resolves them to: `gemini-…` (Gemini API),
    // `minimax/MiniMax-M2.1`, `moonshot/kimi-k2.5` …
    ("gemini-3-flash-preview", 0.5, Some(0.05), None, 3.0),
    ("gemini-flash-latest", 0.75, Some(0.075), None, 3.75),
    ("gemini-flash-lite-latest", 0.3, Some(0.03), None, 2.5),
    ("minimax-m2", 0.3, Some(0.03), Some(0.375), 1.2),
    ("minimax-m2.1", 0.3, Some(0.03), Some(0.375), 1.2),
    ("minimax-m2.5", 0.3, Some(0.03), Some(0.375), 1.2),
    ("kimi-k2.5", 0.6, Some(0.1), None, 3.0),
    ("kimi-k2.6", 0.95, Some(0.16), None, 4.0),
    ("kimi-k2.7-code", 0.95, Some(0.19), None, 4.0),
];

/// Long-context tiers of built-in models ([`Above200k`]): Gemini 2.5 Pro and 3.1 Pro Preview as
/// LiteLLM 1.110.2 lists them, Claude Sonnet 4 as ccusage 20.0.24's own table has it (Anthropic's
/// 1M-context rates).
const TIERS: &[(&str, Above200k)] = &[
    ("claude-sonnet-4", Above200k { input: Some(6.0), cached: Some(0.6), write: Some(7.5), output: Some(22.5) }),
    ("gemini-2.5-pro", Above200k { input: Some(2.5), cached: Some(0.25), write: None, output: Some(15.0) }),
    ("gemini-3.1-pro-preview", Above200k { input: Some(4.0), cached: Some(0.4), write: None, output: Some(18.0) }),
];

/// A price table keyed by normalized model name.
#[derive(Debug, Clone, Default)]
pub struct PriceTable {
    /// Where the figures come from ("built-in 2026-11-30", a file name).
    pub source: String,
    map: HashMap<String, (String, Price)>,
    /// A LiteLLM file's `max_input_tokens` and `prompt_cache_min_tokens` per model (empty for the
    /// built-in table, whose limits are [`super::window`]'s list).
    limits: HashMap<String, (Option<u64>, Option<u64>)>,
    /// Keys of the file's model entries that LiteLLM's format does not define (a misspelt
    /// price, a foreign file): each key with the number of entries carrying it, in key order.
    pub unknown_keys: Vec<(String, usize)>,
}

/// Fields of a LiteLLM model entry besides `supports_*` flags and the tier / service variants
/// of the cost fields (`…_above_200k_tokens`, `…_above_1hr`, `…_batches`, `…_flex`,
/// `…_priority`); a file's own `sample_spec` entry adds to them.
const LITELLM_FIELDS: &[&str] = &[
    "cache_creation_input_audio_token_cost",
    "cache_creation_input_token_cost",
    "cache_read_input_audio_token_cost",
    "cache_read_input_token_cost",
    "code_interpreter_cost_per_session",
    "computer_use_input_cost_per_1k_tokens",
    "computer_use_output_cost_per_1k_tokens",
    "deprecation_date",
    "file_search_cost_per_1k_calls",
    "file_search_cost_per_gb_per_day",
    "input_cost_per_audio_per_second",
    "input_cost_per_audio_token",
    "input_cost_per_character",
    "input_cost_per_image",
    "input_cost_per_image_token",
    "input_cost_per_pixel",
    "input_cost_per_query",
    "input_cost_per_request",
    "input_cost_per_second",
    "input_cost_per_token",
    "input_cost_per_video_per_second",
    "input_dbu_cost_per_token",
    "litellm_provider",
    "max_audio_length_hours",
    "max_audio_per_prompt",
    "max_document_chunks_per_query",
    "max_images_per_prompt",
    "max_input_tokens",
    "max_output_tokens",
    "max_pdf_size_mb",
    "max_query_tokens",
    "max_tokens",
    "max_tokens_per_document_chunk",
    "max_video_length",
    "max_videos_per_prompt",
    "metadata",
    "mode",
    "output_cost_per_audio_token",
    "output_cost_per_character",
    "output_cost_per_image",
    "output_cost_per_image_token",
    "output_cost_per_pixel",
    "output_cost_per_reasoning_token",
    "output_cost_per_second",
    "output_cost_per_token",
    "output_cost_per_video_per_second",
    "output_db_cost_per_token",
    "output_dbu_cost_per_token",
    "output_vector_size",
    "rpd",
    "rpm",
    "search_context_cost_per_query",
    "source",
    "supported_endpoints",
    "supported_modalities",
    "supported_output_modalities",
    "supported_regions",
    "tiered_pricing",
    "tool_use_system_prompt_tokens",
    "tpm",
    "vector_store_cost_per_gb_per_day",
];

/// Whether `key` is a field of LiteLLM's format (see [`LITELLM_FIELDS`]) or of `spec`.
fn litellm_field(key: &str, spec: Option<&serde_json::Map<String, Value>>) -> bool {
    if key.starts_with("supports_") || spec.is_some_and(|m| m.contains_key(key)) {
        return true;
    }
    let base = ["_batches", "_flex", "_priority"].iter().find_map(|s| key.strip_suffix(s)).unwrap_or(key);
    // `…_above_200k_tokens`, `…_above_1hr`: a tier of a known cost field.
    let base = match base.find("_above_") {
        Some(i) if base[i + 7..].starts_with(|c: char| c.is_ascii_digit()) => &base[..i],
        _ => base,
    };
    LITELLM_FIELDS.binary_search(&base).is_ok()
}

/// A `--prices` file that is not LiteLLM's format.
#[derive(Debug, thiserror::Error)]
pub enum PriceError {
    #[error("{file}: not JSON: {err}")]
    Json { file: String, err: serde_json::Error },
    #[error("{file}: expected a JSON object keyed by model name (LiteLLM's model_prices_and_context_window.json)")]
    Shape { file: String },
    #[error("{file}: no entry has input_cost_per_token and output_cost_per_token")]
    Empty { file: String },
}

pub use crate::tokens::model_name::normalize;
use crate::tokens::model_name::BEDROCK_REGIONS;

/// The table name printed for an OpenRouter `:free` variant ([`PriceTable::lookup`]).
pub const FREE_VARIANT: &str = ":free variant";

/// Whether `slug` names a free variant (`arcee-ai/trinity-large-preview:free`): OpenRouter's
/// `:free` suffix, a model served at no charge.
pub fn free_variant(slug: &str) -> bool {
    let s = normalize(slug);
    s.strip_suffix(":free").is_some_and(|b| !b.is_empty())
}

/// Bedrock's premium on a geographic (regional) inference profile over the global one.
pub const REGIONAL_PREMIUM: f64 = 1.1;

/// Whether `slug` is a Bedrock geographic cross-region inference profile (`us.`, `eu.`, `apac.`,
/// `jp.`, `au.`, `ca.`, `us-gov.` — not `global.`) of a Claude model from the 4.5 generation on:
/// AWS prices those endpoints 10 % above the global profile, which costs what Anthropic's API
/// does. Earlier Claude models and other vendors' models have one price.
pub fn regional_premium(slug: &str) -> bool {
    let lower = slug.trim().to_ascii_lowercase();
    let name = lower.rsplit('/').next().unwrap_or(&lower);
    let Some((region, rest)) = name.split_once('.') else { return false };
    if region == "global" || !BEDROCK_REGIONS.contains(&region) || !rest.starts_with("anthropic.") {
        return false;
    }
    claude_generation(&normalize(slug)).is_some_and(|v| v >= (4, 5))
}

/// The (major, minor) generation of a canonical Claude 4+ name (`claude-sonnet-4-5-20250929` →
/// (4, 5), `claude-opus-5` → (5, 0)); `None` for other names (`claude-3-5-sonnet`: the 3.x names
/// put the version first).
fn claude_generation(canonical: &str) -> Option<(u32, u32)> {
    let rest = canonical.strip_prefix("claude-")?;
    let rest = ["opus-", "sonnet-", "haiku-"].iter().find_map(|t| rest.strip_prefix(t))?;
    let mut parts = rest.split('-');
    let major: u32 = parts.next()?.parse().ok()?;
    // A minor version is one or two digits; a longer number is the snapshot date.
    let minor = parts.next().filter(|m| m.len() <= 2).and_then(|m| m.parse().ok()).unwrap_or(0);
    Some((major, minor))
}

/// The built-in price of a model by name (`claude-opus-4-6`, `claude-sonnet-4-5-20250929`, …);
/// `None` for models the built-in table does not know. The table is built once.
pub fn builtin_price(model: &str) -> Option<Price> {
    static TABLE: std::sync::OnceLock<PriceTable> = std::sync::OnceLock::new();
    TABLE.get_or_init(PriceTable::builtin).lookup(model).map(|(_, p)| p)
}

impl PriceTable {
    /// The built-in table.
    pub fn builtin() -> PriceTable {
        let mut t = PriceTable { source: format!("built-in table of {BUILTIN_DATE}"), ..PriceTable::default() };
        for &(name, input, cached, write, output) in BUILTIN {
            let above_200k = TIERS.iter().find(|(n, _)| *n == name).map(|(_, a)| *a).unwrap_or_default();
            t.map.insert(normalize(name), (name.to_string(), Price { input, cached, write, output, above_200k }));
        }
        t
    }

    /// Reads LiteLLM's `model_prices_and_context_window.json` (USD per token) from `bytes`.
    /// Keys with a provider prefix (`gemini/gemini-2.5-flash`) are also found by the bare name;
    /// an unprefixed key wins over prefixed ones.
    pub fn from_litellm(file: &str, bytes: &[u8]) -> Result<PriceTable, PriceError> {
        let v: Value = serde_json::from_slice(bytes).map_err(|err| PriceError::Json { file: file.into(), err })?;
        let obj = v.as_object().ok_or_else(|| PriceError::Shape { file: file.into() })?;
        let mut t = PriceTable { source: file.to_string(), ..PriceTable::default() };
        let per_m = |e: &Value, k: &str| e.get(k).and_then(num).map(|x| x * 1e6);
        let spec = obj.get("sample_spec").and_then(Value::as_object);
        let mut unknown: std::collections::BTreeMap<&str, usize> = Default::default();
        for (name, e) in obj {
            if name == "sample_spec" {
                continue;
            }
            for k in e.as_object().into_iter().flat_map(|m| m.keys()) {
                if !litellm_field(k, spec) {
                    *unknown.entry(k).or_default() += 1;
                }
            }
            let (Some(input), Some(output)) = (per_m(e, "input_cost_per_token"), per_m(e, "output_cost_per_token"))
            else {
                continue;
            };
            let price = Price {
                input,
                cached: per_m(e, "cache_read_input_token_cost"),
                write: per_m(e, "cache_creation_input_token_cost"),
                output,
                above_200k: Above200k {
                    input: per_m(e, "input_cost_per_token_above_200k_tokens"),
                    cached: per_m(e, "cache_read_input_token_cost_above_200k_tokens"),
                    write: per_m(e, "cache_creation_input_token_cost_above_200k_tokens"),
                    output: per_m(e, "output_cost_per_token_above_200k_tokens"),
                },
            };
            let key = normalize(name);
            // A name the key does not spell (`bedrock/…`, `us.anthropic.…-v1:0`, `…@2025…`)
            // yields to the bare name: ccusage prices a bare slug by its exact entry.
            let prefixed = key != name.to_ascii_lowercase().replace('.', "-");
            match t.map.get(&key) {
                Some((old, _)) if normalize(old) == old.to_ascii_lowercase().replace('.', "-") || prefixed => {}
                _ => {
                    let whole = |k: &str| e.get(k).and_then(num).filter(|x| *x >= 1.0 && *x < 1e12).map(|x| x as u64);
                    t.limits.insert(key.clone(), (whole("max_input_tokens"), whole("prompt_cache_min_tokens")));
                    t.map.insert(key, (name.clone(), price));
                }
            }
        }
        if t.map.is_empty() {
            return Err(PriceError::Empty { file: file.into() });
        }
        t.unknown_keys = unknown.into_iter().map(|(k, n)| (k.to_string(), n)).collect();
        Ok(t)
    }

    /// The file's unknown keys in one line (`key (N entries), …`), or `None` when there are none.
    pub fn unknown_list(&self) -> Option<String> {
        let shown: Vec<String> = (self.unknown_keys.iter().take(10))
            .map(|(k, n)| format!("{k} ({n} {})", if *n == 1 { "entry" } else { "entries" }))
            .collect();
        let more = self.unknown_keys.len().saturating_sub(shown.len());
        (!shown.is_empty()).then(|| {
            let tail = if more > 0 { format!(" and {more} more") } else { String::new() };
            format!("{}{tail}", shown.join(", "))
        })
    }

    /// Number of models.
    pub fn len(&self) -> usize {
        self.map.len()
    }

    pub fn is_empty(&self) -> bool {
        self.map.is_empty()
    }

    /// The price of `slug`: (the table's name for it, its price) — with Bedrock's regional
    /// premium when `slug` names a geographic inference profile of a model that has one
    /// ([`regional_premium`]).
    /// A slug the table does not have that names a `:free` variant ([`free_variant`]) costs
    /// nothing ([`FREE_VARIANT`]); ccusage's total for it is 0 too.
    pub fn lookup(&self, slug: &str) -> Option<(&str, Price)> {
        let Some((name, price)) = find(&self.map, slug) else {
            return free_variant(slug).then_some((FREE_VARIANT, Price::flat(0.0, Some(0.0), Some(0.0), 0.0)));
        };
        Some((name.as_str(), if regional_premium(slug) { price.scaled(REGIONAL_PREMIUM) } else { *price }))
    }

    /// A LiteLLM file's `max_input_tokens` and `prompt_cache_min_tokens` for `slug` (both `None`
    /// for the built-in table or a model the file does not have).
    pub fn limits(&self, slug: &str) -> (Option<u64>, Option<u64>) {
        find(&self.limits, slug).copied().unwrap_or_default()
    }
}

/// The entry of `map` (keyed by [`normalize`]d names) for `slug`: an exact name, else the longest
/// name that the slug extends with a snapshot suffix only ([`snapshot_suffix`]:
/// `claude-haiku-4-5-20251001` → `claude-haiku-4-5`) — the one look-up rule of prices and limits.
/// A slug that adds a word (`gpt-5.1-codex-mini`, `gpt-5.4-mini`) names another model, priced
/// apart, and is never read as its family's base model.
pub(crate) fn find<'a, V>(map: &'a HashMap<String, V>, slug: &str) -> Option<&'a V> {
    let key = normalize(slug);
    if let Some(v) = map.get(&key) {
        return Some(v);
    }
    map.iter()
        .filter(|(k, _)| {
            key.len() > k.len()
                && key.starts_with(k.as_str())
                && key.as_bytes()[k.len()] == b'-'
                && snapshot_suffix(&key[k.len() + 1..])
        })
        .max_by_key(|(k, _)| k.len())
        .map(|(_, v)| v)
}

/// Whether `rest` (what a slug adds to a table name, after its `-`) only dates or versions the
/// same model: dash-separated numbers (`20251001`, `2025-08-07`, `05-20`), `latest`, `preview`,
/// `exp`, `vN`, `thinking` (the same model with extended thinking, its tokens billed as output) —
/// never a word naming a tier or variant at its own price (`mini`, `codex`, `pro`, `lite`, `fast`).
fn snapshot_suffix(rest: &str) -> bool {
    !rest.is_empty()
        && rest.split('-').all(|p| {
            (!p.is_empty() && p.bytes().all(|b| b.is_ascii_digit()))
                || matches!(p, "latest" | "preview" | "exp" | "thinking")
                || p.strip_prefix('v').is_some_and(|n| !n.is_empty() && n.bytes().all(|b| b.is_ascii_digit()))
        })
}

fn num(v: &Value) -> Option<f64> {
    match v {
        Value::Number(n) => n.as_f64().or_else(|| n.to_string().parse().ok()),
        Value::String(s) => s.parse().ok(),
        _ => None,
    }
}

#[cfg(test)]
#[path = "prices_tests.rs"]
mod tests;
