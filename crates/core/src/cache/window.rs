//! Context windows and minimum cacheable prompts of the priced models: which replayed requests
//! exceed the model's window, and which are too short for the provider to cache at all
//! (`docs/tokens-and-cache.md`, "Context windows and the cache minimum").
//!
//! A limit comes from, first found: `--window` (the window only); the journal's own
//! `session.ctx.ctx_window` (the harness said so); a `--prices` LiteLLM file's `max_input_tokens`
//! / `prompt_cache_min_tokens`; the built-in list below, taken with the built-in price table
//! (LiteLLM 1.110.2 and the providers' documentation as of its date). A Claude model has 200k
//! tokens unless its slug says `[1m]` or the journal itself recorded a prompt above 200k (the
//! 1M-context beta was then in use). Without any of them a priced provider's general minimum of
//! 1,024 tokens stands for the cache minimum, and the window is unknown.

use std::collections::HashMap;
use std::sync::OnceLock;

use serde::Serialize;

use super::model::CacheModel;
use super::prices::{find, normalize, PriceTable};
use crate::journal::{Body, Journal};

/// Claude's standard window, and the 1M-context one.
pub const CLAUDE_WINDOW: u64 = 200_000;
pub const CLAUDE_1M_WINDOW: u64 = 1_000_000;
/// The general minimum cacheable prompt of OpenAI, Anthropic and Gemini when no model figure is
/// known.
pub const PROVIDER_CACHE_MIN: u64 = 1024;

const GPT5: u64 = 272_000;
const GPT41: u64 = 1_047_576;
const GEMINI: u64 = 1_048_576;
const O_SERIES: u64 = 200_000;

