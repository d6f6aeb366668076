//! Flag groups that resolve themselves into typed values, once (ripgrep's `LowArgs → HiArgs`,
//! hyperfine's `Options::from_cli_arguments`): `-s/--strategy` parsed by clap into
//! `Strategy` values with the summarizer attached and the default set declared once
//! ([`StrategyArgs`], in [`strategy`]); `--cache`, `--model`, `--prices`, `--window`,
//! `--provider-breaks` into one `Pricing` with one unknown-key policy ([`PricingArgs`], in
//! [`pricing`]); `--encoding` into the
//! [`Tokenizer`] every token count goes through ([`EncodingArgs`]). A command declares none of
//! these flags itself: it flattens the group and calls its resolver.

use anyhow::Result;

use ctxj_core::journal::Journal;
use ctxj_core::tokens::{Encoding, TiktokenEstimator, Tokenizer};

use super::Ctx;

mod pricing;
mod strategy;

pub use pricing::PricingArgs;
pub use strategy::StrategyArgs;

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
