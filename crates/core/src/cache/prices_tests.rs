//! Unit tests of `prices.rs`.

use super::*;

#[test]
fn unknown_keys_of_a_litellm_file_are_named() {
    let file = br#"{
            "sample_spec": {"max_tokens": 1, "my_new_field": 2},
            "m1": {"input_cost_per_token": 1e-6, "output_cost_per_token": 2e-6, "litellm_provider": "x",
                   "supports_vision": true, "my_new_field": 1, "input_cost_per_token_above_200k_tokens": 2e-6,
                   "cache_creation_input_token_cost_above_1hr": 1e-6, "output_cost_per_token_batches": 1e-6,
                   "input_cost_per_tokn": 1e-6},
            "m2": {"input_cost_per_token": 1e-6, "output_cost_per_token": 2e-6, "input_cost_per_tokn": 1e-6,
                   "cost_above_fast": 1}
        }"#;
    let t = PriceTable::from_litellm("p.json", file).unwrap();
    assert_eq!(t.unknown_keys, vec![("cost_above_fast".to_string(), 1), ("input_cost_per_tokn".to_string(), 2)]);
    assert_eq!(t.unknown_list().unwrap(), "cost_above_fast (1 entry), input_cost_per_tokn (2 entries)");
    assert!(PriceTable::builtin().unknown_list().is_none());
}

#[test]
fn spec_prices_are_built_in() {
    let t = PriceTable::builtin();
    let p = |s: &str| t.lookup(s).map(|(_, p)| (p.input, p.cached, p.write, p.output));
    assert_eq!(p("anthropic/claude-sonnet-4-5"), Some((3.0, Some(0.3), Some(3.75), 15.0)));
    assert_eq!(p("claude-haiku-4-5-20251001"), Some((1.0, Some(0.1), Some(1.25), 5.0)));
    assert_eq!(p("openai/gpt-4.1"), Some((2.0, Some(0.5), None, 8.0)));
    assert_eq!(p("gpt-5"), Some((1.25, Some(0.125), None, 10.0)));
    assert_eq!(p("google/gemini-2.5-flash"), Some((0.3, Some(0.03), None, 2.5)));
    assert_eq!(p("claude-sonnet-4.5"), p("claude-sonnet-4-5"));
    assert_eq!(t.lookup("gpt-5.1-codex").unwrap().0, "gpt-5.1-codex");
    assert_eq!(t.lookup("gpt-5-mini").unwrap().0, "gpt-5-mini", "exact beats a shorter prefix");
    assert_eq!(t.lookup("claude-sonnet-4-5-20250929").unwrap().0, "claude-sonnet-4-5");
    assert!(t.lookup("ollama/qwen2.5-coder:32b").is_none());
    assert!(t.lookup("gpt-55").is_none(), "a prefix must end at a dash");
}

#[test]
fn every_providers_model_names_reach_the_canonical_model() {
    let t = PriceTable::builtin();
    let name = |s: &str| t.lookup(s).map(|(n, _)| n.to_string());
    let opus = Some("claude-opus-4-6".to_string());
    // Bedrock: regional inference profiles, bare provider ids, version suffixes, proxies.
    assert_eq!(name("amazon-bedrock/us.anthropic.claude-opus-4-6-v1"), opus);
    assert_eq!(name("us.anthropic.claude-opus-4-6-v1"), opus);
    assert_eq!(name("global.anthropic.claude-opus-4-6-v1"), opus);
    assert_eq!(name("apac.anthropic.claude-opus-4-6-v1:0"), opus);
    assert_eq!(name("bedrock/anthropic.claude-opus-4-6-v1"), opus);
    assert_eq!(name("eu.anthropic.claude-sonnet-4-5-20250929-v1:0").as_deref(), Some("claude-sonnet-4-5"));
    assert_eq!(name("anthropic.claude-haiku-4-5-20251001-v1:0").as_deref(), Some("claude-haiku-4-5"));
    assert_eq!(normalize("us.anthropic.claude-3-5-sonnet-20241022-v2:0"), "claude-3-5-sonnet-20241022");
    assert_eq!(normalize("us.meta.llama3-3-70b-instruct-v1:0"), "llama3-3-70b-instruct");
    // Vertex: `@version`.
    assert_eq!(name("claude-opus-4-6@20260101"), opus);
    assert_eq!(name("vertex_ai/claude-haiku-4-5@20251001").as_deref(), Some("claude-haiku-4-5"));
    // OpenRouter, LiteLLM and other proxies: the path is dropped.
    assert_eq!(name("openrouter/anthropic/claude-opus-4.6"), opus);
    assert_eq!(name("litellm/claude-opus-4-6"), opus);
    assert_eq!(name("anthropic/claude-opus-4-6[1m]"), opus);
    assert_eq!(name("openrouter/openai/gpt-5.4").as_deref(), Some("gpt-5.4"));
    // Names that only look like Bedrock ids keep their dots as dashes.
    assert_eq!(normalize("gpt-5.1-codex"), "gpt-5-1-codex");
    assert_eq!(normalize("qwen2.5-coder:32b"), "qwen2-5-coder:32b");
    assert_eq!(normalize("ollama/qwen3:8b"), "qwen3:8b");
}

