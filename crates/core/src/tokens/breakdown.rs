//! Where the tokens of one request go (`ctxj tokens`): system prompt, tool schemas, user text,
//! assistant text, call arguments, results (also per tool), attachments, summaries, notices and
//! the request framing, each with the spec's §3 framing, plus the calibrated total against the
//! budget settings in force.

use std::collections::BTreeMap;

use serde::Serialize;

use super::{Calibrator, Estimator, BLOCK_FRAMING, FRAMING};
use crate::journal::CtxSettings;
use crate::projection::{block::canonical_value, Block};

/// One line of the breakdown; `tokens` is `None` for a part the journal does not hold.
#[derive(Debug, Clone, PartialEq, Serialize, schemars::JsonSchema)]
pub struct Part {
    pub name: &'static str,
    pub tokens: Option<u64>,
    /// Blocks (or calls) counted in it.
    pub items: usize,
}

/// The breakdown of a request's blocks by what they hold.
#[derive(Debug, Clone, PartialEq, Serialize, schemars::JsonSchema)]
pub struct Breakdown {
    pub parts: Vec<Part>,
    /// Per tool: (tokens of its results, results).
    pub results_by_tool: BTreeMap<String, (u64, usize)>,
    /// The raw estimate of the request (the parts' sum).
    pub total: u64,
}

/// The parts of the breakdown after the system prompt and tool schemas, in order.
const PARTS: [&str; 7] =
    ["user text", "assistant text", "call arguments", "tool results", "attachments", "summaries", "notices"];

/// Counts `blocks` part by part (the parts sum to [`super::request_tokens`]).
pub fn breakdown(blocks: &[Block], est: &dyn Estimator) -> Breakdown {
    let mut sys: Option<u64> = None;
    let mut tools: Option<u64> = None;
    // tool schemas: one item per tool (an array's elements; any other value is one)
    let mut n_tools = 0usize;
    let mut sums: BTreeMap<&str, (u64, usize)> = BTreeMap::new();
    let mut per_tool: BTreeMap<String, (u64, usize)> = BTreeMap::new();
    let mut add = |k: &'static str, n: u64| {
        let e = sums.entry(k).or_default();
        e.0 += n;
        e.1 += 1;
    };
    for b in blocks {
        let framed = BLOCK_FRAMING + est.count(b.text());
        match b {
            Block::System { tools: t, .. } => {
                sys = Some(sys.unwrap_or(0) + framed);
                if let Some(t) = t {
                    tools = Some(tools.unwrap_or(0) + est.count(&canonical_value(t)));
                    n_tools += t.as_array().map_or(1, Vec::len);
                }
            }
            Block::Summary { .. } => add("summaries", framed),
            Block::User { .. } => add("user text", framed),
            Block::Attachment { .. } => add("attachments", framed),
            Block::Notice { .. } => add("notices", framed),
            Block::Assistant { calls, .. } => {
                add("assistant text", framed);
                for c in calls {
                    add("call arguments", est.count(&c.tool) + est.count(&canonical_value(&c.args)));
                }
            }
            Block::Result { tool, .. } => {
                add("tool results", framed);
                let e = per_tool.entry(tool.clone()).or_default();
                e.0 += framed;
                e.1 += 1;
            }
        }
    }
    let mut parts = vec![
        Part { name: "system prompt", tokens: sys, items: usize::from(sys.is_some()) },
        Part { name: "tool schemas", tokens: tools, items: n_tools },
    ];
    for k in PARTS {
        let (n, items) = sums.get(k).copied().unwrap_or((0, 0));
        parts.push(Part { name: k, tokens: Some(n), items });
    }
    parts.push(Part { name: "request framing", tokens: Some(FRAMING), items: 1 });
    let total = parts.iter().filter_map(|p| p.tokens).sum();
    Breakdown { parts, results_by_tool: per_tool, total }
}

