//! The compaction rules of the agents the new importers read, as their sources document them:
//! data for the harness profiles of `audit` (`check::profile`, another module's area, which can
//! turn each row into a `Profile`). Only rules read in the agent's own source or docs are
//! listed; an agent whose rules were not found has `None` fields and says so in `source`.

/// When an agent compacts on its own and what it keeps.
#[derive(Debug, Clone, Copy, PartialEq, serde::Serialize)]
pub struct AgentCompaction {
    /// The `harness` an importer writes into the `session` record.
    pub harness: &'static str,
    /// Auto compaction when the history exceeds this fraction of the model's window.
    pub threshold: Option<f64>,
    /// Or: when the context plus this many reserved tokens exceeds the window.
    pub reserve_tokens: Option<u64>,
    /// The fraction of the latest history kept verbatim after a compaction.
    pub keep_fraction: Option<f64>,
    /// The tokens of the latest history kept verbatim after a compaction.
    pub keep_tokens: Option<u64>,
    /// Where the rule was read.
    pub source: &'static str,
}

/// One row per harness the new importers write.
pub const AGENT_COMPACTION: &[AgentCompaction] = &[
    AgentCompaction {
        harness: "gemini-cli",
        threshold: Some(0.5),
        reserve_tokens: None,
        keep_fraction: Some(0.3),
        keep_tokens: None,
        source: "google-gemini/gemini-cli packages/core/src/services/chatCompressionService.ts: \
                 DEFAULT_COMPRESSION_TOKEN_THRESHOLD = 0.5 (setting model.chatCompression), \
                 COMPRESSION_PRESERVE_THRESHOLD = 0.3",
    },
    AgentCompaction {
        harness: "pi",
        threshold: None,
        reserve_tokens: Some(16_384),
        keep_fraction: None,
        keep_tokens: Some(20_000),
        source: "badlogic/pi-mono coding-agent compaction settings (reserveTokens 16384, keepRecentTokens \
                 20000); OpenClaw sessions use pi's SessionManager and are imported as pi",
    },
    AgentCompaction {
        harness: "qwen-code",
        threshold: None,
        reserve_tokens: None,
        keep_fraction: None,
        keep_tokens: None,
        source: "a Gemini CLI fork; its own threshold was not read (the log records each \
                 chat_compression, which the importer keeps)",
    },
    AgentCompaction {
        harness: "kimi-code",
        threshold: None,
        reserve_tokens: None,
        keep_fraction: None,
        keep_tokens: None,
        source: "not read; the log records each compaction (context.apply_compaction with tokensBefore/After)",
    },
    AgentCompaction {
        harness: "cline",
        threshold: None,
        reserve_tokens: None,
        keep_fraction: None,
        keep_tokens: None,
        source: "not read; the SDK's compaction.json records messagesRemoved and usageBefore",
    },
    AgentCompaction {
        harness: "opencode",
        threshold: None,
        reserve_tokens: Some(20_000),
        keep_fraction: None,
        keep_tokens: None,
        source: "anomalyco/opencode v1.2.10 packages/opencode/src/session/compaction.ts isOverflow: \
                 usable = input limit − min(COMPACTION_BUFFER 20000, max output) (config compaction.reserved); \
                 no tail kept in v1.2.10 (later versions keep recent turns, tail_start_id); prune replaces \
                 completed tool outputs beyond PRUNE_PROTECT 40000 tokens when over PRUNE_MINIMUM 20000",
    },
    AgentCompaction {
        harness: "kilo",
        threshold: None,
        reserve_tokens: Some(20_000),
        keep_fraction: None,
        keep_tokens: None,
        source: "Kilo CLI is an OpenCode fork with its schema; OpenCode's rules assumed, not read in Kilo's source",
    },
];

/// The row of `harness`, if any.
pub fn compaction_of(harness: &str) -> Option<&'static AgentCompaction> {
    AGENT_COMPACTION.iter().find(|a| a.harness == harness)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_new_harness_has_one_row_and_fractions_are_fractions() {
        for h in ["gemini-cli", "qwen-code", "kimi-code", "cline", "pi", "opencode", "kilo"] {
            assert_eq!(AGENT_COMPACTION.iter().filter(|a| a.harness == h).count(), 1, "{h}");
            assert!(crate::tokens::IMPORTED.contains(&h), "{h} is not an importer's harness");
        }
        for a in AGENT_COMPACTION {
            for f in [a.threshold, a.keep_fraction].into_iter().flatten() {
                assert!(f > 0.0 && f < 1.0, "{}", a.harness);
            }
        }
        assert_eq!(compaction_of("gemini-cli").and_then(|a| a.threshold), Some(0.5));
    }
}
