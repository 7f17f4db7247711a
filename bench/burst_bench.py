#!/usr/bin/env python3
"""A worker's memory after bursts of gateway searches, against plain
proxy_pass of the same requests in the same nginx.

One nginx (t/gateway.py, one worker) in front of the emulator
(t/emulator.py) with the two locations of bench/ttfb_bench.py: /plain/
(proxy_pass) and /gateway/ (toolsearch on, toolsearch_search gateway).  The emulator plays a model
that searches once, then calls the tool it found: two upstream calls per
gateway request.  The recorded Claude Code request (stream: true) is sent
CONCURRENT times at once, ROUNDS times, to /plain/, then to /gateway/; the
worker's resident memory (VmRSS) is read while each burst runs (its
peak) and once it has ended.  Writes the "burst" section of
docs/benchmarks.md.
"""

import json
import sys
import threading
import time

import report                                   # puts t/ on the path
from conftest import load_fixture, request      # noqa: E402
from emulator import Emulator                   # noqa: E402
from gateway import Gateway                     # noqa: E402
from test_faults import rss_kb, worker_pid      # noqa: E402
from test_gateway_search import searcher        # noqa: E402
from ttfb_bench import LOCATIONS, SERVER        # noqa: E402

# below the harness's worker_connections: a client and an upstream
# connection each
CONCURRENT = 100
ROUNDS = 3
TIMEOUT = 120.0


def worker_rss_kb(gw):
    return rss_kb(worker_pid(gw))


def burst(gw, path, raw, headers):
    """CONCURRENT requests at once; (peak RSS, RSS after, failures)"""
    failed = []

    def one():
        try:
            r = request(gw, "POST", path, raw, headers, timeout=TIMEOUT)
            if r.status != 200:
                failed.append(r.status)
        except OSError as e:
            failed.append(str(e))

    threads = [threading.Thread(target=one) for _ in range(CONCURRENT)]
    peak = 0
    for t in threads:
        t.start()
    deadline = time.monotonic() + TIMEOUT
    while any(t.is_alive() for t in threads) and time.monotonic() < deadline:
        peak = max(peak, worker_rss_kb(gw))
        time.sleep(0.05)
    for t in threads:
        t.join(max(0.0, deadline - time.monotonic()))
    time.sleep(0.5)
    return peak, worker_rss_kb(gw), len(failed)


def main():
    emu = Emulator("proxy").start()
    emu.keep = False
    emu.script = searcher("memory create entities")
    gw = Gateway(emu.port, server=SERVER, log_level="warn").start()
    fx = load_fixture("ts-unset/002.json")
    body = json.loads(fx.body)
    body["stream"] = True
    raw = json.dumps(body).encode()
    rows = []
    try:
        idle = worker_rss_kb(gw)
        for name in LOCATIONS:
            for k in range(ROUNDS):
                peak, after, failed = burst(gw, "/%s/v1/messages?beta=true"
                                            % name, raw, fx.headers)
                rows.append((name, k + 1, peak, after, failed))
                print(name, k + 1, peak, after, failed, flush=True)
    finally:
        gw.remove()
        emu.stop()

    lines = report.heading("burst", "Worker memory after bursts of gateway "
                           "searches", "bench/burst_bench.py")
    lines += ["%d streamed requests at once (the recorded Claude Code "
              "request, %d KB), %d bursts to each location, one worker; "
              "each gateway request makes two upstream calls (a search, "
              "then the found tool's call). Resident memory of the worker "
              "(VmRSS), idle before the first burst: %.1f MB."
              % (CONCURRENT, len(raw) // 1024, ROUNDS, idle / 1024.0), "",
              "| location | burst | peak | after the burst | after / "
              "plain's after | failed |", "|---|---|---|---|---|---|"]
    plain_after = max(r[3] for r in rows if r[0] == "plain")
    for name, k, peak, after, failed in rows:
        lines.append("| %s | %d | %.1f MB | %.1f MB | %.2f | %d |"
                     % (name, k, peak / 1024.0, after / 1024.0,
                        after / float(plain_after), failed))
    lines += ["", "Once the last gateway search of a burst has ended, the "
              "worker returns what the burst freed to the system "
              "([operations.md](operations.md#scale-out)).",
              report.markers("burst")[1]]
    report.write_section("burst", "\n".join(lines))
    return 0


if __name__ == "__main__":
    sys.exit(main())
