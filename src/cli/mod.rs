//! The command line: one file per subcommand, each a `#[derive(clap::Args)]` struct and a `run`
//! function. Shared here: global options, exit codes, loading a session, safe output.

use anyhow::Result;
use clap::{Parser, Subcommand, ValueEnum};

pub mod args;
pub mod audit;
pub mod budget;
pub mod cache;
pub mod completions;
mod ctx;
pub mod diff;
pub mod experiment;
pub mod export;
pub mod import;
pub mod log;
mod offer;
pub mod otlp_send;
pub mod otlp_target;
pub mod output;
pub mod progress;
pub mod report;
pub mod resolve;
pub mod sessions;
pub mod show;
pub mod statusline;
#[cfg(feature = "synth")]
pub mod synth;
pub mod tokens;
pub mod tune;
pub mod turns;
pub mod usage;
pub mod validate;
pub mod watch;

pub use ctx::Ctx;
pub use ctxj_core::projection::At;
pub use output::{print_error, stdout, ErrorKind, Internal};

/// Exit code: success, no findings, no differences.
pub const EXIT_OK: u8 = 0;
/// Exit code: findings (validate, audit) or differences (diff).
pub const EXIT_FINDINGS: u8 = 1;
/// Exit code: usage error or unusable input.
pub const EXIT_USAGE: u8 = 2;
/// Exit code: an internal failure, not the arguments' nor the input's (output that could not be
/// written, a temporary file): [`ErrorKind::Internal`].
pub const EXIT_INTERNAL: u8 = 3;

/// Audit what LLM coding agents send to their models.
///
/// A session journal is append-only; what the provider receives on each turn is a projection of
/// it. ctxj reconstructs that projection at any revision or turn, replays other strategies,
/// diffs, validates and costs them.
///
/// Exit codes: 0 ok, 1 findings or differences, 2 usage or input error, 3 internal failure.
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
    /// Parses the process arguments; clap's own errors exit as clap prints them, except a bare
    /// number after `--at`, which gets a hint at the two forms of a position.
    pub fn parse_from_env() -> Cli {
        let argv: Vec<std::ffi::OsString> = std::env::args_os().collect();
        match Cli::try_parse_from(&argv) {
            Ok(cli) => cli,
            Err(e) if e.use_stderr() => {
                if let Some(hint) = args::at_hint(&argv) {
                    print_error(&anyhow::anyhow!(hint));
                    std::process::exit(EXIT_USAGE.into());
                }
                e.exit()
            }
            Err(e) => e.exit(),
        }
    }
}

/// Options every subcommand accepts. The options of reading a session (`--strict`, `--root`,
/// `--from`) are not here: they live in [`args::ReadArgs`], flattened into the commands that read one.
#[derive(Debug, clap::Args)]
pub struct GlobalArgs {
    /// When to colour output: auto (a terminal without NO_COLOR), always, never.
    #[arg(long, global = true, value_enum, default_value_t = ColorChoice::Auto)]
    pub color: ColorChoice,
    #[command(flatten)]
    pub cache: args::CacheArgs,
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
    /// Gemini CLI chats (`session-*.json` or `.jsonl`).
    Gemini,
    /// Qwen Code chats (`projects/<p>/chats/<id>.jsonl`).
    Qwen,
    /// Kimi Code wire logs (`sessions/<ws>/<id>/agents/<agent>/wire.jsonl`).
    Kimi,
    /// Cline (`<id>.messages.json`, legacy `api_conversation_history.json`).
    Cline,
    /// OpenCode and Kilo CLI stores (`opencode.db`, `kilo.db`; `store.db#<session id>`).
    Opencode,
}

