//! `ctxj sessions`: one summary line per session found under a folder (any format, side
//! sessions included), with what it cost in provider-reported tokens.

use std::path::Path;

use super::entry::{builtin_cost, Tokens};
use super::time::instant;
use crate::import::scan::find_sessions;
use crate::import::{import_file, Child, FromFormat};

/// One line of `ctxj sessions`: what a session is and what it cost.
#[derive(Debug, Clone, Default, serde::Serialize, schemars::JsonSchema)]
pub struct SessionSummary {
    /// What to pass to a read command to open it.
    pub spec: String,
    /// The agent that wrote it (`claude-code`, `codex`, `pi`, any usage-only agent of
    /// `ctxj usage --agent`) or `ctxj` for a journal.
    pub agent: &'static str,
    /// `main`, `sidechain`, `subagent`, `compaction call`, or `usage only` (a session of an agent
    /// whose log ctxj reads only for usage).
    pub role: String,
    /// The parent transcript of a side session.
    pub parent: Option<String>,
    pub id: String,
    /// First and last record times, as written (RFC 3339).
    pub start: Option<String>,
    pub end: Option<String>,
    /// Seconds from `start` to `end`.
    pub duration_s: Option<i64>,
    /// The session's model (the first one named).
    pub model: Option<String>,
    /// Every model that answered, in order of first use.
    pub models: Vec<String>,
    pub turns: usize,
    /// Σ provider-reported prompt tokens (cached included).
    pub prompt_tokens: u64,
    pub cached_tokens: u64,
    /// cached / prompt, when any prompt tokens were reported.
    pub cache_hit: Option<f64>,
    /// USD as `ctxj usage` bills the file (pi's recorded cost, else the built-in price of each
    /// call's model); a Claude Code 1.0.x file's inline sidechains have rows of their own, and the
    /// main row holds the file's cost less theirs, so the rows add up to the file; `None` when no
    /// call has a price.
    pub cost_usd: Option<f64>,
    pub compactions: usize,
    /// Side sessions listed with this one (sidechains, subagents).
    pub side_sessions: usize,
    /// Why the session could not be read (the other fields are then empty).
    pub error: Option<String>,
    /// What the log of a usage-only agent cannot give (no per-request content to replay).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub note: Option<String>,
}

/// The cost of one call from its recorded usage.
fn call_cost(model: Option<&str>, u: &crate::journal::Usage) -> Option<f64> {
    let cached = u.cached_tokens.unwrap_or(0);
    let write = u.cache_write_tokens.unwrap_or(0);
    let t = Tokens {
        input: u.prompt_tokens.unwrap_or(0).saturating_sub(cached.saturating_add(write)),
        output: u.completion_tokens.unwrap_or(0),
        cache_creation: write,
        cache_read: cached,
    };
    builtin_cost(model, &t, u.cache_write_1h_tokens.unwrap_or(0))
}

/// Summarises a journal (any format once imported).
pub fn summarize_journal(j: &crate::journal::Journal) -> SessionSummary {
    use crate::journal::Body;
    let mut s = SessionSummary::default();
    if let Some(sess) = j.session() {
        s.id = sess.id.clone();
        s.model = sess.model.clone();
    }
    let session_model = s.model.clone();
    let times = || j.records.iter().map(|r| r.ts.to_string()).filter(|t| !t.is_empty());
    s.start = times().next();
    s.end = times().next_back();
    if let (Some(a), Some(b)) = (s.start.as_deref().and_then(instant), s.end.as_deref().and_then(instant)) {
        s.duration_s = Some((b - a).num_seconds());
    }
    s.turns = j.turns.len();
    // The model in force: the session's, then each `model` record's (Codex and pi switch models
    // with records, Claude Code names it on each assistant record).
    let mut current = session_model.clone();
    for r in &j.records {
        match &r.body {
            Body::Model(m) => current = Some(m.model.clone()),
            Body::Assistant(a) => {
                let model = a.model.as_ref().or(current.as_ref());
                if let Some(u) = &a.usage {
                    s.prompt_tokens = s.prompt_tokens.saturating_add(u.prompt_tokens.unwrap_or(0));
                    s.cached_tokens = s.cached_tokens.saturating_add(u.cached_tokens.unwrap_or(0));
                    if let Some(c) = call_cost(model.map(String::as_str), u) {
                        *s.cost_usd.get_or_insert(0.0) += c;
                    }
                }
                if s.model.is_none() {
                    s.model = model.cloned();
                }
                if let Some(m) = model {
                    if !s.models.contains(m) {
                        s.models.push(m.clone());
                    }
                }
            }
            Body::Compact(_) => s.compactions += 1,
            _ => {}
        }
    }
    s.cache_hit = (s.prompt_tokens > 0).then(|| s.cached_tokens as f64 / s.prompt_tokens as f64);
    s
}

