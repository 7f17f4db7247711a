"""Gateway search's call wrapper (toolsearch_found_tools wrapper, the
default where found tools cannot load as references): a real nginx with
the module in front of the strict emulator playing a model that searches,
reads the found definition in the search's text result and calls it
through call_tool.  tools[] never changes; the client sees an ordinary
call of its own tool; its next turn's history goes upstream as the loop
sent it, so no request after the first breaks the prompt cache."""

import json

import pytest

import billing
from conftest import load_fixture, request
from emulator import Reply, call_of, text, tool_use
from test_gateway_search import (TARGET, add_next_turn, body_of, log_fields,
                                 message_of, search_result_of, send)

COMPATIBLE = "toolsearch on; toolsearch_upstream compatible; "
GOOD = {"entities": []}


def wrapped(name, arguments, id_):
    return tool_use("call_tool", {"name": name, "arguments": arguments}, id_)


def results_of(req):
    return {b["tool_use_id"]: b for m in req["messages"]
            if isinstance(m["content"], list) for b in m["content"]
            if b.get("type") == "tool_result"}


def model(first_call=None, query="select:" + TARGET):
    """Searches, then calls TARGET as first_call(req) says (through the
    wrapper by default); once that call was answered with an error, calls
    it through the wrapper with valid arguments."""
    def answer(req):
        results = results_of(req)
        if "toolu_target" in results:
            return Reply([text("done")])
        if "toolu_bad" in results:
            return Reply([text("Again."), wrapped(TARGET, GOOD,
                                                  "toolu_target")])
        if search_result_of(req["messages"]):
            if first_call:
                return Reply([text("Calling.")] + first_call(req))
            return Reply([text("Calling."), call_of(
                req, TARGET, GOOD, "toolu_target")])
        return Reply([text("Searching."), tool_use(
            "tool_search", {"query": query}, "toolu_search1")])
    return answer


def fixed_tools(requests):
    """the one tools[] every upstream request sent"""
    tools = {billing.compact(q.json()["tools"]) for q in requests}
    assert len(tools) == 1
    return json.loads(tools.pop())


@pytest.mark.parametrize("stream", [True, False], ids=["sse", "json"])
def test_search_then_call_through_the_wrapper(emulator, gateway, stream):
    emulator.profile = "proxy"
    emulator.script = model()
    gw = gateway(server=COMPATIBLE + "toolsearch_search_blocks keep;")
    fx, body = body_of(stream)

    r = send(gw, fx, body)
    assert r.status == 200, r.body
    msg = message_of(r, stream)

    # the client: the search's blocks, then a call of its own tool, with
    # the wrapper call's id and the arguments as its input
    assert [b["type"] for b in msg["content"]] == [
        "text", "server_tool_use", "tool_search_tool_result", "text",
        "tool_use"]
    call = msg["content"][4]
    assert call == {"type": "tool_use", "id": "toolu_target",
                    "name": TARGET, "input": GOOD}
    assert msg["stop_reason"] == "tool_use"
    assert b"call_tool" not in r.body

    # the upstream: one tools[] on both calls, the wrapper after the
    # search tool, no found tool; the definition in the search's result
    first, second = emulator.requests
    assert first.status == second.status == 200
    tools = fixed_tools(emulator.requests)
    names = [t["name"] for t in tools]
    assert names[-2:] == ["tool_search", "call_tool"]
    assert TARGET not in names
    assert tools[-1]["cache_control"] == {"type": "ephemeral"}
    result = search_result_of(second.json()["messages"])["content"]
    assert result.startswith("Loaded: " + TARGET + ". ")
    definition = next(t for t in json.loads(fx.body)["tools"]
                      if t["name"] == TARGET)
    assert ("\n\nTool: %s\nDescription: %s\nInput schema: "
            % (TARGET, definition["description"])) in result
    schema = result.split("Input schema: ", 1)[1].split("\n\nTool: ")[0]
    assert json.loads(schema) == definition["input_schema"]

    log = log_fields(gw)
    assert log["found"] == "wrapper" and log["searches"] == "1"


@pytest.mark.parametrize("stream", [True, False], ids=["sse", "json"])
@pytest.mark.parametrize("bad,why", [
    (wrapped(TARGET, {}, "toolu_bad"), "\\\"entities\\\" is missing"),
    (wrapped(TARGET, {"entities": "Alice"}, "toolu_bad"),
     "\\\"entities\\\" is not of the type"),
    (wrapped("mcp__nowhere__nothing", {}, "toolu_bad"), "no tool is named"),
    (tool_use("call_tool", {"tool": TARGET}, "toolu_bad"),
     "an object with the tool's"),
], ids=["required", "type", "unknown", "shape"])
def test_invalid_call_is_answered_in_the_loop(emulator, gateway, stream,
                                              bad, why):
    emulator.profile = "proxy"
    emulator.script = model(lambda req: [bad])
    gw = gateway(server=COMPATIBLE)
    fx, body = body_of(stream)

    r = send(gw, fx, body)
    assert r.status == 200, r.body
    msg = message_of(r, stream)

    # the client never sees the invalid call, only the corrected one
    calls = [b for b in msg["content"] if b["type"] == "tool_use"]
    assert calls == [{"type": "tool_use", "id": "toolu_target",
                      "name": TARGET, "input": GOOD}]
    assert b"toolu_bad" not in r.body

    # the model read why, as the invalid call's error result
    assert len(emulator.requests) == 3
    assert all(q.status == 200 for q in emulator.requests)
    third = emulator.requests[2].json()
    refused = results_of(third)["toolu_bad"]
    assert refused["is_error"] is True
    assert json.dumps(refused["content"]).find(why) >= 0, \
        refused["content"]
    assert third["messages"][-2]["content"][-1]["name"] == "call_tool"
    fixed_tools(emulator.requests)