/// A built-in row: (name, max input tokens, minimum cacheable prompt). Names follow the price
/// table's (same look-up rule); `None` where no source gives the figure.
type Row = (&'static str, Option<u64>, Option<u64>);

const BUILTIN: &[Row] = &[
    ("claude-opus-5", Some(CLAUDE_WINDOW), Some(512)),
    ("claude-opus-4-8", Some(CLAUDE_WINDOW), Some(1024)),
    ("claude-opus-4-7", Some(CLAUDE_WINDOW), Some(2048)),
    ("claude-opus-4-6", Some(CLAUDE_WINDOW), Some(4096)),
    ("claude-opus-4-5", Some(CLAUDE_WINDOW), Some(4096)),
    ("claude-opus-4-1", Some(CLAUDE_WINDOW), Some(1024)),
    ("claude-opus-4", Some(CLAUDE_WINDOW), Some(1024)),
    ("claude-sonnet-5", Some(CLAUDE_WINDOW), Some(1024)),
    ("claude-sonnet-4-6", Some(CLAUDE_WINDOW), Some(1024)),
    ("claude-sonnet-4-5", Some(CLAUDE_WINDOW), Some(1024)),
    ("claude-sonnet-4", Some(CLAUDE_WINDOW), Some(1024)),
    ("claude-haiku-4-5", Some(CLAUDE_WINDOW), Some(4096)),
    ("claude-3-7-sonnet", Some(CLAUDE_WINDOW), Some(1024)),
    ("claude-3-5-sonnet", Some(CLAUDE_WINDOW), Some(1024)),
    ("claude-3-5-haiku", Some(CLAUDE_WINDOW), Some(2048)),
    ("claude-3-haiku", Some(CLAUDE_WINDOW), Some(2048)),
    ("opus", Some(CLAUDE_WINDOW), None),
    ("sonnet", Some(CLAUDE_WINDOW), None),
    ("haiku", Some(CLAUDE_WINDOW), None),
    ("gpt-4.1", Some(GPT41), Some(1024)),
    ("gpt-4.1-mini", Some(GPT41), Some(1024)),
    ("gpt-4.1-nano", Some(GPT41), Some(1024)),
    ("gpt-4o", Some(128_000), Some(1024)),
    ("gpt-4o-mini", Some(128_000), Some(1024)),
    ("gpt-5", Some(GPT5), Some(1024)),
    ("gpt-5.1", Some(GPT5), Some(1024)),
    ("gpt-5-codex", Some(GPT5), Some(1024)),
    ("gpt-5.1-codex", Some(GPT5), Some(1024)),
    ("gpt-5.1-codex-max", Some(GPT5), Some(1024)),
    ("gpt-5.1-codex-mini", Some(GPT5), Some(1024)),
    ("gpt-5.2-codex", Some(GPT5), Some(1024)),
    ("gpt-5-pro", Some(GPT5), Some(1024)),
    ("gpt-5-mini", Some(GPT5), Some(1024)),
    ("gpt-5-nano", Some(GPT5), Some(1024)),
    ("gpt-5.2", Some(GPT5), Some(1024)),
    ("gpt-5.3-codex", Some(GPT5), Some(1024)),
    ("gpt-5.4", Some(1_050_000), Some(1024)),
    ("gpt-5.4-mini", None, Some(1024)),
    // Priced, window not known to any source here (listed so that `gpt-5` does not answer for them).
    ("gpt-5.5", None, Some(1024)),
    ("gpt-5.6-sol", None, Some(1024)),
    ("gpt-5.6-terra", None, Some(1024)),
    ("gpt-5.6-luna", None, Some(1024)),
    ("o1", Some(O_SERIES), Some(1024)),
    ("o3", Some(O_SERIES), Some(1024)),
    ("o3-mini", Some(O_SERIES), Some(1024)),
    ("o4-mini", Some(O_SERIES), Some(1024)),
    ("o3-pro", Some(O_SERIES), Some(1024)),
    ("gemini-2.5-pro", Some(GEMINI), Some(2048)),
    ("gemini-2.5-flash", Some(GEMINI), Some(2048)),
    ("gemini-2.5-flash-lite", Some(GEMINI), None),
    ("gemini-3.1-pro-preview", Some(GEMINI), Some(4096)),
];

/// Max input tokens and minimum cacheable prompt of a model.
type Figures = (Option<u64>, Option<u64>);

fn builtin() -> &'static HashMap<String, Figures> {
    static MAP: OnceLock<HashMap<String, Figures>> = OnceLock::new();
    MAP.get_or_init(|| BUILTIN.iter().map(|&(n, w, m)| (normalize(n), (w, m))).collect())
}

/// Whether the slug names the 1M-context variant (`claude-opus-4-6[1m]`, `sonnet[1m]`).
fn says_1m(model: &str) -> bool {
    model.trim().to_ascii_lowercase().ends_with("[1m]")
}

/// The built-in context window (max input tokens) of `model`; `None` for a model the list does not
/// know.
pub fn context_window(model: &str) -> Option<u64> {
    let w = find(builtin(), model).and_then(|r| r.0)?;
    Some(if says_1m(model) && w == CLAUDE_WINDOW { CLAUDE_1M_WINDOW } else { w })
}

/// The built-in minimum cacheable prompt of `model` (Anthropic 512–4,096 by model, OpenAI 1,024,
/// Gemini 2,048–4,096); `None` for a model the list does not give one.
pub fn cache_minimum(model: &str) -> Option<u64> {
    find(builtin(), model).and_then(|r| r.1)
}

/// Where a limit comes from.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, schemars::JsonSchema)]
#[serde(rename_all = "snake_case")]
pub enum Source {
    /// `--window`.
    Flag,
    /// The journal's `session.ctx.ctx_window`.
    Journal,
    /// The `--prices` file.
    Prices,
    /// The built-in list.
    Builtin,
    /// A recorded prompt above 200k on a Claude model: the 1M-context window was in use.
    Recorded,
    /// The provider's general minimum (1,024), no model figure being known.
    Provider,
}

