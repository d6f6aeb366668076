//! What every agent's reader hands to the grouping: one priced usage entry per counted model
//! call, and the compactions, each tagged with its agent and session.

/// An agent whose logs `ctxj usage` reads (the eighteen of ccusage 20.0.24, plus Cline). Its
/// registry row, names and formats ([`Agent::spec`], [`Agent::name`], …) are in
/// [`super::agents`]; the enum is here, below the readers, so every entry can carry it.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, serde::Serialize, schemars::JsonSchema)]
#[serde(rename_all = "kebab-case")]
pub enum Agent {
    ClaudeCode,
    Codex,
    Opencode,
    Amp,
    Droid,
    Codebuff,
    Hermes,
    Pi,
    Goose,
    Kilo,
    Copilot,
    Gemini,
    Antigravity,
    Kimi,
    Qwen,
    Openclaw,
    Grok,
    Zcode,
    Cline,
}

impl Agent {
    /// Every agent, in ccusage's order (Cline last).
    pub const ALL: [Agent; 19] = [
        Agent::ClaudeCode,
        Agent::Codex,
        Agent::Opencode,
        Agent::Amp,
        Agent::Droid,
        Agent::Codebuff,
        Agent::Hermes,
        Agent::Pi,
        Agent::Goose,
        Agent::Kilo,
        Agent::Copilot,
        Agent::Gemini,
        Agent::Antigravity,
        Agent::Kimi,
        Agent::Qwen,
        Agent::Openclaw,
        Agent::Grok,
        Agent::Zcode,
        Agent::Cline,
    ];
}

/// How the readers parse transcript lines.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Parse {
    /// Only the lines that can carry usage (found by a byte search), reading just the fields
    /// `usage` needs without building the rest; a line that typed read refuses is parsed in full.
    Fast,
    /// Every line parsed in full: the reference the fast way is held to
    /// (`CTXJ_USAGE_FULL_PARSE=1`; a test compares the two on every shared sample).
    Full,
}

impl Parse {
    /// [`Parse::Full`] when `CTXJ_USAGE_FULL_PARSE=1`, else [`Parse::Fast`].
    pub fn from_env() -> Parse {
        if std::env::var_os("CTXJ_USAGE_FULL_PARSE").is_some_and(|v| v == "1") {
            Parse::Full
        } else {
            Parse::Fast
        }
    }
}

/// Token counts, split the way the providers bill them (`input` is the uncached part).
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, serde::Serialize, serde::Deserialize, schemars::JsonSchema)]
pub struct Tokens {
    pub input: u64,
    pub output: u64,
    pub cache_creation: u64,
    pub cache_read: u64,
}

impl Tokens {
    /// Adds `o`; every sum saturates (counts come from untrusted transcripts, issue 21).
    pub fn add(&mut self, o: &Tokens) {
        self.input = self.input.saturating_add(o.input);
        self.output = self.output.saturating_add(o.output);
        self.cache_creation = self.cache_creation.saturating_add(o.cache_creation);
        self.cache_read = self.cache_read.saturating_add(o.cache_read);
    }
    /// All four counts (saturating).
    pub fn total(&self) -> u64 {
        self.prompt().saturating_add(self.output)
    }
    /// Everything sent: uncached input, cache writes and cache reads (saturating).
    pub fn prompt(&self) -> u64 {
        self.input.saturating_add(self.cache_creation).saturating_add(self.cache_read)
    }
    pub fn is_zero(&self) -> bool {
        self.total() == 0
    }
}

/// Where an entry belongs: its agent and its session (`project/session` is the row key).
#[derive(Debug, Clone, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct SessionKey {
    pub agent: Agent,
    pub project: String,
    pub session: String,
}

impl SessionKey {
    pub fn key(&self) -> String {
        if self.project.is_empty() {
            self.session.clone()
        } else {
            format!("{}/{}", self.project, self.session)
        }
    }
}

