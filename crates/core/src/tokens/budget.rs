//! Budget settings from a harness TOML (`journal-v1.md` §6, seed `000_*` «Бюджет и окно»).
//!
//! For a model slug: the `[models."<prefix>"]` profile with the **longest** prefix of the slug
//! applies; a profile value overrides the top-level value of the same key, except that a non-zero
//! top-level `context_budget` beats the profile's; then the auto rules fill what is still 0
//! (`context_budget`: 100,000 when `ctx_window` ≤ 300,000, else 200,000; `context_target`: 70% of
//! the budget, rounded down). A target at or above the budget is reported and replaced by the
//! auto rule. A key absent everywhere takes the seed's example value (`ctx_window` 1,000,000,
//! `context_reserve` 8,192, `keep_results` 5, budget and target 0 = auto).
//!
//! Every value comes with the rule that produced it, for `ctxj budget`.

use crate::text::thousands;
use std::collections::BTreeMap;

use toml::Value;

/// The five settings, in spec order.
pub const KEYS: [&str; 5] = ["ctx_window", "context_budget", "context_reserve", "context_target", "keep_results"];

/// The model's window when nothing says (the seed's example value).
pub const DEFAULT_WINDOW: u64 = 1_000_000;
/// `context_reserve` when nothing says.
pub const DEFAULT_RESERVE: u64 = 8192;
/// `keep_results` when nothing says.
pub const DEFAULT_KEEP_RESULTS: u64 = 5;
/// Windows up to this size get the small auto budget.
pub const SMALL_WINDOW: u64 = 300_000;

/// The seed's example values for keys the file does not set.
pub fn default_of(key: &str) -> u64 {
    match key {
        "ctx_window" => DEFAULT_WINDOW,
        "context_reserve" => DEFAULT_RESERVE,
        "keep_results" => DEFAULT_KEEP_RESULTS,
        _ => 0,
    }
}

/// The auto rule for a `context_budget` of 0: 100,000 when the window is at most 300,000, else
/// 200,000.
pub fn auto_budget(window: u64) -> u64 {
    if window <= SMALL_WINDOW {
        100_000
    } else {
        200_000
    }
}

/// The auto rule for a `context_target` of 0 (or at or above the budget): 70% of the budget,
/// rounded down. Exact for every `u64` (no `budget * 7` that could overflow: a
/// `context_budget = 9223372036854775807` once gave a 10 % target).
pub fn auto_target(budget: u64) -> u64 {
    budget / 10 * 7 + budget % 10 * 7 / 10
}

/// The settings in force for a journal's `ctx` settings, with the auto rules applied.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct InForce {
    /// `ctx_window` when recorded and non-zero.
    pub window: Option<u64>,
    pub budget: u64,
    pub target: u64,
    pub reserve: u64,
    pub keep_results: u64,
}

impl InForce {
    /// The window these settings assume: the recorded one, else journal-v1 §6's default
    /// ([`DEFAULT_WINDOW`], which the auto budget assumes too).
    pub fn assumed_window(&self) -> u64 {
        self.window.unwrap_or(DEFAULT_WINDOW)
    }

    /// `ctx_window − context_reserve`: what a request may fill (journal-v1 §6).
    pub fn room(&self) -> u64 {
        self.assumed_window().saturating_sub(self.reserve)
    }

    /// The budget does not fit in [`InForce::room`]: the one rule `audit`'s `budget-over-window`
    /// and `ctxj budget`'s exit 1 share.
    pub fn over_window(&self) -> bool {
        self.budget > self.room()
    }
}

