# scripts/bench-tune.sh — issue 34's row: `ctxj tune` sweeping every harness's configurations over
# the shared transcripts (../shared/samples + ../shared/corpus), sourced by scripts/bench when
# BENCH_ONLY=tune (it uses the helpers defined before the synthetic journals: log; no journal is
# generated). Writes its table between the
# `tune:begin` / `tune:end` markers of docs/performance.md. Target: the whole sweep (about 50
# configurations) under a minute on 2 cores. The load average is printed: on a shared machine the
# wall time moves with it.

TN=$OUT/tune.md
timed() { # timed CMD...: "seconds MiB" of one run (output to /dev/null)
  /usr/bin/time -f '%e %M' -o "$OUT/timed.tmp" "$@" >/dev/null 2>&1 || true
  awk '{ t = $1; m = $2 } END { printf "%s %.0f\n", t, m / 1024 }' "$OUT/timed.tmp"
}
S=$ROOT/../shared
[ -d "$S/samples" ] && [ -d "$S/corpus" ] || { log "tune: ../shared/samples or ../shared/corpus missing"; exit 1; }
total=0 configs=0 sessions=0 rows=""
for h in claude-code api codex pi; do
  case $h in
    api) dirs=("$S/samples/claude-code" "$S/corpus/claude-code") ;;
    *) dirs=("$S/samples/$h" "$S/corpus/$h") ;;
  esac
  log "tune: $h"
  "$CTXJ" tune "${dirs[@]}" --harness "$h" --format json 2>/dev/null >"$OUT/tune-$h.json"
  read -r t m < <(timed "$CTXJ" tune "${dirs[@]}" --harness "$h" --format json)
  n=$(jq '.configs | length' "$OUT/tune-$h.json"); k=$(jq '.sessions | length' "$OUT/tune-$h.json")
  run=$(jq '.replays' "$OUT/tune-$h.json"); saved=$(jq '.replays_saved' "$OUT/tune-$h.json")
  rows+="| \`tune --harness $h\`, $k sessions × $n configurations | $t s, $m MiB | $run replays run, $saved saved | | | — |"$'\n'
  total=$(awk -v a="$total" -v b="$t" 'BEGIN { print a + b }'); configs=$((configs + n)); sessions=$((sessions + k))
done
LOAD_END=$(cut -d' ' -f1 /proc/loadavg)
{
  echo "<!-- tune:begin -->"
  echo "Measured $(date -u +%Y-%m-%d) on $(nproc) cores (load average $LOAD_AT_START at the start, $LOAD_END at the end), \`BENCH_ONLY=tune scripts/bench\`, one run each, no persistent token memo."
  echo
  echo "| measurement | ctxj | reference | ratio | target | met |"
  echo "|---|---|---|---|---|---|"
  printf '%s' "$rows"
  echo "| the whole sweep: $configs configurations over the shared transcripts | $total s | | | < 60 s | $(awk -v t="$total" 'BEGIN { print (t < 60) ? "yes" : "**no**" }') |"
  echo "<!-- tune:end -->"
} >"$TN"
if grep -q '<!-- tune:begin -->' "$DOC"; then
  awk -v tables="$TN" '
    /<!-- tune:begin -->/ { while ((getline l < tables) > 0) print l; skip = 1; next }
    /<!-- tune:end -->/ { skip = 0; next }
    !skip { print }' "$DOC" >"$DOC.tmp" && mv "$DOC.tmp" "$DOC"
else
  { echo; echo "## \`ctxj tune\` (issue 34)"; echo; cat "$TN"; } >>"$DOC"
fi
cat "$TN"
