//! The agent logs a command reads (`usage`, `sessions`, `export`, `tune`): paths given, else the
//! agents' default folders (named on stderr), and `--agent` ([`LogArgs`], [`agent_parser`]).

use std::path::PathBuf;

use anyhow::Result;

/// The agent logs `usage` and `export` read: paths, else the agents' default folders.
#[derive(Debug, Clone, Default, clap::Args)]
pub struct LogArgs {
    /// Transcripts or folders holding them (searched recursively); default: the agents' folders.
    pub paths: Vec<PathBuf>,
    /// Only this agent's logs (with a path: read the path as this agent's data folder).
    #[arg(long, value_parser = agent_parser(), value_name = "AGENT")]
    pub agent: Option<ctxj_core::usage::Agent>,
}

impl LogArgs {
    /// The log files to read, by agent: those of every agent whose requests ctxj imports
    /// ([`ctxj_core::usage::agents::Spec::content`]), found as `sessions` finds them (paths
    /// given, else the default folders with their environment overrides, named on stderr); an
    /// error when there is none, or when `--agent` names an agent whose log holds usage counters
    /// only.
    pub fn files(&self) -> Result<std::collections::BTreeMap<ctxj_core::usage::Agent, Vec<PathBuf>>> {
        if let Some(a) = self.agent.filter(|a| !a.spec().content) {
            anyhow::bail!(
                "{} logs hold usage counters only, not the requests ctxj imports; `ctxj usage --agent {}` and \
                 `ctxj sessions --agent {}` read them",
                a.spec().label,
                a.name(),
                a.name()
            );
        }
        check_paths(&self.paths)?;
        if self.paths.is_empty() {
            default_roots(self.agent, Importable::Requests)?;
        }
        let mut files = ctxj_core::usage::discover(&self.paths, self.agent);
        files.retain(|a, _| a.spec().content);
        anyhow::ensure!(
            !files.is_empty(),
            "no transcript of an agent ctxj imports found in the given paths (for another agent's folder add \
             --agent NAME)"
        );
        Ok(files)
    }
}

/// `--agent`: any agent of `ctxj usage` by name (ccusage's `claude` too).
pub fn agent_parser() -> impl clap::builder::TypedValueParser<Value = ctxj_core::usage::Agent> {
    use clap::builder::TypedValueParser;
    let names: Vec<&'static str> = ctxj_core::usage::Agent::ALL.iter().map(|a| a.name()).chain(["claude"]).collect();
    clap::builder::PossibleValuesParser::new(names)
        .map(|n| ctxj_core::usage::Agent::by_name(&n).expect("a listed name"))
}

/// The paths given, else the default folders that exist (named on stderr); an error when there
/// is nothing to read.
/// Only the folders of agents whose transcripts ctxj imports (Claude Code, Codex, pi).
pub fn paths_or_defaults(paths: &[PathBuf], agent: Option<ctxj_core::usage::Agent>) -> Result<Vec<PathBuf>> {
    check_paths(paths)?;
    if !paths.is_empty() {
        return Ok(paths.to_vec());
    }
    Ok(default_roots(agent, Importable::Transcripts)?.into_iter().map(|r| r.path).collect())
}

fn check_paths(paths: &[PathBuf]) -> Result<()> {
    for p in paths {
        anyhow::ensure!(
            p.exists(),
            "{}: no such file or folder",
            ctxj_core::text::escape_line(&p.display().to_string())
        );
    }
    Ok(())
}

/// Which agents' folders [`default_roots`] keeps.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Importable {
    /// Every agent's.
    Any,
    /// Claude Code's, Codex's and pi's (the transcripts ctxj finds in a folder by itself).
    Transcripts,
    /// Those of the agents whose requests ctxj imports (the registry's `content`).
    Requests,
}

/// The existing default folders of `agent` (or of every agent) that `which` keeps, named on
/// stderr.
pub fn default_roots(agent: Option<ctxj_core::usage::Agent>, which: Importable) -> Result<Vec<ctxj_core::usage::Root>> {
    let mut roots = ctxj_core::usage::existing_default_roots(agent);
    roots.retain(|r| match which {
        Importable::Any => true,
        Importable::Transcripts => r.agent.format().is_some(),
        Importable::Requests => r.agent.spec().content,
    });
    anyhow::ensure!(
        !roots.is_empty(),
        "no agent log folder found (~/.claude/projects, ~/.codex/sessions, ~/.pi/agent/sessions, the other agents' \
         folders or their environment overrides; see `ctxj usage --help`); give a path"
    );
    for r in &roots {
        let note = if r.agent.spec().read_supported { "" } else { " (not read yet: format not supported)" };
        eprintln!(
            "reading {} logs in {}{note}",
            r.agent.name(),
            ctxj_core::text::escape_line(&r.path.display().to_string())
        );
    }
    Ok(roots)
}

/// The log files to read, by agent: `paths` (read as `agent`'s data folder for an agent with
/// its own layout), else every existing default folder; an error when none is found.
pub fn agent_files(
    paths: &[PathBuf],
    agent: Option<ctxj_core::usage::Agent>,
) -> Result<std::collections::BTreeMap<ctxj_core::usage::Agent, Vec<PathBuf>>> {
    check_paths(paths)?;
    if paths.is_empty() {
        default_roots(agent, Importable::Any)?;
    }
    let files = ctxj_core::usage::discover(paths, agent);
    if files.is_empty() {
        // An agent's folder holding none of its logs reads as an empty report (ccusage 20.0.24
        // prints "No usage data found." and exits 0); a path read as no agent's is a usage error.
        anyhow::ensure!(
            paths.is_empty() || agent.is_some(),
            "no agent log found in the given paths (for another agent's folder add --agent NAME)"
        );
        let hint = match agent {
            Some(ctxj_core::usage::Agent::Droid) => " (Droid's usage is in each session's `<id>.settings.json`)",
            _ => "",
        };
        eprintln!("no {} log found: an empty report{hint}", agent.map_or("agent", |a| a.name()));
    }
    Ok(files)
}
