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

/// Issue 28 item 4: the name forms of the models real logs use (unseen sweeps: Claude Code through
/// MiniMax's endpoint, Codex through Ollama's cloud, Hermes, Gemini CLI, Kimi) reach the
/// first-party LiteLLM entry ccusage resolves them to; they were all unpriced.
#[test]
fn regression_every_name_form_real_logs_use_was_unpriced() {
    let t = PriceTable::builtin();
    let name = |s: &str| t.lookup(s).map(|(n, _)| n.to_string());
    for s in ["MiniMax-M2.1", "minimax/MiniMax-M2.1", "openrouter/minimax/minimax-m2.1"] {
        assert_eq!(name(s).as_deref(), Some("minimax-m2.1"), "{s}");
    }
    let m = t.lookup("MiniMax-M2.1").unwrap().1;
    assert_eq!((m.input, m.cached, m.write, m.output), (0.3, Some(0.03), Some(0.375), 1.2));
    // Ollama's `:cloud` tag runs the vendor's model; a local tag stays unpriced.
    assert_eq!(name("kimi-k2.5:cloud").as_deref(), Some("kimi-k2.5"));
    assert_eq!(name("ollama/kimi-k2.5:cloud").as_deref(), Some("kimi-k2.5"));
    assert_eq!(normalize("kimi-k2.5:cloud"), "kimi-k2-5");
    assert!(t.lookup("ollama/qwen3:8b").is_none() && t.lookup(":cloud").is_none());
    // Kimi: Moonshot's names and Kimi Code's `moonshot-ai/` path.
    assert_eq!(name("moonshot/kimi-k2.5").as_deref(), Some("kimi-k2.5"));
    assert_eq!(name("moonshot-ai/kimi-k2.7-code").as_deref(), Some("kimi-k2.7-code"));
    assert_eq!(t.lookup("kimi-k2.6").unwrap().1.cached, Some(0.16));
    // Google's `-latest` aliases and Gemini 3 Flash Preview, bare or with the provider path
    // Hermes' and Gemini CLI's candidates add; a name no entry has stays unpriced.
    assert_eq!(name("google/gemini-flash-latest").as_deref(), Some("gemini-flash-latest"));
    assert_eq!(name("gemini/gemini-flash-lite-latest").as_deref(), Some("gemini-flash-lite-latest"));
    assert_eq!(name("vertex_ai/gemini-3-flash-preview").as_deref(), Some("gemini-3-flash-preview"));
    assert_eq!(t.lookup("gemini-flash-latest").unwrap().1.output, 3.75);
    assert!(t.lookup("gemini-3-flash").is_none(), "not the preview's price");
    assert!(t.lookup("gemma-4-31b-it").is_none(), "only resellers price it; the Gemini API's entry is 0");
    // An OpenRouter `:free` variant costs nothing; a bare `:free` is no model.
    let (n, p) = t.lookup("openrouter/arcee-ai/trinity-large-preview:free").unwrap();
    assert_eq!((n, p.billed(1000, 10, 10, 1000, 100)), (FREE_VARIANT, 0.0));
    assert!(t.lookup(":free").is_none());
    assert_eq!(name("openrouter/anthropic/claude-opus-4.6").as_deref(), Some("claude-opus-4-6"), "a priced name wins");
}