impl FromArg {
    pub fn format(self) -> ctxj_core::import::FromFormat {
        use ctxj_core::import::{Format, FromFormat};
        match self {
            FromArg::Auto => FromFormat::Auto,
            FromArg::ClaudeCode => FromFormat::Fixed(Format::ClaudeCode),
            FromArg::Codex => FromFormat::Fixed(Format::Codex),
            FromArg::Pi => FromFormat::Fixed(Format::Pi),
            FromArg::Ctxj => FromFormat::Fixed(Format::Ctxj),
            FromArg::Gemini => FromFormat::Fixed(Format::GeminiCli),
            FromArg::Qwen => FromFormat::Fixed(Format::QwenCode),
            FromArg::Kimi => FromFormat::Fixed(Format::KimiCode),
            FromArg::Cline => FromFormat::Fixed(Format::Cline),
            FromArg::Opencode => FromFormat::Fixed(Format::OpenCode),
        }
    }
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
pub enum ColorChoice {
    Auto,
    Always,
    Never,
}

/// What every subcommand's `Args` tells the dispatcher: the reading options it brings (a command
/// that reads sessions), whether its output is for machines (progress bars stay off), and how it
/// runs. Adding a command: its file (`Args`, `run`, this impl) and one line of [`commands!`].
pub trait Cmd {
    /// The reading options (`--strict`, `--root`, `--from`) of a command that reads sessions.
    fn reading(&self) -> Option<args::ReadArgs> {
        None
    }
    /// Whether the command prints machine-readable output (JSON, NDJSON, CSV, OTLP): progress
    /// bars stay off then, as in pipes.
    fn machine_output(&self) -> bool {
        false
    }
    fn run(self, ctx: &Ctx) -> Result<u8>
    where
        Self: Sized;
}

/// The [`Cmd`] of a command that reads one session (`session: SessionArgs`) and prints through
/// `output: OutputArgs`, run by its module's `run`.
macro_rules! session_command {
    ($args:ty) => {
        impl $crate::cli::Cmd for $args {
            fn reading(&self) -> Option<$crate::cli::args::ReadArgs> {
                Some(self.session.read.clone())
            }

            fn machine_output(&self) -> bool {
                self.output.machine()
            }

            fn run(self, ctx: &$crate::cli::Ctx) -> anyhow::Result<u8> {
                run(self, ctx)
            }
        }
    };
}
pub(crate) use session_command;

/// The subcommands, each `Variant => module` (the module's `Args` implements [`Cmd`]), in the
/// order `--help` lists them; `@cfg(…)` for a command behind a feature. The one list: the enum
/// and its dispatch are generated from it.
macro_rules! commands {
    ($($(@cfg($cfg:meta))? $(#[$attr:meta])* $variant:ident => $module:ident,)*) => {
        #[derive(Debug, Subcommand)]
        pub enum Command {
            $($(#[cfg($cfg)])? $(#[$attr])* $variant($module::Args),)*
        }

        impl Command {
            fn as_cmd(&self) -> &dyn Cmd {
                match self {
                    $($(#[cfg($cfg)])? Command::$variant(a) => a,)*
                }
            }

            fn run(self, ctx: &Ctx) -> Result<u8> {
                match self {
                    $($(#[cfg($cfg)])? Command::$variant(a) => a.run(ctx),)*
                }
            }
        }
    };
}

commands! {
    Show => show,
    Log => log,
    Diff => diff,
    Turns => turns,
    Tokens => tokens,
    Cache => cache,
    Budget => budget,
    Validate => validate,
    Audit => audit,
    Import => import,
    Sessions => sessions,
    Usage => usage,
    Export => export,
    Report => report,
    Experiment => experiment,
    Statusline => statusline,
    Watch => watch,
    Tune => tune,
    Completions => completions,
    @cfg(feature = "synth") #[command(hide = true)] Synth => synth,
}

pub fn dispatch(cmd: Command, ctx: &Ctx) -> Result<u8> {
    if cmd.as_cmd().machine_output() {
        progress::hide();
    }
    // The reading options come with the command that reads a session.
    let ctx = &cmd.as_cmd().reading().map_or_else(|| ctx.clone(), |r| ctx.reading(&r));
    cmd.run(ctx)
}
