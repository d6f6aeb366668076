"""Independent reference implementation of the ctxj journal spec (journal-v1.md, strategies.md).

Written from the spec text alone (not from ctxj's Rust code) so that `check.py` can compare the
two. Python 3.11 standard library only. Covers: the recorded projection at every revision/turn,
canonical JSON bytes (§4), prompt_sha256, markers (§5), the clear selection rule, and the
character-based strategies of strategies.md §2 (baseline, truncate-N, age-truncate-N-keep-K,
mid-truncate-N, sliding-N[-pin], per-tool-keep-K, compact-at-N[-structured][-repeat|-chain]).
"""

from __future__ import annotations

import hashlib
import json
import re
from dataclasses import dataclass, field
from typing import Any

# ---------------------------------------------------------------------------------------------
# JSON values that keep key order and number text as written


class Num:
    """A JSON number kept as its literal text (serde_json arbitrary_precision)."""

    __slots__ = ("text",)

    def __init__(self, text: str):
        self.text = text

    def __int__(self) -> int:
        return int(self.text)

    def __repr__(self) -> str:
        return f"Num({self.text})"


class Obj(list):
    """A JSON object as an ordered list of (key, value) pairs (serde_json preserve_order)."""

    def get(self, key, default=None):  # type: ignore[override]
        found = default
        for k, v in self:
            if k == key:
                found = v
        return found

    def has(self, key) -> bool:
        return any(k == key for k, _ in self)


def _pairs(pairs):
    # Duplicate keys: serde_json's map keeps the first position and the last value.
    out = Obj()
    index = {}
    for k, v in pairs:
        if k in index:
            out[index[k]] = (k, v)
        else:
            index[k] = len(out)
            out.append((k, v))
    return out


def _bad_constant(name):
    raise ValueError(f"invalid JSON constant {name}")


def parse_json(line: str):
    return json.loads(
        line,
        object_pairs_hook=_pairs,
        parse_float=Num,
        parse_int=Num,
        parse_constant=_bad_constant,
    )


_SHORT = {'"': '\\"', "\\": "\\\\", "\n": "\\n", "\r": "\\r", "\t": "\\t", "\b": "\\b", "\f": "\\f"}


def esc(s: str) -> str:
    out = ['"']
    for ch in s:
        if ch in _SHORT:
            out.append(_SHORT[ch])
        elif ord(ch) < 0x20:
            out.append("\\u%04x" % ord(ch))
        else:
            out.append(ch)
    out.append('"')
    return "".join(out)


def dump(v) -> str:
    """Compact JSON of a value parsed by parse_json (or plain Python values)."""
    if v is None:
        return "null"
    if v is True:
        return "true"
    if v is False:
        return "false"
    if isinstance(v, Num):
        return v.text
    if isinstance(v, int):
        return str(v)
    if isinstance(v, str):
        return esc(v)
    if isinstance(v, Obj):
        return "{" + ",".join(esc(k) + ":" + dump(x) for k, x in v) + "}"
    if isinstance(v, dict):
        return "{" + ",".join(esc(k) + ":" + dump(x) for k, x in v.items()) + "}"
    if isinstance(v, list):
        return "[" + ",".join(dump(x) for x in v) + "]"
    raise TypeError(type(v))


def num(v, default=None):
    if v is None:
        return default
    if isinstance(v, Num):
        return int(v.text)
    return v


# ---------------------------------------------------------------------------------------------
# Blocks

# `tools` absent from a system record (omitted from the block); a present `null` is printed
# (the spec: "tools omitted when absent in the journal").
ABSENT = object()


def tools_of(r):
    return r.get("tools") if r.has("tools") else ABSENT