/// Applies the defaults and auto rules to recorded settings: `context_budget` 0/absent →
/// [`auto_budget`] of the window ([`DEFAULT_WINDOW`] when absent); `context_target` 0/absent or ≥
/// budget → [`auto_target`]; `context_reserve` and `keep_results` absent → their defaults.
pub fn in_force(c: &crate::journal::CtxSettings) -> InForce {
    let window = c.ctx_window.filter(|w| *w > 0);
    let budget = match c.context_budget {
        Some(b) if b > 0 => b,
        _ => auto_budget(window.unwrap_or(DEFAULT_WINDOW)),
    };
    let target = match c.context_target {
        Some(t) if t > 0 && t < budget => t,
        _ => auto_target(budget),
    };
    InForce {
        window,
        budget,
        target,
        reserve: c.context_reserve.unwrap_or(DEFAULT_RESERVE),
        keep_results: c.keep_results.unwrap_or(DEFAULT_KEEP_RESULTS),
    }
}

/// A harness configuration: top-level values and per-prefix profiles.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Config {
    pub top: BTreeMap<String, u64>,
    pub profiles: BTreeMap<String, BTreeMap<String, u64>>,
    /// Keys the file holds that are not settings (ignored, reported).
    pub ignored: Vec<String>,
}

/// A configuration that cannot be read.
#[derive(Debug, thiserror::Error)]
pub enum ConfigError {
    #[error("{file}: not TOML: {msg}")]
    Toml { file: String, msg: String },
    #[error("{file}: `{key}` must be a non-negative integer, found {found}")]
    Value { file: String, key: String, found: String },
    #[error("{file}: `models` must be a table of tables (`[models.\"vendor/model\"]`)")]
    Models { file: String },
    #[error("{file}: not a harness configuration: none of {keys} is set, and it holds only other keys ({found})", keys = KEYS.join(", "))]
    NoSettings { file: String, found: String },
    #[error("{file}: unknown key(s) {found} (--strict)")]
    Unknown { file: String, found: String },
}

fn int(file: &str, key: &str, v: &Value) -> Result<u64, ConfigError> {
    match v {
        Value::Integer(i) if *i >= 0 => Ok(*i as u64),
        other => Err(ConfigError::Value { file: file.into(), key: key.into(), found: other.to_string() }),
    }
}

impl Config {
    /// Parses a harness TOML.
    pub fn parse(file: &str, text: &str) -> Result<Config, ConfigError> {
        let root: toml::Table = text
            .parse()
            .map_err(|e: toml::de::Error| ConfigError::Toml { file: file.into(), msg: e.message().into() })?;
        let mut c = Config::default();
        for (k, v) in &root {
            if KEYS.contains(&k.as_str()) {
                c.top.insert(k.clone(), int(file, k, v)?);
            } else if k == "models" {
                let t = v.as_table().ok_or_else(|| ConfigError::Models { file: file.into() })?;
                for (prefix, p) in t {
                    let p = p.as_table().ok_or_else(|| ConfigError::Models { file: file.into() })?;
                    let mut m = BTreeMap::new();
                    for (pk, pv) in p {
                        if KEYS.contains(&pk.as_str()) {
                            m.insert(pk.clone(), int(file, &format!("models.\"{prefix}\".{pk}"), pv)?);
                        } else {
                            c.ignored.push(format!("models.\"{prefix}\".{pk}"));
                        }
                    }
                    c.profiles.insert(prefix.clone(), m);
                }
            } else {
                c.ignored.push(k.clone());
            }
        }
        if c.top.is_empty() && c.profiles.is_empty() && !c.ignored.is_empty() {
            // `budget --config Cargo.toml` once resolved the defaults without a word.
            return Err(ConfigError::NoSettings { file: file.into(), found: c.ignored_list() });
        }
        Ok(c)
    }

    /// Parses a harness TOML; with `strict`, a key that is not a setting is an error.
    pub fn parse_checked(file: &str, text: &str, strict: bool) -> Result<Config, ConfigError> {
        let c = Config::parse(file, text)?;
        if strict && !c.ignored.is_empty() {
            return Err(ConfigError::Unknown { file: file.into(), found: c.ignored_list() });
        }
        Ok(c)
    }

