"""Answers that the module rewrites on their way to the client, to clients
that read slowly, late, or not at all: the hosted path's cut of search
blocks (toolsearch_search_blocks strip) and the gateway loop's answer.
Every byte arrives, as the cut should give it, over HTTP/1.1 behind a
small socket buffer and over HTTP/2; and a stalled client costs the worker
a few buffers more than plain proxy_pass, not the answer."""

import json
import socket
import subprocess
import time

import pytest

from conftest import load_fixture, parse_raw
from emulator import Raw, answer_bytes, paced, text, tool_results
from gateway import ASAN, free_ports
from test_faults import (GATEWAY, SEARCH, body_of, ended_http1,
                         hosted_answer, hosted_message, never_reading_clients,
                         request_head, rss_kb, worker_pid)

# the cut set: the recorded client's profile would keep the blocks
HOSTED = ("toolsearch on; toolsearch_upstream anthropic; "
          "toolsearch_search_blocks strip; send_timeout 5s;")


def sndbuf_gateway(gateway, conf):
    """A gateway whose HTTP/1.1 listener (port) and HTTP/2 listener
    (h2) have 16 KB send buffers: (gateway, port, h2).  The ports are
    free when picked; one taken before nginx binds it (by the gateway's
    own, say) is picked again."""
    for attempt in range(3):
        port, h2 = free_ports(2)
        try:
            gw = gateway(server="listen 127.0.0.1:%d sndbuf=16k; "
                         "listen 127.0.0.1:%d http2 sndbuf=16k; %s"
                         % (port, h2, conf))
            return gw, port, h2
        except RuntimeError as e:
            if attempt == 2 or not ("listen" in str(e)
                                    or "in use" in str(e)):
                raise


def read_paced(s, piece, gap, stall, timeout):
    """Reads what the server sends: after stall seconds, piece bytes at a
    time, gap seconds apart, until it closes or timeout passes."""
    time.sleep(stall)
    chunks = []
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        try:
            data = s.recv(piece)
        except (ConnectionResetError, socket.timeout):
            break
        if not data:
            break
        chunks.append(data)
        if gap:
            time.sleep(gap)
    return b"".join(chunks)


def exchange(port, stream, piece=65536, gap=0.0, stall=0.0, timeout=30):
    """One request over HTTP/1.1 through a 4 KB receive buffer: (status,
    body, whether the answer ended as HTTP says it ends)."""
    fx, body = body_of(stream)
    s = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
    s.setsockopt(socket.SOL_SOCKET, socket.SO_RCVBUF, 4096)
    s.settimeout(timeout)
    try:
        s.connect(("127.0.0.1", port))
        s.sendall(request_head(fx, len(body)) + body)
        raw = read_paced(s, piece, gap, stall, timeout)
    finally:
        s.close()
    status, _, data = parse_raw(raw)
    return status, data, ended_http1(raw)


# (kind, answer size, how the client reads: piece, gap, stall)
READERS = [
    ("sse", 200_000, "slow", (4096, 0.05, 0.0)),
    ("json", 100_000, "slow", (4096, 0.05, 0.0)),
    ("sse", 10_000_000, "stalled", (65536, 0.0, 1.5)),
    ("json", 10_000_000, "stalled", (65536, 0.0, 1.5)),
]


@pytest.mark.parametrize("kind,size,how,reader", READERS,
                         ids=["%s-%d-%s" % r[:3] for r in READERS])
def test_hosted_slow_reader_http1(emulator, gateway, kind, size, how,
                                  reader):
    """The hosted path's cut to a client that reads 4 KB every 50 ms, or
    stalls and then reads, behind sndbuf=16k: the whole answer, the
    search's blocks cut, every other byte as the upstream sent it (the
    write filter's bytes were never flushed once the upstream was done:
    a 100 KB answer stopped at 80 KB)."""
    stream = kind == "sse"
    up, down = hosted_answer(size, stream)
    emulator.script = lambda req: paced(up, stream)
    gw, port, _ = sndbuf_gateway(gateway, HOSTED)
    piece, gap, stall = reader
    status, data, ended = exchange(port, stream, piece, gap, stall)
    assert status == 200 and ended, (len(data), len(down))
    assert data == down
    # the request ends once the last bytes are written
    deadline = time.monotonic() + 5
    while time.monotonic() < deadline and not gw.access_log():
        time.sleep(0.05)
    assert " 200 " in gw.access_log()[0]


