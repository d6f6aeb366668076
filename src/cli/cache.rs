//! `ctxj cache`: strategies compared through a prompt-cache model (spec `strategies.md` §4–§6):
//! peak prompt, new and cached input, hit rate, cost, cost against `baseline`, cache breaks and
//! the first breaks of each strategy explained.

use std::io::Write;

use anyhow::Result;

use ctxj::render::cache::Shown;
use ctxj::render::style::Paint;
use ctxj_core::cache;

use ctxj::render::rows::write_output;

use super::args::{RowsArgs, SessionArgs};
use super::progress::with_progress;
use super::resolve::{EncodingArgs, PricingArgs, StrategyArgs};
use super::{Ctx, EXIT_OK};

/// Compare strategies by prompt-cache hits and cost.
///
/// Each strategy is replayed turn by turn; every request goes through a prompt-cache model and is
/// priced. Columns: turns, peak prompt tokens, new (uncached) input, cached input, hit rate
/// (cached / prompt), cost, cost relative to `baseline`, and cache breaks (turns whose request
/// does not start with the whole previous request). The first breaks of each strategy are then
/// explained: the first differing block (numbered from 1, as in `ctxj show`) and what changed it.
/// Requests above the model's context window (--window overrides it) and below the provider's
/// minimum cacheable prompt are counted per strategy.
///
/// Tokens are raw tiktoken estimates (the same unit for every strategy). Output tokens are the
/// recorded completion_tokens, else the estimate of the turn's assistant block. Without
/// --strategy: recorded and baseline. --cache defaults from the model slug (claude → anthropic,
/// gpt-/o1… → openai, gemini → gemini, else ideal). Prices: a built-in dated table, or LiteLLM's
/// model_prices_and_context_window.json with --prices. Money is $1,234.56 (<$0.01 below a cent;
/// JSON keeps the full figure). The tables fit the terminal (COLUMNS). --format json|ndjson|csv:
/// the rows are the strategies' summaries, with --per-turn every turn of every strategy
/// (docs/json.md, `ctxj.cache/1`).
///
/// Examples:
///   ctxj cache sample-journals/bugfix-todo
///   ctxj cache sample-journals/bugfix-todo -s baseline -s sliding-8 --cache ideal
///   ctxj cache sample-journals/long-elision -s recorded --per-turn --model openai/gpt-4.1
///   ctxj cache sample-journals/transcripts/pi --json
///   ctxj cache sample-journals/transcripts/pi -s baseline --window 3000
///   ctxj cache sample-journals/bugfix-todo -s sliding-8 --per-turn --format csv
#[derive(Debug, clap::Args)]
#[command(verbatim_doc_comment)]
#[command(mut_arg("strategies", |a| a.help("A strategy to compare (repeatable; default: recorded and baseline)")))]
pub struct Args {
    #[command(flatten)]
    pub session: SessionArgs,
    #[command(flatten)]
    pub strategy: StrategyArgs,
    #[command(flatten)]
    pub pricing: PricingArgs,
    /// Per-turn prompt / cached / new / write / output / cost for each strategy, then its total.
    #[arg(long)]
    pub per_turn: bool,
    /// How many cache breaks to explain per strategy.
    #[arg(long, value_name = "N", default_value_t = 3)]
    pub breaks: usize,
    #[command(flatten)]
    pub encoding: EncodingArgs,
    #[command(flatten)]
    pub output: RowsArgs,
}

pub fn run(args: Args, ctx: &Ctx) -> Result<u8> {
    let replays = args.strategy.list(ctx.cache.as_deref())?;
    let table = args.pricing.table(ctx)?;
    let (_, journal) = ctx.load(&args.session.session)?;
    let est = args.encoding.estimator(&journal, ctx)?;
    let pricing = args.pricing.pricing(&journal, table);
    let c = with_progress(|p| cache::compare(&journal, &replays.strategies, &est, pricing, p));
    replays.check()?;
    let shown = Shown { per_turn: args.per_turn, breaks: args.breaks };
    let doc = ctxj::render::cache::doc(&c, shown);
    let text = || ctxj::render::cache::text(&c, &journal, shown, &Paint::new(ctx.color), args.output.layout());
    let mut out = super::stdout();
    let format = args.output.format();
    match args.per_turn {
        true => write_output(&mut out, format, &doc, &ctxj::render::cache::turn_rows(&doc), text)?,
        false => write_output(&mut out, format, &doc, &ctxj::render::cache::rows(&doc), text)?,
    }
    out.flush()?;
    Ok(EXIT_OK)
}

super::session_command!(Args);
