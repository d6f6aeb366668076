//! Criterion benchmarks of ctxj's core hot paths: line index, parse, replay, request hashing.
//!
//! Input: the journal named by `CTXJ_BENCH_JOURNAL`, else a 2,000-turn synthetic journal generated
//! into a temporary directory. `scripts/bench` runs these on the synthetic 10k-turn journal and
//! turns the estimates into the ratios of `docs/performance.md`.
//!
//! Run: `cargo bench --bench core` (add `-- parse` to run one group).

use std::hint::black_box;
use std::path::{Path, PathBuf};
use std::time::Duration;

use criterion::{criterion_group, criterion_main, Criterion, Throughput};

use ctxj_core::journal::index::{count_newlines, index_lines};
use ctxj_core::journal::mmap::Source;
use ctxj_core::journal::Journal;
use ctxj_core::journal::{parse_bytes, ReadOptions};
use ctxj_core::projection::block::sha256_hex;
use ctxj_core::projection::{for_each_request, request_at_turn, Projection, Replayer, RequestHasher};
use ctxj_core::synth::{generate, SynthOptions};

fn input() -> (PathBuf, Vec<u8>, Option<tempfile::TempDir>) {
    if let Some(p) = std::env::var_os("CTXJ_BENCH_JOURNAL") {
        let p = PathBuf::from(p);
        let bytes = std::fs::read(&p).expect("CTXJ_BENCH_JOURNAL is readable");
        return (p, bytes, None);
    }
    let d = tempfile::tempdir().expect("temp dir");
    let out = d.path().join("synth");
    generate(&SynthOptions { turns: 2000, seed: 1, size_mb: None, mirrors: None }, &out, &mut |_| {}).expect("synth");
    let p = out.join("journal.jsonl");
    let bytes = std::fs::read(&p).expect("read");
    (p, bytes, Some(d))
}

/// Calls `f` with the requests of the first `k` turns.
fn first_k(journal: &Journal, k: usize, mut f: impl FnMut(&Projection)) {
    let mut r = Replayer::new(journal);
    for &idx in journal.turns.iter().take(k) {
        r.advance_to(idx);
        f(r.projection());
    }
}

fn benches(c: &mut Criterion) {
    let (path, bytes, _keep) = input();
    let journal = parse_bytes(&path, &bytes, ReadOptions::default()).expect("parses");
    let turns = journal.turns.len();

    let mut g = c.benchmark_group("line_index");
    g.throughput(Throughput::Bytes(bytes.len() as u64));
    g.bench_function("index_lines", |b| b.iter(|| index_lines(black_box(&bytes)).len()));
    // What `wc -l` does: open the file (mapped when large, as `Session::load` does) and index it.
    g.bench_function("mmap_index_lines", |b| b.iter(|| index_lines(Source::open(&path).expect("opens").bytes()).len()));
    g.bench_function("count_newlines", |b| b.iter(|| count_newlines(black_box(&bytes))));
    g.finish();

    let mut g = c.benchmark_group("parse");
    g.throughput(Throughput::Bytes(bytes.len() as u64));
    g.bench_function("parse_bytes", |b| {
        b.iter(|| parse_bytes(Path::new("j"), black_box(&bytes), ReadOptions::default()).expect("parses").records.len())
    });
    g.finish();

    let mut g = c.benchmark_group("replay");
    g.throughput(Throughput::Elements(turns as u64));
    g.bench_function("request_at_last_turn", |b| b.iter(|| request_at_turn(&journal, turns).map(|p| p.len())));
    g.bench_function("every_request", |b| {
        b.iter(|| {
            let mut n = 0;
            for_each_request(&journal, |_, _, p| n += p.len());
            n
        })
    });
    g.finish();

    let mut g = c.benchmark_group("hash");
    g.throughput(Throughput::Elements(turns as u64));
    g.bench_function("every_request_incremental", |b| {
        b.iter(|| {
            let mut h = RequestHasher::new();
            let mut n = 0;
            for_each_request(&journal, |_, _, p| n += h.hash(p.blocks())[0] as usize);
            n
        })
    });
    // From scratch on the first 500 turns only: it is O(turns × history), the cost being avoided.
    let k = turns.min(500);
    g.throughput(Throughput::Elements(k as u64));
    g.bench_function("first_500_from_scratch", |b| {
        b.iter(|| {
            let mut n = 0;
            first_k(&journal, k, |p| n += sha256_hex(&p.canonical()).len());
            n
        })
    });
    g.bench_function("first_500_incremental", |b| {
        b.iter(|| {
            let mut h = RequestHasher::new();
            let mut n = 0;
            first_k(&journal, k, |p| n += h.hash(p.blocks())[0] as usize);
            n
        })
    });
    g.finish();
}

criterion_group! {
    name = core;
    config = Criterion::default().sample_size(10).warm_up_time(Duration::from_secs(1)).measurement_time(Duration::from_secs(4));
    targets = benches
}
criterion_main!(core);
