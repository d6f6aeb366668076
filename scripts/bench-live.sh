# scripts/bench-live.sh — `ctxj statusline` and `ctxj watch` (issue 33), sourced by scripts/bench
# (`BENCH_ONLY=live`; uses CTXJ, OUT, ROOT, log). Sets LIVE_ROWS: the table rows.
#
# Transcripts: the shared Claude Code samples concatenated into one session file of 3 MB and of
# 30 MB under /tmp (deleted afterwards; never committed). For each: a cold run (no state), warm
# runs (state kept, nothing appended: p50/p99 over LIVE_RUNS runs), runs after 1 MB was appended
# each time (p50/p99 over 10), and the peak RSS of a warm and of a cold run. `watch`: p50/p95 of
# the time from appending one line to reading its event, default stat poll (250 ms), 20 appends.
#
#   LIVE_RUNS=200   warm runs per transcript

CC_SRC=$ROOT/../shared/samples/claude-code
LIVE_TMP=$(mktemp -d /tmp/ctxj-bench-live.XXXXXX)
LIVE_ROWS=$(python3 - "$CTXJ" "$CC_SRC" "$LIVE_TMP" "${LIVE_RUNS:-200}" <<'PY'
import glob, json, os, subprocess, sys, time, resource
ctxj, src, tmp, runs = sys.argv[1], sys.argv[2], sys.argv[3], int(sys.argv[4])
files = sorted(glob.glob(os.path.join(src, "projects", "*", "*.jsonl")), key=os.path.getsize, reverse=True)
lines = [l for f in files for l in open(f, "rb").read().splitlines(keepends=True) if l.endswith(b"\n")]
env = dict(os.environ, CTXJ_CACHE_DIR=os.path.join(tmp, "cache"), NO_COLOR="1")

def build(name, mb):
    d = os.path.join(tmp, "projects", "-bench"); os.makedirs(d, exist_ok=True)
    p = os.path.join(d, name + ".jsonl"); size = 0
    with open(p, "wb") as f:
        while size < mb << 20:
            for l in lines:
                f.write(l); size += len(l)
                if size >= mb << 20: break
    return p

def run(p):
    inp = json.dumps({"transcript_path": p}).encode()
    t = time.perf_counter()
    subprocess.run([ctxj, "statusline"], input=inp, env=env, stdout=subprocess.DEVNULL, check=True)
    return (time.perf_counter() - t) * 1000

def rss(p):
    inp = json.dumps({"transcript_path": p}).encode()
    r = subprocess.run(["/usr/bin/time", "-f", "%M", ctxj, "statusline"], input=inp, env=env,
                       stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, check=True)
    return int(r.stderr.decode().strip().splitlines()[-1]) / 1024

def pct(xs, q):
    xs = sorted(xs); return xs[min(len(xs) - 1, int(q * len(xs)))]

chunk = b"".join(lines)[: 1 << 20]; chunk = chunk[: chunk.rfind(b"\n") + 1]
rows = []
for mb in (3, 30):
    p = build(f"s{mb}", mb)
    state = os.path.join(tmp, "cache")
    subprocess.run(["rm", "-rf", state])
    cold_rss = rss(p)
    subprocess.run(["rm", "-rf", state])
    cold = run(p)
    warm = [run(p) for _ in range(runs)]
    warm_rss = rss(p)
    app = []
    for _ in range(10):
        with open(p, "ab") as f: f.write(chunk)
        app.append(run(p))
    st = sum(os.path.getsize(os.path.join(state, "live", x)) for x in os.listdir(os.path.join(state, "live")))
    rows.append(f"| statusline, {mb} MB Claude Code transcript | {cold:.0f} | {pct(warm,.5):.1f} / {pct(warm,.99):.1f} | "
                f"{pct(app,.5):.1f} / {pct(app,.99):.1f} | {cold_rss:.0f} / {warm_rss:.0f} | {st/1048576:.1f} |")
# watch: append one call line, time until its event is read
p = build("w", 3)
w = subprocess.Popen([ctxj, "watch", "--format", "ndjson", p], env=env, stdout=subprocess.PIPE)
time.sleep(1.5)
call = next(l for l in lines if b'"usage"' in l and b'"assistant"' in l)
lat = []
for i in range(20):
    l = call.replace(b'"requestId":"', b'"requestId":"bench%d-' % i, 1)
    t = time.perf_counter()
    with open(p, "ab") as f: f.write(l)
    while True:
        ev = json.loads(w.stdout.readline())
        if ev["event"] == "call": break
    lat.append((time.perf_counter() - t) * 1000)
    time.sleep(0.3)
t0 = os.times(); time.sleep(10); 
w.kill(); w.wait()
rows.append(f"| watch, append → event (stat poll 250 ms), 20 appends | p50 {pct(lat,.5):.0f} ms | p95 {pct(lat,.95):.0f} ms | | | |")
print("\n".join(rows))
PY
)
rm -rf "$LIVE_TMP"
