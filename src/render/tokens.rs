//! `tokens` and `budget` as tables fitted to the terminal, text, and the typed documents of
//! docs/json.md (`ctxj.tokens/1`, `ctxj.tokens.per-turn/1`, `ctxj.budget/1`).

use serde::Serialize;

use super::fit::{fit, Column, Layout};
use super::format::{percent, signed_thousands, thousands};
use super::style::Paint;
use ctxj_core::text::escape_line;
use ctxj_core::tokens::breakdown::{RequestTokens, TurnEstimate};
use ctxj_core::tokens::budget::{Config, Resolved, Setting};

/// `n / total` as a one-decimal percentage ("–" when the total is 0).
fn pct(n: u64, total: u64) -> String {
    if total == 0 {
        "–".into()
    } else {
        percent(n as f64 / total as f64)
    }
}

/// `21.5k` style (thousands with one decimal), plain below 1 000.
fn approx(n: u64) -> String {
    if n < 1000 {
        n.to_string()
    } else {
        format!("{:.1}k", n as f64 / 1000.0)
    }
}

fn opt_thousands(v: Option<u64>) -> String {
    v.map_or_else(|| "not recorded".to_string(), thousands)
}

/// `ctxj tokens --format json`: a request's breakdown, calibration and budget distances; the
/// rows of `ndjson` and `csv` are its `parts`.
#[derive(Debug, Clone, Serialize, schemars::JsonSchema)]
pub struct TokensDoc {
    /// `ctxj.tokens/1`.
    pub schema: &'static str,
    pub view: String,
    pub encoding: String,
    pub model: Option<String>,
    /// The raw estimate (the parts' sum).
    pub raw: u64,
    pub multiplier: f64,
    pub unrecorded_prefix: Option<u64>,
    pub calibrated: u64,
    /// Of `calibrated`: the thinking blocks of earlier responses the request carries, which the
    /// log does not record, modelled from each response's usage (absent when none).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub thinking: Option<u64>,
    /// The calibrated figure is extrapolated from a fit of before a compaction (no call with
    /// `prompt_tokens` since).
    pub extrapolated: bool,
    pub parts: Vec<PartRow>,
    pub results_by_tool: Vec<ToolRow>,
    pub settings: SettingsDoc,
    pub distance_to_budget: Option<i64>,
    pub distance_to_target: Option<i64>,
    pub headroom: Option<i64>,
    /// The `/context` view (window share, pressure, next cleanup, parts by size, hints).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub context: Option<ctxj_core::check::context::ContextView>,
}

/// One part of the breakdown.
#[derive(Debug, Clone, Serialize, schemars::JsonSchema)]
pub struct PartRow {
    pub part: String,
    /// `null` for a part the journal does not hold.
    pub tokens: Option<u64>,
    pub recorded: bool,
    pub blocks: usize,
    /// Of the raw total, 0–1.
    pub share: Option<f64>,
}

/// The results of one tool.
#[derive(Debug, Clone, Serialize, schemars::JsonSchema)]
pub struct ToolRow {
    pub tool: String,
    pub tokens: u64,
    pub results: usize,
}

/// The context settings in force (`null`: not recorded).
#[derive(Debug, Clone, Serialize, schemars::JsonSchema)]
pub struct SettingsDoc {
    pub ctx_window: Option<u64>,
    pub context_budget: Option<u64>,
    pub context_reserve: Option<u64>,
    pub context_target: Option<u64>,
    pub keep_results: Option<u64>,
}

/// The document of `ctxj tokens`.
pub fn request_doc(r: &RequestTokens) -> TokensDoc {
    let total = r.breakdown.total;
    let s = &r.settings;
    TokensDoc {
        schema: "ctxj.tokens/1",
        view: r.view.clone(),
        encoding: r.encoding.to_string(),
        model: r.model.clone(),
        raw: total,
        multiplier: r.multiplier,
        unrecorded_prefix: r.unrecorded_prefix,
        calibrated: r.calibrated,
        thinking: (r.thinking > 0).then_some(r.thinking),
        extrapolated: r.extrapolated,
        parts: (r.breakdown.parts.iter())
            .map(|p| PartRow {
                part: p.name.to_string(),
                tokens: p.tokens,
                recorded: p.tokens.is_some(),
                blocks: p.items,
                share: p.tokens.map(|n| if total == 0 { 0.0 } else { n as f64 / total as f64 }),
            })
            .collect(),
        results_by_tool: (r.breakdown.results_by_tool.iter())
            .map(|(t, (n, c))| ToolRow { tool: t.clone(), tokens: *n, results: *c })
            .collect(),
        settings: SettingsDoc {
            ctx_window: s.ctx_window,
            context_budget: s.context_budget,
            context_reserve: s.context_reserve,
            context_target: s.context_target,
            keep_results: s.keep_results,
        },
        distance_to_budget: r.distance(r.budget()),
        distance_to_target: r.distance(r.target()),
        headroom: r.distance(r.headroom()),
        context: None,
    }
}

