//! Value parsers that offer words to shell completions: `-s/--strategy` (and `experiment
//! --replay`) the strategy families of the library's one list (`strategy::completion_words`),
//! `--at` its keywords (`At::KEYWORDS`), instead of file names. The words are clap possible
//! values, hidden from `--help` and never used to validate: the wrapped parser decides.

use clap::builder::{PossibleValue, TypedValueParser};

/// `inner`, offering `words()` to completion scripts.
#[derive(Clone)]
pub struct Offered<P> {
    inner: P,
    words: fn() -> Vec<&'static str>,
}

impl<P: TypedValueParser> TypedValueParser for Offered<P> {
    type Value = P::Value;

    fn parse_ref(
        &self,
        cmd: &clap::Command,
        arg: Option<&clap::Arg>,
        value: &std::ffi::OsStr,
    ) -> Result<Self::Value, clap::Error> {
        self.inner.parse_ref(cmd, arg, value)
    }

    fn possible_values(&self) -> Option<Box<dyn Iterator<Item = PossibleValue> + '_>> {
        Some(Box::new((self.words)().into_iter().map(PossibleValue::new)))
    }
}

/// A strategy name, parsed by `parse`, completed from the families' starts and examples.
pub fn strategy<P: TypedValueParser>(parse: P) -> Offered<P> {
    Offered { inner: parse, words: ctxj_core::strategy::completion_words }
}

/// Any text, completed with `words`.
pub fn words(words: fn() -> Vec<&'static str>) -> Offered<clap::builder::StringValueParser> {
    Offered { inner: clap::builder::StringValueParser::new(), words }
}

/// The first value of `--at`: its keywords (its number is not offered anything).
pub fn at_keywords() -> Vec<&'static str> {
    ctxj_core::projection::At::KEYWORDS.to_vec()
}