@dataclass
class Block:
    type: str  # system summary user attachment notice assistant result
    text: str
    id: str | None = None  # user/assistant/notice/attachment id; result: the call id
    src: int = 0  # source rev
    tools: Any = None  # system: ABSENT when the record has no `tools` key
    user: str | None = None  # attachment: its user id
    calls: list = field(default_factory=list)  # assistant: [(id, tool, args)]
    tool: str | None = None  # result

    def copy(self) -> "Block":
        return Block(self.type, self.text, self.id, self.src, self.tools, self.user,
                     list(self.calls), self.tool)

    def canonical(self) -> str:
        t = self.type
        if t == "system":
            s = '{"type":"system","text":' + esc(self.text)
            if self.tools is not ABSENT:
                s += ',"tools":' + dump(self.tools)
            return s + "}"
        if t == "summary":
            return '{"type":"summary","text":' + esc(self.text) + "}"
        if t == "user":
            return '{"type":"user","id":' + esc(self.id) + ',"text":' + esc(self.text) + "}"
        if t == "attachment":
            return ('{"type":"attachment","id":' + esc(self.id) + ',"user":' + esc(self.user)
                    + ',"text":' + esc(self.text) + "}")
        if t == "notice":
            return '{"type":"notice","id":' + esc(self.id) + ',"text":' + esc(self.text) + "}"
        if t == "assistant":
            s = '{"type":"assistant","id":' + esc(self.id) + ',"text":' + esc(self.text)
            if self.calls:
                s += ',"calls":[' + ",".join(
                    '{"id":' + esc(i) + ',"tool":' + esc(tl) + ',"args":' + dump(a) + "}"
                    for i, tl, a in self.calls) + "]"
            return s + "}"
        if t == "result":
            return ('{"type":"result","call":' + esc(self.id) + ',"tool":' + esc(self.tool)
                    + ',"text":' + esc(self.text) + "}")
        raise ValueError(t)


def canonical(blocks) -> bytes:
    return ("[" + ",".join(b.canonical() for b in blocks) + "]").encode("utf-8")


def sha256(blocks) -> str:
    return hashlib.sha256(canonical(blocks)).hexdigest()


def chars(s: str) -> int:
    return len(s)


# ---------------------------------------------------------------------------------------------
# Journal


class Journal:
    def __init__(self, path: str):
        self.records = []
        with open(path, "rb") as f:
            data = f.read()
        for raw in data.split(b"\n"):
            if raw.endswith(b"\r"):
                raw = raw[:-1]
            text = raw.decode("utf-8")
            if not text.strip():
                continue
            try:
                rec = parse_json(text)
            except ValueError:
                # a torn last line: ignored (only valid at the end; we do not police that)
                continue
            self.records.append(rec)
        self.by_rev = {num(r.get("rev")): r for r in self.records}
        self.calls = {}  # call id -> (assistant record, args, tool)
        self.results = {}  # call id -> result record
        self.attachments = {}  # attachment id -> (user record, attachment obj)
        self.src_of = {}  # block id (user/assistant/notice/attachment/result call) -> rev
        self.turns = []  # rev of each assistant record
        self.first_user = None
        for r in self.records:
            kind = r.get("kind")
            rev = num(r.get("rev"))
            if kind == "assistant":
                self.turns.append(rev)
                self.src_of[r.get("id")] = rev
                for c in r.get("calls") or []:
                    self.calls[c.get("id")] = (r, c.get("args"), c.get("tool"))
            elif kind == "result":
                self.results.setdefault(r.get("call"), r)
                self.src_of.setdefault(("result", r.get("call")), rev)
            elif kind == "user":
                self.src_of[r.get("id")] = rev
                if self.first_user is None:
                    self.first_user = r
                for a in r.get("attachments") or []:
                    self.attachments[a.get("id")] = (r, a)
                    self.src_of[a.get("id")] = rev
            elif kind == "notice":
                self.src_of[r.get("id")] = rev

    def session(self):
        for r in self.records:
            if r.get("kind") == "session":
                return r
        return None


# ---------------------------------------------------------------------------------------------
# Markers (§5)


def cut_tail(s: str, n: int) -> str:
    if len(s) > n:
        return "…" + s[-n:]
    return s


def args_tail_source(args) -> str:
    if isinstance(args, Obj):
        c = args.get("command")
        if isinstance(c, str):
            return c
    return dump(args)


def elide_marker_result(j: Journal, call: str) -> str | None:
    res = j.results.get(call)
    if res is None:
        return None
    found = j.calls.get(call)
    args = found[1] if found else None
    tail = cut_tail(args_tail_source(args), 40)
    return f"[elided: {res.get('tool')}, {num(res.get('bytes'), 0)} bytes, {tail}]"


def elide_marker_attachment(j: Journal, att_id: str) -> str | None:
    found = j.attachments.get(att_id)
    if found is None:
        return None
    a = found[1]
    path = a.get("path")
    src = path if isinstance(path, str) else dump(path)
    return f"[elided: attachment, {num(a.get('bytes'), 0)} bytes, {cut_tail(src, 40)}]"


def clear_marker(j: Journal, call: str) -> str | None:
    res = j.results.get(call)
    if res is None:
        return None
    return f"[cleared: {res.get('tool')}, {num(res.get('bytes'), 0)} bytes]"


