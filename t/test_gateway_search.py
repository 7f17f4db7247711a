"""Gateway-executed search: a real nginx with the module in front of the
emulator playing a model that searches, then calls what it found.  The
client sees one assistant message; the upstream sees ordinary tool turns."""

import json
import socket
import time

import pytest

from conftest import load_fixture, request
from emulator import ApiError, Raw, Reply, call_of, sse, text, tool_use

TARGET = "mcp__memory__create_entities"
# found tools join tools[] here (toolsearch_found_tools tools); the call
# wrapper, the default, is t/test_wrapper.py's
SEARCH = ("toolsearch on; toolsearch_upstream compatible; "
          "toolsearch_search_blocks keep; toolsearch_found_tools tools; %s")


def gateway_for(gateway, extra=""):
    return gateway(server=SEARCH % extra)


def body_of(stream, name="ts-unset/002.json"):
    fx = load_fixture(name)
    body = json.loads(fx.body)
    body["stream"] = stream
    return fx, body


def send(gw, fx, body):
    return request(gw, "POST", fx.url, json.dumps(body).encode(), fx.headers)


def search_result_of(msgs):
    """The tool_result the gateway wrote for the last search, if any."""
    last = msgs[-1]
    if last["role"] != "user" or not isinstance(last["content"], list):
        return None
    for b in last["content"]:
        if b.get("type") == "tool_result" and \
                str(b.get("tool_use_id", "")).startswith("toolu_search"):
            return b
    return None


def searcher(query, then=None):
    """A model that searches once, then calls TARGET if it was loaded."""
    def model(req):
        if search_result_of(req["messages"]):
            call = call_of(req, TARGET, {"entities": []}, "toolu_target")
            if call:
                return then or Reply([text("Found it."), call])
            return Reply([text("Nothing found.")])
        last = req["messages"][-1]
        if last["role"] == "user" and isinstance(last["content"], list) \
                and last["content"][0].get("type") == "tool_result":
            return Reply([text("done")])
        return Reply([text("Let me search."),
                      tool_use("tool_search", {"query": query},
                               "toolu_search1")])
    return model


def events(body):
    out = []
    for chunk in body.decode().split("\n\n"):
        data = [line[6:] for line in chunk.split("\n")
                if line.startswith("data: ")]
        if data:
            out.append(json.loads(data[0]))
    return out


def message_of(r, stream):
    """The client's assistant message, rebuilt from SSE like an SDK."""
    if not stream:
        return json.loads(r.body)
    evs = events(r.body)
    kinds = [e["type"] for e in evs]
    assert kinds.count("message_start") == 1
    assert kinds.count("message_stop") == 1 and kinds[-1] == "message_stop"
    msg = evs[0]["message"]
    blocks, partial = {}, {}
    for e in evs:
        if e["type"] == "content_block_start":
            assert e["index"] == len(blocks), "indexes must be contiguous"
            blocks[e["index"]] = dict(e["content_block"])
        elif e["type"] == "content_block_delta":
            d, b = e["delta"], blocks[e["index"]]
            if d["type"] == "text_delta":
                b["text"] += d["text"]
            elif d["type"] == "input_json_delta":
                partial[e["index"]] = partial.get(e["index"], "") + \
                    d["partial_json"]
        elif e["type"] == "message_delta":
            msg["stop_reason"] = e["delta"]["stop_reason"]
            msg["usage"].update(e["usage"])
    for i, p in partial.items():
        blocks[i]["input"] = json.loads(p)
    msg["content"] = [blocks[i] for i in range(len(blocks))]
    return msg


def add_next_turn(body, msg):
    """The client's next turn: the answer, then the called tool's result."""
    body["messages"] += [
        {"role": "assistant", "content": msg["content"]},
        {"role": "user", "content": [{"type": "tool_result",
                                      "tool_use_id": "toolu_target",
                                      "content": "created"}]}]


def log_fields(gw):
    gw.stop()
    line = gw.access_log()[-1]
    return dict(kv.split("=", 1) for kv in line.split() if "=" in kv)


