//! The command line: one file per subcommand, each a `#[derive(clap::Args)]` struct and a `run`
//! function. Shared here: global options, exit codes, loading a session, safe output.

use std::io::{self, IsTerminal, Write};
use std::path::PathBuf;

use anyhow::Result;
use clap::{Parser, Subcommand, ValueEnum};

use ctxj::journal::{Journal, ReadOptions, Session};
use ctxj::text::escape_line;

pub mod args;
pub mod audit;
pub mod budget;
pub mod cache;
pub mod completions;
pub mod diff;
pub mod import;
pub mod log;
pub mod progress;
pub mod report;
pub mod sessions;
pub mod show;
#[cfg(feature = "synth")]
pub mod synth;
pub mod tokens;
pub mod turns;
pub mod usage;
pub mod validate;

/// Exit code: success, no findings, no differences.
pub const EXIT_OK: u8 = 0;
/// Exit code: findings (validate, audit) or differences (diff).
pub const EXIT_FINDINGS: u8 = 1;
/// Exit code: usage error or unusable input.
pub const EXIT_USAGE: u8 = 2;

/// Audit what LLM coding agents send to their models.
///
/// A session journal is append-only; what the provider receives on each turn is a projection of
/// it. ctxj reconstructs that projection at any revision or turn, replays other strategies,
/// diffs, validates and costs them.
///
/// Exit codes: 0 ok, 1 findings or differences, 2 usage or input error.
#[derive(Debug, Parser)]
#[command(name = "ctxj", version, about, long_about, propagate_version = true)]
#[command(
    after_help = "Examples:\n  ctxj show sample-journals/bugfix-todo --at turn 5\n  ctxj log sample-journals/long-elision\n  ctxj show bugfix-todo --root sample-journals --at turn 3 --json | tr -d '\\n' | sha256sum"
)]
pub struct Cli {
    #[command(flatten)]
    pub global: GlobalArgs,
    #[command(subcommand)]
    pub command: Command,
}

impl Cli {
    pub fn parse_from_env() -> Cli {
        Cli::parse()
    }
}

/// Options every subcommand accepts. The options of reading a session (`--strict`, `--root`,
/// `--from`) are not here: they live in [`args::ReadArgs`], flattened into the commands that read one.
#[derive(Debug, clap::Args)]
pub struct GlobalArgs {
    /// When to colour output: auto (a terminal without NO_COLOR), always, never.
    #[arg(long, global = true, value_enum, default_value_t = ColorChoice::Auto)]
    pub color: ColorChoice,
}

/// The `--from` values.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, ValueEnum)]
pub enum FromArg {
    #[default]
    Auto,
    ClaudeCode,
    Codex,
    Pi,
    Ctxj,
}

impl FromArg {
    pub fn format(self) -> ctxj::import::FromFormat {
        use ctxj::import::{Format, FromFormat};
        match self {
            FromArg::Auto => FromFormat::Auto,
            FromArg::ClaudeCode => FromFormat::Fixed(Format::ClaudeCode),
            FromArg::Codex => FromFormat::Fixed(Format::Codex),
            FromArg::Pi => FromFormat::Fixed(Format::Pi),
            FromArg::Ctxj => FromFormat::Fixed(Format::Ctxj),
        }
    }
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
pub enum ColorChoice {
    Auto,
    Always,
    Never,
}

#[derive(Debug, Subcommand)]
pub enum Command {
    Show(show::Args),
    Log(log::Args),
    Diff(diff::Args),
    Turns(turns::Args),
    Tokens(tokens::Args),
    Cache(cache::Args),
    Budget(budget::Args),
    Validate(validate::Args),
    Audit(audit::Args),
    Import(import::Args),
    Sessions(sessions::Args),
    Usage(usage::Args),
    Report(report::Args),
    Completions(completions::Args),
    #[cfg(feature = "synth")]
    #[command(hide = true)]
    Synth(synth::Args),
}

/// Settings resolved from the global options, then from the command's [`args::ReadArgs`].
#[derive(Clone)]
pub struct Ctx {
    pub color: bool,
    pub read: ReadOptions,
    pub root: Option<PathBuf>,
    /// `--from`: the input format, or auto-detection.
    pub from: ctxj::import::FromFormat,
}

impl Ctx {
    pub fn new(g: &GlobalArgs) -> Ctx {
        let color = match g.color {
            ColorChoice::Always => true,
            ColorChoice::Never => false,
            ColorChoice::Auto => {
                io::stdout().is_terminal() && std::env::var_os("NO_COLOR").is_none_or(|v| v.is_empty())
            }
        };
        Ctx { color, read: ReadOptions::default(), root: None, from: FromArg::Auto.format() }
    }

    /// This context with a command's reading options (`--strict`, `--root`, `--from`).
    pub fn reading(&self, r: &args::ReadArgs) -> Ctx {
        Ctx {
            read: ReadOptions { strict: r.strict },
            root: r.root.clone(),
            from: r.format.from.format(),
            ..self.clone()
        }
    }

    /// Resolves and parses a session — a ctxj journal, or a Claude Code, Codex or pi transcript
    /// imported in memory; warnings and the import summary go to stderr, escaped.
    pub fn load(&self, spec: &str) -> Result<(Session, Journal)> {
        let l = self.load_full(spec)?;
        Ok((l.session, l.journal))
    }

