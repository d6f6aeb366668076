//! The automatic compaction rules of the agents ctxj imports (OpenCode/Kilo, Gemini CLI, Qwen
//! Code, Cline, Kimi Code, pi/OpenClaw, Codex), as each agent's own source documents them, for their
//! harness profiles ([`super::profile`]). Each rule gives two sizes of a window `w`:
//!
//! * the **point**: past it the agent compacts on its own before the next request, so a request
//!   above it with no compaction before it is `compact-missing`;
//! * the **floor**: an automatic compaction at or below it is `compact-trigger` (early).
//!
//! Where the versions of an agent differ, the point is the highest any version uses and the floor
//! the lowest, so a finding holds under every version read (the journal does not record which
//! one ran). Settings a user can change (a ratio, a reserve) are judged at their defaults. The
//! sources are cited beside each rule and in docs/rules.md; nothing here comes from a sample.

/// One agent's rule.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum AgentRule {
    OpenCode,
    Gemini,
    Qwen,
    Cline,
    Kimi,
    Pi,
    Codex,
}

impl AgentRule {
    /// Where the agent compacts on its own in a window of `w` tokens.
    pub fn point(self, w: u64) -> u64 {
        match self {
            AgentRule::OpenCode => opencode_point(w),
            AgentRule::Gemini => gemini_point(w),
            AgentRule::Qwen => qwen_point(w),
            AgentRule::Cline => cline_point(w),
            AgentRule::Kimi => kimi_point(w),
            AgentRule::Pi => pi_point(w),
            AgentRule::Codex => codex_point(w),
        }
    }

    /// At or below this size an automatic compaction is early under every version read.
    pub fn floor(self, w: u64) -> u64 {
        match self {
            AgentRule::Gemini => gemini_floor(w),
            AgentRule::Pi => pi_floor(w),
            other => other.point(w),
        }
    }
}

/// `p` ‰ of `w`, rounded down.
fn per_mille(w: u64, p: u64) -> u64 {
    (w as u128 * p as u128 / 1000) as u64
}

/// OpenCode (anomalyco/opencode v1.2.10, `packages/opencode/src/session/compaction.ts`,
/// `isOverflow`): compaction once the last response's `input + cache.read + output` reaches the
/// usable window, `w − min(COMPACTION_BUFFER 20,000, the model's max output)` (setting
/// `compaction.reserved`). With a max output of at least 20,000 (the models OpenCode is used with)
/// the point is `w − 20,000`; a smaller max output only moves the point up, never below
/// `w − 20,000`, which is therefore also the floor. Kilo CLI is an OpenCode fork with its schema
/// (rules not read separately). The prune pass (`PRUNE_PROTECT` 40,000, `PRUNE_MINIMUM` 20,000)
/// clears old tool outputs; it is not a compaction and not judged here.
pub fn opencode_point(w: u64) -> u64 {
    w.saturating_sub(OPENCODE_BUFFER)
}

/// OpenCode's `COMPACTION_BUFFER`.
pub const OPENCODE_BUFFER: u64 = 20_000;

/// Gemini CLI (google-gemini/gemini-cli, `packages/core/src/services/chatCompressionService.ts`):
/// compression when the last prompt's token count reaches `threshold × w`, threshold
/// `DEFAULT_COMPRESSION_TOKEN_THRESHOLD` 0.5 in current versions (setting
/// `model.chatCompression.contextPercentageThreshold`), 0.7 (`COMPRESSION_TOKEN_THRESHOLD`) in
/// earlier ones; the last 30 % of the history is kept (`COMPRESSION_PRESERVE_THRESHOLD`). Point:
/// 70 % (past it every version compresses); floor: 50 %.
pub fn gemini_point(w: u64) -> u64 {
    per_mille(w, 700)
}

/// Gemini CLI's floor: 50 % of the window (the lower of its versions' thresholds).
pub fn gemini_floor(w: u64) -> u64 {
    per_mille(w, 500)
}

/// Qwen Code (QwenLM/qwen-code, `packages/core/src/services/chatCompressionService.ts`
/// `computeThresholds`, read at 00b481a3): `auto = min(DEFAULT_PCT 0.85 × w, w − SUMMARY_RESERVE
/// 20,000 − AUTOCOMPACT_BUFFER 13,000)`, the proportional value alone when that ceiling is not
/// positive (setting `chatCompression.contextPercentageThreshold` replaces 0.85). Point and floor
/// are both `auto`. Earlier releases (a Gemini CLI fork) were not read, and Qwen Code also
/// compresses below `auto` when screenshots pile up (`image_overflow`), which a
/// `chat_compression` record does not say: an early compaction of a session with many images
/// may be that.
pub fn qwen_point(w: u64) -> u64 {
    let proportional = per_mille(w, 850);
    match w.checked_sub(33_000).filter(|c| *c > 0) {
        Some(ceiling) => proportional.min(ceiling),
        None => proportional,
    }
}