/// A request's tokens: the breakdown, the calibrated total and the settings in force.
#[derive(Debug, Clone, Serialize, schemars::JsonSchema)]
pub struct RequestTokens {
    /// What request this is (recorded state or a strategy's turn).
    pub view: String,
    pub encoding: &'static str,
    pub model: Option<String>,
    pub blocks: usize,
    pub breakdown: Breakdown,
    /// The turn the request would be sent on (the calibration's "before turn").
    pub next_turn: usize,
    pub multiplier: f64,
    /// The system prompt and tool schemas the format does not record, inferred from usage (the
    /// affine calibration's offset, in provider tokens): an *estimate*, included in
    /// `calibrated`, not in the raw breakdown. `None` for journals that record them.
    pub unrecorded_prefix: Option<u64>,
    /// Whether any earlier turn recorded `prompt_tokens` (else the multiplier is 1.0).
    pub calibrated_from_usage: bool,
    /// Whether the calibrated figure is extrapolated from a fit of before a rewrite (a compaction
    /// since the last turn with usage: [`Calibrator::extrapolated`]).
    pub extrapolated: bool,
    pub calibrated: u64,
    /// Modelled thinking tokens of earlier responses the request carries (not recorded;
    /// `docs/tokens-and-cache.md`, "Unrecorded thinking"), included in `calibrated`.
    pub thinking: u64,
    #[serde(skip)]
    pub settings: CtxSettings,
}

impl RequestTokens {
    /// Calibrates `breakdown` for `next_turn` with `cal`.
    #[allow(clippy::too_many_arguments)]
    pub fn new(
        view: String,
        encoding: &'static str,
        model: Option<String>,
        blocks: &[Block],
        est: &dyn Estimator,
        cal: &Calibrator,
        next_turn: usize,
        settings: CtxSettings,
    ) -> RequestTokens {
        let breakdown = breakdown(blocks, est);
        let (multiplier, offset) = cal.terms(next_turn, breakdown.total);
        let calibrated = cal.calibrate(next_turn, breakdown.total);
        let unrecorded_prefix = cal.is_affine().then_some(offset);
        let extrapolated = cal.extrapolated(next_turn, breakdown.total);
        RequestTokens {
            unrecorded_prefix,
            view,
            encoding,
            model,
            blocks: blocks.len(),
            breakdown,
            next_turn,
            multiplier,
            calibrated_from_usage: !cal.is_empty(),
            extrapolated,
            calibrated,
            thinking: 0,
            settings,
        }
    }

    /// This request with `thinking` carried tokens added to its calibrated figure (once a fit
    /// exists: a raw count stays raw).
    pub fn carrying(self, thinking: u64) -> RequestTokens {
        match self.calibrated_from_usage {
            true => RequestTokens { thinking, calibrated: self.calibrated + thinking, ..self },
            false => self,
        }
    }

    /// `context_budget` when recorded and non-zero.
    pub fn budget(&self) -> Option<u64> {
        self.settings.context_budget.filter(|&b| b > 0)
    }

    /// `context_target` when recorded and non-zero.
    pub fn target(&self) -> Option<u64> {
        self.settings.context_target.filter(|&t| t > 0)
    }

    /// `ctx_window − context_reserve`, when the window is recorded and non-zero.
    pub fn headroom(&self) -> Option<u64> {
        let s = &self.settings;
        s.ctx_window.filter(|&w| w > 0).map(|w| w.saturating_sub(s.context_reserve.unwrap_or(0)))
    }

    /// A setting minus the calibrated estimate.
    pub fn distance(&self, setting: Option<u64>) -> Option<i64> {
        setting.map(|v| v as i64 - self.calibrated as i64)
    }
}

/// One turn of `tokens --per-turn`: the raw estimate, the calibrated one and the provider's figure.
#[derive(Debug, Clone, Copy, PartialEq, Serialize, schemars::JsonSchema)]
pub struct TurnEstimate {
    pub turn: usize,
    pub raw: u64,
    pub multiplier: f64,
    /// The inferred unrecorded prefix (system prompt + tool schemas) in force, in provider
    /// tokens; 0 for journals that record them.
    pub prefix: u64,
    pub calibrated: u64,
    pub prompt_tokens: Option<u64>,
    /// The calibrated figure rests on a fit of before a rewrite (a compaction, or a change in what
    /// the provider counts beyond the journal, seen in this turn's usage): an extrapolation,
    /// not re-anchored yet ([`Calibrator::extrapolated`]).
    pub extrapolated: bool,
    /// Some earlier turn recorded `prompt_tokens`, so `calibrated` rests on a fit; `false`: no
    /// usage was seen before this turn, `calibrated` is the raw count and has no calibrated error
    /// (on an imported session it lacks the unrecorded system prompt and tools).
    pub fitted: bool,
    /// The call ran hosted tools (`usage.server_tool_calls`): the provider sampled it in several
    /// steps and `prompt_tokens` sums their inputs, so it measures no request and the turn has no
    /// calibrated error (`docs/tokens-and-cache.md`, "Server-side sampling").
    pub server_sampled: bool,
    /// Modelled thinking tokens of earlier responses that this request carried (the journal does
    /// not record them; `docs/tokens-and-cache.md`, "Unrecorded thinking"), included in
    /// `calibrated`; absent when 0.
    #[serde(skip_serializing_if = "is_zero")]
    pub thinking: u64,
}

