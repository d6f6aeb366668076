//! `ctxj watch`: follow running sessions and print one line per call and an alert per event
//! (cache break, compaction, warning band, cache about to expire, gone cold), or NDJSON.

use std::collections::BTreeSet;
use std::io::Write as _;
use std::path::PathBuf;
use std::time::{Duration, Instant};

use anyhow::{Context as _, Result};

use ctxj::render::live::StatusDoc;
use ctxj::render::live_watch::{event_line, is_alert, osc9, WatchDoc};
use ctxj::render::style::Paint;
use ctxj_core::live::compact::Overrides;
use ctxj_core::live::events::Event;
use ctxj_core::live::follow::{self, short_name, Targets};
use ctxj_core::live::hook::Hook;
use ctxj_core::live::wake::{Mode, Wake, Waker};
use ctxj_core::live::watcher::Watcher;
use ctxj_core::live::{store, Inputs, LiveSession, Snapshot};
use ctxj_core::text::escape_line;

use super::{Ctx, EXIT_OK};

/// Follow running sessions: one line per call, and alerts as they happen.
///
/// With no argument, follows the most recently written session of the current project under
/// each agent's default folder (Claude Code's and pi's project folder, Codex's newest rollout);
/// `--all` follows every session written to in the last `--live-minutes`. A folder argument is
/// searched the same way; a file is followed as given. A new session file in a followed folder
/// (Claude Code's `/clear`) is followed when it appears; subagent files count toward their
/// session. Lines are read by byte offset as they are appended: woken by file-system events
/// (inotify, FSEvents; bursts coalesced over 50 ms, and a look every 2 s regardless), or a stat
/// poll every `--poll-ms` with `--poll` or when events are unavailable.
///
/// Alerts: cache break (cause when the usage lines tell it, lost tokens, $), compaction, the
/// warning band (20,000 tokens below the compaction point) or the point crossed, the cache about
/// to expire while idle (60 s), gone cold (what the next prompt re-writes). `--notify` sends
/// them to the terminal (OSC 9); `--exec CMD` runs CMD with the event's JSON in $CTXJ_EVENT (one
/// at a time, `--cooldown` apart, killed after 10 s). Each session's snapshot is written to
/// `--state-dir` for `ctxj statusline --state FILE` (tmux, starship, a pi extension).
///
/// Examples:
///   ctxj watch --once --from-start sample-journals/transcripts/pi/sessions/*/*.jsonl
///   ctxj watch --once --from-start --format ndjson sample-journals/transcripts/codex/sessions/*/*/*/*
#[derive(Debug, clap::Args)]
#[command(verbatim_doc_comment)]
pub struct Args {
    /// A transcript, or a folder to find live sessions in; default: the agents' folders.
    pub target: Option<PathBuf>,
    /// Every live session, not only the most recent per folder.
    #[arg(long)]
    pub all: bool,
    /// A session is live when written to within this many minutes.
    #[arg(long, default_value_t = 30, value_name = "MIN")]
    pub live_minutes: u64,
    /// Output: text lines, or NDJSON (schema ctxj.watch/1).
    #[arg(long, value_enum, default_value_t = WatchFormat::Text)]
    pub format: WatchFormat,
    /// Report the calls already in the sessions too (default: only what comes next).
    #[arg(long)]
    pub from_start: bool,
    /// Read what is there, report, and exit.
    #[arg(long)]
    pub once: bool,
    /// Stop after this many seconds.
    #[arg(long, value_name = "SECS")]
    pub timeout: Option<f64>,
    /// Look at the files every `--poll-ms` instead of waking on file-system events.
    #[arg(long)]
    pub poll: bool,
    /// Milliseconds between looks when polling (`--poll`, or no file-system events).
    #[arg(long, default_value_t = 250, value_name = "MS")]
    pub poll_ms: u64,
    /// Send alerts to the terminal as notifications (OSC 9).
    #[arg(long)]
    pub notify: bool,
    /// Run this shell command on each alert ($CTXJ_EVENT holds its JSON).
    #[arg(long, value_name = "CMD")]
    pub exec: Option<String>,
    /// Seconds between two `--exec` runs (alerts in between are not run).
    #[arg(long, default_value_t = 30, value_name = "SECS")]
    pub cooldown: u64,
    /// Where each session's snapshot is written (default: the user's cache folder, `live/watch`;
    /// none under --no-cache).
    #[arg(long, value_name = "DIR")]
    pub state_dir: Option<PathBuf>,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, clap::ValueEnum)]
pub enum WatchFormat {
    Text,
    Ndjson,
}

/// How often folders are searched again for new sessions (on the events path also whenever an
/// event says an entry was created, and at least at each safety look).
const DISCOVER_EVERY: Duration = Duration::from_secs(1);

struct Followed {
    live: LiveSession,
    watcher: Watcher,
    name: String,
    /// The folder it was found in (`None`: given as a file).
    from: Option<PathBuf>,
    /// Not looked at since it was found (its first look is no sign of a missed event).
    fresh: bool,
    /// When its figures were last computed (without new bytes only the clock moves them).
    stepped: Option<Instant>,
}

