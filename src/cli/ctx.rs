//! The settings a command runs with ([`Ctx`]): colour, the reading options, and loading a session
//! (a ctxj journal, or a transcript imported in memory) with its warnings on stderr.

use std::io::{self, IsTerminal};
use std::path::PathBuf;

use anyhow::Result;

use ctxj_core::journal::{Journal, ReadOptions, Session};
use ctxj_core::text::escape_line;

use super::{args, ColorChoice, FromArg, GlobalArgs};

/// Settings resolved from the global options, then from the command's [`args::ReadArgs`].
#[derive(Clone)]
pub struct Ctx {
    pub color: bool,
    pub read: ReadOptions,
    pub root: Option<PathBuf>,
    /// `--from`: the input format, or auto-detection.
    pub from: ctxj_core::import::FromFormat,
    /// The run's persistent token memo (`--no-cache`: none); `main` flushes it.
    pub memo: Option<std::sync::Arc<ctxj_core::tokens::memo::Store>>,
    /// The run's cache folder (`--no-cache`: none), for the summarizer's answers.
    pub cache: Option<PathBuf>,
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
        Ctx {
            color,
            read: ReadOptions::default(),
            root: None,
            from: FromArg::Auto.format(),
            memo: g.cache.store(),
            cache: g.cache.base(),
        }
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
    pub fn load_full(&self, spec: &str) -> Result<ctxj_core::import::Loaded> {
        let spec = &self.locate(spec)?;
        let l = ctxj_core::import::load(spec, self.from, self.root.as_deref(), self.read)?;
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

    /// `spec` as given when it names a file, a folder or a ctxj session; else the transcript it
    /// stands for (`usage::locate`: the path as `sessions` lists it, `project/session`, an id or
    /// a unique id prefix) under `--root`, or else under the agents' default folders. A name
    /// found nowhere is handed on as given (the loader says what it is not); an ambiguous one is
    /// an error listing the candidates.
    fn locate(&self, spec: &str) -> Result<String> {
        use std::path::Path;
        let file = spec.rsplit_once('#').map_or(spec, |(b, _)| b);
        let root = self.root.as_deref();
        if Path::new(spec).exists() || Path::new(file).is_file() || Session::resolve(spec, root).is_ok() {
            return Ok(spec.to_string());
        }
        let roots: Vec<PathBuf> = match root {
            Some(r) => vec![r.to_path_buf()],
            None => ctxj_core::usage::existing_default_roots(None)
                .into_iter()
                .filter(|r| r.agent.format().is_some())
                .map(|r| r.path)
                .collect(),
        };
        match ctxj_core::usage::locate::locate(spec, &roots) {
            Ok(found) => Ok(found),
            Err(ctxj_core::usage::locate::LocateError::NotFound { .. }) => Ok(spec.to_string()),
            Err(e) => Err(e.into()),
        }
    }
}
