//! The SVG charts per turn (prompt size, cumulative cost, cache-hit rate): one line per
//! strategy (each with its own colour, dash pattern and marker, so identical series stay
//! visible, and the legend says which coincide), the provider's recorded line (the cost chart:
//! what was billed), labelled axes with units, hover columns, decision and cache-break marks.

use std::fmt::Write;

use crate::render::format::{money, percent, thousands};

use ctxj_core::report::{Availability, Decision, RecordedBreakView, ReportData, TurnFigures, TurnUsage};

use super::common::{color, dash, escape, marker, money_tick, signed, swatch, verdict_class};

/// The three charts of seed `001_*`.
pub(super) fn charts(h: &mut String, d: &ReportData) {
    h.push_str("<section id=\"charts\">\n<h2>Per turn</h2>\n");
    let turns = d.strategies.iter().map(|s| s.turns.len()).max().unwrap_or(0);
    if turns == 0 {
        h.push_str(
            "<p class=\"na\">The journal has no turns (no assistant records): nothing to chart.</p>\n</section>\n",
        );
        return;
    }
    // 1. Prompt size.
    let series: Vec<Line> = d
        .strategies
        .iter()
        .map(|s| Line { name: &s.name, points: s.turns.iter().map(|t| (t.turn, t.prompt_tokens as f64)).collect() })
        .collect();
    let provider = usage_line(d, |u| u.prompt_tokens.map(|v| v as f64));
    chart(
        h,
        &Chart {
            id: "chart-prompt",
            title: "Prompt size per turn",
            y_label: "prompt tokens (estimated)",
            turns,
            fmt: |v| format!("{} tokens", thousands(v.round() as u64)),
            tick: |v| short(v),
            y_max: None,
            series: &series,
            provider: provider.as_ref().map(|p| (p, "recorded usage.prompt_tokens (provider, tokens)")),
            decisions: &d.decisions,
            breaks: &d.recorded_breaks,
            missing: None,
        },
    );
    // 2. Cumulative cost.
    let (cost_missing, series) = optional_series(d, |t| t.cumulative_cost);
    let why = match (&d.prices, &d.cache_model) {
        (Availability::Missing(w), _) | (_, Availability::Missing(w)) => w.clone(),
        _ => "the cost of some turns is unknown".to_string(),
    };
    let billed = billed_line(d);
    let billed_label = match d.billed.summarizer_calls {
        0 => "as billed (the provider's usage, each call at its own model's price; running sum)".to_string(),
        n => format!(
            "as billed (the provider's usage, each call at its own model's price; running sum, without the {n} \
summarizer call(s) the header's total includes)"
        ),
    };
    chart(
        h,
        &Chart {
            id: "chart-cost",
            title: "Cumulative cost",
            y_label: "cumulative cost (US$)",
            turns,
            fmt: money,
            tick: money_tick,
            y_max: None,
            series: &series,
            provider: billed.as_ref().map(|p| (p, billed_label.as_str())),
            decisions: &[],
            breaks: &[],
            missing: cost_missing.then_some(why.as_str()),
        },
    );
    // 3. Cache-hit rate.
    let (hit_missing, series) = optional_series(d, |t| t.hit_rate);
    let provider = usage_line(d, TurnUsage::hit_rate);
    let why = match &d.cache_model {
        Availability::Missing(w) => w.clone(),
        _ => "the hit rate of some turns is unknown".to_string(),
    };
    chart(
        h,
        &Chart {
            id: "chart-hit",
            title: "Cache-hit rate per turn",
            y_label: "cached / prompt tokens (%)",
            turns,
            fmt: percent,
            tick: |v| format!("{:.0}%", v * 100.0),
            y_max: Some(1.0),
            series: &series,
            provider: provider.as_ref().map(|p| (p, "recorded usage.cached_tokens / prompt_tokens (provider, %)")),
            decisions: &[],
            breaks: &d.recorded_breaks,
            missing: hit_missing.then_some(why.as_str()),
        },
    );
    h.push_str("</section>\n");
}

/// The cost as billed, summed turn by turn (each turn's `billed_cost`, the per-turn figure `turns`
/// and `cache --per-turn` show as "as billed"), at the turns that have one; `None` when none has.
fn billed_line(d: &ReportData) -> Option<Line<'_>> {
    let mut sum = 0.0;
    let points: Vec<(usize, f64)> = d
        .usage
        .iter()
        .filter_map(|u| {
            u.billed_cost.map(|c| {
                sum += c;
                (u.turn, sum)
            })
        })
        .collect();
    (!points.is_empty()).then_some(Line { name: "as billed", points })
}

