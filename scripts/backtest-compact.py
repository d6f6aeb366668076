#!/usr/bin/env python3
"""scripts/backtest-compact.py — backtest of `ctxj statusline`'s compaction point and its "calls to
compact" (issue 33) on every shared Claude Code transcript with a `compact_boundary`.

    scripts/backtest-compact.py [CTXJ] [FOLDER...]
        CTXJ     the ctxj binary (default target/release/ctxj)
        FOLDER   where to look (default ../shared/samples/claude-code and ../shared/corpus/claude-code)

Each transcript is replayed the way a live session grows: its lines are appended, one by one, to
a copy under a temporary folder, and after every line that starts a new API call (a new
`message.id` + `requestId` of the session's own file) `ctxj statusline --transcript COPY --format
json --now <that line's time>` is run. Every run resumes from the previous run's saved state, as
it does under Claude Code. This is done twice per transcript:

* **estimated**: an empty live state (no compaction seen before): the documented rule
  (`crates/core/src/live/compact.rs`);
* **observed (leave one out)**: the user's compaction record holds the automatic compactions of
  every *other* transcript (as `ctxj statusline` records them) and none of this one's.

Point error = (point at the last call before the compaction − recorded `preTokens`) / `preTokens`.
Calls-to-compact error: at call k of N (the last call before the compaction), the actual number
of growth steps to the compaction is N − k + 1; the prediction is the snapshot's
`calls_to_compact` (of the estimated pass). Reported: mean absolute error for the last 10 / 50 calls and all, and the
share of predictions within ±max(1, 20 %) of the actual. Manual compactions (`/compact`) are
listed but not scored: they say nothing of a threshold.

No Claude Code settings or environment overrides reach the runs (CLAUDE_CONFIG_DIR is an empty
folder, the CLAUDE_* variables are removed). Prints a Markdown table; exits 2 when no transcript
with a compaction is found (under CI=true the shared folder must exist).
"""
import json, os, shutil, subprocess, sys, tempfile

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
ctxj = sys.argv[1] if len(sys.argv) > 1 else os.path.join(ROOT, "target", "release", "ctxj")
folders = sys.argv[2:] or [os.path.join(ROOT, "..", "shared", d, "claude-code") for d in ("samples", "corpus")]


def transcripts():
    for top in folders:
        for d, subs, files in os.walk(top):
            subs[:] = sorted(s for s in subs if s != "subagents")
            for f in sorted(files):
                if f.endswith(".jsonl"):
                    p = os.path.join(d, f)
                    with open(p, "rb") as fh:
                        if b'"compact_boundary"' in fh.read():
                            yield p


def parse(path):
    """(lines, indices of lines that start a call, [(line index, compaction metadata)])."""
    raw = open(path, "rb").read().splitlines(keepends=True)
    starts, comps, seen = [], [], set()
    for i, l in enumerate(raw):
        try:
            d = json.loads(l)
        except ValueError:
            continue
        if d.get("type") == "assistant" and not d.get("isSidechain"):
            m = d.get("message") or {}
            key = (m.get("id"), d.get("requestId"))
            if m.get("usage") and key not in seen:
                seen.add(key)
                starts.append(i)
        if d.get("subtype") == "compact_boundary":
            comps.append((i, d.get("compactMetadata") or {}, d.get("timestamp")))
    return raw, starts, comps


def env_for(cache):
    e = {k: v for k, v in os.environ.items() if not k.startswith(("CLAUDE_", "DISABLE_"))}
    cfg = os.path.join(cache, "claude-config")
    os.makedirs(cfg, exist_ok=True)
    e.update(CTXJ_CACHE_DIR=cache, CLAUDE_CONFIG_DIR=cfg, NO_COLOR="1")
    return e


def ts_of(line):
    try:
        return json.loads(line).get("timestamp")
    except ValueError:
        return None


def status(path, env, now):
    args = [ctxj, "statusline", "--transcript", path, "--format", "json"]
    if now:
        args += ["--now", now]
    r = subprocess.run(args, env=env, capture_output=True, check=True)
    return json.loads(r.stdout)


