"""Chat Completions through a real nginx with the module and the
emulator playing OpenAI's API and a model: gateway-run search for any
upstream.  The requests are real clients' recorded Chat Completions
sessions (opencode's first request for most tests; t/fixtures/openai),
and, for the clients not recorded in this format yet, their Messages
sessions in the shape the AI SDK's openai-compatible provider gives them
(t/chat_fixtures.py).  The client gets one completion; the upstream, which validates every
request as the API does, sees the search function, the tools it loads,
and never a deferred one."""

import json
import os

import pytest

from conftest import assert_search_then_load, request
from chat_fixtures import (CLIENT_HEADERS, RECORDED, chat_requests,
                           recorded_requests, sse_chunks, tool_bytes)
from emulator import ApiError, ChatReply, chat_seeker

TARGET = "memory_create_entities"
ARGS = {"entities": [{"name": "Alice", "entityType": "person",
                      "observations": ["likes tea"]}]}
URI = "/v1/chat/completions"
HEADER = ("add_header X-Toolsearch-Format $toolsearch_format always;"
          "add_header X-Toolsearch-Searches $toolsearch_searches always;")


@pytest.fixture
def gw(gateway, emulator):
    """`toolsearch on;` and nothing else, and a model that searches."""
    emulator.chat_script = chat_seeker(TARGET, ARGS, "memory create entities",
                                       "done")
    return gateway(server="toolsearch on; " + HEADER)


def first_request(stream):
    """opencode's first request with tools, as it sent it."""
    body = json.loads(recorded_requests("opencode")[0][0])
    if not stream:
        del body["stream"], body["stream_options"]
    return body


def send(gw, body, uri=URI, headers=CLIENT_HEADERS):
    data = body if isinstance(body, bytes) else \
        json.dumps(body, separators=(",", ":")).encode()
    return request(gw, "POST", uri, data, headers)


def completion(r, stream):
    """The client's answer as one completion: id, message, finish, usage;
    for a stream, checked to be one: one id, indexes from 0, one finish,
    [DONE] once and last."""
    assert r.status == 200, r.body[:500]
    if not stream:
        c = json.loads(r.body)
        return c["id"], c["choices"][0]["message"], \
            c["choices"][0]["finish_reason"], c.get("usage")
    chunks = sse_chunks(r.body)
    assert chunks.count("[DONE]") == 1 and chunks[-1] == "[DONE]"
    chunks = chunks[:-1]
    ids = {c["id"] for c in chunks}
    assert len(ids) == 1, ids
    text, calls, finishes, usage = "", {}, [], None
    for c in chunks:
        if c.get("usage"):
            assert usage is None, "usage twice"
            usage = c["usage"]
        for ch in c["choices"]:
            d = ch["delta"]
            text += d.get("content") or ""
            for tc in d.get("tool_calls", []):
                call = calls.setdefault(tc["index"], {"arguments": ""})
                if "id" in tc:
                    assert "id" not in call, "a call started twice"
                    call.update(id=tc["id"], name=tc["function"]["name"])
                call["arguments"] += tc["function"].get("arguments", "")
            if ch.get("finish_reason"):
                finishes.append(ch["finish_reason"])
    assert len(finishes) == 1, finishes
    assert sorted(calls) == list(range(len(calls))), sorted(calls)
    message = {"content": text or None}
    if calls:
        message["tool_calls"] = [
            {"id": calls[i]["id"], "function": {
                "name": calls[i]["name"],
                "arguments": calls[i]["arguments"]}} for i in sorted(calls)]
    return ids.pop(), message, finishes[0], usage


def upstream_bodies(emulator):
    for rec in emulator.requests:
        assert rec.status == 200, getattr(rec, "error", rec.status)
    return [json.loads(rec.body) for rec in emulator.requests]


def function_names(body):
    return [t["function"]["name"] for t in body.get("tools", [])]


