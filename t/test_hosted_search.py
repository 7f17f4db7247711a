"""Hosted search end to end, without npm: the gateway defers a recorded
Claude Code request, the emulator plays Anthropic's servers (it runs the
hosted search and the model calls the tool it found in the same answer),
and the next turn carries the search blocks back."""

import gzip
import json

import pytest

from conftest import load_fixture, request
from emulator import Raw, seeker, sse_events
from test_gateway_search import message_of

TARGET = "mcp__memory__create_entities"
HOSTED = ("toolsearch on; toolsearch_upstream anthropic; "
          "toolsearch_search_blocks keep; %s")


def first_turn(emulator, gw, query, stream=True):
    emulator.script = seeker(TARGET, {"entities": []}, query, "Stored.")
    fx = load_fixture("ts-unset/002.json")
    body = json.loads(fx.body)
    body["stream"] = stream
    r = request(gw, "POST", fx.url, json.dumps(body).encode(), fx.headers)
    assert r.status == 200, r.body
    assert r.decision == "deferred_hosted"
    return fx, body, message_of(r, stream)


def next_turn(fx, body, msg):
    body["messages"] += [
        {"role": "assistant", "content": msg["content"]},
        {"role": "user", "content": [{"type": "tool_result",
                                      "tool_use_id": "toolu_emu_target",
                                      "content": "created"}]}]
    return json.dumps(body).encode()


@pytest.mark.parametrize("stream", [True, False], ids=["sse", "json"])
def test_search_call_and_next_turn(emulator, gateway, stream):
    gw = gateway(server=HOSTED % "")
    fx, body, msg = first_turn(emulator, gw, "memory create entities", stream)

    kinds = [b["type"] for b in msg["content"]]
    assert kinds == ["text", "server_tool_use", "tool_search_tool_result",
                     "tool_use"]
    use, result, call = msg["content"][1:]
    assert use["name"] == "tool_search_tool_bm25"
    assert use["id"].startswith("srvtoolu_")
    assert use["input"] == {"query": "memory create entities"}
    assert result["tool_use_id"] == use["id"]
    assert result["content"]["type"] == "tool_search_tool_search_result"
    refs = [r["tool_name"] for r in result["content"]["tool_references"]]
    assert refs[0] == TARGET and len(refs) == 5
    assert call["name"] == TARGET
    assert msg["stop_reason"] == "tool_use"
    assert msg["usage"]["server_tool_use"] == {"tool_search_requests": 1}

    data = next_turn(fx, body, msg)
    r = request(gw, "POST", fx.url, data, fx.headers)
    assert r.status == 200, r.body
    assert r.decision == "deferred_hosted"
    got = emulator.last()
    assert got.status == 200, got.error
    sent = {t["name"]: t for t in got.json()["tools"]}
    assert all(sent[n].get("defer_loading") is True for n in refs)
    assert message_of(r, stream)["content"][0]["text"] == "Stored."

    # straight to the API, even with the beta, the same history is
    # refused: the found tools are not deferred there, so their
    # references dangle
    gw_off = gateway(server="toolsearch off;")
    r = request(gw_off, "POST", fx.url, data, fx.headers + [
        ("anthropic-beta", "advanced-tool-use-2025-11-20")])
    assert r.status == 400
    assert "Tool reference '%s' not found" % TARGET in \
        json.loads(r.body)["error"]["message"]


def test_regex_search(emulator, gateway):
    gw = gateway(server=HOSTED % "toolsearch_hosted_search regex;")
    _, _, msg = first_turn(emulator, gw, "create_entit(y|ies)$")
    use, result = msg["content"][1:3]
    assert use["name"] == "tool_search_tool_regex"
    refs = [r["tool_name"] for r in result["content"]["tool_references"]]
    assert refs == [TARGET]
    assert msg["content"][3]["name"] == TARGET


@pytest.mark.parametrize("query,code", [
    ("(unclosed", "invalid_pattern"),
    ("a" * 201, "pattern_too_long"),
])
def test_regex_errors(emulator, gateway, query, code):
    gw = gateway(server=HOSTED % "toolsearch_hosted_search regex;")
    _, _, msg = first_turn(emulator, gw, query)
    result = msg["content"][2]
    assert result["content"] == {"type": "tool_search_tool_result_error",
                                 "error_code": code}
    assert [b["type"] for b in msg["content"]][-1] == "text"
    assert msg["stop_reason"] == "end_turn"


@pytest.mark.parametrize("stream", [True, False], ids=["sse", "json"])
def test_search_blocks_stripped_by_default(emulator, gateway, stream):
    """toolsearch_search_blocks strip (the default for a client without a
    profile; the recorded Claude Code has one, so the profiles are off
    here): the client gets the model's text and call, not the search; the
    blocks after it renumbered, usage kept.  Its next turn, without them,
    is accepted: the called tool stays deferred, its search restored
    before the call."""
    gw = gateway(server="toolsearch on; toolsearch_upstream anthropic; "
                 "toolsearch_client_profiles off;")
    fx, body, msg = first_turn(emulator, gw, "memory create entities", stream)

    assert [b["type"] for b in msg["content"]] == ["text", "tool_use"]
    assert msg["content"][1]["name"] == TARGET
    assert msg["stop_reason"] == "tool_use"
    assert msg["usage"]["server_tool_use"] == {"tool_search_requests": 1}

    r = request(gw, "POST", fx.url, next_turn(fx, body, msg), fx.headers)
    assert r.status == 200, r.body
    got = emulator.last().json()
    deferred = {t["name"] for t in got["tools"] if t.get("defer_loading")}
    assert TARGET in deferred
    assistant = got["messages"][-2]["content"]
    assert [b["type"] for b in assistant] == [
        "text", "server_tool_use", "tool_search_tool_result", "tool_use"]
    assert assistant[2]["content"]["tool_references"] == [
        {"type": "tool_reference", "tool_name": TARGET}]


def test_a_compressed_answer_goes_on_as_it_came(emulator, gateway):
    """The cut cannot read a compressed answer: it goes on byte for byte,
    search blocks and all."""
    gw = gateway(server="toolsearch on; toolsearch_upstream anthropic;")
    message = {"id": "msg_z", "type": "message", "role": "assistant",
               "model": "m", "content": [
                   {"type": "server_tool_use", "id": "srvtoolu_1",
                    "name": "tool_search_tool_bm25",
                    "input": {"query": "memory"}},
                   {"type": "tool_search_tool_result",
                    "tool_use_id": "srvtoolu_1", "content": {
                        "type": "tool_search_tool_search_result",
                        "tool_references": []}}],
               "stop_reason": "end_turn", "stop_sequence": None,
               "usage": {"input_tokens": 1, "output_tokens": 1}}
    packed = gzip.compress("".join(sse_events(message)).encode())
    emulator.script = lambda req: Raw([packed], headers=(
        ("Content-Type", "text/event-stream"),
        ("Content-Encoding", "gzip")))
    fx = load_fixture("ts-unset/002.json")
    body = json.loads(fx.body)
    body["stream"] = True
    r = request(gw, "POST", fx.url, json.dumps(body).encode(), fx.headers)
    assert r.status == 200 and r.decision == "deferred_hosted"
    assert r.body == packed
