"""Gateway-executed search under faults: an upstream that fails, resets,
hangs or breaks its stream on the first or a later call of the loop, and
clients that read slowly or vanish.  Whatever happens, the client can tell
(the upstream's own status, an SSE error event, or an aborted answer) and
the request ends: it is logged and its memory and socket are freed."""

import json
import os
import socket
import subprocess
import time

import pytest

from conftest import load_fixture, parse_raw
from emulator import (ApiError, Fault, Raw, Reply, answer_bytes, sse,
                      sse_events, text, tool_use)
from gateway import ASAN, free_port
from test_gateway_search import TARGET, events

GATEWAY = ("toolsearch on; toolsearch_upstream compatible; "
           "proxy_read_timeout 2s; send_timeout 3s;")

SEARCH = Reply([text("Let me search."),
                tool_use("tool_search", {"query": "memory create entities"},
                         "toolu_search1")])
FOUND = Reply([text("Found it."),
               tool_use(TARGET, {"entities": []}, "toolu_target")])


class Answer:
    """What the client got: status, headers (lowercased), body, and
    whether the answer ended as HTTP says it ends (the last chunk, the
    whole Content-Length, a clean HTTP/2 end of stream)."""

    def __init__(self, status, headers, body, ended):
        self.status = status
        self.headers = headers
        self.body = body
        self.ended = ended

    def events(self):
        return events(self.body)


def request_head(fx, length, extra=""):
    head = "POST %s HTTP/1.1\r\nHost: 127.0.0.1\r\n" % fx.url
    for k, v in fx.headers:
        head += "%s: %s\r\n" % (k, v)
    return (head + "Content-Length: %d\r\nConnection: close\r\n%s\r\n"
            % (length, extra)).encode()


def read_all(s, timeout):
    chunks = []
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        try:
            data = s.recv(65536)
        except (ConnectionResetError, socket.timeout):
            break
        if not data:
            break
        chunks.append(data)
    return b"".join(chunks)


def ended_http1(raw):
    head, _, body = raw.partition(b"\r\n\r\n")
    headers = head.decode("latin-1").lower()
    if "transfer-encoding: chunked" in headers:
        return body.endswith(b"0\r\n\r\n")
    for line in headers.split("\r\n"):
        if line.startswith("content-length:"):
            return len(body) == int(line.split(":")[1])
    return False


def exchange_http1(port, fx, body, timeout=20, pause=0.0, rcvbuf=0):
    s = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
    if rcvbuf:
        s.setsockopt(socket.SOL_SOCKET, socket.SO_RCVBUF, rcvbuf)
    s.settimeout(timeout)
    try:
        s.connect(("127.0.0.1", port))
        s.sendall(request_head(fx, len(body)) + body)
        if pause:
            time.sleep(pause)
        raw = read_all(s, timeout)
    finally:
        s.close()
    if not raw:
        # nothing came before the connection closed: a reset can take
        # the unread header with it
        return Answer(0, {}, b"", False)
    status, headers, data = parse_raw(raw)
    return Answer(status, headers, data, ended_http1(raw))


def exchange_h2(port, fx, body, tmp, timeout=20):
    src, out, head = (os.path.join(tmp, n) for n in ("req", "out", "head"))
    with open(src, "wb") as f:
        f.write(body)
    cmd = ["curl", "-sS", "--http2-prior-knowledge", "-m", str(timeout),
           "-o", out, "-D", head, "--data-binary", "@" + src,
           "-H", "Expect:"]
    for k, v in fx.headers:
        cmd += ["-H", "%s: %s" % (k, v)]
    r = subprocess.run(cmd + ["http://127.0.0.1:%d%s" % (port, fx.url)],
                       capture_output=True, timeout=timeout + 10)
    lines = []
    if os.path.exists(head):
        with open(head, "rb") as f:
            lines = f.read().decode("latin-1").split("\r\n")
    if not lines or not lines[0]:
        # the stream was reset before its header reached curl
        return Answer(0, {}, b"", False)
    headers = {}
    for line in lines[1:]:
        k, _, v = line.partition(":")
        if k:
            headers[k.strip().lower()] = v.strip()
    data = b""
    if os.path.exists(out):
        # (curl writes no file for an answer that had no body yet)
        with open(out, "rb") as f:
            data = f.read()
    return Answer(int(lines[0].split()[1]), headers, data, r.returncode == 0)


