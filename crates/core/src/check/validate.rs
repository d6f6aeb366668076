//! `validate`: a journal against the rules of `journal-v1.md` (rule ids in [`super::rules`]).
//!
//! Two passes, both linear in the journal:
//! 1. **integrity** over the records alone: `session` first and once, gapless revs, RFC 3339
//!    non-decreasing `ts`, unique block ids, results answering earlier calls of the same tool at
//!    most once, unanswered calls (info), references of decision records, spill and attachment
//!    paths (confined to the session directory), unknown kinds;
//! 2. **one replay** of the recorded projection ([`Replayer`]): before each record the projection
//!    at `rev − 1` is at hand, so a `clear`'s selection is recomputed there
//!    ([`crate::projection::clear::select`]), an `assistant`'s `prompt_sha256` is compared with the
//!    hash of its request, and the conversation is snapshotted at every rev a later `mirror` names
//!    as `base_rev` (collected up front), where its draft is re-checked against R1–R6
//!    ([`crate::projection::mirror::check_draft`]).

use std::collections::{BTreeSet, HashMap, HashSet};
use std::path::Path;

use chrono::{DateTime, FixedOffset};
use serde_json::Value;

use crate::journal::{Body, Call, Journal, MirrorRec, Record, SessionError};
use crate::projection::clear;
use crate::projection::mirror::{check_base_rev, check_draft, draft_blocks, is_commit, rewritten_results};
use crate::projection::{Block, Replayer, RequestHasher};

use super::Finding;

/// The file name of the mirror a model edits (seed `000_*`).
pub const MIRROR_FILE: &str = "LIVE_CONTEXT.json";

/// The messages a `clear` with an empty selection carries (journal-v1 §2, seed `000_*`).
pub const NOTHING_TO_CLEAR: [&str; 2] = ["nothing to clear", "нечего вырезать"];

/// Validates `journal`. `dir` is the session directory, for the spill and attachment path checks
/// (skipped when `None`, e.g. for a journal built in memory). Findings come sorted by rev.
pub fn validate(journal: &Journal, dir: Option<&Path>) -> Vec<Finding> {
    let mut out = Vec::new();
    for w in &journal.warnings {
        out.push(Finding { line: w.line, ..Finding::new("torn-line", 0, w.line, w.message.clone()) });
    }
    integrity(journal, dir, &mut out);
    replay(journal, true, &mut out);
    out.sort_by_key(|f| f.rev);
    out
}

/// [`validate`] without the session directory and without the request hashes: what `audit`
/// needs to carry validate's verdict on each decision record (issue 17, "one verdict").
pub fn validate_decisions(journal: &Journal) -> Vec<Finding> {
    let mut out = Vec::new();
    integrity(journal, None, &mut out);
    replay(journal, false, &mut out);
    out
}

fn find(id: &'static str, rec: &Record, message: impl Into<String>) -> Finding {
    Finding::new(id, rec.rev, rec.line, message)
}

/// Pass 1: everything that needs no projection.
fn integrity(journal: &Journal, dir: Option<&Path>, out: &mut Vec<Finding>) {
    super::clear_call::check(journal, out);
    match journal.records.first() {
        None => out.push(Finding::new("session-first", 0, 0, "the journal holds no records")),
        Some(r) if !matches!(r.body, Body::Session(_)) => {
            out.push(find("session-first", r, format!("the first record is a `{}` record, not `session`", r.kind())))
        }
        _ => {}
    }
    let mut state = Integrity { dir, ..Integrity::default() };
    for (i, rec) in journal.records.iter().enumerate() {
        state.sequence(i, rec, out);
        state.record(rec, out);
    }
    state.unanswered(journal, out);
}

/// What the integrity rules remember while reading the journal in order.
#[derive(Default)]
struct Integrity<'j> {
    dir: Option<&'j Path>,
    prev_rev: Option<u64>,
    last_ts: Option<(DateTime<FixedOffset>, String)>,
    ids: HashMap<&'j str, u64>,
    /// call id → (tool, rev of its assistant record, answered)
    calls: HashMap<&'j str, (&'j str, u64, bool)>,
    call_order: Vec<&'j str>,
    results: HashSet<&'j str>,
    attachments: HashSet<&'j str>,
    revs: HashSet<u64>,
    seen_session: bool,
    seen_turn: bool,
}

