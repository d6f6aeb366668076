//! `ctxj usage`: Token and cost totals of Claude Code logs. (Placeholder until its issue lands.)

use anyhow::Result;

use super::Ctx;

/// Token and cost totals of Claude Code logs.
#[derive(Debug, clap::Args)]
pub struct Args {
    /// Session, file or folder.
    pub input: Option<String>,
}

pub fn run(_args: Args, _ctx: &Ctx) -> Result<u8> {
    anyhow::bail!("`ctxj usage` is not implemented yet")
}
