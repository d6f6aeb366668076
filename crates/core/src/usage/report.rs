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
    /// `agent:project`: every session of a project.
    Project,
    /// ccusage's 5-hour billing windows ([`super::blocks`]).
    Block,
}

impl By {
    pub fn name(self) -> &'static str {
        match self {
            By::Session => "session",
            By::Day => "day",
            By::Week => "week",
            By::Month => "month",
            By::Model => "model",
            By::Project => "project",
            By::Block => "block",
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
    /// Only the `N` groups with the latest calls (`--last N`): totals are theirs.
    pub last: Option<usize>,
    /// The sort direction asked for (`--order`); `None`: sessions and projects by cost, most
    /// expensive first, dates and blocks oldest first, models by name.
    pub order: Option<Order>,
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
    /// The billing window of a `--by block` row.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub block: Option<BlockInfo>,
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

/// A billing window (`--by block`), as ccusage's `blocks --json` describes it.
#[derive(Debug, Clone, Default, PartialEq, Eq, serde::Serialize, schemars::JsonSchema)]
pub struct BlockInfo {
    /// Start (RFC 3339, UTC): the first call's hour, or 5 h after the last call for a gap.
    pub start: String,
    /// Start + 5 h, or the next call for a gap.
    pub end: String,
    /// The last call (none for a gap).
    pub actual_end: Option<String>,
    /// A silence of more than 5 hours between two blocks (no calls).
    pub gap: bool,
    /// Its last call is less than 5 h ago and its end still ahead.
    pub active: bool,
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
    /// Transcript files that could not be read, and why: counted as nothing, and said so
    /// (issue 31: they were left out silently).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub unreadable: Vec<Unreadable>,
}

/// A transcript file `usage` could not read.
#[derive(Debug, Clone, PartialEq, Eq, serde::Serialize, schemars::JsonSchema)]
pub struct Unreadable {
    pub path: PathBuf,
    pub why: String,
}

/// The files of `files` that cannot be read: missing, not permitted, or not a regular file
/// (a folder is a store some readers take whole, and is not judged here).
pub fn unreadable(files: &[PathBuf]) -> Vec<Unreadable> {
    let why = |path: &PathBuf, e: std::io::Error| Unreadable { path: path.clone(), why: e.to_string() };
    files
        .iter()
        .filter_map(|p| match std::fs::metadata(p) {
            Err(e) => Some(why(p, e)),
            Ok(m) if m.is_dir() => None,
            Ok(_) => crate::journal::input::open_regular(p).err().map(|e| why(p, e)),
        })
        .collect()
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
        By::Project => format!("{}:{}", session.agent.name(), session.project),
        // Assigned from the whole list (`block_keys`), never from one entry.
        By::Block => String::new(),
    }
}

/// The block of every entry in `inside` (by index) and the blocks and gaps themselves, keyed by
/// ccusage's block id; entries without a readable time belong to none.
fn block_keys(read: &Read, inside: &[usize]) -> (BTreeMap<usize, String>, BTreeMap<String, BlockInfo>) {
    let timed: Vec<(usize, chrono::DateTime<chrono::Utc>)> =
        inside.iter().filter_map(|&i| Some((i, super::time::instant(&read.entries[i].ts)?))).collect();
    let times: Vec<_> = timed.iter().map(|(_, t)| *t).collect();
    let now = chrono::Utc::now();
    let iso = |t: chrono::DateTime<chrono::Utc>| t.format("%Y-%m-%dT%H:%M:%S%.3fZ").to_string();
    let (mut keys, mut infos) = (BTreeMap::new(), BTreeMap::new());
    for span in super::blocks::spans(&times) {
        let id = span.id();
        for &c in &span.calls {
            keys.insert(timed[c].0, id.clone());
        }
        let info = BlockInfo {
            start: iso(span.start),
            end: iso(span.end),
            actual_end: span.last.map(iso),
            gap: span.is_gap(),
            active: span.active(now),
        };
        infos.insert(id, info);
    }
    (keys, infos)
}

/// The report of `read` (the entries of `files`) under `opts`.
pub fn group(read: &Read, files: Vec<PathBuf>, opts: &Options) -> UsageReport {
    let inside: Vec<usize> =
        read.entries.iter().enumerate().filter(|(_, e)| opts.window.contains(&e.ts)).map(|(i, _)| i).collect();
    let (block_of, block_info) = if opts.by == By::Block { block_keys(read, &inside) } else { Default::default() };
    let key_of = |i: usize| -> Option<String> {
        let e = &read.entries[i];
        match opts.by {
            By::Block => block_of.get(&i).cloned(),
            by => Some(group_key(by, opts.tz, opts.week_start, &e.session, &e.ts, e.model.as_deref())),
        }
    };
    let mut keyed: Vec<(usize, String)> = inside.iter().filter_map(|&i| Some((i, key_of(i)?))).collect();
    let kept = opts.last.map(|n| latest_keys(read, &keyed, n));
    if let Some(kept) = &kept {
        keyed.retain(|(_, k)| kept.contains(k));
    }
    let mut groups: BTreeMap<String, Acc> = BTreeMap::new();
    let mut totals = Acc::default();
    let mut unpriced = BTreeSet::new();
    for (i, k) in keyed {
        let e = &read.entries[i];
        let acc = groups.entry(k.clone()).or_insert_with(|| {
            let mut a = Acc::default();
            a.row.key = match opts.by {
                By::Session => e.session.key(),
                By::Project => e.session.project.clone(),
                _ => k.clone(),
            };
            if matches!(opts.by, By::Session | By::Project) {
                a.row.agent = Some(e.session.agent.name());
                a.row.project = Some(e.session.project.clone());
            }
            if opts.by == By::Session {
                a.row.session = Some(e.session.session.clone());
            }
            a.row.block = block_info.get(&k).cloned();
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
    if opts.by == By::Block && kept.is_none() {
        // Gap rows between the blocks, as ccusage lists them (only without `--last`).
        for (id, info) in block_info.iter().filter(|(_, b)| b.gap) {
            let mut a = Acc::default();
            a.row.key = id.clone();
            a.row.block = Some(info.clone());
            groups.insert(id.clone(), a);
        }
    }
    for c in read.compactions.iter().filter(|c| opts.window.contains(&c.ts)) {
        let key = match opts.by {
            By::Model => None,
            By::Block => {
                let t = super::time::instant(&c.ts);
                let inside = |b: &BlockInfo| {
                    let (start, end) = (super::time::instant(&b.start), super::time::instant(&b.end));
                    matches!((t, start, end), (Some(t), Some(s), Some(e)) if s <= t && t < e)
                };
                block_info.iter().find(|(_, b)| !b.gap && inside(b)).map(|(k, _)| k.clone())
            }
            by => Some(group_key(by, opts.tz, opts.week_start, &c.session, &c.ts, None)),
        };
        if kept.as_ref().is_some_and(|kept| key.as_ref().is_none_or(|k| !kept.contains(k))) {
            continue;
        }
        totals.row.compactions += 1;
        if let Some(a) = key.and_then(|k| groups.get_mut(&k)) {
            a.row.compactions += 1;
        }
    }
    let mut rows: Vec<Row> = groups.into_values().map(Acc::finish).collect();
    sort_rows(&mut rows, opts);
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
        unreadable: Vec::new(),
    }
}

/// The `n` keys whose latest call is latest (ties: the greater key).
fn latest_keys(read: &Read, keyed: &[(usize, String)], n: usize) -> BTreeSet<String> {
    let mut latest: BTreeMap<&str, &str> = BTreeMap::new();
    for (i, k) in keyed {
        let ts = read.entries[*i].ts.as_str();
        let slot = latest.entry(k.as_str()).or_insert(ts);
        if ts > *slot {
            *slot = ts;
        }
    }
    let mut by_time: Vec<(&str, &str)> = latest.into_iter().map(|(k, t)| (t, k)).collect();
    by_time.sort();
    by_time.into_iter().rev().take(n).map(|(_, k)| k.to_string()).collect()
}

/// Sessions and projects by cost (most expensive first), dates and blocks by time (oldest
/// first), models by name; `--order` sets the direction (and sorts models by cost).
fn sort_rows(rows: &mut [Row], opts: &Options) {
    let by_cost = |a: &Row, b: &Row| match (a.cost_usd, b.cost_usd) {
        (Some(x), Some(y)) => x.total_cmp(&y),
        (Some(_), None) => std::cmp::Ordering::Greater,
        (None, Some(_)) => std::cmp::Ordering::Less,
        (None, None) => std::cmp::Ordering::Equal,
    };
    match (opts.by, opts.order) {
        (By::Session | By::Project, order) | (By::Model, order @ Some(_)) => {
            rows.sort_by(|a, b| by_cost(a, b).then_with(|| a.last.cmp(&b.last)).then_with(|| a.key.cmp(&b.key)));
            if order.unwrap_or_default() == Order::Desc {
                rows.reverse();
            }
        }
        (By::Block, order) => {
            rows.sort_by(|a, b| {
                let start = |r: &Row| r.block.as_ref().map(|b| b.start.clone());
                start(a).cmp(&start(b))
            });
            if order == Some(Order::Desc) {
                rows.reverse();
            }
        }
        (_, Some(Order::Desc)) => rows.reverse(),
        _ => {}
    }
}

#[cfg(test)]
mod unreadable_tests {
    /// Issue 31: a transcript that could not be read was silently left out of `usage`.
    #[test]
    fn regression_unreadable_transcript_is_reported() {
        let d = tempfile::tempdir().unwrap();
        let good = d.path().join("good.jsonl");
        std::fs::write(&good, b"{}\n").unwrap();
        let missing = d.path().join("gone.jsonl");
        let got = super::unreadable(&[good, missing.clone(), d.path().to_path_buf()]);
        assert_eq!(got.len(), 1, "{got:?}");
        assert_eq!(got[0].path, missing);
        #[cfg(unix)]
        {
            let fifo = d.path().join("fifo.jsonl");
            assert!(std::process::Command::new("mkfifo").arg(&fifo).status().unwrap().success());
            let got = super::unreadable(&[fifo]);
            assert!(got[0].why.contains("FIFO"), "{got:?}");
        }
    }
}