/// Cline (cline/cline, `src/core/context/context-management/context-window-utils.ts`
/// `getContextWindowInfo`, and `ContextManager`): the history is truncated (half of it, a quarter
/// kept when still too large) once the previous request's total tokens reach `maxAllowedSize`:
/// `w − 27,000` for a 64k window, `w − 30,000` for 128k, `w − 40,000` for 200k, else
/// `max(w − 40,000, 0.8 × w)`. This is the VS Code extension's rule (the legacy `tasks/` logs);
/// the Cline SDK's own `compaction.json` trigger was not found in its source, so SDK sessions are
/// judged by the extension's rule. Point and floor are both `maxAllowedSize`.
pub fn cline_point(w: u64) -> u64 {
    match w {
        64_000 => w - 27_000,
        128_000 => w - 30_000,
        200_000 => w - 40_000,
        _ => w.saturating_sub(40_000).max(per_mille(w, 800)),
    }
}

/// Kimi Code CLI (MoonshotAI/kimi-cli, `src/kimi_cli/soul/compaction.py` `should_auto_compact`
/// and `src/kimi_cli/config.py` `LoopControl`): compaction when `tokens ≥ w ×
/// compaction_trigger_ratio` (default 0.85) or `tokens + reserved_context_size` (default 50,000)
/// `≥ w`, whichever comes first: `min(0.85 × w, w − 50,000)`. Point and floor are both that.
pub fn kimi_point(w: u64) -> u64 {
    per_mille(w, 850).min(w.saturating_sub(KIMI_RESERVED))
}

/// Kimi CLI's default `reserved_context_size`.
pub const KIMI_RESERVED: u64 = 50_000;

/// pi (badlogic/pi-mono, coding-agent compaction settings; OpenClaw runs pi's session manager):
/// compaction when the context exceeds `w − reserveTokens` (default 16,384), keeping the last
/// `keepRecentTokens` (20,000). OpenClaw may configure a larger `compaction.reserveTokens`, which
/// only lowers its point: the point is pi's default `w − 16,384`; the floor, below which no
/// default or larger reserve up to 2 × the default would compact, is `w − 32,768`.
pub fn pi_point(w: u64) -> u64 {
    w.saturating_sub(PI_RESERVE)
}

/// pi's floor: `w − 2 × reserveTokens`.
pub fn pi_floor(w: u64) -> u64 {
    w.saturating_sub(2 * PI_RESERVE)
}

/// pi's default `compaction.reserveTokens`.
pub const PI_RESERVE: u64 = 16_384;

/// Codex CLI (openai/codex `codex-rs`, read at 4e30281a through its mirror, formats
/// pi-codex-opencode.md §2.7): `ModelInfo::auto_compact_token_limit` in
/// `protocol/src/openai_models.rs` is `min(model_auto_compact_token_limit, 9/10 × context_window)`
/// (the configured limit alone when no window is known), and `core/src/session/turn.rs` compacts
/// before a turn (and mid-turn before a follow-up request) once the total tokens the last
/// response reported (`get_total_token_usage`: input + output) reach it. Earlier releases
/// (`models_manager/model_family.rs`) used the same 90 % default. The configured limit can only
/// lower the point and is a user setting, taken at its default (none): point and floor are both
/// 90 % of the model's window (`context_window`, not the 95 % "effective" window a rollout's
/// `model_context_window` reports).
pub fn codex_point(w: u64) -> u64 {
    (w as u128 * 9 / 10) as u64
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn points_of_each_agent_on_common_windows() {
        assert_eq!(opencode_point(200_000), 180_000);
        assert_eq!((gemini_point(1_048_576), gemini_floor(1_048_576)), (734_003, 524_288));
        assert_eq!(qwen_point(1_000_000), 850_000);
        assert_eq!(qwen_point(128_000), 95_000);
        assert_eq!(qwen_point(20_000), 17_000);
        assert_eq!([cline_point(64_000), cline_point(128_000), cline_point(200_000)], [37_000, 98_000, 160_000]);
        assert_eq!(cline_point(1_000_000), 960_000);
        assert_eq!(cline_point(32_000), 25_600);
        assert_eq!(kimi_point(262_144), 212_144);
        assert_eq!(kimi_point(1_000_000), 850_000);
        assert_eq!((pi_point(200_000), pi_floor(200_000)), (183_616, 167_232));
        assert_eq!(opencode_point(10_000), 0);
        assert_eq!(codex_point(272_000), 244_800);
    }
}
