#!/usr/bin/env python3
"""Nginx-level benchmarks: the module against plain proxy_pass and a
Lua-cjson peer, in one nginx, in the same run.

One nginx (t/gateway.py, one worker) has three locations that differ only
in what they do to the body: /plain/ (proxy_pass), /module/ (toolsearch
on, deferral for Anthropic) and /lua/ (bench/peer/defer.lua, the same
deferral with lua-nginx-module and cjson).  Its upstream is a second
nginx whose location answers 200 with a short JSON message after reading
and discarding the body, so that the figures measure the gateway and not
the Python emulator.  wrk drives each location in turn, interleaved, for
RUNS rounds; the gateway worker's CPU time comes from /proc.

Then, against the emulator (which records what it receives): whether
each location forwards the same bytes every time and keeps the numbers
and strings it did not mean to change.  Last, under valgrind: the bytes
the gateway allocates per request (pool and malloc), module minus plain.

Writes the "proxy" section of docs/benchmarks.md.
"""

import http.client
import json
import os
import re
import subprocess
import sys
import tempfile
import time

import corpus
import report                       # puts t/ on the path
from emulator import Emulator       # noqa: E402
from gateway import Gateway, free_port     # noqa: E402

RUNS = 5
SECONDS = 2
CONNECTIONS = 2
MEMORY_REQUESTS = 4
ROOT = report.ROOT
LOCATIONS = ("plain", "module", "lua")
LUA_MODULES = ("ndk_http_module.so", "ngx_http_lua_module.so")
LUA_DIR = "/usr/lib/nginx/modules"
PATH = "/v1/messages?beta=true"
HEADERS = {"Content-Type": "application/json",
           "anthropic-version": "2023-06-01",
           "anthropic-beta": "claude-code-20250219,context-1m-2025-08-07"}

GATEWAY = report.NGINX_COMMON + report.locations("module", "anthropic",
                                                 "hosted")

LUA = """
    location /lua/ {
        access_by_lua_file %s;
        proxy_pass http://emulator/;
    }
""" % os.path.join(ROOT, "bench", "peer", "defer.lua")

SINK = report.NGINX_COMMON + """
    location /v1/ {
        default_type application/json;
        return 200 '{"id":"msg_bench","type":"message","role":"assistant",\
"content":[{"type":"text","text":"ok"}],"stop_reason":"end_turn",\
"usage":{"input_tokens":1,"output_tokens":1}}';
    }
"""


def lua_main():
    return "\n".join("load_module %s/%s;" % (LUA_DIR, m) for m in LUA_MODULES)


def gateway(upstream_port, lua=True, valgrind=False):
    return Gateway(upstream_port, server=GATEWAY + (LUA if lua else ""),
                   main=lua_main() if lua else "", log_level="warn",
                   valgrind=valgrind).start()


def bodies(tmp):
    """(label, path) of the recorded request and a 1 MB conversation"""
    out = [("161 KB recorded request", corpus.FIXTURE)]
    path = os.path.join(tmp, "conversation-1m.json")
    with open(path, "wb") as f:
        f.write(corpus.conversation(1024 * 1024))
    out.append(("1 MB conversation", path))
    return out


def workers(master):
    """pids of the nginx workers of a master"""
    pids = []
    for pid in os.listdir("/proc"):
        if not pid.isdigit():
            continue
        try:
            with open("/proc/%s/stat" % pid) as f:
                fields = f.read().rsplit(")", 1)[1].split()
        except OSError:
            continue
        if int(fields[1]) == master:
            pids.append(int(pid))
    return pids


def cpu_seconds(pids):
    total = 0
    for pid in pids:
        with open("/proc/%d/stat" % pid) as f:
            fields = f.read().rsplit(")", 1)[1].split()
        total += int(fields[11]) + int(fields[12])
    return total / os.sysconf("SC_CLK_TCK")


UNITS = {"us": 1.0, "ms": 1e3, "s": 1e6}


def latency_us(out, pct):
    m = re.search(r"^\s+%s%%\s+([\d.]+)(us|ms|s)\s*$" % pct, out, re.M)
    return float(m.group(1)) * UNITS[m.group(2)]


