#!/usr/bin/env python3
"""Compare ctxj with the independent reference implementation in ref.py.

Usage: check.py [--ctxj PATH] [--strategy NAME ...] [--no-strategies] [--no-revs] [--sha-fatal] SESSION...

For every turn K of every SESSION (a session directory or a journal .jsonl file):
  * ref's canonical bytes of the recorded request vs `ctxj show SESSION --at turn K --json`;
  * for every rev N, ref's projection vs `ctxj show SESSION --at rev N --json`;
  * ref's SHA-256 vs the journal's `prompt_sha256` (a note; a divergence with --sha-fatal);
  * for every strategy, ref's request vs `ctxj show SESSION --strategy NAME --at turn K --json`;
and for every `clear` record, ref's selection rule vs the recorded `cleared` (a note).
Exit 0 when everything matches, 1 on any divergence, 2 on usage errors.
"""

from __future__ import annotations

import argparse
import hashlib
import os
import subprocess
import sys
from concurrent.futures import ThreadPoolExecutor

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import ref  # noqa: E402

POOL = ThreadPoolExecutor(max_workers=os.cpu_count() or 4)
ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))

DEFAULT_STRATEGIES = [
    "baseline",
    "truncate-200",
    "truncate-40",
    "age-truncate-300-keep-2",
    "mid-truncate-101",
    "mid-truncate-7",
    "sliding-6",
    "sliding-6-pin",
    "sliding-1-pin",
    "per-tool-keep-1",
    "per-tool-keep-3",
    "compact-at-3000",
    "compact-at-3000-structured",
    "compact-at-3000-repeat",
    "compact-at-3000-chain",
    "compact-at-12000",
    "compact-at-600-chain",
]


def first_diff(a: bytes, b: bytes) -> str:
    i = 0
    n = min(len(a), len(b))
    while i < n and a[i] == b[i]:
        i += 1
    lo = max(0, i - 80)
    return (f"first difference at byte {i} (lengths ref {len(a)}, ctxj {len(b)})\n"
            f"      ref : {a[lo:i + 120]!r}\n      ctxj: {b[lo:i + 120]!r}")


def run_ctxj(exe, args):
    p = subprocess.run([exe, "--color", "never", *args], capture_output=True, env=hermetic_env())
    return p.returncode, p.stdout, p.stderr


def hermetic_env():
    env = {k: v for k, v in os.environ.items() if k in ("PATH", "HOME", "LANG", "TMPDIR")}
    env["NO_COLOR"] = "1"
    return env


def journal_path(session: str) -> str:
    if os.path.isdir(session):
        return os.path.join(session, "journal.jsonl")
    return session


