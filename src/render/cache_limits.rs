//! The context window and the cache minimum in `ctxj cache`: per strategy, how many replayed
//! requests exceed the model's window and how many are too short for the provider to cache.

use std::fmt::Write as _;

use crate::render::format::{count, thousands};
use crate::render::style::Paint;
use ctxj_core::cache::window::{Limit, Limits};
use ctxj_core::cache::Comparison;
use ctxj_core::text::escape_line;

/// `200,000-token context window of claude-opus-4-6 (built-in list)`.
fn what(l: &Limit, kind: &str, limits: &Limits) -> String {
    let of = limits.model.as_deref().map_or(String::new(), |m| format!(" of {}", escape_line(m)));
    format!("{}-token {kind}{of} ({})", thousands(l.tokens), l.source.describe())
}

/// One line per strategy with requests over the window, one per strategy with requests below the
/// minimum cacheable prompt; nothing when no request crosses a limit.
pub fn lines(c: &Comparison, paint: &Paint) -> String {
    let limits = &c.pricing.limits;
    let mut out = String::new();
    for s in &c.sims {
        let m = &s.summary;
        let name = escape_line(&m.strategy);
        if let (Some(w), true) = (&limits.window, m.limits.over_window > 0) {
            let peak = m.limits.peak_vs_window.map_or(String::new(), |r| format!(" = {r:.2}× the window"));
            let msg = format!(
                "{name}: over the {}: {} of {}, peak {}{peak}, first at turn {}",
                what(w, "context window", limits),
                m.limits.over_window,
                count(m.turns, "request", "requests"),
                thousands(m.peak_prompt),
                m.limits.first_over_window.unwrap_or(0)
            );
            let _ = writeln!(out, "{}", paint.yellow(&msg));
        }
        if let (Some(min), true) = (&limits.cache_min, m.limits.below_cache_min > 0) {
            let _ = writeln!(
                out,
                "{name}: below the {}: {} of {} (the provider caches none of them)",
                what(min, "minimum cacheable prompt", limits),
                m.limits.below_cache_min,
                count(m.turns, "request", "requests")
            );
        }
    }
    out
}
