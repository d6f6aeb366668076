//! `-s/--strategy` and the summarizer ([`StrategyArgs`]) resolved into the run's [`Replays`]: the
//! strategies given or the default set, each with the run's one summarizer attached.

use std::sync::Arc;

use anyhow::Result;

use ctxj_core::strategy::summarizer::Summarizer;
use ctxj_core::strategy::{self, Strategy};

/// `-s/--strategy NAME` (repeatable) and `--summarizer CMD`: the strategies a command replays.
/// Each command words the `-s` help for what it does with them (`mut_arg` on its `Args`).
#[derive(Debug, Clone, clap::Args)]
pub struct StrategyArgs {
    /// A strategy to replay (repeatable; `ctxj diff --help` lists the names).
    #[arg(
        short = 's',
        long = "strategy",
        value_name = "NAME",
        value_parser = crate::cli::offer::strategy(parse_strategy),
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
