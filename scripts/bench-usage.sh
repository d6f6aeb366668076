# scripts/bench-usage.sh — `ctxj usage` vs ccusage 20.0.24 on the same ≥ 300 MB folder (issue 20),
# sourced by scripts/bench (it uses the helpers defined there: log, hf, rss, div, le; and CTXJ,
# OUT, ROOT). Sets USAGE_ROWS: the table rows, session grouping then day grouping.
#
# The folder: the shared Claude Code samples copied until it holds ≥ 300 MB, each copy a project
# of its own. The copies repeat every message id + request id, so both tools' de-duplication
# keeps one call of each and their totals are the samples' own: the row checks that they read
# the same calls the same way, not only that they read fast.
#
# Checked on every run: each ccusage `session` row equals ctxj's row of the same project/session
# in input, output, cache-write and cache-read tokens (minus what ctxj reports apart as
# `not_counted_by_ccusage`: usage lines written with a space after the colon, which ccusage's
# byte prefilter skips) and in cost (within $0.000001). For `daily`, the days that differ are
# named: ccusage's `daily` (not its `session`) also counts subagent calls copied into
# `agent_progress` records (docs/importing.md), so those days differ by design.
#
#   BENCH_CCUSAGE=PATH   a ccusage 20.0.24 executable (else npm installs it into bench-out/ccusage)

