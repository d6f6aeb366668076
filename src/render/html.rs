//! Renders a [`ReportData`] as one self-contained HTML page.
//!
//! Inline CSS, inline SVG charts and one small inline script (allowed by its hash in the page's
//! Content-Security-Policy, which forbids every other script and every network load). Every
//! string that comes from the journal goes through [`escape`] — in text and in attribute values
//! alike — so a tool output holding `<script>` or `</style>` renders as text.

use std::fmt::Write;

use base64::Engine as _;
use sha2::{Digest, Sha256};

use crate::render::format::{money, percent, thousands};
use ctxj_core::text::escape_block;

use ctxj_core::report::{
    Availability, BlockView, Change, ComparisonRow, Decision, RecordedBreakView, ReportData, TurnFigures, TurnUsage,
    TurnView,
};

/// HTML-escapes `s` for text content and for quoted attribute values (`&`, `<`, `>`, `"`, `'`).
/// Control characters other than newline and tab, and bidi overrides, are first made visible
/// (`\e`, `\x07`, `\u{202e}`, …) as in the terminal renderers, so a page shows what a journal
/// holds rather than what it pretends to hold.
pub fn escape(s: &str) -> String {
    let s = escape_block(s);
    let mut out = String::with_capacity(s.len() + 16);
    for c in s.chars() {
        match c {
            '&' => out.push_str("&amp;"),
            '<' => out.push_str("&lt;"),
            '>' => out.push_str("&gt;"),
            '"' => out.push_str("&quot;"),
            '\'' => out.push_str("&#39;"),
            c => out.push(c),
        }
    }
    out
}

/// The page's one script: opens the `<details>` a link (e.g. a chart point) points to.
const SCRIPT: &str = "(function(){function o(){var h=decodeURIComponent(location.hash.slice(1));if(!h)return;\
var e=document.getElementById(h);var t=e;while(e){if(e.tagName==='DETAILS')e.open=true;e=e.parentElement;}\
if(t)t.scrollIntoView();}window.addEventListener('hashchange',o);o();})();";

