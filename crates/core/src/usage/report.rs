//! Grouping usage entries of every agent into the rows of `ctxj usage`: by session, calendar
//! period (in a time zone) or model, inside a `--since` / `--until` window, with per-model rows
//! under each group on request.

use std::collections::{BTreeMap, BTreeSet};
use std::path::PathBuf;

use chrono_tz::Tz;

use super::entry::{Read, Tokens, UsageEntry};
use super::time::{period_key, Period, Window};

/// How rows are grouped.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum By {
    Session,
    Day,
    Week,
    Month,
    Model,
}

impl By {
    pub fn name(self) -> &'static str {
        match self {
            By::Session => "session",
            By::Day => "day",
            By::Week => "week",
            By::Month => "month",
            By::Model => "model",
        }
    }
}

/// The direction rows are sorted in (`--order`): by cost for sessions, projects and models, by
/// time for dates and blocks.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum Order {
    Asc,
    #[default]
    Desc,
}

/// How to group and what to keep.
#[derive(Debug, Clone, Copy)]
pub struct Options {
    pub by: By,
    pub tz: Tz,
    pub window: Window,
    /// Per-model rows under each group.
    pub breakdown: bool,
    /// The first day of a week (`By::Week`; ccusage's default is Sunday).
    pub week_start: chrono::Weekday,
}

/// One row of the report.
#[derive(Debug, Clone, Default, serde::Serialize, schemars::JsonSchema)]
pub struct Row {
    /// The group: `project/session`, a date (`2026-03-14`; a week by its Sunday; `2026-03`), or
    /// a model.
    pub key: String,
    /// The agent of a session row.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub agent: Option<&'static str>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub project: Option<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub session: Option<String>,
    pub files: usize,
    /// Counted model calls (after de-duplication).
    pub calls: usize,
    pub first: Option<String>,
    pub last: Option<String>,
    #[serde(flatten)]
    pub tokens: Tokens,
    /// Tokens counted beyond the four (reasoning or thoughts an agent reports apart; priced as
    /// output, in `total_tokens`, as ccusage counts them).
    #[serde(skip_serializing_if = "is_zero")]
    pub extra_tokens: u64,
    pub total_tokens: u64,
    /// Cache tokens counted twice, as ccusage does, because the agent's input already includes
    /// them (Qwen, Cline, Codebuff): `input - double_counted_cache` is the corrected input.
    #[serde(skip_serializing_if = "is_zero")]
    pub double_counted_cache: u64,
    /// Cost in USD of the calls whose model has a price (`None` when none has).
    pub cost_usd: Option<f64>,
    /// Calls with tokens whose model has no price: left out of `cost_usd`.
    pub unpriced_calls: usize,
    /// Σ cache_read / Σ (input + cache_creation + cache_read).
    pub cache_hit: Option<f64>,
    pub compactions: usize,
    pub agents: Vec<&'static str>,
    pub models: Vec<String>,
    /// Tokens of entries ccusage 20.0.24 does not see (space after the colon).
    pub not_counted_by_ccusage: Tokens,
    /// Per-model rows of this group (`--breakdown`).
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub breakdown: Vec<Row>,
}

fn is_zero(n: &u64) -> bool {
    *n == 0
}

/// The whole report.
#[derive(Debug, Clone, Default, serde::Serialize, schemars::JsonSchema)]
pub struct UsageReport {
    pub schema: &'static str,
    pub by: &'static str,
    /// The IANA zone dates are in.
    pub timezone: String,
    pub rows: Vec<Row>,
    pub totals: Row,
    /// Transcript files read.
    pub files: Vec<PathBuf>,
    /// Models without a price (their cost is left out).
    pub unpriced: Vec<String>,
    /// Entries dropped as duplicates.
    pub duplicates: usize,
}

/// A row being filled.
#[derive(Default)]
struct Acc {
    row: Row,
    files: BTreeSet<usize>,
    agents: BTreeSet<&'static str>,
    models: BTreeSet<String>,
    by_model: BTreeMap<String, Acc>,
}

