//! `ctxj validate`: Check a journal and every mirror revision against the rules. (Placeholder until its issue lands.)

use anyhow::Result;

use super::Ctx;

/// Check a journal and every mirror revision against the rules.
#[derive(Debug, clap::Args)]
pub struct Args {
    /// Session, file or folder.
    pub input: Option<String>,
}

pub fn run(_args: Args, _ctx: &Ctx) -> Result<u8> {
    anyhow::bail!("`ctxj validate` is not implemented yet")
}