def body_of(stream):
    fx = load_fixture("ts-unset/002.json")
    body = json.loads(fx.body)
    body["stream"] = stream
    return fx, json.dumps(body).encode()


def scripted(emulator, answers):
    emulator.profile = "proxy"
    emulator.script = lambda req: answers.pop(0) if answers else \
        Reply([text("unexpected call")])


def fault_answers(call, fault):
    """The fault on the first call, or on the call after a search."""
    return [fault] if call == 1 else [SEARCH, fault]


def error_of(answer):
    """The Anthropic error object the client got as its last SSE event
    (streaming) or as its JSON body."""
    if answer.headers.get("content-type", "").startswith("text/event"):
        evs = answer.events()
        assert evs and evs[-1]["type"] == "error", answer.body[-300:]
        assert not any(e["type"] == "message_stop" for e in evs)
        return evs[-1]["error"]
    data = json.loads(answer.body)
    assert data["type"] == "error"
    return data["error"]


# ---- an upstream status on any call: its meaning reaches the client ----

STATUSES = [(429, "rate_limit_error", (("retry-after", "7"),)),
            (529, "overloaded_error", ()),
            (500, "api_error", ())]


@pytest.mark.parametrize("call", [1, 2])
@pytest.mark.parametrize("stream", [True, False], ids=["sse", "json"])
@pytest.mark.parametrize("status,kind,extra", STATUSES,
                         ids=[str(s[0]) for s in STATUSES])
def test_upstream_status(emulator, gateway, call, stream, status, kind,
                         extra):
    scripted(emulator, fault_answers(
        call, ApiError("Upstream says no", status, kind, extra)))
    gw = gateway(server=GATEWAY)
    fx, body = body_of(stream)
    a = exchange_http1(gw.port, fx, body)

    assert a.ended
    err = error_of(a)
    assert err == {"type": kind, "message": "Upstream says no"}
    if stream and call == 2:
        # the stream had begun: the error comes in band
        assert a.status == 200
    else:
        assert a.status == status
        for k, v in extra:
            assert a.headers.get(k) == v
    assert len(emulator.requests) == call


# ---- the upstream breaks the connection: never a success ----

BREAKS = [("close", 0), ("close", 60), ("close", 300), ("reset", 60),
          ("reset", 300), ("hang", 60), ("hang", 300)]


@pytest.mark.parametrize("call", [1, 2])
@pytest.mark.parametrize("stream", [True, False], ids=["sse", "json"])
@pytest.mark.parametrize("how,after", BREAKS,
                         ids=["%s-%d" % b for b in BREAKS])
def test_upstream_breaks(emulator, gateway, call, stream, how, after):
    answer = SEARCH if call == 1 else FOUND
    scripted(emulator, fault_answers(call, Fault(answer, after, how)))
    gw = gateway(server=GATEWAY)
    fx, body = body_of(stream)
    a = exchange_http1(gw.port, fx, body)

    if a.status == 200 and not stream:
        pytest.fail("a broken answer reached the client as a success")
    if a.ended:
        err = error_of(a)
        assert err["type"] == "api_error"
        if not stream:
            assert a.status == 502
    gw.stop()
    # the request ended and was logged, whatever the client saw
    assert len(gw.access_log()) == 1


def test_error_event_from_the_upstream(emulator, gateway):
    """An error event in the later call's stream reaches the client as
    the upstream sent it."""
    overloaded = {"type": "error", "error": {"type": "overloaded_error",
                                             "message": "Overloaded"}}
    start = {"type": "message_start", "message": {
        "id": "msg_x", "type": "message", "role": "assistant",
        "model": "m", "content": [], "stop_reason": None,
        "usage": {"input_tokens": 1, "output_tokens": 1}}}
    broken = Raw([sse("message_start", start).encode(),
                  sse("error", overloaded).encode()])
    scripted(emulator, [SEARCH, broken])
    gw = gateway(server=GATEWAY)
    fx, body = body_of(True)
    a = exchange_http1(gw.port, fx, body)
    assert a.status == 200 and a.ended
    assert error_of(a) == overloaded["error"]


# ---- HTTP/2: the same outcomes ----

