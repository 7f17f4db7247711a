#!/usr/bin/env python3
"""What a one-line description per deferred tool would cost in the
gateway's announcement, against what an exact select: saves.

For each recorded request in t/fixtures (claude-code/*/NNN.json and
clients/*/NNN.json) that the gateway defers (`build/toolsearch rewrite
--search gateway`), the deferred tools are the request's tools missing
from the rewritten tools[].  A one-line description is the first
sentence of the tool's description (up to its first ". ", line break or
DESC_MAX bytes), written after the name as " (line)", JSON-escaped.

What an exact select: saves: a keyword search loads up to TS_MAX tools
(the search's default), a select: the one it names, so a search the
model turns into a select: keeps up to TS_MAX - 1 tool definitions out
of every later request of the session.  Both the lines and the loaded
definitions sit in the cached prefix, so they cost alike per byte; the
break-even is the number of keyword searches per session that the lines
must turn into exact selects:

    lines bytes / ((TS_MAX - 1) x mean deferred definition bytes)

Usage: bench/announce_cost.py [--json]
"""

import glob
import json
import os
import subprocess
import sys

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
FIXTURES = os.path.join(ROOT, "t", "fixtures")
DESC_MAX = 100
TS_MAX = 5


def one_line(desc):
    """the first sentence of a description, at most DESC_MAX bytes"""
    line = (desc or "").strip().split("\n")[0]
    cut = line.find(". ")
    line = line[:cut + 1] if cut >= 0 else line
    raw = line.encode("utf-8")[:DESC_MAX]
    return raw.decode("utf-8", "ignore")


def deferred(path):
    """the tools the gateway defers in a request, or None"""
    out = subprocess.run(
        [os.path.join(ROOT, "build", "toolsearch"), "rewrite", "--search",
         "gateway", path], capture_output=True, timeout=60)
    if b"decision=deferred" not in out.stderr:
        return None
    with open(path, "rb") as f:
        tools = json.loads(f.read()).get("tools") or []
    kept = {t.get("name") for t in json.loads(out.stdout).get("tools", [])}
    return [t for t in tools if t.get("name") not in kept]


def measure(path):
    tools = deferred(path)
    if not tools:
        return None
    lines = sum(len(json.dumps(" (%s)" % one_line(t.get("description")),
                               ensure_ascii=False).encode("utf-8")) - 2
                for t in tools)
    names = sum(len(t["name"].encode("utf-8")) + 2 for t in tools)
    defs = sum(len(json.dumps(t, ensure_ascii=False,
                              separators=(",", ":")).encode("utf-8"))
               for t in tools) / len(tools)
    return {"request": os.path.relpath(path, FIXTURES), "deferred": len(tools),
            "names": names, "lines": lines, "definition": defs,
            "break_even": lines / ((TS_MAX - 1) * defs)}


def main():
    paths = sorted(glob.glob(os.path.join(FIXTURES, "claude-code", "*",
                                          "[0-9][0-9][0-9].json"))
                   + glob.glob(os.path.join(FIXTURES, "clients", "*",
                                            "[0-9][0-9][0-9].json")))
    rows = [r for r in map(measure, paths) if r]
    if "--json" in sys.argv:
        print(json.dumps(rows))
        return
    print("| request | deferred | names bytes | one-line bytes "
          "| mean definition bytes | searches to break even |")
    print("|---|---|---|---|---|---|")
    for r in rows:
        print("| %s | %d | %d | %d | %.0f | %.2f |"
              % (r["request"], r["deferred"], r["names"], r["lines"],
                 r["definition"], r["break_even"]))


if __name__ == "__main__":
    main()
