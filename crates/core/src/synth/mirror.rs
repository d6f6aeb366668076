//! Mirror commits of the synthetic harness, and the mirror-heavy session of `synth --mirrors`.
//!
//! A draft is the whole conversation at its `base_rev` (journal-v1 §2 `mirror`), and the harness
//! keeps that conversation within its budget (auto-elision, compaction), so a real draft is about
//! the size of the context, not of the history: a journal with M mirror records holds about M
//! budget-sized drafts. `--size-mb` scales the tool outputs down to make a small journal; if the
//! budget stayed at 100k tokens, the conversation would take most of the session to grow to it,
//! the drafts would grow with the session, and twice the turns and mirrors would give about 3.5×
//! the bytes (issue 20). So with `--mirrors` the context settings scale with the outputs (within
//! 5–100 % of the constants): the conversation reaches its steady size within the first few
//! hundred turns, every later draft is about that size, and the commits are spread evenly over
//! the session — twice the turns and mirrors make twice the journal. The rare 5 MB outputs are
//! left out of such a session: one sits in every draft written while it is among the last
//! `keep_results` results, and a few of them made the size of a 1,000-turn journal vary by a
//! factor of two between seeds.

use std::io::{self, Write};
use std::sync::Arc;

use serde_json::{json, Value};

use crate::projection::block::{canonical_of, Block, BlockCall};
use crate::projection::markers;

use super::{cut, Conv, Gen, Limits, KEEP_RESULTS, MIRROR_FILE};

/// Turns before the first commit.
const WARM_UP: usize = 40;

/// The context settings of a `--mirrors` session at output scale `scale`.
pub(super) fn limits(scale: f64) -> Limits {
    Limits::scaled(scale.clamp(0.05, 1.0))
}

impl<W: Write> Gen<'_, W> {
    /// Whether this step (whose random draw is `r`) commits a mirror: at the natural rate,
    /// r in [0.004, 0.0065) after the first 40 turns (below 0.004 the step cleared); with
    /// `--mirrors M`, whenever fewer than M·(turns − 40)/(T − 40) commits were made.
    pub(super) fn mirror_due(&self, r: f64) -> bool {
        let turns = self.stats.turns;
        match self.mirror_plan {
            None => r < 0.0065 && turns > WARM_UP,
            Some(m) => {
                let done = self.stats.mirrors_accepted + self.stats.mirrors_rejected;
                let span = self.target_turns.saturating_sub(WARM_UP).max(1) as u64;
                done < turns.saturating_sub(WARM_UP) as u64 * m as u64 / span
            }
        }
    }

    /// A mirror commit: read, edit, `ctx commit` (three turns of service calls), the `mirror`
    /// record and the confirmation notice.
    pub(super) fn mirror(&mut self, accept: bool) -> io::Result<()> {
        let base_rev = self.rev;
        let mut draft: Vec<Block> = self.conv.iter().map(|c| c.block.clone()).collect();
        let results: Vec<usize> = (0..draft.len()).filter(|&i| matches!(draft[i], Block::Result { .. })).collect();
        let editable = results.len().saturating_sub(KEEP_RESULTS);
        let mut edited = 0;
        for &i in results[..editable].iter().rev() {
            let t = draft[i].text();
            if t.len() > 400 && !markers::is_marker(t) && edited < 6 {
                let short = Arc::from(cut(t, 200));
                draft[i].set_text(short);
                edited += 1;
            }
        }
        // A rejected draft really breaks a rule: a user text changed (R1), else an assistant
        // text (R2); a conversation with neither (just compacted) gets an accepted commit.
        let broken = if accept {
            None
        } else {
            draft.iter().position(|b| matches!(b, Block::User { .. })).map(|i| (i, "R1", "user")).or_else(|| {
                draft
                    .iter()
                    .position(|b| matches!(b, Block::Assistant { text, .. } if !text.is_empty()))
                    .map(|i| (i, "R2", "assistant"))
            })
        };
        let accept = broken.is_none();
        let reason = broken.map(|(i, rule, what)| {
            let b = &mut draft[i];
            let id = b.id().unwrap_or_default().to_string();
            b.set_text(Arc::from(format!("{} (condensed)", b.text())));
            format!("{rule}: {what} block {id} changed")
        });
        let mirror_json = String::from_utf8(canonical_of(&draft)).expect("canonical JSON is UTF-8");
        let mut service = Vec::new();
        let steps: [(&str, Value); 3] = [
            ("read", json!({"path": MIRROR_FILE})),
            ("edit", json!({"path": MIRROR_FILE, "old": "…", "new": ""})),
            ("ctx", json!({"action": "commit"})),
        ];
        self.mirror_rev += 1;
        for (tool, args) in steps {
            let id = self.next_id("call_");
            let call = BlockCall { id: id.clone(), tool: tool.into(), args: Arc::new(args) };
            self.assistant(String::new(), vec![call])?;
            let out = match tool {
                "read" => format!("{}\n… ({} bytes)", cut(&mirror_json, 2_000), mirror_json.len()),
                "edit" => format!("Edited {MIRROR_FILE}: {edited} replacements"),
                _ if accept => format!("mirror r{} accepted: {} blocks", self.mirror_rev, draft.len()),
                _ => format!("mirror r{} rejected: {}", self.mirror_rev, reason.clone().unwrap_or_default()),
            };
            let n = out.len() as u64;
            self.result(&id, tool, out, n, !accept && tool == "ctx", None)?;
            service.push(id);
        }
        self.tick(5, 200);
        let draft_raw =
            serde_json::value::RawValue::from_string(format!("{{\"blocks\":{mirror_json}}}")).expect("valid JSON");
        let status = if accept { "accepted" } else { "rejected" };
        let mut body = json!({"mirror_rev": self.mirror_rev, "base_rev": base_rev, "status": status});
        if let Some(r) = &reason {
            body["reason"] = json!(r);
        }
        body["draft"] = serde_json::to_value(&draft_raw).expect("raw value");
        body["service_calls"] = json!(service);
        self.write("mirror", &body)?;
        if accept {
            // Draft blocks keep their source revs; the service calls leave with their results.
            let revs: Vec<u64> = self.conv.iter().map(|c| c.src_rev).collect();
            self.conv = draft.into_iter().zip(revs).map(|(b, r)| Conv::new(b, r)).collect();
            self.recount();
            self.stats.mirrors_accepted += 1;
            self.notice("mirror_applied", format!("Mirror r{} applied: {edited} results shortened.", self.mirror_rev))
        } else {
            self.stats.mirrors_rejected += 1;
            self.notice(
                "mirror_rejected",
                format!("Mirror r{} rejected: {}", self.mirror_rev, reason.unwrap_or_default()),
            )
        }
    }
}