def replay(path, raw, starts, stop, cache):
    """Snapshots after each call start before line `stop` (the compaction)."""
    env = env_for(cache)
    copy = os.path.join(cache, "session", os.path.basename(path))
    os.makedirs(os.path.dirname(copy), exist_ok=True)
    out, s = [], set(x for x in starts if x < stop)
    with open(copy, "wb") as f:
        for i, l in enumerate(raw[:stop]):
            f.write(l)
            if i in s:
                f.flush()
                out.append(status(copy, env, ts_of(l)))
    return out


def main():
    if not os.path.exists(ctxj):
        sys.exit(f"{ctxj}: build it first (cargo build --release --locked)")
    found = list(transcripts())
    if not found:
        if os.environ.get("CI") == "true":
            sys.exit("no shared Claude Code transcript with a compaction (../shared missing?)")
        print("no shared Claude Code transcript with a compaction found", file=sys.stderr)
        sys.exit(2)
    tmp = tempfile.mkdtemp(prefix="ctxj-backtest-")
    try:
        # Every transcript once, in one cache folder: the user's compaction record, as statusline keeps it.
        every = os.path.join(tmp, "all")
        for p in found:
            status(p, env_for(every), None)
        record = json.load(open(os.path.join(every, "live", "compactions.json")))
        rows, manual = [], []
        for p in found:
            raw, starts, comps = parse(p)
            name = "../" + os.path.relpath(p, os.path.join(ROOT, ".."))
            autos = [(i, m, t) for i, m, t in comps if m.get("trigger") == "auto" and m.get("preTokens")]
            manual += [(name, m.get("preTokens")) for i, m, t in comps if m.get("trigger") != "auto"]
            if not autos:
                continue
            stop, meta, ts = autos[0]
            pre = meta["preTokens"]
            mine = {t for _, _, t in comps}
            cells, calls = [], ""
            for mode in ("estimated", "observed"):
                cache = os.path.join(tmp, f"{mode}-{len(rows)}")
                os.makedirs(os.path.join(cache, "live"), exist_ok=True)
                if mode == "observed":
                    others = [o for o in record if o.get("ts") not in mine]
                    json.dump(others, open(os.path.join(cache, "live", "compactions.json"), "w"))
                snaps = replay(p, raw, starts, stop, cache)
                point = (snaps[-1].get("compact_at") or {}) if snaps else {}
                tok = point.get("tokens")
                cells.append(f"{tok:,} {point.get('source')}, {100 * (tok - pre) / pre:+.2f}%" if tok else "–")
                if mode != "estimated":
                    continue
                n = len(snaps)
                errs = []
                for k, s in enumerate(snaps, start=1):
                    actual = n - k + 1
                    pred = s.get("calls_to_compact")
                    if pred is not None:
                        errs.append((actual, abs(pred - actual), abs(pred - actual) <= max(1, 0.2 * actual)))

                def mae(h):
                    e = [x[1] for x in errs if x[0] <= h]
                    return f"{sum(e) / len(e):.1f}" if e else "–"

                within = f"{100 * sum(x[2] for x in errs) / len(errs):.0f}%" if errs else "–"
                model = (snaps[-1].get("model") if snaps else None) or "–"
                calls = f"{model} | {json.loads(raw[stop]).get('version')} | {pre:,} | {{}} | {n} | {mae(10)} / {mae(50)} / {mae(10**9)} | {within}"
            rows.append(f"| `{name}` | " + calls.format(" | ".join(cells)) + " |")
        print("| transcript | model | version | preTokens | estimated point, error | observed point (leave one out), error "
              "| calls before | calls-to-compact MAE, last 10 / 50 / all | within ±max(1, 20 %) |")
        print("|---|---|---|---:|---|---|---:|---|---:|")
        print("\n".join(rows))
        for name, pre in manual:
            print(f"\nnot scored (manual `/compact`): `{name}` at {pre:,} tokens", end="")
        print()
    finally:
        shutil.rmtree(tmp, ignore_errors=True)


if __name__ == "__main__":
    main()