/// Every session under `dir` (inline sidechains included), summarised, in path order.
pub fn summarize_folder(dir: &Path, from: FromFormat) -> Vec<SessionSummary> {
    summarize_folder_with_progress(dir, from, &|_, _| {})
}

/// [`summarize_folder`], calling `progress(done, total)` (from any thread) as files are read.
pub fn summarize_folder_with_progress(
    dir: &Path,
    from: FromFormat,
    progress: &(dyn Fn(usize, usize) + Sync),
) -> Vec<SessionSummary> {
    use rayon::prelude::*;
    let found = find_sessions(dir, from);
    let done = std::sync::atomic::AtomicUsize::new(0);
    let per_file: Vec<Vec<SessionSummary>> = found
        .par_iter()
        .map(|f| {
            let _tick = Tick(&done, found.len(), progress);
            let role = f.role;
            let parent = f.parent.as_ref().map(|p| p.display().to_string());
            if let Some(rows) = store_rows(&f.path, f.format) {
                return rows;
            }
            let mut out = Vec::new();
            match import_file(&f.path, f.format, None) {
                Ok(im) => {
                    let mut s = summarize_journal(&im.journal);
                    if f.format != crate::import::Format::Ctxj {
                        // The same cost as `ctxj usage` (one implementation: its readers).
                        s.cost_usd = super::file_cost(f.format, &f.path);
                    }
                    s.side_sessions = im.report.children.len();
                    let children: Vec<Child> =
                        im.report.children.iter().filter(|c| c.role == "sidechain").cloned().collect();
                    s.spec = f.path.display().to_string();
                    s.agent = import_agent(&f.path, f.format);
                    s.role = role.into();
                    s.parent = parent;
                    let mut sides = Vec::new();
                    for c in children {
                        let part = c.spec.rsplit('#').next().unwrap_or("").to_string();
                        let mut cs = match import_file(&f.path, f.format, Some(&part)) {
                            Ok(ci) => summarize_journal(&ci.journal),
                            Err(e) => SessionSummary { error: Some(e.to_string()), ..Default::default() },
                        };
                        cs.spec = c.spec.clone();
                        cs.agent = f.format.name();
                        cs.role = "sidechain".into();
                        cs.parent = Some(f.path.display().to_string());
                        sides.push(cs);
                    }
                    // The file's cost includes its inline sidechains, listed on their own rows:
                    // the main row keeps the rest, so the rows add up to what `usage` bills.
                    let side_cost: f64 = sides.iter().filter_map(|c| c.cost_usd).sum();
                    s.cost_usd = s.cost_usd.map(|c| (c - side_cost).max(0.0));
                    out.push(s);
                    out.extend(sides);
                }
                Err(e) => out.push(SessionSummary {
                    spec: f.path.display().to_string(),
                    agent: f.format.name(),
                    role: role.into(),
                    parent,
                    error: Some(e.to_string()),
                    ..Default::default()
                }),
            }
            out
        })
        .collect();
    let mut rows: Vec<SessionSummary> = per_file.into_iter().flatten().collect();
    // Side sessions right after their parent.
    rows.sort_by(|a, b| {
        let ka = (a.parent.as_deref().unwrap_or(&a.spec).to_string(), a.parent.is_some(), a.spec.clone());
        let kb = (b.parent.as_deref().unwrap_or(&b.spec).to_string(), b.parent.is_some(), b.spec.clone());
        ka.cmp(&kb)
    });
    rows
}

/// One row per session of an OpenCode or Kilo store holding more than one (`<store>#<id>`, what
/// a read command opens; subagent sessions under their parent), each costed from its own recorded
/// usage; `None` for any other file (or a store of one session, read as a file).
fn store_rows(path: &Path, format: crate::import::Format) -> Option<Vec<SessionSummary>> {
    use crate::import::{opencode, Format};
    if format != Format::OpenCode || path.extension().is_none_or(|e| e != "db") {
        return None;
    }
    let all = opencode::sessions(path).ok().filter(|all| all.len() > 1)?;
    let spec = |id: &str| opencode::part_spec(path, id);
    let rows = all
        .iter()
        .map(|x| {
            let mut s = match import_file(path, format, Some(&x.id)) {
                Ok(im) => summarize_journal(&im.journal),
                Err(e) => SessionSummary { id: x.id.clone(), error: Some(e.to_string()), ..Default::default() },
            };
            s.spec = spec(&x.id);
            s.agent = import_agent(path, format);
            s.role = if x.parent.is_some() { "subagent" } else { "main" }.into();
            s.parent = x.parent.as_deref().map(spec);
            s.side_sessions = all.iter().filter(|c| c.parent.as_deref() == Some(x.id.as_str())).count();
            s
        })
        .collect();
    Some(rows)
}