impl<'j> Integrity<'j> {
    /// rev-sequence, ts-format, ts-order.
    fn sequence(&mut self, i: usize, rec: &Record, out: &mut Vec<Finding>) {
        // rev
        if !rec.rev_recorded {
            out.push(find("rev-sequence", rec, format!("record has no `rev` (it is record {} of the file)", i + 1)));
        } else {
            // Checked: a rev of u64::MAX has no successor (it once wrapped to 0 and reported
            // "revs 0..18446744073709551613 are missing").
            let expected = self.prev_rev.map_or(Some(1), |p| p.checked_add(1));
            if let (Some(p), None) = (self.prev_rev, expected) {
                let msg = format!("rev {} follows rev {p}, the largest rev there is: no record can follow it", rec.rev);
                out.push(find("rev-sequence", rec, msg));
            } else if let Some(expected) = expected.filter(|e| rec.rev != *e) {
                let msg = match self.prev_rev {
                    None => format!("the first rev is {}, not 1", rec.rev),
                    Some(p) if rec.rev > expected => {
                        format!("rev {} follows rev {p}: revs {expected}..{} are missing", rec.rev, rec.rev - 1)
                    }
                    Some(p) => format!("rev {} follows rev {p}: revs must increase by 1", rec.rev),
                };
                out.push(find("rev-sequence", rec, msg));
            }
            self.prev_rev = Some(rec.rev);
        }
        self.revs.insert(rec.rev);
        // ts
        if rec.ts.is_empty() {
            out.push(find("ts-format", rec, "record has no `ts`"));
        } else {
            match DateTime::parse_from_rfc3339(&rec.ts) {
                Err(e) => {
                    out.push(find("ts-format", rec, format!("`ts` {:?} is not RFC 3339 with an offset: {e}", &*rec.ts)))
                }
                Ok(t) => {
                    if let Some((p, ps)) = &self.last_ts {
                        if t < *p {
                            out.push(find(
                                "ts-order",
                                rec,
                                format!("`ts` {} is earlier than the previous record's {ps}", &*rec.ts),
                            ));
                        }
                    }
                    if self.last_ts.as_ref().is_none_or(|(p, _)| t >= *p) {
                        self.last_ts = Some((t, rec.ts.to_string()));
                    }
                }
            }
        }
    }

    /// The record's ids, calls, results and references.
    fn record(&mut self, rec: &'j Record, out: &mut Vec<Finding>) {
        match &rec.body {
            Body::Session(_) if self.seen_session => out.push(find("session-twice", rec, "a second `session` record")),
            Body::Notice(n) => note_id(&mut self.ids, &n.id, "notice", rec, out),
            Body::User(u) => {
                note_id(&mut self.ids, &u.id, "user", rec, out);
                for a in &u.attachments {
                    note_id(&mut self.ids, &a.id, "attachment", rec, out);
                    self.attachments.insert(&a.id);
                    check_path(self.dir, rec, &a.path, "attachment", &a.id, out);
                }
            }
            Body::Assistant(a) => {
                note_id(&mut self.ids, &a.id, "assistant", rec, out);
                for c in &a.calls {
                    note_id(&mut self.ids, &c.id, "call", rec, out);
                    if !self.calls.contains_key(c.id.as_str()) {
                        self.calls.insert(&c.id, (&c.tool, rec.rev, false));
                        self.call_order.push(&c.id);
                    }
                }
            }
            Body::Result(r) => self.result(rec, r, out),
            Body::Outcome(o) => outcome(o, self.seen_turn, rec, out),
            Body::Elide(_) | Body::Clear(_) | Body::Mirror(_) | Body::Compact(_) => self.refs(rec, out),
            Body::Unknown { kind } => {
                out.push(find("unknown-kind", rec, format!("unknown kind {kind:?}: kept, ignored by the projection")))
            }
            _ => {}
        }
        self.seen_session |= matches!(rec.body, Body::Session(_));
        self.seen_turn |= matches!(rec.body, Body::Assistant(_));
    }