/// The part table of `tokens` (results broken down per tool under "tool results").
fn parts_table(r: &RequestTokens, layout: Layout) -> String {
    let total = r.breakdown.total;
    let columns =
        [Column::text("part", 0), Column::number("blocks", 1), Column::number("tokens", 0), Column::number("share", 0)];
    let mut rows = Vec::new();
    for p in &r.breakdown.parts {
        rows.push(vec![
            p.name.to_string(),
            if p.tokens.is_some() { thousands(p.items as u64) } else { String::new() },
            opt_thousands(p.tokens),
            p.tokens.map(|n| pct(n, total)).unwrap_or_default(),
        ]);
        if p.name == "tool results" {
            for (tool, (n, c)) in &r.breakdown.results_by_tool {
                rows.push(vec![
                    format!("  {}", escape_line(tool)),
                    thousands(*c as u64),
                    thousands(*n),
                    pct(*n, total),
                ]);
            }
        }
    }
    rows.push(vec!["total (raw)".into(), String::new(), thousands(total), "100.0%".into()]);
    fit(&columns, &rows, layout)
}

/// The settings table of `tokens`: each setting and its distance to the calibrated estimate.
fn settings_table(r: &RequestTokens, layout: Layout) -> String {
    let s = &r.settings;
    let columns =
        [Column::text("setting", 0), Column::number("tokens", 0), Column::number("distance (setting − calibrated)", 0)];
    let dist = |v: Option<u64>| r.distance(v).map(signed_thousands).unwrap_or_default();
    let rows = vec![
        vec!["ctx_window".into(), opt_thousands(s.ctx_window), String::new()],
        vec!["context_budget".into(), opt_thousands(s.context_budget), dist(r.budget())],
        vec!["context_target".into(), opt_thousands(s.context_target), dist(r.target())],
        vec!["context_reserve".into(), opt_thousands(s.context_reserve), String::new()],
        vec!["window − reserve".into(), opt_thousands(r.headroom()), dist(r.headroom())],
        vec!["keep_results".into(), opt_thousands(s.keep_results), String::new()],
    ];
    fit(&columns, &rows, layout)
}

/// `tokens` as text.
pub fn request_text(r: &RequestTokens, paint: &Paint, layout: Layout) -> String {
    let mut out = format!(
        "{} · {} · {} · {}\n{}\n",
        paint.bold(&escape_line(&r.view)),
        r.encoding,
        crate::render::format::count(r.blocks, "block", "blocks"),
        r.model.as_deref().map(escape_line).unwrap_or_else(|| "model not recorded".into()),
        parts_table(r, layout)
    );
    if let Some(p) = r.unrecorded_prefix {
        out += &format!(
            "system prompt + tool schemas (not recorded) ≈ {}, inferred from usage (estimated; included in the calibrated figure)\n",
            approx(p)
        );
    }
    if r.thinking > 0 {
        out += &format!(
            "thinking blocks sent back (not recorded) ≈ {}, from each response's output beyond its visible part (estimated; included in the calibrated figure)\n",
            approx(r.thinking)
        );
    }
    let mult_note = if r.calibrated_from_usage && r.unrecorded_prefix.is_some() {
        format!(
            "{:.3} × raw + {} before turn {}",
            r.multiplier,
            thousands(r.unrecorded_prefix.unwrap_or(0)),
            r.next_turn
        )
    } else if r.calibrated_from_usage {
        format!("×{:.3} before turn {}", r.multiplier, r.next_turn)
    } else {
        "no turn records prompt_tokens: multiplier 1.0".to_string()
    };
    let mult_note = if r.extrapolated {
        format!("{mult_note}; extrapolated: a compaction since the last call with prompt_tokens")
    } else {
        mult_note
    };
    out += &format!("calibrated estimate: {} ({mult_note})\n{}\n", thousands(r.calibrated), settings_table(r, layout));
    out += &match r.budget() {
        Some(b) if r.calibrated > b => paint.red(&format!("over budget by {}", thousands(r.calibrated - b))),
        Some(b) => paint.green(&format!("{} below budget", thousands(b - r.calibrated))),
        None => "budget: not recorded".to_string(),
    };
    out.push('\n');
    out
}

