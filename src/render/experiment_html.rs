//! `ctxj report --experiment`: the experiment as one self-contained HTML page (inline CSS and
//! SVG) — the arms table, per measure a bar per arm (its mean, labelled) with its 95 % interval
//! and the runs as dots on a value axis with its unit, the seed's three per-turn curves (prompt
//! size, cumulative cost, cache-hit rate) with one line per run coloured by arm on labelled axes,
//! and the verdicts. Replays are drawn hatched and named
//! as replays. Everything taken from the sessions or the manifest is HTML-escaped.

use std::fmt::Write as _;

use crate::render::experiment::{mean_sd, value, versus};
use crate::render::html::{escape, nice_step};
use ctxj_core::experiment::run::{Metric, TurnPoint};
use ctxj_core::experiment::summary::ArmKind;
use ctxj_core::experiment::{ArmSummary, Experiment};

const COLOURS: [&str; 8] = ["#4269d0", "#efb118", "#ff725c", "#6cc5b0", "#3ca951", "#ff8ab7", "#a463f2", "#97bbf5"];
const WIDTH: f64 = 720.0;

/// One per-turn figure of a run.
type Figure = fn(&TurnPoint) -> Option<f64>;

fn colour(i: usize) -> &'static str {
    COLOURS[i % COLOURS.len()]
}

fn arm_name(a: &ArmSummary) -> String {
    match &a.kind {
        ArmKind::Runs => escape(&a.label),
        ArmKind::Replay { strategy, of } => format!("{} (replay of {})", escape(strategy), escape(of)),
    }
}

/// The whole page.
pub fn render(e: &Experiment) -> String {
    let title = e.name.as_deref().map_or_else(|| "ctxj experiment".to_string(), escape);
    let mut h = String::new();
    let _ = write!(
        h,
        "<!DOCTYPE html><html lang=\"en\"><head><meta charset=\"utf-8\">\
         <meta http-equiv=\"Content-Security-Policy\" content=\"default-src 'none'; style-src 'unsafe-inline'; \
         img-src data:; base-uri 'none'; form-action 'none'\"><title>{title}</title><style>\
         body{{font:14px system-ui,sans-serif;margin:2em;max-width:1100px;color:#222}}\
         table{{border-collapse:collapse}}td,th{{border:1px solid #ccc;padding:3px 8px;text-align:right}}\
         td:first-child,th:first-child{{text-align:left}}.note{{color:#666}}svg{{display:block;margin:.5em 0 1.5em}}\
         svg text.tick,svg text.axis-label{{font-size:11px;fill:#555}}svg text.value{{font-size:12px}}\
         </style></head><body><h1>{title}</h1><p class=\"note\">Reference arm: <b>{}</b>. Intervals: {} — {} \
         resamples, seed {}. Replays keep the reference arm's recorded trajectories: they cannot pass or \
         fail.</p>",
        escape(&e.reference),
        escape(e.interval),
        e.resamples,
        e.seed
    );
    h.push_str(&table(e));
    h.push_str("<h2>Verdicts</h2><ul>");
    for a in &e.arms {
        let _ = write!(h, "<li><b>{}</b>: {}</li>", arm_name(a), escape(&a.verdict));
    }
    h.push_str("</ul>");
    if !e.notes.is_empty() {
        h.push_str("<ul class=\"note\">");
        for n in &e.notes {
            let _ = write!(h, "<li>{}</li>", escape(n));
        }
        h.push_str("</ul>");
    }
    h.push_str("<h2>Per arm: mean, 95% interval, runs</h2>");
    for m in [Metric::Cost, Metric::Turns, Metric::PeakPrompt, Metric::CacheHitRate, Metric::CacheBreaks] {
        h.push_str(&bars(e, m));
    }
    h.push_str("<h2>Per turn, one line per run</h2>");
    let curves: [(&str, Figure, Metric); 3] = [
        ("prompt size (tokens)", |t| t.prompt.map(|p| p as f64), Metric::PeakPrompt),
        ("cumulative cost (US$)", |t| t.cumulative_cost, Metric::Cost),
        ("cache-hit rate (%)", |t| t.hit_rate, Metric::CacheHitRate),
    ];
    for (name, get, unit) in curves {
        h.push_str(&curve(e, name, get, unit));
    }
    h.push_str("</body></html>\n");
    h
}

fn table(e: &Experiment) -> String {
    let mut h = String::from(
        "<table><tr><th>arm</th><th>runs</th><th>passed</th><th>cost</th><th>cost vs reference</th>\
         <th>turns</th><th>peak prompt</th><th>cache hit</th><th>breaks</th><th>compactions</th><th>wall time</th></tr>",
    );
    for a in &e.arms {
        let cell = |m: Metric| a.metric(m).map_or_else(|| "-".into(), mean_sd);
        let passed = match a.kind {
            ArmKind::Replay { .. } => "n/a (replay)".to_string(),
            ArmKind::Runs if a.judged == 0 => "-".into(),
            ArmKind::Runs => format!("{}/{}", a.passed, a.judged),
        };
        let _ = write!(
            h,
            "<tr><td>{}</td><td>{}</td><td>{passed}</td><td>{}</td><td>{}</td>",
            arm_name(a),
            a.runs,
            escape(&cell(Metric::Cost)),
            escape(&a.metric(Metric::Cost).map_or_else(|| "-".into(), versus))
        );
        for m in [
            Metric::Turns,
            Metric::PeakPrompt,
            Metric::CacheHitRate,
            Metric::CacheBreaks,
            Metric::Compactions,
            Metric::WallSeconds,
        ] {
            let _ = write!(h, "<td>{}</td>", escape(&cell(m)));
        }
        h.push_str("</tr>");
    }
    h.push_str("</table>");
    h
}