@pytest.mark.parametrize("kind,size,rate", [
    ("sse", 200_000, "80k"), ("json", 200_000, "80k"),
    ("sse", 10_000_000, "8m"), ("json", 10_000_000, "8m")],
    ids=["sse-200000", "json-200000", "sse-10000000", "json-10000000"])
def test_hosted_slow_reader_http2(emulator, gateway, tmp_path, kind, size,
                                  rate):
    """The same over HTTP/2, to curl reading at a limited rate."""
    stream = kind == "sse"
    up, down = hosted_answer(size, stream)
    emulator.script = lambda req: paced(up, stream)
    gw, _, h2 = sndbuf_gateway(gateway, HOSTED + " http2_chunk_size 4k;")
    fx, body = body_of(stream)
    src, out = str(tmp_path / "req"), str(tmp_path / "out")
    with open(src, "wb") as f:
        f.write(body)
    cmd = ["curl", "-sS", "--http2-prior-knowledge", "-m", "30",
           "--limit-rate", rate, "-o", out, "-w", "%{http_code}",
           "--data-binary", "@" + src, "-H", "Expect:"]
    for k, v in fx.headers:
        cmd += ["-H", "%s: %s" % (k, v)]
    r = subprocess.run(cmd + ["http://127.0.0.1:%d%s" % (h2, fx.url)],
                       capture_output=True, timeout=60)
    assert r.returncode == 0 and r.stdout == b"200", r.stderr
    with open(out, "rb") as f:
        assert f.read() == down


# the events of the search's two blocks: a start, a delta and a stop, a
# start and a stop
SEARCH_EVENTS = 5


def read_for(s, seconds):
    """What the server sends within seconds."""
    chunks = []
    deadline = time.monotonic() + seconds
    while time.monotonic() < deadline:
        s.settimeout(max(0.01, min(0.1, deadline - time.monotonic())))
        try:
            data = s.recv(65536)
        except socket.timeout:
            continue
        if not data:
            break
        chunks.append(data)
    s.settimeout(10)
    return b"".join(chunks)


def paused(head, tail, pause):
    """An event stream sent as head, then after pause seconds tail."""
    def chunks():
        yield head
        time.sleep(pause)
        yield tail
    return Raw(chunks())


def during_a_pause(port, seconds):
    """(what a client behind by a second gets while the upstream is
    silent, the rest): it starts reading after a second, for seconds."""
    fx, body = body_of(True)
    s = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
    s.setsockopt(socket.SOL_SOCKET, socket.SO_RCVBUF, 4096)
    s.settimeout(10)
    try:
        s.connect(("127.0.0.1", port))
        s.sendall(request_head(fx, len(body)) + body)
        time.sleep(1.0)
        early = read_for(s, seconds)
        return early, read_paced(s, 65536, 0.0, 0.0, 10)
    finally:
        s.close()


def whole_events(raw):
    """The events of a partial answer's body that came whole."""
    return parse_raw(raw)[2].count(b"\n\n")


@pytest.mark.parametrize("size", [100_000, 300_000])
def test_held_bytes_go_out_on_the_client_write_events(emulator, gateway,
                                                      size):
    """The upstream sends a stream but its last 2000 bytes, then is silent
    for 4 s, to a client that starts reading after a second: while the
    upstream is silent, the client gets through the hosted cut every event
    it gets through plain proxy_pass (less the search's), not only when
    the upstream sends again (a 7.7 s gap before)."""
    up, down = hosted_answer(size, True)
    emulator.script = lambda req: paused(up[:-2000], up[-2000:], 4.0)
    plain, port, _ = sndbuf_gateway(gateway, "toolsearch off;")
    early, rest = during_a_pause(port, 1.5)
    assert parse_raw(early + rest)[2] == up
    hosted, port, _ = sndbuf_gateway(gateway, HOSTED)
    got, rest = during_a_pause(port, 1.5)
    assert whole_events(got) >= whole_events(early) - SEARCH_EVENTS, (
        whole_events(got), whole_events(early))
    status, _, data = parse_raw(got + rest)
    assert status == 200 and data == down


# ---- memory: stalled clients against plain proxy_pass ----

N = 8
SIZE = 10_000_000
# what a stalled request may hold beyond plain proxying's: the filter's
# own buffers (at most 5 of 8 KB), the copy filter's output buffers it
# reads the upstream's temporary file into when nginx would have used
# sendfile (2 of 32 KB), an unfinished event, links: 256 KB, with room
PER_REQUEST_KB = 256


