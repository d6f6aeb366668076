# scripts/bench-live.sh — `ctxj statusline` and `ctxj watch` (issue 33), sourced by scripts/bench
# (`BENCH_ONLY=live`; uses CTXJ, OUT, ROOT, DOC, LOAD_AT_START, log). Writes its table between the
# `live:begin` / `live:end` markers of docs/performance.md (appended when they are missing).
#
# Transcripts: the shared Claude Code sessions (../shared/samples, main files) concatenated into
# one session file of 3, 30 and 300 MB under /tmp (deleted afterwards; never committed), each copy
# with its own message and request ids so that every call is a new call (usage de-duplicates
# repeated ids). For each size: cold runs (no state; the fastest of LIVE_COLD_RUNS), warm runs (state kept, nothing appended:
# p50/p99), runs after 1 MB was appended each time (p50/p99 over 10), the peak RSS of a cold and a
# warm run, the bytes a warm run reads (strace: a full rescan would read the whole file) and the
# state's size. Four 30 MB sessions at once: four warm runs started together, 50 times. ccusage
# 20.0.24's `statusline` on the same files (its own config folder per size holding only that
# file), cold (`--no-cache`), warm (its cache on, the default) and after a 1 MB append.
# `watch`: p50/p95 from appending one call line to reading its event (20 appends) and its CPU
# while idle (60 s), on the file-system events path and on the 250 ms stat poll; and its RSS over a replay of real sessions at their recorded
# pace, scaled down (the recorded gaps between lines, each at most 30 min, squeezed into
# LIVE_REPLAY_SECS).
#
#   LIVE_RUNS=200          warm runs per transcript (300 MB: a quarter)
#   LIVE_SIZES="3 30 300"  transcript sizes, MB
#   LIVE_REPLAY_SECS=60    wall time of the scaled replay
#   LIVE_REPLAY_HOURS=6    recorded hours replayed (the sessions repeated, fresh ids, until reached)
#   LIVE_COLD_RUNS=3       cold runs per size (the fastest is reported)
#   LIVE_IDLE_SECS=60      how long `watch`'s idle CPU is measured, per path
#   LIVE_PARTS="statusline watch replay"  which of the three groups of rows to measure
#   BENCH_NO_USAGE=1       skip ccusage; BENCH_CCUSAGE=PATH a ccusage 20.0.24 executable (else npm
#                          installs it into bench-out/ccusage)

S=$ROOT/../shared
[ -d "$S/samples/claude-code" ] || { log "live: ../shared/samples missing"; exit 1; }
CCU=""
if [ -z "${BENCH_NO_USAGE:-}" ]; then
  CCU=${BENCH_CCUSAGE:-$OUT/ccusage/node_modules/.bin/ccusage}
  [ -x "$CCU" ] || npm install --silent --prefix "$OUT/ccusage" ccusage@20.0.24 >/dev/null || CCU=""
