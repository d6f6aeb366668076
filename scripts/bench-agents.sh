#!/usr/bin/env bash
# scripts/bench-agents.sh — `ctxj usage --agent X` throughput of every usage reader against
# ccusage 20.0.24's `ccusage X daily` on the same files (issue 29), written between the
# `agents:begin` / `agents:end` markers of docs/performance.md.
#
# Each agent's corpus folder (../shared/corpus, see its README) is copied N times into
# bench-out/agents/<agent>/<i>/ (distinct folders, so every copy is found and read; ids repeat,
# so de-duplication works as hard as on one big store) until it holds about BENCH_AGENTS_MB MiB.
# `ctxj usage --agent X --json` reads all copies (each copy a path); ccusage reads the same
# copies through the agent's environment variable (a comma list of the copies; Copilot's
# COPILOT_HOME takes one folder, so its copies are laid out as sibling sessions and otel files of
# one folder, which ctxj reads too), with HOME an empty folder so it finds nothing else. Each
# figure is the best of BENCH_RUNS runs. The token totals of both are compared on the copies, and
# against ccusage on one copy (×N: every copy counted; ×1: ids repeat, so both de-duplicate).
# Run alone (`scripts/bench-agents.sh`) or as `BENCH_ONLY=agents scripts/bench`.
#
# Environment:
#   BENCH_AGENTS_MB=20   data per agent (MiB, approximate)
#   BENCH_RUNS=3         runs per agent and tool (the best is kept)
#   BENCH_KEEP=1         keep the copies
#   CCUSAGE=PATH         a ccusage 20.0.24 executable (else BENCH_CCUSAGE, else the native
#                        binary npx left in ~/.npm/_npx; none found: ctxj's throughput only)
#   BENCH_AGENTS="a b"   only these agents (default: all)
#   BENCH_CTXJ=PATH      the ctxj to time (default: target/release/ctxj, built when absent; a
#                        debug build checks the script, its times are not figures to publish)
#
# Every reader has a row: the corpus agents are timed; Antigravity, Grok and ZCode (no corpus)
# get a row saying so. Codex's copies are laid out in one CODEX_HOME (sessions/<i>/...), Goose's
# root holds one sessions.db (one copy only: start-up, not throughput).
set -euo pipefail
cd "$(dirname "$0")/.."
ROOT=$PWD
OUT=$ROOT/bench-out/agents
DOC=$ROOT/docs/performance.md
CORPUS=${CTXJ_SHARED_CORPUS:-$ROOT/../shared/corpus}
TARGET_MB=${BENCH_AGENTS_MB:-20}
RUNS=${BENCH_RUNS:-3}
CTXJ=${BENCH_CTXJ:-$ROOT/target/release/ctxj}
[ -d "$CORPUS" ] || { echo "no shared corpus at $CORPUS" >&2; exit 2; }
[ -x "$CTXJ" ] || cargo build --release --quiet --features synth
export CTXJ_NO_CACHE=1
LOAD=$(cut -d' ' -f1-3 /proc/loadavg)

