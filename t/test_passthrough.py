"""Foundation: with `toolsearch on`, every request reaches the upstream as
the engine renders it (byte-identical wherever the decision changes
nothing), however its body arrives, and the decision says what the module
saw.  The test upstream is named "emulator", so profile auto resolves to
"compatible"."""

import json
import os
import shutil
import subprocess

import pytest

from conftest import (Fixture, Rewrite, betas_of, fixture_paths,
                      load_fixture, parse_raw, post_json, raw_exchange,
                      request)

JSON = ("Content-Type", "application/json")
SMALL = json.dumps({
    "model": "claude-sonnet-4-5", "max_tokens": 64,
    "messages": [{"role": "user", "content": "hi"}],
    "tools": [{"name": "get_weather", "description": "Weather.",
               "input_schema": {"type": "object"}}]}).encode()


def assert_forwarded(emulator, body, method="POST"):
    assert emulator.wait_for(1)
    got = emulator.last()
    assert got.method == method
    assert got.body == body
    return got


def engine(fx_or_body, betas=""):
    """The engine's rendering for this test server's profile."""
    if isinstance(fx_or_body, bytes):
        return Rewrite(fx_or_body, betas, "--upstream", "compatible",
                       "--search", "hosted")
    return Rewrite(fx_or_body.body, betas_of(fx_or_body.headers),
                   "--upstream", "compatible", "--search", "hosted")


# the foundation's view: no gateway-executed search
ON = "toolsearch on; toolsearch_search hosted;"

UNCHANGED = ("upstream_unsupported", "standard_mode", "nothing_to_defer")


@pytest.mark.parametrize("path", fixture_paths(),
                         ids=lambda p: os.path.relpath(p).split("fixtures/")[-1])
def test_fixture_reaches_upstream_byte_identical(emulator, gateway, path):
    fx = Fixture(path)
    want = engine(fx)
    gw = gateway()
    r = request(gw, "POST", fx.url, fx.body, fx.headers)
    got = assert_forwarded(emulator, want.body)
    assert r.status == 200, r.body
    assert got.status == 200 and got.error is None
    assert r.decision == want.decision
    if want.decision in UNCHANGED:
        assert got.body == fx.body
    assert int(r.header("X-Toolsearch-Tools")) == \
        len(json.loads(fx.body)["tools"])
    assert got.path == fx.url
    assert betas_of(got.headers) == want.betas
    for name, value in fx.headers:
        if name.lower() not in ("content-type", "anthropic-beta"):
            assert value in got.header_all(name), name


def test_spilled_body_is_read_from_the_temp_file(emulator, gateway):
    fx = load_fixture("ts-unset/002.json")
    gw = gateway(server=ON + " client_body_buffer_size 1k;")
    r = request(gw, "POST", fx.url, fx.body, fx.headers)
    assert_forwarded(emulator, fx.body)
    assert r.status == 200
    assert r.decision == "upstream_unsupported"
    assert r.header("X-Toolsearch-Tools") == "149"
    assert "a client request body is buffered to a temporary file" in \
        gw.error_log()


def chunked(body, size):
    out = b""
    for i in range(0, len(body), size):
        piece = body[i:i + size]
        out += b"%x\r\n%s\r\n" % (len(piece), piece)
    return out + b"0\r\n\r\n"


def head_lines(headers):
    return "".join("%s: %s\r\n" % h for h in headers
                   if h[0].lower() != "content-type")


def raw_post(gw, extra_headers, body_parts, pause=0.0):
    head = ("POST /v1/messages HTTP/1.1\r\nHost: gw\r\n"
            "Content-Type: application/json\r\nConnection: close\r\n"
            + head_lines(extra_headers) + "\r\n").encode()
    return parse_raw(raw_exchange(gw, [head] + body_parts, pause))


def test_body_in_memory_then_a_pipelined_request(emulator, gateway):
    # the part read with the headers and the rest end up in one buffer
    # (the module lends nginx one for the read); the header buffer is
    # back for the pipelined request that follows on the connection
    fx = load_fixture("ts-true/004.json")
    gw = gateway(server=ON + " client_body_buffer_size 1m;")
    first = ("POST /v1/messages HTTP/1.1\r\nHost: gw\r\n"
             "Content-Type: application/json\r\nContent-Length: %d\r\n"
             % len(fx.body) + head_lines(fx.headers) + "\r\n").encode()
    second = ("POST /v1/messages HTTP/1.1\r\nHost: gw\r\n"
              "Content-Type: application/json\r\nContent-Length: %d\r\n"
              "Connection: close\r\n\r\n" % len(SMALL)).encode() + SMALL
    rest = fx.body[500:]
    parts = [first + fx.body[:500]] + [rest[i:i + 9000] for i in
                                        range(0, len(rest), 9000)]
    parts[-1] += second
    answer = raw_exchange(gw, parts, pause=0.02)
    assert answer.count(b"HTTP/1.1 200 ") == 2, answer[:300]
    assert emulator.wait_for(2)
    assert [r.body for r in emulator.requests] == [engine(fx).body,
                                                   engine(SMALL).body]
    assert engine(fx).body != fx.body


