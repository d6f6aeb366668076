//! `ctxj budget`: Resolve context budget settings from a harness config. (Placeholder until its issue lands.)

use anyhow::Result;

use super::Ctx;

/// Resolve context budget settings from a harness config.
#[derive(Debug, clap::Args)]
pub struct Args {
    /// Session, file or folder.
    pub input: Option<String>,
}

pub fn run(_args: Args, _ctx: &Ctx) -> Result<u8> {
    anyhow::bail!("`ctxj budget` is not implemented yet")
}