def small_body():
    """A request of 2 KB with 12 tools to defer: what the module keeps of
    the request itself stays out of the comparison of answers."""
    tools = [{"name": "mcp__files__tool_%d" % i,
              "description": "Does thing number %d with files" % i,
              "input_schema": {"type": "object", "properties": {
                  "path": {"type": "string"}}}} for i in range(12)]
    return json.dumps({"model": "claude-sonnet-4-5", "max_tokens": 1024,
                       "stream": True, "tools": tools, "messages": [
                           {"role": "user", "content": "store it"}]}).encode()


def stalled_rss(emulator, gateway, conf, answers, profile="anthropic"):
    """The worker's RSS growth (KB) while N clients wait for SIZE-byte
    answers they never read, once the upstream has sent them all."""
    emulator.profile = profile
    emulator.script = answers
    finished = emulator.finished
    gw, port, _ = sndbuf_gateway(gateway, conf)
    pid = worker_pid(gw)
    before = rss_kb(pid)
    fx, body = load_fixture("ts-unset/002.json"), small_body()
    clients = never_reading_clients(port, fx, body, N)
    try:
        deadline = time.monotonic() + 30
        while time.monotonic() < deadline and \
                emulator.finished < finished + N:
            time.sleep(0.1)
        assert emulator.finished == finished + N, conf
        time.sleep(0.5)
        return rss_kb(pid) - before
    finally:
        for s in clients:
            s.close()
        gw.remove()


def plain_and_hosted_rss(emulator, gateway, stream):
    """stalled_rss of a SIZE-byte hosted answer with its search blocks
    (a stream, or one JSON message): through plain proxy_pass, and through
    the hosted cut."""
    up, _ = hosted_answer(SIZE, stream)
    answer = paced(up, stream)
    plain = stalled_rss(emulator, gateway, "toolsearch off; send_timeout 30s;",
                        lambda req: answer)
    hosted = stalled_rss(emulator, gateway, HOSTED.replace("5s", "30s"),
                         lambda req: answer)
    return plain, hosted


def big_stream(size):
    return paced(answer_bytes(hosted_message([text("x" * size)]), True),
                 True)


@pytest.mark.skipif(ASAN, reason="ASan keeps freed memory by design")
def test_stalled_clients_hold_buffers_not_answers(emulator, gateway,
                                                  monkeypatch):
    """N clients that never read 10 MB answers: plain proxy_pass spools
    them to its temporary files; the hosted cut and the gateway loop
    (both streams) must too, holding per request at most PER_REQUEST_KB
    more than plain proxying (they held the whole answer: 8 x 10 MB took
    93 MB on the hosted path, 494 MB for 32 on the loop's)."""
    monkeypatch.setenv("GLIBC_TUNABLES", "glibc.malloc.mmap_threshold=131072")
    plain, hosted = plain_and_hosted_rss(emulator, gateway, True)
    big = big_stream(SIZE)
    loop = stalled_rss(emulator, gateway,
                       GATEWAY.replace("send_timeout 3s", "send_timeout 30s"),
                       lambda req: big if tool_results(req["messages"])
                       else SEARCH, "proxy")
    print("worker RSS growth, KB: plain %d, hosted %d, loop %d"
          % (plain, hosted, loop))
    assert hosted <= plain + N * PER_REQUEST_KB, (plain, hosted)
    # each call of the loop is a proxied request of its own, with its
    # buffers in the request's pool until the request ends: two calls
    assert loop <= 2 * plain + N * PER_REQUEST_KB, (plain, loop)


@pytest.mark.skipif(ASAN, reason="ASan keeps freed memory by design")
def test_stalled_clients_of_json_answers_hold_buffers(emulator, gateway,
                                                      monkeypatch):
    """N clients that never read 10 MB JSON answers on the hosted path:
    the cut reads the message as it comes, holding a content item only
    until its type is known, so it holds what a stream's cut holds (it
    held the whole message: 8 x 10 MB took 80 MB)."""
    monkeypatch.setenv("GLIBC_TUNABLES", "glibc.malloc.mmap_threshold=131072")
    plain, hosted = plain_and_hosted_rss(emulator, gateway, False)
    print("worker RSS growth, KB: plain %d, hosted JSON %d" % (plain, hosted))
    assert hosted <= plain + N * PER_REQUEST_KB, (plain, hosted)