/// A line of the provider's recorded figures, when the journal has any.
fn usage_line<'a>(d: &'a ReportData, f: impl Fn(&TurnUsage) -> Option<f64>) -> Option<Line<'a>> {
    let points: Vec<(usize, f64)> = d.usage.iter().filter_map(|u| f(u).map(|v| (u.turn, v))).collect();
    (!points.is_empty()).then_some(Line { name: "provider", points })
}

fn short(v: f64) -> String {
    if v >= 1_000_000.0 {
        format!("{:.1}M", v / 1_000_000.0)
    } else if v >= 10_000.0 {
        format!("{:.0}k", v / 1000.0)
    } else if v >= 1000.0 {
        format!("{:.1}k", v / 1000.0)
    } else {
        format!("{v:.0}")
    }
}

/// One line per strategy of a figure that may be unknown; `(true, [])` when any turn lacks it.
fn optional_series(d: &ReportData, f: impl Fn(&TurnFigures) -> Option<f64>) -> (bool, Vec<Line<'_>>) {
    if d.strategies.iter().any(|s| s.turns.iter().any(|t| f(t).is_none())) {
        return (true, Vec::new());
    }
    let lines = d
        .strategies
        .iter()
        .map(|s| Line { name: &s.name, points: s.turns.iter().filter_map(|t| f(t).map(|v| (t.turn, v))).collect() })
        .collect();
    (false, lines)
}

struct Line<'a> {
    name: &'a str,
    /// (turn, value), in turn order.
    points: Vec<(usize, f64)>,
}

impl Line<'_> {
    /// The value at turn `t` (a binary search: the points are in turn order, and a lookup per
    /// turn must not scan the whole line, issue 15).
    fn at(&self, t: usize) -> Option<f64> {
        let i = self.points.partition_point(|p| p.0 < t);
        self.points.get(i).filter(|p| p.0 == t).map(|p| p.1)
    }

    /// Whether `self` and `other` have the same points (values equal to 1e-9 relative): drawn
    /// one over the other, the legend says so.
    fn same_as(&self, other: &Line) -> bool {
        self.points.len() == other.points.len()
            && self
                .points
                .iter()
                .zip(&other.points)
                .all(|(a, b)| a.0 == b.0 && (a.1 - b.1).abs() <= 1e-9 * a.1.abs().max(b.1.abs()).max(1.0))
    }
}

struct Chart<'a> {
    id: &'a str,
    title: &'a str,
    y_label: &'a str,
    turns: usize,
    fmt: fn(f64) -> String,
    tick: fn(f64) -> String,
    y_max: Option<f64>,
    series: &'a [Line<'a>],
    provider: Option<(&'a Line<'a>, &'a str)>,
    decisions: &'a [Decision],
    /// The provider's recorded cache breaks, marked at their turns.
    breaks: &'a [RecordedBreakView],
    /// Why the strategies' series are not available, if they are not.
    missing: Option<&'a str>,
}

/// A "nice" step (1, 2, 2.5 or 5 × 10^k) for about `n` ticks up to `max`.
pub(crate) fn nice_step(max: f64, n: f64) -> f64 {
    let raw = (max / n).max(f64::MIN_POSITIVE);
    let mag = 10f64.powf(raw.log10().floor());
    let f = raw / mag;
    let m = if f <= 1.0 {
        1.0
    } else if f <= 2.0 {
        2.0
    } else if f <= 2.5 {
        2.5
    } else if f <= 5.0 {
        5.0
    } else {
        10.0
    };
    m * mag
}

const W: f64 = 960.0;
const H: f64 = 300.0;
const ML: f64 = 72.0;
const MR: f64 = 16.0;
const MT: f64 = 18.0;
const MB: f64 = 44.0;

/// Where a chart's plot area lies and how turns and values map onto it.
struct Frame {
    /// Turns on the x axis (at least 1).
    n: usize,
    pw: f64,
    ph: f64,
    y_top: f64,
}

