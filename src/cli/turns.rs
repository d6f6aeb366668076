//! `ctxj turns`: Per-turn request sizes and cache stability of a strategy. (Placeholder until its issue lands.)

use anyhow::Result;

use super::Ctx;

/// Per-turn request sizes and cache stability of a strategy.
#[derive(Debug, clap::Args)]
pub struct Args {
    /// Session, file or folder.
    pub input: Option<String>,
}

pub fn run(_args: Args, _ctx: &Ctx) -> Result<u8> {
    anyhow::bail!("`ctxj turns` is not implemented yet")
}
