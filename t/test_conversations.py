"""Responses requests in a conversation (OpenAI's Conversations API: the
upstream keeps the conversation's items; each response's input and
output items are added to it) through a real nginx with the module and
the emulator playing both APIs strictly (t/emulator_conversations.py):
the gateway runs the search in the conversation, each continuation goes
on in it with the searches' outputs alone, so what the conversation
keeps is every call answered, of a function every request declares
(the call wrapper keeps tools[] the same), and later turns go on from
it.  A continuation the upstream refused leaves the search call open in
the conversation: the client gets the error, and the next request on it
the upstream's refusal (docs/gateway-search.md, "Server-held state")."""

import json

import pytest

from conftest import request
from emulator import ApiError, Fault
from emulator_responses import ResponsesReply, responses_seeker
from responses_fixtures import sse_events, tool_bytes
from test_responses import (ARGS, TARGET, calls_of, first_request,
                            history_caller, names, output_for, response_of,
                            send, sent_as_is, text_of, upstream_bodies)

SEARCH = "tool_search"
WRAPPER = "call_tool"


@pytest.fixture
def gw(gateway, emulator):
    """`toolsearch on;` and nothing else, and a model that searches."""
    emulator.responses_script = responses_seeker(
        TARGET, ARGS, "memory create entities", "done")
    return gateway(server="toolsearch on; add_header X-Toolsearch-Found "
                   "$toolsearch_found_tools always;")


def api(gw, method, path, body=None):
    data = None if body is None else json.dumps(body).encode()
    r = request(gw, method, path, data,
                [("Content-Type", "application/json")])
    return r.status, json.loads(r.body)


def new_conversation(gw):
    """A conversation made through the gateway, as a client makes it."""
    status, conv = api(gw, "POST", "/v1/conversations", {})
    assert status == 200 and conv["object"] == "conversation", conv
    return conv["id"]


def conversation_items(gw, conv):
    status, out = api(gw, "GET",
                      "/v1/conversations/%s/items?order=asc&limit=100" % conv)
    assert status == 200 and not out["has_more"], out
    return out["data"]


def conv_body(stream, conv, store=None, **kw):
    body = first_request(stream, shape="agents")
    body.pop("store", None)
    if store is not None:
        body["store"] = store
    body["conversation"] = conv
    body.update(kw)
    return body


def conv_turn(gw, emulator, body, stream):
    """One turn in the conversation through the gateway: every upstream
    call accepted, in the conversation, one call an answer, tools[] the
    same on every call, at most half the client's tool bytes; the
    client's response and the upstream bodies."""
    emulator.reset()
    r = send(gw, body)
    assert r.header("X-Toolsearch-Decision") == "deferred_gateway"
    assert r.header("X-Toolsearch-Found") == "wrapper"
    resp = response_of(r, stream)
    bodies = upstream_bodies(emulator)
    client = tool_bytes(json.dumps(body).encode())
    for b in bodies:
        assert b["conversation"] == body["conversation"]
        assert "previous_response_id" not in b
        assert b["parallel_tool_calls"] is False
        assert b["tools"] == bodies[0]["tools"]
        assert names(b)[-2:] == [SEARCH, WRAPPER]
        assert TARGET in b["instructions"]
        assert tool_bytes(json.dumps(b).encode()) <= client * 0.5
    conv = body["conversation"]
    assert resp["conversation"] == {"id": conv if isinstance(conv, str)
                                    else conv["id"]}
    return resp, bodies


def assert_all_answered(items, declared):
    """What the conversation keeps: every call of a declared function,
    every call but the client's last answered."""
    calls = [it for it in items if it["type"] == "function_call"]
    outs = {it["call_id"] for it in items
            if it["type"] == "function_call_output"}
    assert {c["name"] for c in calls} <= set(declared)
    return [c["call_id"] for c in calls if c["call_id"] not in outs]


