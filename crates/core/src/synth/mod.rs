//! Synthetic journals for benchmarks and scale tests (`ctxj synth`).
//!
//! [`generate`] plays a seed-`000_*` harness for N turns, deterministically from a seed
//! (ChaCha8): a human asks for tasks, the agent reads the same files again and again, edits them,
//! runs builds and tests, greps and lists; tool outputs follow a skewed distribution from 200 B
//! to 200 KB with an occasional 5 MB output (some large outputs are spilled to
//! `<call>.out/stdout`, some user pastes become attachments). The harness side is modelled too:
//! auto-elision when the estimate exceeds the budget (oldest first, never the `keep_results` last
//! results), `manage_context` notices, the model's `ctx clear` actions (with `cleared` computed by
//! the spec's selection rule), accepted and rejected mirror commits (accepted drafts satisfy
//! R1–R6), compactions at turn boundaries and one model switch.
//!
//! With [`SynthOptions::mirrors`] the session is mirror-heavy (issue 20's linear-mirror
//! benchmark, see [`mirror`]): the commits are spread evenly over the turns, and the harness's
//! context settings scale with the output scale, so that every draft — the whole conversation, kept
//! within the budget — is about the same size and the journal doubles when turns and mirrors do.
//!
//! The generator keeps its own projection of what it wrote and hashes it with
//! [`RequestHasher`] before each `assistant` record, so `prompt_sha256` costs the new bytes only.
//! Tests check every turn's hash against the recorded projection rebuilt by
//! [`crate::projection::Replayer`].

mod fleet;
mod mirror;
mod text;

pub use fleet::{fleet, FleetStats};

use std::collections::{HashMap, HashSet};
use std::fs;
use std::io::{self, BufWriter, Write};
use std::path::{Path, PathBuf};
use std::sync::Arc;

use rand::{Rng, SeedableRng};
use rand_chacha::ChaCha8Rng;
use serde::Serialize;
use serde_json::{json, Value};

use crate::journal::Text;
use crate::projection::block::{Block, BlockCall};
use crate::projection::{markers, RequestHasher};

/// Context settings of the synthetic harness (tokens, spec §6).
pub const CTX_WINDOW: u64 = 200_000;
pub const CONTEXT_BUDGET: u64 = 100_000;
pub const CONTEXT_RESERVE: u64 = 8_192;
pub const CONTEXT_TARGET: u64 = 70_000;
pub const KEEP_RESULTS: usize = 5;

/// The mirror file the model edits.
const MIRROR_FILE: &str = "LIVE_CONTEXT.json";

/// What to generate.
#[derive(Debug, Clone)]
pub struct SynthOptions {
    /// Number of turns (`assistant` records).
    pub turns: usize,
    pub seed: u64,
    /// Approximate journal size in MiB: every tool output is scaled so the journal lands within
    /// ~3% of it (the scale is found by dry runs, see `calibrate`).
    /// `None`: the natural distribution (about 16 KB per turn).
    pub size_mb: Option<f64>,
    /// This many mirror commits over the session, spread evenly (issue 20's linear-mirror
    /// benchmark; fewer when three turns each do not fit), with the context settings scaled like
    /// the tool outputs (see [`mirror`]); `None`: the natural rate (about one step in 400) and
    /// the settings of the constants above.
    pub mirrors: Option<usize>,
}

/// What was generated.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize)]
pub struct SynthStats {
    pub turns: usize,
    pub records: u64,
    pub journal_bytes: u64,
    pub results: u64,
    pub big_outputs: u64,
    pub spills: u64,
    pub attachments: u64,
    pub elides: u64,
    pub clears: u64,
    pub mirrors_accepted: u64,
    pub mirrors_rejected: u64,
    pub compactions: u64,
    pub notices: u64,
    /// Canonical request bytes hashed for `prompt_sha256` (shared prefixes are not re-hashed).
    pub hashed_bytes: u64,
    /// Canonical request bytes of all turns together (what hashing from scratch would cost).
    pub request_bytes: u64,
}

/// Why generation failed.
#[derive(Debug, thiserror::Error)]
pub enum SynthError {
    #[error("{0} exists and is not an empty directory; synth writes into a new or empty directory only")]
    NotEmpty(PathBuf),
    #[error("{path}: {err}")]
    Io { path: PathBuf, err: io::Error },
}