@pytest.mark.parametrize("case", ["429-later", "close-later", "close-first"])
def test_http2(emulator, gateway, tmp_path, case):
    if case == "429-later":
        fault = ApiError("Slow down", 429, "rate_limit_error",
                         (("retry-after", "7"),))
        answers = [SEARCH, fault]
    elif case == "close-later":
        answers = [SEARCH, Fault(FOUND, 700, "close")]
    else:
        answers = [Fault(SEARCH, 700, "close")]
    scripted(emulator, answers)
    gw = gateway(server=GATEWAY)
    fx, body = body_of(True)
    a = exchange_h2(gw.h2_port, fx, body, str(tmp_path))
    assert a.status == 200
    if a.ended:
        err = error_of(a)
        assert err["type"] == ("rate_limit_error" if case == "429-later"
                               else "api_error")


# ---- clients that read late, slowly, or never ----

def big_answers(size):
    return [SEARCH, Reply([text("y" * size)])]


@pytest.mark.parametrize("stream", [True, False], ids=["sse", "json"])
def test_a_backed_up_client_gets_everything(emulator, gateway, stream):
    """A 2 MB answer through a 16 KB send buffer, to a client that starts
    reading a second late: every byte arrives and the request ends."""
    scripted(emulator, big_answers(2_000_000))
    port = free_port()
    gw = gateway(server="listen 127.0.0.1:%d sndbuf=16k; %s"
                 % (port, GATEWAY))
    fx, body = body_of(stream)
    a = exchange_http1(port, fx, body, pause=1.0, rcvbuf=4096)
    assert a.status == 200 and a.ended
    if stream:
        kinds = [e["type"] for e in a.events()]
        assert kinds[-1] == "message_stop"
        texts = [e["delta"]["text"] for e in a.events()
                 if e["type"] == "content_block_delta"
                 and e["delta"]["type"] == "text_delta"]
        assert "y" * 2_000_000 in texts
    else:
        assert json.loads(a.body)["content"][-1]["text"] == "y" * 2_000_000


def test_http2_backed_up_client(emulator, gateway, tmp_path):
    scripted(emulator, big_answers(2_000_000))
    gw = gateway(server=GATEWAY + " http2_chunk_size 1k;")
    fx, body = body_of(True)
    a = exchange_h2(gw.h2_port, fx, body, str(tmp_path))
    assert a.status == 200 and a.ended
    assert a.events()[-1]["type"] == "message_stop"


def test_sendfile_max_chunk(emulator, gateway):
    scripted(emulator, big_answers(1_000_000))
    gw = gateway(server=GATEWAY + " sendfile_max_chunk 64k;")
    fx, body = body_of(True)
    a = exchange_http1(gw.port, fx, body)
    assert a.status == 200 and a.ended
    assert a.events()[-1]["type"] == "message_stop"


def worker_pid(gw):
    """The worker's pid; the master accepts connections on its listening
    sockets before it has forked the worker, so it is waited for."""
    deadline = time.monotonic() + 10
    while True:
        out = subprocess.run(["pgrep", "-P", str(gw.proc.pid)],
                             capture_output=True, text=True).stdout.split()
        if out or time.monotonic() > deadline:
            break
        time.sleep(0.05)
    assert len(out) == 1, out
    return int(out[0])


def rss_kb(pid):
    with open("/proc/%d/status" % pid) as f:
        for line in f:
            if line.startswith("VmRSS:"):
                return int(line.split()[1])
    raise AssertionError("no VmRSS")


def client_sockets(pid, port):
    """The worker's sockets on the gateway's port, listeners aside."""
    inodes = set()
    for fd in os.listdir("/proc/%d/fd" % pid):
        try:
            link = os.readlink("/proc/%d/fd/%s" % (pid, fd))
        except OSError:
            continue
        if link.startswith("socket:["):
            inodes.add(link[8:-1])
    n = 0
    with open("/proc/net/tcp") as f:
        for line in f.readlines()[1:]:
            cols = line.split()
            local_port = int(cols[1].split(":")[1], 16)
            if local_port == port and cols[3] != "0A" and cols[9] in inodes:
                n += 1
    return n


def never_reading_clients(port, fx, body, n):
    clients = []
    for _ in range(n):
        s = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
        s.setsockopt(socket.SOL_SOCKET, socket.SO_RCVBUF, 4096)
        s.connect(("127.0.0.1", port))
        s.sendall(request_head(fx, len(body)) + body)
        clients.append(s)
    return clients