def wrk(gw, location, body):
    """one bounded wrk run: req/s, p50 and p99 µs, worker CPU µs/request"""
    pids = workers(gw.proc.pid)
    cpu0 = cpu_seconds(pids)
    out = subprocess.run(
        ["wrk", "-t1", "-c%d" % CONNECTIONS, "-d%ds" % SECONDS, "--latency",
         "-s", os.path.join(ROOT, "bench", "wrk.lua"),
         "http://127.0.0.1:%d/%s%s" % (gw.port, location, PATH)],
        capture_output=True, text=True, check=True, timeout=SECONDS + 30,
        env=dict(os.environ, TS_BODY=body)).stdout
    cpu = cpu_seconds(pids) - cpu0
    n = int(re.search(r"(\d+) requests in", out).group(1))
    if "Non-2xx" in out or n == 0:
        raise RuntimeError("wrk %s: failed requests\n%s" % (location, out))
    return {"rps": float(re.search(r"Requests/sec:\s+([\d.]+)",
                                   out).group(1)),
            "p50": latency_us(out, 50), "p99": latency_us(out, 99),
            "cpu": cpu * 1e6 / n}


def throughput(sets):
    """per body and location: the median of RUNS interleaved wrk runs"""
    sink = Gateway(free_port(), server=SINK, log_level="warn").start()
    gw = gateway(sink.port)
    try:
        res = {}
        for label, path in sets:
            runs = {loc: [] for loc in LOCATIONS}
            for loc in LOCATIONS:       # warm-up: connections, caches
                wrk(gw, loc, path)
            for _ in range(RUNS):
                for loc in LOCATIONS:
                    runs[loc].append(wrk(gw, loc, path))
            res[label] = {loc: {k: report.median([r[k] for r in runs[loc]])
                                for k in runs[loc][0]}
                          for loc in LOCATIONS}
        return res
    finally:
        gw.remove()
        sink.remove()


def post(gw, location, body):
    conn = http.client.HTTPConnection("127.0.0.1", gw.port, timeout=60)
    try:
        conn.request("POST", "/%s%s" % (location, PATH), body, HEADERS)
        r = conn.getresponse()
        r.read()
        return r.status
    finally:
        conn.close()


def leaves(value, path=""):
    """every number and string of a decoded JSON value, by path"""
    if isinstance(value, dict):
        for k, v in value.items():
            yield from leaves(v, "%s/%s" % (path, k))
    elif isinstance(value, list):
        if not value:
            yield path, "[]"
        for i, v in enumerate(value):
            yield from leaves(v, "%s/%d" % (path, i))
    else:
        yield path, value


def altered(sent, got):
    """leaves of messages and tool schemas that are not what was sent"""
    a, b = json.loads(sent), json.loads(got)
    before = dict(leaves({"messages": a["messages"],
                          "schemas": [t.get("input_schema") for t in
                                      a["tools"]]}))
    after = dict(leaves({"messages": b["messages"],
                         "schemas": [t.get("input_schema") for t in
                                     b["tools"][:len(a["tools"])]]}))
    return sum(1 for k, v in before.items()
               if k not in after or after[k] != v
               or type(after[k]) is not type(v))


def fidelity(sets, repeat=3):
    """per body and location: distinct forwarded bodies, altered values"""
    emu = Emulator().start()
    gw = gateway(emu.port)
    try:
        res = {}
        for label, path in sets:
            with open(path, "rb") as f:
                sent = f.read()
            res[label] = {}
            for loc in LOCATIONS:
                emu.reset()
                for _ in range(repeat):
                    post(gw, loc, sent)
                got = [r.body for r in emu.requests]
                res[label][loc] = {"distinct": len(set(got)),
                                   "altered": altered(sent, got[0])}
        return res
    finally:
        gw.remove()
        emu.stop()


HEAP = re.compile(r"total heap usage: [\d,]+ allocs, [\d,]+ frees, "
                  r"([\d,]+) bytes allocated")


def heap_bytes(sink_port, location, body, n):
    """bytes nginx allocated in all, after n requests to location"""
    gw = gateway(sink_port, lua=False, valgrind=True)
    try:
        for _ in range(n):
            if post(gw, location, body) != 200:
                raise RuntimeError("memory run: %s failed" % location)
    finally:
        # a graceful stop under valgrind on a busy machine takes a while;
        # a kill would cut the summary
        gw.stop(timeout=180)
    # valgrind may finish its log just after nginx has exited
    deadline = time.monotonic() + 10
    while not HEAP.search(gw.valgrind_log()) and time.monotonic() < deadline:
        time.sleep(0.1)
    log = gw.valgrind_log()
    m = HEAP.search(log)
    gw.remove()
    if m is None:
        raise RuntimeError("memory run: no valgrind summary\n" + log)
    return int(m.group(1).replace(",", ""))