    /// result-orphan, result-twice, result-tool, spill-note.
    fn result(&mut self, rec: &Record, r: &'j crate::journal::ResultRec, out: &mut Vec<Finding>) {
        match self.calls.get_mut(r.call.as_str()) {
            None => out.push(
                find("result-orphan", rec, format!("result for {:?}, which no earlier call made", r.call))
                    .with_block(&r.call),
            ),
            Some((tool, _, answered)) => {
                if *answered {
                    out.push(
                        find("result-twice", rec, format!("call {} is answered a second time", r.call))
                            .with_block(&r.call),
                    );
                }
                *answered = true;
                if *tool != r.tool {
                    out.push(
                        find(
                            "result-tool",
                            rec,
                            format!("result of call {} says tool {:?}, the call was {:?}", r.call, r.tool, tool),
                        )
                        .with_block(&r.call),
                    );
                }
                self.results.insert(&r.call);
            }
        }
        if let Some(spill) = &r.spill {
            check_path(self.dir, rec, spill, "spill", &r.call, out);
            let t = r.text.trim_end();
            if !t.ends_with(&format!("[full output: {spill}]")) && !t.ends_with(&format!("[полный вывод: {spill}]"))
            {
                out.push(
                    find(
                        "spill-note",
                        rec,
                        format!(
                            "result of {} has spill {spill:?} but its text does not end with `[full output: {spill}]`",
                            r.call
                        ),
                    )
                    .with_block(&r.call),
                );
            }
        }
    }

    /// elide-ref, clear-ref, mirror-ref, compact-ref: a decision names only what came before.
    fn refs(&self, rec: &Record, out: &mut Vec<Finding>) {
        match &rec.body {
            Body::Elide(e) => {
                for c in &e.calls {
                    if !self.results.contains(c.as_str()) && !self.attachments.contains(c.as_str()) {
                        out.push(
                            find(
                                "elide-ref",
                                rec,
                                format!("elide names {c:?}, which is no earlier result or attachment"),
                            )
                            .with_block(c),
                        );
                    }
                }
            }
            Body::Clear(c) => {
                for id in &c.cleared {
                    if !self.results.contains(id.as_str()) {
                        out.push(
                            find("clear-ref", rec, format!("clear names {id:?}, which is no earlier result"))
                                .with_block(id),
                        );
                    }
                }
            }
            Body::Mirror(m) => {
                for s in &m.service_calls {
                    if !self.calls.contains_key(s.as_str()) {
                        out.push(
                            find("mirror-ref", rec, format!("service call {s:?} is no earlier call")).with_block(s),
                        );
                    }
                }
            }
            Body::Compact(c) => {
                if let Some(fk) = c.first_kept {
                    if fk == 0 || fk > rec.rev || !(self.revs.contains(&fk)) {
                        out.push(find(
                            "compact-ref",
                            rec,
                            format!("first_kept {fk} is not a rev at or before this record (rev {})", rec.rev),
                        ));
                    }
                }
                for k in c.kept.iter().flatten() {
                    if !self.ids.contains_key(k.as_str()) {
                        out.push(
                            find("compact-ref", rec, format!("kept names {k:?}, which is no earlier block"))
                                .with_block(k),
                        );
                    }
                }
            }
            _ => {}
        }
    }

    /// call-unanswered.
    fn unanswered(&self, journal: &Journal, out: &mut Vec<Finding>) {
        for &c in &self.call_order {
            let (tool, rev, answered) = self.calls[c];
            if !answered {
                let line = journal.calls.get(c).map_or(0, |at| journal.records[at.record].line);
                out.push(
                    Finding::new("call-unanswered", rev, line, format!("call {c} ({tool}) has no result"))
                        .with_block(c),
                );
            }
        }
    }
}

/// outcome-shape: a named check, after a turn.
fn outcome(o: &crate::journal::OutcomeRec, seen_turn: bool, rec: &Record, out: &mut Vec<Finding>) {
    if o.check.trim().is_empty() {
        out.push(find("outcome-shape", rec, "`outcome.check` is empty: name the command or check that judged the run"));
    }
    if !seen_turn {
        out.push(find("outcome-shape", rec, "an `outcome` before the first turn: it judges the turn before it"));
    }
}

fn note_id<'a>(ids: &mut HashMap<&'a str, u64>, id: &'a str, what: &str, rec: &Record, out: &mut Vec<Finding>) {
    match ids.get(id) {
        Some(first) => out.push(
            find("duplicate-id", rec, format!("{what} id {id:?} was already used at rev {first}")).with_block(id),
        ),
        None => {
            ids.insert(id, rec.rev);
        }
    }
}

