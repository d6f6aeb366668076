//! The live outputs: `ctxj statusline`'s line(s) and JSON document, and the text and NDJSON of
//! `ctxj watch`'s events (`render::live_watch`). Absent figures are left out, never shown as 0.

use ctxj_core::live::compact::Source;
use ctxj_core::live::Snapshot;
use ctxj_core::text::escape_line;

use super::format::usd;
use super::style::Paint;

/// `ctxj statusline --format json`: the snapshot, and what Claude Code said of itself.
#[derive(Debug, Clone, serde::Serialize, schemars::JsonSchema)]
pub struct StatusDoc {
    pub schema: String,
    /// The model's name as the harness shows it.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub model_name: Option<String>,
    /// Claude Code's own client-side cost estimate (`cost.total_cost_usd`).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub harness_cost: Option<f64>,
    #[serde(flatten)]
    pub snapshot: Snapshot,
}

impl StatusDoc {
    /// A document read back (`ctxj statusline --state`); `None` when it is not one. (Read
    /// through a `Value`: serde's `flatten` cannot read numbers kept exactly as written.)
    pub fn read(bytes: &[u8]) -> Option<StatusDoc> {
        let v: serde_json::Value = serde_json::from_slice(bytes).ok()?;
        if v.get("schema").and_then(serde_json::Value::as_str) != Some("ctxj.statusline/1") {
            return None;
        }
        let s = |k: &str| v.get(k).and_then(serde_json::Value::as_str).map(str::to_string);
        let cost = v.get("harness_cost").and_then(serde_json::Value::as_f64);
        let snapshot: Snapshot = serde_json::from_value(v.clone()).ok()?;
        Some(StatusDoc::new(snapshot, s("model_name"), cost))
    }

    pub fn new(snapshot: Snapshot, model_name: Option<String>, harness_cost: Option<f64>) -> StatusDoc {
        StatusDoc { schema: "ctxj.statusline/1".into(), model_name, harness_cost, snapshot }
    }
}

/// Tokens short: `950`, `61.2k`, `612k`, `1.2M`.
pub fn tokens_short(n: u64) -> String {
    match n {
        n if n < 1_000 => n.to_string(),
        n if n < 100_000 => format!("{:.1}k", n as f64 / 1e3),
        n if n < 1_000_000 => format!("{}k", (n as f64 / 1e3).round() as u64),
        n => format!("{:.1}M", n as f64 / 1e6),
    }
}

/// `4:05`, `1:02:09`; a countdown.
pub fn clock(secs: i64) -> String {
    let s = secs.max(0);
    if s >= 3600 {
        format!("{}:{:02}:{:02}", s / 3600, (s % 3600) / 60, s % 60)
    } else {
        format!("{}:{:02}", s / 60, s % 60)
    }
}

/// A past duration, short: `4:05` under an hour, else `3 h`, `12 d`.
pub fn ago(secs: i64) -> String {
    match secs.max(0) {
        s if s < 3600 => clock(s),
        s if s < 86_400 => format!("{} h", s / 3600),
        s => format!("{} d", s / 86_400),
    }
}

/// The parts of the status line, grouped: context, then cache and money.
fn parts(d: &StatusDoc, p: &Paint) -> (Vec<String>, Vec<String>) {
    let s = &d.snapshot;
    let mut ctx = Vec::new();
    if let Some(m) = d.model_name.as_ref().or(s.model.as_ref()) {
        ctx.push(p.bold(&escape_line(m)));
    }
    if let Some(c) = s.context {
        let mut t = format!("ctx {}", tokens_short(c));
        match (s.compact_at, s.compact_pct, s.window_pct, s.window) {
            (Some(at), Some(pct), _, _) => {
                let mark = if at.source == Source::Observed { "obs" } else { "est" };
                let share = format!("{pct:.0}% of compact @{} {mark}", tokens_short(at.tokens));
                t.push_str(" · ");
                t.push_str(&match pct {
                    x if x >= 90.0 => p.red(&share),
                    x if x >= 75.0 => p.yellow(&share),
                    _ => share,
                });
            }
            (None, _, Some(pct), Some(w)) => t.push_str(&format!(" · {pct:.0}% of {}", tokens_short(w))),
            _ => {}
        }
        ctx.push(t);
    }
    if let Some(n) = s.calls_to_compact {
        ctx.push(format!("~{n} call{} to compact", if n == 1 { "" } else { "s" }));
    }
    let mut money = Vec::new();
    if let Some(c) = &s.cache {
        let ttl = if c.ttl_seconds >= 3600 { "1h" } else { "5m" };
        let cost = c.rewrite_cost.map(usd);
        money.push(if c.warm {
            let t = format!("cache {ttl} warm {}", clock(c.seconds_left));
            let t = if c.seconds_left < 60 { p.yellow(&t) } else { p.green(&t) };
            match cost {
                Some(x) => format!("{t} (cold re-write ≈{x})"),
                None => t,
            }
        } else {
            let t = p.red(&format!("cache {ttl} cold {}", ago(-c.seconds_left)));
            match cost {
                Some(x) => format!("{t} (re-write ≈{x})"),
                None => t,
            }
        });
    }
    if let Some(b) = &s.last_break {
        // The harness's or provider's own cause when reported, else ctxj's from the usage lines.
        // A reported cause that differs from ctxj's is marked `?`.
        let why = match &b.reported_cause {
            Some(r) if b.reported_agrees == Some(false) => format!("{}?", escape_line(r)),
            Some(r) => escape_line(r),
            None => b.cause.map_or("?", |c| c.name()).to_string(),
        };
        let cost = b.cost.map(|c| format!(" {}", usd(c))).unwrap_or_default();
        money.push(p.yellow(&format!("last break #{} {why}{cost}", b.call)));
    }
    if let Some(c) = s.cost {
        money.push(format!("{} session", usd(c)));
    }
    if let Some(c) = s.last_call_cost {
        money.push(format!("last {}", usd(c)));
    }
    if let Some(c) = s.next_call_cost {
        money.push(format!("next ≈{}", usd(c)));
    }
    (ctx, money)
}

/// The status line: one line, or two (context; cache and money) when `two`.
pub fn status_lines(d: &StatusDoc, p: &Paint, two: bool) -> Vec<String> {
    let (ctx, money) = parts(d, p);
    let sep = p.dim(" · ");
    if two {
        [ctx, money].into_iter().filter(|v| !v.is_empty()).map(|v| v.join(&sep)).collect()
    } else {
        let all: Vec<String> = ctx.into_iter().chain(money).collect();
        if all.is_empty() {
            Vec::new()
        } else {
            vec![all.join(&sep)]
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn short_forms() {
        assert_eq!(tokens_short(950), "950");
        assert_eq!(tokens_short(61_234), "61.2k");
        assert_eq!(tokens_short(612_034), "612k");
        assert_eq!(tokens_short(1_234_567), "1.2M");
        assert_eq!(clock(245), "4:05");
        assert_eq!(clock(3729), "1:02:09");
        assert_eq!((ago(59), ago(7300), ago(200_000)), ("0:59".into(), "2 h".into(), "2 d".into()));
    }
}