impl Frame {
    fn x(&self, t: f64) -> f64 {
        if self.n == 1 {
            ML + self.pw / 2.0
        } else {
            ML + (t - 1.0) / (self.n as f64 - 1.0) * self.pw
        }
    }
    fn y(&self, v: f64) -> f64 {
        MT + self.ph - (v / self.y_top).clamp(0.0, 1.05) * self.ph
    }
}

fn chart(h: &mut String, c: &Chart) {
    let available = c.missing.is_none();
    let _ = writeln!(
        h,
        "<figure class=\"chart\" id=\"{}\" data-available=\"{available}\" data-series=\"{}\">\n<figcaption>{}</figcaption>",
        c.id,
        c.series.len(),
        escape(c.title)
    );
    if let Some(why) = c.missing {
        let _ = writeln!(
            h,
            "<p class=\"na\">Not available: {}.{}</p>",
            escape(why),
            if c.provider.is_some() { " The provider's recorded figures are shown alone." } else { "" }
        );
        if c.provider.is_none() {
            h.push_str("</figure>\n");
            return;
        }
    }
    let all = c.series.iter().chain(c.provider.iter().map(|p| p.0));
    let data_max = all.flat_map(|l| l.points.iter().map(|p| p.1)).fold(0.0f64, f64::max);
    let (step, y_top) = match c.y_max {
        Some(m) => (m / 4.0, m),
        None => {
            let step = nice_step(if data_max > 0.0 { data_max } else { 1.0 }, 5.0);
            (step, (data_max / step).ceil().max(1.0) * step)
        }
    };
    let f = Frame { n: c.turns.max(1), pw: W - ML - MR, ph: H - MT - MB, y_top };
    let _ = writeln!(
        h,
        "<svg viewBox=\"0 0 {W} {H}\" width=\"{W}\" height=\"{H}\" role=\"img\" aria-label=\"{}\">",
        escape(c.title)
    );
    axes(h, c, &f, step);
    hover_columns(h, c, &f);
    decision_marks(h, c, &f);
    break_marks(h, c, &f);
    lines(h, c, &f);
    h.push_str("</svg>\n<ul class=\"legend\">\n");
    legend(h, c);
    h.push_str("</ul>\n</figure>\n");
}

/// The grid, the ticks and labels of both axes, and the axes.
fn axes(h: &mut String, c: &Chart, f: &Frame, step: f64) {
    let (n, pw, ph, y_top) = (f.n, f.pw, f.ph, f.y_top);
    let x = |t: f64| f.x(t);
    let y = |v: f64| f.y(v);
    // Grid and y ticks.
    let mut v = 0.0;
    while v <= y_top + step * 1e-9 {
        let yy = y(v);
        let _ = writeln!(
            h,
            "<line class=\"grid\" x1=\"{ML}\" y1=\"{yy:.1}\" x2=\"{:.1}\" y2=\"{yy:.1}\"/>\
<text class=\"lab\" x=\"{:.1}\" y=\"{:.1}\" text-anchor=\"end\">{}</text>",
            W - MR,
            ML - 6.0,
            yy + 4.0,
            escape(&(c.tick)(v))
        );
        v += step;
    }
    // X ticks.
    let xstep = nice_step(n as f64, 10.0).max(1.0).round() as usize;
    let mut t = 1;
    while t <= n {
        let _ = writeln!(
            h,
            "<line class=\"axis\" x1=\"{0:.1}\" y1=\"{1:.1}\" x2=\"{0:.1}\" y2=\"{2:.1}\"/>\
<text class=\"lab\" x=\"{0:.1}\" y=\"{3:.1}\" text-anchor=\"middle\">{t}</text>",
            x(t as f64),
            MT + ph,
            MT + ph + 4.0,
            MT + ph + 16.0
        );
        t = if t == 1 && xstep > 1 { xstep } else { t + xstep };
    }
    let _ = writeln!(
        h,
        "<line class=\"axis\" x1=\"{ML}\" y1=\"{MT}\" x2=\"{ML}\" y2=\"{:.1}\"/>\
<line class=\"axis\" x1=\"{ML}\" y1=\"{:.1}\" x2=\"{:.1}\" y2=\"{:.1}\"/>",
        MT + ph,
        MT + ph,
        W - MR,
        MT + ph
    );
    let _ = writeln!(
        h,
        "<text class=\"lab\" x=\"{:.1}\" y=\"{:.1}\" text-anchor=\"middle\">turn (LLM call)</text>\
<text class=\"lab\" transform=\"translate(14 {:.1}) rotate(-90)\" text-anchor=\"middle\">{}</text>",
        ML + pw / 2.0,
        H - 6.0,
        MT + ph / 2.0,
        escape(c.y_label)
    );
}