@pytest.mark.parametrize("stream", [True, False], ids=["sse", "json"])
def test_search_then_call_the_found_tool(emulator, gateway, stream):
    emulator.profile = "proxy"
    emulator.script = searcher("memory create entities")
    gw = gateway_for(gateway)
    fx, body = body_of(stream)

    r = send(gw, fx, body)
    assert r.status == 200, r.body
    assert r.decision == "deferred_gateway"
    msg = message_of(r, stream)

    # one message: the search as the hosted blocks, then the call
    kinds = [b["type"] for b in msg["content"]]
    assert kinds == ["text", "server_tool_use", "tool_search_tool_result",
                     "text", "tool_use"]
    call, result = msg["content"][1], msg["content"][2]
    assert call["name"] == "tool_search"
    assert call["input"] == {"query": "memory create entities"}
    assert result["tool_use_id"] == call["id"]
    refs = [t["tool_name"] for t in result["content"]["tool_references"]]
    assert TARGET in refs
    assert msg["content"][4]["name"] == TARGET
    assert msg["stop_reason"] == "tool_use"

    # the upstream saw two ordinary calls, and accepted both
    first, second = emulator.requests
    assert first.status == second.status == 200
    names1 = {t["name"] for t in first.json()["tools"]}
    names2 = {t["name"] for t in second.json()["tools"]}
    assert "tool_search" in names1 and TARGET not in names1
    assert TARGET in names2 and set(refs) <= names2
    assert b"server_tool_use" not in second.body
    turns = second.json()["messages"][-2:]
    assert turns[0]["content"][-1]["name"] == "tool_search"
    assert turns[1]["content"][0]["content"].startswith("Loaded: ")

    # usage: both calls summed (the emulator counts body bytes / 4)
    assert msg["usage"]["input_tokens"] == sum(
        max(1, len(q.body) // 4) for q in (first, second))
    assert msg["usage"]["output_tokens"] == 20
    assert msg["usage"]["server_tool_use"]["tool_search_requests"] == 1

    log = log_fields(gw)
    assert log["searches"] == "1" and int(log["loaded"]) == len(refs)


def test_next_turn_on_another_replica(emulator, gateway):
    emulator.profile = "proxy"
    emulator.script = searcher("memory create entities")
    fx, body = body_of(True)
    gw1 = gateway_for(gateway)
    msg = message_of(send(gw1, fx, body), True)

    # the client carries the message back with its tool's result
    body["messages"] += [
        {"role": "assistant", "content": msg["content"]},
        {"role": "user", "content": [{"type": "tool_result",
                                      "tool_use_id": "toolu_target",
                                      "content": "created"}]}]
    gw2 = gateway_for(gateway)
    emulator.reset()
    r = send(gw2, fx, body)
    assert r.status == 200, r.body
    got = emulator.last()
    assert got.status == 200, got.error
    sent = got.json()
    assert TARGET in {t["name"] for t in sent["tools"]}
    assert b"server_tool_use" not in got.body
    assert b"tool_search_tool_result" not in got.body
    roles = [m["role"] for m in sent["messages"][-4:]]
    assert roles == ["assistant", "user", "assistant", "user"]
    assert message_of(r, True)["content"][0]["text"] == "done"


def test_no_match_and_the_search_budget(emulator, gateway):
    emulator.profile = "proxy"

    def model(req):
        return Reply([tool_use("tool_search", {"query": "qqqzzz xyzzy"},
                               "toolu_search%d" % len(req["messages"]))])
    emulator.script = model
    gw = gateway_for(gateway, "toolsearch_max_searches 2;")
    fx, body = body_of(True)
    msg = message_of(send(gw, fx, body), True)

    # the two searches the budget allows run, and the model reads what
    # each found (the last too); the third is past it: shown with its
    # error, and the message pauses
    assert [b["type"] for b in msg["content"]] == [
        "server_tool_use", "tool_search_tool_result"] * 3
    assert all(b["content"]["tool_references"] == []
               for b in msg["content"][1:5:2])
    assert msg["content"][5]["content"]["error_code"] == "too_many_requests"
    assert msg["stop_reason"] == "pause_turn"
    assert len(emulator.requests) == 3
    for rec in emulator.requests[1:]:
        said = rec.json()["messages"][-1]["content"][0]
        assert said["content"].startswith("No tool matched.")


@pytest.mark.parametrize("stream", [False, True])
def test_the_last_search_the_budget_allows_is_read(emulator, gateway,
                                                   stream):
    """The search that reaches toolsearch_max_searches runs and the
    model reads what it found: it calls the tool in the same client
    request, with no pause_turn (a client such as the AI SDK maps
    pause_turn to a finished turn, and with strip it would hold nothing
    of the search)."""
    emulator.profile = "proxy"

    def model(req):
        if search_result_of(req["messages"]):
            return Reply([call_of(req, TARGET, {"entities": []},
                                  "toolu_target")])
        return Reply([tool_use("tool_search", {"query": "select:" + TARGET},
                               "toolu_search1")])
    emulator.script = model
    gw = gateway_for(gateway, "toolsearch_max_searches 1;")
    fx, body = body_of(stream)
    msg = message_of(send(gw, fx, body), stream)
    assert msg["stop_reason"] == "tool_use"
    assert msg["content"][-1]["type"] == "tool_use"
    assert msg["content"][-1]["name"] == TARGET
    assert len(emulator.requests) == 2


def servers_of(tools):
    """'github (26 tools), memory (9 tools)': the MCP servers of a
    request's tools, by name, as a search that found nothing lists them"""
    count = {}
    for t in tools:
        if t["name"].startswith("mcp__") and "__" in t["name"][5:]:
            server = t["name"][5:].split("__", 1)[0]
            count[server] = count.get(server, 0) + 1
    return ", ".join("%s (%d tool%s)" % (s, n, "" if n == 1 else "s")
                     for s, n in sorted(count.items()))


def test_no_match_lists_the_servers_the_same_every_turn(emulator, gateway):
    """A search that finds nothing answers with the MCP servers and their
    numbers of tools, and the next turn replays that answer unchanged
    (the upstream's prompt cache)."""
    emulator.profile = "proxy"

    def model(req):
        if search_result_of(req["messages"]):
            return Reply([text("Nothing there.")])
        return Reply([tool_use("tool_search", {"query": "qqqzzz xyzzy"},
                               "toolu_search1")])
    emulator.script = model
    gw = gateway_for(gateway)
    fx, body = body_of(True)
    msg = message_of(send(gw, fx, body), True)
    assert [q.status for q in emulator.requests] == [200, 200]
    said = search_result_of(emulator.requests[1].json()["messages"])
    servers = servers_of(body["tools"])
    assert "memory (9 tools)" in servers and "postgres (1 tool)" in servers
    assert said["content"] == (
        "No tool matched. The tools come from these MCP servers: %s. Search"
        " again with a server's name and what the tool does, or select: a"
        " name from the list in the system prompt." % servers)

    body["messages"] += [
        {"role": "assistant", "content": msg["content"]},
        {"role": "user", "content": "try again later"}]
    emulator.reset()
    assert send(gw, fx, body).status == 200
    got = emulator.requests[0]
    assert got.status == 200, got.error
    replayed = [b for m in got.json()["messages"] if m["role"] == "user"
                and isinstance(m["content"], list) for b in m["content"]
                if b.get("tool_use_id") == "toolu_search1"]
    assert replayed == [said]


def test_client_tool_and_search_in_one_answer(emulator, gateway):
    emulator.profile = "proxy"
    emulator.script = [Reply([
        tool_use("Read", {"file_path": "/etc/hosts"}, "toolu_read"),
        tool_use("tool_search", {"query": "select:" + TARGET},
                 "toolu_search1")])]
    gw = gateway_for(gateway)
    fx, body = body_of(True)
    msg = message_of(send(gw, fx, body), True)
    assert [b["type"] for b in msg["content"]] == [
        "tool_use", "server_tool_use", "tool_search_tool_result"]
    assert msg["stop_reason"] == "tool_use"
    assert len(emulator.requests) == 1


@pytest.mark.parametrize("stream,status,kind", [
    (True, 529, "overloaded_error"), (False, 529, "overloaded_error"),
    (True, 500, "api_error"), (False, 500, "api_error")],
    ids=["sse-529", "json-529", "sse-500", "json-500"])
def test_upstream_error_during_the_loop(emulator, gateway, stream, status,
                                        kind):
    emulator.profile = "proxy"
    answers = [Reply([tool_use("tool_search", {"query": "memory"},
                               "toolu_search1")]),
               ApiError("Internal", status, kind)]
    emulator.script = lambda req: answers.pop(0)
    gw = gateway_for(gateway)
    fx, body = body_of(stream)
    r = send(gw, fx, body)
    if stream:
        assert r.status == 200
        evs = events(r.body)
        assert evs[-1]["type"] == "error"
        assert not any(e["type"] == "message_stop" for e in evs)
    else:
        assert r.status == status
        assert json.loads(r.body)["error"]["type"] == kind


def test_a_request_that_never_searches_streams_unchanged(emulator, gateway):
    emulator.profile = "proxy"
    emulator.script = [Reply([text("Just text.")])]
    gw = gateway_for(gateway)
    fx, body = body_of(True)
    r = send(gw, fx, body)
    assert r.status == 200
    assert r.header("Content-Type").startswith("text/event-stream")
    msg = message_of(r, True)
    assert [b["type"] for b in msg["content"]] == ["text"]
    assert msg["stop_reason"] == "end_turn"
    assert len(emulator.requests) == 1


def test_hosted_profile_keeps_hosted_search(emulator, gateway):
    gw = gateway(server="toolsearch on; toolsearch_upstream anthropic;")
    fx, body = body_of(True)
    r = send(gw, fx, body)
    assert r.decision == "deferred_hosted"
    assert b"tool_search_tool_bm25" in emulator.last().body


def test_status_counts_the_loop(emulator, gateway):
    emulator.profile = "proxy"
    emulator.script = searcher("memory create entities")
    gw = gateway(http="toolsearch_zone ts 64k;",
                 server=SEARCH % "location = /status { toolsearch_status; }")

    def counters():
        return json.loads(request(gw, "GET", "/status").body)

    before = counters()
    fx, body = body_of(True)
    assert send(gw, fx, body).status == 200
    after = counters()
    moved = {k: after[k] - before[k] for k in
             ("gateway_searches", "search_misses", "loop_iterations",
              "pause_turns")}
    assert moved == {"gateway_searches": 1, "search_misses": 0,
                     "loop_iterations": 2, "pause_turns": 0}
    assert after["requests"]["deferred_gateway"] - \
        before["requests"]["deferred_gateway"] == 1


# (gateway profile, emulator profile, directives, found tools load as refs)
PROFILES = [
    ("anthropic", "anthropic", "toolsearch_search gateway;", True),
    ("compatible", "anthropic", "toolsearch_search gateway; "
     "toolsearch_upstream_tool_reference on;", True),
    ("vertex", "vertex", "toolsearch_search gateway; "
     "toolsearch_found_tools tools;", False),
    ("bedrock", "bedrock", "toolsearch_search gateway; "
     "toolsearch_found_tools tools;", False),
    ("compatible", "proxy", "toolsearch_found_tools tools;", False),
]


def tool_of(req, name):
    return next((t for t in req["tools"] if t.get("name") == name), None)


@pytest.mark.parametrize("upstream,profile,extra,refs", PROFILES,
                         ids=["anthropic", "compatible-refs", "vertex",
                              "bedrock", "compatible"])
def test_every_profile_two_turns(emulator, gateway, upstream, profile,
                                 extra, refs):
    emulator.profile = profile
    emulator.script = searcher("memory create entities")
    server = ("toolsearch on; toolsearch_upstream %s; "
              "toolsearch_search_blocks keep; %s" % (upstream, extra))
    fx, body = body_of(True)
    r = send(gateway(server=server), fx, body)
    assert r.status == 200, r.body
    assert r.decision == "deferred_gateway"
    msg = message_of(r, True)
    assert msg["content"][-1]["name"] == TARGET
    assert [q.status for q in emulator.requests] == [200, 200], \
        [q.error for q in emulator.requests]

    # refs: the found tool travels deferred and the result references it
    second = emulator.requests[1]
    target = tool_of(second.json(), TARGET)
    result = second.json()["messages"][-1]["content"]
    if refs:
        assert target.get("defer_loading") is True
        assert result[0]["content"][0] == {"type": "tool_reference",
                                           "tool_name": TARGET}
        assert result[-1] == {"type": "text", "text": "Tool loaded."}
    else:
        assert "defer_loading" not in target
        assert b"tool_reference" not in second.body
        assert result[0]["content"].startswith("Loaded: ")

    # turn 2, on another nginx: the same form, accepted upstream
    add_next_turn(body, msg)
    emulator.reset()
    r = send(gateway(server=server), fx, body)
    assert r.status == 200, r.body
    got = emulator.last()
    assert got.status == 200, got.error
    assert (b"tool_reference" in got.body) == refs
    assert (tool_of(got.json(), TARGET).get("defer_loading") is True) == refs
    assert message_of(r, True)["content"][0]["text"] == "done"


@pytest.mark.parametrize("stream", [True, False], ids=["sse", "json"])
def test_a_call_of_a_tool_never_loaded_is_an_implicit_select(
        emulator, gateway, stream):
    emulator.profile = "proxy"

    def model(req):
        if tool_of(req, TARGET) is None:
            return Reply([tool_use(TARGET, {"entities": []}, "toolu_early")])
        return Reply([tool_use(TARGET, {"entities": []}, "toolu_target")])
    emulator.script = model
    fx, body = body_of(stream)
    r = send(gateway_for(gateway), fx, body)
    assert r.status == 200, r.body
    msg = message_of(r, stream)

    # the early call shows as a select: of the tool, then the real call
    assert [b["type"] for b in msg["content"]] == [
        "server_tool_use", "tool_search_tool_result", "tool_use"]
    assert msg["content"][0]["input"] == {"query": "select:" + TARGET}
    refs = msg["content"][1]["content"]["tool_references"]
    assert refs == [{"type": "tool_reference", "tool_name": TARGET}]
    assert msg["content"][2]["id"] == "toolu_target"

    # upstream: the early call became a search call with its answer
    first, second = emulator.requests
    assert second.status == 200, second.error
    turns = second.json()["messages"][-2:]
    assert turns[0]["content"][-1]["id"] == "toolu_early"
    assert turns[0]["content"][-1]["name"] == "tool_search"
    assert turns[1]["content"][0]["content"].startswith("Loaded: " + TARGET)


def search_events(call_id):
    """A streamed answer that calls the search tool."""
    start = {"type": "message_start", "message": {
        "id": "msg_raw", "type": "message", "role": "assistant",
        "model": "m", "content": [], "stop_reason": None,
        "usage": {"input_tokens": 5, "output_tokens": 1}}}
    block = {"type": "tool_use", "id": call_id, "name": "tool_search",
             "input": {}}
    return "".join([
        sse("message_start", start),
        sse("content_block_start", {"type": "content_block_start",
                                    "index": 0, "content_block": block}),
        sse("content_block_delta", {
            "type": "content_block_delta", "index": 0,
            "delta": {"type": "input_json_delta",
                      "partial_json": json.dumps({"query": "memory"})}}),
        sse("content_block_stop", {"type": "content_block_stop",
                                   "index": 0}),
        sse("message_delta", {"type": "message_delta",
                              "delta": {"stop_reason": "tool_use"},
                              "usage": {"output_tokens": 3}}),
        sse("message_stop", {"type": "message_stop"})]).encode()


def pieces(data, size):
    return [data[i:i + size] for i in range(0, len(data), size)]


BROKEN = [
    # an event whose data is not JSON
    b"event: message_start\ndata: {\"type\":\"message_start\",\n\n",
    # a stream cut off inside an event
    b"event: message_start\ndata: {\"type\":\"message_st",
    # a block delta for a block that never started
    b"event: content_block_delta\ndata: {\"type\":\"content_block_delta\","
    b"\"index\":7,\"delta\":{\"type\":\"text_delta\",\"text\":\"x\"}}\n\n",
]


@pytest.mark.parametrize("broken", BROKEN,
                         ids=["not-json", "cut-off", "unknown-block"])
def test_malformed_sse_mid_loop_ends_the_stream(emulator, gateway, broken):
    emulator.profile = "proxy"
    answers = [Raw(pieces(search_events("toolu_search1"), 40)),
               Raw(pieces(broken, 9))]
    emulator.script = lambda req: answers.pop(0)
    fx, body = body_of(True)
    gw = gateway_for(gateway)
    started = time.monotonic()
    r = send(gw, fx, body)
    assert time.monotonic() - started < 10
    assert r.status == 200

    # the client's stream ends: an error event after what it already got
    chunks = [c for c in r.body.decode().split("\n\n") if c.strip()]
    assert chunks[0].startswith("event: message_start")
    assert "server_tool_use" in r.body.decode()
    assert chunks[-1].startswith("event: error"), chunks[-1]
    assert len(emulator.requests) == 2

    # and the worker goes on serving
    emulator.script = [Reply([text("again")])]
    assert send(gw, fx, body).status == 200


@pytest.mark.parametrize("until", [b"message_start",
                                   b"tool_search_tool_result"],
                         ids=["first-call", "continuation"])
def test_client_gone_mid_stream(emulator, gateway, until):
    emulator.profile = "proxy"
    emulator.script = searcher("memory create entities")
    emulator.event_delay = 0.2
    fx, body = body_of(True)
    gw = gateway_for(gateway)
    raw = json.dumps(body).encode()

    # read the first bytes of the answer, then hang up
    with socket.create_connection(("127.0.0.1", gw.port), timeout=10) as c:
        head = "POST %s HTTP/1.1\r\nHost: 127.0.0.1\r\n" % fx.url
        for k, v in fx.headers:
            if k.lower() not in ("host", "content-length", "connection"):
                head += "%s: %s\r\n" % (k, v)
        head += "Content-Length: %d\r\n\r\n" % len(raw)
        c.sendall(head.encode() + raw)
        got = b""
        while until not in got:
            piece = c.recv(65536)
            assert piece, got
            got += piece
        c.setsockopt(socket.SOL_SOCKET, socket.SO_LINGER,
                     b"\x01\x00\x00\x00\x00\x00\x00\x00")

    # the loop stops: no call is left running, nothing hangs
    deadline = time.monotonic() + 8
    seen = -1
    while time.monotonic() < deadline and seen != len(emulator.requests):
        seen = len(emulator.requests)
        time.sleep(1.5)
    assert seen == len(emulator.requests) and seen <= 2

    emulator.event_delay = 0
    emulator.script = [Reply([text("still here")])]
    r = send(gw, fx, body)
    assert r.status == 200
    assert message_of(r, True)["content"][0]["text"] == "still here"
    gw.stop()
    assert "[alert]" not in gw.error_log() and \
        "exited on signal" not in gw.error_log()


def test_past_the_budget_the_model_gets_the_hint(emulator, gateway):
    emulator.profile = "proxy"
    emulator.script = [Reply([
        tool_use("tool_search", {"query": "memory"}, "toolu_search1"),
        tool_use(TARGET, {"entities": []}, "toolu_early")])]
    fx, body = body_of(True)
    gw = gateway_for(gateway, "toolsearch_max_searches 1;")
    msg = message_of(send(gw, fx, body), True)

    # the first search ran; the call past the budget did not
    assert [b["type"] for b in msg["content"]] == [
        "server_tool_use", "tool_search_tool_result"] * 2
    assert msg["stop_reason"] == "pause_turn"
    spent = msg["content"][3]["content"]
    assert spent["type"] == "tool_search_tool_result_error"
    assert spent["error_code"] == "too_many_requests"
    assert "schema was not sent" in spent["error_message"]
    assert "select:" + TARGET in spent["error_message"]
    assert len(emulator.requests) == 1

    # the next request carries the hint to the model as the call's result
    body["messages"].append({"role": "assistant",
                             "content": msg["content"]})
    emulator.reset()
    assert send(gw, fx, body).status == 200
    got = emulator.last()
    assert got.status == 200, got.error
    result = got.json()["messages"][-1]["content"][0]
    assert result["tool_use_id"] == "toolu_early" and result["is_error"]
    assert result["content"] == spent["error_message"]


def test_two_rounds_of_discovery(emulator, gateway):
    """The first search finds the wrong tools, the second the right one;
    every tool found stays loaded for the call that follows."""
    emulator.profile = "proxy"
    issue = "mcp__github__create_issue"

    def model(req):
        n = sum(1 for m in req["messages"] if m["role"] == "assistant")
        if n == 0:
            return Reply([tool_use("tool_search", {"query": "memory graph"},
                                   "toolu_search1")])
        if n == 1:
            return Reply([tool_use("tool_search",
                                   {"query": "+github create issue"},
                                   "toolu_search2")])
        return Reply([tool_use(issue, {"title": "bug"}, "toolu_issue")])
    emulator.script = model
    fx, body = body_of(False)
    r = send(gateway_for(gateway), fx, body)
    assert r.status == 200, r.body
    msg = message_of(r, False)
    assert [b["type"] for b in msg["content"]] == [
        "server_tool_use", "tool_search_tool_result"] * 2 + ["tool_use"]
    second = [t["tool_name"] for t in
              msg["content"][3]["content"]["tool_references"]]
    assert second[0] == issue
    assert msg["content"][4]["name"] == issue
    assert msg["usage"]["server_tool_use"]["tool_search_requests"] == 2

    # the third call carries what both rounds found
    assert [q.status for q in emulator.requests] == [200, 200, 200]
    names = {t["name"] for t in emulator.requests[2].json()["tools"]}
    assert TARGET in names and issue in names


AUDIT = "location = /audit { internal; proxy_pass http://emulator/audit; }"


@pytest.mark.parametrize("extra,decision", [
    ("toolsearch_defer off;", "standard_mode"),
    ("toolsearch_upstream_tool_reference on;", "deferred_hosted"),
    ("", "deferred_gateway")], ids=["plain", "hosted", "gateway"])
def test_mirror_runs_on_every_path(emulator, gateway, extra, decision):
    """A mirror of the location gets its copy whatever the module decides:
    the body the upstream got (its first call, for gateway search)."""
    emulator.profile = "anthropic" if "reference" in extra else "proxy"
    emulator.script = [Reply([text("Just text.")])]
    gw = gateway(server=SEARCH % extra + AUDIT, location="mirror /audit;")
    fx, body = body_of(False)
    raw = json.dumps(body).encode()
    r = request(gw, "POST", fx.url, raw, fx.headers)
    assert r.status == 200 and r.decision == decision
    assert emulator.wait_for(2)
    audit = [q for q in emulator.requests if q.path.startswith("/audit")]
    calls = [q for q in emulator.requests if q not in audit]
    assert len(audit) == 1 and audit[0].body == calls[0].body


@pytest.mark.parametrize("extra,decision", [
    ("toolsearch_defer off;", "standard_mode"),
    ("", "deferred_gateway")], ids=["plain", "gateway"])
def test_the_uri_travels_as_the_client_wrote_it(emulator, gateway, extra,
                                                decision):
    emulator.profile = "proxy"
    gw = gateway(server=SEARCH % extra)
    fx, body = body_of(False)
    path = "/v1/messages%2F..%2F..%2Fadmin?beta=true"
    r = request(gw, "POST", path, json.dumps(body).encode(), fx.headers)
    assert r.decision == decision
    assert [q.path for q in emulator.requests] == [path]


@pytest.mark.parametrize("stream", [True, False], ids=["sse", "json"])
def test_search_blocks_stripped_by_default(emulator, gateway, stream):
    """toolsearch_search_blocks strip (the default for a client without a
    profile; the profiles are off for the recorded Claude Code here): the
    gateway's searches stay inside it, the client gets the final content
    only, and its next turn loads the tool it called."""
    emulator.profile = "proxy"
    emulator.script = searcher("memory create entities")
    gw = gateway(server="toolsearch on; toolsearch_upstream compatible; "
                 "toolsearch_client_profiles off; "
                 "toolsearch_found_tools tools;")
    fx, body = body_of(stream)
    r = send(gw, fx, body)
    assert r.status == 200 and r.decision == "deferred_gateway"
    msg = message_of(r, stream)
    assert [b["type"] for b in msg["content"]] == ["text", "text",
                                                   "tool_use"]
    assert msg["content"][2]["name"] == TARGET
    assert b"tool_search_tool_result" not in r.body
    assert msg["usage"]["output_tokens"] == 20

    add_next_turn(body, msg)
    emulator.reset()
    emulator.script = [Reply([text("done")])]
    r = send(gw, fx, body)
    assert r.status == 200, r.body
    assert tool_of(emulator.requests[0].json(), TARGET) is not None


@pytest.mark.parametrize("blocks", ["keep", "strip"])
def test_another_search_tools_blocks_in_history(emulator, gateway, blocks):
    """History carries the search blocks of another search tool (what a
    location with the default name gave the client with keep): a location
    with toolsearch_tool_name find_tools turns them into its own calls, so
    the upstream accepts the turn and the tools they found stay loaded."""
    emulator.profile = "proxy"
    emulator.script = searcher("memory create entities")
    fx, body = body_of(True)
    msg = message_of(send(gateway_for(gateway), fx, body), True)
    assert msg["content"][1]["type"] == "server_tool_use"
    assert msg["content"][1]["name"] == "tool_search"
    add_next_turn(body, msg)

    renamed = gateway(server="toolsearch on; toolsearch_upstream compatible; "
                             "toolsearch_search_blocks %s; "
                             "toolsearch_found_tools tools; "
                             "toolsearch_tool_name find_tools;" % blocks)
    emulator.reset()
    r = send(renamed, fx, body)
    assert r.status == 200, r.body
    assert r.decision == "deferred_gateway"
    got = emulator.last()
    assert got.status == 200, got.error
    sent = got.json()
    assert b"server_tool_use" not in got.body
    assert b"tool_search_tool_result" not in got.body
    names = [t["name"] for t in sent["tools"]]
    assert "find_tools" in names and "tool_search" not in names
    assert TARGET in names
    calls = [b for m in sent["messages"] if m["role"] == "assistant"
             and isinstance(m["content"], list) for b in m["content"]
             if b.get("type") == "tool_use"]
    assert [c["name"] for c in calls] == ["find_tools", TARGET]
    assert message_of(r, True)["content"][0]["text"] == "done"


def bad_searcher(tool_input):
    """A model that calls the search tool with an input that is no object
    with a query, then answers once it has a result."""
    def model(req):
        last = req["messages"][-1]
        if last["role"] == "user" and isinstance(last["content"], list) \
                and last["content"][0].get("type") == "tool_result":
            return Reply([text("done")])
        return Reply([text("Let me search."),
                      tool_use("tool_search", tool_input, "toolu_search1")],
                     stop_reason="tool_use")
    return model


@pytest.mark.parametrize("stream", [True, False], ids=["sse", "json"])
@pytest.mark.parametrize("tool_input", [{"q": "memory"}, "memory",
                                        {"query": 7}],
                         ids=["no-query", "not-an-object", "query-number"])
def test_invalid_search_input_ends_with_pause_turn(emulator, gateway, stream,
                                                   tool_input):
    """A search call whose input is no object with a query does not run:
    the client gets it with an invalid_tool_input error and pause_turn,
    and the next turn tells the model why."""
    emulator.profile = "proxy"
    emulator.script = bad_searcher(tool_input)
    gw = gateway_for(gateway)
    fx, body = body_of(stream)
    r = send(gw, fx, body)
    assert r.status == 200, r.body
    msg = message_of(r, stream)
    assert len(emulator.requests) == 1
    assert msg["stop_reason"] == "pause_turn"
    assert [b["type"] for b in msg["content"]] == [
        "text", "server_tool_use", "tool_search_tool_result"]
    error = msg["content"][2]["content"]
    assert error["type"] == "tool_search_tool_result_error"
    assert error["error_code"] == "invalid_tool_input"

    # the client sends the message back: the model reads the error
    body["messages"].append({"role": "assistant", "content": msg["content"]})
    emulator.reset()
    r = send(gw, fx, body)
    assert r.status == 200, r.body
    sent = emulator.requests[0]
    assert sent.status == 200, sent.error
    result = sent.json()["messages"][-1]["content"][0]
    assert result["type"] == "tool_result" and result["is_error"] is True
    assert "not a JSON object with a query" in result["content"]


def with_event(stream, event, after=b"event: content_block_start"):
    """A stream with one more event before the first `after`."""
    at = stream.index(after)
    return stream[:at] + event + stream[at:]


@pytest.mark.parametrize("broken", [BROKEN[0], BROKEN[2]],
                         ids=["not-json", "unknown-block"])
def test_malformed_event_in_a_whole_later_call(emulator, gateway, broken):
    """A later call's answer that is complete but has an event the loop
    cannot place: the client's stream ends with an error event after the
    events so far, and no further call is made though the answer
    searches again."""
    emulator.profile = "proxy"
    answers = [Raw([search_events("toolu_search1")]),
               Raw([with_event(search_events("toolu_search2"), broken)])]
    emulator.script = lambda req: answers.pop(0) if answers else \
        Reply([text("a third call")])
    fx, body = body_of(True)
    r = send(gateway_for(gateway), fx, body)
    assert r.status == 200
    assert len(emulator.requests) == 2
    chunks = [c for c in r.body.decode().split("\n\n") if c.strip()]
    assert chunks[-1].startswith("event: error"), chunks[-1]
    assert "could not read the upstream's answer" in chunks[-1]
    assert "message_stop" not in r.body.decode()
    assert b"not json" not in r.body and b"orphan" not in r.body
    assert b'"index":7' not in r.body


@pytest.mark.parametrize("blocks", ["keep", "strip"])
def test_an_event_over_4mb_in_the_search_call(emulator, gateway, blocks):
    """One SSE event over the 4 MB limit inside the search call: the
    client gets the events so far and an error event; never a delta of a
    block it was not given, nor the search blocks strip keeps inside."""
    emulator.profile = "proxy"
    huge = json.dumps({"query": "memory " + "x" * (5 << 20)})
    stream = search_events("toolu_search1").replace(
        json.dumps(json.dumps({"query": "memory"})).encode(),
        json.dumps(huge).encode())
    emulator.script = [Raw([stream[i:i + 65536]
                            for i in range(0, len(stream), 65536)])]
    gw = gateway(server="toolsearch on; toolsearch_upstream compatible; "
                        "toolsearch_search_blocks %s;" % blocks)
    fx, body = body_of(True)
    r = send(gw, fx, body)
    assert r.status == 200
    assert len(emulator.requests) == 1
    text_ = r.body.decode()
    chunks = [c for c in text_.split("\n\n") if c.strip()]
    assert chunks[0].startswith("event: message_start")
    assert chunks[-1].startswith("event: error"), chunks[-1][:200]
    assert "could not read the upstream's answer" in chunks[-1]
    assert "content_block_delta" not in text_
    assert "server_tool_use" not in text_ and "pause_turn" not in text_
    assert "message_stop" not in text_
    assert len(r.body) < 100000