const STYLE: &str = r#"
:root{--fg:#1b1f24;--muted:#5b6470;--line:#d0d7de;--bg:#fff;--soft:#f6f8fa}
*{box-sizing:border-box}
body{font:14px/1.45 system-ui,-apple-system,"Segoe UI",Roboto,"Helvetica Neue",Arial,sans-serif;color:var(--fg);background:var(--bg);margin:0;padding:24px 32px;max-width:1240px}
h1{font-size:22px;margin:0 0 4px}h2{font-size:18px;margin:28px 0 8px;border-bottom:1px solid var(--line);padding-bottom:4px}
h3{font-size:15px;margin:16px 0 6px}
.muted{color:var(--muted)}
dl.header{display:grid;grid-template-columns:max-content 1fr;gap:2px 16px;margin:8px 0}
dl.header dt{color:var(--muted)}dl.header dd{margin:0}
.callout{background:#fff8e5;border:1px solid #f0d78c;border-radius:6px;padding:8px 12px;margin:10px 0}
.na{background:var(--soft);border:1px dashed #adb5bd;border-radius:6px;padding:8px 12px;margin:8px 0;color:var(--muted)}
ul.notes{margin:6px 0;padding-left:20px}
figure.chart{margin:12px 0 20px}
figure.chart figcaption{font-weight:600;margin-bottom:4px}
svg{display:block;max-width:100%;height:auto;font:11px system-ui,sans-serif}
svg .axis{stroke:#57606a;stroke-width:1}
svg .grid{stroke:#eaeef2;stroke-width:1}
svg .series{fill:none;stroke-width:2;pointer-events:none}
svg .provider{fill:none;stroke:#24292f;stroke-width:1.5;stroke-dasharray:5 4;pointer-events:none}
svg .hover{fill:transparent}
svg .hover:hover{fill:rgba(9,105,218,.08)}
svg .decision line{stroke-width:1;stroke-dasharray:3 3}
svg text.lab{fill:#57606a}
ul.legend{list-style:none;padding:0;margin:4px 0;display:flex;flex-wrap:wrap;gap:4px 18px}
ul.legend li{display:flex;align-items:center;gap:6px}
.sw{display:inline-block;width:22px;height:0;border-top:3px solid}
.sw.dash{border-top-style:dashed}
table{border-collapse:collapse;margin:6px 0}
th,td{border:1px solid var(--line);padding:3px 8px;text-align:left;vertical-align:top}
th{background:var(--soft)}
td.num,th.num{text-align:right;font-variant-numeric:tabular-nums}
details.turn{border:1px solid var(--line);border-radius:6px;margin:4px 0;padding:2px 10px}
details.turn>summary{cursor:pointer;padding:4px 0}
details.turn[open]>summary{border-bottom:1px solid var(--line);margin-bottom:6px}
section.tv{margin:6px 0 12px}
tr.same td{color:var(--muted)}
tr.changed td:first-child{border-left:3px solid #bf8700}
tr.added td:first-child{border-left:3px solid #1a7f37}
pre.text{white-space:pre-wrap;word-break:break-word;background:var(--soft);border:1px solid var(--line);border-radius:4px;padding:6px 8px;margin:4px 0;max-height:360px;overflow:auto;font:12px/1.4 ui-monospace,SFMono-Regular,Menlo,Consolas,monospace}
.capped{color:#9a6700;font-size:12px}
.removed{color:#cf222e}
.v-ok{color:#1a7f37}.v-warning{color:#9a6700}.v-error{color:#cf222e}.v-none{color:var(--muted)}
svg .rbreak line{stroke:#bc4c00;stroke-width:1.5;stroke-dasharray:1 3}
.rbreak{color:#bc4c00;font-weight:600}.rbreak-detail{color:#bc4c00}
"#;

/// Series colours, by strategy index (cycled, with a dash pattern after the first round).
const COLORS: [&str; 8] = ["#0969da", "#cf222e", "#1a7f37", "#bf8700", "#8250df", "#0a7f8c", "#bc4c00", "#6e7781"];

fn color(i: usize) -> &'static str {
    COLORS[i % COLORS.len()]
}

fn dash(i: usize) -> &'static str {
    if i >= COLORS.len() {
        " stroke-dasharray=\"8 3\""
    } else {
        ""
    }
}

fn money_tick(v: f64) -> String {
    if v == 0.0 {
        "$0".to_string()
    } else if v < 0.1 {
        format!("${v:.3}")
    } else if v < 10.0 {
        format!("${v:.2}")
    } else {
        format!("${v:.0}")
    }
}

fn opt<T>(v: Option<T>, f: impl Fn(T) -> String) -> String {
    v.map(f).unwrap_or_else(|| "n/a".to_string())
}

/// Renders the whole page (the views from `d`).
pub fn render(d: &ReportData) -> String {
    let mut out = Vec::with_capacity(64 * 1024);
    // Writing to a Vec cannot fail, and every piece written is a `str`.
    let _ = write_page(&mut out, d, &mut InMemory(d));
    String::from_utf8(out).unwrap_or_default()
}

/// Where the turn browser's views come from: `write(s, t, h)` appends strategy `s`'s view of
/// turn `t` (one of `ReportData::browser_turns`), rendered, to `h`.
pub trait TurnChunks {
    fn write(&mut self, s: usize, t: usize, h: &mut String) -> std::io::Result<()>;
}

/// The views held in [`ReportData`] itself.
struct InMemory<'a>(&'a ReportData);

impl TurnChunks for InMemory<'_> {
    fn write(&mut self, s: usize, t: usize, h: &mut String) -> std::io::Result<()> {
        let st = &self.0.strategies[s];
        let k = st.views.partition_point(|v| v.turn < t);
        if let Some(v) = st.views.get(k).filter(|v| v.turn == t) {
            turn_view(h, &st.name, v);
        }
        Ok(())
    }
}

/// The turn browser's views rendered as they are built and kept in anonymous temporary files
/// (one per strategy, removed when dropped), so a long session's page is written to its file
/// piece by piece without the views or the page ever held whole in memory (issue 15).
pub struct Spill {
    names: Vec<String>,
    /// Per strategy: its file and where each view is in it.
    files: Vec<(std::fs::File, Vec<Spilled>)>,
    buf: String,
    /// The first write error, reported by [`Spill::finish`].
    err: Option<std::io::Error>,
}

/// A view in a [`Spill`] file: (turn, offset, length).
type Spilled = (usize, u64, usize);

impl Spill {
    /// A spill for the strategies `names`, in the order the report lists them.
    pub fn new(names: Vec<String>) -> std::io::Result<Spill> {
        let files = names.iter().map(|_| tempfile::tempfile().map(|f| (f, Vec::new()))).collect::<Result<_, _>>()?;
        Ok(Spill { names, files, buf: String::new(), err: None })
    }

    /// Renders strategy `s`'s view `v` into its file (views arrive in turn order).
    pub fn push(&mut self, s: usize, v: &TurnView) {
        use std::io::{Seek, SeekFrom, Write as _};
        let (Some((f, index)), Some(name), None) = (self.files.get_mut(s), self.names.get(s), &self.err) else {
            return;
        };
        self.buf.clear();
        turn_view(&mut self.buf, name, v);
        let r = f.seek(SeekFrom::End(0)).and_then(|at| f.write_all(self.buf.as_bytes()).map(|_| at));
        match r {
            Ok(at) => index.push((v.turn, at, self.buf.len())),
            Err(e) => self.err = Some(e),
        }
    }

    /// The first error writing the temporary files, if any.
    pub fn finish(&mut self) -> std::io::Result<()> {
        self.err.take().map_or(Ok(()), Err)
    }
}

impl TurnChunks for Spill {
    fn write(&mut self, s: usize, t: usize, h: &mut String) -> std::io::Result<()> {
        use std::io::{Read as _, Seek, SeekFrom};
        let Some((f, index)) = self.files.get_mut(s) else { return Ok(()) };
        let k = index.partition_point(|e| e.0 < t);
        let Some(&(_, at, len)) = index.get(k).filter(|e| e.0 == t) else { return Ok(()) };
        f.seek(SeekFrom::Start(at))?;
        let mut bytes = vec![0; len];
        f.read_exact(&mut bytes)?;
        h.push_str(&String::from_utf8(bytes).map_err(|e| std::io::Error::new(std::io::ErrorKind::InvalidData, e))?);
        Ok(())
    }
}

/// Writes the page to `w` piece by piece (the sections before the turn browser, then one turn
/// at a time, its views from `views`); returns the bytes written.
pub fn write_page(w: &mut dyn std::io::Write, d: &ReportData, views: &mut dyn TurnChunks) -> std::io::Result<u64> {
    let mut h = String::with_capacity(64 * 1024);
    let hash = base64::engine::general_purpose::STANDARD.encode(Sha256::digest(SCRIPT.as_bytes()));
    let title = format!("ctxj report — {}", d.header.session);
    let _ = write!(
        h,
        "<!DOCTYPE html>\n<html lang=\"en\">\n<head>\n<meta charset=\"utf-8\">\n\
<meta http-equiv=\"Content-Security-Policy\" content=\"default-src 'none'; style-src 'unsafe-inline'; \
script-src 'sha256-{hash}'; img-src data:; base-uri 'none'; form-action 'none'\">\n\
<meta name=\"viewport\" content=\"width=device-width, initial-scale=1\">\n\
<meta name=\"generator\" content=\"ctxj {}\">\n<title>{}</title>\n<style>{STYLE}</style>\n</head>\n<body>\n",
        env!("CARGO_PKG_VERSION"),
        escape(&title)
    );
    header(&mut h, d);
    charts(&mut h, d);
    comparison(&mut h, d);
    decisions(&mut h, d);
    let mut written = h.len() as u64;
    w.write_all(h.as_bytes())?;
    h.clear();
    written += browser(w, &mut h, d, views)?;
    h.clear();
    let _ = write!(h, "<script>{SCRIPT}</script>\n</body>\n</html>\n");
    w.write_all(h.as_bytes())?;
    Ok(written + h.len() as u64)
}

fn header(h: &mut String, d: &ReportData) {
    let x = &d.header;
    let _ = write!(h, "<header>\n<h1>ctxj report</h1>\n<dl class=\"header\">\n");
    let mut row = |k: &str, v: String| {
        let _ = writeln!(h, "<dt>{k}</dt><dd>{v}</dd>");
    };
    row("session", escape(&x.session));
    row("model", escape(x.model.as_deref().unwrap_or("(not recorded)")));
    if !x.model_switches.is_empty() {
        let s: Vec<String> = x.model_switches.iter().map(|(rev, m)| format!("rev {rev}: {}", escape(m))).collect();
        row("model switches", s.join("; "));
    }
    row("harness", escape(x.harness.as_deref().unwrap_or("(not recorded)")));
    row("turns", format!("{} ({} records)", x.turns, x.records));
    let tok = |v: Option<u64>| opt(v, |n| format!("{} tokens", thousands(n)));
    row(
        "window / budget / target",
        format!("{} / {} / {}", tok(x.ctx_window), tok(x.context_budget), tok(x.context_target)),
    );
    let r = &x.recorded;
    row(
        "recorded usage",
        if r.turns_with_usage == 0 {
            "none: the journal records no provider usage".to_string()
        } else {
            format!(
                "{} turns with usage · {} prompt tokens · {} cached ({}) · {} completion tokens",
                r.turns_with_usage,
                thousands(r.prompt_tokens),
                thousands(r.cached_tokens),
                if r.prompt_tokens > 0 {
                    percent(r.cached_tokens as f64 / r.prompt_tokens as f64)
                } else {
                    "n/a".into()
                },
                thousands(r.completion_tokens)
            )
        },
    );
    row("strategies", d.strategies.iter().map(|s| escape(&s.name)).collect::<Vec<_>>().join(", "));
    row("token estimate", escape(&d.estimator));
    row(
        "cache model",
        match &d.cache_model {
            Availability::Available(m) => escape(m),
            Availability::Missing(why) => format!("<span class=\"muted\">not available: {}</span>", escape(why)),
        },
    );
    row(
        "prices",
        match &d.prices {
            Availability::Available(m) => escape(m),
            Availability::Missing(why) => format!("<span class=\"muted\">not available: {}</span>", escape(why)),
        },
    );
    h.push_str("</dl>\n");
    h.push_str(
        "<p class=\"callout\" id=\"pass-rate-note\"><strong>What this is not.</strong> Every strategy here is a \
replay of one recorded trajectory: the same turns, with each strategy's rule applied to what would have been sent. \
A replay cannot show pass rates like an experiment that runs the agent k times per strategy: under another strategy the agent \
might have acted differently, and whether it would still have finished the task is unknown. The curves show prompt \
size, cost and cache behaviour for these turns only.</p>\n",
    );
    if !d.notes.is_empty() {
        h.push_str("<ul class=\"notes\">\n");
        for n in &d.notes {
            let _ = writeln!(h, "<li>{}</li>", escape(n));
        }
        h.push_str("</ul>\n");
    }
    h.push_str("</header>\n");
}

/// The three charts of seed `001_*`.
fn charts(h: &mut String, d: &ReportData) {
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
            provider: provider.as_ref().map(|p| (p, "recorded usage.prompt_tokens (provider)")),
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
    chart(
        h,
        &Chart {
            id: "chart-cost",
            title: "Cumulative cost",
            y_label: "US$, cumulative",
            turns,
            fmt: money,
            tick: money_tick,
            y_max: None,
            series: &series,
            provider: None,
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
            provider: provider.as_ref().map(|p| (p, "recorded usage.cached_tokens / prompt_tokens (provider)")),
            decisions: &[],
            breaks: &d.recorded_breaks,
            missing: hit_missing.then_some(why.as_str()),
        },
    );
    h.push_str("</section>\n");
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
fn nice_step(max: f64, n: f64) -> f64 {
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
        let _ = writeln!(h, "<path class=\"provider\" d=\"{}\"><title>{}</title></path>", path(p), escape(label));
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
    // Points with their own tooltips, when there are few enough turns to tell them apart.
    if n <= 120 {
        for (i, l) in c.series.iter().enumerate() {
            for p in &l.points {
                let _ = writeln!(
                    h,
                    "<circle cx=\"{:.1}\" cy=\"{:.1}\" r=\"3\" fill=\"{}\"><title>{} · turn {}: {}</title></circle>",
                    x(p.0 as f64),
                    y(p.1),
                    color(i),
                    escape(l.name),
                    p.0,
                    escape(&(c.fmt)(p.1))
                );
            }
        }
    }
}

fn legend(h: &mut String, c: &Chart) {
    for (i, l) in c.series.iter().enumerate() {
        let _ = writeln!(
            h,
            "<li data-strategy=\"{}\"><span class=\"sw{}\" style=\"border-color:{}\"></span>{}</li>",
            escape(l.name),
            if i >= COLORS.len() { " dash" } else { "" },
            color(i),
            escape(l.name)
        );
    }
    if let Some((_, label)) = c.provider {
        let _ = writeln!(h, "<li><span class=\"sw dash\" style=\"border-color:#24292f\"></span>{}</li>", escape(label));
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

fn signed(v: i64) -> String {
    if v < 0 {
        format!("−{}", thousands(v.unsigned_abs()))
    } else {
        thousands(v as u64)
    }
}

fn verdict_class(d: &Decision) -> (&'static str, &'static str) {
    match d.verdict.as_ref().map(|v| v.level.as_str()) {
        Some("ok") => ("v-ok", "#1a7f37"),
        Some("warning") => ("v-warning", "#bf8700"),
        Some(_) => ("v-error", "#cf222e"),
        None => ("v-none", "#6e7781"),
    }
}

fn comparison(h: &mut String, d: &ReportData) {
    h.push_str(
        "<section id=\"comparison-section\">\n<h2>Strategy comparison</h2>\n<table id=\"comparison\">\n<thead><tr>\
<th>strategy</th><th class=\"num\">turns</th><th class=\"num\">peak prompt</th><th class=\"num\">total prompt</th>\
<th class=\"num\">new input</th><th class=\"num\">cache read</th><th class=\"num\">cache hit</th>\
<th class=\"num\">cost</th><th class=\"num\">vs baseline</th><th class=\"num\">cache breaks</th></tr></thead>\n<tbody>\n",
    );
    for (i, s) in d.strategies.iter().enumerate() {
        let r: &ComparisonRow = &s.row;
        let t = |v: Option<u64>| opt(v, thousands);
        let _ = writeln!(
            h,
            "<tr data-strategy=\"{}\"><td><span class=\"sw{}\" style=\"border-color:{}\"></span> {}</td>\
<td class=\"num\">{}</td><td class=\"num\">{}</td><td class=\"num\">{}</td><td class=\"num\">{}</td><td class=\"num\">{}</td>\
<td class=\"num\">{}</td><td class=\"num\">{}</td><td class=\"num\">{}</td><td class=\"num\">{}</td></tr>",
            escape(&r.strategy),
            if i >= COLORS.len() { " dash" } else { "" },
            color(i),
            escape(&r.strategy),
            r.turns,
            thousands(r.peak_prompt),
            thousands(r.total_prompt),
            t(r.new_input),
            t(r.cached_input),
            opt(r.hit_rate, percent),
            opt(r.cost, money),
            opt(r.cost_vs_baseline, |v| format!("{v:.2}×")),
            opt(r.cache_breaks, |v| v.to_string())
        );
    }
    h.push_str("</tbody>\n</table>\n<p class=\"muted\">Token figures are estimates of the replayed requests");
    if let Availability::Available(m) = &d.cache_model {
        let _ = write!(h, "; cache read and cache hit under the <code>{}</code> cache model", escape(m));
    }
    match (&d.cache_model, &d.prices) {
        (Availability::Missing(why), _) => {
            let _ = write!(h, "; new/cached input, hit rate, cost and cache breaks are n/a: {}", escape(why));
        }
        (_, Availability::Missing(why)) => {
            let _ = write!(h, "; cost is n/a: {}", escape(why));
        }
        _ => h.push_str("; output tokens are the recorded completion tokens"),
    }
    h.push_str(".</p>\n");
    if d.strategies.iter().any(|s| !s.breaks.is_empty()) {
        h.push_str("<h3>Cache breaks</h3>\n<p class=\"muted\">Turns whose request does not start with the whole previous request \
(the prefix was rewritten, not just extended): the first differing block and what changed it.</p>\n<ul class=\"notes\" id=\"breaks\">\n");
        for s in &d.strategies {
            if s.breaks.is_empty() {
                continue;
            }
            let more = s.row.cache_breaks.unwrap_or(0).saturating_sub(s.breaks.len());
            let items: Vec<String> = s
                .breaks
                .iter()
                .map(|b| {
                    format!(
                        "<a href=\"#turn-{0}\">turn {0}</a>, block {1}: {2}",
                        b.turn,
                        b.at.block,
                        escape(&crate::render::cache_words::divergence(&b.at))
                    )
                })
                .collect();
            let _ = writeln!(
                h,
                "<li data-strategy=\"{}\"><strong>{}</strong>: {}{}</li>",
                escape(&s.name),
                escape(&s.name),
                items.join("; "),
                if more > 0 { format!("; … and {more} more") } else { String::new() }
            );
        }
        h.push_str("</ul>\n");
    }
    h.push_str("</section>\n");
}

fn decisions(h: &mut String, d: &ReportData) {
    h.push_str("<section id=\"decisions\">\n<h2>Decision timeline</h2>\n");
    if let Availability::Missing(why) = &d.audit {
        let _ = writeln!(
            h,
            "<p class=\"na\">Verdicts: not available in this build ({}). The decisions below are listed as recorded, unjudged.</p>",
            escape(why)
        );
    }
    if d.decisions.is_empty() {
        h.push_str(
            "<p class=\"muted\">The journal records no cleanup decisions (elide, clear, mirror, compact).</p>\n",
        );
        other_findings(h, d);
        h.push_str("</section>\n");
        return;
    }
    h.push_str(
        "<table id=\"decision-table\">\n<thead><tr><th class=\"num\">rev</th><th class=\"num\">before turn</th><th>kind</th>\
<th>what</th><th>verdict</th><th class=\"num\">saved tokens</th></tr></thead>\n<tbody>\n",
    );
    for x in &d.decisions {
        let (cls, _) = verdict_class(x);
        let verdict = x.verdict.as_ref().map_or("not judged".to_string(), |v| format!("{}: {}", v.level, v.text));
        let _ = writeln!(
            h,
            "<tr><td class=\"num\">{}</td><td class=\"num\">{}</td><td>{}</td><td>{}</td><td class=\"{cls}\">{}</td><td class=\"num\">{}</td></tr>",
            x.rev,
            x.turn.map_or("—".to_string(), |t| format!("<a href=\"#turn-{t}\">{t}</a>")),
            escape(&x.kind),
            escape(&x.what),
            escape(&verdict),
            signed(x.saved_tokens)
        );
    }
    h.push_str(
        "</tbody>\n</table>\n<p class=\"muted\">Verdicts and saved tokens come from the audit (<code>ctxj audit</code>): \
the calibrated estimate of the request just before the record minus just after it.</p>\n",
    );
    other_findings(h, d);
    h.push_str("</section>\n");
}

fn other_findings(h: &mut String, d: &ReportData) {
    if d.findings.is_empty() {
        return;
    }
    h.push_str(
        "<h3>Other audit findings</h3>\n<table id=\"findings\">\n<thead><tr><th class=\"num\">rev</th><th>level</th>\
<th>rule</th><th>message</th></tr></thead>\n<tbody>\n",
    );
    for f in &d.findings {
        let cls = match f.level.as_str() {
            "error" => "v-error",
            "warning" => "v-warning",
            _ => "v-none",
        };
        let _ = writeln!(
            h,
            "<tr><td class=\"num\">{}</td><td class=\"{cls}\">{}</td><td>{}</td><td>{}</td></tr>",
            f.rev,
            escape(&f.level),
            escape(&f.rule),
            escape(&f.message)
        );
    }
    h.push_str("</tbody>\n</table>\n");
}

/// The turn browser, written to `w` one turn at a time; returns the bytes written.
fn browser(
    w: &mut dyn std::io::Write,
    h: &mut String,
    d: &ReportData,
    views: &mut dyn TurnChunks,
) -> std::io::Result<u64> {
    let _ = writeln!(
        h,
        "<section id=\"turns\">\n<h2>Turn browser</h2>\n<p class=\"muted\">Each turn's request per strategy, block by block, \
compared with the same strategy's previous request. Text is inlined only for blocks that are new or changed in that turn, \
and at most {} characters per block (longer texts say where they were cut). Click a turn in a chart to open it here.</p>",
        thousands(d.text_cap as u64)
    );
    let range = d.browser_turns.clone();
    let (shown, all) = (range.clone().count(), d.header.turns);
    if shown < all {
        let _ = writeln!(
            h,
            "<p class=\"callout\" id=\"browser-range\">This page's turn browser holds {} of the session's {} turns{} (<code>--turns</code> / <code>--last</code>); the charts and tables cover every turn.</p>",
            thousands(shown as u64),
            thousands(all as u64),
            if shown > 0 { format!(", turns {}–{}", range.start(), range.end()) } else { String::new() }
        );
    }
    let mut written = 0u64;
    let mut breaks = d.recorded_breaks.iter().peekable();
    for t in range {
        let mut sum = Vec::new();
        for s in &d.strategies {
            if let Some(f) = s.turns.get(t.wrapping_sub(1)) {
                sum.push(format!("{} {}", escape(&s.name), thousands(f.prompt_tokens)));
            }
        }
        while breaks.next_if(|b| b.turn < t).is_some() {}
        let brk = breaks.next_if(|b| b.turn == t);
        let _ = writeln!(
            h,
            "<details class=\"turn\" id=\"turn-{t}\"><summary><strong>Turn {t}</strong> <span class=\"muted\">· prompt tokens: {}</span>{}</summary>",
            sum.join(" · "),
            brk.map_or(String::new(), |b| format!(" <span class=\"rbreak\">recorded cache break: {}</span>", escape(&b.cause)))
        );
        if let Some(b) = brk {
            recorded_break(h, b);
        }
        for s in 0..d.strategies.len() {
            views.write(s, t, h)?;
        }
        h.push_str("</details>\n");
        written += h.len() as u64;
        w.write_all(h.as_bytes())?;
        h.clear();
    }
    h.push_str("</section>\n");
    w.write_all(h.as_bytes())?;
    Ok(written + h.len() as u64)
}

/// A recorded cache break in the turn browser: its cause, the tokens read again and the evidence.
fn recorded_break(h: &mut String, b: &RecordedBreakView) {
    let _ = writeln!(
        h,
        "<p class=\"rbreak-detail\" data-cause=\"{}\">Recorded cache break ({}): {} tokens processed again instead of read{} · {}</p>",
        escape(&b.cause),
        escape(&b.cause),
        thousands(b.rewritten_tokens),
        b.cost.map_or(String::new(), |c| format!(", {} extra", money(c))),
        escape(&crate::render::cache_words::evidence(&b.evidence))
    );
}

fn turn_view(h: &mut String, name: &str, v: &TurnView) {
    let df = &v.diff;
    let _ = writeln!(
        h,
        "<section class=\"tv\" data-strategy=\"{}\"><h3>{} · turn {}</h3>\n<p class=\"muted\">{} blocks · vs previous request: \
{} same, {} changed, {} added, {} removed{}</p>",
        escape(name),
        escape(name),
        v.turn,
        v.block_count,
        df.same,
        df.changed,
        df.added,
        df.removed.len(),
        if v.turn == 1 {
            " (first request)"
        } else if df.extends_previous {
            " · extends the previous request (prefix kept)"
        } else {
            " · <strong>rewrites the previous request's prefix</strong>"
        }
    );
    if !df.removed.is_empty() {
        h.push_str("<p class=\"removed\">removed: ");
        let parts: Vec<String> = df
            .removed
            .iter()
            .map(|(k, id, c)| {
                format!("{} {} ({} chars)", escape(k), escape(id.as_deref().unwrap_or("")), thousands(*c as u64))
            })
            .collect();
        h.push_str(&parts.join(", "));
        h.push_str("</p>\n");
    }
    h.push_str(
        "<table class=\"blocks\"><thead><tr><th class=\"num\">#</th><th>type</th><th>id</th><th>tool</th>\
<th class=\"num\">chars</th><th class=\"num\">tokens</th><th>vs previous</th></tr></thead><tbody>\n",
    );
    // The leading run the request repeats from the previous one, and any later run of unchanged
    // blocks, fold into one row each, so a long session's page grows with what changes per
    // turn, not with the whole request every turn.
    let k = &v.kept;
    let lead = v.blocks.iter().take_while(|b| b.change == Change::Same).count();
    let (mut i, run) = if k.blocks > 0 { (lead, k.blocks + lead) } else { (0, 0) };
    if run > 0 {
        let same = &v.blocks[..lead];
        let chars = k.chars + same.iter().map(|b| b.chars as u64).sum::<u64>();
        let tokens = k.tokens + same.iter().map(|b| b.tokens).sum::<u64>();
        same_run(h, 0, run, chars, tokens);
    }
    while i < v.blocks.len() {
        let run = v.blocks[i..].iter().take_while(|b| b.change == Change::Same).count();
        if run >= 2 {
            let blocks = &v.blocks[i..i + run];
            let chars = blocks.iter().map(|b| b.chars as u64).sum();
            same_run(h, k.blocks + i, run, chars, blocks.iter().map(|b| b.tokens).sum());
            i += run;
        } else {
            block_row(h, k.blocks + i, &v.blocks[i]);
            i += 1;
        }
    }
    h.push_str("</tbody></table>\n");
    for (i, b) in v.blocks.iter().enumerate() {
        if let Some(text) = &b.text {
            let _ = write!(
                h,
                "<details><summary>#{} {} {} — {} chars</summary><pre class=\"text\">{}</pre>",
                k.blocks + i + 1,
                escape(&b.kind),
                escape(b.id.as_deref().unwrap_or("")),
                thousands(b.chars as u64),
                escape(text)
            );
            if let Some(full) = b.capped_from {
                let _ = write!(
                    h,
                    "<p class=\"capped\">… cut: the first {} of {} characters are shown.</p>",
                    thousands(ctxj_core::text::chars(text) as u64),
                    thousands(full as u64)
                );
            }
            h.push_str("</details>\n");
        }
    }
    h.push_str("</section>\n");
}

/// One row for `n` blocks from index `from` that repeat the previous request.
fn same_run(h: &mut String, from: usize, n: usize, chars: u64, tokens: u64) {
    let range = if n == 1 { (from + 1).to_string() } else { format!("{}–{}", from + 1, from + n) };
    let _ = writeln!(
        h,
        "<tr class=\"same run\"><td class=\"num\">{range}</td><td colspan=\"3\">{n} block{} as in the previous request</td>\
<td class=\"num\">{}</td><td class=\"num\">{}</td><td>same</td></tr>",
        if n == 1 { "" } else { "s" },
        thousands(chars),
        thousands(tokens)
    );
}

fn block_row(h: &mut String, i: usize, b: &BlockView) {
    let (cls, mut label) = match b.change {
        Change::Same => ("same", "same".to_string()),
        Change::Changed => ("changed", "changed".to_string()),
        Change::Added => ("added", "new".to_string()),
    };
    if let Some(p) = b.previous_chars {
        let _ = write!(label, " ({} → {} chars)", thousands(p as u64), thousands(b.chars as u64));
    }
    if let Some(o) = &b.origin {
        let _ = write!(label, " · {}", escape(o));
    }
    let _ = writeln!(
        h,
        "<tr class=\"{cls}\"><td class=\"num\">{}</td><td>{}</td><td>{}</td><td>{}</td><td class=\"num\">{}</td><td class=\"num\">{}</td><td>{label}</td></tr>",
        i + 1,
        escape(&b.kind),
        escape(b.id.as_deref().unwrap_or("")),
        escape(b.tool.as_deref().unwrap_or("")),
        thousands(b.chars as u64),
        thousands(b.tokens)
    );
}

/// What `ctxj report` wrote: the line it prints, or its JSON.
#[derive(Debug, Clone, serde::Serialize)]
pub struct Written {
    pub output: String,
    pub bytes: usize,
    pub strategies: Vec<String>,
    pub turns: usize,
    pub notes: Vec<String>,
}

impl Written {
    pub fn new(output: &std::path::Path, bytes: usize, d: &ReportData) -> Written {
        Written {
            output: output.display().to_string(),
            bytes,
            strategies: d.strategies.iter().map(|s| s.name.clone()).collect(),
            turns: d.header.turns,
            notes: d.notes.clone(),
        }
    }

    /// "wrote PATH (N bytes): S strategies, T turns", the path escaped.
    pub fn text(&self) -> String {
        format!(
            "wrote {} ({} bytes): {}, {}",
            ctxj_core::text::escape_line(&self.output),
            thousands(self.bytes as u64),
            super::format::count(self.strategies.len(), "strategy", "strategies"),
            super::format::count(self.turns, "turn", "turns")
        )
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn escape_covers_text_and_attributes() {
        assert_eq!(escape("<script>a&b</script>"), "&lt;script&gt;a&amp;b&lt;/script&gt;");
        assert_eq!(escape("x\"y'z"), "x&quot;y&#39;z");
        assert_eq!(escape("a\nb\tc"), "a\nb\tc");
    }

    #[test]
    fn escape_makes_controls_visible() {
        assert_eq!(escape("\u{1b}[31mred"), "\\e[31mred");
        assert_eq!(escape("a\u{202e}b"), "a\\u{202e}b");
    }

    #[test]
    fn nice_steps_are_round() {
        assert_eq!(nice_step(100.0, 5.0), 20.0);
        assert_eq!(nice_step(12_345.0, 5.0), 2500.0);
        assert_eq!(nice_step(0.9, 4.0), 0.25);
    }
}