/// The agent name of an imported file: the format's, but a Kilo store is Kilo's
/// ([`super::Agent::of_file`]).
fn import_agent(path: &Path, format: crate::import::Format) -> &'static str {
    super::Agent::of_file(format, path).map_or(format.name(), super::Agent::name)
}

/// `rows` by cost, most expensive first (`Order::Desc`) or cheapest first, each session's side
/// sessions kept right after it in their order; sessions without a price last, then by start.
pub fn order_by_cost(rows: &mut Vec<SessionSummary>, order: super::report::Order) {
    let mut families: Vec<Vec<SessionSummary>> = Vec::new();
    for r in rows.drain(..) {
        match (&r.parent, families.last_mut()) {
            (Some(p), Some(f)) if f.first().is_some_and(|m| &m.spec == p) => f.push(r),
            _ => families.push(vec![r]),
        }
    }
    families.sort_by(|a, b| {
        let (a, b) = (&a[0], &b[0]);
        let by_cost = match (a.cost_usd, b.cost_usd) {
            (Some(x), Some(y)) => match order {
                super::report::Order::Desc => y.total_cmp(&x),
                super::report::Order::Asc => x.total_cmp(&y),
            },
            (Some(_), None) => std::cmp::Ordering::Less,
            (None, Some(_)) => std::cmp::Ordering::Greater,
            (None, None) => std::cmp::Ordering::Equal,
        };
        by_cost.then_with(|| a.start.cmp(&b.start)).then_with(|| a.spec.cmp(&b.spec))
    });
    rows.extend(families.into_iter().flatten());
}

/// Counts one file read when dropped (however its summary ended) and reports the count.
struct Tick<'a>(&'a std::sync::atomic::AtomicUsize, usize, &'a (dyn Fn(usize, usize) + Sync));

impl Drop for Tick<'_> {
    fn drop(&mut self) {
        let n = self.0.fetch_add(1, std::sync::atomic::Ordering::Relaxed) + 1;
        (self.2)(n, self.1);
    }
}

/// What `ctxj sessions` says of a usage-only agent's session.
pub const USAGE_ONLY: &str = "usage only";

/// How a read command opens the session `session` that `agent`'s usage reader found in `file`:
/// the format ctxj imports the file as and, for a store holding many sessions (an OpenCode or
/// Kilo SQLite database), the session's id (what `show <store>#<id>` opens). `None` when the
/// agent's log holds no requests ([`super::agents::Spec::content`]) or ctxj does not detect
/// the file (an OpenCode legacy message file, for one).
pub fn opener(agent: super::Agent, file: &Path, session: &str) -> Option<(crate::import::Format, Option<String>)> {
    use crate::import::Format;
    if !agent.spec().content {
        return None;
    }
    let f = crate::import::detect_file(file).filter(|f| *f != Format::Ctxj)?;
    let store = f == Format::OpenCode && file.extension().is_some_and(|e| e == "db");
    Some((f, store.then(|| session.to_string())))
}

/// How the session `key` found in `file` by an agent's usage reader is listed (spec, role,
/// note): opened by a read command (its agent imports requests, [`super::agents::Spec::content`],
/// and ctxj detects the file), or usage only, named `agent:project/session`, which no read
/// command opens.
fn listing(key: &super::entry::SessionKey, file: &Path) -> (String, String, Option<String>) {
    let label = key.agent.spec().label;
    let shown = file.display().to_string();
    let note = match opener(key.agent, file, &key.session) {
        Some((_, Some(id))) => return (crate::import::opencode::part_spec(file, &id), "main".into(), None),
        Some((_, None)) => return (shown, "main".into(), None),
        None if key.agent.spec().content => {
            format!("{label} log read for usage only: ctxj does not import this file (no replay); read from {shown}")
        }
        None => format!(
            "{label} logs hold usage counters, not the requests: no replay (show, cache, audit); read from {shown}"
        ),
    };
    (format!("{}:{}", key.agent.name(), key.key()), USAGE_ONLY.into(), Some(note))
}