#[cfg(test)]
mod tests {
    use std::io::{BufWriter, Write};
    use std::path::Path;

    use super::super::{generate, Counting, Gen, SynthOptions, SynthStats};
    use crate::journal::{parse_bytes, ReadOptions};

    fn opts(turns: usize, mirrors: usize) -> SynthOptions {
        SynthOptions { turns, seed: 5, size_mb: None, mirrors: Some(mirrors) }
    }

    /// The journal's size and the statistics of a generation at `scale`, written to nowhere.
    fn run(o: &SynthOptions, scale: f64) -> (u64, SynthStats) {
        let mut g = Gen::new(o, None, BufWriter::new(Counting { inner: std::io::sink(), n: 0 }), scale);
        g.run(&mut |_| {}).unwrap();
        g.out.flush().unwrap();
        (g.out.get_ref().n, g.stats)
    }

    #[test]
    fn twice_the_turns_and_mirrors_make_twice_the_journal() {
        // Regression (issue 20): every draft is the whole conversation, which took most of a
        // scaled-down session to grow to the fixed budget, so twice the turns and mirrors made
        // 3.5× the bytes (and the rate formula made 627 commits for `--mirrors 400`).
        for scale in [0.05, 0.2] {
            let ((a, sa), (b, sb)) = (run(&opts(1000, 200), scale), run(&opts(2000, 400), scale));
            let ratio = b as f64 / a as f64;
            assert!((1.8..2.2).contains(&ratio), "scale {scale}: {a} → {b} bytes, ratio {ratio:.3}");
            let made = |s: &SynthStats| s.mirrors_accepted + s.mirrors_rejected;
            assert!((190..=200).contains(&made(&sa)), "{sa:?}");
            assert!((390..=400).contains(&made(&sb)), "{sb:?}");
            assert!(sa.mirrors_rejected > 0 && sa.compactions > 0 && sa.elides > 0 && sa.big_outputs == 0, "{sa:?}");
        }
    }

    #[test]
    fn mirror_heavy_journals_replay_to_their_recorded_hashes() {
        let d = tempfile::tempdir().unwrap();
        let out = d.path().join("m");
        let o = SynthOptions { size_mb: Some(1.0), ..opts(300, 60) };
        let s = generate(&o, &out, &mut |_| {}).unwrap();
        assert!(s.mirrors_accepted >= 40, "{s:?}");
        let bytes = std::fs::read(out.join("journal.jsonl")).unwrap();
        let j = parse_bytes(Path::new("j"), &bytes, ReadOptions::default()).unwrap();
        assert_eq!(super::super::tests::hashes_checked(&j), 300);
        let budget = j.session().and_then(|s| s.ctx.as_ref()).and_then(|c| c.context_budget);
        assert!(budget.is_some_and(|b| b < super::super::CONTEXT_BUDGET), "{budget:?}");
    }
}
