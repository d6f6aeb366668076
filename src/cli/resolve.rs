//! Flag groups that resolve themselves into typed values, once (ripgrep's `LowArgs → HiArgs`,
//! hyperfine's `Options::from_cli_arguments`): `-s/--strategy` parsed by clap into
//! [`Strategy`] values with the summarizer attached and the default set declared once
//! ([`StrategyArgs`]); `--cache`, `--model`, `--prices`, `--window`, `--provider-breaks` into one
//! [`Pricing`] with one unknown-key policy ([`PricingArgs`]); `--encoding` into the
//! [`Tokenizer`] every token count goes through ([`EncodingArgs`]). A command declares none of
//! these flags itself: it flattens the group and calls its resolver.

use std::path::PathBuf;
use std::sync::Arc;

use anyhow::Result;

use ctxj_core::cache::{self, CacheModel, Pricing, PricingChoice, ProviderBreaks};
use ctxj_core::journal::Journal;
use ctxj_core::strategy::summarizer::Summarizer;
use ctxj_core::strategy::{self, Strategy};
use ctxj_core::tokens::{Encoding, TiktokenEstimator, Tokenizer};

use super::Ctx;

/// `-s/--strategy NAME` (repeatable) and `--summarizer CMD`: the strategies a command replays.
/// Each command words the `-s` help for what it does with them (`mut_arg` on its `Args`).
#[derive(Debug, Clone, clap::Args)]
pub struct StrategyArgs {
    /// A strategy to replay (repeatable; `ctxj diff --help` lists the names).
    #[arg(
        short = 's',
        long = "strategy",
        value_name = "NAME",
        value_parser = super::offer::strategy(parse_strategy),
        hide_possible_values = true
    )]
    pub strategies: Vec<Strategy>,
    #[command(flatten)]
    pub summarizer: SummarizerArgs,
}

/// The clap value parser of `-s`: a strategy name of spec §2.
fn parse_strategy(name: &str) -> Result<Strategy, strategy::StrategyError> {
    strategy::parse(name)
}

/// The strategies of one run, each with the run's one summarizer attached.
pub struct Replays {
    pub strategies: Vec<Strategy>,
    summarizer: Option<Arc<Summarizer>>,
}

impl Replays {
    /// The summarizer's first failure as an error (checked before anything is printed).
    pub fn check(&self) -> Result<()> {
        match self.summarizer.as_ref().and_then(|s| s.take_error()) {
            Some(e) => Err(anyhow::Error::new(e)),
            None => Ok(()),
        }
    }

    /// A usage error when a strategy is named twice (a list of rows, not two sides).
    pub fn no_duplicates(&self) -> Result<()> {
        for (i, s) in self.strategies.iter().enumerate() {
            anyhow::ensure!(
                !self.strategies[..i].iter().any(|x| x.name == s.name),
                "--strategy {} is given twice",
                s.name
            );
        }
        Ok(())
    }

    /// The one strategy given, if any; more than one is a usage error.
    pub fn one(&self) -> Result<Option<Strategy>> {
        anyhow::ensure!(
            self.strategies.len() <= 1,
            "--strategy is given {} times; this command replays one strategy",
            self.strategies.len()
        );
        Ok(self.strategies.first().cloned())
    }
}

impl StrategyArgs {
    /// The strategies as given (in order, duplicates kept: `diff -s a -s a --at … --at …`), the
    /// summarizer attached (its answers cached in `cache`, the run's cache folder, when given).
    pub fn as_given(&self, cache: Option<&std::path::Path>) -> Replays {
        let summarizer = self.summarizer.get(cache);
        let strategies = self.strategies.iter().map(|s| s.clone().with_summarizer(summarizer.clone())).collect();
        Replays { strategies, summarizer }
    }

    /// The strategies to compare: the ones given, else [`strategy::defaults`]; a name given twice
    /// is a usage error.
    pub fn list(&self, cache: Option<&std::path::Path>) -> Result<Replays> {
        let mut r = self.as_given(cache);
        r.no_duplicates()?;
        if r.strategies.is_empty() {
            r.strategies = strategy::defaults().into_iter().map(|s| s.with_summarizer(r.summarizer.clone())).collect();
        }
        Ok(r)
    }
}

/// `--summarizer CMD` and `--summarizer-timeout`, part of [`StrategyArgs`].
#[derive(Debug, Clone, clap::Args)]
pub struct SummarizerArgs {
    /// Ask CMD (run with `sh -c`) for each replayed compaction's summary instead of the
    /// deterministic template: the summarizer request as JSON on stdin, the summary on stdout
    /// (docs/summarizer.md). Answers are cached by content hash in the user's cache folder
    /// ($CTXJ_CACHE_DIR, else ~/.cache/ctxj), in summaries/ (off with --no-cache).
    #[arg(long, value_name = "CMD")]
    pub summarizer: Option<String>,
    /// Seconds one summary may take before the command (its whole process group) is killed; at
    /// least 1 (`--summarizer-timeout 0` is refused).
    #[arg(long, value_name = "SECS", default_value_t = 120, requires = "summarizer",
          value_parser = clap::value_parser!(u64).range(1..))]
    pub summarizer_timeout: u64,
}