    /// The ignored keys, quoted and comma-separated (the first 10, then how many more).
    pub fn ignored_list(&self) -> String {
        let mut v: Vec<String> = self.ignored.iter().take(10).map(|k| format!("`{k}`")).collect();
        if self.ignored.len() > 10 {
            v.push(format!("{} more", self.ignored.len() - 10));
        }
        v.join(", ")
    }

    /// The profile with the longest prefix of `slug`, if any.
    pub fn profile_for(&self, slug: &str) -> Option<&str> {
        self.profiles.keys().filter(|p| slug.starts_with(p.as_str())).max_by_key(|p| p.len()).map(String::as_str)
    }
}

/// One resolved setting and the rule that gave it.
#[derive(Debug, Clone, PartialEq, Eq, serde::Serialize, schemars::JsonSchema)]
pub struct Setting {
    pub key: &'static str,
    pub value: u64,
    pub rule: String,
}

/// The resolved settings for one slug.
#[derive(Debug, Clone, PartialEq, Eq, serde::Serialize, schemars::JsonSchema)]
pub struct Resolved {
    pub model: String,
    /// The profile applied (`models."<prefix>"`), if any.
    pub profile: Option<String>,
    pub settings: Vec<Setting>,
    /// Configuration errors: a target at or above the budget (found and repaired), a budget the
    /// window cannot hold (`audit`'s `budget-over-window`, reported as is).
    pub problems: Vec<String>,
}

impl Resolved {
    /// Whether `context_budget` is above `ctx_window − context_reserve`: the error `audit` reports
    /// as `budget-over-window` for a journal recording these settings (journal-v1 §6).
    pub fn over_window(&self) -> bool {
        self.in_force().over_window()
    }

    /// The resolved settings as the settings in force of a journal that recorded them.
    pub fn in_force(&self) -> InForce {
        InForce {
            window: Some(self.get("ctx_window")),
            budget: self.get("context_budget"),
            target: self.get("context_target"),
            reserve: self.get("context_reserve"),
            keep_results: self.get("keep_results"),
        }
    }

    /// The value of `key`.
    pub fn get(&self, key: &str) -> u64 {
        self.settings.iter().find(|s| s.key == key).map(|s| s.value).unwrap_or(0)
    }
}

