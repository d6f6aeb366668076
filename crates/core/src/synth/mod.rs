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

mod agent;
mod fleet;
mod harness;
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