# ---------------------------------------------------------------------------------------------
# Recorded projection


def block_of_record(r, rev) -> list[Block]:
    kind = r.get("kind")
    if kind == "notice":
        return [Block("notice", r.get("text") or "", r.get("id"), rev)]
    if kind == "user":
        out = [Block("user", r.get("text") or "", r.get("id"), rev)]
        for a in r.get("attachments") or []:
            out.append(Block("attachment", a.get("preview") or "", a.get("id"), rev,
                             user=r.get("id")))
        return out
    if kind == "assistant":
        calls = [(c.get("id"), c.get("tool"), c.get("args")) for c in (r.get("calls") or [])]
        return [Block("assistant", r.get("text") or "", r.get("id"), rev, calls=calls)]
    if kind == "result":
        return [Block("result", r.get("text") or "", r.get("call"), rev, tool=r.get("tool"))]
    return []


class Recorded:
    """Record-by-record replay of the recorded projection."""

    def __init__(self, j: Journal):
        self.j = j
        self.system: Block | None = None
        self.summaries: list[Block] = []
        self.conv: list[Block] = []
        self.dropped_service: set = set()
        self.decisions: list = []  # (rev, record) of elide/clear/compact
        self.named: set = set()  # ids named by elide/clear (clear candidates)
        self.model = None

    def blocks(self):
        out = []
        if self.system is not None:
            out.append(self.system)
        return out + self.summaries + self.conv

    def step(self, r):
        j = self.j
        rev = num(r.get("rev"))
        kind = r.get("kind")
        if kind == "session":
            self.model = r.get("model")
        elif kind == "system":
            self.system = Block("system", r.get("text") or "", None, rev, tools=tools_of(r))
        elif kind in ("notice", "user", "assistant"):
            self.conv.extend(block_of_record(r, rev))
        elif kind == "result":
            if r.get("call") not in self.dropped_service:
                self.conv.extend(block_of_record(r, rev))
        elif kind == "elide":
            self.apply_elide(r)
            self.decisions.append((rev, r))
            for c in r.get("calls") or []:
                self.named.add(c)
        elif kind == "clear":
            self.apply_clear(r)
            self.decisions.append((rev, r))
            for c in r.get("cleared") or []:
                self.named.add(c)
        elif kind == "compact":
            self.apply_compact(r, rev, summary=True)
            self.decisions.append((rev, r))
        elif kind == "mirror":
            if r.get("status") == "accepted":
                self.apply_mirror(r, rev)
        elif kind == "model":
            self.model = r.get("model")

    def apply_elide(self, r):
        j = self.j
        for cid in r.get("calls") or []:
            for b in self.conv:
                if b.type == "result" and b.id == cid:
                    m = elide_marker_result(j, cid)
                    if m is not None:
                        b.text = m
                elif b.type == "attachment" and b.id == cid:
                    m = elide_marker_attachment(j, cid)
                    if m is not None:
                        b.text = m

    def apply_clear(self, r):
        for cid in r.get("cleared") or []:
            for b in self.conv:
                if b.type == "result" and b.id == cid:
                    m = clear_marker(self.j, cid)
                    if m is not None:
                        b.text = m

    def apply_compact(self, r, rev, summary: bool):
        fk = r.get("first_kept")
        kept = r.get("kept")
        if fk is not None:
            fk = num(fk)
            self.conv = [b for b in self.conv if b.src >= fk]
        elif kept is not None:
            ks = set(kept)
            self.conv = [b for b in self.conv if b.id in ks]
        else:
            self.conv = []
        if summary:
            s = Block("summary", r.get("summary") or "", None, rev)
            if r.get("mode") == "chain":
                self.summaries = self.summaries + [s]
            else:
                self.summaries = [s]

    def apply_mirror(self, r, rev):
        j = self.j
        base = num(r.get("base_rev"))
        draft = r.get("draft")
        dblocks = draft.get("blocks") if isinstance(draft, Obj) else None
        # A draft that cannot be read as blocks cannot be applied: the mirror changes nothing
        # (the spec is silent; "applied as recorded" presumes a readable draft).
        if not isinstance(dblocks, list) or not all(isinstance(d, Obj) for d in dblocks):
            return
        new = []
        for d in dblocks:
            t = d.get("type")
            if t in ("user", "notice"):
                b = Block(t, d.get("text") or "", d.get("id"))
                b.src = j.src_of.get(b.id, 0)
            elif t == "attachment":
                b = Block(t, d.get("text") or "", d.get("id"), user=d.get("user"))
                b.src = j.src_of.get(b.id, 0)
            elif t == "assistant":
                calls = [(c.get("id"), c.get("tool"), c.get("args")) for c in (d.get("calls") or [])]
                b = Block(t, d.get("text") or "", d.get("id"), calls=calls)
                b.src = j.src_of.get(b.id, 0)
            elif t == "result":
                b = Block(t, d.get("text") or "", d.get("call"), tool=d.get("tool"))
                b.src = j.src_of.get(("result", b.id), 0)
            else:
                continue
            new.append(b)
        new.extend(b for b in self.conv if b.src > base)
        self.conv = new
        for drev, d in self.decisions:
            if base < drev < rev:
                k = d.get("kind")
                if k == "elide":
                    self.apply_elide(d)
                elif k == "clear":
                    self.apply_clear(d)
                elif k == "compact":
                    self.apply_compact(d, drev, summary=False)
        svc = set(r.get("service_calls") or [])
        self.conv = remove_calls(self.conv, svc)
        self.dropped_service |= svc


