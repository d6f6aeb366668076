#!/bin/sh
# Builds and runs the fuzz targets without cargo-fuzz (same instrumentation as `cargo fuzz run
# -s none -a`: libFuzzer coverage, debug assertions and overflow checks on — see Cargo.toml).
# Usage: fuzz/run.sh TARGET [SECONDS]   (corpus in fuzz/corpus/TARGET, crashes in fuzz/artifacts/)
set -eu
cd "$(dirname "$0")"
target=$1
secs=${2:-600}
export RUSTFLAGS="-Cpasses=sancov-module -Cllvm-args=-sanitizer-coverage-level=4 \
 -Cllvm-args=-sanitizer-coverage-inline-8bit-counters -Cllvm-args=-sanitizer-coverage-pc-table \
 -Cllvm-args=-sanitizer-coverage-trace-compares --cfg fuzzing -Cdebug-assertions -Coverflow-checks"
cargo +nightly build --release --bin "$target" --target x86_64-unknown-linux-gnu
mkdir -p "corpus/$target" "artifacts/$target"
exec "target/x86_64-unknown-linux-gnu/release/$target" "corpus/$target" \
  -artifact_prefix="artifacts/$target/" -max_total_time="$secs" -print_final_stats=1
