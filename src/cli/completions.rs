//! `ctxj completions <shell>`: print a shell completion script.

use anyhow::Result;
use clap::CommandFactory;

use super::{Ctx, EXIT_OK};

/// Print a completion script for a shell.
///
/// Write it where the shell looks for completions; on a fresh HOME create that folder first
/// (the examples do). bash-completion loads ~/.local/share/bash-completion/completions/ctxj in new
/// shells; zsh needs `fpath=(~/.zfunc $fpath)` before `compinit` in ~/.zshrc.
///
/// Examples:
///   mkdir -p ~/.local/share/bash-completion/completions
///   ctxj completions bash > ~/.local/share/bash-completion/completions/ctxj
///   mkdir -p ~/.zfunc && ctxj completions zsh > ~/.zfunc/_ctxj
#[derive(Debug, clap::Args)]
#[command(verbatim_doc_comment)]
pub struct Args {
    /// The shell.
    #[arg(value_enum)]
    pub shell: clap_complete::Shell,
}

pub fn run(args: Args, _ctx: &Ctx) -> Result<u8> {
    let mut cmd = super::Cli::command();
    let mut out = super::stdout();
    clap_complete::generate(args.shell, &mut cmd, "ctxj", &mut out);
    std::io::Write::flush(&mut out)?;
    Ok(EXIT_OK)
}

impl super::Cmd for Args {
    fn run(self, ctx: &super::Ctx) -> anyhow::Result<u8> {
        run(self, ctx)
    }
}
