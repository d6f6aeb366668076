//! Flags shared by several subcommands, declared once and flattened into each command's `Args`
//! (`#[command(flatten)]`), the way jj and ripgrep share theirs.

use anyhow::Result;

use super::At;

/// The session a command reads.
#[derive(Debug, Clone, clap::Args)]
pub struct SessionArgs {
    /// Session directory, journal.jsonl path, Claude Code / Codex / pi transcript, or a session id
    /// under --root.
    pub session: String,
}

/// `--at rev N | turn K`: which state of the journal a command looks at.
#[derive(Debug, Clone, Default, clap::Args)]
pub struct AtArgs {
    /// Position: `rev N` (after records 1..N) or `turn K` (the request of the K-th turn).
    #[arg(long, num_args = 2, value_names = ["rev|turn", "N"], allow_negative_numbers = true)]
    pub at: Vec<String>,
}

impl AtArgs {
    /// Every `--at` pair given, in order.
    pub fn all(&self) -> Result<Vec<At>> {
        Ok(At::parse_pairs(&self.at)?)
    }

    /// The one position given, if any; more than one is a usage error.
    pub fn one(&self) -> Result<Option<At>> {
        let all = self.all()?;
        anyhow::ensure!(all.len() <= 1, "--at is given {} times; this command takes one position", all.len());
        Ok(all.into_iter().next())
    }
}

/// How a command prints its result.
#[derive(Debug, Clone, Default, clap::Args)]
pub struct OutputArgs {
    /// Print the result as JSON (for scripts); see docs/json.md for the shapes.
    #[arg(long)]
    pub json: bool,
}

/// `--encoding`: the tokenizer to count with.
#[derive(Debug, Clone, Default, clap::Args)]
pub struct EncodingArgs {
    /// Tokenizer encoding: o200k_base or cl100k_base (default: the session's, else o200k_base).
    #[arg(long, value_name = "NAME")]
    pub encoding: Option<String>,
}