impl Source {
    /// A few words for the human output.
    pub fn describe(self) -> &'static str {
        match self {
            Source::Flag => "--window",
            Source::Journal => "the journal's ctx_window",
            Source::Prices => "the --prices file",
            Source::Builtin => "built-in list",
            Source::Recorded => "1M context: a recorded prompt exceeds 200k",
            Source::Provider => "the provider's general minimum",
        }
    }
}

/// A limit in tokens and where it comes from.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, schemars::JsonSchema)]
pub struct Limit {
    pub tokens: u64,
    pub source: Source,
}

/// The context window and the minimum cacheable prompt a session is checked against.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, schemars::JsonSchema)]
pub struct Limits {
    /// The model slug they are taken for.
    pub model: Option<String>,
    pub window: Option<Limit>,
    pub cache_min: Option<Limit>,
}

impl Limits {
    /// The limits of `journal` priced as `slug` with `table` (module doc for the order).
    pub fn for_session(journal: &Journal, slug: Option<&str>, table: &PriceTable) -> Limits {
        let (file_window, file_min) = slug.map(|s| table.limits(s)).unwrap_or_default();
        let ctx = journal.session().and_then(|s| s.ctx.as_ref()).and_then(|c| c.ctx_window).filter(|&w| w > 0);
        let lim = |tokens, source| Some(Limit { tokens, source });
        let mut window = match (ctx, file_window, slug.and_then(context_window)) {
            (Some(w), _, _) => lim(w, Source::Journal),
            (None, Some(w), _) => lim(w, Source::Prices),
            (None, None, Some(w)) => lim(w, Source::Builtin),
            _ => None,
        };
        let claude = slug.is_some_and(|s| CacheModel::for_slug(s) == CacheModel::Anthropic);
        if claude && window.is_some_and(|w| w.tokens == CLAUDE_WINDOW && w.source != Source::Journal) {
            let peak = recorded_peak(journal);
            if peak > CLAUDE_WINDOW {
                window = lim(CLAUDE_1M_WINDOW, Source::Recorded);
            }
        }
        let cache_min = match (file_min, slug.and_then(cache_minimum)) {
            (Some(m), _) => lim(m, Source::Prices),
            (None, Some(m)) => lim(m, Source::Builtin),
            _ if slug.is_some_and(|s| CacheModel::for_slug(s) != CacheModel::Ideal) => {
                lim(PROVIDER_CACHE_MIN, Source::Provider)
            }
            _ => None,
        };
        Limits { model: slug.map(str::to_string), window, cache_min }
    }

    /// `--window N` overrides the window.
    pub fn with_window(mut self, flag: Option<u64>) -> Limits {
        if let Some(w) = flag {
            self.window = Some(Limit { tokens: w, source: Source::Flag });
        }
        self
    }
}

