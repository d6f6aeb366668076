//! `ctxj synth`: Generate a synthetic journal (hidden). (Placeholder until its issue lands.)

use anyhow::Result;

use super::Ctx;

/// Generate a synthetic journal (hidden).
#[derive(Debug, clap::Args)]
pub struct Args {
    /// Session, file or folder.
    pub input: Option<String>,
}

pub fn run(_args: Args, _ctx: &Ctx) -> Result<u8> {
    anyhow::bail!("`ctxj synth` is not implemented yet")
}