/// Qwen, GLM, DeepSeek and Grok names in their vendors', routers' and Bedrock's forms reach one
/// canonical name, which a LiteLLM `--prices` file prices (the built-in table has no row: no log
/// here used them without a recorded cost).
#[test]
fn vendor_and_router_forms_of_other_models_meet_the_litellm_key() {
    assert_eq!(normalize("openrouter/z-ai/glm-4.6"), "glm-4-6");
    assert_eq!(normalize("zai/glm-4.6"), normalize("glm-4.6"));
    assert_eq!(normalize("qwen.qwen3-coder-480b-a35b-v1:0"), "qwen3-coder-480b-a35b");
    assert_eq!(normalize("openrouter/qwen/qwen3-coder"), "qwen3-coder");
    assert_eq!(normalize("deepseek/deepseek-chat"), "deepseek-chat");
    assert_eq!(normalize("huggingface/deepseek-ai/DeepSeek-V4-Pro"), "deepseek-v4-pro");
    assert_eq!(normalize("openrouter/x-ai/grok-code-fast-1"), "grok-code-fast-1");
    assert_eq!(normalize("us.moonshotai.kimi-k2.5"), "kimi-k2-5");
    let json = br#"{
          "zai/glm-4.6": {"input_cost_per_token": 6e-07, "output_cost_per_token": 2.2e-06, "cache_read_input_token_cost": 1.1e-07},
          "xai/grok-code-fast-1": {"input_cost_per_token": 2e-07, "output_cost_per_token": 1.5e-06},
          "dashscope/qwen3-coder-plus": {"input_cost_per_token": 1e-06, "output_cost_per_token": 5e-06},
          "deepseek/deepseek-chat": {"input_cost_per_token": 2.8e-07, "output_cost_per_token": 4.2e-07}
        }"#;
    let t = PriceTable::from_litellm("p.json", json).unwrap();
    for (slug, key) in [
        ("openrouter/z-ai/glm-4.6", "zai/glm-4.6"),
        ("glm-4.6", "zai/glm-4.6"),
        ("x-ai/grok-code-fast-1", "xai/grok-code-fast-1"),
        ("qwen3-coder-plus", "dashscope/qwen3-coder-plus"),
        ("litellm/deepseek-chat", "deepseek/deepseek-chat"),
    ] {
        assert_eq!(t.lookup(slug).map(|(n, _)| n), Some(key), "{slug}");
    }
}

/// Tokens of one kind past 200k in one call were billed at the base rate, where LiteLLM (and
/// ccusage, per kind: `cost.rs` `tiered_cost`) charge the long-context rate.
#[test]
fn regression_long_context_tiers_were_ignored() {
    let t = PriceTable::builtin();
    let pro = t.lookup("gemini-2.5-pro").unwrap().1;
    let near = |a: f64, b: f64| assert!((a - b).abs() < 1e-12, "{a} vs {b}");
    near(pro.billed(200_000, 0, 0, 0, 0), 0.25);
    near(pro.billed(300_000, 0, 0, 0, 0), 0.25 + 0.25);
    // Each kind against the threshold on its own: 100k input, 250k reads.
    near(pro.billed(100_000, 0, 0, 250_000, 0), 0.125 + 0.025 + 0.0125);
    near(pro.cost(300_000, 0, 0, 0), 0.5);
    let s4 = t.lookup("claude-sonnet-4-20250514").unwrap().1;
    near(s4.billed(0, 0, 0, 0, 300_000), 3.0 + 2.25);
    near(s4.billed(0, 0, 300_000, 0, 0), 1.2 + 1.2);
    near(t.lookup("claude-sonnet-4-5").unwrap().1.billed(0, 0, 0, 0, 300_000), 4.5);
    // The Bedrock premium scales the tier too; a LiteLLM file's tier fields are read.
    near(s4.scaled(1.1).billed(300_000, 0, 0, 0, 0), (200_000.0 * 3.3 + 100_000.0 * 6.6) / 1e6);
    let json = br#"{"m": {"input_cost_per_token": 1e-06, "output_cost_per_token": 2e-06,
        "input_cost_per_token_above_200k_tokens": 3e-06, "output_cost_per_token_above_200k_tokens": 4e-06,
        "cache_read_input_token_cost_above_200k_tokens": 5e-07, "cache_creation_input_token_cost_above_200k_tokens": 6e-06}}"#;
    let m = PriceTable::from_litellm("p.json", json).unwrap().lookup("m").unwrap().1;
    let a = m.above_200k;
    assert_eq!((a.input, a.output), (Some(3.0), Some(4.0)));
    assert!((a.cached.unwrap() - 0.5).abs() < 1e-9 && (a.write.unwrap() - 6.0).abs() < 1e-9);
}
