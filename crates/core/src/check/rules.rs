//! Every rule `validate` and `audit` check: its id, severity, one-line description and source.
//! This table is the one list of rules; `docs/rules.md` mirrors it (a unit test keeps the two in
//! step).

use super::Severity::{self, Error, Info, Warning};

/// Which command reports a rule.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Check {
    Validate,
    Audit,
}

/// One rule.
#[derive(Debug, Clone, Copy)]
pub struct Rule {
    pub id: &'static str,
    pub severity: Severity,
    pub check: Check,
    /// What the rule checks, in one line.
    pub summary: &'static str,
    /// Where the rule comes from: a spec section or a seed.
    pub source: &'static str,
}

const fn r(id: &'static str, severity: Severity, check: Check, summary: &'static str, source: &'static str) -> Rule {
    Rule { id, severity, check, summary, source }
}

use Check::{Audit, Validate};

/// Every rule, validate's first, in the order `docs/rules.md` lists them.
pub const RULES: &[Rule] = &[
    // integrity
    r("session-first", Error, Validate, "the first record is a `session` record", "journal-v1 §2 `session`"),
    r("session-twice", Error, Validate, "no second `session` record", "journal-v1 §2 `session` (exactly once)"),
    r("rev-sequence", Error, Validate, "every record has a `rev`; revs run 1, 2, 3, … without gaps", "journal-v1 §2 common fields"),
    r("ts-format", Error, Validate, "`ts` is an RFC 3339 timestamp with an offset", "journal-v1 §2 common fields"),
    r("ts-order", Error, Validate, "`ts` never decreases", "journal-v1 §2 common fields"),
    r("duplicate-id", Error, Validate, "block ids (user, assistant, attachment, notice ids and call ids) are unique", "journal-v1 §2 (ids unique within a journal)"),
    r("result-orphan", Error, Validate, "every result answers a call made earlier", "journal-v1 §2 `result`"),
    r("result-tool", Error, Validate, "a result's `tool` is the tool of its call", "journal-v1 §2 `result`"),
    r("result-twice", Error, Validate, "a call is answered at most once", "journal-v1 §2 `result`; issue 5"),
    r("call-unanswered", Info, Validate, "a call has no result at the end of the journal", "issue 5"),
    r("elide-ref", Error, Validate, "`elide.calls` names results or attachments that exist", "journal-v1 §2 `elide`"),
    r("clear-ref", Error, Validate, "`clear.cleared` names results that exist", "journal-v1 §2 `clear`"),
    r("mirror-ref", Error, Validate, "`mirror.service_calls` names calls that exist", "journal-v1 §2 `mirror`"),
    r("compact-ref", Error, Validate, "`compact.first_kept` is an existing rev at or before the compact record; `kept` ids exist", "journal-v1 §2 `compact`"),
    r("path-escape", Error, Validate, "spill and attachment paths are relative and stay inside the session directory", "journal-v1 §1 (file references)"),
    r("path-missing", Error, Validate, "spill and attachment files exist", "journal-v1 §1, §2 `result`/`user`"),
    r("spill-note", Warning, Validate, "a result with `spill` ends its text with `[full output: <spill>]` (or `[полный вывод: <spill>]`)", "journal-v1 §2 `result`; seed 000"),
    r("outcome-shape", Error, Validate, "an `outcome` names its check (non-empty `check`) and follows the turn it judges", "journal-v1 §2 `outcome`"),
    r("unknown-kind", Warning, Validate, "a record of a kind this version does not know (kept, ignored by the projection)", "journal-v1 §2 (forward compatibility)"),
    r("torn-line", Warning, Validate, "the last line was torn (no newline, does not parse) and was ignored", "journal-v1 §1 (lines)"),
    // mirror
    r("mirror-rev-order", Error, Validate, "`mirror_rev` strictly increases over all mirror records", "journal-v1 §2 `mirror`"),
    r("mirror-status", Error, Validate, "`status` is `accepted` or `rejected`", "journal-v1 §2 `mirror`"),
    r("mirror-draft", Error, Validate, "an accepted draft parses as `{\"blocks\": [...]}` in the form of §4", "journal-v1 §2 `mirror`, §4"),
    r("R1", Error, Validate, "accepted draft: every user block present, in order, with identical text", "journal-v1 §2 `restore()` R1; seed 000"),
    r("R2", Error, Validate, "accepted draft: every assistant block present, in order, with identical text", "journal-v1 §2 `restore()` R2; seed 000"),
    r("R3", Error, Validate, "accepted draft: a call and its result removed or kept together", "journal-v1 §2 `restore()` R3; seed 000"),
    r("R4", Error, Validate, "accepted draft: only result texts and call args change, and only to fewer bytes; ids and tools never", "journal-v1 §2 `restore()` R4"),
    r("R5", Error, Validate, "accepted draft: nothing added, moved or re-typed; notices and attachments unchanged; no system or summary block", "journal-v1 §2 `restore()` R5"),
    r("R6", Error, Validate, "accepted draft: `base_rev` at or after the last accepted mirror record, and before this one", "journal-v1 §2 `restore()` R6"),
    r("mirror-rejected-valid", Warning, Validate, "a rejected draft that passes R1–R6 (the harness refused a valid edit)", "issue 5"),
    r("mirror-rejected-ok", Info, Validate, "a rejected draft that breaks R1–R6 or does not parse: correctly rejected", "issue 5"),
    r("mirror-rewritten", Warning, Validate, "a result's new text is neither empty, a prefix of the old, nor a marker: rewritten, not removed", "journal-v1 §2 `mirror`"),
    r("mirror-service-call", Error, Validate, "service calls are reads/edits/writes of `LIVE_CONTEXT.json` or `ctx` calls (a shell edit is not)", "journal-v1 §2 `mirror`; seed 000"),
    r("mirror-uncommitted", Error, Validate, "a mirror record follows a `ctx` commit call since the previous one; an uncommitted draft is not applied (editing the file applies nothing)", "journal-v1 §2 `mirror` (flow); seed 000"),
    // clear
    r("clear-selection", Error, Validate, "`cleared` equals the selection recomputed from `request`", "journal-v1 §2 `clear` (selection rule)"),
    r("clear-call", Error, Validate, "a clear follows the model's `ctx` clear call, before its result, and its `request` is that call's arguments", "journal-v1 §2 `clear`; issue 30"),
    r("clear-message", Error, Validate, "an empty selection carries the message \"nothing to clear\" (or «нечего вырезать»)", "journal-v1 §2 `clear`; seed 000"),
    // fidelity
    r("prompt-sha256", Error, Validate, "`prompt_sha256` is the SHA-256 of the reconstructed canonical request", "journal-v1 §2 `assistant`, §4"),
    // audit: trigger
    r("elide-trigger", Error, Audit, "auto-elision only when the estimate exceeded `context_budget`", "journal-v1 §6; seed 000 «Автоэлизия»"),
    r("estimate-drift", Warning, Audit, "a recorded estimate within 10% of ctxj's calibrated recomputation", "strategies.md §3; issue 5"),
    r("compact-trigger", Warning, Audit, "auto compaction only past its threshold (the budget, or 50% of the window; per profile below)", "seeds 002, 003; issue 5"),
    // audit: restraint
    r("elide-keep", Error, Audit, "auto-elision never touches the `keep_results` most recent results", "journal-v1 §6; seed 000"),
    r("elide-order", Warning, Audit, "auto-elision goes oldest first", "journal-v1 §6; seed 000"),
    r("elide-stop", Warning, Audit, "auto-elision stops as soon as the estimate is at or below `context_target`", "journal-v1 §6; seed 000"),
    r("decision-twice", Error, Audit, "no block elided or cleared twice (a decision persists across resume)", "journal-v1 §2 `elide`; seed 000"),
    r("text-touched", Error, Audit, "elide and clear touch results (elide also attachments) only, never user, assistant or notice text", "journal-v1 §2; seed 000 «Границы»"),
    // audit: outcome
    r("elide-outcome", Warning, Audit, "after elision the estimate is ≤ target, else a `manage_context` notice and a mirror commit (or clear) follow", "journal-v1 §6; seed 000"),
    r("mirror-uninvited", Warning, Audit, "a mirror commit follows a `manage_context` notice", "journal-v1 §2 `notice`; seed 000"),
    r("mirror-repeat", Warning, Audit, "no commit repeated only to get a confirmation the harness already sent", "seed 000"),
    r("compact-boundary", Error, Audit, "compaction cuts at a turn boundary (the first kept block is a user, assistant or notice block)", "strategies.md §2 (cut)"),
    r("compact-split", Error, Audit, "compaction never separates a call from its result", "strategies.md §2 (cut)"),
    r("compact-tail", Warning, Audit, "compaction keeps at least 3 blocks", "strategies.md §2; seed 003"),
    r("thrash", Warning, Audit, "no compaction while paused after an ineffective pass (request still above 80% of its size before, not yet grown 10%); under `veles`, none on the turn right after a failed summary", "strategies.md §2 (pause rule); seeds 002, 003"),
    r("switch-no-compact", Warning, Audit, "a switch to a smaller window while above 90% of it is followed by a compaction", "seed 003"),
    r("window-overflow", Error, Audit, "a request within `ctx_window − context_reserve` provider tokens", "journal-v1 §6"),
    r("decided-note", Warning, Audit, "a clear or mirror commit is preceded by assistant text with `DECIDED:` or `РЕШЕНО:` since the previous one", "seed 000 «Границы»"),
    r("elide-grew", Warning, Audit, "an elision makes the request larger only when the rule forces it (it collapsed every block left)", "journal-v1 §6; issue 17"),
    r("compact-secret", Error, Audit, "a recorded compaction summary holds no secret (the replay template's redaction pattern)", "seed 002 ([REDACTED]); strategies.md §2"),
    r("compact-too-few", Warning, Audit, "a compaction summarizes at least 5 blocks (fewer: nothing should happen)", "seed 003; strategies.md §2"),
    r("compact-fallback-chain", Error, Audit, "a fallback summary (`fallback`) is appended to the earlier summary (`mode: chain`) (veles)", "seed 002 (запасное резюме)"),
    r("compact-chained", Error, Audit, "a compaction replaces the earlier brief (`mode: rotate`), never chains it (command-code)", "seed 003 (старые сводки никогда не питают новые)"),
    r("compact-cut-boundary", Error, Audit, "a harness that cuts only at user messages (veles) keeps from a user block", "seed 002"),
    r("trim-trigger", Warning, Audit, "a tool-call trim (an auto `elide` under command-code) runs only in fast `/compact-mode`, past tier 1 (50% of the window) and with more tool calls open than its tier keeps (20; 10 past 80%)", "seed 003 (уровни 1–2, /compact-mode)"),
    r("trim-keep", Error, Audit, "a tool-call trim keeps the last 20 tool calls (10 past 80% of the window) and drops the oldest first", "seed 003 (уровни 1–2)"),
    r("trim-unjudged", Info, Audit, "command-code trims, and the requests where fast mode would trim, are not judged when the journal does not record `/compact-mode`", "seed 003 (/compact-mode); issue 30"),
    // audit: omissions (what did not happen at a request)
    r("elide-missing", Error, Audit, "a request above `context_budget` with elision candidates is preceded by an elision", "journal-v1 §6; seed 000; issue 17"),
    r("elide-stopped-early", Warning, Audit, "an elision that ends above `context_target` leaves no candidate uncollapsed", "journal-v1 §6; seed 000; issue 17"),
    r("invite-missing", Warning, Audit, "a request still above `context_target` after elision (or with nothing left to elide) has a `manage_context` invitation", "journal-v1 §2 `notice`, §6; seed 000"),
    r("invite-needless", Warning, Audit, "a `manage_context` notice is sent only while the estimate is above `context_target`", "journal-v1 §2 `notice`; seed 000"),
    r("budget-over-window", Error, Audit, "`context_budget` fits in `ctx_window − context_reserve` (profiles with a budget: ctxj with a declared `ctx`)", "journal-v1 §6; issue 17"),
    r("compact-missing", Warning, Audit, "a request past the profile's auto-compaction point (claude-code: window − 33k, 45k before 2.0; command-code: 90%, and in fast mode a trim to 20/10 tool calls past 50/80%; veles: 50%; the imported agents: their own rule) is preceded by a compaction, unless paused or stopped", "seeds 002, 003; Claude Code 2.x; issue 30"),
];

