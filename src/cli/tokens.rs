//! `ctxj tokens`: Token breakdown of a projection. (Placeholder until its issue lands.)

use anyhow::Result;

use super::Ctx;

/// Token breakdown of a projection.
#[derive(Debug, clap::Args)]
pub struct Args {
    /// Session, file or folder.
    pub input: Option<String>,
}

pub fn run(_args: Args, _ctx: &Ctx) -> Result<u8> {
    anyhow::bail!("`ctxj tokens` is not implemented yet")
}
