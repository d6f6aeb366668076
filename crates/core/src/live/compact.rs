//! Where the harness will compact: this user's observed compactions (Claude Code's
//! `compact_boundary` lines carry the context size that triggered them, `compactMetadata.preTokens`)
//! for the same model, else Claude Code's documented rule with the user's overrides
//! (`../shared/design/live-and-tune.md` §6.2): threshold = auto-compact window − min(max output,
//! 20,000) − 13,000, the window being `CLAUDE_CODE_AUTO_COMPACT_WINDOW` (a plain integer,
//! 100,000 up to the model's window), else the `autoCompactWindow` setting, else the model's
//! window; `CLAUDE_AUTOCOMPACT_PCT_OVERRIDE` (1–100) lowers it to min(effective × pct, effective −
//! 13,000); `DISABLE_AUTO_COMPACT=1` or `DISABLE_COMPACT=1`: no automatic compaction.

use std::borrow::Cow;

use serde::Deserialize;

/// The output reserve Claude Code keeps below the window (min(max output, 20,000); every current
/// model's max output is above 20,000).
pub const OUTPUT_RESERVE: u64 = 20_000;
/// The buffer below the effective window.
pub const BUFFER: u64 = 13_000;
/// Claude Code's warning band: this many tokens below the threshold.
pub const WARNING_BAND: u64 = 20_000;

/// One compaction seen in a transcript.
#[derive(Debug, Clone, PartialEq, Eq, serde::Serialize, serde::Deserialize, schemars::JsonSchema)]
pub struct Observed {
    /// The model of the last call before it (`None` when no call preceded it).
    pub model: Option<String>,
    /// The harness version written on the line.
    pub version: Option<String>,
    /// The context size that triggered it.
    pub pre_tokens: u64,
    /// Triggered automatically (not `/compact`).
    pub auto: bool,
    pub ts: String,
}

#[derive(Deserialize)]
struct Line<'a> {
    #[serde(default, borrow)]
    subtype: Option<Cow<'a, str>>,
    #[serde(default, borrow)]
    version: Option<Cow<'a, str>>,
    #[serde(default, borrow)]
    timestamp: Option<Cow<'a, str>>,
    #[serde(default, rename = "compactMetadata", borrow)]
    meta: Option<Meta<'a>>,
}

#[derive(Deserialize)]
#[serde(rename_all = "camelCase")]
struct Meta<'a> {
    #[serde(default, borrow)]
    trigger: Option<Cow<'a, str>>,
    #[serde(default)]
    pre_tokens: Option<u64>,
}

/// The compactions with a recorded size among Claude Code `lines` (model not yet known).
pub fn scan(lines: &[u8]) -> Vec<Observed> {
    let finder = memchr::memmem::Finder::new(b"compact_boundary");
    crate::journal::typed::lines(lines)
        .filter(|l| finder.find(l).is_some())
        .filter_map(|l| serde_json::from_slice::<Line>(l).ok())
        .filter(|l| l.subtype.as_deref() == Some("compact_boundary"))
        .filter_map(|l| {
            let m = l.meta?;
            Some(Observed {
                model: None,
                version: l.version.map(Cow::into_owned),
                pre_tokens: m.pre_tokens?,
                auto: m.trigger.as_deref() == Some("auto"),
                ts: l.timestamp.map(Cow::into_owned).unwrap_or_default(),
            })
        })
        .collect()
}

/// Where the point comes from.
#[derive(Debug, Clone, Copy, PartialEq, Eq, serde::Serialize, serde::Deserialize, schemars::JsonSchema)]
#[serde(rename_all = "snake_case")]
pub enum Source {
    /// This user's automatic compactions with the same model (the smallest `preTokens`).
    Observed,
    /// The documented rule.
    Estimated,
}

/// The context size at which the harness compacts.
#[derive(Debug, Clone, Copy, PartialEq, Eq, serde::Serialize, serde::Deserialize, schemars::JsonSchema)]
pub struct Point {
    pub tokens: u64,
    pub source: Source,
}

/// The user's overrides of the rule.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct Overrides {
    /// `CLAUDE_CODE_AUTO_COMPACT_WINDOW`, else the `autoCompactWindow` setting.
    pub window: Option<u64>,
    /// `CLAUDE_AUTOCOMPACT_PCT_OVERRIDE`.
    pub pct: Option<u64>,
    /// `DISABLE_AUTO_COMPACT=1` / `DISABLE_COMPACT=1`.
    pub disabled: bool,
}

