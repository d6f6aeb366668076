//! `ctxj diff`: Diff two projections (strategies or revisions). (Placeholder until its issue lands.)

use anyhow::Result;

use super::Ctx;

/// Diff two projections (strategies or revisions).
#[derive(Debug, clap::Args)]
pub struct Args {
    /// Session, file or folder.
    pub input: Option<String>,
}

pub fn run(_args: Args, _ctx: &Ctx) -> Result<u8> {
    anyhow::bail!("`ctxj diff` is not implemented yet")
}
