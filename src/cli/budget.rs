//! `ctxj budget`: the budget settings a harness TOML gives a model slug (journal-v1 §6), each
//! with the rule that produced it.

use std::io::Write;

use anyhow::{Context as _, Result};

use ctxj::render::rows::write_output;
use ctxj::render::style::Paint;
use ctxj::render::tokens::{budget_doc, budget_text};
use ctxj_core::tokens::budget::{resolve, Config};

use super::args::RowsArgs;
use super::{Ctx, EXIT_FINDINGS, EXIT_OK};

/// Resolve the context settings of a model from a harness config, with the rule behind each.
///
/// The settings: ctx_window, context_budget, context_reserve, context_target and keep_results.
///
/// Rules (journal-v1 §6): the [models."<prefix>"] profile with the longest prefix of the slug
/// applies; a profile value overrides the top-level one, except that a non-zero top-level
/// context_budget beats the profile's; then 0 means auto (budget: 100,000 when ctx_window <=
/// 300,000, else 200,000; target: 70% of the budget, rounded down). A target at or above the budget
/// is reported and replaced by the auto rule. A budget above ctx_window − context_reserve is
/// reported as the error `audit` calls budget-over-window (exit 1). Keys set nowhere take the defaults
/// (ctx_window 1,000,000, context_reserve 8,192, keep_results 5). Without --config: no file, the
/// defaults and auto rules alone. --format json|ndjson|csv: the rows are the settings
/// (docs/json.md, `ctxj.budget/1`).
///
/// Examples:
///   ctxj budget --config docs/harness.toml --model anthropic/claude-sonnet-4-5
///   ctxj budget --config docs/harness.toml --model anthropic/claude-haiku-4-5 --json
///   ctxj budget --model openai/gpt-5
///   ctxj budget --config docs/harness.toml --model openai/gpt-5 --format csv
#[derive(Debug, clap::Args)]
#[command(verbatim_doc_comment)]
pub struct Args {
    /// Harness configuration (TOML).
    #[arg(long, value_name = "FILE")]
    pub config: Option<std::path::PathBuf>,
    /// The model slug to resolve for.
    #[arg(long, value_name = "SLUG")]
    pub model: String,
    #[command(flatten)]
    pub output: RowsArgs,
}

pub fn run(args: Args, ctx: &Ctx) -> Result<u8> {
    let (name, cfg) = match &args.config {
        Some(p) => {
            let text = ctxj_core::journal::input::read_regular_text(p)
                .with_context(|| format!("reading --config {}", p.display()))?;
            let name = p.display().to_string();
            let cfg = Config::parse_checked(&name, &text, ctx.read.strict)?;
            if !cfg.ignored.is_empty() {
                let msg = format!("{name}: unknown key(s) ignored: {}", cfg.ignored_list());
                eprintln!("warning: {}", ctxj_core::text::escape_line(&msg));
            }
            (Some(name), cfg)
        }
        None => (None, Config::default()),
    };
    let r = resolve(&cfg, &args.model);
    let doc = budget_doc(name.as_deref(), &cfg, &r);
    let mut out = super::stdout();
    write_output(&mut out, args.output.format(), &doc, &doc.settings, || {
        budget_text(name.as_deref(), &cfg, &r, &Paint::new(ctx.color), args.output.layout())
    })?;
    out.flush()?;
    // A budget the window cannot hold is the error `audit` reports (budget-over-window): one
    // answer for one setting, so it exits 1 here too.
    Ok(if r.over_window() { EXIT_FINDINGS } else { EXIT_OK })
}

impl super::Cmd for Args {
    fn machine_output(&self) -> bool {
        self.output.machine()
    }

    fn run(self, ctx: &super::Ctx) -> anyhow::Result<u8> {
        run(self, ctx)
    }
}