/// One counted model call.
#[derive(Debug, Clone)]
pub struct UsageEntry {
    pub session: std::sync::Arc<SessionKey>,
    /// The file it came from (an index into the report's file list).
    pub file: usize,
    /// RFC 3339 as written (empty when the line has none).
    pub ts: String,
    pub model: Option<String>,
    pub tokens: Tokens,
    /// Of `tokens.cache_creation`, the tokens written with the one-hour lifetime (Claude Code's
    /// `cache_creation.ephemeral_1h_input_tokens`; 0 for agents that record no split), priced at
    /// the one-hour write rate in `cost`.
    pub cache_creation_1h: u64,
    /// USD; `None` when the model has no price (the call is then left out of the cost).
    pub cost: Option<f64>,
    /// Tokens that ccusage 20.0.24 does not see (Claude Code lines with a space after the colon).
    pub uncounted_by_ccusage: bool,
    /// Tokens ccusage counts beyond the four (reasoning or thoughts reported apart, and what a
    /// recorded total holds beyond its parts): in the total, priced as output.
    pub extra: u64,
    /// Cache tokens that are also inside `tokens.input` because the agent's input already
    /// includes its cache (Qwen, Cline, Codebuff): ccusage counts them twice, and so does
    /// `tokens` for parity; `input - double_counted` is the corrected uncached input.
    pub double_counted: u64,
    /// A Claude Code line marked `isSidechain` (a subagent's call; Claude Code 1.0.x wrote them
    /// inside the session's own file): counted and billed like any other.
    pub sidechain: bool,
}

impl UsageEntry {
    /// A call that ccusage counts too, priced at `recorded` when the transcript carries its cost
    /// (pi), else at the built-in price of `model` with 5-minute cache writes (Codex, pi).
    pub fn priced(
        session: std::sync::Arc<SessionKey>,
        file: usize,
        ts: String,
        model: Option<String>,
        tokens: Tokens,
        recorded: Option<f64>,
    ) -> UsageEntry {
        UsageEntry::with_extra(session, file, ts, model, tokens, 0, 0, recorded)
    }
}

impl UsageEntry {
    /// A call of a usage-only agent: `extra` tokens priced as output, the `recorded` cost
    /// winning when the agent's rule says so, else the built-in price of `model`.
    #[allow(clippy::too_many_arguments)]
    pub fn with_extra(
        session: std::sync::Arc<SessionKey>,
        file: usize,
        ts: String,
        model: Option<String>,
        tokens: Tokens,
        extra: u64,
        double_counted: u64,
        recorded: Option<f64>,
    ) -> UsageEntry {
        let priced = Tokens { output: tokens.output.saturating_add(extra), ..tokens };
        let cost = recorded.filter(|c| plausible_cost(*c)).or_else(|| builtin_cost(model.as_deref(), &priced, 0));
        UsageEntry {
            session,
            file,
            ts,
            model,
            tokens,
            cache_creation_1h: 0,
            cost,
            uncounted_by_ccusage: false,
            extra,
            double_counted,
            sidechain: false,
        }
    }
}

/// The most a recorded cost of one call may say, in USD: far above any call a context window
/// allows (10M tokens at $100/M is $1,000).
pub const MAX_RECORDED_COST: f64 = 1e6;

/// Whether a cost a log recorded for one call can be true: finite, not negative, at most
/// [`MAX_RECORDED_COST`]. Another (`1e308`, issue 31: its sums overflowed to infinity, so export's
/// rows and `usage`'s totals disagreed) is disregarded and the call priced as if none was recorded.
pub fn plausible_cost(c: f64) -> bool {
    c.is_finite() && (0.0..=MAX_RECORDED_COST).contains(&c)
}

/// One compaction: its session and its time.
#[derive(Debug, Clone)]
pub struct Compaction {
    pub session: std::sync::Arc<SessionKey>,
    pub ts: String,
}

/// What one agent's reader found.
#[derive(Debug, Clone, Default)]
pub struct Read {
    pub entries: Vec<UsageEntry>,
    pub compactions: Vec<Compaction>,
    /// Entries dropped as duplicates.
    pub duplicates: usize,
}

/// Cost of `t` at the built-in price of `model` (5-minute writes except `cache_1h` of them).
pub fn builtin_cost(model: Option<&str>, t: &Tokens, cache_1h: u64) -> Option<f64> {
    let p = builtin_price_of(model?)?;
    let cw5 = t.cache_creation.saturating_sub(cache_1h);
    Some(p.billed(t.input, cw5, cache_1h, t.cache_read, t.output))
}

