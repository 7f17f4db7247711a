#!/usr/bin/env python3
"""Many sessions at once: the module against plain proxy_pass when a
worker rarely sees the same body twice in a row.

Sessions are made from the recorded Claude Code request
(t/fixtures/claude-code/ts-unset/002.json, 161 KB): N tool sets, the
tools array of set k differing from the others' in its last tool's
description (a team's members with one MCP server of their own, or
another client release), and S sessions in all, S / N of each set, each
with its own last message.  wrk (bench/wrk_sessions.lua) sends the
sessions in turn, the tool sets interleaved, so that two requests in a
row never share a session and share a tool set only with one set.

One nginx (one worker, as bench/proxy_bench.py's, with a status zone to
count the tools recalled) with /plain/, /module/ and /forget/ (the module
with toolsearch_recall off), the upstream a second nginx that discards
the body.  Per workload, the three run in turn in 1-s slices, ROUNDS of
each after a warm-up; req/s and the worker's CPU per request are the
medians of the slices.

The same workloads in process (build/bench_sessions: the bodies in the
same order through what the glue does, in memory kept as a worker's):
µs a request, and under callgrind the instructions a request, which
other work on the machine cannot disturb.

Writes the "sessions" section of docs/benchmarks.md.
"""

import json
import os
import re
import shutil
import subprocess
import sys
import tempfile
import urllib.request

import corpus
import proxy_bench
import report                       # puts t/ on the path
import search_bench
from gateway import Gateway, free_port     # noqa: E402

ROUNDS = 7
WARMUP = 3
SECONDS = 1
# (tool sets, sessions): the same body again first, as proxy_bench sends
WORKLOADS = [(1, 1), (1, 64), (8, 64), (64, 64), (8, 512), (64, 512)]
GOAL = (8, 64)

ZONE = "toolsearch_zone toolsearch 1m;"
# the module as a worker that remembers nothing: every array read whole
FORGET = """
    location = /status {
        toolsearch_status;
    }
    location /forget/ {
        toolsearch on;
        toolsearch_upstream anthropic;
        toolsearch_search hosted;
        toolsearch_recall off;
        proxy_pass http://emulator/;
    }
"""
LOCATIONS = ("plain", "module", "forget")
# timed passes over a workload's bodies in process
ENGINE_PASSES = 20
# what the wrk script's headers tell the engine
ENGINE_ARGS = ["--beta", proxy_bench.HEADERS["anthropic-beta"]]


def session_body(base, tool_set, session):
    """the recorded request as session `session` of tool set `tool_set`
    sends it"""
    body = json.loads(json.dumps(base))
    last = body["tools"][-1]
    last["description"] = last.get("description", "") + (
        " (team tool set %d)" % tool_set)
    session_note(body["messages"][-1], session)
    return json.dumps(body, ensure_ascii=False,
                      separators=(",", ":")).encode()


def session_note(msg, session):
    """a session's own last message: msg with its note added"""
    note = "Session %d: what changed since the last turn?" % session
    if isinstance(msg["content"], str):
        msg["content"] += "\n\n" + note
    else:
        msg["content"].append({"type": "text", "text": note})