fn check_path(dir: Option<&Path>, rec: &Record, rel: &str, what: &str, block: &str, out: &mut Vec<Finding>) {
    let Some(dir) = dir else { return };
    match crate::journal::session::confine(dir, rel) {
        Ok(p) if p.exists() => {}
        Ok(_) => out.push(find("path-missing", rec, format!("{what} file {rel:?} does not exist")).with_block(block)),
        Err(SessionError::Confined { why, .. }) => {
            out.push(find("path-escape", rec, format!("{what} path {rel:?} is refused: {why}")).with_block(block))
        }
        Err(_) => out.push(find("path-missing", rec, format!("{what} file {rel:?} does not exist")).with_block(block)),
    }
}

/// Pass 2: one replay of the recorded projection.
fn replay(journal: &Journal, hash: bool, out: &mut Vec<Finding>) {
    // How many mirror records name each base_rev: a snapshot is dropped after its last use, so
    // thousands of mirrors do not keep thousands of conversations alive (issue 20).
    let mut uses: HashMap<u64, usize> = HashMap::new();
    for r in &journal.records {
        if let Body::Mirror(m) = &r.body {
            *uses.entry(m.base_rev).or_default() += 1;
        }
    }
    let mut pending: BTreeSet<u64> = uses.keys().copied().collect();
    let mut snapshots: HashMap<u64, Vec<Block>> = HashMap::new();
    let mut named: HashSet<String> = HashSet::new();
    let mut last_mirror_rev: Option<u64> = None;
    let mut last_accepted: Option<u64> = None;
    let mut r = Replayer::new(journal);
    let mut hashes = RequestHasher::new();
    // `ctx` commit calls since the last mirror record (the replay applies no mirror without one)
    let mut commits = 0usize;

    for (index, rec) in journal.records.iter().enumerate() {
        // The state now is the projection after every record before this one.
        while let Some(&b) = pending.first() {
            if b >= rec.rev {
                break;
            }
            pending.pop_first();
            if uses.get(&b).is_some_and(|&n| n > 0) {
                snapshots.insert(b, r.projection().conv.iter().map(|p| p.block.clone()).collect());
            }
        }
        // An accepted draft parsed for its check goes on to the replay: parsed once, then dropped.
        let mut parsed = None;
        match &rec.body {
            Body::Assistant(a) => {
                commits += a.calls.iter().filter(|c| is_commit(&c.tool, &c.args)).count();
                if let Some(want) = a.prompt_sha256.as_ref().filter(|_| hash) {
                    let got = hashes.sha256(r.projection());
                    if !want.eq_ignore_ascii_case(&got) {
                        out.push(
                            find(
                                "prompt-sha256",
                                rec,
                                format!("prompt_sha256 {want} differs from the reconstructed request's {got}"),
                            )
                            .with_block(&a.id),
                        );
                    }
                }
            }
            Body::Elide(e) => named.extend(e.calls.iter().cloned()),
            Body::Clear(c) => {
                let sel = clear::select(r.projection(), &c.request, &named);
                let want: BTreeSet<&str> = sel.iter().map(String::as_str).collect();
                // ids that are no earlier result at all are clear-ref's finding, not this one's
                let got: BTreeSet<&str> = c
                    .cleared
                    .iter()
                    .map(String::as_str)
                    .filter(|id| journal.results.get(*id).is_some_and(|&ri| ri < index))
                    .collect();
                if want != got {
                    let missing: Vec<&str> = want.difference(&got).copied().collect();
                    let extra: Vec<&str> = got.difference(&want).copied().collect();
                    let mut msg = format!("cleared [{}], the request selects [{}]", join(&got), join(&want));
                    if !missing.is_empty() {
                        msg.push_str(&format!("; not cleared: {}", missing.join(", ")));
                    }
                    if !extra.is_empty() {
                        msg.push_str(&format!("; not selected: {}", extra.join(", ")));
                    }
                    out.push(find("clear-selection", rec, msg));
                }
                if sel.is_empty() && c.cleared.is_empty() {
                    let ok = c.message.as_deref().is_some_and(|m| {
                        let m = m.to_lowercase();
                        NOTHING_TO_CLEAR.iter().any(|n| m.contains(n))
                    });
                    if !ok {
                        out.push(find(
                            "clear-message",
                            rec,
                            format!(
                                "nothing was selected but the message is {:?}, not \"nothing to clear\"",
                                c.message.as_deref().unwrap_or("")
                            ),
                        ));
                    }
                }
                named.extend(c.cleared.iter().cloned());
            }
            Body::Mirror(m) => {
                if std::mem::take(&mut commits) == 0 {
                    out.push(find(
                        "mirror-uncommitted",
                        rec,
                        format!(
                            "mirror r{} has no `ctx` commit call since the previous mirror record: editing LIVE_CONTEXT.json applies nothing without it{}",
                            m.mirror_rev,
                            if m.accepted() { " (not applied)" } else { "" }
                        ),
                    ));
                }
                parsed =
                    mirror(journal, rec, m, &snapshots, last_mirror_rev, last_accepted, out).filter(|_| m.accepted());
                last_mirror_rev = Some(last_mirror_rev.map_or(m.mirror_rev, |l| l.max(m.mirror_rev)));
                if m.accepted() {
                    last_accepted = Some(rec.rev);
                }
                if let Some(n) = uses.get_mut(&m.base_rev) {
                    *n -= 1;
                    if *n == 0 {
                        snapshots.remove(&m.base_rev);
                    }
                }
            }
            _ => {}
        }
        match parsed {
            Some(draft) => r.step_with_draft(draft),
            None => r.step(),
        };
    }
}

