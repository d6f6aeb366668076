//! The knobs `ctxj tune` sweeps, per harness, each mapped to a replayable strategy
//! (`docs/tune.md`, "Knobs"; anchors: `live-and-tune.md` §6).
//!
//! A [`Config`] is one setting with the exact line to paste; its [`Rule`] turns into a strategy
//! name per session, because thresholds depend on the session's context window and on the
//! tokens before the conversation (system prompt and tools), which `compact-at-Nt` does not count.

/// The harness whose knobs are swept.
#[derive(Debug, Clone, Copy, PartialEq, Eq, serde::Serialize, schemars::JsonSchema)]
#[serde(rename_all = "kebab-case")]
pub enum Harness {
    /// Claude Code: `autoCompactWindow`, `CLAUDE_AUTOCOMPACT_PCT_OVERRIDE`.
    ClaudeCode,
    /// Anthropic API / Agent SDK: `context_management` (`clear_tool_uses_20250919`, `compact_20260112`).
    Api,
    /// Codex: `model_auto_compact_token_limit`.
    Codex,
    /// pi: `compaction.reserveTokens`.
    Pi,
    /// A journal-v1 harness: `context_budget` / `context_target` / `keep_results` (`docs/harness.toml`).
    Journal,
}

impl Harness {
    pub fn name(self) -> &'static str {
        match self {
            Harness::ClaudeCode => "claude-code",
            Harness::Api => "api",
            Harness::Codex => "codex",
            Harness::Pi => "pi",
            Harness::Journal => "journal",
        }
    }

    pub fn parse(s: &str) -> Option<Harness> {
        [Harness::ClaudeCode, Harness::Api, Harness::Codex, Harness::Pi, Harness::Journal]
            .into_iter()
            .find(|h| h.name() == s || (s == "claude" && *h == Harness::ClaudeCode))
    }
}

/// Claude Code's threshold buffer below the auto-compact window: min(max output, 20,000) +
/// 13,000 (`live-and-tune.md` §6.2; 167,000 on 200k, 967,000 on 1M).
pub const CC_OUTPUT_RESERVE: u64 = 20_000;
pub const CC_BUFFER: u64 = 13_000;
/// Codex: unset `model_auto_compact_token_limit` is 90 % of the window (§6.3).
pub const CODEX_DEFAULT_PCT: u64 = 90;
/// pi: `compaction.reserveTokens` default (§6.4).
pub const PI_RESERVE: u64 = 16_384;
/// Anthropic `clear_tool_uses_20250919` defaults: trigger 100,000 input tokens, keep 3 (§6.1).
pub const API_CLEAR_TRIGGER: u64 = 100_000;
pub const API_CLEAR_KEEP: usize = 3;
/// Anthropic `compact_20260112` default trigger and minimum (§6.1).
pub const API_COMPACT_TRIGGER: u64 = 150_000;
pub const API_COMPACT_MIN: u64 = 50_000;
/// JetBrains' observation masking keeps the last M = 10 observations (§6.5).
pub const MASKING_M: usize = 10;

/// How a configuration turns into a strategy.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Rule {
    /// The session as recorded (the harness's own behaviour).
    Recorded,
    /// No context management at all.
    Baseline,
    /// Compact (repeatedly) when the request reaches this many context tokens.
    CompactAt(Threshold),
    /// Clear old tool results above `trigger` request tokens, keeping the `keep` most recent
    /// (`elide-B-T-keep-K` with the smallest target).
    Clear { trigger: u64, keep: usize },
    /// ctxj's own budget rule: `elide-B-T-keep-K`.
    Elide { budget: u64, target: u64, keep: usize },
    /// Every tool result cut to its head and tail (`mid-truncate-N`, N bytes): Codex's
    /// `tool_output_token_limit`.
    MidTruncate { bytes: usize },
}

/// Bytes per token of Codex's output-limit arithmetic (`APPROX_BYTES_PER_TOKEN = 4`,
/// `codex-rs/utils/string/src/truncate.rs`; `../shared/formats/pi-codex-opencode.md`).
pub const CODEX_BYTES_PER_TOKEN: usize = 4;

