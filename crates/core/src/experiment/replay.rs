//! `--replay STRATEGY…`: counterfactual arms — each strategy replayed over the reference arm's
//! runs through `cache::compare` (the simulation of `ctxj cache`), compared with the replay of
//! `recorded` over the same runs, so both sides share one cache model and one token count.
//! A replay keeps the recorded trajectory: it cannot tell whether the run would have passed.

use super::run::{Measures, Run};
use super::stats::Bootstrap;
use super::summary::{summarize, ArmKind, ArmSummary};
use super::ExperimentError;
use crate::cache::{self, PriceTable, Pricing, Simulation};
use crate::journal::Journal;
use crate::strategy;

/// What the replays are compared with: `recorded`, replayed over the same runs.
pub const REPLAY_REFERENCE: &str = "the replayed recorded runs";

/// One arm per strategy of `opts.replay`, counted with `opts.tokenizer`; `first_index` numbers
/// their random streams after the real arms.
pub fn replay(
    journals: &[&Journal],
    reference: &str,
    opts: &super::Options,
    table: &PriceTable,
    model: Option<&str>,
    boot: &Bootstrap,
    first_index: usize,
) -> Result<Vec<ArmSummary>, ExperimentError> {
    let (names, tokenizer) = (&opts.replay, &opts.tokenizer);
    if names.is_empty() {
        return Ok(Vec::new());
    }
    let mut strategies = vec![strategy::parse("recorded")?];
    for n in names {
        strategies.push(strategy::parse(n)?);
    }
    // per journal: one simulation per strategy, `recorded` first.
    let mut sims: Vec<Vec<Simulation>> = Vec::new();
    for j in journals {
        let est = tokenizer
            .estimator(j)
            .map_err(|source| ExperimentError::Encoding { session: j.path.display().to_string(), source })?;
        let pricing = Pricing::for_session(j, model, None, table.clone());
        sims.push(cache::compare(j, &strategies, &est, pricing, &mut |_, _| {}).sims);
    }
    let runs_of = |k: usize| -> Vec<Run> {
        sims.iter()
            .zip(journals)
            .map(|(s, j)| Run {
                arm: strategies[k].name.clone(),
                session: j.path.display().to_string(),
                format: "replay".into(),
                model: None,
                outcome: None,
                measures: measures(&s[k]),
                per_turn: Vec::new(),
            })
            .collect()
    };
    let recorded = runs_of(0);
    let recorded: Vec<&Run> = recorded.iter().collect();
    Ok((1..strategies.len())
        .map(|k| {
            let runs = runs_of(k);
            let kind = ArmKind::Replay { strategy: strategies[k].name.clone(), of: reference.to_string() };
            let label = format!("replay:{}", strategies[k].name);
            summarize(
                &label,
                kind,
                &runs.iter().collect::<Vec<_>>(),
                Some((REPLAY_REFERENCE, &recorded)),
                boot,
                first_index + k,
            )
        })
        .collect())
}

/// A replay's measures: what the simulation knows (no compactions, no wall time).
fn measures(s: &Simulation) -> Measures {
    let m = &s.summary;
    Measures {
        cost: m.cost,
        turns: Some(m.turns as f64),
        prompt_tokens: Some(m.prompt as f64),
        peak_prompt: Some(m.peak_prompt as f64),
        cache_hit_rate: Some(m.hit_rate),
        cache_breaks: Some(m.breaks as f64),
        compactions: None,
        wall_seconds: None,
    }
}