    /// Like [`Ctx::load`], also returning the format and the import report.
    pub fn load_full(&self, spec: &str) -> Result<ctxj::import::Loaded> {
        let l = ctxj::import::load(spec, self.from, self.root.as_deref(), self.read)?;
        for w in &l.journal.warnings {
            eprintln!(
                "warning: {}: {}",
                escape_line(&l.journal.path.display().to_string()),
                escape_line(&w.to_string())
            );
        }
        if let Some(r) = &l.report {
            let summary = r.summary();
            let what = format!("imported {} transcript {}", l.format, l.journal.path.display());
            if summary.is_empty() {
                eprintln!("note: {}", escape_line(&what));
            } else {
                eprintln!("note: {}: {}", escape_line(&what), escape_line(&summary));
            }
        }
        Ok(l)
    }
}

pub fn dispatch(cmd: Command, ctx: &Ctx) -> Result<u8> {
    // The reading options come with the command that reads a session.
    let c = |r: &args::ReadArgs| ctx.reading(r);
    match cmd {
        Command::Show(a) => {
            let c = c(&a.session.read);
            show::run(a, &c)
        }
        Command::Log(a) => {
            let c = c(&a.session.read);
            log::run(a, &c)
        }
        Command::Diff(a) => {
            let c = c(&a.session.read);
            diff::run(a, &c)
        }
        Command::Turns(a) => {
            let c = c(&a.session.read);
            turns::run(a, &c)
        }
        Command::Tokens(a) => {
            let c = c(&a.session.read);
            tokens::run(a, &c)
        }
        Command::Cache(a) => {
            let c = c(&a.session.read);
            cache::run(a, &c)
        }
        Command::Budget(a) => budget::run(a, ctx),
        Command::Validate(a) => {
            let c = c(&a.session.read);
            validate::run(a, &c)
        }
        Command::Audit(a) => {
            let c = c(&a.session.read);
            audit::run(a, &c)
        }
        Command::Import(a) => {
            let c = c(&a.read);
            import::run(a, &c)
        }
        Command::Sessions(a) => {
            let c = c(&args::ReadArgs { format: a.format.clone(), ..Default::default() });
            sessions::run(a, &c)
        }
        Command::Usage(a) => usage::run(a, ctx),
        Command::Report(a) => {
            let c = c(&a.session.read);
            report::run(a, &c)
        }
        Command::Completions(a) => completions::run(a, ctx),
        #[cfg(feature = "synth")]
        Command::Synth(a) => synth::run(a, ctx),
    }
}

/// Buffered stdout. A closed pipe (`ctxj diff … | head -2`) stops the output quietly: the rest
/// is discarded and the command still returns its own exit code (1 for differences or findings),
/// instead of the broken pipe turning every result into 0. Other write errors propagate.
pub fn stdout() -> io::BufWriter<PipeSafe<io::StdoutLock<'static>>> {
    io::BufWriter::with_capacity(1 << 16, PipeSafe { inner: io::stdout().lock(), closed: false })
}

/// A writer that turns a broken pipe into "everything written" and discards what follows.
pub struct PipeSafe<W> {
    inner: W,
    closed: bool,
}

impl<W: Write> Write for PipeSafe<W> {
    fn write(&mut self, buf: &[u8]) -> io::Result<usize> {
        if self.closed {
            return Ok(buf.len());
        }
        match self.inner.write(buf) {
            Err(e) if e.kind() == io::ErrorKind::BrokenPipe => {
                self.closed = true;
                Ok(buf.len())
            }
            r => r,
        }
    }

    fn flush(&mut self) -> io::Result<()> {
        if self.closed {
            return Ok(());
        }
        match self.inner.flush() {
            Err(e) if e.kind() == io::ErrorKind::BrokenPipe => {
                self.closed = true;
                Ok(())
            }
            r => r,
        }
    }
}

/// A broken pipe that reached `main` anyway (a writer other than [`stdout`]): quiet, exit 0.
pub fn is_broken_pipe(e: &anyhow::Error) -> bool {
    e.chain().any(|c| c.downcast_ref::<io::Error>().is_some_and(|io| io.kind() == io::ErrorKind::BrokenPipe))
}

/// Prints an error chain as one message, control characters escaped.
pub fn print_error(e: &anyhow::Error) {
    let mut err = io::stderr().lock();
    let _ = writeln!(err, "error: {}", ctxj::text::escape_block(&format!("{e:#}")));
}

pub use ctxj::projection::At;

#[cfg(test)]
mod tests {
    use super::*;

    struct Closed;
    impl Write for Closed {
        fn write(&mut self, _: &[u8]) -> io::Result<usize> {
            Err(io::ErrorKind::BrokenPipe.into())
        }
        fn flush(&mut self) -> io::Result<()> {
            Err(io::ErrorKind::BrokenPipe.into())
        }
    }

    #[test]
    fn a_broken_pipe_is_swallowed_so_the_exit_code_survives() {
        let mut w = io::BufWriter::new(PipeSafe { inner: Closed, closed: false });
        w.write_all(&[b'x'; 100_000]).unwrap();
        w.flush().unwrap();
        assert!(w.get_ref().closed);
    }
}