fn join(s: &BTreeSet<&str>) -> String {
    s.iter().copied().collect::<Vec<_>>().join(", ")
}

fn mirror(
    journal: &Journal,
    rec: &Record,
    m: &MirrorRec,
    snapshots: &HashMap<u64, Vec<Block>>,
    last_mirror_rev: Option<u64>,
    last_accepted: Option<u64>,
    out: &mut Vec<Finding>,
) -> Option<Vec<Block>> {
    let label = format!("mirror r{}", m.mirror_rev);
    if let Some(l) = last_mirror_rev {
        if m.mirror_rev <= l {
            out.push(find(
                "mirror-rev-order",
                rec,
                format!("mirror_rev {} does not increase (previous {l})", m.mirror_rev),
            ));
        }
    }
    let accepted = match m.status.as_str() {
        "accepted" => true,
        "rejected" => false,
        other => {
            out.push(find("mirror-status", rec, format!("{label}: status {other:?} is neither accepted nor rejected")));
            false
        }
    };
    for s in &m.service_calls {
        if let Some(call) = journal.call(s) {
            if let Err(why) = service_call_ok(call) {
                out.push(find("mirror-service-call", rec, format!("{label}: service call {s}: {why}")).with_block(s));
            }
        }
    }
    let draft = match draft_blocks(&m.draft) {
        Ok(d) => d,
        Err(e) => {
            if accepted {
                out.push(find("mirror-draft", rec, format!("{label} accepted an unusable draft: {e}")));
            } else {
                out.push(find(
                    "mirror-rejected-ok",
                    rec,
                    format!("{label} correctly rejected: the draft is unusable ({e})"),
                ));
            }
            return None;
        }
    };
    let mut violations: Vec<_> = check_base_rev(m.base_rev, rec.rev, last_accepted).into_iter().collect();
    let base = snapshots.get(&m.base_rev);
    if let Some(base) = base.filter(|_| m.base_rev >= 1 && m.base_rev < rec.rev) {
        violations.extend(check_draft(base, &draft));
    }
    if accepted {
        for v in &violations {
            let mut f = find(v.rule, rec, format!("{label} accepted a draft that breaks {}: {}", v.rule, v.message));
            f.block = v.block.clone();
            out.push(f);
        }
        if let Some(base) = base {
            for c in rewritten_results(base, &draft) {
                out.push(
                    find("mirror-rewritten", rec, format!("{label}: result {c} was rewritten, not removed (new text is neither empty, a prefix of the old, nor a marker)"))
                        .with_block(c),
                );
            }
        }
    } else if m.status == "rejected" {
        match violations.first() {
            None => out.push(find(
                "mirror-rejected-valid",
                rec,
                format!(
                    "{label} was rejected ({}) but its draft passes R1–R6",
                    m.reason.as_deref().unwrap_or("no reason given")
                ),
            )),
            Some(v) => {
                let mut f =
                    find("mirror-rejected-ok", rec, format!("{label} correctly rejected: {} {}", v.rule, v.message));
                f.block = v.block.clone();
                out.push(f);
            }
        }
    }
    Some(draft)
}

/// Tools that run shell commands: an edit of the mirror through them is not a service call.
const SHELL_TOOLS: &[&str] =
    &["run", "bash", "shell", "sh", "exec", "exec_command", "local_shell", "terminal", "execute", "command"];

