//! The session as billed in `ctxj cache`: its row in the strategies table, its one-line
//! summary and its recorded cache breaks with their causes.

use std::fmt::Write as _;

use crate::render::format::{money_or_na as money, percent, thousands};
use crate::render::style::Paint;
use ctxj_core::cache::{Billed, Comparison};
use ctxj_core::text::escape_line;

fn count(v: Option<u64>) -> String {
    v.map_or_else(|| "n/a".into(), thousands)
}

/// The `as billed` row of the strategies table (same columns, cache write included); `None` when
/// no turn carries usage.
pub fn row(c: &Comparison) -> Option<Vec<String>> {
    let b = &c.billed;
    if b.turns == 0 {
        return None;
    }
    let new = b.input.map(|i| i + b.cache_write.unwrap_or(0));
    Some(vec![
        "as billed".into(),
        thousands(b.turns as u64),
        count(b.peak_prompt),
        count(new),
        count(b.cache_read),
        count(b.cache_write),
        b.hit_rate.map_or_else(|| "n/a".into(), percent),
        money(b.cost),
        super::cache::ratio(ctxj_core::cache::cost_ratio(b.cost, c.base_cost)),
        thousands(b.breaks.len() as u64),
    ])
}

/// One line: the billed figures, what is unknown, and how breaks are found.
pub fn line(b: &Billed) -> String {
    if b.turns == 0 {
        return String::new();
    }
    let w1h = match b.cache_write_1h {
        Some(h) if h > 0 => format!(" (1h {})", thousands(h)),
        _ => String::new(),
    };
    let mut out = format!(
        "as billed (usage, each call at its own model): input {} · cache read {} · cache write {}{} · output {} · cost {}",
        count(b.input),
        count(b.cache_read),
        count(b.cache_write),
        w1h,
        count(b.output),
        money(b.cost)
    );
    if b.recorded_cost_turns > 0 {
        let _ = write!(out, " ({} call(s) at the cost the log recorded)", b.recorded_cost_turns);
    }
    if b.unpriced_turns > 0 {
        let _ = write!(out, " ({} call(s) without a price left out)", b.unpriced_turns);
    }
    if b.summarizer_calls > 0 {
        let _ = write!(
            out,
            " (with {} summarizer call(s) of compactions, {})",
            b.summarizer_calls,
            money(b.summarizer_cost)
        );
    }
    if !b.unknown.is_empty() {
        let _ = write!(out, " · not recorded: {}", b.unknown.join(", "));
    }
    out.push('\n');
    out
}

/// One line when the simulations share something with the provider's record: the models the
/// turns are priced at (when more than one), the recorded cache losses replayed, the lifetime.
pub fn environment(e: &ctxj_core::cache::EnvironmentSummary) -> String {
    use ctxj_core::cache::ProviderBreaks;
    let mut parts = Vec::new();
    if e.models.len() > 1 {
        let names: Vec<String> = e.models.iter().map(|m| escape_line(m)).collect();
        parts.push(format!("each turn priced and cached at its own model ({})", names.join(" → ")));
    }
    match (e.provider_breaks, e.replayed) {
        (ProviderBreaks::Replay, 0) => {}
        (ProviderBreaks::Replay, n) => parts.push(format!(
            "{n} recorded cache loss(es) that no request change explains replayed in every strategy at the same turns (--provider-breaks ignore leaves them out)"
        )),
        (ProviderBreaks::Ignore, _) => parts.push("recorded cache losses not replayed (--provider-breaks ignore)".into()),
    }
    if let Some(s) = e.kept_idle_seconds {
        parts.push(format!(
            "cache lifetime {} (the provider's cache survived that idle gap)",
            super::format::duration(s as i64, super::format::DurationStyle::Prose)
        ));
    }
    match parts.is_empty() {
        true => String::new(),
        false => format!("simulated: {}\n", parts.join("; ")),
    }
}

/// The recorded cache breaks, `n` of them explained.
pub fn breaks(b: &Billed, n: usize, paint: &Paint) -> String {
    if b.breaks.is_empty() || n == 0 {
        return String::new();
    }
    let mut out = format!(
        "\n{} — recorded cache breaks ({}, tolerance {}):\n",
        paint.bold("as billed"),
        b.breaks.len(),
        super::cache_words::tolerance()
    );
    for x in b.breaks.iter().take(n) {
        let _ = writeln!(
            out,
            "  turn {}: {} — read {} of {} expected; {} tokens written again, {}: {}",
            x.turn,
            x.cause.name(),
            thousands(x.cache_read),
            thousands(x.expected_read),
            thousands(x.rewritten_tokens),
            money(x.cost),
            escape_line(&super::cache_words::evidence(&x.evidence))
        );
    }
    if b.breaks.len() > n {
        let _ = writeln!(out, "  … {} more (--breaks N)", b.breaks.len() - n);
    }
    out
}
