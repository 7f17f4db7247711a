#!/usr/bin/env python3
"""Time to first byte of a streamed request that never searches, with
gateway-executed search on, against plain proxy_pass in the same nginx.

One nginx (t/gateway.py) in front of the emulator (t/emulator.py) with
two locations: /plain/ (proxy_pass) and /gateway/ (toolsearch on,
toolsearch_search gateway: the model gets the gateway's search tool and
every answer is read by the module).  The emulator streams a scripted
answer of text blocks, an event every EVENT_DELAY seconds, and never
calls the search tool.  The recorded Claude Code request (stream: true)
is sent REQUESTS times to each location, in turn; for each request the
client notes when the response head arrives, when the first SSE event
arrives and when the stream ends.  Writes the "ttfb" section of
docs/benchmarks.md.
"""

import socket
import sys
import time

import report                                   # puts t/ on the path
from conftest import load_fixture                # noqa: E402
from emulator import Emulator, EmulatorHandler, Reply, text  # noqa: E402
from gateway import Gateway                     # noqa: E402

REQUESTS = 15
EVENT_DELAY = 0.005
BLOCKS = 6
TIMEOUT = 30.0
LOCATIONS = ("plain", "gateway")

SERVER = report.NGINX_COMMON + """
    proxy_set_header Accept-Encoding "";
    proxy_buffering off;
""" + report.locations("gateway", "compatible", "gateway")


def answer(_request):
    """a streamed answer that never searches"""
    return Reply([text("Part %d of an answer that needs no tool." % i)
                  for i in range(BLOCKS)])


def raw_request(fx, location):
    head = ["POST /%s%s HTTP/1.1" % (location, fx.url),
            "Host: 127.0.0.1", "Connection: close",
            "Content-Length: %d" % len(fx.body)]
    head += ["%s: %s" % (k, v) for k, v in fx.headers]
    return ("\r\n".join(head) + "\r\n\r\n").encode() + fx.body


def timed(port, data):
    """(head, first event, end) in ms after the request was sent"""
    s = socket.create_connection(("127.0.0.1", port), timeout=TIMEOUT)
    try:
        t0 = time.monotonic()
        s.sendall(data)
        got, head, first = b"", None, None
        deadline = t0 + TIMEOUT
        while time.monotonic() < deadline:
            chunk = s.recv(65536)
            if not chunk:
                break
            got += chunk
            now = time.monotonic()
            if head is None and b"\r\n\r\n" in got:
                head = now
            if first is None and b"event: message_start" in got:
                first = now
        end = time.monotonic()
    finally:
        s.close()
    if first is None or b"event: message_stop" not in got:
        raise RuntimeError("incomplete stream:\n%r" % got[-500:])
    return tuple((t - t0) * 1e3 for t in (head, first, end))


def measure():
    fx = load_fixture("ts-unset/002.json")
    # each event leaves at once, as the API's do (no Nagle delay)
    EmulatorHandler.disable_nagle_algorithm = True
    emu = Emulator()
    emu.script = answer
    emu.event_delay = EVENT_DELAY
    emu.start()
    gw = Gateway(emu.port, server=SERVER, log_level="warn").start()
    try:
        data = {loc: raw_request(fx, loc) for loc in LOCATIONS}
        for loc in LOCATIONS:           # warm-up
            timed(gw.port, data[loc])
        runs = {loc: [] for loc in LOCATIONS}
        for _ in range(REQUESTS):
            for loc in LOCATIONS:
                runs[loc].append(timed(gw.port, data[loc]))
        return {loc: [report.median([r[i] for r in runs[loc]])
                      for i in range(3)] for loc in LOCATIONS}
    finally:
        gw.remove()
        emu.stop()


def section(res):
    begin, end = report.markers("ttfb")
    p = res["plain"]
    lines = [begin, "## Streaming with gateway search, no search made", "",
             "`make bench` (bench/ttfb_bench.py). Machine: %s."
             % report.machine(), "",
             "One nginx in front of the Python emulator: `/plain/` "
             "(`proxy_pass`) and `/gateway/` (`toolsearch on; "
             "toolsearch_search gateway;`). The recorded Claude Code request "
             "(161 KB, `stream: true`) is sent %d times to each, in turn; "
             "the emulator streams %d text blocks, one event every %.0f ms, "
             "and the model never calls the search tool. Times from the "
             "request sent, median: *head* is the response head, *first "
             "event* the `message_start` event, *end* the last byte. The "
             "gateway's upstream request leaves the 122 deferred tools out "
             "(85 KB instead of 161 KB), which the emulator parses faster."
             % (REQUESTS, BLOCKS, EVENT_DELAY * 1e3), "",
             "| location | head ms | first event ms | × plain | end ms "
             "| × plain |", "|---|---|---|---|---|---|"]
    for loc in LOCATIONS:
        r = res[loc]
        lines.append("| %s | %.1f | %.1f | %.2f× | %.1f | %.2f× |"
                     % (loc, r[0], r[1], r[1] / p[1], r[2], r[2] / p[2]))
    lines.append(end)
    return "\n".join(lines)


def main():
    report.publish("ttfb", section(measure()))
    return 0


if __name__ == "__main__":
    sys.exit(main())