/// A compaction threshold in context tokens, resolved against a session's window.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Threshold {
    /// Claude Code with `autoCompactWindow` W (None: the model's window): W − 33,000.
    CcWindow(Option<u64>),
    /// Claude Code with `CLAUDE_AUTOCOMPACT_PCT_OVERRIDE`: min(eff × p / 100, eff − 13,000), eff = window − 20,000.
    CcPct(u64),
    /// Half of Claude Code's default threshold (the D2 memo's point).
    CcHalf,
    /// A percentage of the window (Codex default 90 %).
    WindowPct(u64),
    /// The window minus a reserve (pi).
    Reserve(u64),
    /// A fixed number of tokens, capped at the window.
    Tokens(u64),
}

impl Threshold {
    /// The threshold in context tokens for a window of `w` tokens.
    pub fn tokens(self, w: u64) -> u64 {
        let cc = |win: u64| win.saturating_sub(CC_OUTPUT_RESERVE + CC_BUFFER);
        match self {
            Threshold::CcWindow(None) => cc(w),
            Threshold::CcWindow(Some(x)) => cc(x.min(w)),
            Threshold::CcPct(p) => {
                let eff = w.saturating_sub(CC_OUTPUT_RESERVE);
                percent(eff, p).min(eff.saturating_sub(CC_BUFFER))
            }
            Threshold::CcHalf => cc(w) / 2,
            Threshold::WindowPct(p) => percent(w, p),
            Threshold::Reserve(r) => w.saturating_sub(r),
            Threshold::Tokens(t) => t.min(w),
        }
    }
}

/// What a session contributes to resolving a rule.
#[derive(Debug, Clone, Copy)]
pub struct Shape {
    /// The context window (tokens).
    pub window: u64,
    /// Tokens before the conversation (system prompt, tools), which `compact-at` does not count.
    pub prefix: u64,
}

impl Rule {
    /// The strategy name this rule replays as for a session of `shape`.
    pub fn strategy(self, shape: Shape) -> String {
        match self {
            Rule::Recorded => "recorded".into(),
            Rule::Baseline => "baseline".into(),
            Rule::CompactAt(t) => {
                // Never below 1,000 conversation tokens: a threshold under the system prompt
                // would compact every turn.
                let n = t.tokens(shape.window).saturating_sub(shape.prefix).max(1_000);
                format!("compact-at-{n}t-repeat")
            }
            Rule::Clear { trigger, keep } => format!("elide-{}-1-keep-{keep}", trigger.max(2)),
            Rule::Elide { budget, target, keep } => format!("elide-{budget}-{}-keep-{keep}", target.min(budget - 1)),
            Rule::MidTruncate { bytes } => format!("mid-truncate-{bytes}"),
        }
    }
}

/// One configuration of the sweep.
#[derive(Debug, Clone, serde::Serialize, schemars::JsonSchema)]
pub struct Config {
    /// Short id, e.g. `cc-window-400k`, `cc-pct-60`, `api-clear-100k-keep-3`.
    pub name: String,
    /// The knob and its value in the harness's words.
    pub knob: String,
    /// The exact line to paste (settings, environment, config file), or a note when the point is
    /// a reference that the harness cannot be set to.
    pub paste: String,
    /// Whether the harness can be set to this point (references from papers may not be).
    pub settable: bool,
    /// Why the point is named: `recorded`, `harness default`, `half trigger (D2 memo)`,
    /// `masking M=10 (JetBrains)`, `keep-3 (Anthropic default)`, `no management`.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub named: Option<String>,
    #[serde(skip)]
    #[schemars(skip)]
    pub rule: Rule,
}

/// `p` % of `n` (p ≤ 100), without overflow at any window a journal may declare.
fn percent(n: u64, p: u64) -> u64 {
    (u128::from(n) * u128::from(p) / 100) as u64
}

fn k(n: u64) -> String {
    if n % 1_000 == 0 {
        format!("{}k", n / 1_000)
    } else {
        n.to_string()
    }
}

fn cfg(name: String, knob: String, paste: String, rule: Rule) -> Config {
    Config { name, knob, paste, settable: true, named: None, rule }
}

fn named(mut c: Config, why: &str) -> Config {
    c.named = Some(why.into());
    c
}

