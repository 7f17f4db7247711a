"""Gateway-executed search: a real nginx with the module in front of the
emulator playing a model that searches, then calls what it found.  The
client sees one assistant message; the upstream sees ordinary tool turns."""

import json

import pytest

from conftest import load_fixture, request
from emulator import ApiError, Reply, text, tool_use

TARGET = "mcp__memory__create_entities"
SEARCH = "toolsearch on; toolsearch_upstream compatible; %s"


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
        names = {t["name"] for t in req.get("tools", [])}
        if search_result_of(req["messages"]):
            if TARGET in names:
                return then or Reply([text("Found it."), tool_use(
                    TARGET, {"entities": []}, "toolu_target")])
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

    assert [b["type"] for b in msg["content"]] == [
        "server_tool_use", "tool_search_tool_result"] * 2
    assert all(b["content"]["tool_references"] == []
               for b in msg["content"][1::2])
    assert msg["stop_reason"] == "pause_turn"
    assert len(emulator.requests) == 2
    said = emulator.requests[1].json()["messages"][-1]["content"][0]
    assert said["content"].startswith("No tool matched.")


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


@pytest.mark.parametrize("stream", [True, False], ids=["sse", "json"])
def test_upstream_error_during_the_loop(emulator, gateway, stream):
    emulator.profile = "proxy"
    answers = [Reply([tool_use("tool_search", {"query": "memory"},
                               "toolu_search1")]),
               ApiError("Overloaded", 529, "overloaded_error")]
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
        assert r.status == 529
        assert json.loads(r.body)["error"]["type"] == "overloaded_error"


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
