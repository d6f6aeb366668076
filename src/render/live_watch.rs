//! `ctxj watch` output: one line per event (a call, or an alert), or one NDJSON object per event
//! (schema `ctxj.watch/1`).

use ctxj_core::live::events::{Band, CacheUse, Event};
use ctxj_core::text::escape_line;

use super::format::{thousands, usd};
use super::live::tokens_short;
use super::style::Paint;

/// One NDJSON line of `ctxj watch --format ndjson`.
#[derive(Debug, Clone, serde::Serialize, schemars::JsonSchema)]
pub struct WatchDoc {
    pub schema: &'static str,
    pub agent: String,
    /// The followed transcript.
    pub session: String,
    #[serde(flatten)]
    pub event: Event,
}

impl WatchDoc {
    pub fn new(agent: &str, session: &str, event: Event) -> WatchDoc {
        WatchDoc { schema: "ctxj.watch/1", agent: agent.to_string(), session: session.to_string(), event }
    }
}

fn money(c: Option<f64>) -> String {
    c.map(usd).unwrap_or_default()
}

/// Whether the event is an alert (notified, `--exec`), not a plain call.
pub fn is_alert(e: &Event) -> bool {
    !matches!(e, Event::Call { .. })
}

/// The event as one line of text (`name` is the session's short name).
pub fn event_line(name: &str, e: &Event, p: &Paint) -> String {
    let name = p.dim(&escape_line(name));
    match e {
        Event::Call { call, ts, model, context, cache_read, cache_write, output, cost, cache, .. } => {
            let time = ts.get(11..19).unwrap_or("");
            let tag = match cache {
                CacheUse::Hit => p.green("hit"),
                CacheUse::Miss => p.red("miss"),
                CacheUse::Cold => p.yellow("cold"),
            };
            let model = model.as_deref().map(escape_line).unwrap_or_default();
            format!(
                "{time} {name} call {call} {model} ctx {} read {} write {} out {} {} {tag}",
                tokens_short(*context),
                tokens_short(*cache_read),
                tokens_short(*cache_write),
                tokens_short(*output),
                money(*cost),
            )
        }
        Event::CacheBreak { call, cause, lost_tokens, cost, reported_cause, reported_agrees, .. } => {
            let ours = cause.map_or("unexplained in the usage lines (see `ctxj cache`)", |c| c.name());
            let differs = if *reported_agrees == Some(false) { ", which differs" } else { "" };
            let why = match reported_cause {
                Some(r) => format!("{ours} (reported: {}{differs})", escape_line(r)),
                None => ours.to_string(),
            };
            p.red(&format!(
                "! {name} cache break at call {call}: {why}, {} tokens re-written {}",
                thousands(*lost_tokens),
                money(*cost)
            ))
        }
        Event::Compaction { pre_tokens, auto, post_tokens, summary_cost, rebuild_cost, .. } => {
            let how = match auto {
                Some(true) => "auto ",
                Some(false) => "manual ",
                None => "",
            };
            let pre = pre_tokens.map(|t| format!(" at {}", tokens_short(t))).unwrap_or_default();
            let post = post_tokens.map(|t| format!(" → {}", tokens_short(t))).unwrap_or_default();
            let summary = summary_cost.map(|c| format!(", summary {}", usd(c))).unwrap_or_default();
            let rebuild = rebuild_cost.map(|c| format!(", cache rebuild {}", usd(c))).unwrap_or_default();
            p.yellow(&format!("! {name} {how}compaction{pre}{post}{summary}{rebuild}"))
        }
        Event::Band { band, context, threshold } => {
            let what = if *band == Band::Compact { "at the compaction point" } else { "in the warning band" };
            p.yellow(&format!("! {name} {what}: ctx {} of {}", tokens_short(*context), tokens_short(*threshold)))
        }
        Event::Expiring { seconds_left, rewrite_cost } => {
            let cost = rewrite_cost.map(|c| format!(" (cold re-write ≈{})", usd(c))).unwrap_or_default();
            p.yellow(&format!("! {name} cache expires in {seconds_left} s{cost}"))
        }
        Event::Cold { rewrite_cost } => {
            let cost = rewrite_cost.map(|c| format!(": the next prompt re-writes ≈{}", usd(c))).unwrap_or_default();
            p.red(&format!("! {name} cache gone cold{cost}"))
        }
    }
}

/// An alert as an OSC 9 terminal notification (iTerm2, WezTerm, kitty, Windows Terminal; tmux
/// passes it with `allow-passthrough`): its text without colour or control characters.
pub fn osc9(name: &str, e: &Event) -> String {
    let text: String = event_line(name, e, &Paint::new(false)).chars().filter(|c| !c.is_control()).collect();
    format!("\x1b]9;ctxj: {text}\x07")
}
