//! `ctxj experiment`: real runs of several context strategies side by side (seed 001's
//! experiment) — per arm the pass count, and mean ± sd with a seeded bootstrap 95 % interval of
//! cost, turns, prompt tokens, peak prompt, cache hit rate, cache breaks, compactions and wall
//! time, each against a reference arm — plus, on request, counterfactual replays of the
//! reference arm's runs (`docs/experiments.md`).
//!
//! Every figure of a real run is what the provider billed (`cache::billed`); replays go through
//! `cache::compare`, the same simulation as `ctxj cache`.

pub mod manifest;
pub mod replay;
pub mod run;
pub mod stats;
pub mod summary;

use std::path::{Path, PathBuf};

use serde::Serialize;

use crate::cache::{self, billed::billed};
use crate::import;
use crate::journal::ReadOptions;
use crate::tokens::Tokenizer;

pub use manifest::Manifest;
pub use run::{Metric, Run};
pub use summary::{ArmKind, ArmSummary};

/// Why an experiment cannot be run.
#[derive(Debug, thiserror::Error)]
pub enum ExperimentError {
    #[error("reading the manifest {path}")]
    Read {
        path: String,
        #[source]
        source: std::io::Error,
    },
    #[error("{file}: not a valid experiment manifest: {msg}")]
    Toml { file: String, msg: String },
    #[error("{file}: {msg}")]
    Manifest { file: String, msg: String },
    #[error("arm {label:?}: bad glob {pattern:?}: {msg}")]
    Glob { label: String, pattern: String, msg: String },
    #[error("arm {label:?}: {session} is outside the manifest's folder and is not a session ctxj reads (its content is not shown)")]
    Outside { label: String, session: String },
    #[error("arm {label:?}: {pattern:?} matches no session")]
    NoMatch { label: String, pattern: String },
    #[error("arm {label:?}: {session}")]
    Load {
        label: String,
        session: String,
        #[source]
        source: Box<import::ImportError>,
    },
    #[error("{session}: {source}")]
    Encoding {
        session: String,
        #[source]
        source: crate::tokens::estimator::EncodingError,
    },
    #[error("`[outcomes]` names {0:?}, which is no session of any arm")]
    StrayOutcome(String),
    #[error(transparent)]
    Prices(#[from] cache::PricingError),
    #[error(transparent)]
    Strategy(#[from] crate::strategy::StrategyError),
}

/// How to run it.
#[derive(Debug, Clone, Default)]
pub struct Options {
    /// Strategies to replay over the reference arm's runs (`--replay`).
    pub replay: Vec<String>,
    /// Overrides the manifest's `seed`.
    pub seed: Option<u64>,
    /// How each run's tokens are counted (`--encoding`, the persistent memo).
    pub tokenizer: Tokenizer,
}

/// The whole result (`"schema": "ctxj.experiment/1"` in JSON).
#[derive(Debug, Clone, Serialize, schemars::JsonSchema)]
pub struct Experiment {
    pub schema: &'static str,
    pub manifest: String,
    pub name: Option<String>,
    pub reference: String,
    pub seed: u64,
    pub resamples: usize,
    /// How intervals are computed, in words.
    pub interval: &'static str,
    pub arms: Vec<ArmSummary>,
    pub runs: Vec<Run>,
    /// What the comparison should know: sessions matched twice in one arm (counted once), a
    /// session in two arms, arms holding the same runs.
    pub notes: Vec<String>,
    /// Every file the experiment read (manifest, price table, each run's file): an output path
    /// must be none of them (`report --experiment -o`).
    #[serde(skip)]
    #[schemars(skip)]
    pub inputs: Vec<PathBuf>,
}

/// The most bootstrap draws (`resamples` × runs) an experiment makes: beyond it the resamples
/// are lowered, with a note (issue 31: 2 × 10,000 runs took 86 s with no progress).
pub const MAX_BOOTSTRAP_DRAWS: usize = 5_000_000;

/// The resamples to draw: `asked`, lowered so that resamples × `runs` stays within
/// [`MAX_BOOTSTRAP_DRAWS`] (never below 100).
pub fn bounded_resamples(asked: usize, runs: usize) -> usize {
    asked.min((MAX_BOOTSTRAP_DRAWS / runs.max(1)).max(100))
}

/// The interval method, as shown to users.
pub const INTERVAL: &str = "95% percentile bootstrap of the mean (each arm resampled on its own; ratio of means for cost, difference of means otherwise)";

/// Reads the manifest at `path`, every session of every arm, and summarises them.
pub fn run(path: &Path, opts: &Options) -> Result<Experiment, ExperimentError> {
    let m = Manifest::read(path)?;
    let base = path.parent().map_or_else(|| PathBuf::from("."), Path::to_path_buf);
    let base = if base.as_os_str().is_empty() { PathBuf::from(".") } else { base };
    let prices = m.prices.as_ref().map(|p| base.join(p));
    let table = cache::load_table(prices.as_deref())?;
    let mut inputs: Vec<PathBuf> = std::iter::once(path.to_path_buf()).chain(prices).collect();
    let canon_base = base.canonicalize().ok();
    let mut runs = Vec::new();
    let mut journals = Vec::new();
    let mut notes = Vec::new();
    // Each arm's sessions by identity, to find sessions shared between arms.
    let mut members: Vec<(String, Vec<Member>)> = Vec::new();
    for arm in &m.arms {
        let sessions = manifest::resolve(&base, arm, &mut notes)?;
        members.push((
            arm.label.clone(),
            sessions.iter().map(|s| (manifest::identity(&s.path), s.name.clone())).collect(),
        ));
        for s in sessions {
            inputs.push(s.path.clone());
            inputs.push(s.path.join(crate::journal::session::JOURNAL_FILE));
            let loaded = import::load_path(&s.path, ReadOptions::default()).map_err(|source| {
                // A file outside the manifest's folder (`~/.aws/credentials`, `../x`) that is no
                // session: its error would quote its first line; say only that it is refused.
                let inside = canon_base.as_ref().zip(s.path.canonicalize().ok()).is_some_and(|(b, p)| p.starts_with(b));
                if inside {
                    ExperimentError::Load {
                        label: arm.label.clone(),
                        session: s.name.clone(),
                        source: Box::new(source),
                    }
                } else {
                    ExperimentError::Outside { label: arm.label.clone(), session: s.name.clone() }
                }
            })?;
            let j = loaded.journal;
            let est = opts
                .tokenizer
                .estimator(&j)
                .map_err(|source| ExperimentError::Encoding { session: s.name.clone(), source })?;
            let b = billed(&j, &est, &table, m.model.as_deref());
            let outcome = match m.outcomes.get(&s.name) {
                Some(&passed) => Some(run::Outcome { passed, source: run::OutcomeSource::Manifest, check: None }),
                None => run::journal_outcome(&j),
            };
            runs.push(Run {
                arm: arm.label.clone(),
                session: s.name,
                format: loaded.format.name().to_string(),
                model: b.models.first().cloned().or_else(|| m.model.clone()),
                outcome,
                measures: run::Measures::of(&j, &b),
                per_turn: run::curve(&b),
            });
            journals.push(j);
        }
    }
    shared_sessions(&members, &mut notes);
    if let Some(stray) = m.outcomes.keys().find(|k| !runs.iter().any(|r| &r.session == *k)) {
        return Err(ExperimentError::StrayOutcome(stray.clone()));
    }
    let asked = m.resamples.unwrap_or(stats::DEFAULT_RESAMPLES);
    let resamples = bounded_resamples(asked, runs.len().saturating_mul(1 + opts.replay.len()));
    if resamples < asked {
        notes.push(format!(
            "resamples lowered from {asked} to {resamples}: resamples × runs is bounded by {MAX_BOOTSTRAP_DRAWS}"
        ));
    }
    let boot = stats::Bootstrap { seed: opts.seed.or(m.seed).unwrap_or(stats::DEFAULT_SEED), resamples };
    let reference = m.reference().to_string();
    let of = |label: &str| runs.iter().filter(|r| r.arm == label).collect::<Vec<&Run>>();
    let refs = of(&reference);
    let mut arms: Vec<ArmSummary> = m
        .arms
        .iter()
        .enumerate()
        .map(|(i, a)| {
            let against = (a.label != reference).then_some((reference.as_str(), refs.as_slice()));
            summary::summarize(&a.label, ArmKind::Runs, &of(&a.label), against, &boot, i)
        })
        .collect();
    let ref_journals: Vec<_> = runs.iter().zip(&journals).filter(|(r, _)| r.arm == reference).map(|(_, j)| j).collect();
    let replayed = replay::replay(&ref_journals, &reference, opts, &table, m.model.as_deref(), &boot, arms.len())?;
    arms.extend(replayed);
    Ok(Experiment {
        schema: "ctxj.experiment/1",
        manifest: path.display().to_string(),
        name: m.name.clone(),
        reference,
        seed: boot.seed,
        resamples: boot.resamples,
        interval: INTERVAL,
        arms,
        runs,
        notes,
        inputs,
    })
}

/// A session of an arm: its identity on disk and its name in the manifest.
type Member = (Option<manifest::Identity>, String);

/// Notes for runs that belong to two arms (each arm then measures the same run) and for arms
/// holding exactly the same runs (their contrast is zero by construction, not a finding).
fn shared_sessions(members: &[(String, Vec<Member>)], notes: &mut Vec<String>) {
    let same = |a: &Member, b: &Member| match (&a.0, &b.0) {
        (Some(x), Some(y)) => x == y,
        _ => a.1 == b.1,
    };
    for (i, (la, sa)) in members.iter().enumerate() {
        for (lb, sb) in &members[i + 1..] {
            let shared: Vec<&str> = sa.iter().filter(|a| sb.iter().any(|b| same(a, b))).map(|a| a.1.as_str()).collect();
            if shared.is_empty() {
                continue;
            }
            if shared.len() == sa.len() && sa.len() == sb.len() {
                notes.push(format!(
                    "warning: arms {la:?} and {lb:?} hold the same {} run(s): their contrast is zero by construction",
                    sa.len()
                ));
            } else {
                notes.push(format!(
                    "warning: {} session(s) belong to both arms {la:?} and {lb:?} ({}): the arms are not independent",
                    shared.len(),
                    shared.join(", ")
                ));
            }
        }
    }
}

#[cfg(test)]
mod bound_tests {
    use super::*;

    /// Issue 31: `resamples × runs` had no bound (2 × 10,000 runs: 86 s); past
    /// [`MAX_BOOTSTRAP_DRAWS`] the resamples are lowered (and a note says so).
    #[test]
    fn regression_resamples_times_runs_is_bounded() {
        assert_eq!(bounded_resamples(10_000, 12), 10_000);
        assert_eq!(bounded_resamples(1_000_000, 20_000), MAX_BOOTSTRAP_DRAWS / 20_000);
        assert!(bounded_resamples(10_000, 20_000) * 20_000 <= MAX_BOOTSTRAP_DRAWS);
        assert_eq!(bounded_resamples(10_000, usize::MAX), 100, "never below 100");
        assert_eq!(bounded_resamples(5, 0), 5);
    }
}
