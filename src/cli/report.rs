//! `ctxj report`: Write a self-contained HTML report. (Placeholder until its issue lands.)

use anyhow::Result;

use super::Ctx;

/// Write a self-contained HTML report.
#[derive(Debug, clap::Args)]
pub struct Args {
    /// Session, file or folder.
    pub input: Option<String>,
}

pub fn run(_args: Args, _ctx: &Ctx) -> Result<u8> {
    anyhow::bail!("`ctxj report` is not implemented yet")
}
