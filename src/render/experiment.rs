//! `ctxj experiment`'s output: the arms table (mean ± sd, the cost ratio against the reference
//! with its interval), a verdict line per arm, the per-measure intervals (`--detail`), and the
//! rows of `--format json|ndjson|csv` (one row per arm and measure).

use serde::Serialize;

use crate::render::fit::{fit, Column, Layout};
use crate::render::format::{percent, thousands, usd_fine};
use ctxj_core::experiment::run::Metric;
use ctxj_core::experiment::summary::{passes, times, ArmKind, ArmSummary, MetricSummary};
use ctxj_core::experiment::Experiment;
use ctxj_core::text::escape_line;

/// A value of `m` as shown.
pub fn value(m: Metric, v: f64) -> String {
    match m {
        Metric::Cost => usd_fine(v),
        Metric::CacheHitRate => percent(v),
        Metric::WallSeconds => seconds(v),
        Metric::Turns | Metric::CacheBreaks | Metric::Compactions => format!("{v:.1}"),
        Metric::PromptTokens | Metric::PeakPrompt => thousands(v.max(0.0).round() as u64),
    }
}

fn seconds(v: f64) -> String {
    if v < 120.0 {
        format!("{v:.0} s")
    } else {
        format!("{:.1} min", v / 60.0)
    }
}

/// `mean ± sd`, `mean` alone for one run, `-` for none.
pub fn mean_sd(s: &MetricSummary) -> String {
    match (s.mean, s.sd) {
        (Some(m), Some(sd)) => format!("{} ± {}", value(s.metric, m), value(s.metric, sd)),
        (Some(m), None) => value(s.metric, m),
        _ => "-".into(),
    }
}

/// `lo – hi` of an interval of `m`.
fn range(m: Metric, i: Option<[f64; 2]>) -> String {
    i.map_or_else(|| "-".into(), |[a, b]| format!("{} – {}", value(m, a), value(m, b)))
}

/// The contrast with the reference: `5.8× (4.1–7.9×)` for cost, `+12.3 (+8.0 – +16.7)` otherwise.
pub fn versus(s: &MetricSummary) -> String {
    let Some(v) = &s.vs_reference else { return "reference".into() };
    let Some(x) = v.value else { return "-".into() };
    let signed = |d: f64| {
        // A difference of rates is in percentage points.
        let t = match s.metric {
            Metric::CacheHitRate => format!("{:.1} pp", d.abs() * 100.0),
            m => value(m, d.abs()),
        };
        if d < 0.0 {
            format!("−{t}")
        } else {
            format!("+{t}")
        }
    };
    let (point, iv) = match s.metric {
        Metric::Cost => (times(x), v.interval.map(|[a, b]| format!("{}–{}", times(a).trim_end_matches('×'), times(b)))),
        _ => (signed(x), v.interval.map(|[a, b]| format!("{} – {}", signed(a), signed(b)))),
    };
    match iv {
        Some(i) => format!("{point} ({i})"),
        None => point,
    }
}

fn label(a: &ArmSummary) -> String {
    match &a.kind {
        ArmKind::Runs => escape_line(&a.label),
        ArmKind::Replay { strategy, of } => format!("{} [replay of {}]", escape_line(strategy), escape_line(of)),
    }
}

/// The table, the verdicts, and with `detail` every measure's interval.
pub fn table(e: &Experiment, detail: bool, layout: Layout) -> String {
    let mut out = String::new();
    if let Some(n) = &e.name {
        out.push_str(&format!("{}\n", escape_line(n)));
    }
    let columns = [
        Column::text("arm", 0),
        Column::number("runs", 0),
        Column::text("passed", 0),
        Column::number("cost", 0),
        Column::number("cost vs reference", 0),
        Column::number("turns", 1),
        Column::number("prompt tokens", 5),
        Column::number("peak prompt", 4),
        Column::number("cache hit", 2),
        Column::number("breaks", 6),
        Column::number("compactions", 3),
        Column::number("wall time", 7),
    ];
    let rows: Vec<Vec<String>> = e
        .arms
        .iter()
        .map(|a| {
            let cell = |m: Metric| a.metric(m).map_or_else(|| "-".into(), mean_sd);
            let passed = match a.kind {
                ArmKind::Replay { .. } => "n/a (replay)".to_string(),
                ArmKind::Runs if a.judged == 0 => "-".to_string(),
                ArmKind::Runs => format!("{}/{}", a.passed, a.judged),
            };
            let mut row = vec![label(a), a.runs.to_string(), passed, cell(Metric::Cost)];
            row.push(a.metric(Metric::Cost).map_or_else(|| "-".into(), versus));
            for m in &Metric::ALL[1..] {
                row.push(cell(*m));
            }
            row
        })
        .collect();
    out.push_str(&fit(&columns, &rows, layout));
    out.push('\n');
    out.push_str(&format!(
        "mean ± sd per run; cost vs reference: ratio of means with its 95% bootstrap interval ({} resamples, seed {})\n",
        thousands(e.resamples as u64),
        e.seed
    ));
    if e.arms.iter().any(|a| matches!(a.kind, ArmKind::Replay { .. })) {
        out.push_str(
            "replay rows: the reference arm's runs replayed (simulated cache and token estimates), compared with \
             the replay of `recorded` over the same runs; they keep the recorded trajectory and have no outcome\n",
        );
    }
    out.push('\n');
    for a in &e.arms {
        out.push_str(&format!("{}: {}\n", label(a), escape_line(&a.verdict)));
    }
    if !e.notes.is_empty() {
        out.push('\n');
        for n in &e.notes {
            out.push_str(&format!("note: {}\n", escape_line(n)));
        }
    }
    if detail {
        out.push('\n');
        out.push_str(&details(e, layout));
    }
    out
}

/// Every arm × measure: mean ± sd, its interval, and the contrast with its interval.
fn details(e: &Experiment, layout: Layout) -> String {
    let columns = [
        Column::text("arm", 0),
        Column::text("measure", 0),
        Column::number("n", 2),
        Column::number("mean ± sd", 0),
        Column::number("95% interval", 0),
        Column::number("vs reference (95%)", 0),
    ];
    let mut rows = Vec::new();
    for a in &e.arms {
        for s in &a.metrics {
            rows.push(vec![
                label(a),
                s.metric.name().to_string(),
                s.n.to_string(),
                mean_sd(s),
                range(s.metric, s.interval),
                versus(s),
            ]);
        }
    }
    fit(&columns, &rows, layout) + "\n"
}

/// One machine-readable row: an arm and one of its measures.
#[derive(Debug, Serialize)]
pub struct Row<'a> {
    pub arm: &'a str,
    #[serde(flatten)]
    pub kind: &'a ArmKind,
    pub runs: usize,
    pub judged: usize,
    pub passed: usize,
    pub passes: String,
    #[serde(flatten)]
    pub measure: &'a MetricSummary,
}

/// The rows of `--format ndjson|csv`.
pub fn rows(e: &Experiment) -> Vec<Row<'_>> {
    e.arms
        .iter()
        .flat_map(|a| {
            a.metrics.iter().map(move |s| Row {
                arm: &a.label,
                kind: &a.kind,
                runs: a.runs,
                judged: a.judged,
                passed: a.passed,
                passes: passes(a),
                measure: s,
            })
        })
        .collect()
}