def remove_calls(conv, ids):
    out = []
    for b in conv:
        if b.type == "result" and b.id in ids:
            continue
        if b.type == "assistant" and any(c[0] in ids for c in b.calls):
            b = b.copy()
            b.calls = [c for c in b.calls if c[0] not in ids]
            if not b.calls and b.text == "":
                continue
        out.append(b)
    return out


def recorded_turns(j: Journal):
    """Yield (turn k, assistant record, request blocks) for every turn."""
    rp = Recorded(j)
    k = 0
    for r in j.records:
        if r.get("kind") == "assistant":
            k += 1
            yield k, r, [b.copy() for b in rp.blocks()]
        rp.step(r)


def recorded_at_rev(j: Journal, n: int):
    rp = Recorded(j)
    for r in j.records:
        if num(r.get("rev")) > n:
            break
        rp.step(r)
    return rp.blocks()


# ---------------------------------------------------------------------------------------------
# Clear selection rule


def clear_selection(j: Journal, clear_rec) -> list:
    rev = num(clear_rec.get("rev"))
    rp = Recorded(j)
    for r in j.records:
        if num(r.get("rev")) >= rev:
            break
        rp.step(r)
    req = clear_rec.get("request") or Obj()
    cands = [b for b in rp.conv if b.type == "result" and b.id not in rp.named]
    if req.has("call_ids") and req.get("call_ids") is not None:
        ids = set(req.get("call_ids"))
        cands = [b for b in cands if b.id in ids]
    if req.has("before") and req.get("before") is not None:
        before = req.get("before")
        pos = next((i for i, b in enumerate(rp.conv) if b.type == "result" and b.id == before), None)
        if pos is None:
            cands = []
        else:
            idx = {id(b): i for i, b in enumerate(rp.conv)}
            cands = [b for b in cands if idx[id(b)] < pos]
    tool = req.get("tool")
    if tool is not None:
        cands = [b for b in cands if b.tool == tool]
    kl = num(req.get("keep_last"))
    if kl:
        cands = cands[: max(0, len(cands) - kl)]
    return [b.id for b in cands]


# ---------------------------------------------------------------------------------------------
# Raw conversation (strategies.md §1)

SERVICE_TOPICS = {"manage_context", "mirror_applied", "mirror_rejected"}


def raw_conversation(j: Journal):
    """(system blocks by rev, conversation blocks) of the raw conversation."""
    svc = set()
    for r in j.records:
        if r.get("kind") == "mirror":
            svc |= set(r.get("service_calls") or [])
        if r.get("kind") == "assistant":
            for c in r.get("calls") or []:
                if c.get("tool") == "ctx":
                    svc.add(c.get("id"))
    systems = []
    conv = []
    for r in j.records:
        kind = r.get("kind")
        rev = num(r.get("rev"))
        if kind == "system":
            systems.append(Block("system", r.get("text") or "", None, rev, tools=tools_of(r)))
        elif kind == "notice":
            if r.get("topic") in SERVICE_TOPICS:
                continue
            conv.extend(block_of_record(r, rev))
        elif kind in ("user", "assistant", "result"):
            conv.extend(block_of_record(r, rev))
    conv = remove_calls(conv, svc)
    return systems, conv


def system_before(systems, rev):
    s = None
    for b in systems:
        if b.src < rev:
            s = b
    return s


# ---------------------------------------------------------------------------------------------
# Strategies


def truncate_text(text: str, n: int) -> str:
    if len(text) > n:
        return text[:n] + f"…[truncated {len(text) - n} chars]"
    return text