/// "≈ 94.6k", "≈ 950".
fn kilo(n: u64) -> String {
    if n >= 10_000 {
        format!("≈ {:.1}k", n as f64 / 1000.0)
    } else {
        format!("≈ {}", thousands(n))
    }
}

/// The `/context` view: window share and pressure, the next automatic cleanup, the parts by
/// size, the hints.
pub fn context_text(v: &ctxj_core::check::context::ContextView, paint: &Paint, layout: Layout) -> String {
    let mut out = String::from("\ncontext (");
    out += &format!("{} profile): {} tokens", v.harness, thousands(v.used));
    if let (Some(w), Some(p)) = (v.window, v.percent) {
        let tiers: Vec<String> = v.tiers.iter().map(|t| format!("{t}%")).collect();
        let level = match v.level {
            "normal" => paint.green(v.level),
            "warning" => paint.yellow(v.level),
            _ => paint.red(v.level),
        };
        out += &format!(
            " of {} ({p:.1}% of the window) · pressure {level} (levels at {})",
            thousands(w),
            tiers.join(", ")
        );
    } else {
        out += " · window not recorded";
    }
    out.push('\n');
    if let Some(u) = &v.until {
        if u.past > 0 {
            out += &format!("{} tokens past {} (at {}): it is due\n", kilo(u.past), u.what, thousands(u.at));
        } else {
            out += &format!("{} tokens until {} (at {})\n", kilo(u.left), u.what, thousands(u.at));
        }
    }
    if let (false, Some(w)) = (v.categories.is_empty(), v.window.filter(|w| *w > 0)) {
        // the harness's own /context rows, each a share of the window as its /context shows
        let columns = [
            Column::text("/context", 0),
            Column::number("tokens", 0),
            Column::number("items", 1),
            Column::number("of window", 2),
        ];
        let rows: Vec<Vec<String>> = (v.categories.iter())
            .map(|p| {
                vec![
                    escape_line(&p.name),
                    tokens_cell(p.tokens, p.inferred),
                    if p.tokens.is_some() && p.items > 0 { p.items.to_string() } else { String::new() },
                    p.tokens.map_or_else(|| "–".to_string(), |n| pct(n, w)),
                ]
            })
            .collect();
        out += &format!("{}\n", fit(&columns, &rows, layout));
    }
    let columns =
        [Column::text("part", 0), Column::number("tokens", 0), Column::number("items", 1), Column::number("share", 2)];
    let sum: u64 = v.parts.iter().filter_map(|p| p.tokens).sum();
    let rows: Vec<Vec<String>> = (v.parts.iter())
        .map(|p| {
            vec![
                escape_line(&p.name),
                tokens_cell(p.tokens, p.inferred),
                p.items.to_string(),
                p.tokens.map_or_else(|| "–".to_string(), |n| pct(n, sum)),
            ]
        })
        .collect();
    out += &format!("{}\n", fit(&columns, &rows, layout));
    // the harness's own table already has these rows
    if let (Some(free), Some(w), true) = (v.free_space, v.window.filter(|w| *w > 0), v.categories.is_empty()) {
        out += &format!("free space {} ({})", thousands(free), pct(free, w));
        if let Some(b) = v.autocompact_buffer {
            out += &format!(" · autocompact buffer {} ({})", thousands(b), pct(b, w));
        }
        out.push('\n');
    }
    for h in &v.hints {
        out += &format!("hint: {}\n", escape_line(&hint(h)));
    }
    out
}