fn reference(name: &str, knob: &str, rule: Rule, why: &str) -> Config {
    Config {
        name: name.into(),
        knob: knob.into(),
        paste: "(reference point: not a setting of this harness)".into(),
        settable: false,
        named: Some(why.into()),
        rule,
    }
}

fn clear_json(trigger: u64, keep: usize) -> String {
    format!(
        r#""context_management": {{"edits": [{{"type": "clear_tool_uses_20250919", "trigger": {{"type": "input_tokens", "value": {trigger}}}, "keep": {{"type": "tool_uses", "value": {keep}}}}}]}}"#
    )
}

fn compact_json(trigger: u64) -> String {
    format!(
        r#""context_management": {{"edits": [{{"type": "compact_20260112", "trigger": {{"type": "input_tokens", "value": {trigger}}}}}]}}"#
    )
}

/// The configurations swept for `harness`, with `window` the reference context window (the
/// first session's): steps above it are left out.
pub fn grid(harness: Harness, window: u64) -> Vec<Config> {
    // What the user ran: a point to compare with, never recommended (it is no setting).
    let recorded = Config {
        settable: false,
        ..cfg("recorded".into(), "as recorded".into(), "(what you ran)".into(), Rule::Recorded)
    };
    let mut v = vec![named(recorded, "recorded")];
    let masking = Rule::Clear { trigger: 2, keep: MASKING_M };
    let keep3 = Rule::Clear { trigger: API_CLEAR_TRIGGER, keep: API_CLEAR_KEEP };
    match harness {
        Harness::ClaudeCode => {
            v.push(named(
                cfg(
                    "cc-default".into(),
                    "autoCompactWindow unset".into(),
                    "(default: remove autoCompactWindow and CLAUDE_AUTOCOMPACT_PCT_OVERRIDE)".into(),
                    Rule::CompactAt(Threshold::CcWindow(None)),
                ),
                "harness default",
            ));
            for w in [100_000, 150_000, 200_000, 300_000, 400_000, 500_000, 600_000, 700_000, 800_000, 900_000] {
                if w < window {
                    v.push(cfg(
                        format!("cc-window-{}", k(w)),
                        format!("autoCompactWindow = {w}"),
                        format!("\"autoCompactWindow\": {w}"),
                        Rule::CompactAt(Threshold::CcWindow(Some(w))),
                    ));
                }
            }
            for p in (1..=9).map(|p| p * 10) {
                v.push(cfg(
                    format!("cc-pct-{p}"),
                    format!("CLAUDE_AUTOCOMPACT_PCT_OVERRIDE = {p}"),
                    format!("export CLAUDE_AUTOCOMPACT_PCT_OVERRIDE={p}"),
                    Rule::CompactAt(Threshold::CcPct(p)),
                ));
            }
            // The half trigger as the percentage that sets it (on the reference window).
            let eff = window.saturating_sub(CC_OUTPUT_RESERVE).max(1);
            let half = Threshold::CcHalf.tokens(window);
            let pct = ((u128::from(half) * 100 + u128::from(eff) / 2) / u128::from(eff)).clamp(1, 100);
            v.push(named(
                cfg(
                    "cc-half".into(),
                    format!("half the default threshold ({} tokens)", half),
                    format!("export CLAUDE_AUTOCOMPACT_PCT_OVERRIDE={pct}"),
                    Rule::CompactAt(Threshold::CcHalf),
                ),
                "half trigger (D2 memo)",
            ));
            v.push(named(
                cfg("cc-off".into(), "auto-compact off".into(), "export DISABLE_AUTO_COMPACT=1".into(), Rule::Baseline),
                "no management",
            ));
            v.push(reference(
                "masking-10",
                "mask all but the last 10 tool results",
                masking,
                "masking M=10 (JetBrains)",
            ));
            v.push(reference("keep-3", "clear_tool_uses trigger 100k keep 3", keep3, "keep-3 (Anthropic default)"));
        }
        Harness::Api => {
            v.push(named(
                cfg(
                    "api-none".into(),
                    "no context_management".into(),
                    "(no context_management)".into(),
                    Rule::Baseline,
                ),
                "no management",
            ));
            for t in [30_000, 50_000, 100_000, 150_000] {
                for keep in [1, 3, 5, 10] {
                    let c = cfg(
                        format!("api-clear-{}-keep-{keep}", k(t)),
                        format!("clear_tool_uses trigger {t} keep {keep}"),
                        clear_json(t, keep),
                        Rule::Clear { trigger: t, keep },
                    );
                    v.push(match (t, keep) {
                        (API_CLEAR_TRIGGER, API_CLEAR_KEEP) => named(c, "harness default; keep-3 (Anthropic default)"),
                        _ => c,
                    });
                }
            }
            for t in [API_COMPACT_MIN, 100_000, API_COMPACT_TRIGGER, 200_000] {
                if t < window {
                    let c = cfg(
                        format!("api-compact-{}", k(t)),
                        format!("compact_20260112 trigger {t}"),
                        compact_json(t),
                        Rule::CompactAt(Threshold::Tokens(t)),
                    );
                    v.push(if t == API_COMPACT_TRIGGER { named(c, "compact_20260112 default") } else { c });
                }
            }
            v.push(reference(
                "masking-10",
                "mask all but the last 10 tool results",
                masking,
                "masking M=10 (JetBrains)",
            ));
        }
        Harness::Codex => {
            let default = Threshold::WindowPct(CODEX_DEFAULT_PCT);
            v.push(named(
                cfg(
                    "codex-default".into(),
                    format!("model_auto_compact_token_limit unset (90 % of the window: {})", default.tokens(window)),
                    "(default: remove model_auto_compact_token_limit)".into(),
                    Rule::CompactAt(default),
                ),
                "harness default",
            ));
            for p in [20, 30, 40, 50, 60, 70, 80] {
                let t = percent(window, p) / 1_000 * 1_000;
                let c = cfg(
                    format!("codex-limit-{}", k(t)),
                    format!("model_auto_compact_token_limit = {t}"),
                    format!("model_auto_compact_token_limit = {t}"),
                    Rule::CompactAt(Threshold::Tokens(t)),
                );
                v.push(if p == 40 { named(c, "about half the default trigger") } else { c });
            }
            // Below the gpt-5 default of 10,000 tokens (which the recorded outputs already had).
            for t in [2_000, 5_000] {
                v.push(cfg(
                    format!("codex-tool-output-{}", k(t)),
                    format!("tool_output_token_limit = {t}"),
                    format!("tool_output_token_limit = {t}"),
                    Rule::MidTruncate { bytes: t as usize * CODEX_BYTES_PER_TOKEN },
                ));
            }
            v.push(reference(
                "masking-10",
                "mask all but the last 10 tool results",
                masking,
                "masking M=10 (JetBrains)",
            ));
            v.push(reference("keep-3", "clear_tool_uses trigger 100k keep 3", keep3, "keep-3 (Anthropic default)"));
        }
        Harness::Pi => {
            for r in [PI_RESERVE, 32_768, 49_152, 65_536, 98_304, 131_072, window / 2] {
                if r >= window || v.iter().any(|c| c.name == format!("pi-reserve-{r}")) {
                    continue;
                }
                let c = cfg(
                    format!("pi-reserve-{r}"),
                    format!("compaction.reserveTokens = {r}"),
                    format!("\"compaction\": {{\"reserveTokens\": {r}}}"),
                    Rule::CompactAt(Threshold::Reserve(r)),
                );
                v.push(match r {
                    PI_RESERVE => named(c, "harness default"),
                    _ if r == window / 2 => named(c, "half the window"),
                    _ => c,
                });
            }
            v.push(reference(
                "masking-10",
                "mask all but the last 10 tool results",
                masking,
                "masking M=10 (JetBrains)",
            ));
            v.push(reference("keep-3", "clear_tool_uses trigger 100k keep 3", keep3, "keep-3 (Anthropic default)"));
        }
        Harness::Journal => {
            v.push(named(
                cfg("journal-none".into(), "context_budget = 0".into(), "context_budget = 0".into(), Rule::Baseline),
                "no management",
            ));
            for p in [30, 50, 70, 90] {
                for keep in [3, 5, 10] {
                    let b = percent(window, p) / 1_000 * 1_000;
                    let t = percent(b, 70);
                    let c = cfg(
                        format!("journal-{}-keep-{keep}", k(b)),
                        format!("context_budget = {b}, context_target = {t}, keep_results = {keep}"),
                        format!("context_budget = {b}\ncontext_target = {t}\nkeep_results = {keep}"),
                        Rule::Elide { budget: b.max(2), target: t, keep },
                    );
                    v.push(if p == 90 && keep == 5 { named(c, "harness default (docs/harness.toml)") } else { c });
                }
            }
            v.push(reference(
                "masking-10",
                "mask all but the last 10 tool results",
                masking,
                "masking M=10 (JetBrains)",
            ));
        }
    }
    v
}

