//! The tokenizer encodings of spec §3 (`o200k_base`, `cl100k_base`): their names, the choice
//! between `--encoding` and the session's `encoding`, and tiktoken-rs's encoder of each. The
//! bottom of `tokens`: the counters ([`super::fast`], [`super::estimator`]) and the persistent
//! memo ([`super::memo`]) key on it.

use std::sync::OnceLock;

use tiktoken_rs::CoreBPE;

/// A tokenizer encoding of spec §3.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Default)]
pub enum Encoding {
    /// `o200k_base` (GPT-4o, GPT-4.1, GPT-5, o-series); the default.
    #[default]
    O200kBase,
    /// `cl100k_base` (GPT-4, GPT-3.5).
    Cl100kBase,
}

/// An encoding name that is neither `o200k_base` nor `cl100k_base`.
#[derive(Debug, thiserror::Error)]
#[error("unknown encoding {name:?}{}: expected o200k_base or cl100k_base", if *.from_session { " (the session's `encoding`)" } else { "" })]
pub struct EncodingError {
    /// The name given.
    pub name: String,
    /// Whether it came from the journal's `session` record rather than `--encoding`.
    pub from_session: bool,
}

impl Encoding {
    /// Every supported encoding.
    pub const ALL: [Encoding; 2] = [Encoding::O200kBase, Encoding::Cl100kBase];

    /// The tiktoken name of the encoding.
    pub fn name(self) -> &'static str {
        match self {
            Encoding::O200kBase => "o200k_base",
            Encoding::Cl100kBase => "cl100k_base",
        }
    }

    /// Parses `o200k_base` / `cl100k_base` (also without the `_base` suffix).
    pub fn parse(s: &str) -> Result<Encoding, EncodingError> {
        match s.trim() {
            "o200k_base" | "o200k" => Ok(Encoding::O200kBase),
            "cl100k_base" | "cl100k" => Ok(Encoding::Cl100kBase),
            other => Err(EncodingError { name: other.to_string(), from_session: false }),
        }
    }

    /// The encoding of spec §3: `--encoding` if given, else the session's `encoding`, else
    /// `o200k_base`. An unknown name is an error either way, so every command counts a journal
    /// the same way or refuses it with the same message.
    pub fn choose(flag: Option<&str>, session: Option<&str>) -> Result<Encoding, EncodingError> {
        match (flag, session) {
            (Some(f), _) => Encoding::parse(f),
            (None, Some(s)) => Encoding::parse(s).map_err(|e| EncodingError { from_session: true, ..e }),
            (None, None) => Ok(Encoding::default()),
        }
    }

    /// The process-wide encoder (built on first use, once).
    pub fn bpe(self) -> &'static CoreBPE {
        static O200K: OnceLock<CoreBPE> = OnceLock::new();
        static CL100K: OnceLock<CoreBPE> = OnceLock::new();
        match self {
            Encoding::O200kBase => O200K.get_or_init(|| tiktoken_rs::o200k_base().expect("bundled o200k_base data")),
            Encoding::Cl100kBase => {
                CL100K.get_or_init(|| tiktoken_rs::cl100k_base().expect("bundled cl100k_base data"))
            }
        }
    }
}

impl std::fmt::Display for Encoding {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.name())
    }
}