def memory():
    """per body: bytes allocated per request, plain and module - plain"""
    sink = Gateway(free_port(), server=SINK, log_level="warn").start()
    try:
        base = heap_bytes(sink.port, "plain", b"", 0)
        res = []
        sizes = [("161 KB", corpus.fixture())] + [
            ("%d MB" % mb, corpus.conversation(mb * 1024 * 1024))
            for mb in (1, 4)]
        for label, body in sizes:
            plain = heap_bytes(sink.port, "plain", body, MEMORY_REQUESTS)
            module = heap_bytes(sink.port, "module", body, MEMORY_REQUESTS)
            res.append((label, len(body),
                        (plain - base) / MEMORY_REQUESTS,
                        (module - plain) / MEMORY_REQUESTS))
        return res
    finally:
        sink.remove()


def section(tput, fid, mem):
    begin, end = report.markers("proxy")
    lines = [begin, "## Through nginx: module, plain proxy_pass, Lua peer",
             "", "`make bench` (bench/proxy_bench.py). Machine: %s."
             % report.machine(), "",
             "One nginx 1.22 (one worker) with three locations: `/plain/` "
             "(`proxy_pass`), `/module/` (`toolsearch on`, deferral for "
             "Anthropic: `deferred_hosted`) and `/lua/` (the same deferral "
             "in Lua with cjson, `bench/peer/defer.lua`, in the access "
             "phase as Kong and APISIX plugins run). Every location has "
             "`client_body_buffer_size 16m`, so bodies stay in memory. The "
             "upstream is a second nginx whose location reads and discards "
             "the body and answers 200 with a short JSON message (the "
             "Python emulator would be the bottleneck). wrk: one thread, %d "
             "connections, %d s per run; the locations run in turn, %d "
             "rounds after a warm-up; each figure is the median. CPU is the "
             "gateway worker's user + system time over the run divided by "
             "the requests served. The machine's two cores also run wrk, "
             "the upstream nginx and other work, so compare ratios, not "
             "absolute figures." % (CONNECTIONS, SECONDS, RUNS), ""]
    for label, r in tput.items():
        p = r["plain"]
        lines += ["### %s" % label, "",
                  "| location | req/s | × plain | p50 µs | p99 µs "
                  "| CPU µs/request | CPU − plain µs |",
                  "|---|---|---|---|---|---|---|"]
        for loc in LOCATIONS:
            x = r[loc]
            lines.append("| %s | %.0f | %.2f× | %.0f | %.0f | %.0f | %.0f |"
                         % (loc, x["rps"], x["rps"] / p["rps"], x["p50"],
                            x["p99"], x["cpu"], x["cpu"] - p["cpu"]))
        lines += ["", "module ÷ Lua peer, req/s: **%.1f×**"
                  % (r["module"]["rps"] / r["lua"]["rps"]), ""]
    lines += ["### What reaches the upstream", "",
              "The same request sent three times through each location to "
              "the emulator, which records the bytes it receives. "
              "*distinct*: different bodies among the three; *altered*: "
              "numbers, strings and empty arrays of `messages` and of the "
              "tools' `input_schema` that differ from what the client sent "
              "(the conversations carry 2^63 − 1, 0.1 + 0.2 as typed, "
              "escapes and raw UTF-8).", "",
              "| body | location | distinct | altered |", "|---|---|---|---|"]
    for label, r in fid.items():
        for loc in LOCATIONS:
            lines.append("| %s | %s | %d | %d |" % (
                label, loc, r[loc]["distinct"], r[loc]["altered"]))
    lines += ["", "### Memory per request", "",
              "nginx under valgrind (one process), %d requests per run: the "
              "bytes allocated in all (pool blocks and large allocations, "
              "the engine's malloc) by a run of `/module/` minus a run of "
              "`/plain/`, per request; plain's own figure is its run minus "
              "a run without requests. Blocks the worker keeps (the index "
              "memory, the blocks bodies are read and rewrites copied "
              "into) are allocated once in the run and reused, where plain "
              "nginx allocates a body buffer per request: a negative figure "
              "means the module allocated less than plain. What a request "
              "holds while in flight is in docs/operations.md."
              % MEMORY_REQUESTS, "",
              "| body | bytes | plain, bytes/request | module − plain, "
              "bytes/request | ÷ body |", "|---|---|---|---|---|"]
    for label, size, plain, extra in mem:
        lines.append("| %s | %d | %.0f | %.0f | %.2f× |"
                     % (label, size, plain, extra, extra / size))
    lines.append(end)
    return "\n".join(lines)


def main():
    with tempfile.TemporaryDirectory(prefix="toolsearch-bench-") as tmp:
        sets = bodies(tmp)
        tput = throughput(sets)
        fid = fidelity(sets)
        mem = memory()
    report.publish("proxy", section(tput, fid, mem))
    return 0


if __name__ == "__main__":
    sys.exit(main())
