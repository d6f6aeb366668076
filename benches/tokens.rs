//! Token-counting throughput (issue 4): ~100 MB of mixed text (Rust code, Markdown prose, JSON
//! journals) cut into message-sized texts, counted with o200k_base
//!
//! * cold: a fresh estimator (empty memo) per iteration; every text is unique (each carries its
//!   own number), so every text goes through the tokenizer, in parallel (rayon);
//! * memoized: the same texts again on an estimator that has seen them all;
//!
//! and, once, outside the timed loop, the whole corpus as one line with no newline (the piece rule's
//! character-boundary cuts) and one million spaces. Size: `CTXJ_BENCH_MB` (default 100).
//!
//! Run: `cargo bench --bench tokens` (criterion prints time and throughput per iteration).

use std::path::Path;
use std::time::Instant;

use criterion::{criterion_group, criterion_main, BenchmarkId, Criterion, Throughput};

use ctxj_core::tokens::{Encoding, Estimator, TiktokenEstimator};

/// Every file under `dir` with one of `exts`, concatenated (sorted, deterministic).
fn gather(dir: &Path, exts: &[&str], out: &mut String) {
    let mut files: Vec<_> = walkdir::WalkDir::new(dir)
        .into_iter()
        .filter_map(|e| e.ok())
        .filter(|e| e.file_type().is_file())
        .filter(|e| e.path().extension().and_then(|x| x.to_str()).is_some_and(|x| exts.contains(&x)))
        .map(|e| e.into_path())
        .collect();
    files.sort();
    for f in files {
        if let Ok(s) = std::fs::read_to_string(&f) {
            out.push_str(&s);
            out.push('\n');
        }
    }
}

/// ~`mb` MB of texts of 1–16 KiB (cut at newlines), each made unique by a numbered first line.
fn corpus(mb: usize) -> Vec<String> {
    let root = Path::new(env!("CARGO_MANIFEST_DIR"));
    let mut seed = String::new();
    gather(&root.join("src"), &["rs"], &mut seed);
    gather(&root.join("docs"), &["md"], &mut seed);
    gather(&root.join("sample-journals"), &["jsonl"], &mut seed);
    gather(&root.join("tests"), &["jsonl", "json"], &mut seed);
    assert!(!seed.is_empty(), "no seed text found under {}", root.display());
    let want = mb * 1_000_000;
    let mut texts = Vec::new();
    let (mut total, mut pos, mut n) = (0usize, 0usize, 0usize);
    let bytes = seed.as_bytes();
    while total < want {
        let size = 1024 + (n * 7919) % (15 * 1024);
        let mut end = (pos + size).min(seed.len());
        while end < seed.len() && bytes[end - 1] != b'\n' {
            end += 1;
        }
        let mut t = format!("// text {n}\n");
        t.push_str(&seed[pos..end]);
        total += t.len();
        texts.push(t);
        pos = if end >= seed.len() { 0 } else { end };
        n += 1;
    }
    texts
}