fn is_zero(n: &u64) -> bool {
    *n == 0
}

impl TurnEstimate {
    /// Calibrates turn `turn`'s raw estimate with `cal`.
    pub fn new(turn: usize, raw: u64, prompt_tokens: Option<u64>, cal: &Calibrator) -> TurnEstimate {
        let (multiplier, prefix) = cal.terms(turn, raw);
        let (calibrated, extrapolated) = (cal.calibrate(turn, raw), cal.extrapolated(turn, raw));
        let fitted = cal.fitted(turn);
        TurnEstimate {
            turn,
            raw,
            multiplier,
            prefix,
            calibrated,
            prompt_tokens,
            extrapolated,
            fitted,
            server_sampled: false,
            thinking: 0,
        }
    }

    /// This row with `thinking` carried tokens added to its calibrated estimate
    /// ([`TurnEstimate::thinking`]); a turn with no fit yet keeps its raw count.
    pub fn carrying(self, thinking: u64) -> TurnEstimate {
        match self.fitted {
            true => TurnEstimate { thinking, calibrated: self.calibrated + thinking, ..self },
            false => self,
        }
    }

    /// This row with [`TurnEstimate::server_sampled`] set to `sampled`.
    pub fn sampled(self, sampled: bool) -> TurnEstimate {
        TurnEstimate { server_sampled: sampled, ..self }
    }

    /// The calibrated error's median, p90 and worst over the turns after the first one that
    /// records `prompt_tokens` (before it nothing is known to calibrate with).
    pub fn stats(rows: &[TurnEstimate]) -> Option<super::calibrate::ErrorStats> {
        let first = rows.iter().position(|r| r.prompt_tokens.is_some())?;
        super::calibrate::ErrorStats::of(rows[first + 1..].iter().filter_map(TurnEstimate::calibrated_error_pct))
    }

    /// Signed error of the raw estimate against `prompt_tokens`, in percent.
    pub fn raw_error_pct(&self) -> Option<f64> {
        self.prompt_tokens.and_then(|p| super::calibrate::error_pct(self.raw, p))
    }

    /// Signed error of the calibrated estimate against `prompt_tokens`, in percent; `None` before
    /// any fit ([`TurnEstimate::fitted`]): an uncalibrated count has no calibrated error; `None`
    /// for a call sampled server-side ([`TurnEstimate::server_sampled`]), whose `prompt_tokens`
    /// is not the size of a request.
    pub fn calibrated_error_pct(&self) -> Option<f64> {
        self.prompt_tokens
            .filter(|_| self.fitted && !self.server_sampled)
            .and_then(|p| super::calibrate::error_pct(self.calibrated, p))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::tokens::{request_tokens, CharEstimator};

    /// Turn 1 of an imported session carried a "calibrated" error of about −99 % (its estimate
    /// is the raw count, without the unrecorded system prompt), reported like a measured one, so
    /// any p90 or worst over the rows failed on every file.
    #[test]
    fn regression_the_first_turn_has_no_calibrated_error() {
        let mut cal = Calibrator::affine();
        let first = TurnEstimate::new(1, 100, Some(20_000), &cal);
        assert!(!first.fitted && first.calibrated_error_pct().is_none());
        assert!(first.raw_error_pct().is_some(), "the raw error is still shown");
        cal.observe(1, Some(20_000), 100);
        let second = TurnEstimate::new(2, 150, Some(20_050), &cal);
        assert!(second.fitted && second.calibrated_error_pct().is_some());
    }

    #[test]
    fn the_parts_sum_to_the_request() {
        let blocks = vec![
            Block::System { text: "system".into(), tools: Some(std::sync::Arc::new(serde_json::json!([{"n": 1}]))) },
            Block::User { id: "u".into(), text: "hello there".into() },
            Block::Result { call: "c".into(), tool: "read".into(), text: "x".repeat(40).into() },
        ];
        let b = breakdown(&blocks, &CharEstimator);
        assert_eq!(b.total, request_tokens(&CharEstimator, &blocks));
        assert_eq!(b.results_by_tool["read"], (14, 1));
    }
}