/// Hover columns: one per turn, listing every line's value; a click opens the turn browser.
fn hover_columns(h: &mut String, c: &Chart, f: &Frame) {
    let (n, pw, ph) = (f.n, f.pw, f.ph);
    let x = |t: f64| f.x(t);
    // Hover columns: one per turn, listing every line's value; a click opens the turn browser.
    let colw = if n == 1 { pw } else { pw / (n as f64 - 1.0) };
    for t in 1..=n {
        let mut tip = format!("turn {t}");
        for l in c.series {
            if let Some(v) = l.at(t) {
                let _ = write!(tip, "\n{}: {}", l.name, (c.fmt)(v));
            }
        }
        if let Some((p, label)) = c.provider {
            if let Some(v) = p.at(t) {
                let _ = write!(tip, "\n{label}: {}", (c.fmt)(v));
            }
        }
        let x0 = (x(t as f64) - colw / 2.0).max(ML);
        let x1 = (x(t as f64) + colw / 2.0).min(W - MR);
        let _ = writeln!(
            h,
            "<a href=\"#turn-{t}\"><rect class=\"hover\" x=\"{x0:.1}\" y=\"{MT}\" width=\"{:.1}\" height=\"{ph:.1}\"><title>{}</title></rect></a>",
            (x1 - x0).max(0.5),
            escape(&tip)
        );
    }
}

/// The journal's decisions on the prompt-size chart.
fn decision_marks(h: &mut String, c: &Chart, f: &Frame) {
    let (n, ph) = (f.n, f.ph);
    let x = |t: f64| f.x(t);
    // Decisions on the prompt-size chart.
    for dcs in c.decisions {
        let Some(t) = dcs.turn else { continue };
        let xx = if n == 1 { x(1.0) } else { (x(t as f64) + x((t as f64 - 1.0).max(1.0))) / 2.0 };
        let (cls, col) = verdict_class(dcs);
        let tip = format!(
            "rev {} · {} before turn {t}\n{}\nverdict: {}\nsaved ≈ {} tokens (audit, calibrated estimate)",
            dcs.rev,
            dcs.kind,
            dcs.what,
            dcs.verdict
                .as_ref()
                .map_or("not judged (audit not available)".to_string(), |v| format!("{}: {}", v.level, v.text)),
            signed(dcs.saved_tokens)
        );
        let _ = writeln!(
            h,
            "<g class=\"decision {cls}\" data-rev=\"{}\" data-kind=\"{}\"><line x1=\"{xx:.1}\" y1=\"{MT}\" x2=\"{xx:.1}\" y2=\"{:.1}\" stroke=\"{col}\"/>\
<path d=\"M{:.1} {MT} l5 -8 h-10 z\" fill=\"{col}\"><title>{}</title></path></g>",
            dcs.rev,
            escape(&dcs.kind),
            MT + ph,
            xx,
            escape(&tip)
        );
    }
}

/// The provider's recorded cache breaks: a dotted line at each break's turn, with its cause.
fn break_marks(h: &mut String, c: &Chart, f: &Frame) {
    for b in c.breaks {
        let xx = f.x(b.turn as f64);
        let tip = format!(
            "turn {}: recorded cache break ({})\n{} tokens processed again instead of read{}\n{}",
            b.turn,
            b.cause,
            thousands(b.rewritten_tokens),
            b.cost.map_or(String::new(), |c| format!(", {} extra", money(c))),
            crate::render::cache_words::evidence(&b.evidence)
        );
        let _ = writeln!(
            h,
            "<g class=\"rbreak\" data-turn=\"{}\" data-cause=\"{}\"><line x1=\"{xx:.1}\" y1=\"{MT}\" x2=\"{xx:.1}\" y2=\"{:.1}\"/>\
<circle cx=\"{xx:.1}\" cy=\"{:.1}\" r=\"3.5\" fill=\"#bc4c00\"><title>{}</title></circle></g>",
            b.turn,
            escape(&b.cause),
            MT + f.ph,
            MT + f.ph,
            escape(&tip)
        );
    }
}