CC_SRC=$ROOT/../shared/samples/claude-code
[ -d "$CC_SRC" ] || CC_SRC=$ROOT/../../shared/samples/claude-code
CC_HOME=$OUT/claude-home
USAGE_ROWS=""
if [ "${BENCH_NO_USAGE:-0}" != 1 ] && [ -d "$CC_SRC/projects" ]; then
  if [ ! -f "$CC_HOME/.complete" ]; then
    log "copying the Claude Code samples up to 300 MB"
    rm -rf "$CC_HOME"; mkdir -p "$CC_HOME/projects"
    i=0
    while [ "$(du -sm "$CC_HOME" | cut -f1)" -lt 300 ]; do
      i=$((i + 1))
      for p in "$CC_SRC"/projects/*; do cp -r "$p" "$CC_HOME/projects/$(basename "$p")-copy$i"; done
    done
    touch "$CC_HOME/.complete"
  fi
  CCU=${BENCH_CCUSAGE:-$OUT/ccusage/node_modules/.bin/ccusage}
  [ -x "$CCU" ] || npm install --silent --prefix "$OUT/ccusage" ccusage@20.0.24 >/dev/null
  CCU_VERSION=$("$CCU" --version 2>/dev/null | tail -1)
  export CLAUDE_CONFIG_DIR=$CC_HOME LOG_LEVEL=0
  ccu() { env HOME="$OUT" "$CCU" claude "$@" --json --offline -z UTC; }
  MB=$(du -sm "$CC_HOME/" | cut -f1)
  # Back to back, for each grouping: ccusage, then ctxj.
  T_CCU=$(hf ccusage env HOME="$OUT" "$CCU" claude session --json --offline -z UTC)
  T_USAGE=$(hf usage "$CTXJ" usage "$CC_HOME/projects" --json --timezone UTC)
  T_CCU_D=$(hf ccusage-daily env HOME="$OUT" "$CCU" claude daily --json --offline -z UTC)
  T_USAGE_D=$(hf usage-daily "$CTXJ" usage "$CC_HOME/projects" --json --timezone UTC --by day)
  R_CCU=$(rss env HOME="$OUT" "$CCU" claude session --json --offline -z UTC)
  R_USAGE=$(rss "$CTXJ" usage "$CC_HOME/projects" --json --timezone UTC)
  ccu session >"$OUT/ccusage.json"
  ccu daily >"$OUT/ccusage-daily.json"
  "$CTXJ" usage "$CC_HOME/projects" --json --timezone UTC >"$OUT/usage.json" || true
  "$CTXJ" usage "$CC_HOME/projects" --json --timezone UTC --by day >"$OUT/usage-daily.json" || true
  unset CLAUDE_CONFIG_DIR
  # ctxj's rows as ccusage sees them: [input, output, cache write, cache read, cost] by key.
  OURS='(.rows | map({(.key): ([.input - .not_counted_by_ccusage.input, .output - .not_counted_by_ccusage.output, .cache_creation - .not_counted_by_ccusage.cache_creation, .cache_read - .not_counted_by_ccusage.cache_read, (.cost_usd // 0)])}) | add)'
  SAME='def same($a; $b): $a != null and ($a[0:4] == $b[0:4]) and ((($a[4] - $b[4]) | if . < 0 then -. else . end) < 0.000001);'
  theirs() { echo "[.inputTokens, .outputTokens, .cacheCreationTokens, .cacheReadTokens, (.totalCost // 0)]"; }
  S_ALL=$(jq '.sessions | length' "$OUT/ccusage.json" 2>/dev/null || echo '?')
  S_OK=$(jq -n --slurpfile c "$OUT/ccusage.json" --slurpfile u "$OUT/usage.json" "$SAME"' ($u[0] | '"$OURS"') as $o | [$c[0].sessions[] | select(same($o[.projectPath + "/" + .sessionId]; '"$(theirs)"'))] | length' 2>/dev/null || echo '?')
  D_ALL=$(jq '.daily | length' "$OUT/ccusage-daily.json" 2>/dev/null || echo '?')
  D_DIFF=$(jq -rn --slurpfile c "$OUT/ccusage-daily.json" --slurpfile u "$OUT/usage-daily.json" "$SAME"' ($u[0] | '"$OURS"') as $o | [$c[0].daily[] | select(same($o[.date]; '"$(theirs)"') | not) | .date] | join(", ")' 2>/dev/null || echo '?')
  TOT='.totals | [.inputTokens, .outputTokens, .cacheCreationTokens, .cacheReadTokens, (.totalCost * 100 | round / 100)]'
  CCU_TOT=$(jq -c "$TOT" "$OUT/ccusage.json" 2>/dev/null || echo '?')
  CCU_TOT_D=$(jq -c "$TOT" "$OUT/ccusage-daily.json" 2>/dev/null || echo '?')
  CTXJ_TOT=$(jq -c '.totals | . as $t | $t.not_counted_by_ccusage as $n | [$t.input - $n.input, $t.output - $n.output, $t.cache_creation - $n.cache_creation, $t.cache_read - $n.cache_read, ($t.cost_usd * 100 | round / 100)]' "$OUT/usage.json" 2>/dev/null || echo '?')
  SAME_TOT=$([ "$CCU_TOT" = "$CTXJ_TOT" ] && [ "$S_OK" = "$S_ALL" ] && echo yes || echo "**no**")
  USAGE_ROWS="| \`ctxj usage\` vs \`ccusage claude session --json --offline\` ($CCU_VERSION, $MB MB, $(find "$CC_HOME/" -name '*.jsonl' | wc -l) files) | $(printf %.2f "$T_USAGE") s, ${R_USAGE} MiB | $(printf %.2f "$T_CCU") s, ${R_CCU} MiB | $(div "$T_USAGE" "$T_CCU") | ≤ 0.5 (issue 20), totals identical | $(le "$(div "$T_USAGE" "$T_CCU")" 0.5); identical: $SAME_TOT ($S_OK of $S_ALL sessions equal in the four counts and cost; totals [input, output, cache write, cache read, USD] ctxj $CTXJ_TOT, ccusage $CCU_TOT) |
| \`ctxj usage --by day\` vs \`ccusage claude daily --json --offline\`, same folder | $(printf %.2f "$T_USAGE_D") s | $(printf %.2f "$T_CCU_D") s | $(div "$T_USAGE_D" "$T_CCU_D") | ≤ 0.5 | $(le "$(div "$T_USAGE_D" "$T_CCU_D")" 0.5); days that differ: ${D_DIFF:-none} of $D_ALL (ccusage \`daily\` also counts \`agent_progress\` copies, its \`session\` does not; ccusage daily totals $CCU_TOT_D) |"
fi