impl SummarizerArgs {
    /// The summarizer, when `--summarizer` is given, caching in `cache` (a folder inside a
    /// session is refused with a warning: no cache then).
    fn get(&self, cache: Option<&std::path::Path>) -> Option<Arc<Summarizer>> {
        let t = std::time::Duration::from_secs(self.summarizer_timeout);
        let cmd = self.summarizer.as_deref()?;
        let dir = cache.and_then(|base| match ctxj_core::strategy::summarizer::cache_in(base) {
            Ok(d) => Some(d),
            Err(e) => {
                eprintln!("warning: summaries not cached: {}", ctxj_core::text::escape_line(&e.to_string()));
                None
            }
        });
        Some(Arc::new(Summarizer::new(cmd, t, dir)))
    }
}

/// `--cache` values.
#[derive(Debug, Clone, Copy, PartialEq, Eq, clap::ValueEnum)]
pub enum CacheArg {
    Ideal,
    #[value(name = "openai")]
    OpenAi,
    Anthropic,
    Gemini,
}

impl CacheArg {
    fn model(self) -> CacheModel {
        match self {
            CacheArg::Ideal => CacheModel::Ideal,
            CacheArg::OpenAi => CacheModel::OpenAi,
            CacheArg::Anthropic => CacheModel::Anthropic,
            CacheArg::Gemini => CacheModel::Gemini,
        }
    }
}

/// `--provider-breaks` values.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, clap::ValueEnum)]
pub enum ProviderBreaksArg {
    #[default]
    Replay,
    Ignore,
}

/// How requests are priced and cached: the flags of every command that simulates the prompt
/// cache (`cache`, `turns`, `report`), resolved into one [`Pricing`].
#[derive(Debug, Clone, Default, clap::Args)]
pub struct PricingArgs {
    /// Prompt-cache model (default: from the model slug).
    #[arg(long, value_enum, value_name = "MODEL")]
    pub cache: Option<CacheArg>,
    /// Price (and default cache model) as this model slug instead of the session's.
    #[arg(long, value_name = "SLUG")]
    pub model: Option<String>,
    /// LiteLLM model_prices_and_context_window.json to price with (its max_input_tokens and
    /// prompt_cache_min_tokens also give the context window and the cache minimum).
    #[arg(long, value_name = "FILE")]
    pub prices: Option<PathBuf>,
    /// Context window in tokens (default: the journal's ctx_window, else the model's); requests
    /// above it are flagged.
    #[arg(long, value_name = "TOKENS", value_parser = clap::value_parser!(u64).range(1..))]
    pub window: Option<u64>,
    /// replay (default): every simulated strategy repeats, at the same turns, the cache losses the
    /// provider recorded that no request change explains (causes provider, ttl, and
    /// system_or_tools without a system record); ignore: the simulated cache keeps what its model
    /// keeps.
    #[arg(long, value_enum, value_name = "MODE", default_value_t = ProviderBreaksArg::Replay)]
    pub provider_breaks: ProviderBreaksArg,
}

impl PricingArgs {
    /// The price table: `--prices` (its unknown keys named in a warning, or an error under
    /// `--strict`), else the built-in one. Call it before loading the session, so a bad table
    /// fails first.
    pub fn table(&self, ctx: &Ctx) -> Result<cache::PriceTable> {
        let t = cache::load_table_checked(self.prices.as_deref(), ctx.read.strict)?;
        if let Some(keys) = t.unknown_list() {
            let msg = format!("--prices {}: unknown key(s) ignored: {keys}", t.source);
            eprintln!("warning: {}", ctxj_core::text::escape_line(&msg));
        }
        Ok(t)
    }

    /// The flags as one typed [`PricingChoice`] (for library functions that price many sessions).
    pub fn choice(&self) -> PricingChoice {
        PricingChoice {
            model: self.model.clone(),
            cache: self.cache.map(CacheArg::model),
            window: self.window,
            provider_breaks: match self.provider_breaks {
                ProviderBreaksArg::Replay => ProviderBreaks::Replay,
                ProviderBreaksArg::Ignore => ProviderBreaks::Ignore,
            },
        }
    }

    /// The one [`Pricing`] of `journal` under these flags, with `table` from [`PricingArgs::table`].
    pub fn pricing(&self, journal: &Journal, table: cache::PriceTable) -> Pricing {
        self.choice().pricing(journal, table)
    }
}

/// `--encoding`: the tokenizer to count with.
#[derive(Debug, Clone, Default, clap::Args)]
pub struct EncodingArgs {
    /// Tokenizer encoding: o200k_base or cl100k_base (default: the session's, else o200k_base).
    #[arg(long, value_name = "NAME")]
    pub encoding: Option<String>,
}

