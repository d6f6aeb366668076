//! The rows of one session: its billed calls joined to the reconstructed requests, and the
//! replays of the other strategies asked for.

use super::content::{self, Content};
use super::row::{provider, ExportRow, SCHEMA};
use super::SessionInput;
use crate::cache::{self, BreakCause, PriceTable, Pricing};
use crate::import::import_file;
use crate::journal::{Body, Journal};
use crate::strategy::{self, Strategy};
use crate::tokens::{TiktokenEstimator, Tokenizer};
use crate::usage::entry::{builtin_cost_parts, CostParts, UsageEntry};

/// A session's rows and what its strategies add up to.
#[derive(Debug, Clone, serde::Serialize)]
pub struct SessionRows {
    pub agent: &'static str,
    pub session: String,
    pub project: String,
    pub parent: Option<String>,
    pub source: String,
    /// `recorded` rows first, then each strategy's.
    pub rows: Vec<ExportRow>,
    /// Per strategy (recorded first): requests, cost, hit rate.
    pub strategies: Vec<StrategyTotal>,
    /// Why the transcript could not be reconstructed (its rows then carry no estimate and no
    /// simulated strategy).
    pub note: Option<String>,
    /// The subagent runs this session's recorded calls started (its `Task`/`Agent` calls).
    pub spawns: Vec<Spawn>,
    /// For a Claude Code subagent file (`agent-<id>.jsonl`): its agent id, which the result of
    /// the spawning call in the parent session names.
    pub agent_id: Option<String>,
}

impl SessionRows {
    /// The rows of the calls inside `window` (recorded rows by their time, a strategy's rows by
    /// the time of the turn they replay), with the strategies' totals and the subagent runs
    /// recomputed over them. Turns keep their numbers, so span ids and row ids are an unfiltered
    /// export's.
    pub fn within(mut self, window: &crate::usage::time::Window) -> SessionRows {
        if window.is_open() {
            return self;
        }
        self.rows.retain(|r| r.timestamp.as_deref().is_some_and(|t| window.contains(t)));
        let kept: std::collections::HashSet<u64> =
            self.rows.iter().filter(|r| r.strategy == "recorded").map(|r| r.turn).collect();
        self.spawns.retain(|sp| kept.contains(&sp.turn));
        let names: Vec<String> = self.strategies.iter().map(|t| t.strategy.clone()).collect();
        self.strategies = names
            .iter()
            .map(|n| total(n, &self.rows.iter().filter(|r| &r.strategy == n).cloned().collect::<Vec<_>>()))
            .collect();
        self
    }
}

/// The tools with which Claude Code starts a subagent: `Task`, renamed `Agent` in 2.1.x
/// (shared/formats/claude-code.md, "Subagents").
pub const SPAWN_TOOLS: [&str; 2] = ["Task", "Agent"];

/// A subagent run started by a recorded call: the tool call, its result and the agent it names.
#[derive(Debug, Clone, Default, PartialEq, serde::Serialize)]
pub struct Spawn {
    /// The recorded row (its `turn`) whose response made the call.
    pub turn: u64,
    /// The tool call's id and tool.
    pub call: String,
    pub tool: String,
    /// The subagent's id, from the result's `agentId: <id>` line (Claude Code writes it for
    /// resuming); `None` when the result names none.
    pub agent: Option<String>,
    /// The times of the call's response and of its result (RFC 3339 as written).
    pub start: Option<String>,
    pub end: Option<String>,
}

/// One strategy's totals over a session.
#[derive(Debug, Clone, PartialEq, serde::Serialize)]
pub struct StrategyTotal {
    pub strategy: String,
    pub requests: u64,
    pub prompt_tokens: u64,
    pub cache_read_tokens: u64,
    pub cost_usd: Option<f64>,
}

/// What the reconstruction says about one turn of the recorded replay.
#[derive(Debug, Clone, Default)]
struct Turn {
    ts: String,
    /// The time of the record before the response (when the request left, as far as the
    /// transcript tells).
    start: String,
    /// Its spawning calls (index into the session's spawn list).
    spawns: Vec<usize>,
    model: Option<String>,
    /// The provider's prompt tokens, as the journal recorded them.
    recorded: Option<u64>,
    estimated: Option<u64>,
    hit: Option<f64>,
    brk: Option<BreakCause>,
    brk_cost: Option<f64>,
    compaction: bool,
    /// Its text, when asked for.
    content: Option<Content>,
}

