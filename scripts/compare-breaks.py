#!/usr/bin/env python3
"""scripts/compare-breaks.py — `ctxj watch`'s cache breaks against `ctxj cache`'s recorded breaks
(issue 33) on every shared Claude Code, Codex and pi transcript.

    scripts/compare-breaks.py [CTXJ] [FOLDER...]
        CTXJ     the ctxj binary (default target/release/ctxj)
        FOLDER   where to look (default ../shared/samples and ../shared/corpus)

For each transcript: `ctxj watch --once --from-start --format ndjson FILE` (its `cache_break`
events: call, lost tokens, cause) and `ctxj cache FILE --format json` (`recorded.breaks`: turn,
rewritten tokens, cause). A break agrees when both name the same call with the same lost tokens.
A cause agrees when both name the same one; `watch` names only what the usage lines tell (ttl,
compaction, model_switch) and leaves the rest `null`, which agrees with `cache`'s prefix_change,
system_or_tools and provider (named from the reconstructed requests). Prints a Markdown summary
and the transcripts that differ; exits 1 when any does.
"""
import json, os, subprocess, sys, tempfile

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
ctxj = sys.argv[1] if len(sys.argv) > 1 else os.path.join(ROOT, "target", "release", "ctxj")
folders = sys.argv[2:] or [os.path.join(ROOT, "..", "shared", d) for d in ("samples", "corpus")]
UNNAMED = {"prefix_change", "system_or_tools", "provider"}


def transcripts():
    for top in folders:
        for agent in ("claude-code", "codex", "pi"):
            for d, subs, files in os.walk(os.path.join(top, agent)):
                subs[:] = sorted(s for s in subs if s != "subagents")
                for f in sorted(files):
                    if f.endswith(".jsonl"):
                        yield agent, os.path.join(d, f)


def main():
    found = list(transcripts())
    if not found:
        sys.exit("no shared transcript found (../shared missing?)")
    env = dict(os.environ, NO_COLOR="1", CTXJ_CACHE_DIR=tempfile.mkdtemp(prefix="ctxj-breaks-"))
    per_agent, differ = {}, []
    for agent, p in found:
        w = subprocess.run([ctxj, "watch", "--once", "--from-start", "--format", "ndjson", p], env=env,
                           capture_output=True)
        c = subprocess.run([ctxj, "cache", p, "--format", "json"], env=env, capture_output=True)
        if w.returncode != 0 or c.returncode != 0:
            continue  # not a transcript either command reads (a fixture of another shape)
        live = {(e["call"], e["lost_tokens"]): e["cause"] for e in map(json.loads, w.stdout.splitlines())
                if e["event"] == "cache_break"}
        rec = {(b["turn"], b["rewritten_tokens"]): b["cause"] for b in json.loads(c.stdout)["recorded"]["breaks"]}
        a = per_agent.setdefault(agent, {"files": 0, "breaks": 0, "same": 0, "cause": 0, "named": 0})
        a["files"] += 1
        a["breaks"] += len(rec)
        same = set(live) & set(rec)
        a["same"] += len(same)
        for k in same:
            ok = live[k] == rec[k] or (live[k] is None and rec[k] in UNNAMED)
            a["cause"] += ok
            a["named"] += live[k] is not None
        if set(live) != set(rec) or any(not (live[k] == rec[k] or (live[k] is None and rec[k] in UNNAMED)) for k in same):
            differ.append((os.path.relpath(p, os.path.join(ROOT, "..")), sorted(live.items()), sorted(rec.items())))
    print("| agent | transcripts | `cache` breaks | same call and tokens in `watch` | causes agreeing | named by `watch` |")
    print("|---|---:|---:|---:|---:|---:|")
    for agent, a in per_agent.items():
        print(f"| {agent} | {a['files']} | {a['breaks']} | {a['same']} | {a['cause']} | {a['named']} |")
    for name, live, rec in differ:
        print(f"\ndiffers: `../{name}`: watch {live}; cache {rec}", end="")
    print()
    sys.exit(1 if differ else 0)


if __name__ == "__main__":
    main()
