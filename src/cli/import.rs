//! `ctxj import`: Import a Claude Code, Codex or pi transcript as a journal-v1 session. (Placeholder until its issue lands.)

use anyhow::Result;

use super::Ctx;

/// Import a Claude Code, Codex or pi transcript as a journal-v1 session.
#[derive(Debug, clap::Args)]
pub struct Args {
    /// Session, file or folder.
    pub input: Option<String>,
}

pub fn run(_args: Args, _ctx: &Ctx) -> Result<u8> {
    anyhow::bail!("`ctxj import` is not implemented yet")
}