@pytest.mark.parametrize("stream", [False, True])
@pytest.mark.parametrize("store", [None, False])
@pytest.mark.parametrize("form", ["id", "object"])
def test_conversation_searches_over_turns(gw, emulator, stream, store, form):
    """Turn 1 searches in the conversation: the continuation goes on in
    it with the search's output alone, and the client gets one response
    that calls the found tool.  The conversation keeps the exchange, every
    call answered but the client's; turn 2 answers that call; turn 3
    calls the tool again through the wrapper, its definition in the
    conversation's search output."""
    conv = new_conversation(gw)
    ref = conv if form == "id" else {"id": conv}
    body = conv_body(stream, ref, store)
    resp, (first, second) = conv_turn(gw, emulator, body, stream)
    assert [c["name"] for c in calls_of(resp)] == [TARGET]
    assert json.loads(calls_of(resp)[0]["arguments"]) == ARGS
    assert first["input"] == body["input"]
    [out] = second["input"]
    assert out["type"] == "function_call_output"
    assert "\n\nTool: %s\n" % TARGET in out["output"]
    declared = names(first)
    items = conversation_items(gw, conv)
    assert assert_all_answered(items, declared) == \
        [calls_of(resp)[0]["call_id"]]
    # the client's call is the wrapper's call the conversation keeps
    assert [it["name"] for it in items
            if it["type"] == "function_call"] == [SEARCH, WRAPPER]

    nxt = dict(body, input=[output_for(calls_of(resp)[0])])
    resp2, [b2] = conv_turn(gw, emulator, nxt, stream)
    assert text_of(resp2) == "done" and b2["input"] == nxt["input"]

    nxt = dict(body, input=[{"role": "user", "content": "And Bob too."}])
    resp3, [b3] = conv_turn(gw, emulator, nxt, stream)
    [call] = calls_of(resp3)
    assert call["name"] == TARGET and json.loads(call["arguments"]) == ARGS
    nxt = dict(body, input=[output_for(call)])
    resp4, [b4] = conv_turn(gw, emulator, nxt, stream)
    assert text_of(resp4) == "done"
    items = conversation_items(gw, conv)
    assert assert_all_answered(items, declared) == []
    # the prefix the upstream caches: the same bytes on every call of
    # every turn
    for b in (second, b2, b3, b4):
        assert b["tools"] == first["tools"]
        assert b["instructions"] == first["instructions"]


@pytest.mark.parametrize("stream", [False, True])
def test_conversation_response_id_holds_the_exchange(gw, emulator, stream):
    """The client's response id is the last call's, whose stored context
    is the whole exchange: a client that branches from it with
    previous_response_id (no conversation) goes on from every call
    answered."""
    conv = new_conversation(gw)
    body = conv_body(stream, conv)
    resp, _ = conv_turn(gw, emulator, body, stream)
    nxt = dict(body, previous_response_id=resp["id"],
               input=[output_for(calls_of(resp)[0])])
    del nxt["conversation"]
    emulator.reset()
    r = send(gw, nxt)
    assert text_of(response_of(r, stream)) == "done"
    upstream_bodies(emulator)


@pytest.mark.parametrize("stream", [False, True])
def test_conversation_with_items_made_outside(gw, emulator, stream):
    """A conversation created with items, and items added between turns
    through the Conversations API: the turn sees them and searches."""
    status, conv = api(gw, "POST", "/v1/conversations", {
        "metadata": {"topic": "memory"},
        "items": [{"type": "message", "role": "user",
                   "content": "We keep notes on people."}]})
    assert status == 200
    status, _ = api(gw, "POST", "/v1/conversations/%s/items" % conv["id"],
                    {"items": [{"role": "user", "content": "Alice is one."}]})
    assert status == 200
    resp, bodies = conv_turn(gw, emulator, conv_body(stream, conv["id"]),
                             stream)
    assert len(bodies) == 2 and calls_of(resp)[0]["name"] == TARGET
    items = conversation_items(gw, conv["id"])
    assert items[0]["content"][0]["text"] == "We keep notes on people."


def test_conversation_parallel_calls_pass(gw, emulator):
    """parallel_tool_calls true: an answer could hold the search beside a
    client call, and the search's would stay open in the conversation
    (server_state, byte-identical)."""
    conv = new_conversation(gw)
    emulator.reset()
    data = json.dumps(conv_body(False, conv,
                                parallel_tool_calls=True)).encode()
    r = send(gw, data)
    assert r.status == 200
    assert r.header("X-Toolsearch-Decision") == "server_state"
    sent_as_is(emulator, data)


def test_conversation_with_previous_response_id_passes(gw, emulator):
    """Both at once is the upstream's to refuse: the body reaches it as
    it came and the client gets its error."""
    conv = new_conversation(gw)
    emulator.reset()
    data = json.dumps(conv_body(False, conv,
                                previous_response_id="resp_x")).encode()
    r = send(gw, data)
    assert r.header("X-Toolsearch-Decision") == "server_state"
    sent_as_is(emulator, data)
    assert r.status == 400
    assert json.loads(r.body)["error"]["code"] == \
        "mutually_exclusive_parameters"