def mid_truncate(text: str, n: int) -> str:
    b = text.encode("utf-8")
    if len(b) <= n:
        return text
    head = (n + 1) // 2
    tail = n // 2
    # move the head end inward (backwards) to a character boundary
    while head > 0 and (b[head] & 0xC0) == 0x80:
        head -= 1
    start = len(b) - tail
    while start < len(b) and (b[start] & 0xC0) == 0x80:
        start += 1
    removed = start - head
    return b[:head].decode() + f"…[truncated {removed} bytes]…" + b[start:].decode()


READ_TOOLS = {"read", "read_file", "Read", "cat", "view"}
LIST_TOOLS = {"ls", "list_files", "glob", "Glob", "grep", "Grep", "find"}
PATH_KEYS = ("path", "file_path", "filePath", "file")


def stale_read(args) -> str:
    p = None
    if isinstance(args, Obj):
        for k in PATH_KEYS:
            v = args.get(k)
            if isinstance(v, str):
                p = v
                break
    if p is None:
        p = cut_tail(dump(args), 60)
    return f"[stale read: {p}; read again if needed]"


def conv_size(blocks) -> int:
    n = 0
    for b in blocks:
        if b.type == "system":
            continue
        n += len(b.text)
        for _, tool, args in b.calls:
            n += len(tool or "") + len(dump(args))
    return n


def cut_to(s: str, n: int) -> str:
    return s[:n] + "…" if len(s) > n else s


REDACT = [
    re.compile(r"(sk|pk|rk|ghp|gho|ghu|ghs|xoxb|xoxp)[-_][A-Za-z0-9_-]{16,}"),
    re.compile(r"AKIA[0-9A-Z]{16}"),
]


def summarize(j: Journal, S) -> str:
    first = j.first_user
    out = ["## Task Overview", cut_to((first.get("text") or "") if first else "", 300)]
    out.append("## Current State")
    paths = []
    for b in S:
        if b.type != "assistant":
            continue
        for _, _, args in b.calls:
            if isinstance(args, Obj):
                for k in PATH_KEYS:
                    v = args.get(k)
                    if isinstance(v, str) and v not in paths:
                        paths.append(v)
    paths = paths[:20]
    out.extend(f"- {p}" for p in paths) if paths else out.append("- (none)")
    out.append("## Important Discoveries")
    errs = []
    for b in S:
        if b.type == "result":
            rec = j.results.get(b.id)
            if rec is not None and rec.get("is_error") is True:
                errs.append(f"- {b.tool} {b.id}: {cut_to(b.text.split(chr(10))[0], 120)}")
    errs = errs[:10]
    out.extend(errs) if errs else out.append("- (none)")
    out.append("## Next Steps")
    last = None
    for b in S:
        if b.type == "assistant" and b.text != "":
            last = b.text
    out.append(cut_to(last, 300) if last is not None else "(none)")
    out.append("## Context to Preserve")
    users = [b for b in S if b.type == "user"][-3:]
    if users:
        out.extend(f"- {cut_to(b.text, 200)}" for b in users)
    else:
        out.append("- (none)")
    s = "\n".join(out)
    for rx in REDACT:
        s = rx.sub("[REDACTED]", s)
    return s


def parse_strategy(name: str):
    m = re.fullmatch(r"baseline", name)
    if m:
        return ("baseline",)
    m = re.fullmatch(r"truncate-(\d+)", name)
    if m:
        return ("truncate", int(m[1]))
    m = re.fullmatch(r"age-truncate-(\d+)-keep-(\d+)", name)
    if m:
        return ("age", int(m[1]), int(m[2]))
    m = re.fullmatch(r"mid-truncate-(\d+)", name)
    if m:
        return ("mid", int(m[1]))
    m = re.fullmatch(r"sliding-(\d+)(-pin)?", name)
    if m:
        return ("sliding", int(m[1]), bool(m[2]))
    m = re.fullmatch(r"per-tool-keep-(\d+)", name)
    if m:
        return ("pertool", int(m[1]))
    m = re.fullmatch(r"compact-at-(\d+)(-structured)?(-repeat|-chain)?", name)
    if m:
        return ("compact", int(m[1]), (m[3] or "")[1:] or "once")
    raise ValueError(f"unsupported strategy {name}")


