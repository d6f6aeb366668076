//! `ctxj tune`: the context settings of a harness swept over the user's own sessions, the
//! non-dominated ones on (cost, retention) and the line to paste (docs/tune.md).

use std::collections::BTreeMap;
use std::io::Write;
use std::path::PathBuf;

use anyhow::{Context, Result};

use ctxj::render::rows::write_output;
use ctxj::render::style::Paint;
use ctxj_core::import::Format;
use ctxj_core::journal::Journal;
use ctxj_core::text::escape_line;
use ctxj_core::tune::{self, Harness, Objective};

use super::args::{paths_or_defaults, RowsArgs};
use super::resolve::{EncodingArgs, PricingArgs};
use super::{Ctx, EXIT_OK};

/// Sweep a harness's context settings over your sessions and recommend one.
///
/// Every session is replayed under each setting of the harness (Claude Code: autoCompactWindow
/// and CLAUDE_AUTOCOMPACT_PCT_OVERRIDE; api: Anthropic context_management clear_tool_uses and
/// compact; Codex: model_auto_compact_token_limit; pi: compaction.reserveTokens; journal:
/// context_budget/context_target/keep_results) through the provider's cache model, each turn at
/// its recorded model, price and time. Scores: cost; demand-weighted retention (of the tool
/// results a later call needs again — same file, URL or command — the share of tokens still
/// verbatim when needed); the needed-but-dropped events and a re-fetch penalty (their tokens plus
/// a call at the current context, × --penalty); compactions; peak prompt; calls above 80 % of the
/// window; the artifact trail. Prints the non-dominated settings on (cost + penalty,
/// retention), the knee, and the recommendation with the exact line to paste, its deltas against
/// the harness default and what you paid, per-session savings (p10/p50/p90) and the share of
/// sessions where it dominates the default. Task success is not measured: the scores are proxies.
///
/// PATHS are transcripts or folders holding them (searched recursively), or ctxj sessions;
/// default: the agents' folders (~/.claude/projects, ~/.codex/sessions, ~/.pi/agent/sessions).
///
/// Examples:
///   ctxj tune sample-journals/transcripts/claude-code
///   ctxj tune sample-journals/transcripts/codex --penalty 2
///   ctxj tune sample-journals/transcripts/claude-code --harness api --objective cost
///   ctxj tune sample-journals/transcripts/pi --format json
///   ctxj tune sample-journals/bugfix-todo --harness journal --window 3000 --format csv
#[derive(Debug, clap::Args)]
#[command(verbatim_doc_comment)]
pub struct Args {
    /// Transcripts, folders holding them, or ctxj sessions (default: the agents' folders).
    pub paths: Vec<PathBuf>,
    /// Whose knobs to sweep (default: the format of most sessions; api sweeps Anthropic's
    /// context_management over any session).
    #[arg(long, value_name = "HARNESS", value_parser = harness_parser())]
    pub harness: Option<Harness>,
    /// Scale of the re-fetch penalty added to each setting's cost (0: cost only).
    #[arg(long, value_name = "M", default_value_t = 1.0)]
    pub penalty: f64,
    /// Which frontier point to recommend.
    #[arg(long, value_name = "OBJECTIVE", value_enum, default_value = "balanced")]
    pub objective: ObjectiveArg,
    #[command(flatten)]
    pub pricing: PricingArgs,
    #[command(flatten)]
    pub encoding: EncodingArgs,
    #[command(flatten)]
    pub output: RowsArgs,
}

/// `--harness` values: the harnesses whose knobs `tune` sweeps.
fn harness_parser() -> impl clap::builder::TypedValueParser<Value = Harness> {
    use clap::builder::TypedValueParser;
    clap::builder::PossibleValuesParser::new(["claude-code", "api", "codex", "pi", "journal"])
        .map(|h| Harness::parse(&h).expect("a listed harness"))
}

/// `--objective` values.
#[derive(Debug, Clone, Copy, PartialEq, Eq, clap::ValueEnum)]
pub enum ObjectiveArg {
    Balanced,
    Cost,
    Retention,
}

