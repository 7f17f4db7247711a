#!/usr/bin/env python3
"""Chat Completions through the module against plain proxy_pass, in one
nginx, in the same run.

The body is opencode's recorded request in Chat Completions
(t/chat_fixtures.py, `stream: false`, 77 KB, 63 KB of them tools).  One
nginx (t/gateway.py, one worker) has /plain/ (proxy_pass) and /module/
(`toolsearch on;` alone: gateway search, the request a one-call loop);
its upstream is a second nginx answering a short completion, so that the
figures measure the gateway.  wrk drives each location in turn,
interleaved, for RUNS rounds, as bench/proxy_bench.py does.

Writes the "chat" section of docs/benchmarks.md.
"""

import json
import os
import sys
import tempfile

import report                       # puts t/ on the path
from gateway import Gateway, free_port     # noqa: E402
import proxy_bench                  # noqa: E402
from chat_fixtures import chat_requests, tool_bytes     # noqa: E402

RUNS = 5
LOCATIONS = ("plain", "module")

GATEWAY = report.NGINX_COMMON + """
    location /plain/ {
        proxy_pass http://emulator/;
    }
    location /module/ {
        toolsearch on;
        proxy_pass http://emulator/;
    }
"""

SINK = report.NGINX_COMMON + """
    location /v1/ {
        default_type application/json;
        return 200 '{"id":"chatcmpl_bench","object":"chat.completion",\
"created":1764201600,"model":"gpt-4.1","choices":[{"index":0,"message":\
{"role":"assistant","content":"ok"},"finish_reason":"stop"}],"usage":\
{"prompt_tokens":1,"completion_tokens":1,"total_tokens":2}}';
    }
"""


def main():
    body = chat_requests("opencode", stream=False)[0]
    tmp = tempfile.mkdtemp(prefix="chat-bench-")
    path = os.path.join(tmp, "chat.json")
    with open(path, "wb") as f:
        f.write(body)
    proxy_bench.PATH = "/v1/chat/completions"
    sink = Gateway(free_port(), server=SINK, log_level="warn").start()
    gw = Gateway(sink.port, server=GATEWAY, log_level="warn").start()
    try:
        runs = {loc: [] for loc in LOCATIONS}
        for loc in LOCATIONS:
            proxy_bench.wrk(gw, loc, path)
        for _ in range(RUNS):
            for loc in LOCATIONS:
                runs[loc].append(proxy_bench.wrk(gw, loc, path))
    finally:
        gw.remove()
        sink.remove()
        os.unlink(path)
        os.rmdir(tmp)
    res = {loc: {k: report.median([r[k] for r in runs[loc]])
                 for k in runs[loc][0]} for loc in LOCATIONS}
    lines = report.heading("chat", "Chat Completions through the module",
                           "bench/chat_bench.py")
    lines += [
        "opencode's request in Chat Completions (%d KB, %d KB of tools), "
        "`stream: false`, against plain `proxy_pass` to an nginx that "
        "answers a short completion; with `toolsearch on;` every request "
        "is gateway search's loop of one call (the model does not search). "
        "Medians of %d interleaved wrk runs of %d s, %d connections."
        % (len(body) // 1024, tool_bytes(body) // 1024, RUNS,
           proxy_bench.SECONDS, proxy_bench.CONNECTIONS), "",
        "| location | req/s | p50 µs | p99 µs | worker CPU µs/request |",
        "|---|---|---|---|---|"]
    for loc in LOCATIONS:
        r = res[loc]
        lines.append("| %s | %.0f | %.0f | %.0f | %.0f |"
                     % (loc, r["rps"], r["p50"], r["p99"], r["cpu"]))
    ratio = res["module"]["rps"] / res["plain"]["rps"]
    lines += ["", "Goal (issue 33): module ≥ 0.8 × plain req/s: %.2fx, %s. "
              "The Chat Completions body is read with the plain scanner, "
              "three passes over the tools (the document and its "
              "members, the array with each tool's type and function, "
              "each function); the Messages path's string map and memory "
              "of tools arrays do not serve it yet: the reading is most "
              "of the module's CPU above plain."
              % (ratio, "met" if ratio >= 0.8 else "not met"), "",
              "The steps of issue 33 so far, module CPU µs a request in "
              "this script's runs: 804 (the loop indexed the body as "
              "Messages too, and read it again for its first call), 421 "
              "(no Messages index), 273 (the first call takes the "
              "handler's reading), 178 (one pass for the document and "
              "its members, one for the array and each tool's members).",
              "",
              report.markers("chat")[1]]
    report.publish("chat", "\n".join(lines) + "\n")
    json.dump(res, sys.stderr)
    return 0


if __name__ == "__main__":
    sys.exit(main())