/// The largest `prompt_tokens` the journal recorded (0 when none).
fn recorded_peak(journal: &Journal) -> u64 {
    let prompts = journal.records.iter().filter_map(|r| match &r.body {
        Body::Assistant(a) => a.usage.as_ref().and_then(|u| u.prompt_tokens),
        _ => None,
    });
    prompts.max().unwrap_or(0)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::strategy::testkit::from_lines as journal;

    #[test]
    fn known_windows_and_minimums() {
        assert_eq!(context_window("claude-opus-4-6"), Some(200_000));
        assert_eq!(context_window("claude-opus-4-6[1m]"), Some(1_000_000));
        assert_eq!(context_window("anthropic/claude-sonnet-4-5-20250929"), Some(200_000));
        assert_eq!(context_window("gpt-5.3-codex"), Some(272_000));
        assert_eq!(context_window("openai/gpt-4.1"), Some(1_047_576));
        assert_eq!(context_window("o4-mini"), Some(200_000));
        assert_eq!(context_window("gemini-2.5-pro"), Some(1_048_576));
        assert_eq!(context_window("llama-3"), None);
        assert_eq!(cache_minimum("claude-opus-4-6"), Some(4096));
        assert_eq!(cache_minimum("claude-haiku-4-5-20251001"), Some(4096));
        assert_eq!(cache_minimum("claude-sonnet-4-5"), Some(1024));
        assert_eq!(cache_minimum("claude-opus-4-7"), Some(2048));
        assert_eq!(cache_minimum("gpt-5"), Some(1024));
        assert_eq!(cache_minimum("sonnet"), None);
        // Bedrock, Vertex and proxy names of a model have its window and minimum.
        assert_eq!(context_window("amazon-bedrock/us.anthropic.claude-opus-4-6-v1"), Some(200_000));
        assert_eq!(cache_minimum("eu.anthropic.claude-opus-4-6-v1:0"), Some(4096));
        assert_eq!(context_window("claude-sonnet-4-5@20250929"), Some(200_000));
        assert_eq!(context_window("openrouter/openai/gpt-5.3-codex"), Some(272_000));
    }

    #[test]
    fn limits_come_from_the_flag_the_journal_the_file_then_the_list() {
        let plain = journal(&[r#"{"rev":1,"ts":"2026-11-29T10:00:00Z","kind":"session","id":"s"}"#]);
        let t = PriceTable::builtin();
        let l = Limits::for_session(&plain, Some("claude-opus-4-6"), &t);
        assert_eq!(l.window, Some(Limit { tokens: 200_000, source: Source::Builtin }));
        assert_eq!(l.cache_min, Some(Limit { tokens: 4096, source: Source::Builtin }));
        let l = l.with_window(Some(50_000));
        assert_eq!(l.window, Some(Limit { tokens: 50_000, source: Source::Flag }));
        let luna = Limits::for_session(&plain, Some("gpt-5.6-luna"), &t);
        assert_eq!((luna.window, luna.cache_min.map(|m| m.source)), (None, Some(Source::Builtin)), "not gpt-5's");
        let unknown = Limits::for_session(&plain, Some("gpt-6"), &t);
        assert_eq!((unknown.window, unknown.cache_min.map(|m| m.source)), (None, Some(Source::Provider)));
        assert_eq!(Limits::for_session(&plain, None, &t), Limits::default());
        let ctx =
            journal(&[r#"{"rev":1,"ts":"2026-11-29T10:00:00Z","kind":"session","id":"s","ctx":{"ctx_window":8192}}"#]);
        let l = Limits::for_session(&ctx, Some("claude-opus-4-6"), &t);
        assert_eq!(l.window, Some(Limit { tokens: 8192, source: Source::Journal }));
        let file = br#"{"claude-opus-4-6": {"input_cost_per_token": 5e-06, "output_cost_per_token": 2.5e-05,
            "max_input_tokens": 1000000, "prompt_cache_min_tokens": 2048}}"#;
        let f = PriceTable::from_litellm("p.json", file).unwrap();
        let l = Limits::for_session(&plain, Some("claude-opus-4-6-20260101"), &f);
        assert_eq!(l.window, Some(Limit { tokens: 1_000_000, source: Source::Prices }));
        assert_eq!(l.cache_min, Some(Limit { tokens: 2048, source: Source::Prices }));
    }

    #[test]
    fn a_recorded_prompt_above_200k_means_the_1m_window() {
        let j = journal(&[
            r#"{"rev":1,"ts":"2026-11-29T10:00:00Z","kind":"session","id":"s","model":"claude-opus-4-6"}"#,
            r#"{"rev":2,"ts":"2026-11-29T10:00:01Z","kind":"user","id":"u1","text":"hi"}"#,
            r#"{"rev":3,"ts":"2026-11-29T10:00:02Z","kind":"assistant","id":"a1","text":"ok","usage":{"prompt_tokens":250000}}"#,
        ]);
        let l = Limits::for_session(&j, Some("claude-opus-4-6"), &PriceTable::builtin());
        assert_eq!(l.window, Some(Limit { tokens: 1_000_000, source: Source::Recorded }));
    }
}