def rotation(sets, sessions):
    """(tool set, session of that set) in the order wrk sends them"""
    return [(i % sets, i // sets) for i in range(sessions)]


def write_bodies(tmp):
    """the body files every workload needs, by (tool set, session)"""
    base = json.loads(corpus.fixture())
    paths = {}
    for sets, sessions in WORKLOADS:
        for k, j in rotation(sets, sessions):
            if (k, j) not in paths:
                paths[k, j] = os.path.join(tmp, "s%02d-%03d.json" % (k, j))
                with open(paths[k, j], "wb") as f:
                    f.write(session_body(base, k, j))
    return paths


def manifest(tmp, paths, sets, sessions):
    """the list of body files wrk rotates over"""
    path = os.path.join(tmp, "w%d-%d.txt" % (sets, sessions))
    with open(path, "w") as f:
        for key in rotation(sets, sessions):
            f.write(paths[key] + "\n")
    return path


def status(gw):
    with urllib.request.urlopen("http://127.0.0.1:%d/status?format=json"
                                % gw.port, timeout=10) as r:
        s = json.load(r)
    return s["tools_seen"], s["tools_recalled"]


def wrk(gw, location, bodies):
    """one slice: req/s and the worker's CPU µs per request"""
    pids = proxy_bench.workers(gw.proc.pid)
    cpu0 = proxy_bench.cpu_seconds(pids)
    out = subprocess.run(
        ["wrk", "-t1", "-c%d" % proxy_bench.CONNECTIONS,
         "-d%ds" % SECONDS,
         "-s", os.path.join(report.ROOT, "bench", "wrk_sessions.lua"),
         "http://127.0.0.1:%d/%s%s" % (gw.port, location, proxy_bench.PATH)],
        capture_output=True, text=True, check=True, timeout=SECONDS + 60,
        env=dict(os.environ, TS_BODIES=bodies)).stdout
    cpu = proxy_bench.cpu_seconds(pids) - cpu0
    n = int(re.search(r"(\d+) requests in", out).group(1))
    if "Non-2xx" in out or n == 0:
        raise RuntimeError("wrk %s: failed requests\n%s" % (location, out))
    rps = float(re.search(r"Requests/sec:\s+([\d.]+)",
                                      out).group(1))
    return rps, cpu * 1e6 / n


def workload(gw, bodies):
    """medians of alternating slices, and the share of tools /module/
    recalled"""
    runs = {loc: [] for loc in LOCATIONS}
    recalled = seen = 0
    for loc in LOCATIONS:               # warm-up: connections, memory
        wrk(gw, loc, bodies)
    for _ in range(ROUNDS):
        for loc in LOCATIONS:
            seen0, recalled0 = status(gw)
            runs[loc].append(wrk(gw, loc, bodies))
            if loc == "module":
                seen1, recalled1 = status(gw)
                seen += seen1 - seen0
                recalled += recalled1 - recalled0
    res = {loc: (report.median([r[0] for r in v]),
                 report.median([r[1] for r in v]))
           for loc, v in runs.items()}
    res["ratios"] = sorted(m[0] / p[0] for p, m in zip(runs["plain"],
                                                       runs["module"]))
    res["recalled"] = recalled / max(seen, 1)
    return res


def bench_sessions(bodies, passes, valgrind=False):
    """build/bench_sessions over the list; its JSON, or under callgrind
    the instructions it ran"""
    cmd = [os.path.join(report.ROOT, "build", "bench_sessions"), bodies,
           str(passes)] + ENGINE_ARGS
    if valgrind:
        cmd = ["valgrind", "--tool=callgrind",
               "--callgrind-out-file=/dev/null"] + cmd
    run = subprocess.run(cmd, capture_output=True, text=True, check=True,
                         timeout=1800)
    if valgrind:
        return int(re.search(r"Collected : (\d+)", run.stderr).group(1))
    return json.loads(run.stdout)


def engine(bodies):
    """in process: µs a request (median of the passes) and instructions
    a request (one pass more under callgrind, per body; None without
    valgrind)"""
    out = bench_sessions(bodies, ENGINE_PASSES)
    instr = None
    if shutil.which("valgrind"):
        one, two = (bench_sessions(bodies, n, valgrind=True) for n in (1, 2))
        instr = (two - one) / out["bodies"]
    return out["us"], instr


def steady_heap_gateways():
    """the upstream and the gateway, their heaps as a busy worker's:
    plain nginx mallocs each body's buffer (161 KB, above glibc's mmap
    threshold) and, until the worker's heap has grown, gives it back to
    the kernel after every request, some 23 page faults a request, which
    made plain's first workload run slow (the module reads bodies into
    blocks the worker keeps)"""
    saved = dict(os.environ)
    os.environ.update(search_bench.WARM)
    try:
        sink = Gateway(free_port(), server=proxy_bench.SINK,
                       log_level="warn").start()
        gw = Gateway(sink.port, http=ZONE,
                     server=proxy_bench.GATEWAY + FORGET,
                     log_level="warn").start()
    finally:
        os.environ.clear()
        os.environ.update(saved)
    return sink, gw


def measure(tmp):
    paths = write_bodies(tmp)
    sink, gw = steady_heap_gateways()
    try:
        # connections, the module's memory
        first = manifest(tmp, paths, *WORKLOADS[0])
        for _ in range(WARMUP):
            for loc in LOCATIONS:
                wrk(gw, loc, first)
        results = [(sets, sessions,
                    workload(gw, manifest(tmp, paths, sets, sessions)))
                   for sets, sessions in WORKLOADS]
    finally:
        gw.remove()
        sink.remove()
    for sets, sessions, r in results:
        r["engine"] = engine(manifest(tmp, paths, sets, sessions))
    return results


def section(results):
    lines = report.heading("sessions", "Many sessions at once (issue 26)",
                           "bench/sessions_bench.py")
    lines += [
        "Sessions made from the recorded 161 KB Claude Code request: "
        "*tool sets* differ in their last tool's description (a team's "
        "members with an MCP server of their own), each session has its "
        "own last message. wrk (one thread, %d connections, "
        "bench/wrk_sessions.lua) sends the sessions in turn, the tool sets "
        "interleaved: a worker never sees a session twice in a row. One "
        "nginx 1.22, one worker, `/plain/` (`proxy_pass`), `/module/` "
        "(`toolsearch on`, deferral for Anthropic, default "
        "`toolsearch_recall_tools 16m`) and `/forget/` (the same with "
        "`toolsearch_recall off`: every array read whole, as a worker "
        "that remembers nothing), to an upstream nginx that discards the "
        "body; both nginx run with glibc's mmap and trim thresholds raised "
        "(`MALLOC_MMAP_THRESHOLD_=64m`, `MALLOC_TRIM_THRESHOLD_=128m`), as "
        "a busy worker's heap is: else plain nginx, which mallocs each "
        "body's buffer, pays some 23 page faults a request until its heap "
        "has grown, whatever ran before (the module reads bodies into "
        "blocks the worker keeps). The three run in turn in %d-s slices, "
        "%d of each after a warm-up (%d slices of each before the first "
        "workload, one before every workload); req/s and CPU (the "
        "worker's user + system time per request) are medians of the slices. *× plain* is module's median "
        "req/s ÷ plain's, *range* the lowest and highest module ÷ plain "
        "ratio of a round's slices. *tools recalled*: of the tools "
        "`/module/` saw, the share taken from the worker's memory "
        "(`tools_recalled` ÷ `tools_seen` of the status page). *engine*: "
        "the same bodies in the same order in process "
        "(build/bench_sessions, what the glue does, in memory kept as a "
        "worker's, every array read once before): µs a request, median "
        "of %d passes, and instructions a request, one pass more under "
        "callgrind (exact: other work on the machine does not change it)."
        % (proxy_bench.CONNECTIONS, SECONDS, ROUNDS, WARMUP,
           ENGINE_PASSES), "",
        "| tool sets × sessions | plain req/s | module req/s | × plain "
        "| range | recall off × plain | plain CPU µs/request "
        "| module CPU − plain µs | recall off CPU − plain µs "
        "| tools recalled | engine µs/request "
        "| engine instructions/request |",
        "|---|---|---|---|---|---|---|---|---|---|---|---|"]
    for sets, sessions, r in results:
        p, m, f = r["plain"], r["module"], r["forget"]
        us, instr = r["engine"]
        lines.append("| %d × %d | %.0f | %.0f | %.2f× | %.2f–%.2f "
                     "| %.2f× | %.0f | %.0f | %.0f | %.0f %% | %.1f | %s |"
                     % (sets, sessions, p[0], m[0], m[0] / p[0],
                        r["ratios"][0], r["ratios"][-1], f[0] / p[0], p[1],
                        m[1] - p[1], f[1] - p[1], 100 * r["recalled"], us,
                        "%.0f" % instr if instr is not None else "—"))
    goal = [r for s, n, r in results if (s, n) == GOAL][0]
    ok = goal["module"][0] / goal["plain"][0] >= 0.8
    lines += ["", "Goal (issue 26): module ≥ 0.8 × plain req/s on %d tool "
              "sets × %d sessions: %.2f×, %s" % (
                  GOAL[0], GOAL[1],
                  goal["module"][0] / goal["plain"][0],
                  "met" if ok else "**missed**"),
              report.markers("sessions")[1]]
    return "\n".join(lines)


def main():
    with tempfile.TemporaryDirectory(prefix="toolsearch-sessions-") as tmp:
        report.publish("sessions", section(measure(tmp)))
    return 0


if __name__ == "__main__":
    sys.exit(main())
