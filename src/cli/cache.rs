//! `ctxj cache`: strategies compared through a prompt-cache model (spec `strategies.md` §4–§6):
//! peak prompt, new and cached input, hit rate, cost, cost against `baseline`, cache breaks and
//! the first breaks of each strategy explained.

use std::io::Write;

use anyhow::Result;

use ctxj::render::cache::Shown;
use ctxj::render::style::Paint;
use ctxj_core::cache::{self, CacheModel, Pricing};
use ctxj_core::strategy::{self, Strategy};
use ctxj_core::tokens::estimator_for;

use ctxj::render::rows::write_output;

use super::args::{EncodingArgs, PricesArgs, RowsArgs, SessionArgs, SummarizerArgs};
use super::progress::with_progress;
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
pub struct Args {
    #[command(flatten)]
    pub session: SessionArgs,
    /// A strategy to compare (repeatable; default: recorded and baseline).
    #[arg(short = 's', long = "strategy", value_name = "NAME")]
    pub strategies: Vec<String>,
    /// Prompt-cache model (default: from the model slug).
    #[arg(long, value_name = "MODEL", value_parser = ["ideal", "openai", "anthropic", "gemini"])]
    pub cache: Option<String>,
    /// Price (and default cache model) as this model slug instead of the session's.
    #[arg(long, value_name = "SLUG")]
    pub model: Option<String>,
    #[command(flatten)]
    pub prices: PricesArgs,
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
    #[command(flatten)]
    pub summarizer: SummarizerArgs,
}

pub fn run(args: Args, ctx: &Ctx) -> Result<u8> {
    let mut names = args.strategies.clone();
    if names.is_empty() {
        names = vec!["recorded".into(), "baseline".into()];
    }
    let sum = args.summarizer.get();
    let strategies: Vec<Strategy> =
        names.iter().map(|n| strategy::parse(n).map(|s| s.with_summarizer(sum.clone()))).collect::<Result<_, _>>()?;
    let forced_cache = args.cache.as_deref().map(CacheModel::parse).transpose()?;
    let table = super::report::load_prices(args.prices.prices.as_deref(), ctx)?;
    let (_, journal) = ctx.load(&args.session.session)?;
    let est = estimator_for(&journal, args.encoding.encoding.as_deref())?;
    let pricing = Pricing::for_session(&journal, args.model.as_deref(), forced_cache, table)
        .with_window(args.prices.window)
        .with_provider_breaks(args.prices.breaks.get());
    let c = with_progress(|p| cache::compare(&journal, &strategies, &est, pricing, p));
    SummarizerArgs::check(&sum)?;
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