pub fn run(args: Args, ctx: &Ctx) -> Result<u8> {
    let paint = Paint::new(ctx.color);
    let overrides = Overrides::from_user();
    let live_dir = store::dir(ctx.cache.as_deref());
    let state_dir = args.state_dir.clone().or_else(|| live_dir.as_ref().map(|d| d.join("watch")));
    if let Some(d) = &state_dir {
        std::fs::create_dir_all(d).with_context(|| format!("creating {}", escape_line(&d.display().to_string())))?;
    }
    let observed = live_dir.as_ref().map(|d| store::observed(d)).unwrap_or_default();
    let mut exec = args.exec.clone().map(|cmd| Hook::new(cmd, Duration::from_secs(args.cooldown)));
    let targets = Targets { target: args.target.clone(), live_minutes: args.live_minutes, all: args.all };
    let started = Instant::now();
    let mut followed: Vec<Followed> = Vec::new();
    let mut last_discover: Option<Instant> = None;
    let mut first = true;
    let mut out = super::stdout();
    if args.target.is_some() && targets.now()?.is_empty() {
        anyhow::bail!("no session written to in the last {} minutes there", args.live_minutes);
    }
    let mut waker = Waker::new(!args.poll && !args.once, Duration::from_millis(args.poll_ms.max(10)));
    // Events were asked for: a fallback, even at the start, is said once.
    let mut told = if args.poll || args.once { waker.mode() } else { Mode::Events };
    let mut wake = Wake { event: true, created: true };
    loop {
        if wake.created || last_discover.is_none_or(|t| t.elapsed() >= DISCOVER_EVERY) {
            last_discover = Some(Instant::now());
            let now_targets = targets.now()?;
            let mut folders: BTreeSet<PathBuf> = now_targets.iter().filter_map(|(_, from)| from.clone()).collect();
            for (path, from) in now_targets {
                if followed.iter().any(|f| f.live.main() == path) {
                    continue;
                }
                let Ok(mut live) = LiveSession::open(&path, None) else { continue };
                if !args.all {
                    // A newer session in the same folder replaces the one followed (`/clear`).
                    followed.retain(|f| f.from.is_none() || f.from != from);
                }
                let mut watcher = Watcher::default();
                if first && !args.from_start {
                    let _ = live.poll();
                    let snap = Snapshot::of(&live, &inputs(&overrides, &observed));
                    watcher = Watcher::after(&live, &snap);
                }
                followed.push(Followed { name: short_name(&path), live, watcher, from, fresh: true, stepped: None });
            }
            first = false;
            folders.extend(followed.iter().flat_map(|f| f.live.folders()));
            waker.watch(folders);
        }
        let mut grew = false;
        for f in &mut followed {
            let Ok(n) = f.live.poll() else { continue };
            grew |= n > 0 && !std::mem::take(&mut f.fresh);
            if n == 0 && f.stepped.is_some_and(|t| t.elapsed() < DISCOVER_EVERY) {
                continue; // nothing new, and the time-based alerts are checked once a second
            }
            f.stepped = Some(Instant::now());
            let inp = inputs(&overrides, &observed);
            let snap = Snapshot::of(&f.live, &inp);
            let events = f.watcher.step(&f.live, &snap, inp.now_ms);
            let agent = f.live.agent().name();
            let session = f.live.main().display().to_string();
            for e in &events {
                write_event(&mut out, args.format, agent, &session, &f.name, e, &paint)?;
                if is_alert(e) {
                    let json = serde_json::to_string(&WatchDoc::new(agent, &session, e.clone()))?;
                    if args.notify {
                        write!(out, "{}", osc9(&f.name, e))?;
                    }
                    if let Some(x) = &mut exec {
                        x.fire(&json);
                    }
                }
            }
            if let Some(d) = state_dir.as_ref().filter(|_| !events.is_empty()) {
                let (doc, file) = (StatusDoc::new(snap, None, None), d.join(follow::state_file_name(f.live.main())));
                let _ = ctxj_core::journal::session::write_guarded(&file, &serde_json::to_vec(&doc)?, &[f.live.main()]);
            }
            if n > 0 {
                f.live.settle(); // reported calls become sums: memory stays flat however long it runs
            }
        }
        out.flush()?;
        waker.looked(wake, grew);
        if let (Mode::Poll(why), Mode::Events) = (waker.mode(), &told) {
            eprintln!("ctxj watch: polling every {} ms: {}", args.poll_ms.max(10), escape_line(&why));
        }
        told = waker.mode();
        if let Some(x) = &mut exec {
            x.reap();
        }
        let limit = |t: f64| Duration::try_from_secs_f64(t.max(0.0)).unwrap_or(Duration::MAX);
        let left = args.timeout.map_or(Duration::MAX, |t| limit(t).saturating_sub(started.elapsed()));
        if args.once || left.is_zero() {
            break;
        }
        wake = waker.wait(left);
    }
    if let Some(mut x) = exec {
        // Give the last command its deadline, no more.
        x.finish();
    }
    Ok(EXIT_OK)
}

fn inputs(o: &Overrides, observed: &[ctxj_core::live::compact::Observed]) -> Inputs {
    let now_ms = ctxj_core::live::now_ms(None).unwrap_or_default();
    Inputs { now_ms, overrides: *o, observed: observed.to_vec(), ..Inputs::default() }
}

fn write_event(
    out: &mut impl std::io::Write,
    format: WatchFormat,
    agent: &str,
    session: &str,
    name: &str,
    e: &Event,
    paint: &Paint,
) -> Result<()> {
    match format {
        WatchFormat::Ndjson => {
            serde_json::to_writer(&mut *out, &WatchDoc::new(agent, session, e.clone()))?;
            writeln!(out)?;
        }
        WatchFormat::Text => writeln!(out, "{}", event_line(name, e, paint))?,
    }
    Ok(())
}

impl super::Cmd for Args {
    fn machine_output(&self) -> bool {
        true
    }

    fn run(self, ctx: &super::Ctx) -> anyhow::Result<u8> {
        run(self, ctx)
    }
}