impl EncodingArgs {
    /// The tokenizer choice of this run: `--encoding` (checked here), else each session's own,
    /// with the run's persistent memo.
    pub fn tokenizer(&self, ctx: &Ctx) -> Result<Tokenizer> {
        let encoding = self.encoding.as_deref().map(Encoding::parse).transpose()?;
        Ok(Tokenizer { encoding, memo: ctx.memo.clone() })
    }

    /// The estimator of `journal`'s token counts.
    pub fn estimator(&self, journal: &Journal, ctx: &Ctx) -> Result<TiktokenEstimator> {
        Ok(self.tokenizer(ctx)?.estimator(journal)?)
    }
}

#[cfg(test)]
mod tests {
    use clap::{CommandFactory, Parser};

    use super::super::Cli;

    /// Every subcommand as clap knows it (no hand-kept list): its long flags.
    fn flags() -> Vec<(String, Vec<String>)> {
        Cli::command()
            .get_subcommands()
            .map(|c| {
                let longs = c.get_arguments().filter_map(|a| a.get_long().map(str::to_string)).collect();
                (c.get_name().to_string(), longs)
            })
            .collect()
    }

    /// A command that replays strategies counts tokens (compaction thresholds, prompt sizes) and
    /// can compact: it takes `--encoding` and `--summarizer`, and its `-s` is the one of
    /// [`super::StrategyArgs`] (the argument id of its field).
    #[test]
    fn every_command_that_replays_takes_the_shared_strategy_encoding_and_summarizer_flags() {
        let mut seen = 0;
        for c in Cli::command().get_subcommands() {
            let Some(s) = c.get_arguments().find(|a| a.get_long() == Some("strategy")) else { continue };
            seen += 1;
            assert_eq!(s.get_id().as_str(), "strategies", "{}: -s declared outside StrategyArgs", c.get_name());
            assert_eq!(s.get_short(), Some('s'), "{}", c.get_name());
            for f in ["encoding", "summarizer", "summarizer-timeout"] {
                assert!(c.get_arguments().any(|a| a.get_long() == Some(f)), "{} has -s but no --{f}", c.get_name());
            }
        }
        assert!(seen >= 7, "show, diff, turns, tokens, cache, report, export replay strategies: {seen}");
    }

    /// Pricing flags come as one group: a command that takes one takes them all.
    #[test]
    fn every_command_that_prices_takes_the_whole_pricing_group() {
        const GROUP: [&str; 5] = ["cache", "model", "prices", "window", "provider-breaks"];
        for (name, longs) in flags() {
            let has = GROUP.iter().filter(|f| longs.iter().any(|l| l == *f)).count();
            if longs.iter().any(|l| l == "prices") {
                assert_eq!(has, GROUP.len(), "{name}: part of the pricing group only: {longs:?}");
            }
        }
    }

    /// Flags spelled the same mean the same: `--encoding`, `--harness`, `--deny`, `--summarizer`
    /// carry the one help text of their group on every command that takes them (`-s` and
    /// `--harness` may reword theirs per command, not their parsing).
    #[test]
    fn shared_flags_have_one_declaration() {
        for flag in ["encoding", "deny", "summarizer", "summarizer-timeout", "provider-breaks", "window", "prices"] {
            let helps: std::collections::BTreeSet<String> = Cli::command()
                .get_subcommands()
                .flat_map(|c| c.get_arguments().filter(|a| a.get_long() == Some(flag)).cloned().collect::<Vec<_>>())
                .map(|a| a.get_help().map(|h| h.to_string()).unwrap_or_default())
                .collect();
            assert!(helps.len() <= 1, "--{flag} is declared more than once: {helps:?}");
        }
    }

    #[test]
    fn a_strategy_named_twice_is_refused_in_a_list_and_kept_as_two_sides() {
        let cli = Cli::try_parse_from(["ctxj", "cache", "x", "-s", "baseline", "-s", "baseline"]).expect("parses");
        let super::super::Command::Cache(a) = cli.command else { panic!("cache") };
        assert!(a.strategy.list(None).is_err());
        let cli = Cli::try_parse_from(["ctxj", "diff", "x", "-s", "baseline", "-s", "baseline"]).expect("parses");
        let super::super::Command::Diff(a) = cli.command else { panic!("diff") };
        assert_eq!(a.strategy.as_given(None).strategies.len(), 2);
    }

    #[test]
    fn no_strategy_means_the_default_set_declared_once() {
        let cli = Cli::try_parse_from(["ctxj", "report", "x", "-o", "/tmp/r.html"]).expect("parses");
        let super::super::Command::Report(a) = cli.command else { panic!("report") };
        let names: Vec<String> = a.strategy.list(None).expect("list").strategies.into_iter().map(|s| s.name).collect();
        let defaults: Vec<String> = ctxj_core::strategy::defaults().into_iter().map(|s| s.name).collect();
        assert_eq!(names, defaults);
    }
}
