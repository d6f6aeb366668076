//! Token estimates (spec `strategies.md` §3).
//!
//! Everything that needs a token count goes through the [`Estimator`] trait, so strategies,
//! the cache simulation and the audit share one notion of "tokens".
//!
//! * [`estimator`]: the tiktoken estimator (`o200k_base` / `cl100k_base`), the piece rule for long
//!   texts, a memo per distinct content and parallel batch counting;
//! * [`fast`]: the exact counter behind it (linear-time pre-split and BPE, tiktoken's counts);
//! * [`memo`]: the persistent token memo in the user's cache folder;
//! * [`model_name`]: the canonical name of any provider's model slug;
//! * [`split`]: tiktoken's pre-tokenization of ASCII text, by hand;
//! * [`calibrate`]: the recency-weighted multiplier against `usage.prompt_tokens`;
//! * [`budget`]: the budget settings of a harness TOML (journal-v1 §6), each with its rule.

pub mod breakdown;
pub mod budget;
pub mod calibrate;
pub mod encoding;
pub mod estimator;
pub mod fast;
pub mod image;
pub mod memo;
pub mod model_name;
pub mod redacted;
pub mod split;

pub use calibrate::Calibrator;
pub use encoding::Encoding;
pub use estimator::TiktokenEstimator;

use crate::journal::Journal;
use crate::projection::Block;

/// Counts tokens of strings; blocks and requests are framed as the spec says.
pub trait Estimator: Sync {
    /// n(s): tokens of one string.
    fn count(&self, s: &str) -> u64;

    /// Per block: [`BLOCK_FRAMING`] + n(text); an assistant block adds n(tool) + n(canonical args) per call;
    /// the system block adds n(canonical tools JSON) when tools are present.
    fn block(&self, b: &Block) -> u64 {
        let mut n = BLOCK_FRAMING + self.count(b.text());
        match b {
            Block::Assistant { calls, .. } => {
                for c in calls {
                    n += self.count(&c.tool) + self.count(&crate::projection::block::canonical_value(&c.args));
                }
            }
            Block::System { tools: Some(t), .. } => n += self.count(&crate::projection::block::canonical_value(t)),
            _ => {}
        }
        n
    }
}

/// Tokens every request adds to its blocks (spec §3).
pub const FRAMING: u64 = 3;

/// Tokens every block adds to its text (spec §3).
pub const BLOCK_FRAMING: u64 = 4;

/// Per request: [`FRAMING`] + the blocks' sum.
pub fn request_tokens<'a>(est: &dyn Estimator, blocks: impl IntoIterator<Item = &'a Block>) -> u64 {
    FRAMING + blocks.into_iter().map(|b| est.block(b)).sum::<u64>()
}

/// A crude stand-in (one token per four characters, rounded up) for tests and for callers that
/// must not depend on a tokenizer.
pub struct CharEstimator;

impl Estimator for CharEstimator {
    fn count(&self, s: &str) -> u64 {
        (crate::text::chars(s) as u64).div_ceil(4)
    }
}

/// The harness names the importers write into the `session` record.
pub const IMPORTED: [&str; 9] =
    ["claude-code", "codex", "pi", "gemini-cli", "qwen-code", "kimi-code", "cline", "opencode", "kilo"];

/// Of [`IMPORTED`], the harnesses whose logs record some tool schemas but never all of them: a
/// Codex rollout's `session_meta.dynamic_tools` are the tools an app adds (Desktop's automation
/// cards, a subagent's), while the built-in tools Codex sends with every request (shell,
/// apply_patch, update_plan, web search …) are built per request and never persisted.
pub const PARTIAL_TOOLS: [&str; 1] = ["codex"];

/// How a run chooses its tokenizer: `--encoding` (else each session's own `encoding`, else
/// `o200k_base`, spec §3) and the run's persistent memo. A value the binary resolves once and
/// passes to every library function that counts tokens over sessions it loads itself (`export`,
/// `experiment`); one-session functions take the estimator ([`Tokenizer::estimator`]).
#[derive(Debug, Clone, Default)]
pub struct Tokenizer {
    /// `--encoding`, checked; `None`: the session's.
    pub encoding: Option<Encoding>,
    /// The persistent memo (`None`: counts are not kept between runs).
    pub memo: Option<std::sync::Arc<memo::Store>>,
}

impl Tokenizer {
    /// The estimator of `journal`: the forced encoding, else the session's `encoding` (an unknown
    /// name is an error naming it and the known encodings), else `o200k_base`; redaction markers
    /// of imported sessions count as what they replaced.
    pub fn estimator(&self, journal: &Journal) -> Result<TiktokenEstimator, estimator::EncodingError> {
        let hint = journal.session().and_then(|s| s.encoding.clone());
        let encoding = match self.encoding {
            Some(e) => e,
            None => Encoding::choose(None, hint.as_deref())?,
        };
        // Sanitised transcripts: a redaction marker counts as what it replaced (imported sessions only).
        let imported = journal.session().and_then(|s| s.harness.as_deref()).is_some_and(|h| IMPORTED.contains(&h));
        Ok(TiktokenEstimator::with_memo(encoding, self.memo.as_ref()).with_redactions(imported))
    }
}

/// The estimator of `journal` with encoding `flag` (else the session's, else `o200k_base`) and no
/// persistent memo, for tests and library users; commands resolve a [`Tokenizer`] instead.
pub fn estimator_for(journal: &Journal, flag: Option<&str>) -> Result<TiktokenEstimator, estimator::EncodingError> {
    let encoding = flag.map(Encoding::parse).transpose()?;
    Tokenizer { encoding, memo: None }.estimator(journal)
}