impl Acc {
    fn add(&mut self, e: &UsageEntry, unpriced: &mut BTreeSet<String>) {
        let r = &mut self.row;
        r.calls += 1;
        r.tokens.add(&e.tokens);
        r.extra_tokens = r.extra_tokens.saturating_add(e.extra);
        r.double_counted_cache = r.double_counted_cache.saturating_add(e.double_counted);
        if e.uncounted_by_ccusage {
            r.not_counted_by_ccusage.add(&e.tokens);
        }
        self.files.insert(e.file);
        self.agents.insert(e.session.agent.name());
        if let Some(m) = &e.model {
            self.models.insert(m.clone());
        }
        match e.cost {
            Some(c) => *r.cost_usd.get_or_insert(0.0) += c,
            None if !e.tokens.is_zero() => {
                r.unpriced_calls += 1;
                unpriced.insert(e.model.clone().unwrap_or_else(|| "<none>".into()));
            }
            None => {}
        }
        if !e.ts.is_empty() {
            if r.first.as_deref().is_none_or(|f| e.ts.as_str() < f) {
                r.first = Some(e.ts.clone());
            }
            if r.last.as_deref().is_none_or(|l| e.ts.as_str() > l) {
                r.last = Some(e.ts.clone());
            }
        }
    }

    fn finish(mut self) -> Row {
        let r = &mut self.row;
        r.files = self.files.len();
        r.agents = self.agents.into_iter().collect();
        r.models = self.models.into_iter().collect();
        r.total_tokens = r.tokens.total().saturating_add(r.extra_tokens);
        let prompt = r.tokens.prompt();
        r.cache_hit = (prompt > 0).then(|| r.tokens.cache_read as f64 / prompt as f64);
        r.breakdown = self.by_model.into_values().map(Acc::finish).collect();
        self.row
    }
}

fn group_key(
    by: By,
    tz: Tz,
    week: chrono::Weekday,
    session: &super::entry::SessionKey,
    ts: &str,
    model: Option<&str>,
) -> String {
    match by {
        By::Session => format!("{}:{}", session.agent.name(), session.key()),
        By::Day => period_key(ts, tz, Period::Day),
        By::Week => period_key(ts, tz, Period::WeekFrom(week)),
        By::Month => period_key(ts, tz, Period::Month),
        By::Model => model.unwrap_or("<none>").to_string(),
    }
}

/// The report of `read` (the entries of `files`) under `opts`.
pub fn group(read: &Read, files: Vec<PathBuf>, opts: &Options) -> UsageReport {
    let mut groups: BTreeMap<String, Acc> = BTreeMap::new();
    let mut totals = Acc::default();
    let mut unpriced = BTreeSet::new();
    for e in read.entries.iter().filter(|e| opts.window.contains(&e.ts)) {
        let k = group_key(opts.by, opts.tz, opts.week_start, &e.session, &e.ts, e.model.as_deref());
        let acc = groups.entry(k).or_insert_with(|| {
            let mut a = Acc::default();
            a.row.key = match opts.by {
                By::Session => e.session.key(),
                _ => group_key(opts.by, opts.tz, opts.week_start, &e.session, &e.ts, e.model.as_deref()),
            };
            if opts.by == By::Session {
                a.row.agent = Some(e.session.agent.name());
                a.row.project = Some(e.session.project.clone());
                a.row.session = Some(e.session.session.clone());
            }
            a
        });
        acc.add(e, &mut unpriced);
        if opts.breakdown && opts.by != By::Model {
            let model = e.model.clone().unwrap_or_else(|| "<none>".into());
            let sub = acc.by_model.entry(model.clone()).or_default();
            sub.row.key = model;
            sub.add(e, &mut BTreeSet::new());
        }
        totals.add(e, &mut BTreeSet::new());
    }
    for c in read.compactions.iter().filter(|c| opts.window.contains(&c.ts)) {
        totals.row.compactions += 1;
        if opts.by == By::Model {
            continue;
        }
        if let Some(a) = groups.get_mut(&group_key(opts.by, opts.tz, opts.week_start, &c.session, &c.ts, None)) {
            a.row.compactions += 1;
        }
    }
    let mut rows: Vec<Row> = groups.into_values().map(Acc::finish).collect();
    if opts.by == By::Session {
        rows.sort_by(|a, b| a.last.cmp(&b.last).then(a.key.cmp(&b.key)));
    }
    let mut totals = totals.finish();
    totals.key = "total".into();
    UsageReport {
        schema: "ctxj.usage/1",
        by: opts.by.name(),
        timezone: opts.tz.name().to_string(),
        rows,
        totals,
        files,
        unpriced: unpriced.into_iter().collect(),
        duplicates: read.duplicates,
    }
}
