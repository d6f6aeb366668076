//! The `ctxj` binary: parse arguments, dispatch to one subcommand, map errors to exit codes.
//! The rules live in `ctxj-core` (`crates/core`), the renderers in `ctxj::render`; `cli/` holds
//! one file per subcommand.

#![forbid(unsafe_code)]

mod cli;

use std::process::ExitCode;

fn main() -> ExitCode {
    let args = cli::Cli::parse_from_env();
    let ctx = cli::Ctx::new(&args.global);
    let result = cli::dispatch(args.command, &ctx);
    // The token counts this run added to the persistent memo, written once (a cache: a failure
    // to write it changes nothing the command printed).
    if let Some(memo) = &ctx.memo {
        let _ = memo.flush();
    }
    match result {
        Ok(code) => ExitCode::from(code),
        Err(e) => {
            let kind = cli::ErrorKind::of(&e);
            if kind != cli::ErrorKind::BrokenPipe {
                cli::print_error(&e);
            }
            ExitCode::from(kind.exit_code())
        }
    }
}
