import glob
import http.client
import json
import os
import socket
import subprocess
import sys
import time

import pytest

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))

from emulator import Emulator          # noqa: E402
from gateway import Gateway            # noqa: E402

# the real-client suite needs npm packages and runs with `make e2e`
collect_ignore = ["e2e"]

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
CLI = os.path.join(ROOT, "build", "toolsearch")

FIXTURES = os.path.join(os.path.dirname(os.path.abspath(__file__)),
                        "fixtures", "claude-code")

# hop-by-hop or connection-specific headers of the recording
SKIP_HEADERS = {"host", "content-length", "connection", "accept-encoding",
                "transfer-encoding"}


class Fixture:
    """A request recorded from Claude Code: body bytes and its headers."""

    def __init__(self, path):
        self.name = os.path.relpath(path, FIXTURES)
        with open(path, "rb") as f:
            self.body = f.read()
        with open(path[:-len(".json")] + ".headers.json") as f:
            meta = json.load(f)
        raw = meta["rawHeaders"]
        self.headers = [(raw[i], raw[i + 1]) for i in range(0, len(raw), 2)
                        if raw[i].lower() not in SKIP_HEADERS]
        self.url = meta["url"]


CLIENTS = os.path.join(os.path.dirname(os.path.abspath(__file__)),
                       "fixtures", "clients")


def client_requests(client):
    """(path, body bytes, headers) of each request a recorded client made
    (t/fixtures/clients/<client>/); the "path" header is its target."""
    out = []
    for path in sorted(glob.glob(os.path.join(CLIENTS, client, "*.json"))):
        with open(path, "rb") as f:
            body = f.read()
        headers = []
        with open(path[:-len(".json")] + ".headers") as f:
            for line in f:
                k, v = line.rstrip("\n").split(": ", 1)
                headers.append((k, v))
        out.append((path, body, headers))
    return out


def recorded_session(folder, client, stream=True):
    """(body bytes, headers) of each request with tools that a client made
    in a session recorded in the OpenAI formats (folder/<client>/, in the
    layout of t/fixtures/clients), as it sent them; without stream, its
    streaming fields left out (the JSON answer's case).  The headers are
    the recorded ones but hop-by-hop, with a key."""
    out = []
    for path in sorted(glob.glob(os.path.join(folder, client, "*.json"))):
        with open(path, "rb") as f:
            body = f.read()
        b = json.loads(body)
        if not b.get("tools"):
            continue
        if not stream:
            b.pop("stream", None)
            b.pop("stream_options", None)
            body = json.dumps(b, separators=(",", ":"),
                              ensure_ascii=False).encode()
        headers = [("Authorization", "Bearer sk-test")]
        with open(path[:-len(".json")] + ".headers") as f:
            for line in f:
                k, v = line.rstrip("\n").split(": ", 1)
                if k != "path" and k not in SKIP_HEADERS:
                    headers.append((k, v))
        out.append((body, headers))
    return out


def assert_search_then_load(calls, target, sent):
    """calls: (function names, tool bytes) of each upstream call of a
    recorded two-turn session through the gateway.  The first call offered
    the search, not the target; the continuation loaded the target; the
    next turn made one call; none carried more than half of the client's
    `sent` tool bytes.  With the call wrapper (the default) the target
    stays deferred: every call sends the same functions, call_tool among
    them."""
    names = [c[0] for c in calls]
    assert len(calls) == 3 and "tool_search" in names[0] and \
        target not in names[0], names
    if "call_tool" in names[0]:
        assert names[0] == names[1] == names[2], names
    else:
        assert target in names[1], names
    assert max(c[1] for c in calls) <= sent * 0.5, (calls, sent)


def fixture_paths():
    return sorted(glob.glob(os.path.join(FIXTURES, "*", "[0-9][0-9][0-9].json")))


def load_fixture(name):
    return Fixture(os.path.join(FIXTURES, name))


@pytest.fixture
def emulator():
    emu = Emulator().start()
    yield emu
    emu.stop()


@pytest.fixture
def gateway(emulator):
    """gateway(http=..., server=..., location=...) -> a started Gateway."""
    started = []

    def make(**conf):
        gw = Gateway(emulator.port, **conf).start()
        started.append(gw)
        return gw

    yield make
    # every gateway stops, even when an earlier one reports valgrind errors
    failed = []
    for gw in started:
        try:
            gw.remove()
        except AssertionError as e:
            failed.append(e)
    if failed:
        raise failed[0]


class Response:
    def __init__(self, status, headers, body):
        self.status = status
        self.headers = headers
        self.body = body

    def header(self, name):
        for k, v in self.headers:
            if k.lower() == name.lower():
                return v
        return None

    @property
    def decision(self):
        return self.header("X-Toolsearch-Decision")


class Rewrite:
    """What build/toolsearch rewrite makes of a body: the engine's answer
    the gateway must reproduce on the wire."""

    def __init__(self, body, betas="", *options):
        args = [CLI, "rewrite", "--beta", betas] + list(options)
        r = subprocess.run(args, input=body, capture_output=True, timeout=30)
        assert r.returncode == 0, r.stderr
        self.body = r.stdout
        self.betas = betas
        lines = r.stderr.decode().splitlines()
        self.report = dict(kv.split("=", 1) for kv in lines[0].split())
        for line in lines[1:]:
            if line.startswith("anthropic-beta: "):
                self.betas = line[len("anthropic-beta: "):]
        self.decision = self.report["decision"]


def betas_of(headers):
    """All anthropic-beta lines of a header list, comma-joined."""
    return ",".join(v for k, v in headers if k.lower() == "anthropic-beta")


def request(gw, method="POST", path="/v1/messages?beta=true", body=None,
            headers=(), timeout=30):
    conn = http.client.HTTPConnection("127.0.0.1", gw.port, timeout=timeout)
    try:
        conn.putrequest(method, path, skip_accept_encoding=True)
        for k, v in headers:
            conn.putheader(k, v)
        if body is not None:
            conn.putheader("Content-Length", str(len(body)))
        conn.endheaders(body)
        r = conn.getresponse()
        return Response(r.status, r.getheaders(), r.read())
    finally:
        conn.close()


def post_json(gw, body, headers=(("Content-Type", "application/json"),),
              **kw):
    return request(gw, "POST", body=body, headers=headers, **kw)


def raw_exchange(gw, data_parts, pause=0.0, timeout=10.0):
    """Sends raw bytes (in parts, with pauses) and reads the whole answer.

    The request must carry "Connection: close" so the server ends the
    exchange; reading is bounded by timeout.
    """
    s = socket.create_connection(("127.0.0.1", gw.port), timeout=timeout)
    try:
        for part in data_parts:
            s.sendall(part)
            if pause:
                time.sleep(pause)
        chunks = []
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            data = s.recv(65536)
            if not data:
                break
            chunks.append(data)
        return b"".join(chunks)
    finally:
        s.close()


def parse_raw(data):
    """(status, headers dict lowercased, body) of a raw HTTP/1.1 answer."""
    head, _, body = data.partition(b"\r\n\r\n")
    lines = head.decode("latin-1").split("\r\n")
    status = int(lines[0].split()[1])
    headers = {}
    for line in lines[1:]:
        k, _, v = line.partition(":")
        headers[k.strip().lower()] = v.strip()
    if headers.get("transfer-encoding") == "chunked":
        out = b""
        while body:
            size_line, _, rest = body.partition(b"\r\n")
            size = int(size_line.split(b";")[0], 16)
            if size == 0:
                break
            out += rest[:size]
            body = rest[size + 2:]
        body = out
    return status, headers, body