/// Journal bytes per turn as a function of the output scale `s`: about `A + B·s`, fitted on
/// generated journals (scale 1 gives ~16.5 KB per turn; the fixed part is records, assistant
/// text, edits and capped listings). `--size-mb` inverts it, so sizes land within ~15%.
const BYTES_PER_TURN_FIXED: f64 = 2_000.0;
const BYTES_PER_TURN_SCALED: f64 = 12_000.0;

/// The unscaled size of one tool output: 200 B · 1000^(u^1.8) (200 B – 200 KB, median about
/// 1.5 KB), or 5 MB with probability 0.2 %.
fn draw_base_size(rng: &mut ChaCha8Rng) -> f64 {
    if rng.gen_bool(0.002) {
        5_000_000.0
    } else {
        200.0 * 1000f64.powf(rng.gen::<f64>().powf(1.8))
    }
}

/// Generates a journal of `opts.turns` turns into `dir` (created; must not exist or be empty).
/// `progress` is called with the number of turns written so far.
pub fn generate(opts: &SynthOptions, dir: &Path, progress: &mut dyn FnMut(usize)) -> Result<SynthStats, SynthError> {
    let io = |path: &Path| {
        let path = path.to_path_buf();
        move |err| SynthError::Io { path, err }
    };
    if dir.exists() {
        let empty = dir.is_dir() && fs::read_dir(dir).map_err(io(dir))?.next().is_none();
        if !empty {
            return Err(SynthError::NotEmpty(dir.to_path_buf()));
        }
    }
    fs::create_dir_all(dir).map_err(io(dir))?;
    let jpath = dir.join("journal.jsonl");
    let file = fs::File::create(&jpath).map_err(io(&jpath))?;
    let scale = match opts.size_mb {
        Some(mb) if opts.turns > 0 => calibrate(opts, mb * 1_048_576.0),
        _ => 1.0,
    };
    let mut g = Gen::new(opts, Some(dir), BufWriter::with_capacity(1 << 20, Counting { inner: file, n: 0 }), scale);
    g.run(progress).map_err(io(&jpath))?;
    g.out.flush().map_err(io(&jpath))?;
    g.stats.journal_bytes = g.out.get_ref().n;
    Ok(g.stats)
}

/// The output scale that makes a journal of `opts.turns` turns about `target` bytes long.
///
/// The size is roughly `turns · (A + B·s)`, but the rare 5 MB outputs (scaled too) make it vary
/// by tens of percent between seeds, so the model's guess is corrected by dry runs (the same
/// generator writing to nowhere) until the size is within 3% of the target (at most four).
fn calibrate(opts: &SynthOptions, target: f64) -> f64 {
    let fixed = BYTES_PER_TURN_FIXED * opts.turns as f64;
    let per_turn = target / opts.turns as f64;
    let mut s = ((per_turn - BYTES_PER_TURN_FIXED) / BYTES_PER_TURN_SCALED).max(0.01);
    let (mut best, mut best_err) = (s, f64::INFINITY);
    for _ in 0..4 {
        let bytes = dry_run(opts, s);
        let err = (bytes / target - 1.0).abs();
        if err < best_err {
            (best, best_err) = (s, err);
        }
        if err < 0.03 {
            break;
        }
        // Only the scaled part moves with s.
        s = (s * (target - fixed).max(target * 0.05) / (bytes - fixed).max(1.0)).max(0.01);
    }
    best
}

/// The journal size of a generation at `scale`, without writing anything.
fn dry_run(opts: &SynthOptions, scale: f64) -> f64 {
    let mut g = Gen::new(opts, None, BufWriter::new(Counting { inner: io::sink(), n: 0 }), scale);
    // Writing to a sink cannot fail.
    let _ = g.run(&mut |_| {}).and_then(|_| g.out.flush());
    g.out.get_ref().n as f64
}

struct Counting<W> {
    inner: W,
    n: u64,
}

impl<W: Write> Write for Counting<W> {
    fn write(&mut self, buf: &[u8]) -> io::Result<usize> {
        let k = self.inner.write(buf)?;
        self.n += k as u64;
        Ok(k)
    }
    fn flush(&mut self) -> io::Result<()> {
        self.inner.flush()
    }
}