/// The built-in price of `model`; pi writes `provider/model` in some places.
fn builtin_price_of(model: &str) -> Option<crate::cache::prices::Price> {
    crate::cache::prices::builtin_price(model)
        .or_else(|| crate::cache::prices::builtin_price(model.rsplit('/').next()?))
}

/// A call's cost per kind of token, in USD, at the same built-in price as [`builtin_cost`]
/// (OTLP's `llm.cost.prompt_details.*`; the parts add up to the cost up to rounding).
#[derive(Debug, Clone, Copy, PartialEq, Default, serde::Serialize)]
pub struct CostParts {
    pub input: f64,
    pub cache_read: f64,
    pub cache_write_5m: f64,
    pub cache_write_1h: f64,
    pub output: f64,
}

impl CostParts {
    /// The prompt's share: input, cache reads and writes.
    pub fn prompt(&self) -> f64 {
        self.input + self.cache_read + self.cache_write_5m + self.cache_write_1h
    }
}

/// [`builtin_cost`] per kind of token.
pub fn builtin_cost_parts(model: Option<&str>, t: &Tokens, cache_1h: u64) -> Option<CostParts> {
    let p = builtin_price_of(model?)?;
    let cw5 = t.cache_creation.saturating_sub(cache_1h);
    Some(CostParts {
        input: p.billed(t.input, 0, 0, 0, 0),
        cache_read: p.billed(0, 0, 0, t.cache_read, 0),
        cache_write_5m: p.billed(0, cw5, 0, 0, 0),
        cache_write_1h: p.billed(0, 0, cache_1h, 0, 0),
        output: p.billed(0, 0, 0, 0, t.output),
    })
}

/// The whole number at `k` of a JSON object (0 when absent or not one).
pub fn count(v: &serde_json::Value, k: &str) -> u64 {
    v.get(k).and_then(serde_json::Value::as_u64).unwrap_or(0)
}

/// The string at `k` of a JSON object (`None` when absent or not a string).
pub fn str_at(v: &serde_json::Value, k: &str) -> Option<String> {
    v.get(k).and_then(serde_json::Value::as_str).map(str::to_string)
}

/// What a reader takes from each line of `bytes` that can carry what it counts (`wanted`, a byte
/// search; every line under [`Parse::Full`]): `typed` of the line's typed read `T`, or, when the
/// typed read refuses the line (and under [`Parse::Full`]), `full` of the whole line parsed.
/// Lines that are not JSON are left out.
pub fn read_lines<'a, T: serde::Deserialize<'a> + 'a, F>(
    bytes: &'a [u8],
    parse: Parse,
    wanted: impl Fn(&[u8]) -> bool + 'a,
    typed: impl Fn(T) -> F + 'a,
    full: impl Fn(&serde_json::Value) -> F + 'a,
) -> impl Iterator<Item = F> + 'a {
    crate::journal::typed::lines(bytes).filter(move |l| parse == Parse::Full || wanted(l)).filter_map(move |l| {
        if parse == Parse::Fast {
            if let Some(t) = crate::journal::typed::line::<T>(l) {
                return Some(typed(t));
            }
        }
        serde_json::from_slice::<serde_json::Value>(l).ok().map(|v| full(&v))
    })
}

/// [`count`] of a typed read: the number when it is a whole one, else 0.
pub fn whole(n: &Option<serde_json::Number>) -> u64 {
    n.as_ref().and_then(serde_json::Number::as_u64).unwrap_or(0)
}

/// Present keys as `Some`, `null` included (`#[serde(default, deserialize_with = "present")]`),
/// as a parsed object's `get` sees them.
pub fn present<'de, D: serde::Deserializer<'de>>(d: D) -> Result<Option<serde_json::Value>, D::Error> {
    serde::Deserialize::deserialize(d).map(Some)
}

/// ccusage's `apply_total_token_fallback`: when a recorded `total` exceeds the parts, the
/// missing tokens become output (when output is 0) or extra. Returns the extra.
pub fn total_fallback(t: &mut Tokens, extra: u64, total: u64) -> u64 {
    let parts = t.total().saturating_add(extra);
    if total <= parts {
        return extra;
    }
    let missing = total - parts;
    if t.output == 0 {
        t.output = missing;
        extra
    } else {
        extra.saturating_add(missing)
    }
}