def check_session(exe, session, strategies, sha_fatal, out, revs=True):
    j = ref.Journal(journal_path(session))
    bad = 0
    notes = 0
    # recorded
    turns = list(ref.recorded_turns(j))
    outs = list(POOL.map(lambda t: run_ctxj(exe, ["show", session, "--at", "turn", str(t[0]), "--json"]), turns))
    for (k, rec, blocks), (rc, so, se) in zip(turns, outs):
        mine = ref.canonical(blocks)
        theirs = so[:-1] if so.endswith(b"\n") else so
        if rc != 0:
            bad += 1
            out(f"DIVERGENCE {session} recorded turn {k}: ctxj exit {rc}: {se.decode(errors='replace').strip()}")
        elif mine != theirs:
            bad += 1
            out(f"DIVERGENCE {session} recorded turn {k}: {first_diff(mine, theirs)}")
        sha = rec.get("prompt_sha256")
        if isinstance(sha, str) and sha != hashlib.sha256(mine).hexdigest():
            if sha_fatal:
                bad += 1
                out(f"DIVERGENCE {session} turn {k}: journal prompt_sha256 {sha} != ref {hashlib.sha256(mine).hexdigest()}")
            else:
                notes += 1
                out(f"note {session} turn {k}: journal prompt_sha256 differs from ref's")
    # every revision (`--at rev N`)
    if revs:
        last = max((ref.num(r.get("rev")) or 0 for r in j.records), default=0)
        ns = list(range(1, last + 1))
        outs = list(POOL.map(lambda n: run_ctxj(exe, ["show", session, "--at", "rev", str(n), "--json"]), ns))
        for n, (rc, so, se) in zip(ns, outs):
            mine = ref.canonical(ref.recorded_at_rev(j, n))
            theirs = so[:-1] if so.endswith(b"\n") else so
            if rc != 0:
                bad += 1
                out(f"DIVERGENCE {session} rev {n}: ctxj exit {rc}: {se.decode(errors='replace').strip()}")
            elif mine != theirs:
                bad += 1
                out(f"DIVERGENCE {session} rev {n}: {first_diff(mine, theirs)}")
    # clear selection
    for r in j.records:
        if r.get("kind") == "clear":
            sel = ref.clear_selection(j, r)
            if sel != list(r.get("cleared") or []):
                notes += 1
                out(f"note {session} clear rev {ref.num(r.get('rev'))}: selection rule gives {sel}, journal cleared {list(r.get('cleared') or [])}")
    # strategies
    for name in strategies:
        turns = list(ref.strategy_turns(j, name))
        outs = POOL.map(lambda t: run_ctxj(exe, ["show", session, "--strategy", name, "--at", "turn", str(t[0]), "--json"]), turns)
        for (k, blocks), (rc, so, se) in zip(turns, outs):
            mine = ref.canonical(blocks)
            theirs = so[:-1] if so.endswith(b"\n") else so
            if rc != 0:
                bad += 1
                out(f"DIVERGENCE {session} {name} turn {k}: ctxj exit {rc}: {se.decode(errors='replace').strip()}")
                break
            if mine != theirs:
                bad += 1
                out(f"DIVERGENCE {session} {name} turn {k}: {first_diff(mine, theirs)}")
                break  # later turns usually repeat the same divergence
    return bad, notes, len(j.turns)


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--ctxj", default=os.environ.get("CTXJ_BIN", os.path.join(ROOT, "target", "debug", "ctxj")))
    ap.add_argument("--strategy", action="append", help="strategy to compare (repeatable; default: a built-in list)")
    ap.add_argument("--no-strategies", action="store_true")
    ap.add_argument("--no-revs", action="store_true", help="skip the `--at rev N` comparisons")
    ap.add_argument("--sha-fatal", action="store_true", help="a journal prompt_sha256 that differs from ref is a divergence")
    ap.add_argument("sessions", nargs="+")
    a = ap.parse_args()
    if not os.path.exists(a.ctxj):
        print(f"check.py: no ctxj binary at {a.ctxj} (cargo build, or --ctxj PATH)", file=sys.stderr)
        return 2
    strategies = [] if a.no_strategies else (a.strategy or DEFAULT_STRATEGIES)
    total_bad = 0
    for s in a.sessions:
        rc, _, se = run_ctxj(a.ctxj, ["show", s, "--json"])
        if rc != 0:
            # ref does not police validity: a journal ctxj refuses to read is reported, not compared.
            print(f"{s}: skipped, ctxj refuses it (exit {rc}): {se.decode(errors='replace').strip()[:200]}")
            continue
        try:
            bad, notes, turns = check_session(a.ctxj, s, strategies, a.sha_fatal, print, not a.no_revs)
        except Exception as e:  # noqa: BLE001 - a journal ref cannot read at all
            print(f"{s}: skipped, ref cannot read it: {type(e).__name__}: {e}")
            continue
        print(f"{s}: {turns} turns, {len(strategies)} strategies: {bad} divergences, {notes} notes")
        total_bad += bad
    return 1 if total_bad else 0


if __name__ == "__main__":
    sys.exit(main())