#[cfg(test)]
mod tests {
    use super::*;

    /// `tune` on a journal declaring `ctx_window` = u64::MAX (the hostile matrix's
    /// `arith-extremes`) panicked with "attempt to multiply with overflow" building the grid.
    #[test]
    fn regression_tune_grid_overflowed_at_the_largest_window() {
        for h in [Harness::ClaudeCode, Harness::Api, Harness::Codex, Harness::Pi, Harness::Journal] {
            assert!(!grid(h, u64::MAX).is_empty());
        }
        for t in [Threshold::CcPct(90), Threshold::WindowPct(90)] {
            assert!(t.tokens(u64::MAX) > u64::MAX / 2);
        }
    }

    #[test]
    fn claude_code_thresholds_match_the_documented_defaults() {
        assert_eq!(Threshold::CcWindow(None).tokens(200_000), 167_000);
        assert_eq!(Threshold::CcWindow(None).tokens(1_000_000), 967_000);
        assert_eq!(Threshold::CcWindow(Some(400_000)).tokens(1_000_000), 367_000);
        // Capped at the model window.
        assert_eq!(Threshold::CcWindow(Some(400_000)).tokens(200_000), 167_000);
        // PCT is lower-only: 90 % of 180k = 162k < 167k; 100 % stays at the default.
        assert_eq!(Threshold::CcPct(90).tokens(200_000), 162_000);
        assert_eq!(Threshold::CcPct(100).tokens(200_000), 167_000);
        assert_eq!(Threshold::WindowPct(90).tokens(272_000), 244_800);
        assert_eq!(Threshold::Reserve(PI_RESERVE).tokens(200_000), 183_616);
    }