fn hint(h: &ctxj_core::check::context::Hint) -> String {
    use ctxj_core::check::context::Hint;
    match h {
        Hint::Dominates { tool, tokens, results, percent } => {
            format!("{tool} results dominate: {} tokens in {results} result(s), {percent:.1}% of the request", thousands(*tokens))
        }
        Hint::Elide { keep, results, frees } => format!(
            "elide-keep-{keep} would free {} tokens ({results} older result(s) collapsed to markers; ctxj show --strategy elide-keep-{keep})",
            kilo(*frees)
        ),
        Hint::Clear { keep, tool, results, frees } => format!(
            "ctx clear {{\"keep_last\": {keep}, \"tool\": \"{tool}\"}} would free {} tokens ({results} result(s))",
            kilo(*frees)
        ),
        Hint::Compact { percent, urgent, at } => format!(
            "{}/compact at a task boundary: {percent:.1}% of the window is used, auto-compaction fires at {}",
            if *urgent { "run " } else { "consider " },
            thousands(*at)
        ),
    }
}

/// `ctxj tokens --per-turn --format json`: one row per turn (the rows of `ndjson` and `csv`).
#[derive(Debug, Clone, Serialize, schemars::JsonSchema)]
pub struct PerTurnDoc {
    /// `ctxj.tokens.per-turn/1`.
    pub schema: &'static str,
    pub strategy: String,
    pub encoding: String,
    pub turns: Vec<PerTurnRow>,
}

/// One turn: raw and calibrated estimates against the provider's `prompt_tokens`.
#[derive(Debug, Clone, Serialize, schemars::JsonSchema)]
pub struct PerTurnRow {
    #[serde(flatten)]
    pub estimate: TurnEstimate,
    /// Signed errors against `prompt_tokens`, in percent.
    pub raw_error_pct: Option<f64>,
    pub calibrated_error_pct: Option<f64>,
}

/// The document of `ctxj tokens --per-turn`.
pub fn per_turn_doc(strategy: &str, encoding: &str, rows: &[TurnEstimate]) -> PerTurnDoc {
    let turns = (rows.iter())
        .map(|r| PerTurnRow {
            estimate: *r,
            raw_error_pct: r.raw_error_pct(),
            calibrated_error_pct: r.calibrated_error_pct(),
        })
        .collect();
    PerTurnDoc {
        schema: "ctxj.tokens.per-turn/1",
        strategy: strategy.to_string(),
        encoding: encoding.to_string(),
        turns,
    }
}

/// `tokens --per-turn` as text: `strategy` is the replayed strategy's name.
pub fn per_turn_text(strategy: &str, encoding: &str, rows: &[TurnEstimate], paint: &Paint, layout: Layout) -> String {
    let mut out = format!("{} · {} · {} turns\n", paint.bold(&escape_line(strategy)), encoding, rows.len());
    // Sessions with an inferred prefix (affine calibration) get its column and the error figures
    // of the fit; journals that record their prefix keep the ratio table.
    let affine = rows.iter().any(|r| r.prefix > 0);
    let mut columns = vec![
        Column::number("turn", 0),
        Column::number("raw", 0),
        Column::number("×", 2),
        Column::number("calibrated", 0),
        Column::number("prompt_tokens", 0),
        Column::number("raw err", 1),
        Column::number("cal. err", 0),
    ];
    if affine {
        columns.insert(3, Column::number("+ prefix (est.)", 3));
    }
    let e = |v: Option<f64>| v.map(|x| format!("{x:+.1}%")).unwrap_or_else(|| "–".into());
    let cells: Vec<Vec<String>> = (rows.iter())
        .map(|r| {
            let mut row = vec![
                r.turn.to_string(),
                thousands(r.raw),
                format!("{:.3}", r.multiplier),
                if r.extrapolated { format!("{} *", thousands(r.calibrated)) } else { thousands(r.calibrated) },
                r.prompt_tokens.map_or_else(|| "not recorded".into(), thousands),
                e(r.raw_error_pct()),
                e(r.calibrated_error_pct()),
            ];
            if affine {
                row.insert(3, thousands(r.prefix));
            }
            row
        })
        .collect();
    out += &format!("{}\n", fit(&columns, &cells, layout));
    let extrapolated: Vec<String> = rows.iter().filter(|r| r.extrapolated).map(|r| r.turn.to_string()).collect();
    if !extrapolated.is_empty() {
        out += &format!(
            "* extrapolated (the fit predates a compaction or a change the format does not record; re-anchored on the next call with prompt_tokens): turn{} {}\n",
            if extrapolated.len() == 1 { "" } else { "s" },
            extrapolated.join(", ")
        );
    }
    let sampled: Vec<String> = rows.iter().filter(|r| r.server_sampled).map(|r| r.turn.to_string()).collect();
    if !sampled.is_empty() {
        out += &format!(
            "server-side tool calls (prompt_tokens sums several sampling steps and their results; not a calibration sample, no calibrated error): turn{} {}\n",
            if sampled.len() == 1 { "" } else { "s" },
            sampled.join(", ")
        );
    }
    if affine {
        let last = rows.iter().rev().find(|r| r.prompt_tokens.is_some()).map_or(0, |r| r.prefix);
        out += &format!(
            "system prompt + tool schemas (not recorded) ≈ {}, inferred from usage: calibrated = slope × raw + prefix\n",
            approx(last)
        );
        if let Some(s) = TurnEstimate::stats(rows) {
            out += &format!(
                "calibrated |error| over {} turns after the first with prompt_tokens: median {:.2}%, p90 {:.2}%, worst {:.2}%\n",
                s.turns, s.median, s.p90, s.worst
            );
        }
    }
    let with: Vec<&TurnEstimate> = rows.iter().filter(|r| r.prompt_tokens.is_some()).collect();
    if !with.is_empty() {
        // Each mean over the turns that have that error: the first has no calibrated one.
        let mean = |f: &dyn Fn(&TurnEstimate) -> Option<f64>| {
            let v: Vec<f64> = with.iter().filter_map(|r| f(r).map(f64::abs)).collect();
            (v.iter().sum::<f64>() / v.len().max(1) as f64, v.len())
        };
        let (raw, _) = mean(&TurnEstimate::raw_error_pct);
        let (cal, fitted) = mean(&TurnEstimate::calibrated_error_pct);
        out += &format!(
            "mean |error| over {} turns with prompt_tokens: raw {raw:.1}%, calibrated {cal:.1}% (over the {fitted} after a fit)\n",
            with.len(),
        );
    }
    out
}

