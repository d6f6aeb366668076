#!/usr/bin/env bash
# scripts/bench-agents.sh — `ctxj usage --agent X` throughput of every usage reader (issue 29),
# written between the `agents:begin` / `agents:end` markers of docs/performance.md.
#
# Each agent's corpus folder (../shared/corpus, see its README) is copied N times into
# bench-out/agents/<agent>/<i>/ (distinct folders, so every copy is found and read; ids repeat,
# so de-duplication works as hard as on one big store) until it holds about BENCH_AGENTS_MB MiB,
# then `ctxj usage --agent X --json` reads all copies (each copy a path); the figure is the best
# of BENCH_RUNS runs. ccusage is not installed on the measuring machine, so the table gives
# ctxj's throughput only (no ratio). Run alone (`scripts/bench-agents.sh`) or as
# `BENCH_ONLY=agents scripts/bench`.
#
# Environment:
#   BENCH_AGENTS_MB=20   data per agent (MiB, approximate)
#   BENCH_RUNS=3         runs per agent (the best is kept)
#   BENCH_KEEP=1         keep the copies
set -euo pipefail
cd "$(dirname "$0")/.."
ROOT=$PWD
OUT=$ROOT/bench-out/agents
DOC=$ROOT/docs/performance.md
CORPUS=${CTXJ_SHARED_CORPUS:-$ROOT/../shared/corpus}
TARGET_MB=${BENCH_AGENTS_MB:-20}
RUNS=${BENCH_RUNS:-3}
CTXJ=$ROOT/target/release/ctxj
[ -d "$CORPUS" ] || { echo "no shared corpus at $CORPUS" >&2; exit 2; }
[ -x "$CTXJ" ] || cargo build --release --quiet --features synth
LOAD=$(cut -d' ' -f1 /proc/loadavg)

# agent  corpus folder (what its environment variable names)
AGENTS="gemini:gemini/tmp opencode:opencode kilo:kilo qwen:qwen kimi:kimi-code openclaw:openclaw hermes:hermes
copilot:copilot amp:amp droid:droid codebuff:codebuff cline:cline"

ROWS=""
for pair in $AGENTS; do
  agent=${pair%%:*}; src=$CORPUS/${pair#*:}
  dir=$OUT/$agent
  bytes_one=$(du -sb "$src" | cut -f1)
  copies=$(( TARGET_MB * 1048576 / bytes_one + 1 ))
  if [ "$(cat "$dir/.copies" 2>/dev/null)" != "$copies" ]; then
    rm -rf "$dir"; mkdir -p "$dir"
    for i in $(seq 1 "$copies"); do cp -r "$src" "$dir/$i"; done
    echo "$copies" >"$dir/.copies"
  fi
  bytes=$(( bytes_one * copies ))
  mapfile -t paths < <(seq 1 "$copies" | sed "s|^|$dir/|")
  best=""
  for _ in $(seq 1 "$RUNS"); do
    s=$(date +%s.%N)
    HOME=$OUT "$CTXJ" usage --agent "$agent" --json --timezone UTC "${paths[@]}" >/dev/null
    e=$(date +%s.%N)
    t=$(awk -v a="$s" -v b="$e" 'BEGIN{print b - a}')
    best=$(awk -v a="${best:-$t}" -v b="$t" 'BEGIN{print (b < a) ? b : a}')
  done
  files=$(find "$src" -type f | wc -l)
  ROWS+="| $agent | $(awk -v b="$bytes" 'BEGIN{printf "%.1f", b / 1048576}') MiB ($copies × $files file(s)) | $(printf %.2f "$best") s | $(awk -v b="$bytes" -v s="$best" 'BEGIN{printf "%.0f", b / 1048576 / s}') MB/s |"$'\n'
done

TABLE=$OUT/table.md
{
  echo "<!-- agents:begin -->"
  echo "Measured $(date -u +%Y-%m-%d) on $(nproc) cores (load average $LOAD at the start), \`scripts/bench-agents.sh\`, best of $RUNS runs; ccusage is not installed here, so only ctxj's throughput is given."
  echo
  echo "| agent | data read (copies of the corpus) | \`ctxj usage --agent X --json\` | throughput |"
  echo "|---|---|---|---|"
  printf '%s' "$ROWS"
  echo "<!-- agents:end -->"
} >"$TABLE"
if grep -q '<!-- agents:begin -->' "$DOC"; then
  awk -v t="$TABLE" '/<!-- agents:begin -->/ { while ((getline l < t) > 0) print l; skip = 1; next }
    /<!-- agents:end -->/ { skip = 0; next } !skip { print }' "$DOC" >"$DOC.tmp" && mv "$DOC.tmp" "$DOC"
else
  { echo; cat "$TABLE"; } >>"$DOC"
fi
cat "$TABLE"
[ "${BENCH_KEEP:-0}" = 1 ] || rm -rf "$OUT"