    #[test]
    fn every_grid_has_the_named_points_and_parses() {
        for h in [Harness::ClaudeCode, Harness::Api, Harness::Codex, Harness::Pi, Harness::Journal] {
            for w in [128_000, 200_000, 1_000_000] {
                let g = grid(h, w);
                assert!(g.iter().any(|c| c.named.as_deref() == Some("recorded")), "{h:?}");
                assert!(g.iter().any(|c| c.named.as_deref().is_some_and(|n| n.contains("harness default"))), "{h:?}");
                assert!(g.iter().any(|c| c.name == "masking-10"), "{h:?}");
                let names: std::collections::HashSet<&str> = g.iter().map(|c| c.name.as_str()).collect();
                assert_eq!(names.len(), g.len(), "{h:?}: duplicate names");
                for c in &g {
                    let s = c.rule.strategy(Shape { window: w, prefix: 20_000 });
                    crate::strategy::parse(&s).unwrap_or_else(|e| panic!("{}: {e}", c.name));
                }
            }
        }
        let cc = grid(Harness::ClaudeCode, 200_000);
        assert!(cc.iter().any(|c| c.named.as_deref() == Some("half trigger (D2 memo)")));
        assert!(cc.iter().any(|c| c.paste == "\"autoCompactWindow\": 100000"));
        assert!(!cc.iter().any(|c| c.paste == "\"autoCompactWindow\": 200000"), "not below the window");
    }

    #[test]
    fn compact_thresholds_leave_out_the_prefix() {
        let r = Rule::CompactAt(Threshold::CcWindow(None));
        assert_eq!(r.strategy(Shape { window: 200_000, prefix: 17_000 }), "compact-at-150000t-repeat");
        assert_eq!(r.strategy(Shape { window: 20_000, prefix: 17_000 }), "compact-at-1000t-repeat");
    }
}