@pytest.mark.parametrize("buffering", ["on", "off"])
def test_chunked_body(emulator, gateway, buffering):
    fx = load_fixture("ts-true/004.json")
    gw = gateway(server=ON + " proxy_request_buffering %s;"
                 % buffering)
    data = chunked(fx.body, 7000)
    parts = [data[i:i + 9000] for i in range(0, len(data), 9000)]
    status, headers, _ = raw_post(
        gw, [("Transfer-Encoding", "chunked")] + fx.headers, parts,
        pause=0.05)
    want = engine(fx)
    got = assert_forwarded(emulator, want.body)
    assert status == 200
    assert headers["x-toolsearch-decision"] == want.decision
    # the upstream sees a plain Content-Length body
    assert got.header("Content-Length") == str(len(want.body))
    assert got.header("Transfer-Encoding") is None


def test_expect_100_continue(emulator, gateway):
    fx = load_fixture("ts-unset/003.json")
    gw = gateway()
    head = ("POST /v1/messages HTTP/1.1\r\nHost: gw\r\n"
            "Content-Type: application/json\r\nConnection: close\r\n"
            "Expect: 100-continue\r\nContent-Length: %d\r\n%s\r\n"
            % (len(fx.body), head_lines(fx.headers))).encode()
    import socket
    s = socket.create_connection(("127.0.0.1", gw.port), timeout=10)
    try:
        s.sendall(head)
        interim = s.recv(100)
        assert interim.startswith(b"HTTP/1.1 100 Continue")
        s.sendall(fx.body)
        answer = b""
        while True:
            data = s.recv(65536)
            if not data:
                break
            answer += data
    finally:
        s.close()
    status, headers, _ = parse_raw(answer)
    assert_forwarded(emulator, fx.body)
    assert status == 200
    assert headers["x-toolsearch-decision"] == "upstream_unsupported"


@pytest.mark.skipif(shutil.which("curl") is None, reason="needs curl")
def test_http2_h2c(emulator, gateway, tmp_path):
    fx = load_fixture("ts-unset/002.json")
    gw = gateway()
    body = tmp_path / "body.json"
    body.write_bytes(fx.body)
    headers = sum([["-H", "%s: %s" % h] for h in fx.headers], [])
    out = subprocess.run(
        ["curl", "-sS", "--http2-prior-knowledge", "-o", "/dev/null",
         "-D", "-"] + headers + ["--data-binary", "@%s" % body,
         "http://127.0.0.1:%d/v1/messages" % gw.h2_port],
        capture_output=True, text=True, timeout=30)
    assert out.returncode == 0, out.stderr
    assert out.stdout.startswith("HTTP/2 200")
    assert "x-toolsearch-decision: upstream_unsupported" in out.stdout
    assert_forwarded(emulator, fx.body)


def test_non_post_is_not_read(emulator, gateway):
    gw = gateway()
    r = request(gw, "GET", "/v1/models")
    got = assert_forwarded(emulator, b"", method="GET")
    assert got.path == "/v1/models"
    assert r.decision == "passthrough_method"


MALFORMED = [
    ("truncated", SMALL[:-7], "passthrough_malformed"),
    ("trailing_garbage", SMALL + b"}", "passthrough_malformed"),
    ("bad_escape", SMALL.replace(b'"hi"', b'"h\\qi"'),
     "passthrough_malformed"),
    ("control_char", SMALL.replace(b'"hi"', b'"h\x01i"'),
     "passthrough_malformed"),
    ("empty", b"", "passthrough_malformed"),
    ("invalid_utf8", SMALL.replace(b'"hi"', b'"h\xffi"'),
     "passthrough_malformed"),
    ("overlong_utf8", SMALL.replace(b'"hi"', b'"h\xc0\xafi"'),
     "passthrough_malformed"),
    ("surrogate_utf8", SMALL.replace(b'"hi"', b'"h\xed\xa0\x80i"'),
     "passthrough_malformed"),
    ("cut_utf8", SMALL.replace(b'"hi"', b'"hi\xe2\x82"'),
     "passthrough_malformed"),
    ("too_deep", SMALL[:-1] + b',"x":' + b"[" * 600 + b"]" * 600 + b"}",
     "passthrough_too_deep"),
    ("duplicate_tools", SMALL[:-1] + b',"tools":[]}',
     "passthrough_duplicate_key"),
    ("tools_not_array", SMALL.replace(b'"tools": [', b'"tools": {"a": [')
     .replace(b"}]}", b"}]}}"), "passthrough_wrong_type"),
    ("top_level_array", b"[" + SMALL + b"]", "passthrough_wrong_type"),
    ("model_not_string", SMALL.replace(b'"claude-sonnet-4-5"', b"45"),
     "passthrough_wrong_type"),
    ("too_many_members", b"{" + b",".join(b'"k%d":0' % i
                                         for i in range(300)) + b"}",
     "passthrough_limit"),
]