/// A journal whose tool result is the 100 MB line: read, replayed and cache-simulated through the
/// library path `ctxj cache` uses (the line's pieces are already in `e`'s memo, so this times the
/// reader, projection, hashing and cache model, not the tokenizer).
fn journal_with_a_long_line(line: &str, e: &TiktokenEstimator) {
    let dir = tempfile::tempdir().expect("temp dir");
    let text = serde_json::to_string(line).expect("JSON string");
    let journal = format!(
        "{}\n{}\n{}\n{}\n{}\n{}\n",
        r#"{"rev":1,"ts":"2026-11-29T10:00:00Z","kind":"session","id":"long","model":"openai/gpt-5"}"#,
        r#"{"rev":2,"ts":"2026-11-29T10:00:01Z","kind":"user","id":"u1","text":"cat big.txt"}"#,
        r#"{"rev":3,"ts":"2026-11-29T10:00:02Z","kind":"assistant","id":"a1","text":"","calls":[{"id":"c1","tool":"run","args":{"command":"cat big.txt"}}]}"#,
        format_args!(
            r#"{{"rev":4,"ts":"2026-11-29T10:00:03Z","kind":"result","call":"c1","tool":"run","text":{text},"bytes":{}}}"#,
            line.len()
        ),
        r#"{"rev":5,"ts":"2026-11-29T10:00:04Z","kind":"assistant","id":"a2","text":"That is long."}"#,
        r#"{"rev":6,"ts":"2026-11-29T10:00:05Z","kind":"assistant","id":"a3","text":"Still long."}"#,
    );
    std::fs::write(dir.path().join("journal.jsonl"), journal).expect("write journal");
    let t = Instant::now();
    let session = ctxj_core::journal::Session::resolve(&dir.path().display().to_string(), None).expect("session");
    let j = session.load(Default::default()).expect("journal loads");
    let opts = ctxj_core::cache::Options::plain(ctxj_core::cache::CacheModel::OpenAi, None);
    let mut rows = Vec::new();
    for name in ["recorded", "baseline", "truncate-200"] {
        let s = ctxj_core::strategy::parse(name).expect("strategy");
        let sim = ctxj_core::cache::simulate(&j, &s, e, opts.clone(), |_, _| {});
        rows.push(format!("{name}: peak {} cached {}", sim.summary.peak_prompt, sim.summary.cached));
    }
    eprintln!(
        "journal with a 100 MB line: loaded and simulated 3 strategies in {:.2?} ({})",
        t.elapsed(),
        rows.join("; ")
    );
}

fn bench(c: &mut Criterion) {
    let mb: usize = std::env::var("CTXJ_BENCH_MB").ok().and_then(|v| v.parse().ok()).unwrap_or(100);
    let texts = corpus(mb);
    let refs: Vec<&str> = texts.iter().map(String::as_str).collect();
    let bytes: usize = texts.iter().map(String::len).sum();
    eprintln!(
        "corpus: {} texts, {:.1} MB, {} rayon threads",
        texts.len(),
        bytes as f64 / 1e6,
        rayon::current_num_threads()
    );
    let _ = Encoding::O200kBase.bpe(); // build the encoder outside the timings

    // One-off checks, not timed by criterion.
    let e = TiktokenEstimator::new(Encoding::O200kBase);
    // The corpus as one line: its newlines turned into spaces (unique content, no `\n` to cut at).
    let line: String = texts.concat().replace('\n', " ");
    let t = Instant::now();
    let n = e.count(&line);
    eprintln!(
        "one {:.0} MB line: {n} tokens in {:.2?} ({} distinct pieces tokenized)",
        line.len() as f64 / 1e6,
        t.elapsed(),
        e.stats().misses
    );
    let t = Instant::now();
    let n = e.count(&" ".repeat(1_000_000));
    eprintln!("a million spaces: {n} tokens in {:.2?}", t.elapsed());
    journal_with_a_long_line(&line, &e);

    let mut g = c.benchmark_group("tokens");
    g.sample_size(10);
    g.throughput(Throughput::Bytes(bytes as u64));
    g.bench_function(BenchmarkId::new("cold", format!("{mb}MB")), |b| {
        b.iter(|| {
            let e = TiktokenEstimator::new(Encoding::O200kBase);
            e.count_many(&refs).iter().sum::<u64>()
        })
    });
    let warm = TiktokenEstimator::new(Encoding::O200kBase);
    let total: u64 = warm.count_many(&refs).iter().sum();
    eprintln!("corpus tokens: {total} ({:.2} bytes/token)", bytes as f64 / total as f64);
    g.bench_function(BenchmarkId::new("memoized", format!("{mb}MB")), |b| {
        b.iter(|| warm.count_many(&refs).iter().sum::<u64>())
    });
    g.finish();
}

criterion_group!(benches, bench);
criterion_main!(benches);