/// The axis title of measure `m`, with its unit.
fn unit(m: Metric) -> &'static str {
    match m {
        Metric::Cost => "cost per run (US$)",
        Metric::Turns => "turns per run (LLM calls)",
        Metric::PromptTokens => "prompt tokens per run",
        Metric::PeakPrompt => "peak prompt per run (tokens)",
        Metric::CacheHitRate => "cache-hit rate (% of prompt tokens read from cache)",
        Metric::CacheBreaks => "cache breaks per run",
        Metric::Compactions => "compactions per run",
        Metric::WallSeconds => "wall time per run (s)",
    }
}

/// The ticks of an axis from 0 to at least `max`: (step, top).
fn ticks(max: f64) -> (f64, f64) {
    let step = nice_step(if max > 0.0 { max } else { 1.0 }, 5.0);
    (step, (max / step).ceil().max(1.0) * step)
}

/// One horizontal bar per arm, labelled with its mean: the mean, the interval as a whisker, each
/// run a dot; a value axis with ticks and its unit below.
fn bars(e: &Experiment, m: Metric) -> String {
    let runs_of = |a: &ArmSummary| -> Vec<f64> {
        e.runs
            .iter()
            .filter(|r| matches!(a.kind, ArmKind::Runs) && r.arm == a.label)
            .filter_map(|r| r.measures.get(m))
            .collect()
    };
    let max = e
        .arms
        .iter()
        .flat_map(|a| {
            let s = a.metric(m);
            let mut v = runs_of(a);
            v.extend(s.and_then(|s| s.mean));
            v.extend(s.and_then(|s| s.interval).map(|i| i[1]));
            v
        })
        .fold(0.0f64, f64::max);
    let (step, top) = ticks(max);
    // Bars from x = 230 to 90 px short of the right edge, the room for the value label.
    let (x0, x1) = (230.0, WIDTH - 90.0);
    let scale = |v: f64| x0 + (v / top).clamp(0.0, 1.0) * (x1 - x0);
    let row = 26.0;
    let axis_y = row * e.arms.len() as f64 + 10.0;
    let height = axis_y + 38.0;
    let mut s = format!(
        "<h3>{}</h3><svg class=\"bars\" width=\"{WIDTH}\" height=\"{height}\" role=\"img\" aria-label=\"{}\">",
        m.name(),
        unit(m)
    );
    // The value axis: ticks, their values, the unit.
    let mut v = 0.0;
    while v <= top + step * 1e-9 {
        let _ = write!(
            s,
            "<line x1=\"{0:.1}\" x2=\"{0:.1}\" y1=\"5\" y2=\"{axis_y:.1}\" stroke=\"#eee\"/>\
             <text class=\"tick\" x=\"{0:.1}\" y=\"{1:.1}\" text-anchor=\"middle\">{2}</text>",
            scale(v),
            axis_y + 14.0,
            escape(&value(m, v))
        );
        v += step;
    }
    let _ = write!(
        s,
        "<line class=\"axis\" x1=\"{x0}\" x2=\"{x1}\" y1=\"{axis_y:.1}\" y2=\"{axis_y:.1}\" stroke=\"#555\"/>\
         <line class=\"axis\" x1=\"{x0}\" x2=\"{x0}\" y1=\"5\" y2=\"{axis_y:.1}\" stroke=\"#555\"/>\
         <text class=\"axis-label\" x=\"{:.1}\" y=\"{:.1}\" text-anchor=\"middle\">{}</text>",
        (x0 + x1) / 2.0,
        height - 4.0,
        unit(m)
    );
    for (i, a) in e.arms.iter().enumerate() {
        let y = 5.0 + row * i as f64;
        let _ = write!(s, "<text x=\"0\" y=\"{:.1}\">{}</text>", y + 15.0, arm_name(a));
        let Some(st) = a.metric(m) else { continue };
        if let Some(mean) = st.mean {
            let fill = if matches!(a.kind, ArmKind::Replay { .. }) { "none" } else { colour(i) };
            let _ = write!(
                s,
                "<rect x=\"{x0}\" y=\"{y:.1}\" width=\"{:.1}\" height=\"18\" fill=\"{fill}\" stroke=\"{}\" \
                 opacity=\"0.75\"><title>{}: {}</title></rect>",
                scale(mean) - x0,
                colour(i),
                arm_name(a),
                escape(&mean_sd(st))
            );
        }
        if let Some([lo, hi]) = st.interval {
            let _ = write!(
                s,
                "<line x1=\"{:.1}\" x2=\"{:.1}\" y1=\"{:.1}\" y2=\"{:.1}\" stroke=\"#222\" stroke-width=\"2\">\
                 <title>95% interval {} – {}</title></line>",
                scale(lo),
                scale(hi),
                y + 9.0,
                y + 9.0,
                escape(&value(m, lo)),
                escape(&value(m, hi))
            );
        }
        for v in runs_of(a) {
            let _ = write!(
                s,
                "<circle cx=\"{:.1}\" cy=\"{:.1}\" r=\"3.5\" fill=\"#222\"><title>{}</title></circle>",
                scale(v),
                y + 9.0,
                escape(&value(m, v))
            );
        }
        // The mean's value, right of the bar and of its interval.
        if let Some(mean) = st.mean {
            let right = st.interval.map_or(scale(mean), |[_, hi]| scale(hi).max(scale(mean)));
            let _ = write!(
                s,
                "<text class=\"value\" x=\"{:.1}\" y=\"{:.1}\">{}</text>",
                right + 6.0,
                y + 14.0,
                escape(&value(m, mean))
            );
        }
    }
    s.push_str("</svg>");
    s
}