#[test]
fn a_litellm_file_prices_a_bedrock_id_by_its_bare_model_and_premium_unless_only_bedrock_knows_it() {
    let json = br#"{
          "us.anthropic.claude-opus-4-6-v1": {"input_cost_per_token": 5.5e-06, "output_cost_per_token": 2.75e-05},
          "claude-opus-4-6": {"input_cost_per_token": 5e-06, "output_cost_per_token": 2.5e-05},
          "bedrock/us.amazon.nova-pro-v1:0": {"input_cost_per_token": 8e-07, "output_cost_per_token": 3.2e-06},
          "dashscope/qwen3-coder-plus": {"input_cost_per_token": 1e-06, "output_cost_per_token": 5e-06}
        }"#;
    let t = PriceTable::from_litellm("p.json", json).unwrap();
    let (name, p) = t.lookup("amazon-bedrock/us.anthropic.claude-opus-4-6-v1").unwrap();
    assert_eq!(name, "claude-opus-4-6");
    assert!((p.input - 5.5).abs() < 1e-9, "the bare model's price with the regional premium");
    assert_eq!(t.lookup("us.amazon.nova-pro-v1:0").unwrap().0, "bedrock/us.amazon.nova-pro-v1:0");
    assert_eq!(t.lookup("litellm/qwen3-coder-plus").unwrap().0, "dashscope/qwen3-coder-plus");
}

#[test]
fn costs_per_million() {
    let p = Price::flat(3.0, Some(0.3), Some(3.75), 15.0);
    // 1M plain input + 1M output = 3 + 15.
    assert!((p.cost(1_000_000, 0, 0, 1_000_000) - 18.0).abs() < 1e-9);
    // 1M cached + 1M written.
    assert!((p.cost(1_000_000, 1_000_000, 1_000_000, 0) - (3.75 + 0.3)).abs() < 1e-9);
    let q = Price::flat(2.0, None, None, 8.0);
    assert!((q.cached_rate() - 0.2).abs() < 1e-12);
    assert!((q.write_rate() - 2.5).abs() < 1e-12);
}

#[test]
fn litellm_format() {
    let json = br#"{
          "sample_spec": {"input_cost_per_token": 0},
          "claude-sonnet-4-5": {"input_cost_per_token": 3e-06, "output_cost_per_token": 1.5e-05,
             "cache_read_input_token_cost": 3e-07, "cache_creation_input_token_cost": 3.75e-06},
          "bedrock/claude-sonnet-4-5": {"input_cost_per_token": 9e-06, "output_cost_per_token": 1e-05},
          "gemini/gemini-2.5-flash": {"input_cost_per_token": 3e-07, "output_cost_per_token": 2.5e-06,
             "cache_read_input_token_cost": 3e-08},
          "embedding-x": {"input_cost_per_token": 1e-07}
        }"#;
    let t = PriceTable::from_litellm("p.json", json).unwrap();
    assert_eq!(t.len(), 2);
    let (n, p) = t.lookup("anthropic/claude-sonnet-4-5-20250929").unwrap();
    assert_eq!(n, "claude-sonnet-4-5", "the unprefixed key wins");
    assert!((p.input - 3.0).abs() < 1e-9 && (p.write.unwrap() - 3.75).abs() < 1e-9);
    let (_, g) = t.lookup("gemini-2.5-flash").unwrap();
    assert!((g.cached.unwrap() - 0.03).abs() < 1e-9 && g.write.is_none());
    assert!(PriceTable::from_litellm("x", b"[1]").is_err());
    assert!(PriceTable::from_litellm("x", b"{").is_err());
    assert!(PriceTable::from_litellm("x", b"{}").is_err());
}