fn format_of(h: Harness) -> Option<Format> {
    match h {
        Harness::ClaudeCode => Some(Format::ClaudeCode),
        Harness::Codex => Some(Format::Codex),
        Harness::Pi => Some(Format::Pi),
        Harness::Journal => Some(Format::Ctxj),
        Harness::Api => None,
    }
}

/// The sessions of `paths`, by format: transcripts found as `usage` finds them, and paths that
/// are ctxj sessions.
fn load(paths: &[PathBuf], ctx: &Ctx) -> Result<BTreeMap<Format, Vec<Journal>>> {
    let roots = paths_or_defaults(paths, None)?;
    let mut out: BTreeMap<Format, Vec<Journal>> = BTreeMap::new();
    let files = ctxj_core::usage::transcripts(&roots, None);
    let covered = |p: &PathBuf| files.values().flatten().any(|f| f.starts_with(p));
    let sessions: Vec<&PathBuf> = paths.iter().filter(|p| !covered(p)).collect();
    for (fmt, list) in &files {
        for f in list {
            let spec = f.to_string_lossy();
            let (_, j) = ctx.load(&spec).with_context(|| format!("reading {}", escape_line(&spec)))?;
            out.entry(*fmt).or_default().push(j);
        }
    }
    // A path that holds no transcript: a ctxj session.
    for p in sessions {
        let spec = p.to_string_lossy();
        let l = ctx.load_full(&spec).with_context(|| format!("reading {}", escape_line(&spec)))?;
        out.entry(l.format).or_default().push(l.journal);
    }
    anyhow::ensure!(!out.is_empty(), "no session found in the given paths");
    Ok(out)
}

pub fn run(args: Args, ctx: &Ctx) -> Result<u8> {
    anyhow::ensure!(
        args.penalty.is_finite() && args.penalty >= 0.0,
        "--penalty must be a number ≥ 0, not {}",
        args.penalty
    );
    let table = args.pricing.table(ctx)?;
    let by_format = load(&args.paths, ctx)?;
    let harness = match args.harness {
        Some(h) => h,
        None => {
            let (f, _) = by_format.iter().max_by_key(|(_, v)| v.len()).expect("at least one session");
            tune::harness_of(*f).with_context(|| {
                format!("ctxj tune has no knobs of {} yet; --harness api sweeps the provider's own", f.name())
            })?
        }
    };
    let journals: Vec<&Journal> = match format_of(harness) {
        Some(f) => by_format.get(&f).map(|v| v.iter().collect()).unwrap_or_default(),
        None => by_format.values().flatten().collect(),
    };
    let left = by_format.values().map(Vec::len).sum::<usize>() - journals.len();
    if left > 0 {
        eprintln!("note: {left} session(s) of other harnesses left out (--harness {} sweeps its own)", harness.name());
    }
    anyhow::ensure!(!journals.is_empty(), "no {} session found in the given paths", harness.name());
    let objective = match args.objective {
        ObjectiveArg::Balanced => Objective::Balanced,
        ObjectiveArg::Cost => Objective::Cost,
        ObjectiveArg::Retention => Objective::Retention,
    };
    let opts = tune::Options {
        harness,
        pricing: args.pricing.choice(),
        penalty: args.penalty,
        objective,
        tokenizer: args.encoding.tokenizer(ctx)?,
    };
    let t = tune::tune(&journals, &table, &opts, &|_, _| {})?;
    let paint = Paint::new(ctx.color);
    let layout = args.output.layout();
    let text = ctxj::render::tune::text(&t, &paint, layout);
    let doc = ctxj::render::tune::doc(t);
    let mut out = super::stdout();
    write_output(&mut out, args.output.format(), &doc, &ctxj::render::tune::rows(&doc), || text)?;
    out.flush()?;
    Ok(EXIT_OK)
}

impl super::Cmd for Args {
    fn machine_output(&self) -> bool {
        self.output.machine()
    }

    fn run(self, ctx: &super::Ctx) -> anyhow::Result<u8> {
        run(self, ctx)
    }
}