CC=${CCUSAGE:-${BENCH_CCUSAGE:-}}
if [ -z "$CC" ]; then
  CC=$(ls "$HOME"/.npm/_npx/*/node_modules/@ccusage/ccusage-linux-x64/bin/ccusage 2>/dev/null | head -n1 || true)
fi
CCV=""
if [ -n "$CC" ] && [ -x "$CC" ]; then CCV=$("$CC" --version 2>/dev/null | awk '{print $NF}'); else CC=""; fi
echo "ccusage: ${CC:-none} ${CCV}; load average $LOAD; best of $RUNS runs" >&2

# agent : corpus folder(s) the agent's variable names (+ joins two) : that variable
AGENTS="claude:claude-code:CLAUDE_CONFIG_DIR codex:codex:CODEX_HOME pi:pi/sessions:PI_AGENT_DIR
gemini:gemini/tmp:GEMINI_DATA_DIR opencode:opencode:OPENCODE_DATA_DIR kilo:kilo:KILO_DATA_DIR
qwen:qwen:QWEN_DATA_DIR kimi:kimi+kimi-code:KIMI_DATA_DIR openclaw:openclaw:OPENCLAW_DIR
hermes:hermes:HERMES_HOME goose:goose:GOOSE_PATH_ROOT copilot:copilot:COPILOT_HOME amp:amp:AMP_DATA_DIR
droid:droid:DROID_SESSIONS_DIR codebuff:codebuff:CODEBUFF_DATA_DIR cline:cline:-"
# Readers with no corpus: a row each, saying why there is no figure.
NO_CORPUS="antigravity grok zcode"

EMPTY_HOME=$OUT/.home
mkdir -p "$EMPTY_HOME"

# best of RUNS wall times of "$@" (stdout of the last run in $OUT/last.json)
best_of() {
  local best="" s e t
  for _ in $(seq 1 "$RUNS"); do
    s=$(date +%s.%N)
    "$@" >"$OUT/last.json"
    e=$(date +%s.%N)
    t=$(awk -v a="$s" -v b="$e" 'BEGIN{print b - a}')
    best=$(awk -v a="${best:-$t}" -v b="$t" 'BEGIN{print (b < a) ? b : a}')
  done
  echo "$best"
}
total_of() { python3 -c 'import json,sys; t=json.load(open(sys.argv[1]))["totals"]; print(t.get(sys.argv[2], 0))' "$1" "$2"; }
mbs() { awk -v b="$1" -v s="$2" 'BEGIN{printf "%.1f", b / 1048576 / s}'; }

ROWS=""; NOTES=""
wanted() { [ -z "${BENCH_AGENTS:-}" ] || [[ " $BENCH_AGENTS " == *" $1 "* ]]; }
for entry in $AGENTS; do
  agent=${entry%%:*}; rest=${entry#*:}; srcs=${rest%%:*}; var=${rest#*:}
  wanted "$agent" || continue
  dir=$OUT/$agent
  bytes_one=0; files=0
  for s in ${srcs//+/ }; do
    bytes_one=$(( bytes_one + $(du -sb "$CORPUS/$s" | cut -f1) ))
    files=$(( files + $(find "$CORPUS/$s" -type f | wc -l) ))
  done
  copies=$(( TARGET_MB * 1048576 / bytes_one + 1 ))
  [ "$agent" = goose ] && copies=1
  if [ "$(cat "$dir/.copies" 2>/dev/null)" != "$copies" ]; then
    rm -rf "$dir"; mkdir -p "$dir"
    for i in $(seq 1 "$copies"); do
      if [ "$agent" = copilot ]; then
        # one COPILOT_HOME: session-state/<id>-<i>/ and otel/<name>-<i>.jsonl
        mkdir -p "$dir/all/session-state" "$dir/all/otel"
        for d in "$CORPUS/$srcs"/session-state/*/; do cp -r "$d" "$dir/all/session-state/$(basename "$d")-$i"; done
        for f in "$CORPUS/$srcs"/otel/*.jsonl; do cp "$f" "$dir/all/otel/$(basename "$f" .jsonl)-$i.jsonl"; done
      elif [ "$agent" = codex ]; then
        # one CODEX_HOME: sessions/<i>/YYYY/MM/DD/rollout-….jsonl
        mkdir -p "$dir/all/sessions"; cp -r "$CORPUS/$srcs/sessions" "$dir/all/sessions/$i"
      else
        k=0
        for s in ${srcs//+/ }; do k=$((k + 1)); cp -r "$CORPUS/$s" "$dir/$i.$k"; done
      fi
    done
    echo "$copies" >"$dir/.copies"
  fi
  bytes=$(( bytes_one * copies ))
  if [ "$agent" = copilot ] || [ "$agent" = codex ]; then
    paths=("$dir/all")
  else
    mapfile -t paths < <(find "$dir" -mindepth 1 -maxdepth 1 -type d -name '[0-9]*' | sort -V)
  fi
  # one copy, for the totals of a single copy (a copy: SQLite readers may leave -wal/-shm files
  # beside a database, and the shared corpus stays as it is)
  k=0; one=""
  for s in ${srcs//+/ }; do
    k=$((k + 1)); [ -d "$dir/one.$k" ] || cp -r "$CORPUS/$s" "$dir/one.$k"; one+="${one:+,}$dir/one.$k"
  done
  cagent=$agent; [ "$agent" = claude ] && cagent=claude-code
  t_ctxj=$(best_of env HOME="$EMPTY_HOME" "$CTXJ" usage --agent "$cagent" --json --timezone UTC "${paths[@]}")
  tok_ctxj=$(total_of "$OUT/last.json" total_tokens)
  row="| $agent | $(awk -v b="$bytes" 'BEGIN{printf "%.1f", b / 1048576}') MiB ($copies × $files file(s)) | $(printf %.2f "$t_ctxj") s | $(mbs "$bytes" "$t_ctxj") |"
  if [ -z "$CC" ] || [ "$var" = - ]; then
    row+=" — | — | — | $tok_ctxj (ctxj only) |"
  else
    list=$(IFS=,; echo "${paths[*]}")
    t_cc=$(best_of env -i PATH="$PATH" HOME="$EMPTY_HOME" "$var=$list" "$CC" "$agent" daily --json --offline -z UTC)
    tok_cc=$(total_of "$OUT/last.json" totalTokens)
    env -i PATH="$PATH" HOME="$EMPTY_HOME" "$var=$one" "$CC" "$agent" daily --json --offline -z UTC >"$OUT/one.json"
    cc_one=$(total_of "$OUT/one.json" totalTokens)
    HOME="$EMPTY_HOME" "$CTXJ" usage --agent "$cagent" --json --timezone UTC ${one//,/ } >"$OUT/one.json"
    ctxj_one=$(total_of "$OUT/one.json" total_tokens)
    x() { awk -v a="$1" -v b="$2" 'BEGIN{ if (b > 0) printf "×%.0f", a / b; else print "×?" }'; }
    if [ "$ctxj_one" = "$cc_one" ]; then one_s="one copy: both $cc_one"; else one_s="one copy: **ctxj $ctxj_one, ccusage $cc_one**"; fi
    if [ "$tok_ctxj" = "$tok_cc" ]; then
      agree="= $tok_cc ($(x "$tok_cc" "$cc_one") one copy)"
    else
      agree="**differ**: ctxj $tok_ctxj ($(x "$tok_ctxj" "$ctxj_one")), ccusage $tok_cc ($(x "$tok_cc" "$cc_one")); $one_s"
    fi
    row+=" $(printf %.2f "$t_cc") s | $(mbs "$bytes" "$t_cc") | $(awk -v a="$t_cc" -v b="$t_ctxj" 'BEGIN{printf "%.1f×", a / b}') | $agree |"
  fi
  echo "$row" >&2
  ROWS+="$row"$'\n'
done
for agent in $NO_CORPUS; do
  wanted "$agent" || continue
  ROWS+="| $agent | no corpus (synthetic fixtures in the tests only) | — | — | — | — | — | — |"$'\n'
done
LOAD_END=$(cut -d' ' -f1-3 /proc/loadavg)

TABLE=$OUT/table.md
{
  echo "<!-- agents:begin -->"
  if [ -n "$CC" ]; then
    echo "Measured $(date -u +%Y-%m-%d) on $(nproc) cores (load average $LOAD at the start, $LOAD_END at the end), \`scripts/bench-agents.sh\`, best of $RUNS runs per tool, against ccusage $CCV (the native binary, \`ccusage X daily --json --offline -z UTC\`, the agent's variable naming the copies, HOME empty). Ratio: ccusage's time / ctxj's. Tokens: both tools' total tokens on the copies and how many copies' worth each counts (×1: the copies repeat ids and the tool de-duplicates them); where they differ, the totals of one copy are given too."
  else
    echo "Measured $(date -u +%Y-%m-%d) on $(nproc) cores (load average $LOAD at the start, $LOAD_END at the end), \`scripts/bench-agents.sh\`, best of $RUNS runs; ccusage is not installed here, so only ctxj's throughput is given."
  fi
  echo
  echo "| agent | data read (copies of the corpus) | ctxj time | ctxj MB/s | ccusage time | ccusage MB/s | ratio | total tokens |"
  echo "|---|---|---:|---:|---:|---:|---:|---|"
  printf '%s' "$ROWS"
  echo
  echo "Cline has no ccusage command (20.0.24), so only ctxj's side. Goose: ccusage's \`GOOSE_PATH_ROOT\` takes one root and reads its one \`sessions.db\`, so its row reads one copy (a 53 KB database: start-up, not throughput). Antigravity, Grok and ZCode: no corpus (their readers are tested on synthetic fixtures only). Claude Code's larger measurement is the \`usage\` rows of the first table (\`scripts/bench\`)."
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