/// A slug that adds a tier word to a table name (`gpt-5.1-codex-mini`) was billed at its
/// family's base model (`gpt-5.1`, 5× the mini's price) and not even marked unpriced.
#[test]
fn regression_a_tier_word_is_not_read_as_the_base_model() {
    let t = PriceTable::builtin();
    assert_eq!(t.lookup("gpt-5.1-codex-mini").unwrap().1.input, 0.25);
    assert_eq!(t.lookup("gpt-5.4-mini").unwrap().1.input, 0.75);
    assert!(t.lookup("gpt-5.4-nano-2026").is_none(), "an unknown tier is unpriced, not gpt-5.4");
    assert!(t.lookup("gpt-5.3-codex-spark").is_none());
    assert_eq!(t.lookup("gpt-5-2025-08-07").unwrap().0, "gpt-5");
    assert_eq!(t.lookup("gemini-2.5-pro-preview-06-05").unwrap().0, "gemini-2.5-pro");
    assert_eq!(t.lookup("claude-3-5-haiku-20241022").unwrap().1.output, 4.0);
    assert_eq!(t.lookup("claude-3-7-sonnet-20250219").unwrap().1.input, 3.0);
    assert_eq!(t.lookup("claude-opus-4-5-thinking").unwrap().0, "claude-opus-4-5");
    assert!(t.lookup("claude-opus-4-6-fast").is_none(), "fast mode has its own price");
}

/// Bedrock's geographic profiles of Claude 4.5 and later cost 10 % more than the global one;
/// ctxj billed them at the bare model's price.
#[test]
fn regression_bedrock_regional_profiles_carry_their_premium() {
    let t = PriceTable::builtin();
    let input = |s: &str| t.lookup(s).unwrap().1.input;
    assert!((input("us.anthropic.claude-opus-4-5-20251101-v1:0") - 5.5).abs() < 1e-9);
    assert!((input("eu.anthropic.claude-sonnet-4-5-20250929-v1:0") - 3.3).abs() < 1e-9);
    assert!((input("amazon-bedrock/jp.anthropic.claude-haiku-4-5-20251001-v1:0") - 1.1).abs() < 1e-9);
    assert!((input("global.anthropic.claude-opus-4-6-v1") - 5.0).abs() < 1e-9, "global: no premium");
    assert!((input("us.anthropic.claude-sonnet-4-20250514-v1:0") - 3.0).abs() < 1e-9, "before 4.5: one price");
    assert!((input("claude-opus-4-6") - 5.0).abs() < 1e-9);
    assert!((input("us.anthropic.claude-3-5-sonnet-20241022-v2:0") - 3.0).abs() < 1e-9);
    assert!(!regional_premium("us.meta.llama3-3-70b-instruct-v1:0"));
    assert_eq!(claude_generation("claude-opus-5"), Some((5, 0)));
    assert_eq!(claude_generation("claude-sonnet-4-20250514"), Some((4, 0)));
}

#[test]
fn builtin_prices_by_model_name() {
    assert_eq!(builtin_price("claude-opus-4-6").unwrap().input, 5.0);
    assert_eq!(builtin_price("claude-opus-4-1-20250805").unwrap().output, 75.0);
    assert_eq!(builtin_price("claude-sonnet-4-5-20250929").unwrap().cached_rate(), 0.3);
    assert_eq!(builtin_price("claude-haiku-4-5-20251001").unwrap().write_1h_rate(), 2.0);
    assert!(builtin_price("no-such-model").is_none());
}
