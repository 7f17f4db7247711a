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

Then many sessions, as bench/sessions_bench.py makes them for Messages:
8 tool sets (the last function's description differs) × 64 sessions
(each its own last message), sent in turn by bench/wrk_sessions.lua, in
1-s slices, /plain/ and /module/ alternating; and the same bodies in
process (build/bench_sessions --chat): µs and, under callgrind,
instructions a request.

Writes the "chat" section of docs/benchmarks.md.
"""

import json
import os
import sys
import tempfile

import report                       # puts t/ on the path
from gateway import Gateway, free_port     # noqa: E402
import proxy_bench                  # noqa: E402
import sessions_bench               # noqa: E402
from chat_fixtures import chat_requests, tool_bytes     # noqa: E402

RUNS = 5
LOCATIONS = ("plain", "module")
SESSIONS = (8, 64)

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


def session_body(base, tool_set, session):
    """opencode's request as session `session` of tool set `tool_set`
    sends it"""
    body = json.loads(json.dumps(base))
    fn = body["tools"][-1]["function"]
    fn["description"] = fn.get("description", "") + (
        " (team tool set %d)" % tool_set)
    sessions_bench.session_note(body["messages"][-1], session)
    return json.dumps(body, separators=(",", ":")).encode()


def write_sessions(tmp, body):
    """the sessions' bodies and the list wrk and bench_sessions rotate
    over"""
    base = json.loads(body)
    path = os.path.join(tmp, "sessions.txt")
    with open(path, "w") as lst:
        for k, j in sessions_bench.rotation(*SESSIONS):
            name = os.path.join(tmp, "s%02d-%03d.json" % (k, j))
            with open(name, "wb") as f:
                f.write(session_body(base, k, j))
            lst.write(name + "\n")
    return path


def sessions(gw, bodies):
    """medians of alternating 1-s slices: (req/s, CPU µs) per location"""
    runs = {loc: [] for loc in LOCATIONS}
    for loc in LOCATIONS:
        sessions_bench.wrk(gw, loc, bodies)
    for _ in range(sessions_bench.ROUNDS):
        for loc in LOCATIONS:
            runs[loc].append(sessions_bench.wrk(gw, loc, bodies))
    return {loc: (report.median([r[0] for r in v]),
                  report.median([r[1] for r in v]))
            for loc, v in runs.items()}


def engine(bodies):
    """build/bench_sessions --chat: µs and instructions a request"""
    saved = sessions_bench.ENGINE_ARGS
    sessions_bench.ENGINE_ARGS = ["--chat"]
    try:
        return sessions_bench.engine(bodies)
    finally:
        sessions_bench.ENGINE_ARGS = saved


def measure(tmp, body):
    path = os.path.join(tmp, "chat.json")
    with open(path, "wb") as f:
        f.write(body)
    one = os.path.join(tmp, "one.txt")
    with open(one, "w") as f:
        f.write(path + "\n")
    many = write_sessions(tmp, body)
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
        many_res = sessions(gw, many)
    finally:
        gw.remove()
        sink.remove()
    res = {loc: {k: report.median([r[k] for r in runs[loc]])
                 for k in runs[loc][0]} for loc in LOCATIONS}
    return res, many_res, engine(one), engine(many)


def main():
    body = chat_requests("opencode", stream=False)[0]
    with tempfile.TemporaryDirectory(prefix="chat-bench-") as tmp:
        res, many, one_engine, many_engine = measure(tmp, body)
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
    p, m = many["plain"], many["module"]
    many_ratio = m[0] / p[0]
    lines += [
        "", "Many sessions in the same run: %d tool sets × %d sessions "
        "made from the same request (the last function's description "
        "differs per set, the last message per session; "
        "bench/wrk_sessions.lua sends them in turn), %d 1-s slices of "
        "each location, alternating, medians." % (
            SESSIONS[0], SESSIONS[1], sessions_bench.ROUNDS), "",
        "| workload | plain req/s | module req/s | × plain "
        "| plain CPU µs/request | module CPU − plain µs "
        "| engine µs/request | engine instructions/request |",
        "|---|---|---|---|---|---|---|---|",
        "| the same request | %.0f | %.0f | %.2f× | %.0f | %.0f | %.1f "
        "| %s |" % (res["plain"]["rps"], res["module"]["rps"], ratio,
                    res["plain"]["cpu"],
                    res["module"]["cpu"] - res["plain"]["cpu"],
                    one_engine[0], instructions(one_engine[1])),
        "| %d × %d sessions | %.0f | %.0f | %.2f× | %.0f | %.0f | %.1f "
        "| %s |" % (SESSIONS[0], SESSIONS[1], p[0], m[0], many_ratio, p[1],
                    m[1] - p[1], many_engine[0],
                    instructions(many_engine[1])),
        "", "*engine*: the bodies in process through what the glue does "
        "for them (build/bench_sessions --chat: ts_chat_process, the "
        "output, the loop made and given the request's reading), in "
        "memory kept as a worker's: µs a request, and instructions a "
        "request under callgrind (exact, whatever else runs).", "",
        "Goal (issue 33): module ≥ 0.8 × plain req/s: %.2f× on the same "
        "request, %.2f× on many sessions: %s." % (
            ratio, many_ratio,
            "met" if min(ratio, many_ratio) >= 0.8 else "**not met**")
        + " On a machine shared with other work the req/s ratios move "
        "from run to run (by 0.2 in this change's runs); the "
        "instructions do not.",
        "",
        "The steps of issue 33, module CPU µs a request in this script's "
        "runs: 804 (the loop indexed the body as Messages too, and read it "
        "again for its first call), 421 (no Messages index), 273 (the "
        "first call takes the handler's reading), 178 (one pass for the "
        "document and its members, one for the array and each tool's "
        "members); then the tools array recalled from the worker's memory "
        "(`toolsearch_recall`, Chat Completions' arrays kept apart from "
        "Messages'): callgrind, opencode's request in process, 1.45 M "
        "instructions a request read whole (three passes over the tools "
        "with the byte scanner), 0.32 M recalled, 0.23 M with what the "
        "rules say of each tool kept with the recalled array (as the "
        "Messages path keeps it) instead of made anew (ts_facts_make, "
        "90 K). The most of what is left: the announcement (59 K), the "
        "messages read by the byte scanner.",
        "",
        report.markers("chat")[1]]
    report.publish("chat", "\n".join(lines) + "\n")
    json.dump({"same": res, "sessions": many}, sys.stderr)
    return 0


def instructions(n):
    return "%.0f" % n if n is not None else "—"


if __name__ == "__main__":
    sys.exit(main())
