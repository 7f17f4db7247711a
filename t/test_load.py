"""Load and reload: wrk at saturation against a real nginx with the module
while its master reloads the configuration 20 times; the emulator checks
every body it receives against the digest of the body the gateway had to
send.  Then the worker's memory over many requests must stay flat.  Then
gateway search (two upstream calls a request, streamed) under load with 5
reloads, against plain proxy_pass of the same requests in the same run.

Bounded for CI (20 s of load, 6,000 requests for the memory check); the
full run of docs/robustness.md:

    TOOLSEARCH_LOAD_SECONDS=60 TOOLSEARCH_RSS_REQUESTS=100000 \\
        python3 -m pytest -q t/test_load.py
"""

import hashlib
import json
import os
import re
import shutil
import signal
import subprocess
import time

import pytest

from conftest import Rewrite, load_fixture
from emulator import seeker
from gateway import ASAN, VALGRIND

LOAD_SECONDS = int(os.environ.get("TOOLSEARCH_LOAD_SECONDS", "20"))
RSS_REQUESTS = int(os.environ.get("TOOLSEARCH_RSS_REQUESTS", "6000"))
RELOADS = 20

pytestmark = [
    pytest.mark.skipif(shutil.which("wrk") is None, reason="needs wrk"),
    pytest.mark.skipif(VALGRIND, reason="needs a master process and speed"),
]

SERVER = ("toolsearch on; toolsearch_search hosted; "
          "toolsearch_upstream anthropic;")
HTTP = "toolsearch_zone toolsearch 64k;"

SMALL = (b'{"model":"claude-sonnet-4-5","max_tokens":64,"messages":[{"role":'
         b'"user","content":"hi"}],"tools":[{"name":"Bash","input_schema":'
         b'{"type":"object"}},{"name":"mcp__m__read","description":"Reads.",'
         b'"input_schema":{"type":"object"}}]}')


def bodies(big):
    """(body, what the upstream must receive): rewritten, untouched."""
    out = [SMALL, SMALL[:-2], SMALL.replace(b"mcp__m__read", b"Read")]
    if big:
        # two requests whose rewritten tools differ in every tool: each
        # rewrite copies them into a block of the worker's, and a block
        # two requests in flight shared would show in the digests
        recorded = load_fixture("ts-unset/002.json").body
        out += [recorded, recorded.replace(b'"description":"',
                                           b'"description":"(v2) ')]
    return [(b, Rewrite(b, "", "--upstream", "anthropic",
                        "--search", "hosted").body
             if not b.endswith(b"}]") else b) for b in out]


def lua_string(data):
    """data as a Lua long string whose brackets it does not contain."""
    level = 1
    while b"]" + b"=" * level + b"]" in data:
        level += 1
    eq = "=" * level
    return "[%s[%s]%s]" % (eq, data.decode(), eq)


def wrk_script(path, pairs, close):
    """Requests cycling through the bodies.  Under reloads each request has
    its own connection: a keepalive connection an old worker closes while
    wrk sends on it is a failure of the client's, not of the gateway's."""
    with open(path, "w") as f:
        f.write("local bodies = {%s}\n" % ",\n".join(
            lua_string(b) for b, _ in pairs))
        f.write("local digests = {%s}\n" % ", ".join(
            '"%s"' % hashlib.sha256(want).hexdigest() for _, want in pairs))
        f.write("""
local i = 0
request = function()
    i = i % #bodies + 1
    return wrk.format("POST", "/v1/messages", {
        ["Content-Type"] = "application/json",
        ["X-Expect-Digest"] = digests[i],
        ["Connection"] = "CONNECTION"}, bodies[i])
end
""".replace("CONNECTION", "close" if close else "keep-alive"))


def wrk_counts(out):
    """(requests completed, failures) from wrk's report."""
    done = int(re.search(r"(\d+) requests in", out).group(1))
    failed = sum(int(n) for n in re.findall(
        r"(?:Non-2xx or 3xx responses|connect|read|write|timeout)[: ]+(\d+)",
        out))
    return done, failed


def wrk(gw, script, seconds):
    """Runs wrk; (requests completed, failures, its report)."""
    out = subprocess.run(
        ["wrk", "-t2", "-c16", "-d%ds" % seconds, "--timeout", "10s",
         "-s", script, gw.url("/")],
        capture_output=True, text=True, timeout=seconds + 60)
    assert out.returncode == 0, out.stderr
    return wrk_counts(out.stdout) + (out.stdout,)


def workers(gw):
    with open("/proc/%d/task/%d/children" % (gw.proc.pid, gw.proc.pid)) as f:
        return [int(p) for p in f.read().split()]


def rss_kb(pid):
    with open("/proc/%d/status" % pid) as f:
        return int(re.search(r"VmRSS:\s+(\d+)", f.read()).group(1))


def assert_no_crash(gw):
    log = gw.error_log()
    assert "exited on signal" not in log, log[-2000:]
    assert "[alert]" not in log, log[-2000:]