@pytest.mark.parametrize("body,decision", [m[1:] for m in MALFORMED],
                         ids=[m[0] for m in MALFORMED])
def test_malformed_is_forwarded_untouched(emulator, gateway, body, decision):
    gw = gateway()
    r = post_json(gw, body)
    got = assert_forwarded(emulator, body)
    assert r.decision == decision
    # the client sees the upstream's own answer, unchanged
    assert r.status == got.status


def test_valid_small_request(emulator, gateway):
    gw = gateway()
    r = post_json(gw, SMALL)
    assert_forwarded(emulator, SMALL)
    assert r.status == 200
    assert r.decision == "upstream_unsupported"
    assert json.loads(r.body)["content"][0]["type"] == "text"


@pytest.mark.parametrize("use_chunked", [False, True])
def test_over_max_body_size_is_untouched(emulator, gateway, use_chunked):
    fx = load_fixture("ts-unset/002.json")
    gw = gateway(server=ON + " toolsearch_max_body_size 100k;")
    if use_chunked:
        status, headers, _ = raw_post(
            gw, [("Transfer-Encoding", "chunked")] + fx.headers,
            [chunked(fx.body, 16384)])
        decision = headers["x-toolsearch-decision"]
    else:
        r = post_json(gw, fx.body, headers=fx.headers)
        status, decision = r.status, r.decision
    assert_forwarded(emulator, fx.body)
    assert status == 200
    assert decision == "passthrough_too_large"


@pytest.mark.parametrize("ctype", ["text/plain", "application/x-www-form-"
                                   "urlencoded", "application/jsonp", None])
def test_not_json_content_type(emulator, gateway, ctype):
    gw = gateway()
    headers = [("Content-Type", ctype)] if ctype else []
    r = request(gw, "POST", body=SMALL, headers=headers)
    assert_forwarded(emulator, SMALL)
    assert r.decision == "passthrough_not_json"


@pytest.mark.parametrize("ctype", ["application/json; charset=utf-8",
                                   "Application/JSON", "application/vnd.x+json"])
def test_json_content_types(emulator, gateway, ctype):
    gw = gateway()
    r = request(gw, "POST", body=SMALL, headers=[("Content-Type", ctype)])
    assert_forwarded(emulator, SMALL)
    assert r.decision == "upstream_unsupported"


def test_content_encoding_is_untouched(emulator, gateway):
    import gzip
    body = gzip.compress(SMALL)
    gw = gateway()
    r = request(gw, "POST", body=body,
                headers=[JSON, ("Content-Encoding", "gzip")])
    assert_forwarded(emulator, body)
    assert r.decision == "passthrough_encoded"


def test_identity_encoding_is_analysed(emulator, gateway):
    gw = gateway()
    r = request(gw, "POST", body=SMALL,
                headers=[JSON, ("Content-Encoding", "identity")])
    assert_forwarded(emulator, SMALL)
    assert r.decision == "upstream_unsupported"


def test_module_off_leaves_no_decision(emulator, gateway):
    gw = gateway(server="toolsearch off;")
    r = post_json(gw, SMALL)
    assert_forwarded(emulator, SMALL)
    assert r.decision in (None, "")


def test_location_inherits_and_overrides(emulator, gateway):
    gw = gateway(server=ON,
                 location="location /off { toolsearch off; "
                          "proxy_pass http://emulator; }")
    assert post_json(gw, SMALL).decision == "upstream_unsupported"
    r = request(gw, "POST", "/off", SMALL, [JSON])
    assert r.decision in (None, "")


def test_client_max_body_size_gives_413(emulator, gateway):
    fx = load_fixture("ts-unset/002.json")
    gw = gateway(server=ON + " client_max_body_size 10k;")
    status, _, _ = raw_post(gw, [("Transfer-Encoding", "chunked")],
                            [chunked(fx.body, 4096)])
    assert status == 413
    assert emulator.requests == []


def test_access_log_carries_the_decision(emulator, gateway):
    gw = gateway()
    post_json(gw, SMALL)
    post_json(gw, b"{")
    gw.stop()
    log = "\n".join(gw.access_log())
    assert "decision=upstream_unsupported in=%d" % len(SMALL) in log
    assert "decision=passthrough_malformed in=1" in log
