//! The harness side of the synthetic session: auto-elision past the budget, `manage_context`
//! notices, the model's `ctx clear` actions, mirror commits and compactions at turn boundaries.

use super::*;

impl<W: Write> Gen<'_, W> {
    /// Before a turn: auto-elision above the budget, then a compaction or a `manage_context`
    /// notice when still above the target.
    pub(super) fn housekeeping(&mut self) -> io::Result<()> {
        let before = self.estimate();
        let Limits { budget, target, .. } = self.limits;
        if before <= budget {
            return Ok(());
        }
        let results: Vec<usize> =
            (0..self.conv.len()).filter(|&i| matches!(self.conv[i].block, Block::Result { .. })).collect();
        let protected: HashSet<usize> = results.iter().rev().take(KEEP_RESULTS).copied().collect();
        let mut elided = Vec::new();
        for i in 0..self.conv.len() {
            if self.estimate() <= target {
                break;
            }
            if protected.contains(&i) {
                continue;
            }
            let marker = match &self.conv[i].block {
                Block::Result { call, tool, .. } if !self.named.contains(call) => {
                    let bytes = self.result_bytes.get(call).copied().unwrap_or(0);
                    let args = self.calls.get(call).map(|c| c.1.clone()).unwrap_or_else(|| Arc::new(Value::Null));
                    (call.clone(), markers::elided_result(tool, bytes, &args))
                }
                Block::Attachment { id, .. } if !self.named.contains(id) => {
                    let (bytes, path) = self.attachments.get(id).cloned().unwrap_or_default();
                    (id.clone(), markers::elided_attachment(bytes, &path))
                }
                _ => continue,
            };
            self.set_conv_text(i, Arc::from(marker.1));
            self.named.insert(marker.0.clone());
            elided.push(marker.0);
        }
        if !elided.is_empty() {
            self.tick(1, 20);
            self.write(
                "elide",
                &json!({"by": "auto", "calls": elided, "estimate_before": before, "estimate_after": self.estimate(),
                        "budget": budget, "target": target, "keep_results": KEEP_RESULTS}),
            )?;
            self.stats.elides += 1;
        }
        if self.estimate() > target {
            if self.stats.turns >= self.last_compact_turn + 30 && self.compact()? {
                return Ok(());
            }
            if self.stats.turns >= self.last_notice_turn + 10 {
                self.last_notice_turn = self.stats.turns;
                let text = format!(
                    "Your context is {} tokens, above the target of {target} after automatic elision. \
                     You manage your context: edit {MIRROR_FILE} and call ctx commit, or ctx clear results you no longer need.",
                    self.estimate()
                );
                self.notice("manage_context", text)?;
            }
        }
        Ok(())
    }

    /// A compaction that keeps the last few turns; false when there is nothing to cut.
    pub(super) fn compact(&mut self) -> io::Result<bool> {
        let assistants: Vec<usize> =
            (0..self.conv.len()).filter(|&i| matches!(self.conv[i].block, Block::Assistant { .. })).collect();
        if assistants.len() < 12 {
            return Ok(false);
        }
        let cut_at = assistants[assistants.len() - self.rng.gen_range(4..10)];
        let first_kept = self.conv[cut_at].src_rev;
        let before = self.estimate();
        let summary =
            text::summary(&mut self.rng, &self.task, &self.conv[..cut_at].iter().map(|c| &c.block).collect::<Vec<_>>());
        self.conv.retain(|c| c.src_rev >= first_kept);
        self.recount();
        self.summaries = vec![Block::Summary { text: Arc::from(summary.as_str()) }];
        let after = self.estimate();
        self.tick(2_000, 20_000);
        self.write(
            "compact",
            &json!({"trigger": "auto", "summary": summary, "first_kept": first_kept, "mode": "rotate",
                    "fallback": false, "tokens_before": before, "tokens_after": after}),
        )?;
        self.last_compact_turn = self.stats.turns;
        self.stats.compactions += 1;
        Ok(true)
    }

    /// The model's `ctx clear` action: assistant, `clear` record (spec selection rule), result.
    pub(super) fn clear(&mut self) -> io::Result<()> {
        let result_ids: Vec<String> = self
            .conv
            .iter()
            .filter_map(|c| match &c.block {
                Block::Result { call, .. } => Some(call.clone()),
                _ => None,
            })
            .collect();
        let pick = |rng: &mut ChaCha8Rng| result_ids.get(rng.gen_range(0..result_ids.len().max(1))).cloned();
        let args = match self.rng.gen_range(0..10) {
            0..=3 => json!({"action": "clear", "tool": "read", "keep_last": self.rng.gen_range(1..4)}),
            4..=6 => match pick(&mut self.rng) {
                Some(b) => json!({"action": "clear", "before": b, "keep_last": 2}),
                None => json!({"action": "clear", "call_ids": []}),
            },
            7..=8 => {
                let ids: Vec<String> = (0..3).filter_map(|_| pick(&mut self.rng)).collect();
                json!({"action": "clear", "call_ids": ids})
            }
            _ => json!({"action": "clear", "tool": "no_such_tool"}),
        };
        let id = self.next_id("call_");
        let call = BlockCall { id: id.clone(), tool: "ctx".into(), args: Arc::new(args.clone()) };
        self.assistant("Clearing tool output I no longer need.".into(), vec![call])?;
        // The selection rule of journal-v1 §2 `clear`, on the projection at this record's rev − 1.
        let req: crate::journal::ClearRequest = serde_json::from_value(args.clone()).unwrap_or_default();
        let mut cand: Vec<(usize, String, String)> = self
            .conv
            .iter()
            .enumerate()
            .filter_map(|(i, c)| match &c.block {
                Block::Result { call, tool, .. } if !self.named.contains(call) => Some((i, call.clone(), tool.clone())),
                _ => None,
            })
            .collect();
        if let Some(ids) = &req.call_ids {
            cand.retain(|(_, c, _)| ids.contains(c));
        }
        if let Some(b) = &req.before {
            let pos = self.conv.iter().position(|c| matches!(&c.block, Block::Result { call, .. } if call == b));
            match pos {
                Some(p) => cand.retain(|(i, _, _)| *i < p),
                None => cand.clear(),
            }
        }
        if let Some(t) = &req.tool {
            cand.retain(|(_, _, tool)| tool == t);
        }
        if let Some(k) = req.keep_last {
            let keep = cand.len().saturating_sub(k as usize);
            cand.truncate(keep);
        }
        let cleared: Vec<String> = cand.iter().map(|(_, c, _)| c.clone()).collect();
        self.tick(1, 20);
        let body = if cleared.is_empty() {
            json!({"request": args, "cleared": cleared, "message": "nothing to clear"})
        } else {
            json!({"request": args, "cleared": cleared})
        };
        self.write("clear", &body)?;
        let mut freed = 0;
        for (i, call, tool) in &cand {
            let bytes = self.result_bytes.get(call).copied().unwrap_or(0);
            freed += self.conv[*i].bytes;
            self.set_conv_text(*i, Arc::from(markers::cleared(tool, bytes)));
            self.named.insert(call.clone());
        }
        self.stats.clears += 1;
        let out = if cleared.is_empty() {
            "nothing to clear".to_string()
        } else {
            format!("cleared {} results ({freed} bytes)", cleared.len())
        };
        let n = out.len() as u64;
        self.result(&id, "ctx", out, n, false, None)
    }
}
