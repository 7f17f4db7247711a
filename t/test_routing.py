"""Where gateway-search calls go: every call of the loop goes where the
client's own request went, through the same location and its proxy_pass,
whatever rewrites, maps or server-level rules say, and never into a
location the client was denied (subrequests skip the access phase).

A second emulator stands behind `location /internal/ { deny all; }` and
must never be reached; `location /` answers 404 from nginx itself."""

import json

import pytest

from conftest import request
from emulator import Emulator
from test_gateway_search import body_of, message_of, searcher

ROUTED = """
    toolsearch on; toolsearch_upstream compatible;
    toolsearch_search_blocks keep;

    %(server)s

    location /anthropic/ {
        %(location)s
        proxy_http_version 1.1;
        proxy_set_header Connection "";
        proxy_pass http://emulator%(uri)s;
    }

    location /plain/ {
        toolsearch off;
        %(plain)s
        proxy_http_version 1.1;
        proxy_set_header Connection "";
        proxy_pass http://emulator%(uri)s;
    }

    location /internal/ {
        deny all;
        proxy_pass http://127.0.0.1:%(internal)d;
    }
"""

# how the client's request reaches the emulator: (rules of /anthropic/,
# the same for /plain/, proxy_pass URI part, rules at server level, http)
SETUPS = {
    "rewrite-break": ("rewrite ^/anthropic/(.*)$ /$1 break;",
                      "rewrite ^/plain/(.*)$ /$1 break;", "", "", ""),
    "uri-part": ("", "", "/", "", ""),
    # after rewrite ... break, proxy_pass sends the whole rewritten URI
    "rewrite-and-uri-part": ("rewrite ^/anthropic/(.*)$ /$1 break;",
                             "rewrite ^/plain/(.*)$ /$1 break;", "/unused/",
                             "", ""),
    "set": ("set $root /v1; rewrite ^/anthropic/v1/(.*)$ $root/$1 break; "
            "rewrite ^/anthropic/(.*)$ /$1 break;",
            "set $root /v1; rewrite ^/plain/v1/(.*)$ $root/$1 break; "
            "rewrite ^/plain/(.*)$ /$1 break;", "", "", ""),
    "map": ("rewrite ^ $route_to break;", "rewrite ^ $route_to break;", "",
            "", "map $http_x_route $route_to { admin /internal/admin; "
            "default /v1/messages; }"),
    # a server-level rule that would send the rewritten URI elsewhere
    "server-rewrite": ("rewrite ^/anthropic/(.*)$ /$1 break;",
                       "rewrite ^/plain/(.*)$ /$1 break;", "",
                       "rewrite ^/v1/(.*)$ /internal/$1 last;", ""),
}


@pytest.fixture
def internal():
    emu = Emulator().start()
    yield emu
    emu.stop()


def routed(gateway, internal, setup):
    location, plain, uri, server, http = SETUPS[setup]
    return gateway(http=http, location="return 404;", server=ROUTED % {
        "server": server, "location": location, "plain": plain, "uri": uri,
        "internal": internal.port})


def call(gw, path, stream=False, headers=()):
    fx, body = body_of(stream)
    return request(gw, "POST", path, json.dumps(body).encode(),
                   list(fx.headers) + list(headers))


def paths(emu):
    return [rec.path for rec in emu.requests]


@pytest.mark.parametrize("setup", sorted(SETUPS))
@pytest.mark.parametrize("stream", [True, False], ids=["sse", "json"])
def test_calls_go_where_plain_proxy_goes(emulator, internal, gateway, setup,
                                         stream):
    emulator.profile = "proxy"
    emulator.script = searcher("memory create entities")
    gw = routed(gateway, internal, setup)

    plain = call(gw, "/plain/v1/messages?beta=true", stream)
    assert plain.status == 200, plain.body
    want = paths(emulator)
    assert len(want) == 1
    emulator.reset()

    r = call(gw, "/anthropic/v1/messages?beta=true", stream)
    assert r.status == 200, r.body
    assert r.decision == "deferred_gateway"
    msg = message_of(r, stream)
    assert [b["type"] for b in msg["content"]][-1] == "tool_use"

    # the search and the call after it: both where plain proxy went
    assert paths(emulator) == want * 2
    assert internal.requests == []


@pytest.mark.parametrize("setup", sorted(SETUPS))
def test_calls_never_reach_a_denied_location(emulator, internal, gateway,
                                             setup):
    emulator.profile = "proxy"
    emulator.script = searcher("memory create entities")
    gw = routed(gateway, internal, setup)
    key = ("x-api-key", "sk-test-secret")
    route = ("x-route", "admin")

    plain = call(gw, "/plain/internal/admin", headers=[key, route])
    r = call(gw, "/anthropic/internal/admin", headers=[key, route])

    # plain proxy's answer, from the API upstream; the denied backend
    # never hears of the client's body nor its key
    assert internal.requests == []
    assert r.status == plain.status
    assert len(emulator.requests) >= 2
    assert len({rec.path for rec in emulator.requests}) == 1


def test_upstream_status_lists_every_call(emulator, gateway):
    """$upstream_status and its kin list each call of the loop as nginx
    lists the upstreams of internal redirects: separated by " : "."""
    emulator.profile = "proxy"
    emulator.script = searcher("memory create entities")
    gw = gateway(http="log_format calls '$uri $status up=$upstream_status "
                      "time=$upstream_response_time';",
                 server="toolsearch on; toolsearch_upstream compatible; "
                        "access_log calls.log calls;")

    r = call(gw, "/v1/messages?beta=true")
    assert r.status == 200, r.body
    assert r.decision == "deferred_gateway"
    assert len(emulator.requests) == 2

    gw.stop()
    line = gw.read("calls.log").splitlines()[-1]
    fields = dict(kv.split("=", 1) for kv in line.split() if "=" in kv)
    assert line.startswith("/v1/messages 200 ")
    assert line.split("up=")[1].split(" time=")[0] == "200 : 200"
    assert len(line.split("time=")[1].split(" : ")) == 2, fields