/// A conversation block of the generator's own projection.
struct Conv {
    block: Block,
    src_rev: u64,
    /// Canonical bytes plus the separator.
    bytes: u64,
}

impl Conv {
    fn new(block: Block, src_rev: u64) -> Conv {
        let bytes = block.canonical().len() as u64 + 1;
        Conv { block, src_rev, bytes }
    }
    fn set_text(&mut self, t: Text) {
        self.block.set_text(t);
        self.bytes = self.block.canonical().len() as u64 + 1;
    }
}

struct VFile {
    path: String,
    content: Text,
}

struct Gen<'a, W: Write> {
    rng: ChaCha8Rng,
    /// Where spill and attachment files go; `None` in a dry run (nothing is written).
    dir: Option<&'a Path>,
    out: BufWriter<W>,
    target_turns: usize,
    seed: u64,
    scale: f64,
    stats: SynthStats,
    rev: u64,
    ts_ms: i64,
    last_turn_ms: i64,
    ids: u64,
    // The projection the harness sends.
    system: Block,
    summaries: Vec<Block>,
    conv: Vec<Conv>,
    conv_bytes: u64,
    hasher: RequestHasher,
    // Look-ups for markers and selections.
    calls: HashMap<String, (String, Arc<Value>)>,
    result_bytes: HashMap<String, u64>,
    attachments: HashMap<String, (u64, String)>,
    /// Ids named by an `elide` or `clear` so far.
    named: HashSet<String>,
    files: Vec<VFile>,
    mirror_rev: u64,
    /// The context settings in force.
    limits: Limits,
    /// `--mirrors`: the number of commits to spread over the session.
    mirror_plan: Option<usize>,
    last_compact_turn: usize,
    last_notice_turn: usize,
    model_switched: bool,
    task_left: usize,
    task: String,
}

#[derive(Serialize)]
struct Rec<'a, T: Serialize> {
    rev: u64,
    ts: &'a str,
    kind: &'a str,
    #[serde(flatten)]
    body: &'a T,
}

#[derive(Serialize)]
struct CallOut<'a> {
    id: &'a str,
    tool: &'a str,
    args: &'a Value,
}

#[derive(Serialize)]
struct AttOut<'a> {
    id: &'a str,
    path: &'a str,
    bytes: u64,
    preview: &'a str,
}

/// The harness's context settings (tokens, spec §6).
#[derive(Debug, Clone, Copy)]
struct Limits {
    window: u64,
    budget: u64,
    reserve: u64,
    target: u64,
}

impl Limits {
    /// The constants above times `f`.
    fn scaled(f: f64) -> Limits {
        let x = |v: u64| (v as f64 * f).round() as u64;
        Limits {
            window: x(CTX_WINDOW),
            budget: x(CONTEXT_BUDGET),
            reserve: x(CONTEXT_RESERVE),
            target: x(CONTEXT_TARGET),
        }
    }

    fn json(&self) -> Value {
        json!({
            "ctx_window": self.window,
            "context_budget": self.budget,
            "context_reserve": self.reserve,
            "context_target": self.target,
            "keep_results": KEEP_RESULTS,
        })
    }
}

/// The longest prefix of `s` of at most `max` bytes that ends on a character boundary.
fn cut(s: &str, max: usize) -> &str {
    if s.len() <= max {
        return s;
    }
    let mut i = max;
    while !s.is_char_boundary(i) {
        i -= 1;
    }
    &s[..i]
}

impl<'a, W: Write> Gen<'a, W> {
    fn new(opts: &SynthOptions, dir: Option<&'a Path>, out: BufWriter<W>, scale: f64) -> Self {
        Gen {
            rng: ChaCha8Rng::seed_from_u64(opts.seed),
            dir,
            out,
            target_turns: opts.turns,
            limits: match opts.mirrors {
                None => Limits::scaled(1.0),
                Some(_) => mirror::limits(scale),
            },
            mirror_plan: opts.mirrors,
            seed: opts.seed,
            scale,
            stats: SynthStats::default(),
            rev: 0,
            // 2026-11-02T09:00:00Z
            ts_ms: 1_793_610_000_000,
            last_turn_ms: i64::MIN / 2,
            ids: 0,
            system: Block::Summary { text: Arc::from("") },
            summaries: Vec::new(),
            conv: Vec::new(),
            conv_bytes: 0,
            hasher: RequestHasher::new(),
            calls: HashMap::new(),
            result_bytes: HashMap::new(),
            attachments: HashMap::new(),
            named: HashSet::new(),
            files: Vec::new(),
            mirror_rev: 0,
            last_compact_turn: 0,
            last_notice_turn: 0,
            model_switched: false,
            task_left: 0,
            task: String::new(),
        }
    }

