#!/usr/bin/env bash
# scripts/bench-import-agents.sh — throughput of the issue-29 content importers (Gemini CLI legacy
# JSON and JSONL, Qwen Code, Kimi Code, Cline, OpenClaw) in MB/s, written between the
# `agents:begin` / `agents:end` markers of docs/performance.md.
#
# The corpus transcripts are small (1 KB – 700 KB: process start-up would dominate), so each one
# is scaled: its conversation repeated until the file is ≥ BENCH_AGENTS_MB (default 20) MB, every
# id-like value given a per-copy suffix so calls and messages stay distinct (bench-out/agents/,
# git-ignored). Each row times `ctxj show --at rev 1 --json` (detect, read, import every record)
# against `jq -c .` on the same bytes (parse and print the JSON once), best of BENCH_RUNS.
#
# Needs ../shared/corpus (or CTXJ_SHARED_CORPUS), hyperfine, jq, python3.
set -euo pipefail
cd "$(dirname "$0")/.."
ROOT=$PWD
CORPUS=${CTXJ_SHARED_CORPUS:-$ROOT/../shared/corpus}
OUT=$ROOT/bench-out/agents
DOC=$ROOT/docs/performance.md
RUNS=${BENCH_RUNS:-3}
MB=${BENCH_AGENTS_MB:-20}
CTXJ=$ROOT/target/release/ctxj
export CTXJ_NO_CACHE=1
[ -d "$CORPUS" ] || { echo "no corpus at $CORPUS" >&2; exit 2; }
mkdir -p "$OUT"
command -v hyperfine >/dev/null || { apt-get install -y -q hyperfine >/dev/null 2>&1 || sudo apt-get install -y -q hyperfine; }
cargo build --release --quiet
LOAD=$(cut -d' ' -f1 /proc/loadavg)

scale() { # scale SRC DEST: the conversation repeated to ≥ $MB MB, ids suffixed per copy
  python3 - "$1" "$2" "$MB" <<'PY'
import json, sys
src, dest, mb = sys.argv[1], sys.argv[2], int(sys.argv[3])
IDS = {"id", "uuid", "parentUuid", "toolCallId", "tool_use_id", "call_id", "stepUuid", "parentId"}
def suffix(v, k):
    if isinstance(v, dict):
        return {key: (f"{x}~{k}" if key in IDS and isinstance(x, str) else suffix(x, k)) for key, x in v.items()}
    if isinstance(v, list):
        return [suffix(x, k) for x in v]
    return v
raw = open(src, "rb").read()
target = mb << 20
first = next(l for l in raw.splitlines() if l.strip())
try:
    json.loads(first); lines = True
except ValueError:
    lines = False
if lines:
    objs = [json.loads(l) for l in raw.splitlines() if l.strip()]
    head = [o for o in objs[:1] if "type" in o and o["type"] in ("session", "metadata") or "projectHash" in o]
    body = objs[len(head):]
    out, size, k = [json.dumps(h) for h in head], 0, 0
    while size < target:
        for o in body:
            s = json.dumps(suffix(o, k) if k else o)
            out.append(s); size += len(s) + 1
        k += 1
    open(dest, "w").write("\n".join(out) + "\n")
else:
    doc = json.loads(raw)
    msgs = doc if isinstance(doc, list) else doc["messages"]
    per = max(1, len(json.dumps(msgs)))
    copies = [suffix(m, k) if k else m for k in range(target // per + 1) for m in msgs]
    if isinstance(doc, list):
        doc = copies
    else:
        doc["messages"] = copies
    open(dest, "w").write(json.dumps(doc, indent=1))
PY
}

rows=()
row() { # row LABEL SRC
  local label=$1 src=$2 f
  f=$OUT/$(basename "$src")
  [ -s "$f" ] || scale "$src" "$f"
  local bytes; bytes=$(stat -c %s "$f")
  hyperfine -N --runs "$RUNS" --warmup 1 --export-json "$OUT/h.json" \
    "$CTXJ show --at rev 1 --json $f" "jq -c . $f" >/dev/null 2>&1
  local t r; t=$(jq '.results[0].min' "$OUT/h.json"); r=$(jq '.results[1].min' "$OUT/h.json")
  rows+=("$(python3 -c "b=$bytes;t=$t;r=$r;print(f'| {\"$label\"} ({b/1e6:.0f} MB) | {b/1e6/t:.0f} MB/s | jq -c .: {b/1e6/r:.0f} MB/s | {r/t:.2f} |')")")
}
row "Gemini CLI legacy JSON" "$CORPUS/gemini/tmp/entire-cli/chats/session-2026-01-15T20-51-f7633853.json"
row "Gemini CLI JSONL" "$CORPUS/gemini/tmp/agent-sessions/chats/session-2026-04-29T21-39-gemini_s.jsonl"
row "Qwen Code" "$CORPUS/qwen/projects/qwentest/chats/69f0814a-8bfc-4c8e-93d3-05757f17b96f.jsonl"
row "Kimi Code wire.jsonl" "$(ls "$CORPUS"/kimi-code/sessions/*/*/agents/main/wire.jsonl)"
row "Cline SDK messages.json" "$(ls "$CORPUS"/cline/data/sessions/*/*.messages.json)"
row "Cline legacy task" "$CORPUS/cline/data/tasks/agentlogs-crud/api_conversation_history.json"
row "OpenClaw (pi reader)" "$CORPUS/openclaw/agents/okbest/sessions/00957d43-44a5-4c46-a7ef-29e8bafe0642.jsonl"

table=$(printf '%s\n' \
  "Measured $(date -u +%Y-%m-%d) with load average $LOAD at the start (2 cores shared with other builds: figures under load)." \
  "" \
  "| importer: \`show --at rev 1 --json\` on a scaled corpus transcript | ctxj | reference | ctxj / reference speed |" \
  "|---|---:|---|---:|" "${rows[@]}")
python3 - "$DOC" "$table" <<'PY'
import sys, re
doc, table = sys.argv[1], sys.argv[2]
s = open(doc).read()
block = "<!-- agents:begin -->\n" + table + "\n<!-- agents:end -->"
if "<!-- agents:begin -->" in s:
    s = re.sub(r"<!-- agents:begin -->.*?<!-- agents:end -->", lambda m: block, s, flags=re.S)
else:
    s = s.rstrip("\n") + "\n\n## Importers of issue 29 (scripts/bench-import-agents.sh)\n\n" + block + "\n"
open(doc, "w").write(s)
PY
printf '%s\n' "$table"
