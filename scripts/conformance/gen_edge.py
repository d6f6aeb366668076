#!/usr/bin/env python3
"""Write the hand-made edge-case journals under tests/data/conformance/ (committed output).

Each journal is valid by journal-v1.md but aims at a corner the samples do not reach. Raw JSON
fragments (args with `1.50`, `1e5`, key order `{"b":1,"a":2}`, escapes) are spliced in as text so
that the number literals and key order survive exactly as written.
"""

import json
import os
import sys

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
OUT = os.path.join(ROOT, "tests", "data", "conformance")


class J:
    def __init__(self):
        self.lines = []

    def rec(self, kind, raw_tail="", **fields):
        rev = len(self.lines) + 1
        head = {"rev": rev, "ts": "2026-11-30T10:%02d:%02dZ" % (rev // 60, rev % 60), "kind": kind}
        head.update(fields)
        s = json.dumps(head, ensure_ascii=False, separators=(",", ":"))
        if raw_tail:
            s = s[:-1] + "," + raw_tail + "}"
        self.lines.append(s)
        return rev

    def write(self, name, extra=""):
        d = os.path.join(OUT, name)
        os.makedirs(d, exist_ok=True)
        for line in self.lines:
            for a in json.loads(line).get("attachments") or []:
                f = os.path.join(d, a["path"])
                os.makedirs(os.path.dirname(f), exist_ok=True)
                with open(f, "wb") as fh:
                    fh.write(b"x" * a["bytes"])
        with open(os.path.join(d, "journal.jsonl"), "w", encoding="utf-8", newline="") as f:
            f.write("\n".join(self.lines) + "\n" + extra)


def session(j, model="openai/gpt-4.1"):
    j.rec("session", id="s", model=model, ctx={"ctx_window": 100000, "context_budget": 5000,
          "context_reserve": 1000, "context_target": 3500, "keep_results": 1})
    j.rec("system", "\"tools\":[{\"name\":\"run\",\"description\":\"Run.\",\"parameters\":{\"z\":1.0,\"a\":[1e5,-0]}}]",
          text="You are a test harness. Ünïcödé ok.\nTabs\there.")


def assistant(j, aid, text, calls_raw):
    """calls_raw: list of (id, tool, raw args JSON text)."""
    if calls_raw:
        tail = '"calls":[' + ",".join('{"id":%s,"tool":%s,"args":%s}' % (json.dumps(i), json.dumps(t), a)
                                      for i, t, a in calls_raw) + "]"
        return j.rec("assistant", tail, id=aid, text=text)
    return j.rec("assistant", id=aid, text=text)


def result(j, call, tool, text, nbytes=None, **kw):
    return j.rec("result", call=call, tool=tool, text=text,
                 bytes=nbytes if nbytes is not None else len(text.encode()), **kw)


def unicode_markers():
    """Elision tails that count characters, odd args, control chars, attachment elision."""
    j = J()
    session(j)
    j.rec("user", id="u1", text="Start — ☃ \u0001\u001f\u007f\u2028 \"quoted\" back\\slash é",
          attachments=[{"id": "att1", "path": "u1.att/журнал-сборки-очень-длинное-имя-файла-📎.log",
                        "bytes": 900, "preview": "line1\nline2\r\n\u0000nul"}])
    assistant(j, "a1", "", [
        ("c1", "run", '{"command":"echo ✓✓✓ — проверка юникода в хвосте команды 🚀🚀 done"}'),
        ("c2", "read", '{"b":1,"a":2,"price":1.50,"big":1e5,"neg":-0,"exp":1E+2,"huge":123456789012345678901234567890}'),
        ("c3", "run", '["not","an","object"]'),
        ("c4", "run", '{"command":42,"x":"\\u00e9\\/\\u0007"}'),
        ("c5", "run", '"just a string that is fairly long, longer than forty characters"'),
        ("c6", "run", '{"command":"exactly forty chars: 0123456789012345678"}'),
    ])
    result(j, "c1", "run", "ok ✓\n" * 30)
    result(j, "c2", "read", "content\twith\ttabs\u000b\u000c\b")
    result(j, "c3", "run", "arr")
    result(j, "c4", "run", "num command")
    result(j, "c5", "run", "string args")
    result(j, "c6", "run", "forty")
    assistant(j, "a2", "Elision next 🙂", [])
    j.rec("elide", by="auto", calls=["c2", "c3", "c4", "c5", "c6", "att1"],
          estimate_before=9000, estimate_after=100, budget=5000, target=3500, keep_results=0)
    assistant(j, "a3", "Then a clear overrides c1's marker.", [("c7", "ctx", '{"action":"clear","call_ids":["c1"]}')])
    j.rec("clear", request=json.loads('{"call_ids":["c1"]}'), cleared=["c1"])
    result(j, "c7", "ctx", "cleared 1")
    assistant(j, "a4", "done", [])
    j.write("unicode-markers")


def clears():
    """Clear with before/keep_last/tool masks, including an id with no result."""
    j = J()
    session(j)
    j.rec("user", id="u1", text="Go.")
    for i in range(1, 7):
        tool = "read" if i % 2 else "grep"
        assistant(j, f"a{i}", "", [(f"c{i}", tool, '{"path":"f%d.rs"}' % i)])
        result(j, f"c{i}", tool, f"body {i} " * 20)
    # before points at a call with no result in the projection: keeps none
    assistant(j, "a7", "", [("x1", "ctx", '{"action":"clear","before":"c99"}')])
    j.rec("clear", request={"before": "c99"}, cleared=[], message="nothing to clear")
    result(j, "x1", "ctx", "nothing to clear")
    # keep_last larger than the selection
    assistant(j, "a8", "", [("x2", "ctx", '{"action":"clear","tool":"read","keep_last":10}')])
    j.rec("clear", request={"tool": "read", "keep_last": 10}, cleared=[], message="nothing to clear")
    result(j, "x2", "ctx", "nothing to clear")
    # before + tool + keep_last
    assistant(j, "a9", "", [("x3", "ctx", '{"action":"clear","before":"c6","tool":"read","keep_last":1}')])
    j.rec("clear", request={"before": "c6", "tool": "read", "keep_last": 1}, cleared=["c1", "c3"])
    result(j, "x3", "ctx", "cleared 2")
    # all remaining candidates (c1/c3 already named: not candidates); the ctx results are candidates too
    assistant(j, "a10", "", [("x4", "ctx", '{"action":"clear","keep_last":2}')])
    j.rec("clear", request={"keep_last": 2}, cleared=["c2", "c4", "c5", "c6", "x1"])
    result(j, "x4", "ctx", "cleared 5")
    assistant(j, "a11", "", [("x5", "ctx", '{"action":"clear","call_ids":[]}')])
    j.rec("clear", request={"call_ids": []}, cleared=[], message="nothing to clear")
    result(j, "x5", "ctx", "nothing to clear")
    assistant(j, "a12", "fin", [])
    j.write("clears")


def mirror_late_service():
    """Accepted mirror whose service calls' results arrive after the mirror record."""
    j = J()
    session(j)
    j.rec("user", id="u1", text="Task.")
    assistant(j, "a1", "", [("c1", "read", '{"path":"big.rs"}')])
    result(j, "c1", "read", "X" * 500)
    base = assistant(j, "a2", "", [("c2", "run", '{"command":"ls"}')])
    result(j, "c2", "run", "a\nb")
    n = j.rec("notice", id="n1", topic="manage_context", text="You manage your context.")
    assistant(j, "a3", "Editing the mirror.", [("m1", "read", '{"path":"LIVE_CONTEXT.json"}'),
                                               ("c3", "run", '{"command":"true"}')])
    result(j, "m1", "read", "{...mirror...}")
    result(j, "c3", "run", "")
    assistant(j, "a4", "", [("m2", "edit", '{"path":"LIVE_CONTEXT.json"}'), ("m3", "ctx", '{}'),
                            ("m4", "ctx", '{"action":"status"}')])
    result(j, "m2", "edit", "edited")
    draft = ('"draft":{"blocks":[{"type":"user","id":"u1","text":"Task."},'
             '{"type":"assistant","id":"a1","text":"","calls":[{"id":"c1","tool":"read","args":{"path":"big.rs"}}]},'
             '{"type":"result","call":"c1","tool":"read","text":""},'
             '{"type":"assistant","id":"a2","text":"","calls":[{"id":"c2","tool":"run","args":{"command":"ls"}}]},'
             '{"type":"result","call":"c2","tool":"run","text":"a\\nb"}]}')
    # the commit call m3's result and later a status call's result arrive after the mirror record
    j.rec("mirror", draft + ',"service_calls":["m1","m2","m3","m4"]', mirror_rev=1, base_rev=base + 1,
          status="accepted")
    result(j, "m3", "ctx", "mirror 1 applied")
    j.rec("notice", id="n2", topic="mirror_applied", text="Mirror revision 1 applied.")
    result(j, "m4", "ctx", "status: ok")
    assistant(j, "a5", "", [("c5", "ctx", '{"action":"status"}')])
    result(j, "c5", "ctx", "status: ok")
    assistant(j, "a6", "After.", [("c4", "read", '{"file_path":"x.rs"}')])
    result(j, "c4", "read", "x")
    # a rejected mirror: its service call stays in the recorded projection
    assistant(j, "a7", "", [("m5", "ctx", '{"action":"commit"}')])
    result(j, "m5", "ctx", "rejected")
    j.rec("mirror", '"draft":{"blocks":[]},"service_calls":["m5"]', mirror_rev=2, base_rev=base + 1,
          status="rejected", reason="user block u1 missing")
    assistant(j, "a8", "end", [])
    j.write("mirror-late-service")


def chain_then_mirror():
    """Chain compaction after base_rev, then an accepted mirror re-applying it; rotate later."""
    j = J()
    session(j)
    j.rec("user", id="u1", text="One.", attachments=[{"id": "at1", "path": "u1.att/p.txt", "bytes": 10, "preview": "pv"}])
    assistant(j, "a1", "", [("c1", "read", '{"path":"a"}')])
    result(j, "c1", "read", "AAAA")
    j.rec("compact", trigger="auto", summary="first summary", first_kept=3, mode="chain",
          fallback=False, tokens_before=10, tokens_after=5)
    base = j.rec("user", id="u2", text="Two.")
    assistant(j, "a2", "", [("c2", "read", '{"path":"b"}')])
    result(j, "c2", "read", "BBBB")
    j.rec("elide", by="auto", calls=["c1"], estimate_before=1, estimate_after=1, budget=1, target=1, keep_results=1)
    j.rec("compact", trigger="manual", instruction="keep u2", summary="second summary ☃",
          first_kept=base, mode="chain", fallback=False, tokens_before=10, tokens_after=5)
    assistant(j, "a3", "", [("m1", "ctx", '{"action":"commit"}')])
    result(j, "m1", "ctx", "ok")
    draft = ('"draft":{"blocks":[{"type":"user","id":"u1","text":"One."},'
             '{"type":"attachment","id":"at1","user":"u1","text":"pv"},'
             '{"type":"assistant","id":"a1","text":"","calls":[{"id":"c1","tool":"read","args":{"path":"a"}}]},'
             '{"type":"result","call":"c1","tool":"read","text":"AA"},'
             '{"type":"user","id":"u2","text":"Two."}]}')
    j.rec("mirror", draft + ',"service_calls":["m1"]', mirror_rev=1, base_rev=base, status="accepted")
    assistant(j, "a4", "", [("c3", "read", '{"path":"c"}')])
    result(j, "c3", "read", "CCCC")
    j.rec("compact", trigger="auto", summary="rotated", kept=["u2", "a4", "c3", "at1"], mode="rotate")
    assistant(j, "a5", "x", [])
    j.rec("compact", trigger="overflow", summary="empty", first_kept=len(j.lines) + 1)
    assistant(j, "a6", "y", [])
    j.write("chain-then-mirror")


def strategies_edges():
    """truncate exactly at N, multi-byte mid-truncate, pin with attachments, per-tool paths."""
    j = J()
    session(j)
    j.rec("notice", id="n0", text="A notice before the first user.")
    j.rec("user", id="u1", text="Первый user with sk-ABCDEFGHIJKLMNOPQRSTUV and AKIAABCDEFGHIJKLMNOP inside " + "ж" * 300,
          attachments=[{"id": "at1", "path": "u1.att/a", "bytes": 5, "preview": "attached preview"},
                       {"id": "at2", "path": "u1.att/b", "bytes": 6, "preview": "second"}])
    forty = "ä" * 20 + "b" * 20  # exactly 40 characters, 60 bytes
    assistant(j, "a1", "", [("c1", "read", '{"file_path":"src/ü.rs","path":7}'),
                            ("c2", "read", '{"filePath":"lib/x.ts"}'),
                            ("c3", "read", '{"pattern":"a very long pattern that has more than sixty characters in it, ok"}'),
                            ("c4", "cat", '"plain"')])
    result(j, "c1", "read", forty)
    result(j, "c2", "read", "😀" * 10 + "abc" + "€" * 10)
    result(j, "c3", "read", forty + "!", is_error=True)
    result(j, "c4", "cat", "x" * 41)
    assistant(j, "a2", "Searching 🔍", [("c5", "grep", '{"file":"g.rs","q":"x"}'), ("c6", "ls", '{"path":"."}'),
                                      ("c7", "edit", '{"path":"src/ü.rs","old":"a","new":"b"}')])
    result(j, "c5", "grep", "g" * 250)
    result(j, "c6", "ls", "€" * 201)
    result(j, "c7", "edit", "edit failed: no match\nsecond line", is_error=True)
    j.rec("user", id="u2", text="Second user ghp_abcdefghijklmnopqrstuvwxyz.")
    for i in range(8, 14):
        assistant(j, f"a{i}", f"step {i} " * (i - 7), [(f"c{i}", ["read", "grep", "run"][i % 3],
                                                       '{"path":"p%d","command":"c %d"}' % (i % 4, i))])
        result(j, f"c{i}", ["read", "grep", "run"][i % 3], ("r%d ☃ " % i) * (30 * i), is_error=(i == 10))
    assistant(j, "a14", "", [("k1", "ctx", '{"action":"status"}')])
    result(j, "k1", "ctx", "status")
    j.rec("notice", id="n1", topic="manage_context", text="manage")
    j.rec("user", id="u3", text="Third.")
    assistant(j, "a15", "Last words.", [])
    assistant(j, "a16", "", [])
    j.write("strategies-edges")


def lines_edges():
    """CRLF line ends, whitespace-only lines, a later system record, a model switch, a torn tail."""
    j = J()
    session(j)
    j.rec("user", id="u1", text="hi")
    assistant(j, "a1", "", [("c1", "run", '{"command":"ls"}')])
    result(j, "c1", "run", "out")
    j.rec("system", text="New system prompt, no tools.")
    j.rec("model", model="anthropic/claude-sonnet-4.5", ctx={"ctx_window": 200000})
    assistant(j, "a2", "bye", [])
    body = "\r\n".join(j.lines[:3]) + "\r\n   \n\t\n" + "\n".join(j.lines[3:]) + "\n"
    d = os.path.join(OUT, "lines-edges")
    os.makedirs(d, exist_ok=True)
    with open(os.path.join(d, "journal.jsonl"), "w", encoding="utf-8", newline="") as f:
        f.write(body + '{"rev":9,"ts":"2026-11-30T10:00:09Z","kind":"assis')


def summary_and_pause():
    """Summary caps (20 paths, 10 errors, cuts, redaction across cuts) and the pause rule."""
    j = J()
    session(j)
    j.rec("user", id="u1", text="Overview " + "o" * 320 + " ghs_0123456789abcdefXYZ")
    for i in range(1, 14):
        args = '{"path":"dir/file%02d.rs","file_path":"fp%02d","filePath":"dir/file%02d.rs","file":"f%d"}' % (i, i % 3, i, i)
        assistant(j, f"a{i}", ("Thinking about step %d. " % i) * (20 if i == 12 else 1), [(f"c{i}", "read", args)])
        err = "\nerror: something\nmore" if i == 2 else ("e" * 130 + " AKIA0123456789ABCDEF tail\nx")
        result(j, f"c{i}", "read", (err if i % 1 == 0 else "ok"), is_error=(i != 5))
        j.rec("user", id=f"u{i + 1}", text=("User %d says: " % i) + "pk-" + "Z" * 190 + "abcdefghijklmnopqrstu")
    # big results so that passes are ineffective (the tail keeps at least 3 blocks)
    for i in range(14, 22):
        assistant(j, f"a{i}", "", [(f"c{i}", "run", '{"command":"big %d"}' % i)])
        result(j, f"c{i}", "run", "R" * (1500 + 200 * i))
    assistant(j, "a22", "with text only service", [("s1", "read", '{"path":"LIVE_CONTEXT.json"}')])
    result(j, "s1", "read", "mirror")
    assistant(j, "a23", "", [("s2", "ctx", '{"action":"commit"}')])
    result(j, "s2", "ctx", "ok")
    n = len(j.lines)
    draft = {"blocks": []}
    j.rec("mirror", '"draft":{"blocks":[]},"service_calls":["s1","s2"]', mirror_rev=1, base_rev=n,
          status="accepted")
    assistant(j, "a24", "after an empty accepted draft", [])
    j.write("summary-and-pause")


def mirror_edits():
    """Accepted draft that edits args (own number text and key order) and drops a unit."""
    j = J()
    session(j)
    j.rec("user", id="u1", text="Edit me.")
    assistant(j, "a1", "", [("c1", "run", '{"command":"cat a-very-long-file-name-that-goes-on-and-on.txt","t":1.50}'),
                            ("c2", "read", '{"path":"x"}')])
    result(j, "c1", "run", "A" * 300)
    result(j, "c2", "read", "B" * 300)
    base = assistant(j, "a2", "Next.", [("c3", "run", '{"command":"ls"}')])
    result(j, "c3", "run", "listing ✓")
    j.rec("elide", by="auto", calls=["c1", "c3"], estimate_before=1, estimate_after=1, budget=1, target=1, keep_results=0)
    assistant(j, "a3", "", [("m1", "write", '{"path":"LIVE_CONTEXT.json","content":"..."}')])
    result(j, "m1", "write", "written")
    assistant(j, "a4", "", [("m2", "ctx", '{"action":"commit"}')])
    result(j, "m2", "ctx", "applied")
    draft = ('"draft":{"blocks":[{"text":"Edit me.","id":"u1","type":"user"},'
             '{"type":"assistant","id":"a1","text":"","calls":[{"id":"c1","tool":"run","args":{"t":1.5E0,"command":"cat"}}]},'
             '{"type":"result","call":"c1","tool":"run","text":"A…"},'
             '{"type":"assistant","id":"a2","text":"Next.","calls":[{"id":"c3","tool":"run","args":{"command":"ls"}}]}]}')
    j.rec("mirror", draft + ',"service_calls":["m1","m2"]', mirror_rev=1, base_rev=base, status="accepted")
    assistant(j, "a5", "done", [])
    j.write("mirror-edits")


def pause_rule():
    """An ineffective compaction pass (a summary nearly as big as what it replaced) pauses the
    next passes until the request has grown 10% (strategies.md §2). With compact-at-3000-repeat
    a second pass would run at the turn after the first one if the pause rule were ignored."""
    j = J()
    session(j)
    j.rec("user", id="u1", text="Overview: " + "w" * 400)
    calls = [(f"c{i}", "run", '{"path":"src/very/long/path/number/%02d/module.rs"}' % i) for i in range(1, 13)]
    assistant(j, "a1", "N" * 300, calls)
    for i in range(1, 13):
        result(j, f"c{i}", "run", "E%02d " % i + "e" * 80, is_error=True)
    for i in range(6):
        assistant(j, f"t{i}", "k", [])
    assistant(j, "b1", "B" * 700, [])
    assistant(j, "b2", "", [])
    j.rec("user", id="u2", text="n" * 100)
    for i in range(3, 8):
        assistant(j, f"z{i}", "", [])
    j.write("pause-rule")

if __name__ == "__main__":
    unicode_markers()
    clears()
    mirror_late_service()
    chain_then_mirror()
    strategies_edges()
    lines_edges()
    summary_and_pause()
    mirror_edits()
    pause_rule()
    print("wrote", OUT, file=sys.stderr)