    /// Writes a spill or attachment file `rel` (a path inside the session directory).
    fn put(&self, rel: &str, body: &str) -> io::Result<()> {
        let Some(dir) = self.dir else { return Ok(()) };
        let p = dir.join(rel);
        fs::create_dir_all(p.parent().expect("has a parent"))?;
        fs::write(&p, body)
    }

    fn next_id(&mut self, prefix: &str) -> String {
        self.ids += 1;
        format!("{prefix}{}", self.ids)
    }

    fn size(&mut self) -> usize {
        let mut base = draw_base_size(&mut self.rng);
        if base >= 5_000_000.0 && self.mirror_plan.is_some() {
            // No 5 MB outliers in a mirror-heavy session (see `mirror`).
            base = draw_base_size(&mut self.rng).min(200_000.0);
        }
        if base >= 5_000_000.0 {
            self.stats.big_outputs += 1;
        }
        ((base * self.scale) as usize).max(60)
    }

    fn tick(&mut self, lo: i64, hi: i64) {
        self.ts_ms += self.rng.gen_range(lo..hi);
    }

    fn write<T: Serialize>(&mut self, kind: &str, body: &T) -> io::Result<u64> {
        self.rev += 1;
        self.stats.records += 1;
        let ts = chrono::DateTime::from_timestamp_millis(self.ts_ms)
            .map(|d| d.format("%Y-%m-%dT%H:%M:%S%.3fZ").to_string())
            .unwrap_or_default();
        serde_json::to_writer(&mut self.out, &Rec { rev: self.rev, ts: &ts, kind, body })?;
        self.out.write_all(b"\n")?;
        Ok(self.rev)
    }

    fn push(&mut self, block: Block, rev: u64) {
        let c = Conv::new(block, rev);
        self.conv_bytes += c.bytes;
        self.conv.push(c);
    }

    fn set_conv_text(&mut self, i: usize, t: Text) {
        self.conv_bytes -= self.conv[i].bytes;
        self.conv[i].set_text(t);
        self.conv_bytes += self.conv[i].bytes;
    }

    fn recount(&mut self) {
        self.conv_bytes = self.conv.iter().map(|c| c.bytes).sum();
    }

    /// The harness's estimate of the next request, in tokens (bytes / 4).
    fn estimate(&self) -> u64 {
        let fixed: u64 = self.system.canonical().len() as u64
            + self.summaries.iter().map(|s| s.canonical().len() as u64 + 1).sum::<u64>();
        (fixed + self.conv_bytes + 2) / 4
    }

    fn run(&mut self, progress: &mut dyn FnMut(usize)) -> io::Result<()> {
        let id = format!("synth-{}-{}", self.seed, self.target_turns);
        self.write(
            "session",
            &json!({"id": id, "model": "anthropic/claude-sonnet-4-5", "harness": "ctxj-synth",
                    "encoding": "o200k_base", "ctx": self.limits.json()}),
        )?;
        self.tick(5, 50);
        let (sys, tools) = text::system_prompt();
        let rev = self.write("system", &json!({"text": sys, "tools": tools}))?;
        let _ = rev;
        self.system = Block::System { text: Arc::from(sys.as_str()), tools: Some(Arc::new(tools)) };
        for i in 0..60 {
            let path = text::file_path(&mut self.rng, i);
            let n = self.size().min((40_000.0 * self.scale.max(1.0)) as usize);
            let content = text::code(&mut self.rng, n);
            self.files.push(VFile { path, content: Arc::from(content) });
        }
        while self.stats.turns < self.target_turns {
            let before = self.stats.turns;
            self.step()?;
            if self.stats.turns / 64 != before / 64 {
                progress(self.stats.turns);
            }
        }
        progress(self.stats.turns);
        Ok(())
    }