def test_clients_that_never_read_are_let_go(emulator, gateway, monkeypatch):
    """Rounds of eight clients that send a request and never read its 2 MB
    answer: send_timeout ends each, every one is logged, the worker holds
    no socket of theirs, and its memory after the later rounds is what it
    was after the first.  The worker's allocator gives blocks of 128 KB
    and more back to the system when they are freed (a fixed mmap
    threshold), so its size is what the worker holds."""
    monkeypatch.setenv("GLIBC_TUNABLES", "glibc.malloc.mmap_threshold=131072")
    rounds = 4
    answers = []
    for _ in range(8 * rounds):
        answers += big_answers(2_000_000)
    scripted(emulator, answers)
    port = free_port()
    gw = gateway(server="listen 127.0.0.1:%d sndbuf=16k; %s"
                 % (port, GATEWAY.replace("send_timeout 3s",
                                          "send_timeout 1s")))
    fx, body = body_of(True)
    pid = worker_pid(gw)
    rss = []
    for rnd in range(1, rounds + 1):
        clients = never_reading_clients(port, fx, body, 8)
        try:
            deadline = time.monotonic() + 30
            while time.monotonic() < deadline and \
                    len(gw.access_log()) < 8 * rnd:
                time.sleep(0.2)
            assert len(gw.access_log()) == 8 * rnd, gw.access_log()
            assert client_sockets(pid, port) == 0
            rss.append(rss_kb(pid))
        finally:
            for s in clients:
                s.close()
    # a leak would keep 16 MB a round (8 answers of 2 MB); ASan holds
    # freed memory by design
    assert ASAN or max(rss[1:]) < rss[0] + 6 * 1024, rss
    gw.stop()
    assert "left in connection" not in gw.error_log()


def hang_up_after(port, marker):
    """A streaming request whose client resets the connection once the
    answer has shown marker."""
    fx, body = body_of(True)
    s = socket.create_connection(("127.0.0.1", port), timeout=10)
    s.sendall(request_head(fx, len(body)) + body)
    got = b""
    while marker not in got:
        piece = s.recv(65536)
        assert piece, got
        got += piece
    s.setsockopt(socket.SOL_SOCKET, socket.SO_LINGER,
                 b"\x01\x00\x00\x00\x00\x00\x00\x00")
    s.close()


def test_client_vanishes_during_a_later_call(emulator, gateway):
    """The client hangs up while the second call streams: the call stops,
    the request is logged with 499, nothing is left open."""
    slow = Raw((sse("ping", {"type": "ping"}).encode() for _ in range(100)),
               delay=0.1)
    scripted(emulator, [SEARCH, slow])
    # the search's blocks show the second call began
    gw = gateway(server=GATEWAY + " toolsearch_search_blocks keep;")
    hang_up_after(gw.port, b"tool_search_tool_result")
    deadline = time.monotonic() + 10
    while time.monotonic() < deadline and not gw.access_log():
        time.sleep(0.1)
    assert gw.access_log() and " 499 " in gw.access_log()[0] or \
        " 200 " in gw.access_log()[0], gw.access_log()
    assert emulator.wait_for(2)
    deadline = time.monotonic() + 10
    while time.monotonic() < deadline and not emulator.aborted:
        time.sleep(0.1)
    assert emulator.aborted == 1


# ---- the hosted path: deferred_hosted, toolsearch_search_blocks strip ----

# the cut set: the recorded client's profile would keep the blocks
HOSTED = ("toolsearch on; toolsearch_upstream anthropic; "
          "toolsearch_search_blocks strip; "
          "proxy_read_timeout 2s; send_timeout 3s;")

USE = {"type": "server_tool_use", "id": "srvtoolu_1",
       "name": "tool_search_tool_bm25", "input": {"query": "memory"}}
RESULT = {"type": "tool_search_tool_result", "tool_use_id": "srvtoolu_1",
          "content": {"type": "tool_search_tool_search_result",
                      "tool_references": [{"type": "tool_reference",
                                           "tool_name": TARGET}]}}
CALL = tool_use(TARGET, {"entities": []}, "toolu_target")
HOSTED_SEARCH = Reply([text("Searching."), USE, RESULT, CALL], searches=1)


def hosted_message(blocks):
    """A message as Anthropic's hosted search answers it."""
    return {"id": "msg_hosted", "type": "message", "role": "assistant",
            "model": "claude-sonnet-4-5", "content": blocks,
            "stop_reason": "tool_use", "stop_sequence": None,
            "usage": {"input_tokens": 10, "output_tokens": 10,
                      "server_tool_use": {"tool_search_requests": 1}}}