/// Resolves the five settings for `slug` (journal-v1 §6).
pub fn resolve(c: &Config, slug: &str) -> Resolved {
    let profile = c.profile_for(slug).map(str::to_string);
    let prof = profile.as_ref().and_then(|p| c.profiles.get(p));
    let pname = |p: &str| format!("profile models.\"{p}\"");
    let mut out: Vec<Setting> = Vec::new();
    let mut problems = Vec::new();
    for key in KEYS {
        let top = c.top.get(key).copied();
        let pv = prof.and_then(|m| m.get(key).copied());
        let (value, rule) = match (top, pv) {
            (Some(t), Some(p)) if key == "context_budget" && t != 0 => (
                t,
                format!(
                    "top-level {}: a non-zero top-level context_budget beats the {} value {}",
                    thousands(t),
                    pname(profile.as_deref().unwrap_or("")),
                    thousands(p)
                ),
            ),
            (_, Some(p)) => (
                p,
                match top {
                    Some(t) => {
                        format!("{} (overrides top-level {})", pname(profile.as_deref().unwrap_or("")), thousands(t))
                    }
                    None => pname(profile.as_deref().unwrap_or("")),
                },
            ),
            (Some(t), None) => (t, "top-level".to_string()),
            (None, None) => (default_of(key), "not set: the default".to_string()),
        };
        out.push(Setting { key, value, rule });
    }
    let window = out[0].value;
    if out[1].value == 0 {
        let b = auto_budget(window);
        out[1].rule = format!(
            "auto (0 → {} because ctx_window {} {} {}); was: {}",
            thousands(b),
            thousands(window),
            if window <= SMALL_WINDOW { "≤" } else { ">" },
            thousands(SMALL_WINDOW),
            out[1].rule
        );
        out[1].value = b;
    }
    let budget = out[1].value;
    let auto_target = auto_target(budget);
    if out[3].value == 0 {
        out[3].rule = format!("auto (70% of budget {}, rounded down); was: {}", thousands(budget), out[3].rule);
        out[3].value = auto_target;
    } else if out[3].value >= budget {
        problems.push(format!(
            "context_target {} is at or above context_budget {} ({}): replaced by the auto rule ({})",
            thousands(out[3].value),
            thousands(budget),
            out[3].rule,
            thousands(auto_target)
        ));
        out[3].rule = format!(
            "auto (70% of budget {}): the configured {} was at or above the budget",
            thousands(budget),
            thousands(out[3].value)
        );
        out[3].value = auto_target;
    }
    let mut r = Resolved { model: slug.to_string(), profile, settings: out, problems };
    if r.over_window() {
        let (w, res) = (r.get("ctx_window"), r.get("context_reserve"));
        r.problems.push(format!(
            "context_budget {} is above ctx_window − context_reserve = {} − {} = {}: the window overflows before elision starts (audit: budget-over-window)",
            thousands(r.get("context_budget")),
            thousands(w),
            thousands(res),
            thousands(w.saturating_sub(res))
        ));
    }
    r
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::journal::CtxSettings;

    const SEED: &str = r#"
ctx_window = 1000000
context_budget = 0
context_reserve = 8192
context_target = 0
keep_results = 5

[models."vendor/model"]
context_budget = 500000
context_target = 350000
"#;

    fn cfg(s: &str) -> Config {
        Config::parse("h.toml", s).unwrap()
    }

    #[test]
    fn regression_budget_above_window_minus_reserve_is_the_audit_error() {
        let r = resolve(&cfg("ctx_window = 100000\ncontext_budget = 95000\ncontext_reserve = 8192\n"), "m");
        assert!(r.over_window());
        assert!(r.problems.iter().any(|p| p.contains("budget-over-window")), "{:?}", r.problems);
        let ok = resolve(&cfg("ctx_window = 100000\ncontext_budget = 91808\ncontext_reserve = 8192\n"), "m");
        assert!(!ok.over_window() && ok.problems.is_empty(), "{:?}", ok.problems);
    }

    #[test]
    fn the_seed_example() {
        let c = cfg(SEED);
        let r = resolve(&c, "vendor/model-x");
        assert_eq!(r.profile.as_deref(), Some("vendor/model"));
        assert_eq!(
            (r.get("ctx_window"), r.get("context_budget"), r.get("context_target")),
            (1_000_000, 500_000, 350_000)
        );
        assert_eq!((r.get("context_reserve"), r.get("keep_results")), (8192, 5));
        assert!(r.problems.is_empty());
        // Another model: no profile, auto rules on a 1M window → 200k, target 140k.
        let r = resolve(&c, "other/model");
        assert_eq!(r.profile, None);
        assert_eq!((r.get("context_budget"), r.get("context_target")), (200_000, 140_000));
        assert!(r.settings[1].rule.starts_with("auto (0 → 200,000 because ctx_window 1,000,000 > 300,000)"));
    }

    #[test]
    fn auto_budget_follows_the_window() {
        let r = resolve(&cfg("ctx_window = 300000"), "m");
        assert_eq!((r.get("context_budget"), r.get("context_target")), (100_000, 70_000));
        let r = resolve(&cfg("ctx_window = 300001"), "m");
        assert_eq!(r.get("context_budget"), 200_000);
        // 70% rounded down.
        let r = resolve(&cfg("context_budget = 12345"), "m");
        assert_eq!(r.get("context_target"), 8641); // 8641.5 → 8641
    }

    #[test]
    fn longest_prefix_wins() {
        let c = cfg(r#"
[models."anthropic/"]
ctx_window = 200000
keep_results = 3
[models."anthropic/claude-opus"]
ctx_window = 1000000
"#);
        let r = resolve(&c, "anthropic/claude-opus-4-6");
        assert_eq!(r.profile.as_deref(), Some("anthropic/claude-opus"));
        // Only the longest profile applies: keep_results of the shorter one does not leak in.
        assert_eq!((r.get("ctx_window"), r.get("keep_results")), (1_000_000, 5));
        let r = resolve(&c, "anthropic/claude-sonnet-4-5");
        assert_eq!(
            (r.profile.as_deref(), r.get("ctx_window"), r.get("keep_results")),
            (Some("anthropic/"), 200_000, 3)
        );
    }

    #[test]
    fn explicit_budget_beats_the_profile_and_the_target_conflict_is_repaired() {
        let c = cfg(r#"
context_budget = 150000
context_reserve = 4096
[models."vendor/"]
context_budget = 500000
context_target = 350000
context_reserve = 1000
"#);
        let r = resolve(&c, "vendor/model");
        assert_eq!(r.get("context_budget"), 150_000, "non-zero top-level budget beats the profile");
        assert!(r.settings[1].rule.contains("beats"));
        assert_eq!(r.get("context_reserve"), 1000, "other keys: the profile overrides");
        // The profile's target 350000 ≥ budget 150000: reported, replaced by 70%.
        assert_eq!(r.get("context_target"), 105_000);
        assert_eq!(r.problems.len(), 1);
        assert!(r.problems[0].contains("350,000"));
        // A zero top-level budget does not beat the profile.
        let c = cfg("context_budget = 0\n[models.\"v\"]\ncontext_budget = 9000\n");
        assert_eq!(resolve(&c, "v1").get("context_budget"), 9000);
        // A profile zero overrides a top-level value, then auto applies.
        let c = cfg("context_target = 5000\ncontext_budget = 10000\n[models.\"v\"]\ncontext_target = 0\n");
        assert_eq!(resolve(&c, "v1").get("context_target"), 7000);
        // Target equal to the budget is a conflict too.
        let r = resolve(&cfg("context_budget = 1000\ncontext_target = 1000"), "m");
        assert_eq!((r.get("context_target"), r.problems.len()), (700, 1));
    }

    #[test]
    fn a_runtime_switch_changes_the_profile() {
        let c = cfg(r#"
ctx_window = 200000
[models."big/"]
ctx_window = 2000000
"#);
        let before = resolve(&c, "small/m");
        let after = resolve(&c, "big/m");
        assert_eq!((before.get("context_budget"), after.get("context_budget")), (100_000, 200_000));
        assert_eq!(after.profile.as_deref(), Some("big/"));
    }

    #[test]
    fn bad_files() {
        assert!(matches!(Config::parse("x", "ctx_window = -1"), Err(ConfigError::Value { .. })));
        assert!(matches!(Config::parse("x", "ctx_window = \"big\""), Err(ConfigError::Value { .. })));
        assert!(matches!(Config::parse("x", "models = 3"), Err(ConfigError::Models { .. })));
        assert!(matches!(Config::parse("x", "ctx_window = "), Err(ConfigError::Toml { .. })));
        let c = cfg("colour = 1\n[models.\"v\"]\nfoo = 2\n");
        assert_eq!(c.ignored, vec!["colour".to_string(), "models.\"v\".foo".to_string()]);
    }

    #[test]
    fn in_force_applies_the_auto_rules() {
        let r = in_force(&CtxSettings { ctx_window: Some(200_000), ..Default::default() });
        assert_eq!((r.budget, r.target, r.reserve, r.keep_results), (100_000, 70_000, 8192, 5));
        let r = in_force(&CtxSettings { ctx_window: Some(1_000_000), context_budget: Some(0), ..Default::default() });
        assert_eq!((r.budget, r.target), (200_000, 140_000));
        // a target at or above the budget is replaced by the auto rule
        let r = in_force(&CtxSettings { context_budget: Some(500), context_target: Some(500), ..Default::default() });
        assert_eq!((r.budget, r.target), (500, 350));
    }
}