/// A row of `input` with its identity filled in and every figure empty.
fn blank(input: &SessionInput, strategy: &str, turn: u64, ts: Option<String>, model: Option<String>) -> ExportRow {
    ExportRow {
        schema: SCHEMA,
        session: input.session.clone(),
        agent: input.key.agent.name(),
        project: input.key.project.clone(),
        source: input.path.display().to_string(),
        parent_session: input.parent.clone(),
        turn,
        timestamp: ts.filter(|t| !t.is_empty()),
        provider: model.as_deref().and_then(provider),
        model,
        strategy: strategy.to_string(),
        prompt_tokens_recorded: None,
        prompt_tokens_estimated: None,
        input_tokens: 0,
        cache_read_tokens: 0,
        cache_write_tokens: 0,
        output_tokens: 0,
        cost_usd: None,
        break_cost_usd: None,
        simulated_hit: None,
        break_cause: None,
        compaction: false,
        start_timestamp: None,
        cache_write_1h_tokens: 0,
        cost_parts: None,
        content: None,
    }
}

/// The rows of `input`: one per billed call, then one per turn of each strategy's replay
/// (with `content`, the recorded rows carry their call's text).
pub fn rows(input: &SessionInput, strategies: &[Strategy], tokenizer: &Tokenizer, content: bool) -> SessionRows {
    let mut out = SessionRows {
        agent: input.key.agent.name(),
        session: input.session.clone(),
        project: input.key.project.clone(),
        parent: input.parent.clone(),
        source: input.path.display().to_string(),
        rows: Vec::with_capacity(input.entries.len()),
        strategies: Vec::new(),
        note: None,
        spawns: Vec::new(),
        agent_id: input.parent.as_ref().and_then(|_| input.session.strip_prefix("agent-")).map(str::to_string),
    };
    let rebuilt = reconstruct(input, tokenizer);
    let mut spawns = Vec::new();
    let turns = match &rebuilt {
        Ok((j, est)) => recorded_turns(j, est, content, &mut spawns),
        Err(why) => {
            out.note = Some(why.clone());
            Vec::new()
        }
    };
    let joined = join(&input.entries, &turns);
    // The model a turn was billed at, as `usage` names it (pi's journal says `provider/model`).
    let mut billed_model: Vec<Option<String>> = vec![None; turns.len()];
    for (i, (e, k)) in input.entries.iter().zip(&joined).enumerate() {
        let mut t = k.and_then(|k| turns.get(k)).cloned().unwrap_or_default();
        if let Some(k) = *k {
            billed_model[k] = e.model.clone();
        }
        let mut r = blank(input, "recorded", i as u64 + 1, Some(e.ts.clone()), e.model.clone());
        r.prompt_tokens_recorded = Some(e.tokens.prompt());
        r.prompt_tokens_estimated = t.estimated;
        r.input_tokens = e.tokens.input;
        r.cache_read_tokens = e.tokens.cache_read;
        r.cache_write_tokens = e.tokens.cache_creation;
        r.output_tokens = e.tokens.output;
        r.cost_usd = e.cost;
        r.simulated_hit = t.hit;
        r.break_cause = t.brk.map(|b| b.name().to_string());
        r.break_cost_usd = t.brk_cost;
        r.compaction = t.compaction;
        r.start_timestamp = Some(t.start).filter(|s| !s.is_empty());
        r.cache_write_1h_tokens = e.cache_creation_1h;
        r.cost_parts = cost_parts(e);
        r.content = t.content.take();
        for &k in &t.spawns {
            if let Some(sp) = spawns.get_mut(k) {
                sp.turn = r.turn;
                out.spawns.push(sp.clone());
            }
        }
        out.rows.push(r);
    }
    out.strategies.push(total("recorded", &out.rows));
    let Ok((journal, est)) = &rebuilt else { return out };
    // Every replay shares the session's environment (each turn at its model, the provider's
    // unexplained losses), as in `ctxj cache`.
    let pricing = Pricing::for_session(journal, None, None, PriceTable::builtin());
    let billed = cache::billed(journal, est, &pricing.table, pricing.slug.as_deref());
    let opts = pricing.options_with(&billed);
    for s in strategies.iter().filter(|s| !s.is_recorded()) {
        let rows = simulated(input, journal, est, s, &opts, &turns, &billed_model);
        out.strategies.push(total(&s.name, &rows));
        out.rows.extend(rows);
    }
    out
}