def test_unknown_conversation_is_the_upstreams_error(gw, emulator):
    emulator.reset()
    r = send(gw, conv_body(False, "conv_unknown"))
    assert r.status == 404
    assert "conv_unknown" in json.loads(r.body)["error"]["message"]
    assert len(emulator.requests) == 1


def seek_failing_on(second, emulator):
    calls = []
    seek = responses_seeker(TARGET, ARGS, "memory create entities", "done")

    def model(body, ctx):
        calls.append(1)
        reply = seek(body, ctx)
        return second(reply) if len(calls) == 2 else reply
    emulator.responses_script = model
    return calls


def assert_client_error(r, stream, status, message=None):
    if stream:
        assert r.status == 200
        events = sse_events(r.body)
        assert events[-1][0] == "error"
        assert not any(d["type"] == "response.completed"
                       for _, d in events)
        if message:
            assert events[-1][1]["message"] == message
    else:
        assert r.status == status
        error = json.loads(r.body)["error"]
        assert message is None or error["message"] == message


@pytest.mark.parametrize("stream", [False, True])
def test_broken_continuation_leaves_the_conversation_whole(gw, emulator,
                                                           stream):
    """The continuation's answer breaks on the way (the upstream made
    it, and the conversation took its items, as it would without the
    gateway): the client gets an error it can tell; the conversation
    keeps the search answered, and the client's retry of its turn goes
    on."""
    conv = new_conversation(gw)
    body = conv_body(stream, conv)
    calls = seek_failing_on(
        lambda reply: Fault(ResponsesReply("I will store Alice."), 60,
                            "close"), emulator)
    emulator.reset()
    r = send(gw, body)
    assert len(calls) == 2
    assert_client_error(r, stream, 502)
    items = conversation_items(gw, conv)
    assert assert_all_answered(items, [SEARCH, WRAPPER]) == []
    assert items[-1]["content"][0]["text"] == "I will store Alice."
    emulator.responses_script = responses_seeker(
        TARGET, ARGS, "memory create entities", "done")
    resp, _ = conv_turn(gw, emulator, body, stream)
    assert calls_of(resp)[0]["name"] == TARGET


@pytest.mark.parametrize("stream", [False, True])
@pytest.mark.parametrize("status", [429, 500])
def test_refused_continuation_is_the_named_limit(gw, emulator, stream,
                                                 status):
    """The upstream refuses the continuation: the client gets its error as
    it came, and the conversation keeps the search call the refused
    continuation would have answered (the limit docs/gateway-search.md
    names): the next request on it is refused by the upstream, and that
    refusal reaches the client unchanged, never a success.  Adding the
    call's output through the Conversations API makes it usable again."""
    conv = new_conversation(gw)
    body = conv_body(stream, conv)
    calls = seek_failing_on(
        lambda reply: ApiError("upstream says no", status, "server_error"),
        emulator)
    emulator.reset()
    r = send(gw, body)
    assert len(calls) == 2
    assert_client_error(r, stream, status, "upstream says no")
    [open_call] = assert_all_answered(conversation_items(gw, conv),
                                      [SEARCH, WRAPPER])
    emulator.responses_script = responses_seeker(
        TARGET, ARGS, "memory create entities", "done")
    emulator.reset()
    r = send(gw, body)
    assert r.status == 400
    assert open_call in json.loads(r.body)["error"]["message"]
    status_, _ = api(gw, "POST", "/v1/conversations/%s/items" % conv,
                     {"items": [{"type": "function_call_output",
                                 "call_id": open_call,
                                 "output": "interrupted"}]})
    assert status_ == 200
    resp, _ = conv_turn(gw, emulator, body, stream)
    assert calls_of(resp)[0]["name"] == TARGET


