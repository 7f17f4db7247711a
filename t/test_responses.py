"""Responses through a real nginx with the module and the emulator
playing OpenAI's Responses API (t/emulator_responses.py: strict about
deferred tools, namespaces, stored items and calls) and a model.  The
requests are the recorded clients' sessions in the shapes of
t/responses_fixtures.py.  Without an openai upstream the gateway runs
the search and the client gets one response; with one and a model that
has it, the upstream's hosted tool_search does; requests that search on
their own reach it byte-identical; stored responses and
previous_response_id chains get the search, stored whole (the emulator
keeps them as OpenAI does; conversations: t/test_conversations.py)."""

import json
import re

import pytest

from conftest import assert_search_then_load, request
from emulator import ApiError, Fault
from emulator_responses import (ResponsesReply, responses_searcher,
                                 responses_seeker)
from responses_fixtures import (CLIENT_HEADERS, RECORDED, function_keys,
                                qualified, recorded_requests,
                                responses_requests, sse_events, tool_bytes)

TARGET = "memory_create_entities"
ARGS = {"entities": [{"name": "Alice", "entityType": "person",
                      "observations": ["likes tea"]}]}
URI = "/v1/responses"
HEADER = ("add_header X-Toolsearch-Format $toolsearch_format always;"
          "add_header X-Toolsearch-Searches $toolsearch_searches always;")
CLIENTS = ["opencode", "kilo", "cline", "continue", "qwen-code-nosearch",
           "ai-sdk", "langchain", "mastra"]


@pytest.fixture
def gw(gateway, emulator):
    """`toolsearch on;` and nothing else, and a model that searches."""
    emulator.responses_script = responses_seeker(
        TARGET, ARGS, "memory create entities", "done")
    return gateway(server="toolsearch on; " + HEADER)


@pytest.fixture
def gw_tools(gateway, emulator):
    """The same with found functions loaded in tools[]
    (toolsearch_found_tools tools)."""
    emulator.responses_script = responses_seeker(
        TARGET, ARGS, "memory create entities", "done")
    return gateway(server="toolsearch on; toolsearch_found_tools tools; " +
                   HEADER)


def first_request(stream, client="opencode", shape="ai-sdk"):
    return json.loads(responses_requests(client, shape, stream)[0])


def send(gw, body, uri=URI, headers=CLIENT_HEADERS):
    data = body if isinstance(body, bytes) else \
        json.dumps(body, separators=(",", ":")).encode()
    return request(gw, "POST", uri, data, headers)


def response_of(r, stream):
    """The client's answer as one response, checked to be one: for a
    stream, sequence_number 0, 1, 2, … without a gap, output_index from
    0, response.created first, one response.completed and last, one
    response id; the items the events announced are the response's
    output."""
    assert r.status == 200, r.body[:500]
    if not stream:
        return json.loads(r.body)
    events = sse_events(r.body)
    seqs = [d["sequence_number"] for _, d in events]
    assert seqs == list(range(len(events))), seqs
    for name, d in events:
        assert name == d["type"], (name, d["type"])
    ends = [d for _, d in events if d["type"] in (
        "response.completed", "response.incomplete", "response.failed")]
    assert len(ends) == 1 and events[-1][1] is ends[0]
    resp = ends[0]["response"]
    assert events[0][0] == "response.created"
    ids = {d["response"]["id"] for _, d in events if "response" in d}
    assert ids == {resp["id"]}, ids
    done = [d["item"] for _, d in events
            if d["type"] == "response.output_item.done"]
    indexes = [d["output_index"] for _, d in events
               if d["type"] == "response.output_item.added"]
    assert indexes == list(range(len(indexes)))
    assert done == resp["output"]
    return resp


def calls_of(resp):
    return [it for it in resp["output"] if it["type"] == "function_call"]


def text_of(resp):
    return "".join(c["text"] for it in resp["output"]
                   if it["type"] == "message" for c in it["content"])


def upstream_bodies(emulator):
    for rec in emulator.requests:
        assert rec.status == 200, getattr(rec, "error", rec.status)
    return [json.loads(rec.body) for rec in emulator.requests]


def names(body):
    return [t.get("name") for t in body.get("tools", [])]


