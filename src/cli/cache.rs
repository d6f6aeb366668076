//! `ctxj cache`: Prompt-cache and cost comparison of strategies. (Placeholder until its issue lands.)

use anyhow::Result;

use super::Ctx;

/// Prompt-cache and cost comparison of strategies.
#[derive(Debug, clap::Args)]
pub struct Args {
    /// Session, file or folder.
    pub input: Option<String>,
}

pub fn run(_args: Args, _ctx: &Ctx) -> Result<u8> {
    anyhow::bail!("`ctxj cache` is not implemented yet")
}