def test_emulator_conversations_are_strict(gateway, emulator):
    """The Conversations API as the emulator plays it, checked directly."""
    gw = gateway(server="toolsearch off;")
    status, err = api(gw, "GET", "/v1/conversations/conv_nope")
    assert status == 404 and "conv_nope" in err["error"]["message"]
    status, conv = api(gw, "POST", "/v1/conversations", {"items": [
        {"role": "user", "content": "one"},
        {"role": "user", "content": "two"}]})
    assert status == 200 and set(conv) == {"id", "object", "created_at",
                                           "metadata"}
    path = "/v1/conversations/%s/items" % conv["id"]
    status, out = api(gw, "GET", path + "?limit=1")
    assert out["data"][0]["content"] == [{"type": "input_text",
                                          "text": "two"}]
    assert out["has_more"] is True
    status, out = api(gw, "GET", path + "?order=asc&after=" +
                      out["first_id"])
    assert status == 200 and out["data"] == []
    status, _ = api(gw, "GET", path + "?after=msg_unknown")
    assert status == 404
    status, err = api(gw, "POST", path, {"items": [
        {"type": "function_call", "id": "msg_1", "call_id": "c",
         "name": "f", "arguments": "{}"}]})
    assert status == 400 and "begins with 'fc'" in err["error"]["message"]
    status, out = api(gw, "GET", path + "?order=asc")
    status, err = api(gw, "POST", path, {"items": [
        {"type": "message", "id": out["data"][0]["id"], "role": "user",
         "content": "again"}]})
    assert err["error"]["code"] == "item_already_in_conversation"
    status, err = api(gw, "POST", path, {"items": [{"role": "user",
                                                    "content": "x"}] * 21})
    assert status == 400
    # an unanswered call in the conversation refuses the next response
    api(gw, "POST", path, {"items": [
        {"type": "function_call", "call_id": "c1",
         "name": TARGET, "arguments": "{}"}]})
    body = conv_body(False, conv["id"])
    r = send(gw, body)
    assert r.status == 400 and "c1" in r.body.decode()
    body["input"] = [{"type": "function_call_output", "call_id": "c1",
                      "output": "ok"}]
    r = send(gw, body)
    assert r.status == 200
    assert json.loads(r.body)["conversation"] == {"id": conv["id"]}
    status, _ = api(gw, "DELETE", "/v1/conversations/" + conv["id"])
    assert status == 200 and send(gw, body).status == 404


@pytest.mark.parametrize("stream", [False, True])
def test_conversation_answer_that_is_a_call_alone(gw, emulator, stream):
    """A continuation whose answer is the wrapper's call and nothing else
    (no text before it): in a stream that call opens the client's
    response, held back while the search ran."""
    seek = responses_seeker(TARGET, ARGS, "memory create entities", "done")

    def model(body, ctx):
        reply = seek(body, ctx)
        return ResponsesReply(None, reply.calls) if reply.calls and \
            reply.calls[0][0] == WRAPPER else reply
    emulator.responses_script = model
    conv = new_conversation(gw)
    body = conv_body(stream, conv)
    resp, bodies = conv_turn(gw, emulator, body, stream)
    assert len(bodies) == 2
    assert [it["type"] for it in resp["output"]] == ["function_call"]
    assert calls_of(resp)[0]["name"] == TARGET


@pytest.mark.parametrize("stream", [False, True])
def test_conversation_with_found_tools_loaded(gateway, emulator, stream):
    """toolsearch_found_tools tools: the found function loads in tools[]
    on the continuation; a later turn does not declare it, and the model
    calling it as the conversation shows it gets it loaded (a select: of
    it, answered in the loop) and the client that call."""
    emulator.responses_script = history_caller()
    gw = gateway(server="toolsearch on; toolsearch_found_tools tools;")
    conv = new_conversation(gw)
    body = conv_body(stream, conv)
    emulator.reset()
    resp = response_of(send(gw, body), stream)
    first, second = upstream_bodies(emulator)
    assert TARGET not in names(first) and TARGET in names(second)
    assert second["input"][0]["type"] == "function_call_output"
    nxt = dict(body, input=[output_for(calls_of(resp)[0])])
    emulator.reset()
    assert text_of(response_of(send(gw, nxt), stream)) == "done"
    nxt = dict(body, input=[{"role": "user", "content": "And Bob too."}])
    emulator.reset()
    resp3 = response_of(send(gw, nxt), stream)
    first, second = upstream_bodies(emulator)
    assert TARGET not in names(first) and TARGET in names(second)
    assert [c["call_id"] for c in calls_of(resp3)] == ["call_after"]
    assert assert_all_answered(conversation_items(gw, conv),
                               [SEARCH, TARGET]) == ["call_after"]
