//! The output of `ctxj tune`: the configurations table (frontier, knee, named points), the
//! recommendation with the line to paste, its deltas and confidence, the baseline's fidelity to
//! the bill, and the `ctxj.tune/1` document (`--format json`) with one CSV/NDJSON row per
//! configuration.

use std::fmt::Write as _;

use serde::Serialize;

use crate::render::fit::{fit, Column, Layout};
use crate::render::format::{money_or_na as money, percent, thousands};
use crate::render::style::Paint;
use ctxj_core::text::escape_line;
use ctxj_core::tune::{Point, Recommendation, Tune};

/// `ctxj tune --format json`.
#[derive(Debug, Serialize, schemars::JsonSchema)]
pub struct TuneDoc {
    /// `ctxj.tune/1`.
    pub schema: &'static str,
    #[serde(flatten)]
    pub tune: Tune,
}

/// One row per configuration (`--format csv|ndjson`).
#[derive(Debug, Serialize)]
pub struct TuneRow<'a> {
    pub config: &'a str,
    pub knob: &'a str,
    pub paste: &'a str,
    pub settable: bool,
    pub named: Option<&'a str>,
    pub knee: bool,
    pub recommended: bool,
    #[serde(flatten)]
    pub point: &'a Point,
}

pub fn doc(t: Tune) -> TuneDoc {
    TuneDoc { schema: "ctxj.tune/1", tune: t }
}

pub fn rows(d: &TuneDoc) -> Vec<TuneRow<'_>> {
    let t = &d.tune;
    let rec = t.recommendation.as_ref().map(|r| r.point);
    (t.configs.iter().zip(&t.points).enumerate())
        .map(|(i, (c, p))| TuneRow {
            config: &c.name,
            knob: &c.knob,
            paste: &c.paste,
            settable: c.settable,
            named: c.named.as_deref(),
            knee: t.knee == Some(i),
            recommended: rec == Some(i),
            point: p,
        })
        .collect()
}

fn pct_signed(r: Option<f64>) -> String {
    match r {
        Some(r) => format!("{:+.1}%", r * 100.0),
        None => "—".into(),
    }
}

/// The human output.
pub fn text(t: &Tune, paint: &Paint, layout: Layout) -> String {
    let mut out = String::new();
    let _ = writeln!(
        out,
        "{} · {} · {} configurations · window {} · penalty m = {}",
        paint.bold(&format!("ctxj tune: {}", t.harness.name())),
        crate::render::format::count(t.sessions.len(), "session", "sessions"),
        t.configs.len(),
        thousands(t.window),
        t.penalty
    );
    out.push_str(&table(t, layout));
    out.push_str("\n* on the frontier of (cost + penalty, retention)   K the knee   R recommended\n");
    fidelity(&mut out, t);
    if let Some(r) = &t.recommendation {
        recommendation(&mut out, t, r, paint);
    } else {
        out.push_str("\nno recommendation: no session is priced (try --model)\n");
    }
    let _ = writeln!(out, "\nnote: {}", t.note);
    out
}

fn table(t: &Tune, layout: Layout) -> String {
    let columns = [
        Column::text("", 0),
        Column::text("config", 0),
        Column::text("knob", 6),
        Column::number("cost", 0),
        Column::number("+penalty", 3),
        Column::number("retention", 0),
        Column::number("dropped", 2),
        Column::number("compactions", 4),
        Column::number("peak", 5),
        Column::number(">80%", 7),
        Column::number("trail", 8),
        Column::text("named", 1),
    ];
    let rec = t.recommendation.as_ref().map(|r| r.point);
    let rows: Vec<Vec<String>> = (t.configs.iter().zip(&t.points).enumerate())
        .map(|(i, (c, p))| {
            let mut mark = String::new();
            if p.on_frontier {
                mark.push('*');
            }
            if t.knee == Some(i) {
                mark.push('K');
            }
            if rec == Some(i) {
                mark.push('R');
            }
            vec![
                mark,
                escape_line(&c.name),
                escape_line(&c.knob),
                money(p.cost),
                money(Some(p.penalty)),
                percent(p.retention),
                thousands(p.dropped as u64),
                thousands(p.compactions as u64),
                thousands(p.peak_prompt),
                percent(p.share_above_80),
                p.trail.map_or_else(|| "—".into(), percent),
                c.named.as_deref().map(escape_line).unwrap_or_default(),
            ]
        })
        .collect();
    fit(&columns, &rows, layout)
}

fn fidelity(out: &mut String, t: &Tune) {
    let f: Vec<f64> = t.sessions.iter().filter_map(|s| s.fidelity).collect();
    if f.is_empty() {
        return;
    }
    let within = f.iter().filter(|x| x.abs() <= 0.05).count();
    let worst = t
        .sessions
        .iter()
        .filter_map(|s| s.fidelity.map(|x| (x, &s.path)))
        .max_by(|a, b| a.0.abs().partial_cmp(&b.0.abs()).unwrap_or(std::cmp::Ordering::Equal));
    let _ = write!(
        out,
        "baseline: the recorded replay is within 5 % of the bill on {} of {} priced sessions",
        within,
        f.len()
    );
    if let Some((x, p)) = worst {
        let _ = write!(out, " (worst {} on {})", pct_signed(Some(x)), escape_line(p));
    }
    out.push('\n');
}

fn recommendation(out: &mut String, t: &Tune, r: &Recommendation, paint: &Paint) {
    let _ = writeln!(out, "\n{} {} — {}", paint.bold("recommended:"), escape_line(&r.name), escape_line(&r.why));
    let _ = writeln!(out, "  {}", escape_line(&r.knob));
    let _ = writeln!(out, "  paste:  {}", paint.bold(&escape_line(&r.paste)));
    for d in [&r.vs_default, &r.vs_recorded].into_iter().flatten() {
        let _ = writeln!(
            out,
            "  vs {}: cost {} ({}), retention {:+.1} pts, prompt tokens {}",
            escape_line(&d.against),
            d.cost
                .map_or_else(|| "—".into(), |c| format!("{}{}", if c < 0.0 { "−" } else { "+" }, money(Some(c.abs())))),
            pct_signed(d.cost_pct),
            d.retention * 100.0,
            pct_signed(d.prompt_pct)
        );
    }
    if let (Some(b), Some(v)) = (r.billed, r.vs_billed) {
        let _ = writeln!(
            out,
            "  vs what you paid ({}): {}{}",
            money(Some(b)),
            if v < 0.0 { "−" } else { "+" },
            money(Some(v.abs()))
        );
    }
    if r.sessions > 0 {
        let _ = writeln!(
            out,
            "  savings vs default per session: p10 {} · p50 {} · p90 {}; no worse than the default on cost and retention in {} of {} sessions{}",
            pct_signed(r.savings_p10),
            pct_signed(r.savings_p50),
            pct_signed(r.savings_p90),
            r.confidence.map_or_else(|| "—".into(), percent),
            r.sessions,
            if r.stable { "" } else { "; depends on how much re-reading costs you (changes with --penalty 0.5…2)" }
        );
    }
    let front: Vec<&str> = t.frontier.iter().map(|&i| t.configs[i].name.as_str()).collect();
    let _ = writeln!(out, "  frontier: {}", escape_line(&front.join(" → ")));
}
