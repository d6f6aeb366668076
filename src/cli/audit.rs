//! `ctxj audit`: Judge every cleanup decision of a session. (Placeholder until its issue lands.)

use anyhow::Result;

use super::Ctx;

/// Judge every cleanup decision of a session.
#[derive(Debug, clap::Args)]
pub struct Args {
    /// Session, file or folder.
    pub input: Option<String>,
}

pub fn run(_args: Args, _ctx: &Ctx) -> Result<u8> {
    anyhow::bail!("`ctxj audit` is not implemented yet")
}