fi
need strace strace
LIVE_TMP=$(mktemp -d /tmp/ctxj-bench-live.XXXXXX)
log "live: statusline and watch (sizes ${LIVE_SIZES:-3 30 300} MB)"
LIVE_ROWS=$(python3 - "$CTXJ" "$S" "$LIVE_TMP" "${LIVE_RUNS:-200}" "${LIVE_SIZES:-3 30 300}" "${LIVE_REPLAY_SECS:-60}" "$CCU" <<'PY'
import glob, json, os, shutil, subprocess, sys, time
ctxj, shared, tmp, runs, sizes, replay_secs, ccu = sys.argv[1:8]
runs, sizes, replay_secs = int(runs), [int(x) for x in sizes.split()], float(replay_secs)
files = sorted(glob.glob(os.path.join(shared, "samples", "claude-code", "projects", "*", "*.jsonl")),
               key=os.path.getsize, reverse=True)
lines = [l for f in files for l in open(f, "rb").read().splitlines(keepends=True) if l.endswith(b"\n")]
env = dict(os.environ, CTXJ_CACHE_DIR=os.path.join(tmp, "cache"), NO_COLOR="1",
           CLAUDE_CONFIG_DIR=os.path.join(tmp, "no-config"))
# scripts/bench exports CTXJ_NO_CACHE=1 for the other rows; here the state is what is measured.
env.pop("CTXJ_NO_CACHE", None)
os.makedirs(env["CLAUDE_CONFIG_DIR"], exist_ok=True)
copy_no = [0]

def fresh(ls):
    """`ls` with message and request ids no earlier copy used."""
    copy_no[0] += 1
    n = copy_no[0]
    return [l.replace(b'"id":"msg_', b'"id":"msg_c%d_' % n).replace(b'"requestId":"req_', b'"requestId":"req_c%d_' % n)
            for l in ls]

def build(path, mb):
    os.makedirs(os.path.dirname(path), exist_ok=True)
    size = 0
    with open(path, "wb") as f:
        while size < mb << 20:
            for l in fresh(lines):
                f.write(l); size += len(l)
                if size >= mb << 20: break
    return path

def chunk():
    out, size = [], 0
    for l in fresh(lines):
        out.append(l); size += len(l)
        if size >= 1 << 20: break
    return b"".join(out)

def inp(p):
    return json.dumps({"session_id": os.path.basename(p), "transcript_path": p, "cwd": tmp,
                       "model": {"id": "claude-opus-4-6", "display_name": "Opus"},
                       "workspace": {"current_dir": tmp, "project_dir": tmp}, "version": "2.1.39"}).encode()

def run(cmd, p, e=env):
    t = time.perf_counter()
    subprocess.run(cmd, input=inp(p), env=e, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, check=True)
    return (time.perf_counter() - t) * 1000

def rss(cmd, p, e=env):
    r = subprocess.run(["/usr/bin/time", "-f", "%M"] + cmd, input=inp(p), env=e,
                       stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, check=True)
    return int(r.stderr.decode().strip().splitlines()[-1]) / 1024

def bytes_read(p):
    log = os.path.join(tmp, "strace.log")
    subprocess.run(["strace", "-f", "-qq", "-e", "trace=read,pread64", "-o", log, ctxj, "statusline"],
                   input=inp(p), env=env, stdout=subprocess.DEVNULL, check=True)
    total = 0
    for l in open(log):
        r = l.rsplit("=", 1)[-1].strip().split()[0]
        if r.isdigit(): total += int(r)
    return total

def pct(xs, q):
    xs = sorted(xs); return xs[min(len(xs) - 1, int(q * len(xs)))]

state = env["CTXJ_CACHE_DIR"]
st = [ctxj, "statusline"]
rows = []
parts = os.environ.get("LIVE_PARTS", "statusline watch replay").split()
idle_secs = float(os.environ.get("LIVE_IDLE_SECS", "60"))
cold_runs = int(os.environ.get("LIVE_COLD_RUNS", "3"))
replay_hours = float(os.environ.get("LIVE_REPLAY_HOURS", "6"))
def statusline_rows():
    for mb in sizes:
        p = build(os.path.join(tmp, f"cc{mb}", "projects", "-bench", f"s{mb}.jsonl"), mb)
        shutil.rmtree(state, ignore_errors=True)
        cold_rss = rss(st, p)
        colds = []
        for _ in range(cold_runs):
            shutil.rmtree(state, ignore_errors=True)
            colds.append(run(st, p))
        cold = min(colds)
        n = runs if mb < 300 else max(10, runs // 4)
        warm = [run(st, p) for _ in range(n)]
        warm_rss = rss(st, p)
        read, size = bytes_read(p), os.path.getsize(p)
        app = []
        for _ in range(10):
            with open(p, "ab") as f: f.write(chunk())
            app.append(run(st, p))
        live = os.path.join(state, "live")
        sb = sum(os.path.getsize(os.path.join(live, x)) for x in os.listdir(live) if x.endswith(".json"))
        rows.append(f"| ctxj statusline, {mb} MB | {cold:.0f} | {pct(warm,.5):.1f} / {pct(warm,.99):.1f} | "
                    f"{pct(app,.5):.1f} / {pct(app,.99):.1f} | {cold_rss:.0f} / {warm_rss:.0f} | "
                    f"a warm run reads {read / 1024:.0f} KiB of {size / 1048576:.0f} MB; state {sb / 1048576:.1f} MB |")
        if ccu:
            ce = dict(env, CLAUDE_CONFIG_DIR=os.path.join(tmp, f"cc{mb}"))
            k = 3 if mb >= 300 else 5
            c_rss = rss([ccu, "statusline", "--no-cache"], p, ce)
            c_cold = [run([ccu, "statusline", "--no-cache"], p, ce) for _ in range(k)]
            run([ccu, "statusline"], p, ce)
            c_warm = [run([ccu, "statusline"], p, ce) for _ in range(4 * k)]
            c_app = []
            for _ in range(k):
                with open(p, "ab") as f: f.write(chunk())
                c_app.append(run([ccu, "statusline"], p, ce))
            rows.append(f"| ccusage 20.0.24 statusline, {mb} MB | {pct(c_cold,.5):.0f} | {pct(c_warm,.5):.0f} / {pct(c_warm,.99):.0f} | "
                        f"{pct(c_app,.5):.0f} / {pct(c_app,.99):.0f} | {c_rss:.0f} | (its cache: time + file mtime) |")
        if mb != max(sizes): os.remove(p)

    # Four sessions at once, each warm.
    m4 = 30 if 30 in sizes else sizes[0]
    four = [build(os.path.join(tmp, "four", "projects", "-bench", f"q{i}.jsonl"), m4) for i in range(4)]
    for p in four: run(st, p)
    together = []
    for _ in range(50):
        ps = []
        for p in four:
            pr = subprocess.Popen(st, stdin=subprocess.PIPE, stdout=subprocess.DEVNULL, env=env)
            pr.stdin.write(inp(p)); pr.stdin.close()
            ps.append((pr, time.perf_counter()))
        for pr, t0 in ps:
            pr.wait()
            together.append((time.perf_counter() - t0) * 1000)
    rows.append(f"| ctxj statusline, 4 sessions of {m4} MB at once (×50) | | {pct(together,.5):.1f} / {pct(together,.99):.1f} | | | |")
    shutil.rmtree(os.path.join(tmp, "four"), ignore_errors=True)
if "statusline" in parts: statusline_rows()

# watch: append one call line, time until its event is read; then idle CPU (LIVE_IDLE_SECS), on
# the file-system events path (the default) and on the stat poll (`--poll`, 250 ms).
def watch_rows():
    p = build(os.path.join(tmp, "w", "w.jsonl"), 3)
    call = next(l for l in lines if b'"usage"' in l and b'"assistant"' in l and b'"requestId":"req_' in l)
    tick = os.sysconf("SC_CLK_TCK")
    def cpu(pid):
        f = open(f"/proc/{pid}/stat").read().rsplit(")", 1)[1].split()
        return (int(f[11]) + int(f[12])) / tick
    for label, how in (("file-system events (inotify), 50 ms debounce", []), ("stat poll 250 ms, `--poll`", ["--poll"])):
        w = subprocess.Popen([ctxj, "watch", "--format", "ndjson"] + how + [p], env=env, stdout=subprocess.PIPE)
        time.sleep(1.5)
        lat = []
        for i in range(20):
            l = fresh([call])[0]
            t = time.perf_counter()
            with open(p, "ab") as f: f.write(l)
            while json.loads(w.stdout.readline())["event"] != "call": pass
            lat.append((time.perf_counter() - t) * 1000)
            time.sleep(0.3)
        c0, t0 = cpu(w.pid), time.perf_counter(); time.sleep(idle_secs)
        idle = 100 * (cpu(w.pid) - c0) / (time.perf_counter() - t0)
        w.kill(); w.wait()
        rows.append(f"| ctxj watch, append → event ({label}), 20 appends | | p50 {pct(lat,.5):.0f} / p95 {pct(lat,.95):.0f} | | | idle CPU {idle:.2f} % of a core ({idle_secs:.0f} s) |")
if "watch" in parts: watch_rows()

# watch over a replay at recorded pace, scaled down: RSS sampled each second.
def replay_rows():
    sess = [os.path.join(shared, "samples", "claude-code", "projects", "spotter", f) for f in
            ("4d5611e5-241a-462a-8d15-5122611a9569.jsonl", "fa812bfe-b295-4cca-9c2f-fdf01028cb46.jsonl")]
    sess += sorted(glob.glob(os.path.join(shared, "corpus", "claude-code", "projects", "spotter-2", "*.jsonl")))
    from datetime import datetime
    def ts(l):
        try: return datetime.fromisoformat(json.loads(l)["timestamp"].replace("Z", "+00:00")).timestamp()
        except Exception: return None
    plan, span = [], 0.0  # (gap before the line, seconds recorded; line)
    # The sessions one after another, again (with fresh ids) until LIVE_REPLAY_HOURS are recorded.
    while span < replay_hours * 3600:
        for f in sess:
            prev = None
            for l in fresh(open(f, "rb").read().splitlines(keepends=True)):
                t = ts(l)
                gap = min(max(t - prev, 0), 1800) if (t is not None and prev is not None) else 0
                if t is not None: prev = t
                plan.append((gap, l)); span += gap
    scale = replay_secs / span
    r = os.path.join(tmp, "r", "r.jsonl"); os.makedirs(os.path.dirname(r), exist_ok=True); open(r, "wb").close()
    w = subprocess.Popen([ctxj, "watch", "--format", "ndjson", r], env=env, stdout=subprocess.DEVNULL)
    time.sleep(1)
    def vmrss(pid):
        for l in open(f"/proc/{pid}/status"):
            if l.startswith("VmRSS:"): return int(l.split()[1]) / 1024
    samples, last, start = [], time.perf_counter(), time.perf_counter()
    with open(r, "ab") as f:
        for gap, l in plan:
            if gap * scale > 0.001:
                f.flush(); time.sleep(gap * scale)
            f.write(l)
            if time.perf_counter() - last >= 1:
                f.flush(); samples.append(vmrss(w.pid)); last = time.perf_counter()
    time.sleep(1); samples.append(vmrss(w.pid))
    w.kill(); w.wait()
    rows.append(f"| ctxj watch over {span / 3600:.1f} h of recorded sessions replayed in {time.perf_counter() - start:.0f} s "
                f"({len(plan)} lines, {os.path.getsize(r) / 1048576:.0f} MB) | | | | RSS first {samples[0]:.1f} / max {max(samples):.1f} / last {samples[-1]:.1f} | |")
if "replay" in parts: replay_rows()
print("\n".join(rows))
PY
)
rm -rf "$LIVE_TMP"
LIVE_MD=$OUT/live.md
LOAD_END=$(cut -d' ' -f1 /proc/loadavg)
{
  echo "<!-- live:begin -->"
  echo "Measured $(date -u +%Y-%m-%d) on $(nproc) cores (load average $LOAD_AT_START at the start, $LOAD_END at the end), \`BENCH_ONLY=live scripts/bench\`."
  echo
  echo "| what | cold ms | warm p50 / p99 ms | after a 1 MB append p50 / p99 ms | peak RSS cold / warm MB | notes |"
  echo "|---|---|---|---|---|---|"
  echo "$LIVE_ROWS"
  echo "<!-- live:end -->"
} >"$LIVE_MD"
if grep -q '<!-- live:begin -->' "$DOC"; then
  awk -v tables="$LIVE_MD" '
    /<!-- live:begin -->/ { while ((getline l < tables) > 0) print l; skip = 1; next }
    /<!-- live:end -->/ { skip = 0; next }
    !skip { print }' "$DOC" >"$DOC.tmp" && mv "$DOC.tmp" "$DOC"
else
  { echo; echo "## \`ctxj statusline\` and \`ctxj watch\` (issue 33)"; echo; cat "$LIVE_MD"; } >>"$DOC"
fi
cat "$LIVE_MD"