def test_invalid_call_past_the_budget_reaches_the_client(emulator, gateway):
    """Invalid calls are answered in the loop while toolsearch_max_searches
    allows (as many as searches); past it the loop cannot answer: the
    call goes to the client as a call of its tool, whose own check then
    answers it, and nothing the client could run is dropped."""
    emulator.profile = "proxy"

    def stubborn(req):
        if not search_result_of(req["messages"]) and len(req["messages"]) \
                <= len(json.loads(fx.body)["messages"]):
            return Reply([tool_use("tool_search", {"query": "select:" +
                                                   TARGET}, "toolu_s")])
        bad = sum(1 for k in results_of(req) if k.startswith("toolu_bad"))
        return Reply([wrapped(TARGET, {}, "toolu_bad%d" % bad)])
    emulator.script = stubborn
    gw = gateway(server=COMPATIBLE + "toolsearch_max_searches 2;")
    fx, body = body_of(False)
    msg = message_of(send(gw, fx, body), False)
    assert [b for b in msg["content"] if b["type"] == "tool_use"] == [
        {"type": "tool_use", "id": "toolu_bad2", "name": TARGET,
         "input": {}}]
    assert msg["stop_reason"] == "tool_use"
    assert len(emulator.requests) == 4
    assert all(q.status == 200 for q in emulator.requests)


def test_direct_call_of_a_found_tool_reaches_the_client(emulator, gateway):
    emulator.profile = "proxy"
    emulator.script = model(lambda req: [
        tool_use(TARGET, GOOD, "toolu_target")])
    gw = gateway(server=COMPATIBLE)
    fx, body = body_of(True)
    msg = message_of(send(gw, fx, body), True)
    assert msg["content"][-1] == {"type": "tool_use", "id": "toolu_target",
                                  "name": TARGET, "input": GOOD}
    # no implicit select: of a tool the search found
    assert len(emulator.requests) == 2


def test_client_tool_named_like_the_wrapper(emulator, gateway):
    """A client tool named call_tool: found tools load as tools, as with
    toolsearch_found_tools tools, and the client's tool stays its own."""
    emulator.profile = "proxy"
    emulator.script = model()
    gw = gateway(server=COMPATIBLE)
    fx, body = body_of(False)
    mine = {"name": "call_tool", "description": "The client's own.",
            "input_schema": {"type": "object", "properties": {}}}
    body["tools"].append(mine)
    msg = message_of(send(gw, fx, body), False)
    assert msg["content"][-1]["name"] == TARGET

    second = emulator.requests[1].json()
    names = [t["name"] for t in second["tools"]]
    assert names.count("call_tool") == 1
    assert mine in second["tools"]
    assert names.index(TARGET) > names.index("tool_search")
    assert log_fields(gw)["found"] == "tools"


def test_next_turns_send_the_prefix_the_loop_sent(emulator, gateway):
    """The client drops the search blocks (Claude Code's profile strips
    them): its next turn's call of TARGET goes upstream as the wrapper's
    call, after the search restored before it; every later turn sends the
    same bytes, and no request after the first breaks the cache."""
    emulator.profile = "proxy"
    emulator.script = model()
    gw = gateway(server=COMPATIBLE)
    fx = load_fixture("ts-unset/002.json")
    body = json.loads(fx.body)
    body["stream"] = False
    n = len(body["messages"])

    def turn():
        r = request(gw, "POST", fx.url, json.dumps(body).encode(),
                    fx.headers)
        assert r.status == 200, r.body
        return json.loads(r.body)

    msg = turn()
    assert [b["type"] for b in msg["content"]] == ["text", "text",
                                                   "tool_use"]
    add_next_turn(body, msg)
    emulator.script = [Reply([text("Reading."), tool_use(
        "Read", {"file_path": "/a"}, "toolu_read")]), Reply([text("done")])]
    msg2 = turn()
    body["messages"] += [
        {"role": "assistant", "content": msg2["content"]},
        {"role": "user", "content": [{"type": "tool_result",
                                      "tool_use_id": "toolu_read",
                                      "content": "a"}]}]
    turn()

    sent = [q.json() for q in emulator.requests]
    assert len(sent) == 4 and all(q.status == 200
                                  for q in emulator.requests)
    fixed_tools(emulator.requests)

    # turn 2: the search restored before the call, the call as the
    # wrapper's (its id, the client's input as its arguments)
    restored = sent[2]["messages"][n:n + 4]
    assert [m["role"] for m in restored] == ["assistant", "user",
                                             "assistant", "user"]
    search = restored[0]["content"][-1]
    assert search["name"] == "tool_search"
    assert search["input"] == {"query": "select:" + TARGET}
    result = restored[1]["content"][0]
    assert result["tool_use_id"] == search["id"]
    assert result["content"].startswith("Loaded: " + TARGET + ". ")
    assert restored[2]["content"][-1] == {
        "type": "tool_use", "id": "toolu_target", "name": "call_tool",
        "input": {"name": TARGET, "arguments": GOOD}}

    # turn 3 sends turn 2's bytes again, up to turn 2's last message
    two = billing.compact(billing.without_cache_control(sent[2]["messages"]))
    three = billing.compact(billing.without_cache_control(
        sent[3]["messages"][:len(sent[2]["messages"])]))
    assert two == three

    # the loop's call and the next turn share the client's prefix
    assert sent[1]["messages"][:n] == sent[2]["messages"][:n]
    bill = billing.bill_session([q.body for q in emulator.requests])
    assert [(b.n, b.cause) for b in bill.breaks()] == []
    assert all(b.read > 0 for b in bill.bills[1:])
