"""Server-held conversations (message threads) through the gateway.

A client on threads (Anthropic's TypeScript SDK tool runner from 1.14.0)
sends its tools once, with "thread":{"type":"create"}, and then only each
new turn with "thread":{"type":"continue",...}: no tools, no system.  The
emulator holds the thread and judges each continuation whole, under the
continuation's own betas, as the API does.  The client here plays the
SDK's runner: it answers every tool call the model makes, replays the
whole conversation under a new thread when the server lost the one it
continued, and checks that the model only ever calls its own tools."""

import json

import pytest

from conftest import request
from emulator import ApiError, Validator, Threads, THREADS_BETA
from session import TARGETS, TOOLS, first_body, model
from test_gateway_search import message_of

HEADERS = (("Content-Type", "application/json"),
           ("anthropic-version", "2023-06-01"),
           ("anthropic-beta", THREADS_BETA),
           ("User-Agent", "Anthropic/JS 1.14.0"),
           ("x-stainless-helper", "BetaToolRunner, message-thread"))

# path: (the emulator's profile, the location's configuration)
PATHS = {
    "hosted": ("anthropic", "toolsearch on; toolsearch_upstream anthropic;"),
    "gateway": ("proxy", "toolsearch on; toolsearch_upstream compatible;"),
}


def send(gw, body):
    raw = json.dumps(body, separators=(",", ":")).encode()
    return raw, request(gw, "POST", "/v1/messages?beta=true", raw, HEADERS)


def run_threaded(emulator, gw, stream, lose_thread_at=None, turns=8):
    """Plays the runner's session; returns (decisions, the bodies sent,
    the client's answers)."""
    emulator.script = model()
    whole = first_body()
    body = dict(whole, stream=stream, thread={"type": "create"})
    decisions, sent, answers = [], [], []
    for turn in range(turns):
        if turn == lose_thread_at:
            # the thread expired on the server: the continuation is a 404
            with emulator.threads.lock:
                emulator.threads.held.clear()
        raw, r = send(gw, body)
        decisions.append(r.decision)
        sent.append(raw)
        if r.status == 404 and body["thread"]["type"] == "continue":
            # the SDK's replay: the whole conversation, a new thread
            assert json.loads(r.body)["error"]["details"] == {
                "error_code": "thread_not_found"}
            body = dict(whole, stream=stream, thread={"type": "create"})
            continue
        assert r.status == 200, r.body
        msg = message_of(r, stream)
        answers.append(msg)
        calls = [b for b in msg["content"] if b["type"] == "tool_use"]
        own = {t["name"] for t in TOOLS}
        assert all(c["name"] in own for c in calls), \
            "the model called a tool the client does not have"
        if not calls:
            break
        new = [{"role": "user", "content": [
            {"type": "tool_result", "tool_use_id": c["id"],
             "content": "ok"} for c in calls]}]
        whole["messages"] += [{"role": "assistant",
                               "content": msg["content"]}] + new
        body = {"model": whole["model"], "max_tokens": whole["max_tokens"],
                "messages": new, "stream": stream,
                "thread": {"type": "continue",
                           "previous_message_id": msg["id"]}}
    return decisions, sent, answers


@pytest.mark.parametrize("path", sorted(PATHS))
@pytest.mark.parametrize("stream", [True, False], ids=["sse", "json"])
def test_threaded_session(emulator, gateway, path, stream):
    """Every turn of a threaded session is accepted, and the model calls
    each target through the thread's tools."""
    emulator.profile, conf = PATHS[path]
    gw = gateway(server=conf)
    decisions, sent, answers = run_threaded(emulator, gw, stream)

    assert decisions == ["thread_create"] + \
        ["thread_continue"] * len(TARGETS)
    assert [r.status for r in emulator.requests] == [200] * len(decisions)
    called = [b["name"] for a in answers for b in a["content"]
              if b["type"] == "tool_use"]
    assert called == list(TARGETS)
    assert answers[-1]["content"][-1]["text"] == "All done."
    # the thread's tools reach the upstream as the client sent them, and
    # every turn goes on as sent, betas included
    for raw, rec in zip(sent, emulator.requests):
        assert rec.body == raw
        assert rec.header_all("anthropic-beta") == [THREADS_BETA]
    first = emulator.requests[0].json()
    assert all("defer_loading" not in t for t in first["tools"])


@pytest.mark.parametrize("path", sorted(PATHS))
def test_thread_lost_and_replayed(emulator, gateway, path):
    """A continuation whose thread the server lost is the server's 404,
    passed on as it came; the replay creates a new thread, undeferred as
    the first, and the session goes on."""
    emulator.profile, conf = PATHS[path]
    gw = gateway(server=conf)
    decisions, sent, answers = run_threaded(emulator, gw, True,
                                            lose_thread_at=1)

    assert decisions == ["thread_create", "thread_continue",
                         "thread_create"] + \
        ["thread_continue"] * (len(TARGETS) - 1)
    assert [r.status for r in emulator.requests] == \
        [200, 404] + [200] * (len(decisions) - 2)
    assert answers[-1]["content"][-1]["text"] == "All done."


def test_deferred_thread_needs_the_beta_on_every_turn():
    """The emulator's rule behind the design: a thread created with
    deferred tools is refused on a continuation without the tool-search
    beta (what a gateway that defers the create cannot know to add), and
    a continuation may not send tools."""
    threads = Threads()
    tools = [dict(t) for t in TOOLS]
    for t in tools[3:]:
        t["defer_loading"] = True
    tools.append({"type": "tool_search_tool_bm25_20251119",
                  "name": "tool_search_tool_bm25"})
    create = dict(first_body(), tools=tools, thread={"type": "create"})
    betas = (("anthropic-beta", THREADS_BETA + ","
              "advanced-tool-use-2025-11-20"),)
    whole = threads.whole("anthropic", betas, create)
    Validator("anthropic", betas, whole).run()
    threads.keep(betas, create, whole, {"id": "msg_1", "content": [
        {"type": "text", "text": "Calling."}]})
    assert threads.held["msg_1"]["betas"] == [betas[0][1]]

    new = [{"role": "user", "content": "go on"}]
    cont = {"model": create["model"], "max_tokens": 9, "messages": new,
            "thread": {"type": "continue", "previous_message_id": "msg_1"}}
    plain = (("anthropic-beta", THREADS_BETA),)
    whole = threads.whole("anthropic", plain, cont)
    assert whole["tools"] == tools and whole["messages"][-1] == new[0]
    with pytest.raises(ApiError) as e:
        Validator("anthropic", plain, whole).run()
    assert e.value.message == \
        "tools.3.defer_loading: Extra inputs are not permitted"
    Validator("anthropic", betas, threads.whole("anthropic", betas,
                                                cont)).run()

    with pytest.raises(ApiError) as e:
        threads.whole("anthropic", betas, dict(cont, tools=tools))
    assert e.value.message.startswith("tools: a thread keeps")
    with pytest.raises(ApiError) as e:
        threads.whole("anthropic", (), cont)
    assert e.value.message == "thread: Extra inputs are not permitted"