/// One row per turn of `s`'s replay, each turn priced at the model it was billed at (as `ctxj
/// cache` prices it, with the same environment).
fn simulated(
    input: &SessionInput,
    journal: &Journal,
    est: &TiktokenEstimator,
    s: &Strategy,
    opts: &cache::Options,
    turns: &[Turn],
    billed_model: &[Option<String>],
) -> Vec<ExportRow> {
    let sim = cache::simulate(journal, s, est, opts.clone(), |_, _| {});
    sim.turns
        .iter()
        .map(|f| {
            let k = f.turn.saturating_sub(1);
            let t = turns.get(k).cloned().unwrap_or_default();
            let model = billed_model.get(k).cloned().flatten().or(t.model);
            let mut r = blank(input, &s.name, f.turn as u64, Some(t.ts), model);
            r.prompt_tokens_estimated = Some(f.prompt);
            r.input_tokens = f.new.saturating_sub(f.write);
            r.cache_read_tokens = f.cached;
            r.cache_write_tokens = f.write;
            r.output_tokens = f.output;
            r.cost_usd = f.cost;
            r.simulated_hit = (f.prompt > 0).then(|| f.cached as f64 / f.prompt as f64);
            r.break_cause = f.is_break.then(|| BreakCause::PrefixChange.name().to_string());
            r.compaction = t.compaction;
            r
        })
        .collect()
}

/// The transcript imported in memory and its tokenizer.
fn reconstruct(input: &SessionInput, tokenizer: &Tokenizer) -> Result<(Journal, TiktokenEstimator), String> {
    let format = input.format.ok_or_else(|| "ctxj does not import this file".to_string())?;
    let imported = import_file(&input.path, format, input.part.as_deref()).map_err(|e| e.to_string())?;
    let est = tokenizer.estimator(&imported.journal).map_err(|e| e.to_string())?;
    Ok((imported.journal, est))
}

/// Per turn of the recorded replay: its times, model, estimate, simulated hit, recorded break,
/// whether a compaction record precedes it, its text (with `with_content`) and the subagent runs
/// it started (into `spawns`).
fn recorded_turns(
    journal: &Journal,
    est: &TiktokenEstimator,
    with_content: bool,
    spawns: &mut Vec<Spawn>,
) -> Vec<Turn> {
    let session_model = journal.session().and_then(|s| s.model.clone());
    let mut turns = Vec::with_capacity(journal.turns.len());
    let mut compaction = false;
    let mut previous = String::new();
    // The input of the next request: what was recorded since the last response.
    let mut input: Vec<String> = Vec::new();
    for rec in &journal.records {
        if with_content {
            input.extend(content::input_part(rec));
        }
        match &rec.body {
            Body::Compact(_) => compaction = true,
            Body::Assistant(a) => {
                let mut t = Turn {
                    ts: rec.ts.to_string(),
                    start: previous.clone(),
                    model: a.model.clone().or_else(|| session_model.clone()),
                    recorded: a.usage.as_ref().and_then(|u| u.prompt_tokens),
                    compaction: std::mem::take(&mut compaction),
                    content: with_content.then(|| Content::new(&std::mem::take(&mut input), &content::output_of(a))),
                    ..Turn::default()
                };
                for c in a.calls.iter().filter(|c| SPAWN_TOOLS.contains(&c.tool.as_str())) {
                    t.spawns.push(spawns.len());
                    let start = Some(rec.ts.to_string()).filter(|s| !s.is_empty());
                    spawns.push(Spawn {
                        turn: 0,
                        call: c.id.clone(),
                        tool: c.tool.clone(),
                        agent: None,
                        start,
                        end: None,
                    });
                }
                turns.push(t);
            }
            Body::Result(r) => {
                if let Some(sp) = spawns.iter_mut().rev().find(|sp| sp.call == r.call && sp.end.is_none()) {
                    sp.end = Some(rec.ts.to_string()).filter(|s| !s.is_empty());
                    sp.agent = agent_named(&r.text);
                }
            }
            _ => {}
        }
        if !rec.ts.is_empty() {
            previous = rec.ts.to_string();
        }
    }
    let pricing = Pricing::for_session(journal, None, None, PriceTable::builtin());
    let recorded = strategy::parse("recorded").expect("recorded is a strategy");
    let sim = cache::simulate(journal, &recorded, est, pricing.options(), |_, _| {});
    for f in &sim.turns {
        if let Some(t) = turns.get_mut(f.turn.saturating_sub(1)) {
            t.estimated = Some(f.prompt);
            t.hit = (f.prompt > 0).then(|| f.cached as f64 / f.prompt as f64);
        }
    }
    let billed = cache::billed(journal, est, &pricing.table, None);
    for b in &billed.breaks {
        if let Some(t) = turns.get_mut(b.turn.saturating_sub(1)) {
            t.brk = Some(b.cause);
            t.brk_cost = b.cost;
        }
    }
    turns
}

