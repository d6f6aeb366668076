//! Token counting against its peers on one corpus (issue 20), for `scripts/bench`:
//! `ctxj_core::tokens::fast::count` vs tiktoken-rs `encode_ordinary(..).len()` vs bpe-openai `count`,
//! each on one thread (a fresh thread per run, so ctxj's per-thread piece table starts empty:
//! cold), plus `TiktokenEstimator::count_many` on every core. Python `tiktoken` is timed by
//! `scripts/bench` on the corpus this writes.
//!
//! The corpus: mixed agent text — every string of the bundled journals and transcripts and of
//! the shared real transcripts when present (`CTXJ_SHARED_SAMPLES` or `../shared/samples`), the
//! Rust sources and the Markdown docs — cut into texts of at most 16 KiB, each made unique by a
//! numbered first line, repeated until `CTXJ_BENCH_MB` MB (default 20). Written as one JSON
//! string per line to `CTXJ_PEERS_CORPUS` (default `target/peers-corpus.jsonl`).
//!
//! Prints one JSON object: corpus size, the tokens each counter found (they must agree) and the
//! best of `CTXJ_PEERS_RUNS` (default 3) wall times in seconds.
//!
//! Run: `cargo bench --bench peers`.

use std::io::Write;
use std::path::{Path, PathBuf};
use std::time::Instant;

use ctxj_core::tokens::{fast, Encoding, TiktokenEstimator};

fn strings(v: &serde_json::Value, out: &mut Vec<String>) {
    match v {
        serde_json::Value::String(s) if !s.is_empty() => out.push(s.clone()),
        serde_json::Value::Array(a) => a.iter().for_each(|x| strings(x, out)),
        serde_json::Value::Object(o) => o.values().for_each(|x| strings(x, out)),
        _ => {}
    }
}

fn gather(dir: &Path, out: &mut Vec<String>) {
    let mut files: Vec<PathBuf> = walkdir::WalkDir::new(dir)
        .into_iter()
        .filter_map(Result::ok)
        .filter(|e| e.file_type().is_file())
        .map(|e| e.into_path())
        .collect();
    files.sort();
    for f in files {
        let Ok(text) = std::fs::read_to_string(&f) else { continue };
        match f.extension().and_then(|x| x.to_str()) {
            Some("jsonl") => {
                for line in text.lines() {
                    if let Ok(v) = serde_json::from_str(line) {
                        strings(&v, out);
                    }
                }
            }
            Some("rs" | "md") => out.push(text),
            _ => {}
        }
    }
}

/// Texts of at most 16 KiB, cut at line ends where possible.
fn cut(seed: &[String], mb: usize) -> Vec<String> {
    let mut texts = Vec::new();
    let mut total = 0;
    let want = mb * 1_000_000;
    'outer: loop {
        for s in seed {
            let mut rest = s.as_str();
            while !rest.is_empty() {
                let mut end = rest.len().min(16 * 1024 - 32);
                while !rest.is_char_boundary(end) {
                    end -= 1;
                }
                if end < rest.len() {
                    if let Some(nl) = rest[..end].rfind('\n') {
                        end = nl + 1;
                    }
                }
                let t = format!("// text {}\n{}", texts.len(), &rest[..end]);
                total += t.len();
                texts.push(t);
                rest = &rest[end..];
                if total >= want {
                    break 'outer;
                }
            }
        }
    }
    texts
}

/// Best wall time of `runs` runs of `f` on a fresh thread.
fn best(runs: usize, f: impl Fn() -> u64 + Sync) -> (u64, f64) {
    let mut out = (0, f64::INFINITY);
    for _ in 0..runs {
        let (n, s) = std::thread::scope(|sc| {
            sc.spawn(|| {
                let t = Instant::now();
                let n = f();
                (n, t.elapsed().as_secs_f64())
            })
            .join()
            .expect("the counter does not panic")
        });
        out = (n, out.1.min(s));
    }
    out
}

fn main() {
    let root = Path::new(env!("CARGO_MANIFEST_DIR"));
    let mb: usize = std::env::var("CTXJ_BENCH_MB").ok().and_then(|v| v.parse().ok()).unwrap_or(20);
    let runs: usize = std::env::var("CTXJ_PEERS_RUNS").ok().and_then(|v| v.parse().ok()).unwrap_or(3);
    let mut seed = Vec::new();
    gather(&root.join("sample-journals"), &mut seed);
    let shared = std::env::var_os("CTXJ_SHARED_SAMPLES")
        .map(PathBuf::from)
        .unwrap_or_else(|| root.join("..").join("shared").join("samples"));
    gather(&shared, &mut seed);
    gather(&root.join("src"), &mut seed);
    gather(&root.join("docs"), &mut seed);
    let texts = cut(&seed, mb);
    let bytes: usize = texts.iter().map(String::len).sum();
    let path = std::env::var_os("CTXJ_PEERS_CORPUS")
        .map(PathBuf::from)
        .unwrap_or_else(|| root.join("target").join("peers-corpus.jsonl"));
    let mut w = std::io::BufWriter::new(std::fs::File::create(&path).expect("create the corpus file"));
    for t in &texts {
        serde_json::to_writer(&mut w, t).expect("write the corpus");
        w.write_all(b"\n").expect("write the corpus");
    }
    w.flush().expect("write the corpus");

    let enc = Encoding::O200kBase;
    let (tk, bp) = (enc.bpe(), fast::tokenizer(enc));
    let _ = bp.count("warm up"); // build both encoders outside the timings
    let (n_ctxj, t_ctxj) = best(runs, || texts.iter().map(|s| fast::count(enc, s)).sum());
    let (n_tk, t_tk) = best(runs, || texts.iter().map(|s| tk.encode_ordinary(s).len() as u64).sum());
    let (n_bp, t_bp) = best(runs, || texts.iter().map(|s| bp.count(s.as_str()) as u64).sum());
    let refs: Vec<&str> = texts.iter().map(String::as_str).collect();
    let mut t_all = f64::INFINITY;
    let mut n_all = 0;
    for _ in 0..runs {
        let t = Instant::now();
        n_all = TiktokenEstimator::new(enc).count_many(&refs).iter().sum();
        t_all = t_all.min(t.elapsed().as_secs_f64());
    }
    assert!(n_ctxj == n_tk && n_bp == n_tk && n_all == n_tk, "counts differ: {n_ctxj} {n_tk} {n_bp} {n_all}");
    println!(
        "{}",
        serde_json::json!({
            "corpus": path, "texts": texts.len(), "bytes": bytes, "tokens": n_tk, "runs": runs,
            "threads": rayon::current_num_threads(),
            "ctxj_s": t_ctxj, "tiktoken_rs_s": t_tk, "bpe_openai_s": t_bp, "ctxj_all_cores_s": t_all,
        })
    );
}