@pytest.mark.parametrize("stream", [False, True])
@pytest.mark.parametrize("uri", [URI, "/openai/v1/chat/completions"])
def test_search_then_call_is_one_completion(gw, emulator, stream, uri):
    body = first_request(stream)
    r = send(gw, body, uri)
    _, message, finish, usage = completion(r, stream)
    assert r.header("X-Toolsearch-Format") == "chat_completions"
    assert r.header("X-Toolsearch-Decision") == "deferred_gateway"
    if not stream:
        # a stream's headers leave before its searches run
        assert r.header("X-Toolsearch-Searches") == "1"
    # the client sees the call of the tool found, not the search
    assert finish == "tool_calls"
    calls = message["tool_calls"]
    assert [c["function"]["name"] for c in calls] == [TARGET]
    assert json.loads(calls[0]["function"]["arguments"]) == ARGS
    ups = upstream_bodies(emulator)
    assert len(ups) == 2
    first, second = ups
    assert TARGET not in function_names(first)
    assert "tool_search" in function_names(first)
    # the call wrapper: the found function stays deferred, tools[] the
    # same on both calls, and the search's result gives its definition
    assert function_names(first)[-2:] == ["tool_search", "call_tool"]
    assert second["tools"] == first["tools"]
    assert "\n\nTool: %s\n" % TARGET in second["messages"][-1]["content"]
    # the announcement names what the search can load
    assert TARGET in first["messages"][0]["content"]
    # the continuation carries the search call and its answer
    assert second["messages"][-2]["tool_calls"][0]["function"]["name"] \
        == "tool_search"
    assert second["messages"][-1]["role"] == "tool"
    assert "Loaded: " + TARGET in second["messages"][-1]["content"]
    # usage summed over both calls
    sent = [u for u in (1, 2)]
    assert usage["completion_tokens"] == 10 * len(sent)
    assert usage["prompt_tokens"] == sum(
        max(1, len(rec.body) // 4) for rec in emulator.requests)
    # at most half the model-visible tool bytes reach the upstream
    client = tool_bytes(json.dumps(body).encode())
    for rec in emulator.requests:
        assert tool_bytes(rec.body) <= client * 0.5, \
            (tool_bytes(rec.body), client)


@pytest.mark.parametrize("stream", [False, True])
def test_next_turn_loads_the_called_tool_from_history(gateway, emulator,
                                                      stream):
    """toolsearch_found_tools tools: found functions join tools[]."""
    emulator.chat_script = chat_seeker(TARGET, ARGS, "memory create entities",
                                       "done")
    gw = gateway(server="toolsearch on; toolsearch_found_tools tools;")
    body = first_request(stream)
    r = send(gw, body)
    _, message, _, _ = completion(r, stream)
    turn1 = upstream_bodies(emulator)
    emulator.reset()
    call = message["tool_calls"][0]
    body["messages"] += [
        {"role": "assistant", "content": message["content"],
         "tool_calls": [{"id": call["id"], "type": "function",
                         "function": call["function"]}]},
        {"role": "tool", "tool_call_id": call["id"],
         "content": "created Alice"}]
    r = send(gw, body)
    _, message, finish, _ = completion(r, stream)
    assert (message["content"], finish) == ("done", "stop")
    turn2 = upstream_bodies(emulator)
    assert len(turn2) == 1
    tools1, tools2 = turn1[-1]["tools"], turn2[0]["tools"]
    assert TARGET in function_names(turn2[0])
    # the prompt prefix stays: the same system message and the same tools
    # up to the search function, the loaded tool after it
    assert turn2[0]["messages"][0] == turn1[0]["messages"][0]
    cut = function_names(turn1[-1]).index("tool_search") + 1
    assert tools2[:cut] == tools1[:cut]
    assert function_names(turn2[0])[cut:] == [TARGET]


def test_tool_choice_naming_a_deferred_tool_loads_it(gw, emulator):
    body = first_request(False)
    body["tool_choice"] = {"type": "function",
                           "function": {"name": TARGET}}
    r = send(gw, body)
    _, message, _, _ = completion(r, False)
    assert message["tool_calls"][0]["function"]["name"] == TARGET
    ups = upstream_bodies(emulator)
    assert len(ups) == 1 and TARGET in function_names(ups[0])


def test_strict_and_other_fields_pass_with_the_tools(gw, emulator):
    body = first_request(True)
    body.update(parallel_tool_calls=False, reasoning_effort="low")
    for t in body["tools"]:
        t["function"]["strict"] = False
    r = send(gw, body)
    completion(r, True)
    for up in upstream_bodies(emulator):
        assert up["parallel_tool_calls"] is False
        assert up["reasoning_effort"] == "low"
        assert all(t["function"].get("strict") is False
                   for t in up["tools"]
                   if t["function"]["name"] not in ("tool_search",
                                                    "call_tool"))


@pytest.mark.parametrize("stream", [False, True])
def test_search_mixed_with_a_client_call(gw, emulator, stream):
    """The search call leaves the answer; the client's call stays, at
    index 0, and the client runs it: no second call."""
    emulator.chat_script = lambda body: ChatReply(None, [
        ("tool_search", {"query": "memory"}, "call_s"),
        ("bash", {"command": "ls"}, "call_b")])
    r = send(gw, first_request(stream))
    _, message, finish, _ = completion(r, stream)
    assert finish == "tool_calls"
    assert [c["function"]["name"] for c in message["tool_calls"]] == ["bash"]
    assert len(upstream_bodies(emulator)) == 1


@pytest.mark.parametrize("stream", [False, True])
def test_call_of_a_deferred_tool_loads_it(gw, emulator, stream):
    """A call of a deferred tool never loaded is a select: of it."""
    def model(body):
        if TARGET in function_names(body):
            return chat_seeker(TARGET, ARGS, "", "done")(body)
        return ChatReply(None, [(TARGET, ARGS, "call_direct")])
    ups = []
    emulator.chat_script = lambda body: ups.append(body) or model(body)
    r = send(gw, first_request(stream))
    _, message, _, _ = completion(r, stream)
    assert message["tool_calls"][0]["function"]["name"] == TARGET
    # the emulator took the first answer's call of an undeclared tool
    # back only as the gateway's search: every request was valid
    assert len(upstream_bodies(emulator)) == 2
    assert "select:" + TARGET in \
        ups[1]["messages"][-2]["tool_calls"][0]["function"]["arguments"]


@pytest.mark.parametrize("stream", [False, True])
def test_search_budget_ends_in_text(gateway, emulator, stream):
    """A model that only searches gets its budget, then the client gets a
    text answer: no dangling call."""
    emulator.chat_script = lambda body: ChatReply(None, [
        ("tool_search", {"query": "nothing like this"}, "call_%d"
         % len(body["messages"]))])
    gw = gateway(server="toolsearch on; toolsearch_max_searches 2;")
    r = send(gw, first_request(stream))
    _, message, finish, _ = completion(r, stream)
    assert finish == "stop" and "tool_calls" not in message
    assert message["content"]
    # two searches ran; the third call's search did not
    assert len(upstream_bodies(emulator)) == 3


@pytest.mark.parametrize("stream", [False, True])
@pytest.mark.parametrize("status", [429, 500])
def test_error_on_the_continuation_reaches_the_client(gw, emulator, stream,
                                                      status):
    calls = []
    seek = chat_seeker(TARGET, ARGS, "memory create entities", "done")

    def model(body):
        calls.append(1)
        if len(calls) == 2:
            return ApiError("upstream says no", status, "server_error")
        return seek(body)
    emulator.chat_script = model
    r = send(gw, first_request(stream))
    if stream:
        assert r.status == 200
        chunks = sse_chunks(r.body)
        assert chunks[-1]["error"]["message"] == "upstream says no"
        assert "[DONE]" not in chunks
    else:
        # the upstream's own error, as it came: status and document
        assert r.status == status
        assert json.loads(r.body)["error"]["message"] == "upstream says no"


def test_error_on_the_first_call_passes_as_it_came(gw, emulator):
    emulator.chat_script = lambda body: ApiError("bad key", 401,
                                                 "invalid_request_error")
    r = send(gw, first_request(False))
    assert r.status == 401
    assert json.loads(r.body)["error"]["message"] == "bad key"


def sent_as_is(emulator, data):
    assert len(emulator.requests) == 1
    assert emulator.requests[0].body == data


@pytest.mark.parametrize("case", ["n2", "malformed", "client_search",
                                  "no_tools", "not_object"])
def test_passes_byte_identical(gw, emulator, case):
    body = first_request(False)
    if case == "n2":
        body["n"] = 2
    elif case == "client_search":
        # qwen-code's own search: its tool_search and tool_call functions
        body["tools"].append({"type": "function", "function": {
            "name": "tool_search", "description": "Search the MCP tools",
            "parameters": {"type": "object", "properties": {}}}})
    elif case == "no_tools":
        del body["tools"], body["tool_choice"]
    data = json.dumps(body).encode()
    if case == "malformed":
        data = data[:-1]
    elif case == "not_object":
        data = b"[" + data + b"]"
    r = send(gw, data)
    assert r.status in (200, 400)
    sent_as_is(emulator, data)
    assert r.header("X-Toolsearch-Decision") != "deferred_gateway"


@pytest.mark.parametrize("stream", [False, True])
@pytest.mark.parametrize("how", ["close", "reset"])
def test_broken_continuation_is_an_error(gw, emulator, stream, how):
    """The continuation's answer breaks off: a stream ends with an error
    line, a JSON answer is a 502 with an error document; never a
    completion that looks whole."""
    from emulator import Fault
    calls = []
    seek = chat_seeker(TARGET, ARGS, "memory create entities", "done")

    def model(body):
        calls.append(1)
        reply = seek(body)
        return Fault(reply, 40, how) if len(calls) == 2 else reply
    emulator.chat_script = model
    r = send(gw, first_request(stream))
    if stream:
        chunks = sse_chunks(r.body) if r.status == 200 else []
        assert r.status == 200 and "error" in chunks[-1]
        assert "[DONE]" not in chunks
    else:
        assert r.status == 502
        assert "error" in json.loads(r.body)


CLIENTS = ["opencode", "kilo", "cline", "continue", "qwen-code-nosearch",
           "ai-sdk", "langchain", "mastra"]


@pytest.mark.parametrize("stream", [False, True])
@pytest.mark.parametrize("client", CLIENTS)
def test_client_session_completes(gateway, emulator, client, stream):
    """Each recorded client's session in Chat Completions, with
    `toolsearch on;` alone: the model searches, calls the memory server's
    create_entities by the client's name for it, and answers on the next
    turn; at most half the client's tool bytes reach the upstream."""
    body = json.loads(chat_requests(client, stream)[0])
    target = [n for n in function_names(body)
              if n.endswith("create_entities")][0]
    emulator.chat_script = chat_seeker(target, ARGS, "memory create "
                                       "entities", "done")
    gw = gateway(server="toolsearch on;")
    r = send(gw, body)
    _, message, finish, _ = completion(r, stream)
    assert finish == "tool_calls"
    call = message["tool_calls"][0]
    assert call["function"]["name"] == target
    body["messages"] += [
        {"role": "assistant", "content": message["content"],
         "tool_calls": [{"id": call["id"], "type": "function",
                         "function": call["function"]}]},
        {"role": "tool", "tool_call_id": call["id"], "content": "ok"}]
    r = send(gw, body)
    _, message, finish, _ = completion(r, stream)
    assert (message["content"], finish) == ("done", "stop")
    sent = tool_bytes(json.dumps(body).encode())
    for rec in emulator.requests:
        assert rec.status == 200, rec.error
        assert tool_bytes(rec.body) <= sent * 0.5, \
            (client, tool_bytes(rec.body), sent)


@pytest.mark.parametrize("stream", [False, True])
@pytest.mark.parametrize("client", RECORDED)
def test_recorded_session_completes(gateway, emulator, client, stream):
    """Each client's recorded Chat Completions session, as it sent it
    (body and headers), with `toolsearch on;` alone: its first request
    gets one completion calling the memory server's create_entities (the
    model searched for it), its recorded next turn, which answers that
    call, gets the final text, and at most half of its tool bytes reach
    the upstream on any call."""
    session = recorded_requests(client, stream)
    first = json.loads(session[0][0])
    target = [n for n in function_names(first)
              if n.endswith("create_entities")][0]
    emulator.chat_script = chat_seeker(target, ARGS, "memory create "
                                       "entities", "done")
    gw = gateway(server="toolsearch on;")
    r = send(gw, session[0][0], headers=session[0][1])
    _, message, finish, _ = completion(r, stream)
    assert finish == "tool_calls"
    assert [c["function"]["name"] for c in message["tool_calls"]] == \
        [target]
    r = send(gw, session[1][0], headers=session[1][1])
    _, message, finish, _ = completion(r, stream)
    assert (message["content"], finish) == ("done", "stop")
    assert_search_then_load(
        [(function_names(b), tool_bytes(rec.body)) for b, rec in
         zip(upstream_bodies(emulator), emulator.requests)],
        target, tool_bytes(session[0][0]))


@pytest.mark.parametrize("stream", [False, True])
def test_text_before_the_search_reaches_the_client(gw, emulator, stream):
    """What the model said before it searched is part of the completion,
    in a stream as in JSON."""
    seek = chat_seeker(TARGET, ARGS, "memory create entities", "done")

    def model(body):
        reply = seek(body)
        if reply.calls and reply.calls[0][0] == "tool_search":
            reply.content = "Let me search. "
        return reply
    emulator.chat_script = model
    r = send(gw, first_request(stream))
    _, message, _, _ = completion(r, stream)
    assert message["content"] == "Let me search. Calling %s." % TARGET
    # the upstream saw it too, with the search call
    assert upstream_bodies(emulator)[1]["messages"][-2]["content"] == \
        "Let me search. "


def test_hosted_search_only_passes_chat_completions(gateway, emulator):
    """toolsearch_search hosted: this API has no hosted search, so the
    request goes on as it came."""
    gw = gateway(server="toolsearch on; toolsearch_search hosted;")
    data = json.dumps(first_request(False)).encode()
    r = send(gw, data)
    sent_as_is(emulator, data)
    assert r.header("X-Toolsearch-Decision") == "upstream_unsupported"


@pytest.mark.parametrize("uri,word", [
    ("/v1/messages", "messages"), ("/v1/responses", "responses"),
    ("/openai/v1/responses/", "responses")])
def test_format_variable_and_responses_pass(gw, emulator, uri, word):
    """$toolsearch_format names the URI's format; a Responses request
    passes byte-identical for now."""
    data = json.dumps({"model": "gpt-5.4", "input": "hi", "tools": [
        {"type": "function", "name": "memory_create_entities",
         "parameters": {"type": "object"}}]}).encode()
    r = request(gw, "POST", uri, data, CLIENT_HEADERS)
    assert r.header("X-Toolsearch-Format") == word
    assert emulator.requests[0].body == data


def test_unit_fixtures_are_built_ones():
    """The bodies the engine's unit tests read (t/fixtures/chat) are the
    ones t/chat_fixtures.py builds."""
    here = os.path.join(os.path.dirname(__file__), "fixtures", "chat")
    for name, client, stream, i in (("opencode-002.json", "opencode",
                                     False, 1),
                                    ("kilo-001.json", "kilo", True, 0)):
        with open(os.path.join(here, name), "rb") as f:
            assert f.read() == chat_requests(client, stream=stream)[i], name


WRAPPER_HEADER = ("add_header X-Toolsearch-Found-Tools $toolsearch_found_tools "
                  "always;")


def answered_turn(body, message, result="created Alice"):
    """The client's next turn: the completion's message and its calls'
    results, as a client appends them."""
    body["messages"].append({
        "role": "assistant", "content": message["content"],
        "tool_calls": [{"id": c["id"], "type": "function",
                        "function": c["function"]}
                       for c in message["tool_calls"]]})
    body["messages"] += [{"role": "tool", "tool_call_id": c["id"],
                          "content": result}
                         for c in message["tool_calls"]]
    return body


@pytest.mark.parametrize("stream", [False, True])
def test_wrapper_next_turns_keep_the_prompt(gateway, emulator, stream):
    """The call wrapper (the default): the found function never enters
    tools[]; on the next turns the client's call of it goes back as the
    model's call of call_tool, after the search restored before it, the
    same bytes on every later turn; tools[] the same on every call."""
    emulator.chat_script = chat_seeker(TARGET, ARGS, "memory create entities",
                                       "done")
    gw = gateway(server="toolsearch on; " + WRAPPER_HEADER)
    body = first_request(stream)
    r = send(gw, body)
    assert r.header("X-Toolsearch-Found-Tools") == "wrapper"
    _, message, _, _ = completion(r, stream)
    assert [c["function"]["name"] for c in message["tool_calls"]] == [TARGET]
    turn1 = upstream_bodies(emulator)
    emulator.reset()

    r = send(gw, answered_turn(body, message))
    _, message, finish, _ = completion(r, stream)
    assert (message["content"], finish) == ("done", "stop")
    turn2 = upstream_bodies(emulator)
    assert len(turn2) == 1
    emulator.reset()

    body["messages"] += [{"role": "assistant", "content": "done"},
                         {"role": "user", "content": "thanks"}]
    emulator.chat_script = lambda b: ChatReply("welcome")
    r = send(gw, body)
    completion(r, stream)
    turn3 = upstream_bodies(emulator)

    assert turn1[0]["tools"] == turn1[1]["tools"] == turn2[0]["tools"] \
        == turn3[0]["tools"]
    assert TARGET not in function_names(turn2[0])
    # the client's messages up to its call, as turn 1 sent them
    n = len(turn1[0]["messages"])
    assert turn2[0]["messages"][:n] == turn1[0]["messages"]
    search, found, call, result = turn2[0]["messages"][n:n + 4]
    assert search["tool_calls"][0]["function"]["name"] == "tool_search"
    assert json.loads(search["tool_calls"][0]["function"]["arguments"]) == \
        {"query": "select:" + TARGET}
    assert found["tool_call_id"] == search["tool_calls"][0]["id"]
    assert "\n\nTool: %s\n" % TARGET in found["content"]
    fn = call["tool_calls"][0]["function"]
    assert fn["name"] == "call_tool"
    assert json.loads(fn["arguments"]) == {"name": TARGET, "arguments": ARGS}
    assert result["role"] == "tool"
    assert turn3[0]["messages"][:len(turn2[0]["messages"])] == \
        turn2[0]["messages"]


def test_wrapper_restore_is_byte_stable(gateway, emulator):
    """The bytes the next turn writes for the call (the restored search,
    the wrapper's call) are those of every turn after it: the upstream's
    prompt cache keeps them."""
    emulator.chat_script = chat_seeker(TARGET, ARGS, "memory create entities",
                                       "done")
    gw = gateway(server="toolsearch on;")
    body = first_request(False)
    _, message, _, _ = completion(send(gw, body), False)
    body = answered_turn(body, message)
    emulator.reset()
    completion(send(gw, body), False)
    up2 = emulator.requests[0].body
    body["messages"] += [{"role": "assistant", "content": "done"},
                         {"role": "user", "content": "thanks"}]
    emulator.reset()
    emulator.chat_script = lambda b: ChatReply("welcome")
    completion(send(gw, body), False)
    up3 = emulator.requests[0].body
    end = up2.index(b'"created Alice"') + len(b'"created Alice"')
    assert up3[:end] == up2[:end]
    assert b'"name":"call_tool"' in up2[:end]


@pytest.mark.parametrize("stream", [False, True])
def test_wrapper_invalid_call_is_answered_in_the_loop(gateway, emulator,
                                                      stream):
    """An invalid call of the wrapper gets a tool message with why and the
    loop goes on; the corrected call reaches the client as its tool's."""
    seek = chat_seeker(TARGET, ARGS, "memory create entities", "done")

    def model(body):
        last = body["messages"][-1]
        if last["role"] == "tool" and "Tool: " + TARGET in last["content"]:
            return ChatReply(None, [("call_tool", {"name": TARGET,
                                                   "arguments": {}},
                                     "call_bad")])
        if last["role"] == "tool" and last["tool_call_id"] == "call_bad":
            return ChatReply(None, [("call_tool", {"name": TARGET,
                                                   "arguments": ARGS},
                                     "call_target")])
        return seek(body)
    emulator.chat_script = model
    gw = gateway(server="toolsearch on;")
    r = send(gw, first_request(stream))
    _, message, finish, _ = completion(r, stream)
    assert finish == "tool_calls"
    assert [c["function"]["name"] for c in message["tool_calls"]] == [TARGET]
    assert message["tool_calls"][0]["id"] == "call_target"
    assert json.loads(message["tool_calls"][0]["function"]["arguments"]) \
        == ARGS
    ups = upstream_bodies(emulator)
    assert len(ups) == 3
    refused = ups[2]["messages"][-1]
    assert refused["role"] == "tool" and refused["tool_call_id"] == "call_bad"
    assert refused["content"].startswith("The call did not run")
    assert "entities" in refused["content"]
    assert "call_tool" not in r.body.decode()


@pytest.mark.parametrize("stream", [False, True])
def test_wrapper_refusals_are_bounded(gateway, emulator, stream):
    """A model that keeps calling the wrapper invalidly gets the budget,
    then its call reaches the client as a call of the tool it names."""
    seek = chat_seeker(TARGET, ARGS, "memory create entities", "done")

    def model(body):
        if "Tool: " + TARGET in json.dumps(body["messages"]):
            return ChatReply(None, [("call_tool", {"name": TARGET,
                                                   "arguments": {}},
                                     "call_bad_%d" % len(body["messages"]))])
        return seek(body)
    emulator.chat_script = model
    gw = gateway(server="toolsearch on; toolsearch_max_searches 2;")
    r = send(gw, first_request(stream))
    _, message, finish, _ = completion(r, stream)
    assert finish == "tool_calls"
    assert [c["function"]["name"] for c in message["tool_calls"]] == [TARGET]
    assert json.loads(message["tool_calls"][0]["function"]["arguments"]) \
        == {}
    # the search, two refusals, then the client
    assert len(upstream_bodies(emulator)) == 4


def first_seen(body):
    """A stream's tool calls in the order their first delta came:
    (index, id) each; every later delta of a call is checked to come
    before the next call begins, as openai-node's stream helper takes a
    new index for the end of the one before."""
    seen = []
    for c in sse_chunks(body)[:-1]:
        for ch in c["choices"]:
            for tc in ch["delta"].get("tool_calls", []):
                if not seen or seen[-1][0] != tc["index"]:
                    assert tc["index"] not in [i for i, _ in seen], \
                        "call %d came back after another" % tc["index"]
                    seen.append((tc["index"], tc.get("id")))
    return seen


@pytest.mark.parametrize("stream", [False, True])
@pytest.mark.parametrize("valid", [True, False])
@pytest.mark.parametrize("wrapper_first", [True, False])
def test_wrapper_call_keeps_its_place(gateway, emulator, stream, valid,
                                      wrapper_first):
    """A call of the wrapper beside a call of a loaded function reaches
    the client in the place the model gave it: in a stream under its own
    index, as soon as the next call begins, so the indexes run from 0 in
    the model's order.  An invalid one goes to the client too: the loop
    cannot go on with a client call in the answer."""
    seek = chat_seeker(TARGET, ARGS, "memory create entities", "done")
    wrapped = ("call_tool", {"name": TARGET,
                             "arguments": ARGS if valid else {}},
               "call_target")
    client = ("bash", {"command": "ls"}, "call_b")

    def model(body):
        last = body["messages"][-1]
        if last["role"] == "tool" and "Tool: " + TARGET in last["content"]:
            return ChatReply(None, [wrapped, client] if wrapper_first
                             else [client, wrapped])
        return seek(body)
    emulator.chat_script = model
    gw = gateway(server="toolsearch on;")
    r = send(gw, first_request(stream))
    _, message, finish, _ = completion(r, stream)
    assert finish == "tool_calls"
    order = [TARGET, "bash"] if wrapper_first else ["bash", TARGET]
    assert [c["function"]["name"] for c in message["tool_calls"]] == order
    ids = [c["id"] for c in message["tool_calls"]]
    assert ids == (["call_target", "call_b"] if wrapper_first
                   else ["call_b", "call_target"])
    target = message["tool_calls"][order.index(TARGET)]
    assert json.loads(target["function"]["arguments"]) == \
        (ARGS if valid else {})
    assert len(upstream_bodies(emulator)) == 2
    assert "call_tool" not in r.body.decode()
    if stream:
        assert first_seen(r.body) == list(enumerate(ids))


def test_wrapper_name_taken_by_a_client_function(gateway, emulator):
    """A client function named call_tool: found functions join tools[] as
    without the wrapper, and the client's call_tool stays its own."""
    emulator.chat_script = chat_seeker(TARGET, ARGS, "memory create entities",
                                       "done")
    gw = gateway(server="toolsearch on; " + WRAPPER_HEADER)
    body = first_request(False)
    body["tools"].insert(0, {"type": "function", "function": {
        "name": "call_tool", "description": "the client's own",
        "parameters": {"type": "object", "properties": {}}}})
    r = send(gw, body)
    assert r.header("X-Toolsearch-Found-Tools") == "tools"
    _, message, _, _ = completion(r, False)
    assert message["tool_calls"][0]["function"]["name"] == TARGET
    first, second = upstream_bodies(emulator)
    assert TARGET in function_names(second)
    assert function_names(second).index(TARGET) > \
        function_names(second).index("tool_search")
