#!/usr/bin/env python3
"""Request bodies for the proxy benchmarks.

The recorded Claude Code request t/fixtures/claude-code/ts-unset/002.json
(161 KB, 149 tools) and conversations grown from it to a target size: the
same tools and system prompt, then a long history of tool_use/tool_result
turns calling built-in tools, in which every eighth turn carries a hosted
tool search (server_tool_use, tool_search_tool_result with tool_reference
blocks) and calls a tool it found, as a client behind the gateway sends
them back.  Tool inputs hold numbers a
double cannot keep (2^63 - 1, 0.1 + 0.2 as typed) and results hold escapes
and raw UTF-8, so a rewrite that re-serialises shows.  The output is a
function of the size only: the same bytes on every run.

    bench/corpus.py SIZE_KB OUT.json
"""

import json
import os
import random
import sys

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
FIXTURE = os.path.join(ROOT, "t", "fixtures", "claude-code", "ts-unset",
                       "002.json")

WORDS = ("the gateway reads every request body and forwards what it does "
         "not change byte for byte while deferring tool definitions that the "
         "model can find with a search résumé naïve 東京 ünïcödé — "
         "quotes \" and backslashes \\ and tabs\t").split(" ")

# a number cJSON or Lua keeps as a double prints differently
NUMBERS = [9223372036854775807, 12345678901234567890, 0.30000000000000004,
           1e-07, -0.0, 100000000000000000000000]


def fixture():
    with open(FIXTURE, "rb") as f:
        return f.read()


def text(rnd, n):
    """about n bytes of prose with escapes and raw UTF-8, in lines"""
    out, size = [], 0
    while size < n:
        line = " ".join(rnd.choice(WORDS) for _ in range(12))
        out.append(line)
        size += len(line.encode()) + 1
    return "\n".join(out)


def search_turn(rnd, k, mcp):
    """an assistant turn with a hosted search that loaded three tools"""
    found = rnd.sample(mcp, 3)
    sid = "srvtoolu_bench%06d" % k
    return [
        {"type": "text", "text": "Let me look for the right tool."},
        {"type": "server_tool_use", "id": sid,
         "name": "tool_search_tool_bm25",
         "input": {"query": " ".join(found[0].split("__")[1:])}},
        {"type": "tool_search_tool_result", "tool_use_id": sid,
         "content": {"type": "tool_search_tool_search_result",
                     "tool_references": [
                         {"type": "tool_reference", "tool_name": n}
                         for n in found]}},
    ], found[0]


def turns(rnd, k, builtin, mcp):
    """one assistant turn calling a tool and the user turn answering it"""
    blocks, name = [], rnd.choice(builtin)
    if k % 8 == 0:
        blocks, name = search_turn(rnd, k, mcp)
    else:
        blocks.append({"type": "text", "text": text(rnd, 200)})
    uid = "toolu_bench%06d" % k
    blocks.append({"type": "tool_use", "id": uid, "name": name,
                   "input": {"path": "/srv/app/src/module_%d.c" % k,
                             "limit": rnd.choice(NUMBERS),
                             "offset": k}})
    result = text(rnd, rnd.randint(2000, 6000))
    content = result if k % 2 else [{"type": "text", "text": result}]
    return [{"role": "assistant", "content": blocks},
            {"role": "user", "content": [
                {"type": "tool_result", "tool_use_id": uid,
                 "content": content}]}]


def conversation(size, back=0):
    """the fixture's request with history grown to at least size bytes;
    back > 0: the turn that many exchanges before it.  As Claude Code
    does, the last message's last block carries the cache breakpoint,
    which moves to the new last message on the next turn."""
    body = json.loads(fixture())
    rnd = random.Random(size)
    tools = [t["name"] for t in body["tools"]]
    mcp = [n for n in tools if n.startswith("mcp__")]
    builtin = [n for n in tools if n not in mcp]
    first = body["messages"][0]
    messages, k, total = [first], 0, len(fixture())
    while total < size:
        k += 1
        pair = turns(rnd, k, builtin, mcp)
        messages += pair
        total += len(json.dumps(pair, ensure_ascii=False).encode())
    messages = messages[:len(messages) - 2 * back]
    last = messages[-1]["content"]
    if isinstance(last, list):
        last[-1] = dict(last[-1], cache_control={"type": "ephemeral"})
    body["messages"] = messages
    return json.dumps(body, ensure_ascii=False,
                      separators=(",", ":")).encode()


def main():
    data = conversation(int(sys.argv[1]) * 1024)
    with open(sys.argv[2], "wb") as f:
        f.write(data)
    return 0


if __name__ == "__main__":
    sys.exit(main())