impl Overrides {
    /// From the environment (`env`) and the `autoCompactWindow` of Claude Code's settings
    /// (`settings`, the parsed `settings.json`).
    pub fn read(env: &dyn Fn(&str) -> Option<String>, settings: Option<&serde_json::Value>) -> Overrides {
        let int = |k: &str| env(k).and_then(|v| v.trim().parse::<u64>().ok());
        let on = |k: &str| env(k).is_some_and(|v| v.trim() == "1");
        Overrides {
            window: int("CLAUDE_CODE_AUTO_COMPACT_WINDOW")
                .or_else(|| settings.and_then(|s| s.get("autoCompactWindow")).and_then(serde_json::Value::as_u64)),
            pct: int("CLAUDE_AUTOCOMPACT_PCT_OVERRIDE").filter(|p| (1..=100).contains(p)),
            disabled: on("DISABLE_AUTO_COMPACT") || on("DISABLE_COMPACT"),
        }
    }
}

impl Overrides {
    /// The user's: the process environment and `settings.json` of Claude Code's configuration
    /// folder (`$CLAUDE_CONFIG_DIR`, else `~/.claude`).
    pub fn from_user() -> Overrides {
        let home = std::env::var_os("CLAUDE_CONFIG_DIR")
            .filter(|v| !v.is_empty())
            .map(std::path::PathBuf::from)
            .or_else(|| dirs::home_dir().map(|h| h.join(".claude")));
        let settings = home
            .and_then(|h| crate::journal::input::read_regular(&h.join("settings.json")).ok())
            .and_then(|b| serde_json::from_slice::<serde_json::Value>(&b).ok());
        Overrides::read(&|k| std::env::var(k).ok(), settings.as_ref())
    }
}

/// The documented threshold for a model whose window is `window`.
pub fn estimated(window: u64, o: &Overrides) -> Option<u64> {
    if o.disabled {
        return None;
    }
    let w = o.window.map_or(window, |w| w.clamp(100_000, window.max(100_000)).min(window));
    let effective = w.saturating_sub(OUTPUT_RESERVE);
    let rule = effective.saturating_sub(BUFFER);
    Some(match o.pct {
        Some(p) => (effective * p / 100).min(rule),
        None => rule,
    })
}

/// The compaction point of `model`: the smallest automatic `preTokens` observed with it (the
/// same harness version preferred), else [`estimated`] from its window; `None` when neither is
/// known or the user disabled automatic compaction.
pub fn point(model: Option<&str>, version: Option<&str>, observed: &[Observed], o: &Overrides) -> Option<Point> {
    if o.disabled {
        return None;
    }
    let model = model?;
    // An override moves the threshold: observations made without it no longer tell it.
    if o.window.is_none() && o.pct.is_none() {
        let same = |v: bool| {
            observed
                .iter()
                .filter(|c| c.auto && c.model.as_deref() == Some(model))
                .filter(|c| !v || c.version.as_deref() == version)
                .map(|c| c.pre_tokens)
                .min()
        };
        if let Some(t) = same(true).or_else(|| same(false)) {
            return Some(Point { tokens: t, source: Source::Observed });
        }
    }
    let window = crate::cache::window::context_window(model)?;
    estimated(window, o).map(|tokens| Point { tokens, source: Source::Estimated })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_documented_rule_gives_167k_on_200k_and_967k_on_1m() {
        let none = Overrides::default();
        assert_eq!(estimated(200_000, &none), Some(167_000));
        assert_eq!(estimated(1_000_000, &none), Some(967_000));
        let pct = Overrides { pct: Some(50), ..none };
        assert_eq!(estimated(200_000, &pct), Some(90_000));
        let win = Overrides { window: Some(500), ..none };
        assert_eq!(estimated(1_000_000, &win), Some(67_000), "a plain 500 clamps to 100k");
        assert_eq!(estimated(200_000, &Overrides { disabled: true, ..none }), None);
        let env = |k: &str| (k == "CLAUDE_AUTOCOMPACT_PCT_OVERRIDE").then(|| "70".to_string());
        assert_eq!(Overrides::read(&env, None).pct, Some(70));
    }

    #[test]
    fn observed_auto_compactions_win_over_the_rule() {
        let line = r#"{"type":"system","subtype":"compact_boundary","version":"2.0.1","timestamp":"t","compactMetadata":{"trigger":"auto","preTokens":166500}}
{"type":"system","subtype":"compact_boundary","compactMetadata":{"trigger":"manual","preTokens":20000}}
"#;
        let mut seen = scan(line.as_bytes());
        assert_eq!(seen.len(), 2);
        for s in &mut seen {
            s.model = Some("claude-sonnet-4-5".into());
        }
        let p = point(Some("claude-sonnet-4-5"), Some("2.0.1"), &seen, &Overrides::default()).unwrap();
        assert_eq!(p, Point { tokens: 166_500, source: Source::Observed }, "the manual one is not the threshold");
        let p = point(Some("claude-opus-4-1"), None, &seen, &Overrides::default()).unwrap();
        assert_eq!(p.source, Source::Estimated);
    }
}