/// One chart of a per-turn figure: a polyline per run, coloured by its arm, on labelled axes
/// (turn; the figure with its unit).
fn curve(e: &Experiment, name: &str, get: Figure, unit: Metric) -> String {
    let (w, hgt) = (WIDTH, 260.0);
    let (left, right, top_y, bottom) = (70.0, 16.0, 12.0, 40.0);
    let turns = e.runs.iter().map(|r| r.per_turn.len()).max().unwrap_or(0).max(2);
    let max = e.runs.iter().flat_map(|r| r.per_turn.iter().filter_map(get)).fold(0.0f64, f64::max);
    let (step, top) = match unit {
        Metric::CacheHitRate => (0.25, 1.0),
        _ => ticks(max),
    };
    let base = hgt - bottom;
    let x = |t: usize| left + (t.saturating_sub(1)) as f64 / (turns - 1) as f64 * (w - left - right);
    let y = |v: f64| base - (v / top).clamp(0.0, 1.05) * (base - top_y);
    let mut s =
        format!("<h3>{}</h3><svg width=\"{w}\" height=\"{hgt}\" role=\"img\" aria-label=\"{0}\">", escape(name));
    let mut v = 0.0;
    while v <= top + step * 1e-9 {
        let _ = write!(
            s,
            "<line x1=\"{left}\" x2=\"{x2:.1}\" y1=\"{yy:.1}\" y2=\"{yy:.1}\" stroke=\"#eee\"/>\
             <text class=\"tick\" x=\"{tx:.1}\" y=\"{ty:.1}\" text-anchor=\"end\">{label}</text>",
            x2 = w - right,
            yy = y(v),
            tx = left - 4.0,
            ty = y(v) + 4.0,
            label = escape(&value(unit, v))
        );
        v += step;
    }
    let xstep = nice_step(turns as f64, 8.0).max(1.0).round() as usize;
    let mut t = 1;
    while t <= turns {
        let _ = write!(
            s,
            "<text class=\"tick\" x=\"{:.1}\" y=\"{:.1}\" text-anchor=\"middle\">{t}</text>",
            x(t),
            base + 14.0
        );
        t = if t == 1 && xstep > 1 { xstep } else { t + xstep };
    }
    let _ = write!(
        s,
        "<line class=\"axis\" x1=\"{left}\" x2=\"{left}\" y1=\"{top_y}\" y2=\"{base}\" stroke=\"#555\"/>\
         <line class=\"axis\" x1=\"{left}\" x2=\"{:.1}\" y1=\"{base}\" y2=\"{base}\" stroke=\"#555\"/>\
         <text class=\"axis-label\" x=\"{:.1}\" y=\"{:.1}\" text-anchor=\"middle\">turn (LLM call)</text>\
         <text class=\"axis-label\" transform=\"translate(12 {:.1}) rotate(-90)\" text-anchor=\"middle\">{}</text>",
        w - right,
        (left + w - right) / 2.0,
        hgt - 6.0,
        (top_y + base) / 2.0,
        escape(name)
    );
    for r in &e.runs {
        let i = e.arms.iter().position(|a| a.label == r.arm).unwrap_or(0);
        let pts: Vec<String> =
            r.per_turn.iter().filter_map(|t| get(t).map(|v| format!("{:.1},{:.1}", x(t.turn), y(v)))).collect();
        let _ = write!(
            s,
            "<polyline fill=\"none\" stroke=\"{}\" stroke-width=\"1.5\" points=\"{}\"><title>{} — {}</title></polyline>",
            colour(i),
            pts.join(" "),
            escape(&r.arm),
            escape(&r.session)
        );
    }
    s.push_str("</svg><p class=\"note\">");
    for (i, a) in e.arms.iter().enumerate().filter(|(_, a)| matches!(a.kind, ArmKind::Runs)) {
        let _ = write!(s, "<span style=\"color:{}\">■</span> {} &nbsp; ", colour(i), arm_name(a));
    }
    s.push_str("</p>");
    s
}