/// One summary per session of the agents' log files (`files`, by agent) read by their usage
/// readers, from the entries `ctxj usage` counts. The registry's capability decides the label
/// ([`listing`]): a session of an agent whose requests ctxj imports, in a file ctxj detects, is a
/// `main` row whose `spec` opens it; any other is [`USAGE_ONLY`], its `spec` is
/// `agent:project/session` (no read command opens it) and `note` says why and which file it was
/// read from. Sessions sorted by agent, then start.
pub fn summarize_usage_only(
    files: &std::collections::BTreeMap<super::Agent, Vec<std::path::PathBuf>>,
) -> Vec<SessionSummary> {
    use std::collections::BTreeMap;
    let (read, list) = super::read_agents(files);
    let mut by: BTreeMap<super::entry::SessionKey, SessionSummary> = BTreeMap::new();
    for e in &read.entries {
        let s = by.entry((*e.session).clone()).or_insert_with(|| {
            let file = list.get(e.file).cloned().unwrap_or_default();
            let (spec, role, note) = listing(&e.session, &file);
            SessionSummary {
                spec,
                agent: e.session.agent.name(),
                role,
                id: e.session.session.clone(),
                note,
                ..Default::default()
            }
        });
        s.turns += 1;
        s.prompt_tokens = s.prompt_tokens.saturating_add(e.tokens.prompt());
        s.cached_tokens = s.cached_tokens.saturating_add(e.tokens.cache_read);
        if let Some(c) = e.cost {
            *s.cost_usd.get_or_insert(0.0) += c;
        }
        if let Some(m) = &e.model {
            if !s.models.contains(m) {
                s.models.push(m.clone());
            }
            s.model.get_or_insert_with(|| m.clone());
        }
        if !e.ts.is_empty() {
            if s.start.as_deref().is_none_or(|t| e.ts.as_str() < t) {
                s.start = Some(e.ts.clone());
            }
            if s.end.as_deref().is_none_or(|t| e.ts.as_str() > t) {
                s.end = Some(e.ts.clone());
            }
        }
    }
    for c in &read.compactions {
        if let Some(s) = by.get_mut(&c.session) {
            s.compactions += 1;
        }
    }
    let mut rows: Vec<SessionSummary> = by.into_values().collect();
    for s in &mut rows {
        s.cache_hit = (s.prompt_tokens > 0).then(|| s.cached_tokens as f64 / s.prompt_tokens as f64);
        if let (Some(a), Some(b)) = (s.start.as_deref().and_then(instant), s.end.as_deref().and_then(instant)) {
            s.duration_s = Some((b - a).num_seconds());
        }
    }
    rows.sort_by(|a, b| (a.agent, &a.start, &a.id).cmp(&(b.agent, &b.start, &b.id)));
    rows
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_model_a_session_used_is_listed_in_order_of_first_use() {
        let text = [
            r#"{"rev":1,"ts":"2026-11-29T10:00:00Z","kind":"session","id":"s","model":"gpt-5.3-codex"}"#,
            r#"{"rev":2,"ts":"2026-11-29T10:00:01Z","kind":"user","id":"u","text":"q"}"#,
            r#"{"rev":3,"ts":"2026-11-29T10:00:02Z","kind":"assistant","id":"a","text":"x","usage":{"prompt_tokens":1000,"cached_tokens":0,"completion_tokens":3}}"#,
            r#"{"rev":4,"ts":"2026-11-29T10:00:03Z","kind":"model","model":"gpt-5.4"}"#,
            r#"{"rev":5,"ts":"2026-11-29T10:00:04Z","kind":"user","id":"u2","text":"q"}"#,
            r#"{"rev":6,"ts":"2026-11-29T10:00:05Z","kind":"assistant","id":"a2","text":"y","usage":{"prompt_tokens":1000,"cached_tokens":0,"completion_tokens":3}}"#,
            r#"{"rev":7,"ts":"2026-11-29T10:00:06Z","kind":"assistant","id":"a3","text":"z","model":"claude-opus-4-6"}"#,
        ]
        .join("\n");
        let j = crate::journal::parse_bytes(Path::new("j.jsonl"), text.as_bytes(), Default::default()).unwrap();
        let s = summarize_journal(&j);
        assert_eq!(s.model.as_deref(), Some("gpt-5.3-codex"));
        assert_eq!(s.models, ["gpt-5.3-codex", "gpt-5.4", "claude-opus-4-6"]);
        // Each call is priced at the model in force.
        let price = |m: &str| crate::cache::prices::builtin_price(m).unwrap().billed(1000, 0, 0, 0, 3);
        assert!((s.cost_usd.unwrap() - price("gpt-5.3-codex") - price("gpt-5.4")).abs() < 1e-12);
    }
}