def hosted_answer(size, stream):
    """(what the upstream sends, what the client must get): a hosted
    search, its result, `size` bytes of text and the call it found; the
    client's answer is the same without the search's two blocks."""
    big = text("".join(chr(97 + i % 26) for i in range(size)))
    up = answer_bytes(hosted_message([text("Searching."), USE, RESULT, big,
                                      CALL]), stream)
    down = answer_bytes(hosted_message([text("Searching."), big, CALL]),
                        stream)
    return up, down


def hosted(emulator, answer):
    emulator.profile = "anthropic"
    emulator.script = lambda req: answer


@pytest.mark.parametrize("stream", [True, False], ids=["sse", "json"])
@pytest.mark.parametrize("status,kind,extra", STATUSES,
                         ids=[str(s[0]) for s in STATUSES])
def test_hosted_upstream_status(emulator, gateway, stream, status, kind,
                                extra):
    """An upstream error on the hosted path reaches the client as it came:
    the cut reads 200 answers only."""
    hosted(emulator, ApiError("Upstream says no", status, kind, extra))
    gw = gateway(server=HOSTED)
    fx, body = body_of(stream)
    a = exchange_http1(gw.port, fx, body)
    assert a.ended and a.status == status
    assert a.headers["x-toolsearch-decision"] == "deferred_hosted"
    assert error_of(a) == {"type": kind, "message": "Upstream says no"}
    for k, v in extra:
        assert a.headers.get(k) == v


@pytest.mark.parametrize("stream", [True, False], ids=["sse", "json"])
@pytest.mark.parametrize("how,after", BREAKS,
                         ids=["%s-%d" % b for b in BREAKS])
def test_hosted_upstream_breaks(emulator, gateway, stream, how, after):
    """The hosted answer breaks off: the client's answer breaks off too
    (never a cleanly ended success), without a search block, and the
    request ends and is logged."""
    hosted(emulator, Fault(HOSTED_SEARCH, after, how))
    gw = gateway(server=HOSTED)
    fx, body = body_of(stream)
    a = exchange_http1(gw.port, fx, body)
    assert not (a.status == 200 and a.ended), a.body[-300:]
    assert b"tool_search_tool" not in a.body
    gw.stop()
    assert len(gw.access_log()) == 1


def test_hosted_garbage_mid_stream(emulator, gateway):
    """Events the cut cannot read (not JSON, an unknown kind) between the
    hosted answer's events pass byte for byte; the search's blocks still
    leave, the blocks after them renumbered."""
    garbage = ["data: {not json\n\n", "event: mystery\ndata: [1, 2]\n\n"]
    up = list(sse_events(hosted_message(HOSTED_SEARCH.blocks)))
    down = list(sse_events(hosted_message([text("Searching."), CALL])))
    for ev in (up, down):
        ev.insert(5, garbage[1])
        ev.insert(1, garbage[0])
    hosted(emulator, Raw([e.encode() for e in up]))
    gw = gateway(server=HOSTED)
    fx, body = body_of(True)
    a = exchange_http1(gw.port, fx, body)
    assert a.status == 200 and a.ended
    assert a.body == "".join(down).encode()


def test_hosted_client_vanishes(emulator, gateway):
    """The client hangs up while a hosted answer streams: the upstream
    connection is closed, the request ends and is logged (with the status
    its header carried, as for plain proxy_pass)."""
    start = sse_events(hosted_message([]))
    pings = (sse("ping", {"type": "ping"}).encode() for _ in range(100))
    hosted(emulator, Raw([next(start).encode()] + list(pings), delay=0.1))
    gw = gateway(server=HOSTED)
    hang_up_after(gw.port, b"event: ping")
    deadline = time.monotonic() + 10
    while time.monotonic() < deadline and not (
            gw.access_log() and emulator.aborted):
        time.sleep(0.1)
    assert len(gw.access_log()) == 1
    assert emulator.aborted == 1


@pytest.mark.parametrize("case", ["429", "close-700"])
def test_hosted_http2(emulator, gateway, tmp_path, case):
    """The same outcomes over HTTP/2: the status as it came, or an answer
    that does not end cleanly."""
    hosted(emulator, ApiError("Slow down", 429, "rate_limit_error")
           if case == "429" else Fault(HOSTED_SEARCH, 700, "close"))
    gw = gateway(server=HOSTED)
    fx, body = body_of(True)
    a = exchange_h2(gw.h2_port, fx, body, str(tmp_path))
    if case == "429":
        assert a.status == 429 and a.ended
        assert error_of(a)["type"] == "rate_limit_error"
    else:
        assert a.status in (0, 200) and not a.ended
        assert b"tool_search_tool" not in a.body
