//! The page's header and tables: the session header, the strategy comparison, the cleanup
//! decisions with their verdicts, the other findings.

use std::fmt::Write;

use crate::render::format::{money, percent, thousands};

use ctxj_core::report::{Availability, ComparisonRow, ReportData};

use super::common::{escape, opt, signed, swatch, verdict_class};

pub(super) fn header(h: &mut String, d: &ReportData) {
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
    row("cost", cost(d));
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

/// The header's cost: the session as billed (`cache::billed`, the figure `ctxj cache` shows as
/// `as billed` and writes as `recorded.cost`) beside each strategy's simulated cost, with how
/// recorded breaks are found (`render::cache_words`).
fn cost(d: &ReportData) -> String {
    let b = &d.billed;
    let simulated: Vec<String> =
        d.strategies.iter().map(|s| format!("{} {}", escape(&s.name), opt(s.row.cost, money))).collect();
    let simulated = format!("simulated: {}", simulated.join(" · "));
    if b.turns == 0 {
        return format!("as billed: n/a (the journal records no provider usage) · {simulated}");
    }
    let total = match b.cost {
        Some(c) => format!("<strong id=\"billed-total\" data-usd=\"{c}\">{}</strong>", money(c)),
        None => "<strong id=\"billed-total\">n/a</strong> (no call's model has a price)".to_string(),
    };
    let breaks = match b.breaks.len() {
        0 => "no recorded cache break".to_string(),
        n => format!("{} recorded cache break(s)", thousands(n as u64)),
    };
    format!(
        "as billed {total} · {simulated}<br><span class=\"muted\">{}; {breaks} (a cache read short of what \
the previous call left by more than {})</span>",
        escape(crate::render::cache_billed::line(b).trim_end()),
        escape(&crate::render::cache_words::tolerance())
    )
}

pub(super) fn comparison(h: &mut String, d: &ReportData) {
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
            "<tr data-strategy=\"{}\"><td>{} {}</td>\
<td class=\"num\">{}</td><td class=\"num\">{}</td><td class=\"num\">{}</td><td class=\"num\">{}</td><td class=\"num\">{}</td>\
<td class=\"num\">{}</td><td class=\"num\">{}</td><td class=\"num\">{}</td><td class=\"num\">{}</td></tr>",
            escape(&r.strategy),
            swatch(i),
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

pub(super) fn decisions(h: &mut String, d: &ReportData) {
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
