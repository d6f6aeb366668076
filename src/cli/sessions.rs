//! `ctxj sessions`: List the sessions found in a folder. (Placeholder until its issue lands.)

use anyhow::Result;

use super::Ctx;

/// List the sessions found in a folder.
#[derive(Debug, clap::Args)]
pub struct Args {
    /// Session, file or folder.
    pub input: Option<String>,
}

pub fn run(_args: Args, _ctx: &Ctx) -> Result<u8> {
    anyhow::bail!("`ctxj sessions` is not implemented yet")
}
