//! Model names: the one rule that turns any provider's slug of a model into the canonical name
//! the price table, the cache model, the context window and the per-model rules of `strategy`
//! (which thinking a Claude model keeps) look up. It sits below them all (`cache::prices`
//! re-exports it).

/// Bedrock's cross-region inference-profile prefixes (`us.anthropic.claude-…`, `global.…`).
pub(crate) const BEDROCK_REGIONS: &[&str] = &["us", "us-gov", "eu", "apac", "jp", "au", "ca", "global"];

/// Bedrock's model-provider prefixes (`anthropic.claude-…-v1:0`, `meta.llama…`, `qwen.qwen3-…`).
const BEDROCK_VENDORS: &[&str] = &[
    "ai21",
    "amazon",
    "anthropic",
    "cohere",
    "deepseek",
    "google",
    "meta",
    "minimax",
    "mistral",
    "moonshot",
    "moonshotai",
    "nvidia",
    "openai",
    "qwen",
    "writer",
    "zai",
];

/// The canonical table key of a model slug — the one model-name rule of prices, the cache model
/// and the context window. Lower-cased; a context-size suffix such as Claude Code's `[1m]`
/// dropped; any `provider/` path dropped (`openrouter/anthropic/claude-sonnet-4.5`,
/// `litellm/…`, `amazon-bedrock/…`); a Vertex version (`claude-opus-4-1@20250805`) dropped;
/// a Bedrock id's region and provider (`us.anthropic.`, `anthropic.`) and its version
/// (`-v1`, `-v2:0`) dropped; Ollama's `:cloud` tag dropped (`kimi-k2.5:cloud` = `kimi-k2.5`);
/// `.` read as `-` (`claude-sonnet-4.5` = `claude-sonnet-4-5`).
pub fn normalize(slug: &str) -> String {
    let s = slug.trim().to_ascii_lowercase();
    let s = match s.strip_suffix(']').and_then(|x| x.rsplit_once('[')) {
        Some((base, _)) => base.to_string(),
        None => s,
    };
    let name = s.rsplit('/').next().unwrap_or(&s);
    let name = name.split_once('@').map_or(name, |(base, _)| base);
    // Ollama's `:cloud` tag: the vendor's model run on Ollama's cloud (`kimi-k2.5:cloud`).
    let name = name.strip_suffix(":cloud").filter(|b| !b.is_empty()).unwrap_or(name);
    bedrock(name).unwrap_or(name).replace('.', "-")
}

/// The model of a Bedrock id (`us.anthropic.claude-opus-4-6-v1` → `claude-opus-4-6`,
/// `anthropic.claude-3-5-sonnet-20241022-v2:0` → `claude-3-5-sonnet-20241022`); `None` when
/// `name` has no Bedrock provider prefix.
fn bedrock(name: &str) -> Option<&str> {
    let (first, rest) = name.split_once('.')?;
    let rest = if BEDROCK_REGIONS.contains(&first) {
        let (vendor, model) = rest.split_once('.')?;
        BEDROCK_VENDORS.contains(&vendor).then_some(model)?
    } else {
        BEDROCK_VENDORS.contains(&first).then_some(rest)?
    };
    let rest = match rest.rsplit_once(':') {
        Some((base, n)) if !n.is_empty() && n.bytes().all(|b| b.is_ascii_digit()) => base,
        _ => rest,
    };
    let rest = match rest.rsplit_once("-v") {
        Some((base, n)) if !base.is_empty() && !n.is_empty() && n.bytes().all(|b| b.is_ascii_digit()) => base,
        _ => rest,
    };
    (!rest.is_empty()).then_some(rest)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_provider_form_meets_one_name() {
        for slug in [
            "claude-opus-4-6",
            "amazon-bedrock/us.anthropic.claude-opus-4-6-v1",
            "anthropic.claude-opus-4-6-v1:0",
            "claude-opus-4-6@20250805",
            "openrouter/anthropic/claude-opus-4.6",
            "claude-opus-4-6[1m]",
        ] {
            assert_eq!(normalize(slug), "claude-opus-4-6", "{slug}");
        }
        assert_eq!(normalize("kimi-k2.5:cloud"), "kimi-k2-5");
    }
}