/// Path-like argument keys of file tools.
const PATH_KEYS: &[&str] = &["path", "file_path", "filePath", "file", "filename", "target_file"];

/// Whether `call` may serve a mirror edit: a `ctx` call, or a non-shell call whose path argument
/// names `LIVE_CONTEXT.json`.
pub fn service_call_ok(call: &Call) -> Result<(), String> {
    if call.tool == "ctx" {
        return Ok(());
    }
    if SHELL_TOOLS.contains(&call.tool.to_ascii_lowercase().as_str()) {
        return Err(format!(
            "a shell call ({}) is not a mirror service call, even when it edits {MIRROR_FILE}",
            call.tool
        ));
    }
    let path = call.args.as_object().and_then(|o| PATH_KEYS.iter().find_map(|k| o.get(*k).and_then(Value::as_str)));
    match path {
        Some(p) if Path::new(p).file_name().is_some_and(|n| n == MIRROR_FILE) => Ok(()),
        Some(p) => Err(format!("{} of {p:?} is not a read, edit or write of {MIRROR_FILE}", call.tool)),
        None => Err(format!("{} call names no file; not a read, edit or write of {MIRROR_FILE}", call.tool)),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn service_calls_are_mirror_file_edits_or_ctx() {
        let call = |tool: &str, args: serde_json::Value| Call { id: "c".into(), tool: tool.into(), args: args.into() };
        assert!(service_call_ok(&call("ctx", serde_json::json!({"action": "commit"}))).is_ok());
        assert!(service_call_ok(&call("ctx", serde_json::json!({}))).is_ok());
        assert!(service_call_ok(&call("read", serde_json::json!({"path": "LIVE_CONTEXT.json"}))).is_ok());
        assert!(service_call_ok(&call("Edit", serde_json::json!({"file_path": "/s/LIVE_CONTEXT.json"}))).is_ok());
        assert!(service_call_ok(&call("write", serde_json::json!({"path": "src/lib.rs"}))).is_err());
        assert!(service_call_ok(&call("edit", serde_json::json!({"path": "LIVE_CONTEXT.json.bak"}))).is_err());
        assert!(service_call_ok(&call("grep", serde_json::json!({"pattern": "x"}))).is_err());
        let shell = service_call_ok(&call("run", serde_json::json!({"command": "sed -i s/a// LIVE_CONTEXT.json"})));
        assert!(shell.unwrap_err().contains("shell"));
        assert!(service_call_ok(&call("Bash", serde_json::json!({"path": "LIVE_CONTEXT.json"}))).is_err());
    }

    #[test]
    fn mirrors_naming_the_same_base_rev_are_each_checked_against_it() {
        // The snapshot of a base_rev is dropped after the last mirror naming it (issue 20), not
        // after the first: the second draft here must still be compared with rev 3.
        let bad = r#""draft":{"blocks":[{"type":"user","id":"u1","text":"changed"}]}"#;
        let j = crate::journal::reader::parse_bytes_for_test(&format!(
            "{}\n{}\n{}\n{}\n{}\n{}\n",
            r#"{"rev":1,"ts":"2026-01-01T00:00:00Z","kind":"session","id":"s","model":"m"}"#,
            r#"{"rev":2,"ts":"2026-01-01T00:00:00Z","kind":"system","text":"s"}"#,
            r#"{"rev":3,"ts":"2026-01-01T00:00:00Z","kind":"user","id":"u1","text":"go"}"#,
            format_args!(
                r#"{{"rev":4,"ts":"2026-01-01T00:00:00Z","kind":"mirror","mirror_rev":1,"base_rev":3,"status":"rejected",{bad}}}"#
            ),
            format_args!(
                r#"{{"rev":5,"ts":"2026-01-01T00:00:00Z","kind":"mirror","mirror_rev":2,"base_rev":3,"status":"rejected",{bad}}}"#
            ),
            format_args!(
                r#"{{"rev":6,"ts":"2026-01-01T00:00:00Z","kind":"mirror","mirror_rev":3,"base_rev":3,"status":"accepted",{bad}}}"#
            ),
        ));
        let got: Vec<(u64, &str)> = validate(&j, None)
            .iter()
            .filter(|f| f.rev >= 4 && f.rule != "mirror-uncommitted")
            .map(|f| (f.rev, f.rule))
            .collect();
        assert_eq!(got, [(4, "mirror-rejected-ok"), (5, "mirror-rejected-ok"), (6, "R1")]);
    }
}
