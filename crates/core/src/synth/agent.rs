//! The agent and the user of the synthetic session: tasks asked, tool calls made (reads, edits,
//! builds, greps) with skewed output sizes, assistant turns, results and notices.

use super::*;

impl<W: Write> Gen<'_, W> {
    /// One or more turns.
    pub(super) fn step(&mut self) -> io::Result<()> {
        if self.task_left == 0 {
            self.user()?;
        }
        if !self.model_switched && self.stats.turns >= self.target_turns / 2 && self.target_turns >= 20 {
            self.model_switched = true;
            self.tick(100, 2000);
            self.write("model", &json!({"model": "anthropic/claude-haiku-4-5", "ctx": self.limits.json()}))?;
        }
        self.housekeeping()?;
        let left = self.target_turns - self.stats.turns;
        let r: f64 = self.rng.gen();
        if r < 0.004 && self.stats.turns > 20 {
            return self.clear();
        }
        if self.mirror_due(r) && left >= 3 && self.conv_bytes < 1_500_000 {
            let accept = self.rng.gen_bool(0.85);
            return self.mirror(accept);
        }
        self.task_left -= 1;
        if self.task_left == 0 {
            let t = text::prose(&mut self.rng, 80, 600);
            return self.assistant(format!("Done. {t}"), Vec::new()).map(|_| ());
        }
        let n = match self.rng.gen_range(0..100) {
            0..=79 => 1,
            80..=94 => 2,
            _ => 3,
        };
        let mut calls = Vec::new();
        let mut outputs = Vec::new();
        for _ in 0..n {
            let (call, out) = self.tool_call();
            calls.push(call);
            outputs.push(out);
        }
        let say = if self.rng.gen_bool(0.3) { String::new() } else { text::prose(&mut self.rng, 30, 400) };
        self.assistant(say, calls.clone())?;
        for (c, (text, bytes, err, spill)) in calls.iter().zip(outputs) {
            self.result(&c.id, &c.tool, text, bytes, err, spill)?;
        }
        Ok(())
    }

    pub(super) fn user(&mut self) -> io::Result<()> {
        self.tick(20_000, 900_000);
        let id = self.next_id("u");
        self.task = text::task(&mut self.rng);
        self.task_left = self.rng.gen_range(4..60);
        let text: Text = Arc::from(self.task.as_str());
        let mut atts = Vec::new();
        if self.rng.gen_bool(0.1) {
            let aid = self.next_id("att");
            let rel = format!("{id}.att/paste.txt");
            let n = self.rng.gen_range(2_000..60_000);
            let body = text::log_paste(&mut self.rng, n);
            self.put(&rel, &body)?;
            let preview: Text = Arc::from(format!("{}\n[… {} bytes in {rel}]", cut(&body, 1000), body.len()));
            self.attachments.insert(aid.clone(), (body.len() as u64, rel.clone()));
            atts.push((aid, rel, body.len() as u64, preview));
            self.stats.attachments += 1;
        }
        let att_out: Vec<AttOut> =
            atts.iter().map(|(a, p, b, pv)| AttOut { id: a, path: p, bytes: *b, preview: pv }).collect();
        let body = if att_out.is_empty() {
            json!({"id": id, "text": &*text})
        } else {
            json!({"id": id, "text": &*text, "attachments": att_out})
        };
        let rev = self.write("user", &body)?;
        self.push(Block::User { id: id.clone(), text }, rev);
        for (aid, _, _, preview) in atts {
            self.push(Block::Attachment { id: aid, user: id.clone(), text: preview }, rev);
        }
        Ok(())
    }

    /// Picks a tool call and produces its output: (call, (text, bytes, is_error, spill)).
    pub(super) fn tool_call(&mut self) -> (BlockCall, (String, u64, bool, Option<String>)) {
        let id = self.next_id("call_");
        let pick = self.rng.gen_range(0..100);
        let (tool, args, out, err) = match pick {
            0..=34 => {
                // Reads concentrate on a few hot files.
                let i = (self.rng.gen::<f64>().powi(3) * self.files.len() as f64) as usize;
                let f = &self.files[i.min(self.files.len() - 1)];
                ("read", json!({"path": f.path}), f.content.to_string(), false)
            }
            35..=59 => {
                let n = self.size();
                let (cmd, out, err) = text::shell(&mut self.rng, n);
                ("run", json!({"command": cmd}), out, err)
            }
            60..=74 => {
                let i = self.rng.gen_range(0..self.files.len());
                let (old, new, content) = text::edit(&mut self.rng, &self.files[i].content);
                self.files[i].content = Arc::from(content);
                let path = self.files[i].path.clone();
                let out = format!("Edited {path}: 1 replacement");
                ("edit", json!({"path": path, "old": old, "new": new}), out, false)
            }
            75..=86 => {
                let n = self.size();
                let pat = text::word(&mut self.rng).to_string();
                ("grep", json!({"pattern": pat, "path": "src"}), text::grep(&mut self.rng, &pat, n), false)
            }
            87..=94 => {
                let n = self.size().min(20_000);
                ("ls", json!({"path": "src"}), text::ls(&mut self.rng, n), false)
            }
            _ => {
                let i = self.files.len();
                let path = text::file_path(&mut self.rng, i);
                let n = self.rng.gen_range(500..5_000);
                let content = text::code(&mut self.rng, n);
                let out = format!("Wrote {} bytes to {path}", content.len());
                self.files.push(VFile { path: path.clone(), content: Arc::from(content.as_str()) });
                ("write", json!({"path": path, "content": content}), out, false)
            }
        };
        let bytes = out.len() as u64;
        let mut spill = None;
        let mut text = out;
        if tool == "run" && bytes > (100_000.0 * self.scale) as u64 && bytes < 1_000_000 && self.rng.gen_bool(0.5) {
            let rel = format!("{id}.out/stdout");
            if self.put(&rel, &text).is_ok() {
                text = format!("{}\n[full output: {rel}]", cut(&text, 8_192));
                spill = Some(rel);
                self.stats.spills += 1;
            }
        }
        (BlockCall { id, tool: tool.to_string(), args: Arc::new(args) }, (text, bytes, err, spill))
    }

    /// Writes an `assistant` record for the current request and appends its block.
    pub(super) fn assistant(&mut self, say: String, calls: Vec<BlockCall>) -> io::Result<u64> {
        let gap = self.ts_ms - self.last_turn_ms;
        self.tick(1_500, 40_000);
        self.last_turn_ms = self.ts_ms;
        let blocks =
            std::iter::once(&self.system).chain(self.summaries.iter()).chain(self.conv.iter().map(|c| &c.block));
        let sha = self.hasher.hash_hex(blocks);
        let hs = self.hasher.last();
        self.stats.hashed_bytes += hs.total_bytes - hs.shared_bytes;
        self.stats.request_bytes += hs.total_bytes;
        let prompt = (hs.total_bytes as f64 / 3.8).round() as u64;
        let cached = if gap < 300_000 && hs.shared_bytes >= 4096 { (hs.shared_bytes as f64 / 3.8) as u64 } else { 0 };
        let args_len: usize = calls.iter().map(|c| c.args.to_string().len()).sum();
        let completion = ((say.len() + args_len) as f64 / 3.5) as u64 + 12;
        let id = self.next_id("a");
        let calls_out: Vec<CallOut> =
            calls.iter().map(|c| CallOut { id: &c.id, tool: &c.tool, args: &c.args }).collect();
        let usage =
            json!({"prompt_tokens": prompt, "cached_tokens": cached.min(prompt), "completion_tokens": completion});
        let body = if calls_out.is_empty() {
            json!({"id": id, "text": say, "usage": usage, "prompt_sha256": sha})
        } else {
            json!({"id": id, "text": say, "calls": calls_out, "usage": usage, "prompt_sha256": sha})
        };
        let rev = self.write("assistant", &body)?;
        for c in &calls {
            self.calls.insert(c.id.clone(), (c.tool.clone(), c.args.clone()));
        }
        self.push(Block::Assistant { id, text: Arc::from(say), calls }, rev);
        self.stats.turns += 1;
        Ok(rev)
    }

    pub(super) fn result(
        &mut self,
        call: &str,
        tool: &str,
        text: String,
        bytes: u64,
        err: bool,
        spill: Option<String>,
    ) -> io::Result<()> {
        let ms = if tool == "run" { self.rng.gen_range(200..90_000) } else { self.rng.gen_range(5..400) };
        self.ts_ms += ms;
        let mut body = json!({"call": call, "tool": tool, "text": text, "bytes": bytes});
        if err {
            body["is_error"] = json!(true);
        }
        if let Some(s) = &spill {
            body["spill"] = json!(s);
        }
        let rev = self.write("result", &body)?;
        self.result_bytes.insert(call.to_string(), bytes);
        self.push(Block::Result { call: call.to_string(), tool: tool.to_string(), text: Arc::from(text) }, rev);
        self.stats.results += 1;
        Ok(())
    }

    pub(super) fn notice(&mut self, topic: &str, text: String) -> io::Result<()> {
        self.tick(1, 20);
        let id = self.next_id("n");
        let rev = self.write("notice", &json!({"id": id, "text": text, "topic": topic}))?;
        self.push(Block::Notice { id, text: Arc::from(text) }, rev);
        self.stats.notices += 1;
        Ok(())
    }
}
