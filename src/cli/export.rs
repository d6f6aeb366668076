//! `ctxj export`: one fact row per request (NDJSON, CSV) or one OpenTelemetry trace per session
//! (OTLP JSON lines), over the same transcripts and defaults as `ctxj usage`.

use std::io::Write;

use anyhow::{bail, Result};
use clap::ValueEnum;

use ctxj::render::export::{exporter, ExportFormat};
use ctxj_core::text::escape_line;

use super::args::{LogArgs, WindowArgs};
use super::otlp_send::Sender;
use super::otlp_target::SendArgs;
use super::resolve::{EncodingArgs, StrategyArgs};
use super::{Ctx, EXIT_OK};

/// One row per request, for a warehouse or an observability tool (docs/fleet.md).
///
/// Reads the same logs as `ctxj usage`, of every agent whose sessions ctxj imports (with no path:
/// their default folders; a store of several sessions gives each one's rows), and writes, per
/// billed call, a `recorded` row: session, agent, source file, parent session (side
/// sessions), turn, time, model, provider, prompt tokens recorded and estimated, input / cache
/// read / cache write / output tokens, cost (each call at its own model, as `usage` prices it),
/// the simulated cache hit, the recorded cache break's cause and whether a compaction preceded
/// it. Each --strategy adds one simulated row per turn of its replay. The recorded totals equal
/// `ctxj usage`'s for the same files.
///
/// --format ndjson (default) and csv write rows with "schema": "ctxj.export/1" (JSON Schema:
/// docs/schema/ctxj.export-1.json); otlp-json writes the OpenTelemetry file-exporter format, one
/// trace per session per line, with gen_ai.* and OpenInference attributes (docs/fleet.md).
/// --endpoint URL sends the same traces to an OTLP/HTTP receiver as protobuf and writes nothing
/// on stdout: an OpenTelemetry Collector (http://HOST:4318), Arize Phoenix
/// (http://HOST:6006), Langfuse (https://HOST/api/public/otel with an Authorization header).
///
/// Examples:
///   ctxj export sample-journals/transcripts
///   ctxj export sample-journals/transcripts --agent codex --format csv
///   ctxj export sample-journals/transcripts --since 2026-03-14 --until 2026-03-14
///   ctxj export sample-journals/transcripts -s sliding-8 --format otlp-json
///   ctxj export <paths…> --endpoint http://localhost:4318
///   ctxj export <paths…> --endpoint http://localhost:6006 --include-content
///   ctxj export --folders
#[derive(Debug, clap::Args)]
#[command(verbatim_doc_comment)]
#[command(mut_arg("strategies", |a| a.help("A strategy to simulate besides the recorded requests (repeatable)")))]
pub struct Args {
    #[command(flatten)]
    pub logs: LogArgs,
    #[command(flatten)]
    pub strategy: StrategyArgs,
    #[command(flatten)]
    pub encoding: EncodingArgs,
    #[command(flatten)]
    pub window: WindowArgs,
    /// ndjson (one row a line), csv, or otlp-json (one OTLP trace per session a line).
    #[arg(long, value_enum, default_value_t = FormatArg::Ndjson, conflicts_with = "endpoint")]
    pub format: FormatArg,
    /// Only print the default folders that exist and would be read with no path (Claude Code,
    /// Codex, pi; `--agent` narrows), one `{"agent", "path"}` JSON object a line, and stop: what
    /// `fleet/ctxj_spark.py` reads when given no --input.
    #[arg(long, conflicts_with_all = ["paths", "format"])]
    pub folders: bool,
    /// OTLP only (--endpoint, --format otlp-json): put each call's text on its chat span
    /// (OpenInference input.value: what was recorded since the previous response; output.value:
    /// the response and its tool calls), secrets redacted, at most 8192 characters each.
    #[arg(long)]
    pub include_content: bool,
    #[command(flatten)]
    pub send: SendArgs,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
pub enum FormatArg {
    Ndjson,
    Csv,
    OtlpJson,
}

pub fn run(args: Args, ctx: &Ctx) -> Result<u8> {
    if args.folders {
        return folders(&args.logs);
    }
    if args.include_content && args.send.endpoint.is_none() && args.format != FormatArg::OtlpJson {
        bail!("--include-content puts text on OTLP spans: use it with --endpoint or --format otlp-json");
    }
    let (_, window) = args.window.window()?;
    let replays = args.strategy.as_given(ctx.cache.as_deref());
    replays.no_duplicates()?;
    let tokenizer = args.encoding.tokenizer(ctx)?;
    let target = args.send.endpoint.is_some().then(|| args.send.target(&|k| std::env::var(k).ok())).transpose()?;
    let sessions = ctxj_core::export::plan(&args.logs.files()?);
    let mut notes = 0usize;
    let mut note = |s: &ctxj_core::export::SessionRows| {
        if s.rows.is_empty() && !window.is_open() {
            return false;
        }
        if let Some(n) = &s.note {
            notes += 1;
            eprintln!("{}: not reconstructed ({}); its rows carry no estimate", escape_line(&s.source), escape_line(n));
        }
        true
    };
    if let Some(target) = target {
        let mut sender = Sender::new(target);
        ctxj_core::export::export(&sessions, &replays.strategies, &tokenizer, args.include_content, &mut |s| {
            let s = s.within(&window);
            if note(&s) {
                sender.session(&s)?;
            }
            anyhow::Ok(())
        })?;
        sender.finish()?;
        replays.check()?;
        eprintln!("sent {} span(s) in {} request(s)", sender.sent, sender.requests);
    } else {
        let mut writer = exporter(match args.format {
            FormatArg::Ndjson => ExportFormat::Ndjson,
            FormatArg::Csv => ExportFormat::Csv,
            FormatArg::OtlpJson => ExportFormat::OtlpJson,
        });
        let mut out = super::stdout();
        ctxj_core::export::export(&sessions, &replays.strategies, &tokenizer, args.include_content, &mut |s| {
            let s = s.within(&window);
            if note(&s) {
                writer.session(&mut out, &s)?;
            }
            anyhow::Ok(())
        })?;
        writer.finish(&mut out)?;
        replays.check()?;
        out.flush()?;
    }
    if notes > 0 {
        eprintln!("{notes} session(s) exported from their billed calls only");
    }
    Ok(EXIT_OK)
}

/// `--folders`: the existing default folders of the agents `export` reads, as JSON lines (an
/// empty output when there is none: nothing to read is the caller's to judge).
fn folders(logs: &LogArgs) -> Result<u8> {
    let mut out = super::stdout();
    for r in ctxj_core::usage::existing_default_roots(logs.agent) {
        if r.agent.format().is_some() {
            let line = serde_json::json!({"agent": r.agent.name(), "path": r.path.to_string_lossy()});
            writeln!(out, "{line}")?;
        }
    }
    out.flush()?;
    Ok(EXIT_OK)
}

impl super::Cmd for Args {
    fn machine_output(&self) -> bool {
        true
    }

    fn run(self, ctx: &super::Ctx) -> anyhow::Result<u8> {
        run(self, ctx)
    }
}