    /// One or more turns.
    fn step(&mut self) -> io::Result<()> {
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

    fn user(&mut self) -> io::Result<()> {
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
    fn tool_call(&mut self) -> (BlockCall, (String, u64, bool, Option<String>)) {
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
    fn assistant(&mut self, say: String, calls: Vec<BlockCall>) -> io::Result<u64> {
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

    fn result(
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

    fn notice(&mut self, topic: &str, text: String) -> io::Result<()> {
        self.tick(1, 20);
        let id = self.next_id("n");
        let rev = self.write("notice", &json!({"id": id, "text": text, "topic": topic}))?;
        self.push(Block::Notice { id, text: Arc::from(text) }, rev);
        self.stats.notices += 1;
        Ok(())
    }

    /// Before a turn: auto-elision above the budget, then a compaction or a `manage_context`
    /// notice when still above the target.
    fn housekeeping(&mut self) -> io::Result<()> {
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
    fn compact(&mut self) -> io::Result<bool> {
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
    fn clear(&mut self) -> io::Result<()> {
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

#[cfg(test)]
mod tests {
    use super::*;
    use crate::journal::{parse_bytes, Body, ReadOptions};
    use crate::projection::block::sha256_hex;
    use crate::projection::for_each_request;

    fn gen(turns: usize, seed: u64) -> (tempfile::TempDir, SynthStats, Vec<u8>) {
        let d = tempfile::tempdir().unwrap();
        let out = d.path().join("s");
        let stats = generate(&SynthOptions { turns, seed, size_mb: None, mirrors: None }, &out, &mut |_| {}).unwrap();
        let bytes = fs::read(out.join("journal.jsonl")).unwrap();
        (d, stats, bytes)
    }

    /// Checks every turn's `prompt_sha256` against the recorded projection; returns how many.
    pub(super) fn hashes_checked(j: &crate::journal::Journal) -> usize {
        let mut checked = 0;
        for_each_request(j, |k, idx, req| {
            let Body::Assistant(a) = &j.records[idx].body else { panic!() };
            assert_eq!(a.prompt_sha256.as_deref(), Some(sha256_hex(&req.canonical()).as_str()), "turn {k}");
            checked += 1;
        });
        checked
    }

    #[test]
    fn every_prompt_sha256_matches_the_recorded_projection() {
        // Seed 6 at 700 turns exercises every feature: 5 MB outputs, spills, attachments,
        // elisions, clears, accepted and rejected mirrors, compactions, notices.
        let (_d, stats, bytes) = gen(700, 6);
        assert_eq!(stats.turns, 700);
        let s = &stats;
        assert!(s.big_outputs > 0 && s.spills > 0 && s.attachments > 0 && s.notices > 0, "{s:?}");
        assert!(
            s.elides > 0 && s.clears > 0 && s.mirrors_accepted > 0 && s.mirrors_rejected > 0 && s.compactions > 0,
            "{s:?}"
        );
        let j = parse_bytes(Path::new("j"), &bytes, ReadOptions::default()).unwrap();
        assert_eq!(j.turns.len(), 700);
        assert_eq!(hashes_checked(&j), 700);
        for (i, r) in j.records.iter().enumerate() {
            assert_eq!(r.rev, i as u64 + 1);
        }
    }

    #[test]
    fn same_seed_same_bytes_other_seed_other_bytes() {
        let (_a, _, x) = gen(120, 3);
        let (_b, _, y) = gen(120, 3);
        let (_c, _, z) = gen(120, 4);
        assert_eq!(x, y);
        assert_ne!(x, z);
    }

    #[test]
    fn refuses_a_non_empty_directory() {
        let d = tempfile::tempdir().unwrap();
        fs::write(d.path().join("x"), "x").unwrap();
        let e = generate(&SynthOptions { turns: 1, seed: 1, size_mb: None, mirrors: None }, d.path(), &mut |_| {})
            .unwrap_err();
        assert!(matches!(e, SynthError::NotEmpty(_)));
        assert_eq!(fs::read_dir(d.path()).unwrap().count(), 1);
    }
}