/// `ctxj budget --format json`: the settings resolved for a slug (the rows of `ndjson` and
/// `csv`), the configuration problems met and the keys ignored.
#[derive(Debug, Clone, Serialize, schemars::JsonSchema)]
pub struct BudgetDoc {
    /// `ctxj.budget/1`.
    pub schema: &'static str,
    /// The configuration file read, if any.
    pub config: Option<String>,
    pub model: String,
    pub profile: Option<String>,
    pub settings: Vec<Setting>,
    pub problems: Vec<String>,
    pub ignored: Vec<String>,
}

/// The document of `ctxj budget`; `config` names the file read, if any.
pub fn budget_doc(config: Option<&str>, cfg: &Config, r: &Resolved) -> BudgetDoc {
    BudgetDoc {
        schema: "ctxj.budget/1",
        config: config.map(str::to_string),
        model: r.model.clone(),
        profile: r.profile.clone(),
        settings: r.settings.clone(),
        problems: r.problems.clone(),
        ignored: cfg.ignored.clone(),
    }
}

/// `budget` as text.
pub fn budget_text(config: Option<&str>, cfg: &Config, r: &Resolved, paint: &Paint, layout: Layout) -> String {
    let mut out = format!(
        "{} · {} · {}\n",
        paint.bold(&escape_line(&r.model)),
        config.map(escape_line).unwrap_or_else(|| "no config file".into()),
        r.profile
            .as_deref()
            .map(|p| format!("profile models.\"{}\"", escape_line(p)))
            .unwrap_or_else(|| "no profile".into())
    );
    let columns = [Column::text("setting", 0), Column::number("value", 0), Column::text("rule", 0)];
    let rows: Vec<Vec<String>> =
        r.settings.iter().map(|s| vec![s.key.to_string(), thousands(s.value), escape_line(&s.rule)]).collect();
    out += &format!("{}\n", fit(&columns, &rows, layout));
    for p in &r.problems {
        out += &format!("{} {}\n", paint.red("configuration error:"), escape_line(p));
    }
    for k in &cfg.ignored {
        out += &format!("{} `{}` is not a budget setting; ignored\n", paint.yellow("note:"), escape_line(k));
    }
    out
}

/// A part's token cell: "not recorded" when the log cannot know it, `≈ ` before an inferred count.
fn tokens_cell(tokens: Option<u64>, inferred: bool) -> String {
    tokens.map_or_else(|| "not recorded".into(), |n| format!("{}{}", if inferred { "≈ " } else { "" }, thousands(n)))
}