/// The parts of a call's cost, when its cost is the built-in price's (a recorded cost has none).
fn cost_parts(e: &UsageEntry) -> Option<CostParts> {
    let cost = e.cost?;
    let parts = builtin_cost_parts(e.model.as_deref(), &e.tokens, e.cache_creation_1h)?;
    let sum = parts.prompt() + parts.output;
    ((sum - cost).abs() <= 1e-9 * cost.max(1.0)).then_some(parts)
}

/// The agent id a spawning call's result names: Claude Code ends it with `agentId: <id> (for
/// resuming …)` (shared/formats/claude-code.md, "Subagents").
fn agent_named(result: &str) -> Option<String> {
    let (_, rest) = result.rsplit_once("agentId: ")?;
    let id: String =
        rest.chars().take_while(|c| c.is_ascii_alphanumeric() || *c == '-' || *c == '_').take(64).collect();
    (!id.is_empty()).then_some(id)
}

/// The turn (index) of each billed call: the next turn, in order, whose recorded prompt tokens
/// are the call's (a call no turn stands for — a compaction call — gets none).
fn join(entries: &[UsageEntry], turns: &[Turn]) -> Vec<Option<usize>> {
    let mut next = 0;
    entries
        .iter()
        .map(|e| {
            let at = turns[next.min(turns.len())..].iter().position(|t| t.recorded == Some(e.tokens.prompt()))?;
            let k = next + at;
            next = k + 1;
            Some(k)
        })
        .collect()
}

/// The totals of one strategy's rows.
fn total(name: &str, rows: &[ExportRow]) -> StrategyTotal {
    let sum = |f: fn(&ExportRow) -> u64| rows.iter().map(f).fold(0u64, u64::saturating_add);
    let costs: Vec<f64> = rows.iter().filter_map(|r| r.cost_usd).collect();
    StrategyTotal {
        strategy: name.to_string(),
        requests: rows.len() as u64,
        prompt_tokens: sum(|r| r.input_tokens.saturating_add(r.cache_read_tokens).saturating_add(r.cache_write_tokens)),
        cache_read_tokens: sum(|r| r.cache_read_tokens),
        cost_usd: (!costs.is_empty()).then(|| costs.iter().sum()),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::usage::entry::{SessionKey, Tokens};

    fn entry(prompt: u64) -> UsageEntry {
        let key = SessionKey { agent: crate::usage::Agent::Codex, project: String::new(), session: "s".into() };
        UsageEntry {
            session: std::sync::Arc::new(key),
            file: 0,
            ts: String::new(),
            model: None,
            tokens: Tokens { input: prompt, ..Tokens::default() },
            cache_creation_1h: 0,
            cost: None,
            uncounted_by_ccusage: false,
            extra: 0,
            double_counted: 0,
            sidechain: false,
        }
    }

    fn turn(recorded: u64) -> Turn {
        Turn { recorded: Some(recorded), ..Turn::default() }
    }

    #[test]
    fn a_spawning_result_names_its_agent() {
        let text = "done.\nagentId: a2898e3 (for resuming to continue this agent's work if needed)\n<usage>…";
        assert_eq!(agent_named(text).as_deref(), Some("a2898e3"));
        assert_eq!(agent_named("no agent here"), None);
        assert_eq!(agent_named("agentId: "), None);
    }

    #[test]
    fn calls_join_the_next_turn_with_their_prompt_and_a_compaction_call_joins_none() {
        let entries: Vec<UsageEntry> = [100, 200, 150, 300].map(entry).into();
        let turns = [turn(100), turn(200), turn(300)];
        assert_eq!(join(&entries, &turns), [Some(0), Some(1), None, Some(2)]);
        // Order is kept: a later call never joins an earlier turn.
        let entries: Vec<UsageEntry> = [200, 100].map(entry).into();
        assert_eq!(join(&entries, &turns), [Some(1), None]);
    }
}