@pytest.mark.parametrize("stream", [False, True])
@pytest.mark.parametrize("uri", [URI, "/openai/v1/responses"])
def test_search_then_call_is_one_response(gw, emulator, stream, uri):
    body = first_request(stream)
    r = send(gw, body, uri)
    resp = response_of(r, stream)
    assert r.header("X-Toolsearch-Format") == "responses"
    assert r.header("X-Toolsearch-Decision") == "deferred_gateway"
    # the client sees the call of the tool found, not the search
    assert [c["name"] for c in calls_of(resp)] == [TARGET]
    assert json.loads(calls_of(resp)[0]["arguments"]) == ARGS
    first, second = upstream_bodies(emulator)
    assert TARGET not in names(first) and "tool_search" in names(first)
    # the call wrapper (store false): tools[] the same on both calls, the
    # found definition as text in the search's output
    assert names(first)[-2:] == ["tool_search", "call_tool"]
    assert second["tools"] == first["tools"]
    assert "\n\nTool: %s\n" % TARGET in second["input"][-1]["output"]
    assert TARGET in first["instructions"]
    # the continuation carries the answer (its reasoning with the
    # encrypted content, without the ids store false cannot resolve), the
    # search call and its output
    assert [it.get("type") for it in second["input"][-3:]] == [
        "reasoning", "function_call", "function_call_output"]
    assert second["input"][-3]["encrypted_content"]
    assert not any("id" in it for it in second["input"][-3:])
    assert second["input"][-2]["name"] == "tool_search"
    assert "Loaded: " + TARGET in second["input"][-1]["output"]
    # one response: the first call's id, usage summed
    ids = [json.loads(rec.body) for rec in emulator.requests]
    assert resp["usage"]["output_tokens"] == 20
    assert resp["usage"]["input_tokens"] == sum(
        max(1, len(rec.body) // 4) for rec in emulator.requests)
    assert resp["usage"]["total_tokens"] == \
        resp["usage"]["input_tokens"] + 20
    assert resp["id"].startswith("resp_") and len(ids) == 2
    client = tool_bytes(json.dumps(body).encode())
    for rec in emulator.requests:
        assert tool_bytes(rec.body) <= client * 0.5


@pytest.mark.parametrize("stream", [False, True])
@pytest.mark.parametrize("client", CLIENTS)
def test_client_session_completes(gateway, emulator, client, stream):
    """Each recorded client's session in Responses (the AI SDK's shape,
    store false), `toolsearch on;` alone: the model searches, calls the
    memory server's create_entities, and answers on the next turn, which
    loads the called tool from history; at most half the client's tool
    bytes reach the upstream, and the prompt prefix stays."""
    body = first_request(stream, client)
    target = [n for n in names(body) if n.endswith("create_entities")][0]
    emulator.responses_script = responses_seeker(
        target, ARGS, "memory create entities", "done")
    gw = gateway(server="toolsearch on;")
    resp = response_of(send(gw, body), stream)
    call = calls_of(resp)[0]
    assert call["name"] == target
    turn1 = upstream_bodies(emulator)
    emulator.reset()
    # opencode's next turn: the output items back, ids dropped
    body["input"] += [dict((k, v) for k, v in it.items() if k != "id")
                      for it in resp["output"]]
    body["input"].append({"type": "function_call_output",
                          "call_id": call["call_id"], "output": "ok"})
    resp = response_of(send(gw, body), stream)
    assert text_of(resp) == "done" and not calls_of(resp)
    turn2 = upstream_bodies(emulator)
    # the call wrapper: the called function stays deferred, tools[] the
    # same on every call and turn, the call back as call_tool's after
    # its search restored
    assert len(turn2) == 1 and target not in names(turn2[0])
    assert turn2[0]["tools"] == turn1[0]["tools"] == turn1[-1]["tools"]
    restored = [it for it in turn2[0]["input"]
                if it.get("type") == "function_call"]
    assert [it["name"] for it in restored] == ["tool_search", "call_tool"]
    assert json.loads(restored[1]["arguments"]) == \
        {"name": target, "arguments": ARGS}
    assert turn2[0]["instructions"] == turn1[0]["instructions"]
    sent = tool_bytes(json.dumps(body).encode())
    for b in turn1 + turn2:
        assert tool_bytes(json.dumps(b).encode()) <= sent * 0.5, client


def rebound(body, resp):
    """A recorded next turn whose items name the recorded answer's items
    by id (LangChain.js carries them back with their ids, Mastra refers
    to them by item_reference): the ids of the answer it got now, item
    for item of the same type."""
    kinds = {"msg": "message", "fc": "function_call"}
    now = {}
    for it in resp["output"]:
        now.setdefault(it["type"], it["id"])
    for old in set(re.findall(rb'"((msg|fc)_emu\d+)"', body)):
        body = body.replace(b'"%s"' % old[0],
                            b'"%s"' % now[kinds[old[1].decode()]].encode())
    return body


@pytest.mark.parametrize("stream", [False, True])
@pytest.mark.parametrize("client", RECORDED)
def test_recorded_session_completes(gateway, emulator, client, stream):
    """Each client's recorded Responses session, as it sent it (body and
    headers), with `toolsearch on;` alone: its first request gets one
    response calling the memory server's create_entities (the model
    searched for it), its recorded next turn gets the final text, and at
    most half of its tool bytes reach the upstream on any call."""
    session = recorded_requests(client, stream)
    first = json.loads(session[0][0])
    key = [k for k in function_keys(first)
           if k[1].endswith("create_entities")][0]
    emulator.responses_script = responses_seeker(
        key[1], ARGS, "memory create entities", "done", namespace=key[0])
    gw = gateway(server="toolsearch on;")
    resp = response_of(send(gw, session[0][0], headers=session[0][1]),
                       stream)
    # a namespace member's call carries its namespace (Codex's)
    assert [(c.get("namespace"), c["name"]) for c in calls_of(resp)] == [key]
    resp = response_of(send(gw, rebound(session[1][0], resp),
                            headers=session[1][1]), stream)
    assert text_of(resp) == "done" and not calls_of(resp)
    assert_search_then_load(
        [([qualified(k) for k in function_keys(b)], tool_bytes(rec.body))
         for b, rec in zip(upstream_bodies(emulator), emulator.requests)],
        qualified(key), tool_bytes(session[0][0]))


@pytest.mark.parametrize("stream", [False, True])
def test_reasoning_without_its_content_is_not_sent_back(gw, emulator,
                                                        stream):
    """Without include reasoning.encrypted_content a reasoning item
    cannot be sent back with store false: the continuation leaves it out,
    and the client still gets it."""
    body = first_request(stream)
    del body["include"]
    resp = response_of(send(gw, body), stream)
    assert [it["type"] for it in resp["output"]][0] == "reasoning"
    first, second = upstream_bodies(emulator)
    assert [it.get("type") for it in second["input"][-2:]] == [
        "function_call", "function_call_output"]
    assert not any(it.get("type") == "reasoning" for it in second["input"])


@pytest.mark.parametrize("stream", [False, True])
def test_call_of_a_deferred_tool_loads_it(gw, emulator, stream):
    """A call of a deferred function never loaded is a select: of it;
    the upstream sees it as the search function's call."""
    seek = responses_seeker(TARGET, ARGS, "", "done")

    def model(body, ctx):
        if (None, TARGET) in ctx.functions:
            return seek(body, ctx)
        return ResponsesReply(None, [(TARGET, ARGS, "call_direct")])
    emulator.responses_script = model
    resp = response_of(send(gw, first_request(stream)), stream)
    assert [c["name"] for c in calls_of(resp)] == [TARGET]
    ups = upstream_bodies(emulator)
    assert len(ups) == 2
    assert ups[1]["input"][-2]["name"] == "tool_search"
    assert "select:" + TARGET in ups[1]["input"][-2]["arguments"]


@pytest.mark.parametrize("stream", [False, True])
def test_search_mixed_with_a_client_call(gw, emulator, stream):
    emulator.responses_script = lambda body, ctx: ResponsesReply(None, [
        ("tool_search", {"query": "memory"}, "call_s"),
        ("bash", {"command": "ls"}, "call_b")])
    resp = response_of(send(gw, first_request(stream)), stream)
    assert [c["name"] for c in calls_of(resp)] == ["bash"]
    assert len(upstream_bodies(emulator)) == 1


@pytest.mark.parametrize("stream", [False, True])
def test_search_budget_ends_in_text(gateway, emulator, stream):
    emulator.responses_script = lambda body, ctx: ResponsesReply(None, [
        ("tool_search", {"query": "nothing like this"},
         "call_%d" % len(ctx.items))])
    gw = gateway(server="toolsearch on; toolsearch_max_searches 2;")
    resp = response_of(send(gw, first_request(stream)), stream)
    assert not calls_of(resp) and "spent" in text_of(resp)
    assert len(upstream_bodies(emulator)) == 3


STATES = ["store_false", "stored", "chained"]


def state_body(gw, emulator, stream, state):
    """A first request of each kind of state: the client's own (store
    false), stored (the default), going on from a stored response."""
    if state == "store_false":
        return first_request(stream)
    body = first_request(stream, shape="agents")
    body.pop("store", None)
    if state == "stored":
        return body
    script = emulator.responses_script
    emulator.responses_script = lambda b, ctx: ResponsesReply("Hi.")
    resp = response_of(send(gw, body), stream)
    emulator.responses_script = script
    emulator.reset()
    return dict(body, previous_response_id=resp["id"],
                input=[{"role": "user", "content": "Store Alice."}])


@pytest.mark.parametrize("stream", [False, True])
@pytest.mark.parametrize("status", [429, 500])
@pytest.mark.parametrize("state", STATES)
def test_error_on_the_continuation_reaches_the_client(gw, emulator, stream,
                                                      status, state):
    body = state_body(gw, emulator, stream, state)
    calls = []
    seek = responses_seeker(TARGET, ARGS, "memory create entities", "done")

    def model(body, ctx):
        calls.append(1)
        if len(calls) == 2:
            return ApiError("upstream says no", status, "server_error")
        return seek(body, ctx)
    emulator.responses_script = model
    r = send(gw, body)
    assert len(calls) == 2
    if stream:
        assert r.status == 200
        events = sse_events(r.body)
        assert events[-1][0] == "error"
        assert events[-1][1]["message"] == "upstream says no"
        assert not any(d["type"] == "response.completed" for _, d in events)
        seqs = [d["sequence_number"] for _, d in events]
        assert seqs == list(range(len(events)))
    else:
        assert r.status == status
        assert json.loads(r.body)["error"]["message"] == "upstream says no"


@pytest.mark.parametrize("stream", [False, True])
@pytest.mark.parametrize("state", STATES)
def test_broken_continuation_is_an_error(gw, emulator, stream, state):
    body = state_body(gw, emulator, stream, state)
    calls = []
    seek = responses_seeker(TARGET, ARGS, "memory create entities", "done")

    def model(body, ctx):
        calls.append(1)
        reply = seek(body, ctx)
        return Fault(reply, 60, "close") if len(calls) == 2 else reply
    emulator.responses_script = model
    r = send(gw, body)
    assert len(calls) == 2
    if stream:
        events = sse_events(r.body) if r.status == 200 else []
        assert r.status == 200 and events[-1][0] == "error"
        assert not any(d["type"] == "response.completed" for _, d in events)
    else:
        assert r.status == 502
        assert "error" in json.loads(r.body)


def sent_as_is(emulator, data):
    assert len(emulator.requests) == 1
    assert emulator.requests[0].body == data


def client_search_body(case):
    body = first_request(False)
    if case == "codex":
        body = first_request(False, shape="codex")
    elif case == "sdk_deferred":
        # the Agents SDK's toolSearchTool() with deferLoading
        for t in body["tools"]:
            t["defer_loading"] = True
        body["tools"].append({"type": "tool_search"})
        body["model"] = "gpt-5.4"
    elif case == "qwen":
        body["tools"].append({"type": "function", "name": "tool_search",
                              "description": "Search the MCP tools",
                              "parameters": {"type": "object"}})
    elif case == "client_items":
        body = first_request(False, shape="codex")
        body["input"] += [
            {"type": "tool_search_call", "execution": "client",
             "call_id": "ts_1", "status": "completed",
             "arguments": {"query": "memory"}},
            {"type": "tool_search_output", "execution": "client",
             "call_id": "ts_1", "status": "completed", "tools": []}]
    return body


@pytest.mark.parametrize("case", ["codex", "sdk_deferred", "qwen",
                                  "client_items"])
def test_client_managed_search_passes_byte_identical(gateway, emulator,
                                                     case):
    gw = gateway(server="toolsearch on; toolsearch_upstream openai;")
    data = json.dumps(client_search_body(case)).encode()
    r = send(gw, data)
    sent_as_is(emulator, data)
    assert r.header("X-Toolsearch-Decision") == "client_managed"


@pytest.mark.parametrize("case", ["malformed", "not_object", "no_input",
                                  "no_tools", "tools_not_array"])
def test_passes_byte_identical(gw, emulator, case):
    body = first_request(False)
    if case == "no_input":
        del body["input"]
    elif case == "no_tools":
        del body["tools"], body["tool_choice"]
    elif case == "tools_not_array":
        body["tools"] = {"type": "function"}
    data = json.dumps(body).encode()
    if case == "malformed":
        data = data[:-1]
    elif case == "not_object":
        data = b"[" + data + b"]"
    r = send(gw, data)
    assert r.status in (200, 400)
    sent_as_is(emulator, data)
    assert not r.header("X-Toolsearch-Decision").startswith("deferred")


def output_for(call, output="ok"):
    return {"type": "function_call_output", "call_id": call["call_id"],
            "output": output}


def stored_turn(gw, emulator, body, stream):
    """One turn of a stored chain through the gateway: every upstream
    call accepted, the gateway's search on each, no more than half the
    client's tool bytes on any; the client's response and the bodies."""
    emulator.reset()
    r = send(gw, body)
    assert r.header("X-Toolsearch-Decision") == "deferred_gateway"
    resp = response_of(r, stream)
    bodies = upstream_bodies(emulator)
    client = tool_bytes(json.dumps(body).encode())
    for b in bodies:
        assert "tool_search" in names(b)
        assert TARGET in b["instructions"]
        assert tool_bytes(json.dumps(b).encode()) <= client * 0.5
    return resp, bodies


def assert_searched_in_chain(resp, bodies, prev):
    """A search, then the call of the tool found: the continuation goes
    on from the first call's stored response with the search's output
    alone, and the client goes on from the last, which holds it all."""
    first, second = bodies
    assert first.get("previous_response_id") == prev
    assert TARGET not in names(first) and TARGET in names(second)
    assert second["previous_response_id"] not in (None, prev, resp["id"])
    [out] = second["input"]
    assert out["type"] == "function_call_output"
    assert "Loaded: " + TARGET in out["output"]
    assert [c["name"] for c in calls_of(resp)] == [TARGET]
    assert resp.get("previous_response_id") == prev


@pytest.mark.parametrize("stream", [False, True])
def test_previous_response_id_chain_searches(gw_tools, emulator, stream):
    """The Agents SDK with previousResponseId, toolsearch_found_tools
    tools: store on (the default), each turn sends only its new items.
    Turn 1 searches; the upstream
    keeps the whole exchange and the client goes on from its end; turn 2
    answers the call (the search call in the stored history is declared,
    the announcement is in this request's instructions); turn 3 searches
    again for the tool history called, which this request does not
    declare, and the client gets its call."""
    gw = gw_tools
    body = first_request(stream, shape="agents")
    body.pop("store", None)
    resp, bodies = stored_turn(gw, emulator, body, stream)
    assert_searched_in_chain(resp, bodies, None)
    nxt = dict(body, previous_response_id=resp["id"],
               input=[output_for(calls_of(resp)[0])])
    resp2, [b2] = stored_turn(gw, emulator, nxt, stream)
    assert text_of(resp2) == "done" and TARGET not in names(b2)
    assert b2["input"] == nxt["input"]
    assert b2["previous_response_id"] == resp["id"]
    nxt = dict(body, previous_response_id=resp2["id"],
               input=[{"role": "user", "content": "And Bob too."}])
    resp3, bodies = stored_turn(gw, emulator, nxt, stream)
    assert_searched_in_chain(resp3, bodies, resp2["id"])


def history_caller():
    """The seeker, and on a later turn whose kept history calls TARGET
    where the request does not declare it: a call of it as history shows
    it (call_again), then, loaded, its call again (call_after)."""
    seek = responses_seeker(TARGET, ARGS, "memory create entities", "done")

    def model(body, ctx):
        last = ctx.items[-1]
        if TARGET in ctx.undeclared and last.get("role") == "user":
            return ResponsesReply(None, [(TARGET, ARGS, "call_again")])
        if last.get("call_id") == "call_again":
            return ResponsesReply(None, [(TARGET, ARGS, "call_after")])
        return seek(body, ctx)
    return model


@pytest.mark.parametrize("stream", [False, True])
def test_call_of_a_function_only_history_declares(gw_tools, emulator, stream):
    """A later turn of a chain, toolsearch_found_tools tools: the stored
    history calls a found function this request does not declare (the
    gateway cannot see that history).
    The model calls it again as it stands in history: the gateway loads
    it (a select: of it, answered from the stored call), the model calls
    it declared, and the client gets that call, of a tool it knows."""
    gw = gw_tools
    emulator.responses_script = history_caller()
    body = first_request(stream, shape="agents")
    body.pop("store", None)
    resp, _ = stored_turn(gw, emulator, body, stream)
    nxt = dict(body, previous_response_id=resp["id"],
               input=[output_for(calls_of(resp)[0])])
    resp2, _ = stored_turn(gw, emulator, nxt, stream)
    nxt = dict(body, previous_response_id=resp2["id"],
               input=[{"role": "user", "content": "And Bob too."}])
    resp3, (first, second) = stored_turn(gw, emulator, nxt, stream)
    assert TARGET not in names(first) and TARGET in names(second)
    assert second["input"][0]["call_id"] == "call_again"
    assert [c["call_id"] for c in calls_of(resp3)] == ["call_after"]
    assert calls_of(resp3)[0]["name"] == TARGET


@pytest.mark.parametrize("stream", [False, True])
def test_item_reference_chain_searches(gw_tools, emulator, stream):
    """The AI SDK with store on, toolsearch_found_tools tools: the next
    turn refers to the items it got by their ids.  Those of both calls resolve (each call's items are
    stored with it), the held search call is not among them."""
    gw = gw_tools
    body = first_request(stream)
    body.pop("store", None)
    resp, bodies = stored_turn(gw, emulator, body, stream)
    assert_searched_in_chain(resp, bodies, None)
    # each call's reasoning, the found tool's call; no search call
    assert [it["type"] for it in resp["output"]] == [
        "reasoning", "reasoning", "message", "function_call"]
    body["input"] += [{"type": "item_reference", "id": it["id"]}
                      for it in resp["output"]]
    body["input"].append(output_for(calls_of(resp)[0]))
    resp2, [b2] = stored_turn(gw, emulator, body, stream)
    assert text_of(resp2) == "done"
    assert b2["input"][-3:] == body["input"][-3:]


@pytest.mark.parametrize("stream", [False, True])
def test_unstored_turn_of_a_chain_searches(gw, emulator, stream):
    """store false going on from a kept response: nothing of the
    exchange is kept, so the continuation is the client's request (its
    previous_response_id kept) with the answer's items and the search's
    output after its input, as for any store false request."""
    body = first_request(stream, shape="agents")
    body.pop("store", None)
    emulator.responses_script = lambda b, ctx: ResponsesReply("Hi.")
    emulator.reset()
    resp = response_of(send(gw, body), stream)
    emulator.responses_script = responses_seeker(
        TARGET, ARGS, "memory create entities", "done")
    nxt = dict(body, store=False, previous_response_id=resp["id"],
               input=[{"role": "user", "content": "Store Alice."}])
    emulator.reset()
    r = send(gw, nxt)
    assert r.header("X-Toolsearch-Decision") == "deferred_gateway"
    resp2 = response_of(r, stream)
    assert [c["name"] for c in calls_of(resp2)] == [TARGET]
    first, second = upstream_bodies(emulator)
    assert first["previous_response_id"] == second["previous_response_id"] \
        == resp["id"]
    assert "parallel_tool_calls" not in second
    assert [it.get("type") for it in second["input"]] == [
        None, "function_call", "function_call_output"]
    assert resp2["id"] != resp["id"]


@pytest.mark.parametrize("stream", [False, True])
def test_stored_answers_hold_one_call(gw, emulator, stream):
    """A stored answer must not hold the search beside a client's call:
    the client goes on from it and the search's call would stay open.
    The gateway asks for one call an answer (parallel_tool_calls false,
    where the client did not set it); a client that asks for parallel
    calls keeps its request (server_state)."""
    def model(body, ctx):
        last = ctx.items[-1]
        if last.get("call_id") == "call_s":
            return ResponsesReply(None, [("bash", {"command": "ls"},
                                          "call_b")])
        if last.get("type") == "function_call_output":
            return ResponsesReply("done")
        return ResponsesReply(None, [
            ("tool_search", {"query": "memory"}, "call_s"),
            ("bash", {"command": "ls"}, "call_b")])
    emulator.responses_script = model
    body = first_request(stream, shape="agents")
    body.pop("store", None)
    resp, bodies = stored_turn(gw, emulator, body, stream)
    assert [c["name"] for c in calls_of(resp)] == ["bash"]
    assert [b["parallel_tool_calls"] for b in bodies] == [False, False]
    nxt = dict(body, previous_response_id=resp["id"],
               input=[output_for(calls_of(resp)[0])])
    resp2, _ = stored_turn(gw, emulator, nxt, stream)
    assert text_of(resp2) == "done"
    emulator.reset()
    data = json.dumps(dict(body, parallel_tool_calls=True)).encode()
    r = send(gw, data)
    assert r.header("X-Toolsearch-Decision") == "server_state"
    sent_as_is(emulator, data)


@pytest.mark.parametrize("stream", [False, True])
def test_stored_searches_past_the_budget_are_answered(gateway, emulator,
                                                      stream):
    """Searches past toolsearch_max_searches in a stored exchange: each
    is answered (no more searches), not left open in the response the
    client goes on from, and the chain goes on."""
    def model(body, ctx):
        last = ctx.items[-1]
        if "No more tool searches" in str(last.get("output")):
            return ResponsesReply("I could not find it.")
        if last.get("role") == "user" and len(ctx.items) > 3:
            return ResponsesReply("Hello again.")
        return ResponsesReply(None, [
            ("tool_search", {"query": "nothing like this"},
             "call_%d" % len(ctx.items))])
    emulator.responses_script = model
    gw = gateway(server="toolsearch on; toolsearch_max_searches 1;")
    body = first_request(stream, shape="agents")
    body.pop("store", None)
    resp, bodies = stored_turn(gw, emulator, body, stream)
    assert text_of(resp) == "I could not find it." and len(bodies) == 3
    assert "No more tool searches" in bodies[2]["input"][0]["output"]
    nxt = dict(body, previous_response_id=resp["id"],
               input=[{"role": "user", "content": "Hi."}])
    resp2, _ = stored_turn(gw, emulator, nxt, stream)
    assert text_of(resp2) == "Hello again."


@pytest.mark.parametrize("stream", [False, True])
@pytest.mark.parametrize("choice", ["auto", None])
def test_stored_model_ignoring_the_budget_leaves_no_open_call(gateway,
                                                              emulator,
                                                              stream,
                                                              choice):
    """A model that searches on and on, past the budget and past being
    told it is spent: the kept response still ends answered.  The first
    search past the budget is answered as spent; the second too, on a
    call with "tool_choice": "none" (the only call that differs), so the
    model answers in text and the next request can go on from the
    response the client got."""
    emulator.responses_script = responses_searcher()
    gw = gateway(server="toolsearch on; toolsearch_max_searches 1;")
    body = first_request(stream, shape="agents")
    body.pop("store", None)
    body.pop("tool_choice", None)
    if choice:
        body["tool_choice"] = choice
    resp, bodies = stored_turn(gw, emulator, body, stream)
    assert not calls_of(resp) and text_of(resp)
    nxt = dict(body, previous_response_id=resp["id"],
               input=[{"role": "user", "content": "Hi."}])
    resp2, bodies2 = stored_turn(gw, emulator, nxt, stream)
    assert bodies2[0]["previous_response_id"] == resp["id"]
    assert not calls_of(resp2) and text_of(resp2)
    assert len(bodies) == 4
    assert [b.get("tool_choice") for b in bodies] == [choice] * 3 + ["none"]
    for b in bodies[2:]:
        assert "No more tool searches" in b["input"][0]["output"]


@pytest.mark.parametrize("stream", [False, True])
def test_unstored_model_ignoring_the_budget_ends_in_text(gateway, emulator,
                                                         stream):
    """With store false nothing is kept: the budget's end is the spent
    note, with no call past it and no tool_choice of the gateway's."""
    emulator.responses_script = responses_searcher()
    gw = gateway(server="toolsearch on; toolsearch_max_searches 1;")
    resp = response_of(send(gw, first_request(stream)), stream)
    assert not calls_of(resp) and "spent" in text_of(resp)
    bodies = upstream_bodies(emulator)
    assert len(bodies) == 2
    choice = first_request(stream).get("tool_choice")
    assert [b.get("tool_choice") for b in bodies] == [choice, choice]


def invalid_caller():
    """A model that, once a search gave the target's definition, calls
    it through the wrapper invalidly on every call, and answers "done"
    when its call ran."""
    seek = responses_seeker(TARGET, ARGS, "memory create entities", "done")

    def model(body, ctx):
        last = ctx.items[-1]
        if last.get("type") == "function_call_output" and \
                last.get("output") == "ran":
            return ResponsesReply("done")
        if any("Tool: " + TARGET in str(it.get("output", ""))
               for it in ctx.items):
            return ResponsesReply(None, [("call_tool", {
                "name": TARGET, "arguments": {"entities": "Alice"}},
                "call_bad_%d" % len(ctx.items))])
        return seek(body, ctx)
    return model


@pytest.mark.parametrize("stream", [False, True])
@pytest.mark.parametrize("stored", [False, True])
def test_wrapper_invalid_call_past_the_budget_reaches_the_client(
        gateway, emulator, stream, stored):
    """A model that keeps calling the wrapper invalidly gets the budget
    of answers, then its call reaches the client as a function_call of
    the function it names (the client's tool judges the arguments), as
    on Chat Completions and Messages: nothing the client could run is
    dropped.  Stored, the kept response holds the model's call_tool call
    with the same call_id: the client's output for it answers it, and
    the chain goes on."""
    emulator.responses_script = invalid_caller()
    gw = gateway(server="toolsearch on; toolsearch_max_searches 2;")
    body = first_request(stream, shape="agents" if stored else "ai-sdk")
    if stored:
        body.pop("store", None)
        resp, bodies = stored_turn(gw, emulator, body, stream)
    else:
        r = send(gw, body)
        resp = response_of(r, stream)
        assert b"call_tool" not in r.body
        bodies = upstream_bodies(emulator)
    [call] = calls_of(resp)
    assert call["name"] == TARGET and call["call_id"].startswith("call_bad")
    assert json.loads(call["arguments"]) == {"entities": "Alice"}
    assert "spent" not in text_of(resp)
    # the search, two answered refusals, then the client
    assert len(bodies) == 4 and "call_tool" in names(bodies[0])
    if stored:
        nxt = dict(body, previous_response_id=resp["id"],
                   input=[output_for(call, "ran")])
        resp2, _ = stored_turn(gw, emulator, nxt, stream)
        assert text_of(resp2) == "done"


@pytest.mark.parametrize("stream", [False, True])
@pytest.mark.parametrize("wrapper_first", [True, False])
def test_wrapper_invalid_call_beside_a_client_call(gateway, emulator, stream,
                                                   wrapper_first):
    """Store false: an invalid wrapper call in the answer of a client
    call cannot be answered in the loop (the client must run its call
    first): it reaches the client as a call of the function it names, in
    its place among the answer's items."""
    seek = responses_seeker(TARGET, ARGS, "memory create entities", "done")
    bad = ("call_tool", {"name": TARGET, "arguments": {}}, "call_bad")
    client = ("bash", {"command": "ls"}, "call_b")

    def model(body, ctx):
        last = ctx.items[-1]
        if last.get("type") == "function_call_output" and \
                "Tool: " + TARGET in last.get("output", ""):
            return ResponsesReply(None, [bad, client] if wrapper_first
                                  else [client, bad])
        return seek(body, ctx)
    emulator.responses_script = model
    gw = gateway(server="toolsearch on;")
    r = send(gw, first_request(stream))
    resp = response_of(r, stream)
    order = [TARGET, "bash"] if wrapper_first else ["bash", TARGET]
    assert [c["name"] for c in calls_of(resp)] == order
    assert b"call_tool" not in r.body
    assert len(upstream_bodies(emulator)) == 2


def test_stored_stream_text_then_search_keeps_two_ids(gw, emulator):
    """The documented limit of a stored stream: a model that writes text
    and then searches in the same answer.  The text streams as it comes
    (nothing of a text answer waits), so it goes out under the first
    call's response.created; response.completed carries the id of the
    last call, which holds the whole exchange.  Going on from that id,
    or referring to the items the client got (the AI SDK's default with
    store), works; going on from the response.created id is refused by
    the upstream, whose response ends with the search call."""
    def model(body, ctx):
        last = ctx.items[-1]
        if last.get("type") == "function_call_output":
            return ResponsesReply("Found it.")
        if last.get("role") == "user" and last.get("content") == "Hi.":
            return ResponsesReply("Hello again.")
        return ResponsesReply("Let me look for the tool.", [
            ("tool_search", {"query": "memory create entities"}, "call_s")])
    emulator.responses_script = model
    body = first_request(True, shape="agents")
    body.pop("store", None)
    r = send(gw, body)
    assert r.status == 200
    events = sse_events(r.body)
    assert [d["sequence_number"] for _, d in events] == \
        list(range(len(events)))
    heads = [d["response"]["id"] for _, d in events
             if d["type"] == "response.created"]
    end = events[-1][1]
    assert end["type"] == "response.completed" and len(heads) == 1
    created, completed = heads[0], end["response"]["id"]
    assert created != completed
    assert text_of(end["response"]) == "Let me look for the tool.Found it."
    hi = [{"role": "user", "content": "Hi."}]
    resp, _ = stored_turn(gw, emulator, dict(
        body, previous_response_id=completed, input=hi), True)
    assert text_of(resp) == "Hello again."
    refs = dict(body, input=body["input"] + [
        {"type": "item_reference", "id": it["id"]}
        for it in end["response"]["output"]] + hi)
    resp, _ = stored_turn(gw, emulator, refs, True)
    assert text_of(resp) == "Hello again."
    emulator.reset()
    r = send(gw, dict(body, previous_response_id=created, input=hi))
    assert r.status == 400
    assert b"No tool output found for function call call_s" in r.body


HOSTED = "toolsearch on; toolsearch_upstream openai; " + HEADER


@pytest.mark.parametrize("stream", [False, True])
@pytest.mark.parametrize("carry", ["intact", "dropped", "call_only",
                                   "references", "previous"])
def test_hosted_search_round_trips(gateway, emulator, stream, carry):
    """An openai upstream and gpt-5.4: deferred functions get
    defer_loading and the request {"type":"tool_search"}; the upstream
    searches itself and the client gets its items.  However the client
    carries them back (intact, without them, the call without the
    search's output, as item_reference, or by previous_response_id), the
    next turn is valid: a call whose loading the request does not show is
    declared."""
    emulator.responses_script = responses_seeker(
        TARGET, ARGS, "memory create entities", "done")
    gw = gateway(server=HOSTED)
    body = first_request(stream)
    body["model"] = "gpt-5.4"
    if carry in ("references", "previous"):
        body.pop("store", None)
    r = send(gw, body)
    assert r.header("X-Toolsearch-Decision") == "deferred_hosted"
    resp = response_of(r, stream)
    up = upstream_bodies(emulator)[0]
    assert {"type": "tool_search"} in up["tools"]
    deferred = [t for t in up["tools"] if t.get("defer_loading")]
    assert TARGET in [t["name"] for t in deferred]
    assert tool_bytes(json.dumps(up).encode()) > 0
    kinds = [it["type"] for it in resp["output"] if it["type"] != "reasoning"]
    assert kinds == ["tool_search_call", "tool_search_output",
                     "function_call"]
    # clients with store false send the items back without their ids
    items = [dict((k, v) for k, v in it.items() if k != "id")
             for it in resp["output"]]
    call = [it for it in items if it["type"] == "function_call"][0]
    search = [it for it in items if it["type"] == "tool_search_call"][0]
    emulator.reset()
    if carry == "intact":
        body["input"] += items
    elif carry == "dropped":
        body["input"].append(call)
    elif carry == "call_only":
        body["input"] += [search, call]
    elif carry == "previous":
        # the Agents SDK's previousResponseId: only the new items
        body["previous_response_id"] = resp["id"]
        body["input"] = []
    else:
        body["input"] += [{"type": "item_reference", "id": it["id"]}
                          for it in resp["output"]]
    body["input"].append({"type": "function_call_output",
                          "call_id": call["call_id"], "output": "ok"})
    r = send(gw, body)
    assert text_of(response_of(r, stream)) == "done"
    up = upstream_bodies(emulator)[0]
    assert {"type": "tool_search"} in up["tools"]


def test_auto_profile_finds_openai_by_its_host(gateway, emulator):
    """toolsearch_upstream auto (the default): a proxied host that
    toolsearch_openai_hosts names is the openai profile.  The test
    server proxies to the upstream block named "emulator"."""
    emulator.responses_script = responses_seeker(
        TARGET, ARGS, "memory create entities", "done")
    body = first_request(False)
    body["model"] = "gpt-5.4"
    gw = gateway(server="toolsearch on; toolsearch_openai_hosts ~^emul;"
                 "add_header X-Upstream $toolsearch_upstream always;")
    r = send(gw, body)
    assert r.header("X-Upstream") == "openai"
    assert r.header("X-Toolsearch-Decision") == "deferred_hosted"
    assert calls_of(response_of(r, False))[0]["name"] == TARGET
    # the default list names OpenAI's and Azure's hosts, not this one
    emulator.reset()
    gw = gateway(server="toolsearch on;"
                 "add_header X-Upstream $toolsearch_upstream always;")
    r = send(gw, body)
    assert r.header("X-Upstream") == "compatible"
    assert r.header("X-Toolsearch-Decision") == "deferred_gateway"


def test_hosted_needs_a_model_that_has_it(gateway, emulator):
    """An openai upstream with an older model: the gateway's search."""
    emulator.responses_script = responses_seeker(
        TARGET, ARGS, "memory create entities", "done")
    gw = gateway(server=HOSTED)
    r = send(gw, first_request(False))
    assert r.header("X-Toolsearch-Decision") == "deferred_gateway"
    assert calls_of(response_of(r, False))[0]["name"] == TARGET
    assert all({"type": "tool_search"} not in b["tools"]
               for b in upstream_bodies(emulator))


def test_emulator_is_strict(gateway, emulator):
    """The rules the emulator holds the gateway to, checked directly."""
    gw = gateway(server="toolsearch off;")
    body = first_request(False)
    body["tools"][0]["defer_loading"] = True
    r = send(gw, body)
    assert r.status == 400
    assert json.loads(r.body)["error"]["message"] == \
        "Deferred tools require tools.tool_search."
    body = first_request(False)
    body["input"].append({"type": "item_reference", "id": "fc_unknown"})
    assert send(gw, body).status == 404
    body = first_request(False)
    body["input"] += [{"type": "function_call", "call_id": "c1",
                       "name": "no_such_tool", "arguments": "{}"},
                      {"type": "function_call_output", "call_id": "c1",
                       "output": "ok"}]
    assert send(gw, body).status == 400
    body = first_request(False)
    body["tools"] = [{"type": "namespace", "name": "mcp__memory",
                      "description": "memory", "tools": [
                          {"type": "function", "name": "read_graph",
                           "parameters": {"type": "object"}}]}]
    body["input"] += [{"type": "function_call", "call_id": "c1",
                       "name": "read_graph", "arguments": "{}"},
                      {"type": "function_call_output", "call_id": "c1",
                       "output": "ok"}]
    r = send(gw, body)
    assert r.status == 400 and "Missing namespace" in r.body.decode()
    body["input"][-2]["namespace"] = "mcp__memory"
    assert send(gw, body).status == 200
    ns = {"type": "namespace", "name": "mcp__memory", "tools": []}
    body = first_request(False)
    body["model"] = "gpt-5.4"
    body["tools"].append({"type": "tool_search"})
    body["input"] += [{"type": "tool_search_output", "execution": "server",
                       "call_id": None, "tools": [ns]}] * 2
    r = send(gw, body)
    assert r.status == 400 and "two tool_search_output" in r.body.decode()
    body["input"][-1] = {"type": "tool_search_output", "execution": "server",
                         "call_id": None, "tools": [{"type": "namespace",
                                                     "tools": []}]}
    r = send(gw, body)
    assert r.status == 400 and "a namespace needs" in r.body.decode()
    body = first_request(False)
    body["model"] = "gpt-5.4"
    body["tools"] += [dict(ns, defer_loading=True), {"type": "tool_search"}]
    r = send(gw, body)
    assert r.status == 400 and "defer_loading" in r.body.decode()


@pytest.mark.parametrize("stream", [False, True])
@pytest.mark.parametrize("stored", [False, True], ids=["store_false",
                                                       "stored"])
def test_wrapper_invalid_call_is_answered_in_the_loop(gateway, emulator,
                                                      stream, stored):
    """The call wrapper: an invalid call of call_tool gets a
    function_call_output with why and the loop goes on (stored: from the
    kept response, with that output alone); the corrected call reaches
    the client as a function_call of its function, the same call_id, in
    one response whose events number without a gap, and a stored one's
    next turn goes on from it."""
    seek = responses_seeker(TARGET, ARGS, "memory create entities", "done")

    def model(body, ctx):
        last = ctx.items[-1]
        if last.get("type") == "function_call_output" and \
                "Tool: " + TARGET in last.get("output", ""):
            return ResponsesReply(None, [("call_tool", {
                "name": TARGET, "arguments": {"entities": "Alice"}},
                "call_bad")])
        if last.get("call_id") == "call_bad":
            return ResponsesReply("Again.", [("call_tool", {
                "name": TARGET, "arguments": ARGS}, "call_target")])
        return seek(body, ctx)
    emulator.responses_script = model
    gw = gateway(server="toolsearch on; add_header X-Found "
                 "$toolsearch_found_tools always;")
    # the Agents SDK's shape leaves store at its default
    body = first_request(stream, shape="agents" if stored else "ai-sdk")
    r = send(gw, body)
    assert r.header("X-Found") == "wrapper"
    resp = response_of(r, stream)
    [call] = calls_of(resp)
    assert call["name"] == TARGET and call["call_id"] == "call_target"
    assert json.loads(call["arguments"]) == ARGS
    assert b"call_tool" not in r.body
    ups = upstream_bodies(emulator)
    assert len(ups) == 3
    refused = ups[2]["input"][-1]
    assert refused["type"] == "function_call_output"
    assert refused["call_id"] == "call_bad"
    assert refused["output"].startswith("The call did not run")
    assert "entities" in refused["output"]
    if stored:
        assert ups[2]["input"] == [refused]
        nxt = dict(body, previous_response_id=resp["id"],
                   input=[output_for(call)])
        assert text_of(response_of(send(gw, nxt), stream)) == "done"


@pytest.mark.parametrize("target", ["memory__create_entities",
                                    "github__create_issue"])
def test_found_function_after_hosted_tools_loads(gateway, emulator, target):
    """cline's tools[] starts with hosted tools, which have no name: the
    search's hit is loaded as itself, not as the function that many
    places before it (toolsearch_found_tools tools)."""
    raw, headers = recorded_requests("cline", False)[0]
    body = dict(json.loads(raw), store=False)
    assert "name" not in body["tools"][0]
    emulator.responses_script = responses_seeker(
        target, {}, "select:" + target, "done")
    gw = gateway(server="toolsearch on; toolsearch_found_tools tools;")
    resp = response_of(send(gw, body, headers=headers), False)
    first, second = upstream_bodies(emulator)
    found = names(second)[names(second).index("tool_search") + 1:]
    assert found == [target]
    assert [c["name"] for c in calls_of(resp)] == [target]


CARRIES = ["whole", "ids", "references", "chained"]


def carried(carry, body, resp, new):
    """The client's next request after resp, carrying it back as stored
    clients do, then the new items: whole (cline, continue: messages and
    calls without ids), ids (LangChain.js: every item whole, its id
    included), references (the AI SDK with store on: every item by
    item_reference), chained (the Agents SDK: previous_response_id and
    the new items alone)."""
    if carry == "chained":
        return dict(body, previous_response_id=resp["id"], input=new)
    items = []
    for it in resp["output"]:
        if carry == "references":
            items.append({"type": "item_reference", "id": it["id"]})
        elif carry == "ids":
            items.append(dict(it))
        elif it["type"] == "message":
            items.append({"role": "assistant", "content": [
                {"type": "output_text", "text": c["text"]}
                for c in it["content"]]})
        elif it["type"] == "function_call":
            items.append({k: it[k] for k in ("type", "call_id", "name",
                                               "arguments")})
    return dict(body, input=body["input"] + items + new)


def assert_kept_ids_agree(emulator, body):
    """An input item that carries the id of an item the upstream keeps
    is that item: of its type, calling its function with its call_id
    (whether the API reads such an item from the request or from what it
    keeps, the model sees the same call)."""
    kept = emulator.responses_state.items
    for it in body["input"]:
        if it.get("id") in kept and it.get("type") != "item_reference":
            k = kept[it["id"]]
            for key in ("type", "name", "call_id"):
                assert it.get(key) == k.get(key), (it, k)


@pytest.mark.parametrize("stream", [False, True])
@pytest.mark.parametrize("carry", CARRIES)
def test_wrapper_in_a_stored_session(gateway, emulator, stream, carry):
    """The call wrapper where the upstream keeps the responses (store
    left at its default; previous_response_id chains; item_reference
    items): tools[] is the same on every call of every turn (the kept
    tools, the search function, call_tool), the found function never
    joins it; the model's call_tool call reaches the client as a call of
    its own function; every later turn goes on from what the upstream
    keeps (the emulator accepts every request: no broken chain), where a
    call of call_tool is a call of a declared function.  The model calls
    the found function again on a later turn through call_tool, with no
    search where its definition is in the context it reads (the restored
    search of a whole history, the stored search of a chain)."""
    emulator.responses_script = responses_seeker(
        TARGET, ARGS, "memory create entities", "done")
    gw = gateway(server="toolsearch on; " + HEADER +
                 "add_header X-Found $toolsearch_found_tools always;")
    body = first_request(stream, shape="ai-sdk" if carry == "references"
                         else "agents")
    body.pop("store", None)
    sent = []

    # turn 1: the search, then the call through the wrapper
    r = send(gw, body)
    assert r.header("X-Found") == "wrapper"
    resp = response_of(r, stream)
    first, second = upstream_bodies(emulator)
    sent += [first, second]
    [call] = calls_of(resp)
    assert call["name"] == TARGET and json.loads(call["arguments"]) == ARGS
    assert b"call_tool" not in r.body
    assert second["previous_response_id"] not in (None, resp["id"])
    [out] = second["input"]
    assert "Tool: " + TARGET in out["output"]
    kept = emulator.responses_state.items[call["id"]]
    assert kept["name"] == "call_tool"
    assert kept["call_id"] == call["call_id"]

    # turn 2: the call answered
    nxt = carried(carry, body, resp, [output_for(call)])
    resp2, [b2] = stored_turn(gw, emulator, nxt, stream)
    sent.append(b2)
    assert text_of(resp2) == "done"
    assert_kept_ids_agree(emulator, b2)
    ups = [it for it in b2["input"] if it.get("type") == "function_call"]
    if carry == "chained":
        assert b2["previous_response_id"] == resp["id"]
        assert b2["input"] == nxt["input"]
    elif carry == "references":
        assert b2["input"][-len(resp["output"]) - 1:] == \
            nxt["input"][-len(resp["output"]) - 1:]
    else:
        # the call goes back as call_tool's, its search restored before it
        assert [it["name"] for it in ups] == ["tool_search", "call_tool"]
        assert ups[1]["call_id"] == call["call_id"]
        assert json.loads(ups[1]["arguments"]) == \
            {"name": TARGET, "arguments": ARGS}

    # turn 3: the found function again, through the wrapper
    nxt = carried(carry, nxt, resp2, [{"role": "user",
                                       "content": "And Bob too."}])
    resp3, bodies = stored_turn(gw, emulator, nxt, stream)
    sent += bodies
    [call3] = calls_of(resp3)
    assert call3["name"] == TARGET and call3["call_id"] != call["call_id"]
    assert len(bodies) == (2 if carry == "references" else 1)
    assert emulator.responses_state.items[call3["id"]]["name"] == \
        "call_tool"

    # turn 4: answered, the chain goes on
    nxt = carried(carry, nxt, resp3, [output_for(call3)])
    resp4, [b4] = stored_turn(gw, emulator, nxt, stream)
    sent.append(b4)
    assert text_of(resp4) == "done"
    assert_kept_ids_agree(emulator, b4)

    assert len({json.dumps(b["tools"]) for b in sent}) == 1
    assert names(sent[0])[-2:] == ["tool_search", "call_tool"]
    assert TARGET not in names(sent[0])


@pytest.mark.parametrize("stream", [False, True])
@pytest.mark.parametrize("carry", ["whole", "ids"])
def test_stored_search_after_a_wrapped_call(gateway, emulator, stream,
                                            carry):
    """A stored request whose whole history calls a found function, and
    whose model searches for another: the continuation goes on from the
    first call with the search's output alone (the history the upstream
    keeps is the first call's, its call rewritten to call_tool's), and the
    client gets the new function's call."""
    other = "memory_add_observations"
    gw = gateway(server="toolsearch on; " + HEADER)
    emulator.responses_script = responses_seeker(
        TARGET, ARGS, "memory create entities", "done")
    body = first_request(stream, shape="agents")
    body.pop("store", None)
    resp = response_of(send(gw, body), stream)
    nxt = carried(carry, body, resp, [output_for(calls_of(resp)[0])])
    resp = response_of(send(gw, nxt), stream)
    emulator.responses_script = responses_seeker(
        other, {"observations": []}, "memory add observations", "done")
    nxt = carried(carry, nxt, resp, [{"role": "user",
                                      "content": "Note that she likes tea."}])
    resp, (first, second) = stored_turn(gw, emulator, nxt, stream)
    assert [c["name"] for c in calls_of(resp)] == [other]
    assert [it["name"] for it in first["input"]
            if it.get("type") == "function_call"] == [
        "tool_search", "call_tool"]
    assert [it["type"] for it in second["input"]] == ["function_call_output"]
    assert first["tools"] == second["tools"] and other not in names(first)


@pytest.mark.parametrize("stream", [False, True])
def test_stored_answer_that_is_a_wrapper_call_alone(gateway, emulator,
                                                    stream):
    """A stored exchange whose last answer is the call_tool call alone
    (no text, no reasoning): in a stream, the client's response opens
    with the last call's response.created and in_progress, held until
    then, and the call follows under output_index 0."""
    seek = responses_seeker(TARGET, ARGS, "memory create entities", "done")

    def model(body, ctx):
        reply = seek(body, ctx)
        return ResponsesReply(None, reply.calls) if reply.calls else reply
    emulator.responses_script = model
    gw = gateway(server="toolsearch on;")
    body = first_request(stream, shape="agents")
    body.pop("store", None)
    r = send(gw, body)
    resp = response_of(r, stream)
    assert [it["type"] for it in resp["output"]] == ["function_call"]
    assert calls_of(resp)[0]["name"] == TARGET
    if stream:
        kinds = [d["type"] for _, d in sse_events(r.body)]
        assert kinds[:3] == ["response.created", "response.in_progress",
                             "response.output_item.added"]
    nxt = dict(body, previous_response_id=resp["id"],
               input=[output_for(calls_of(resp)[0])])
    assert text_of(response_of(send(gw, nxt), stream)) == "done"


def test_wrapper_name_taken_by_a_client_function(gw, emulator):
    body = first_request(False)
    body["tools"].insert(0, {"type": "function", "name": "call_tool",
                             "description": "the client's own",
                             "parameters": {"type": "object",
                                            "properties": {}}})
    resp = response_of(send(gw, body), False)
    assert [c["name"] for c in calls_of(resp)] == [TARGET]
    first, second = upstream_bodies(emulator)
    assert TARGET in names(second)
