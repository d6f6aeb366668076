//! `tokens` and `budget` as tables, text and JSON (the shapes of docs/json.md).

use comfy_table::{Cell, CellAlignment, Table};
use serde_json::{json, Value};

use super::format::{signed_thousands, thousands};
use super::style::{table, Paint};
use crate::text::escape_line;
use crate::tokens::breakdown::{RequestTokens, TurnEstimate};
use crate::tokens::budget::{Config, Resolved};

fn right(s: String) -> Cell {
    Cell::new(s).set_alignment(CellAlignment::Right)
}

fn pct(n: u64, total: u64) -> String {
    if total == 0 {
        "–".into()
    } else {
        format!("{:.1}%", n as f64 / total as f64 * 100.0)
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

/// `tokens --json`.
pub fn request_json(r: &RequestTokens) -> Value {
    let total = r.breakdown.total;
    let s = &r.settings;
    json!({
        "view": r.view,
        "encoding": r.encoding,
        "model": r.model,
        "raw": total,
        "multiplier": r.multiplier,
        "unrecorded_prefix": r.unrecorded_prefix,
        "calibrated": r.calibrated,
        "parts": r.breakdown.parts.iter().map(|p| json!({
            "part": p.name, "tokens": p.tokens, "recorded": p.tokens.is_some(), "blocks": p.items,
            "share": p.tokens.map(|n| if total == 0 { 0.0 } else { n as f64 / total as f64 }),
        })).collect::<Vec<_>>(),
        "results_by_tool": r.breakdown.results_by_tool.iter().map(|(t, (n, c))| json!({"tool": t, "tokens": n, "results": c})).collect::<Vec<_>>(),
        "settings": {
            "ctx_window": s.ctx_window, "context_budget": s.context_budget, "context_reserve": s.context_reserve,
            "context_target": s.context_target, "keep_results": s.keep_results,
        },
        "distance_to_budget": r.distance(r.budget()),
        "distance_to_target": r.distance(r.target()),
        "headroom": r.distance(r.headroom()),
    })
}

/// The part table of `tokens` (results broken down per tool under "tool results").
fn parts_table(r: &RequestTokens) -> Table {
    let total = r.breakdown.total;
    let mut t = table(&["part", "blocks", "tokens", "share"]);
    for p in &r.breakdown.parts {
        t.add_row(vec![
            Cell::new(p.name),
            right(if p.tokens.is_some() { thousands(p.items as u64) } else { String::new() }),
            right(opt_thousands(p.tokens)),
            right(p.tokens.map(|n| pct(n, total)).unwrap_or_default()),
        ]);
        if p.name == "tool results" {
            for (tool, (n, c)) in &r.breakdown.results_by_tool {
                t.add_row(vec![
                    Cell::new(format!("  {}", escape_line(tool))),
                    right(thousands(*c as u64)),
                    right(thousands(*n)),
                    right(pct(*n, total)),
                ]);
            }
        }
    }
    t.add_row(vec![Cell::new("total (raw)"), right(String::new()), right(thousands(total)), right("100.0%".into())]);
    t
}

/// The settings table of `tokens`: each setting and its distance to the calibrated estimate.
fn settings_table(r: &RequestTokens) -> Table {
    let s = &r.settings;
    let mut t = table(&["setting", "tokens", "distance (setting − calibrated)"]);
    let dist = |v: Option<u64>| r.distance(v).map(signed_thousands).unwrap_or_default();
    t.add_row(vec![Cell::new("ctx_window"), right(opt_thousands(s.ctx_window)), right(String::new())]);
    t.add_row(vec![Cell::new("context_budget"), right(opt_thousands(s.context_budget)), right(dist(r.budget()))]);
    t.add_row(vec![Cell::new("context_target"), right(opt_thousands(s.context_target)), right(dist(r.target()))]);
    t.add_row(vec![Cell::new("context_reserve"), right(opt_thousands(s.context_reserve)), right(String::new())]);
    t.add_row(vec![Cell::new("window − reserve"), right(opt_thousands(r.headroom())), right(dist(r.headroom()))]);
    t.add_row(vec![Cell::new("keep_results"), right(opt_thousands(s.keep_results)), right(String::new())]);
    t
}

/// `tokens` as text.
pub fn request_text(r: &RequestTokens, paint: &Paint) -> String {
    let mut out = format!(
        "{} · {} · {} · {}\n{}\n",
        paint.bold(&escape_line(&r.view)),
        r.encoding,
        crate::render::format::count(r.blocks, "block", "blocks"),
        r.model.as_deref().map(escape_line).unwrap_or_else(|| "model not recorded".into()),
        parts_table(r)
    );
    if let Some(p) = r.unrecorded_prefix {
        out += &format!(
            "system prompt + tool schemas (not recorded) ≈ {}, inferred from usage (estimated; included in the calibrated figure)\n",
            approx(p)
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
    out += &format!("calibrated estimate: {} ({mult_note})\n{}\n", thousands(r.calibrated), settings_table(r));
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
pub fn context_text(v: &crate::check::context::ContextView, paint: &Paint) -> String {
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
        out += &format!("{} tokens until {} (at {})\n", kilo(u.left), u.what, thousands(u.at));
    }
    let mut t = table(&["part", "tokens", "items", "share"]);
    let sum: u64 = v.parts.iter().filter_map(|p| p.tokens).sum();
    for p in &v.parts {
        let share =
            p.tokens.map_or_else(|| "–".to_string(), |n| format!("{:.1}%", n as f64 * 100.0 / sum.max(1) as f64));
        t.add_row(vec![
            Cell::new(escape_line(&p.name)),
            right(p.tokens.map_or_else(
                || "not recorded".into(),
                |n| format!("{}{}", if p.inferred { "≈ " } else { "" }, thousands(n)),
            )),
            right(p.items.to_string()),
            right(share),
        ]);
    }
    out += &format!("{t}\n");
    for h in &v.hints {
        out += &format!("hint: {}\n", escape_line(&hint(h)));
    }
    out
}

fn hint(h: &crate::check::context::Hint) -> String {
    use crate::check::context::Hint;
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
    }
}

/// `tokens --per-turn --json`.
pub fn per_turn_json(rows: &[TurnEstimate]) -> Value {
    Value::Array(
        rows.iter()
            .map(|r| {
                json!({
                    "turn": r.turn, "raw": r.raw, "multiplier": r.multiplier, "prefix": r.prefix,
                    "calibrated": r.calibrated,
                    "prompt_tokens": r.prompt_tokens,
                    "raw_error_pct": r.raw_error_pct(),
                    "calibrated_error_pct": r.calibrated_error_pct(),
                })
            })
            .collect(),
    )
}

/// `tokens --per-turn` as text: `strategy` is the replayed strategy's name.
pub fn per_turn_text(strategy: &str, encoding: &str, rows: &[TurnEstimate], paint: &Paint) -> String {
    let mut out = format!("{} · {} · {} turns\n", paint.bold(&escape_line(strategy)), encoding, rows.len());
    // Sessions with an inferred prefix (affine calibration) get its column and the error figures
    // of the fit; journals that record their prefix keep the ratio table.
    let affine = rows.iter().any(|r| r.prefix > 0);
    let mut head = vec!["turn", "raw", "×", "calibrated", "prompt_tokens", "raw err", "cal. err"];
    if affine {
        head.insert(3, "+ prefix (est.)");
    }
    let mut t = table(&head);
    let e = |v: Option<f64>| v.map(|x| format!("{x:+.1}%")).unwrap_or_else(|| "–".into());
    for r in rows {
        let mut row = vec![
            right(r.turn.to_string()),
            right(thousands(r.raw)),
            right(format!("{:.3}", r.multiplier)),
            right(thousands(r.calibrated)),
            right(r.prompt_tokens.map_or_else(|| "not recorded".into(), thousands)),
            right(e(r.raw_error_pct())),
            right(e(r.calibrated_error_pct())),
        ];
        if affine {
            row.insert(3, right(thousands(r.prefix)));
        }
        t.add_row(row);
    }
    out += &format!("{t}\n");
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
        let mean = |f: &dyn Fn(&TurnEstimate) -> Option<f64>| {
            with.iter().filter_map(|r| f(r).map(f64::abs)).sum::<f64>() / with.len() as f64
        };
        out += &format!(
            "mean |error| over {} turns with prompt_tokens: raw {:.1}%, calibrated {:.1}%\n",
            with.len(),
            mean(&TurnEstimate::raw_error_pct),
            mean(&TurnEstimate::calibrated_error_pct)
        );
    }
    out
}

/// `budget --json`; `config` names the file read, if any.
pub fn budget_json(config: Option<&str>, cfg: &Config, r: &Resolved) -> Value {
    json!({
        "config": config,
        "model": r.model,
        "profile": r.profile,
        "settings": r.settings.iter().map(|s| json!({"key": s.key, "value": s.value, "rule": s.rule})).collect::<Vec<_>>(),
        "problems": r.problems,
        "ignored": cfg.ignored,
    })
}

/// `budget` as text.
pub fn budget_text(config: Option<&str>, cfg: &Config, r: &Resolved, paint: &Paint) -> String {
    let mut out = format!(
        "{} · {} · {}\n",
        paint.bold(&escape_line(&r.model)),
        config.map(escape_line).unwrap_or_else(|| "no config file".into()),
        r.profile
            .as_deref()
            .map(|p| format!("profile models.\"{}\"", escape_line(p)))
            .unwrap_or_else(|| "no profile".into())
    );
    let mut t = table(&["setting", "value", "rule"]);
    for s in &r.settings {
        t.add_row(vec![Cell::new(s.key), right(thousands(s.value)), Cell::new(escape_line(&s.rule))]);
    }
    out += &format!("{t}\n");
    for p in &r.problems {
        out += &format!("{} {}\n", paint.red("configuration error:"), escape_line(p));
    }
    for k in &cfg.ignored {
        out += &format!("{} `{}` is not a budget setting; ignored\n", paint.yellow("note:"), escape_line(k));
    }
    out
}