def strategy_turns(j: Journal, name: str):
    """Yield (turn k, request blocks) of strategy `name` for every turn."""
    spec = parse_strategy(name)
    systems, conv = raw_conversation(j)
    if spec[0] == "compact":
        yield from compact_turns(j, systems, conv, spec[1], spec[2])
        return
    for k, rev in enumerate(j.turns, 1):
        sysb = system_before(systems, rev)
        body = [b.copy() for b in conv if b.src < rev]
        body = apply_stateless(j, spec, body)
        yield k, ([sysb] if sysb else []) + body


def apply_stateless(j, spec, body):
    kind = spec[0]
    if kind == "baseline":
        return body
    if kind == "truncate":
        for b in body:
            if b.type == "result":
                b.text = truncate_text(b.text, spec[1])
        return body
    if kind == "age":
        res = [b for b in body if b.type == "result"]
        keep = set(map(id, res[len(res) - spec[2]:])) if spec[2] > 0 else set()
        for b in res:
            if id(b) not in keep:
                b.text = truncate_text(b.text, spec[1])
        return body
    if kind == "mid":
        for b in body:
            if b.type == "result":
                b.text = mid_truncate(b.text, spec[1])
        return body
    if kind == "sliding":
        n, pin = spec[1], spec[2]
        kept = body[max(0, len(body) - n):] if n > 0 else []
        present = {c[0] for b in kept if b.type == "assistant" for c in b.calls}
        while kept and kept[0].type == "result" and kept[0].id not in present:
            kept = kept[1:]
        if pin:
            first = next((b for b in body if b.type == "user"), None)
            if first is not None and not any(b is first for b in kept):
                kept = [first] + kept
        return kept
    if kind == "pertool":
        k = spec[1]
        by_tool = {}
        for b in body:
            if b.type == "result":
                by_tool.setdefault(b.tool, []).append(b)
        for tool, lst in by_tool.items():
            old = lst[: max(0, len(lst) - k)]
            for b in old:
                if tool in READ_TOOLS:
                    found = j.calls.get(b.id)
                    b.text = stale_read(found[1] if found else None)
                elif tool in LIST_TOOLS:
                    b.text = truncate_text(b.text, 200)
        return body
    raise ValueError(kind)


# The pause rule of ineffective passes; switchable so that tests can tell whether a journal
# exercises it.
PAUSE = True


def compact_turns(j, systems, raw, n, mode):
    first = next((b for b in raw if b.type == "user"), None)
    conv: list[Block] = []  # the strategy's conversation (incl. the first user until compacted)
    pinned: list[Block] = []  # the pinned first user block, once compacted
    summaries: list[Block] = []
    compacted = False
    pause_until = None  # size right after an ineffective pass
    prev = 0

    def is_first(b):
        return first is not None and b.type == "user" and b.id == first.id

    for k, rev in enumerate(j.turns, 1):
        sysb = system_before(systems, rev)
        head = [sysb] if sysb else []
        conv.extend(b.copy() for b in raw if prev <= b.src < rev)
        prev = rev
        req = head + pinned + summaries + conv
        size = conv_size(req)
        may = mode != "once" or not compacted
        if pause_until is not None:
            if size * 10 > pause_until * 11:
                pause_until = None
            else:
                may = False
        if may and size > n:
            pin = [b for b in conv if is_first(b)]
            C = [b for b in conv if not is_first(b)]
            cut = choose_cut(C, n)
            if cut is not None and cut >= 5:
                S, tail = C[:cut], C[cut:]
                summ = Block("summary", summarize(j, S), None, rev)
                if pin:
                    pinned = pin
                conv = tail
                summaries = summaries + [summ] if mode == "chain" else [summ]
                compacted = True
                req = head + pinned + summaries + conv
                after = conv_size(req)
                if PAUSE and after * 5 > size * 4:
                    pause_until = after
        yield k, req


def choose_cut(C, n):
    valid = []
    for i, b in enumerate(C):
        if b.type not in ("user", "assistant", "notice"):
            continue
        before_calls = {c[0] for x in C[:i] if x.type == "assistant" for c in x.calls}
        if any(x.type == "result" and x.id in before_calls for x in C[i:]):
            continue
        valid.append(i)
    fits = [i for i in valid if conv_size(C[i:]) * 4 <= n]
    # No fitting cut: the (empty) tail that always fits has fewer than 3 blocks, so the
    # "at least 3 blocks" fallback applies (tiered says "at most X (at least 3 blocks)").
    cut = fits[0] if fits else len(C)
    if len(C) - cut < 3:
        three = [i for i in valid if len(C) - i >= 3]
        if not three:
            return None
        cut = three[-1]
    return cut