def wrk_with_reloads(gw, script, seconds, reloads):
    """wrk while the master reloads `reloads` times, evenly spread."""
    proc = subprocess.Popen(
        ["wrk", "-t2", "-c16", "-d%ds" % seconds, "--timeout", "10s",
         "-s", script, gw.url("/")],
        stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    try:
        for _ in range(reloads):
            time.sleep(seconds / (reloads + 1))
            gw.proc.send_signal(signal.SIGHUP)
        out, err = proc.communicate(timeout=seconds + 60)
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.wait(5)
    assert proc.returncode == 0, err
    return wrk_counts(out) + (out,)


def test_saturation_with_reloads(emulator, gateway, tmp_path):
    emulator.keep = False
    gw = gateway(http=HTTP, server=SERVER, log_level="notice")
    script = str(tmp_path / "bodies.lua")
    wrk_script(script, bodies(big=True), close=True)

    done, failed, out = wrk_with_reloads(gw, script, LOAD_SECONDS, RELOADS)
    assert done > 100, out
    assert failed == 0 and "Socket errors" not in out, out
    assert emulator.corrupted == 0
    assert emulator.received >= done
    assert gw.error_log().count("(SIGHUP) received") == RELOADS
    assert_no_crash(gw)
    print("load: %d requests in %d s, %d reloads, 0 failed, 0 corrupted"
          % (done, LOAD_SECONDS, RELOADS))


@pytest.mark.skipif(ASAN, reason="ASan holds freed memory in quarantine: "
                    "the worker grows by design; measured on plain builds")
def test_worker_memory_stays_flat(emulator, gateway, tmp_path):
    emulator.keep = False
    # bodies in memory: each is read into a block the worker lends (the
    # saturation test above covers bodies in temporary files), and the
    # blocks the worker keeps must not grow with the requests
    gw = gateway(http=HTTP, server=SERVER + " client_body_buffer_size 1m;",
                 log_level="notice")
    script = str(tmp_path / "bodies.lua")
    wrk_script(script, bodies(big=True), close=False)
    worker = workers(gw)[0]

    # warm up: pools, buffers and the allocator reach their working size
    done, failed, out = wrk(gw, script, 3)
    assert failed == 0, out
    start, total = rss_kb(worker), done
    deadline = time.monotonic() + max(60, RSS_REQUESTS / 100)
    while total < RSS_REQUESTS and time.monotonic() < deadline:
        done, failed, out = wrk(gw, script, 5)
        assert failed == 0, out
        total += done

    end = rss_kb(worker)
    assert workers(gw) == [worker], "the worker was replaced"
    assert total >= RSS_REQUESTS, "only %d requests in time" % total
    assert emulator.corrupted == 0
    # flat: at most 4 MB or 10 % above the warmed-up size
    assert end - start <= max(4096, start // 10), (start, end, total)
    assert_no_crash(gw)
    print("rss: %d requests, worker %d kB after warm-up, %d kB at the end"
          % (total, start, end))


GATEWAY_RELOADS = 5
TARGET = "mcp__memory__create_entities"


def gateway_search_script(path, fx, body, prefix):
    """Streaming requests of the recorded body and headers, each on its
    connection."""
    headers = "".join('[ %s ] = %s, ' % (lua_string(k.encode()),
                                       lua_string(v.encode()))
                      for k, v in fx.headers)
    with open(path, "w") as f:
        f.write("local body = %s\n" % lua_string(body))
        f.write("""
request = function()
    return wrk.format("POST", "PREFIX/v1/messages", {HEADERS
        ["Connection"] = "close"}, body)
end
""".replace("PREFIX", prefix).replace("HEADERS", headers))


def test_gateway_search_under_load_and_reloads(emulator, gateway, tmp_path):
    """Gateway search (a search, then the found tool called: two upstream
    calls a request, streamed) under load while the master reloads, then
    plain proxy_pass of the same requests likewise: no more failures."""
    emulator.keep = False
    emulator.profile = "proxy"
    emulator.script = seeker(TARGET, {"entities": []},
                             "memory create entities", "done")
    gw = gateway(http=HTTP, log_level="notice",
                 server="toolsearch on; toolsearch_upstream compatible; "
                 "location /plain/ { proxy_http_version 1.1; "
                 "proxy_set_header Connection \"\"; "
                 "proxy_pass http://emulator/; }")
    fx = load_fixture("ts-unset/002.json")
    body = json.loads(fx.body)
    body["stream"] = True
    body = json.dumps(body).encode()
    seconds = LOAD_SECONDS
    runs = {}
    for prefix in ("", "/plain"):
        script = str(tmp_path / ("load%s.lua" % prefix.replace("/", "_")))
        gateway_search_script(script, fx, body, prefix)
        runs[prefix or "module"] = wrk_with_reloads(gw, script, seconds,
                                                    GATEWAY_RELOADS)
    module, plain = runs["module"], runs["/plain"]
    assert module[0] > 20 and plain[0] > 20, (module[2], plain[2])
    assert emulator.received >= 2 * module[0] + plain[0], (module[2], plain[2])
    assert module[1] <= plain[1], (module[2], plain[2])
    assert_no_crash(gw)
    print("gateway search: %d requests, %d failed; plain: %d, %d failed"
          % (module[0], module[1], plain[0], plain[1]))