/// The provider's line, one line per strategy and, with few turns, points with tooltips.
fn lines(h: &mut String, c: &Chart, f: &Frame) {
    let n = f.n;
    let x = |t: f64| f.x(t);
    let y = |v: f64| f.y(v);
    // Lines.
    let path = |l: &Line| {
        let mut d = String::new();
        for (i, p) in l.points.iter().enumerate() {
            let _ = write!(d, "{}{:.1} {:.1}", if i == 0 { "M" } else { " L" }, x(p.0 as f64), y(p.1));
        }
        d
    };
    if let Some((p, label)) = c.provider {
        let _ = writeln!(
            h,
            "<path class=\"provider\" data-provider=\"{}\" d=\"{}\"><title>{}</title></path>",
            escape(p.name),
            path(p),
            escape(label)
        );
    }
    for (i, l) in c.series.iter().enumerate() {
        let _ = writeln!(
            h,
            "<path class=\"series\" data-strategy=\"{}\" d=\"{}\" stroke=\"{}\"{}/>",
            escape(l.name),
            path(l),
            color(i),
            dash(i)
        );
    }
    // Markers: every point with its tooltip when there are few enough turns to tell them apart,
    // else a sparse, staggered set so each line still shows its shape.
    let every = if n <= 120 { 1 } else { n.div_ceil(60) };
    let k = c.series.len().max(1);
    for (i, l) in c.series.iter().enumerate() {
        let offset = i * every / k;
        for p in l.points.iter().filter(|p| (p.0 + every - 1 - offset % every) % every == 0) {
            let tip = (n <= 120).then(|| escape(&format!("{} · turn {}: {}", l.name, p.0, (c.fmt)(p.1))));
            h.push_str(&marker(i, x(p.0 as f64), y(p.1), tip.as_deref()));
            h.push('\n');
        }
    }
    if let (Some((p, _)), true) = (c.provider, n <= 120) {
        for q in &p.points {
            let _ = writeln!(
                h,
                "<circle class=\"mk provider-mk\" cx=\"{:.1}\" cy=\"{:.1}\" r=\"2.5\"><title>{}</title></circle>",
                x(q.0 as f64),
                y(q.1),
                escape(&format!("{} · turn {}: {}", p.name, q.0, (c.fmt)(q.1)))
            );
        }
    }
}

/// "identical to X" for a line drawn over an earlier one with the same points.
fn same_as(l: &Line, earlier: &[Line]) -> String {
    match earlier.iter().find(|e| l.same_as(e)) {
        Some(e) => format!(
            " <span class=\"same-as\" data-same-as=\"{0}\">identical to {0} (drawn over it)</span>",
            escape(e.name)
        ),
        None => String::new(),
    }
}

fn legend(h: &mut String, c: &Chart) {
    for (i, l) in c.series.iter().enumerate() {
        let _ = writeln!(
            h,
            "<li data-strategy=\"{}\">{}{}{}</li>",
            escape(l.name),
            swatch(i),
            escape(l.name),
            same_as(l, &c.series[..i])
        );
    }
    if let Some((p, label)) = c.provider {
        let _ = writeln!(
            h,
            "<li data-provider=\"{}\"><svg class=\"sw\" width=\"30\" height=\"12\" viewBox=\"0 0 30 12\" aria-hidden=\"true\">\
<line x1=\"1\" y1=\"6\" x2=\"29\" y2=\"6\" stroke=\"#24292f\" stroke-width=\"1.5\" stroke-dasharray=\"5 4\"/><circle cx=\"15\" cy=\"6\" r=\"2.5\" fill=\"#fff\" stroke=\"#24292f\"/></svg>{}{}</li>",
            escape(p.name),
            escape(label),
            same_as(p, c.series)
        );
    }
    if !c.breaks.is_empty() {
        let _ = writeln!(
            h,
            "<li><span class=\"rbreak\">● recorded cache break</span> <span class=\"muted\">({} in the provider's usage; hover for the cause)</span></li>",
            thousands(c.breaks.len() as u64)
        );
    }
    if c.decisions.iter().any(|d| d.turn.is_some()) {
        h.push_str(
            "<li><span class=\"muted\">▼ cleanup decision (hover for rev, verdict and tokens saved)</span></li>\n",
        );
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn nice_steps_are_round() {
        assert_eq!(nice_step(100.0, 5.0), 20.0);
        assert_eq!(nice_step(12_345.0, 5.0), 2500.0);
        assert_eq!(nice_step(0.9, 4.0), 0.25);
    }
}