/// The rule with this id. Panics on an unknown id: rule ids are compile-time constants and a
/// test checks each one used exists.
pub fn rule(id: &str) -> &'static Rule {
    RULES.iter().find(|r| r.id == id).unwrap_or_else(|| panic!("unknown rule id {id:?}"))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn ids_are_unique() {
        let mut ids: Vec<&str> = RULES.iter().map(|r| r.id).collect();
        ids.sort_unstable();
        let n = ids.len();
        ids.dedup();
        assert_eq!(ids.len(), n);
    }

    #[test]
    fn docs_list_every_rule_with_its_severity() {
        let doc = std::fs::read_to_string(concat!(env!("CARGO_MANIFEST_DIR"), "/../../docs/rules.md")).unwrap();
        for r in RULES {
            let row = format!("| `{}` | {} |", r.id, r.severity);
            assert!(doc.contains(&row), "docs/rules.md lacks the row start {row:?}");
        }
    }

    #[test]
    fn every_rule_used_in_the_code_is_in_the_table() {
        let re = regex::Regex::new(r#"(?:find|Finding::new)\(\s*"([A-Za-z0-9-]+)""#).unwrap();
        let mut used = 0;
        for file in [
            "validate.rs",
            "audit/mod.rs",
            "audit/auditor.rs",
            "audit/judge.rs",
            "audit/count.rs",
            "audit/omit.rs",
            "audit/trim.rs",
            "clear_call.rs",
        ] {
            let src = std::fs::read_to_string(format!("{}/src/check/{file}", env!("CARGO_MANIFEST_DIR"))).unwrap();
            for c in re.captures_iter(&src) {
                rule(&c[1]);
                used += 1;
            }
        }
        assert!(used > 40, "only {used} rule uses found: the pattern no longer matches the code");
    }
}
