"""Behaviours of docs/spec/ through a real nginx in front of the strict
emulator: core tools never deferred, auto:N, what $toolsearch_upstream
reports, tools found before a compaction, and names that are escapes."""

import json
import os

import pytest

import session
from conftest import post_json

LOG = ("log_format seed '$toolsearch_decision upstream=$toolsearch_upstream "
       "mode=$toolsearch_mode deferred=$toolsearch_tools_deferred "
       "discovered=$toolsearch_discovered';")


def gateway_for(gateway, conf):
    return gateway(http=LOG, server="toolsearch on; access_log seed.log "
                   "seed; " + conf)


def log_of(gw):
    gw.stop()
    with open(os.path.join(gw.prefix, "seed.log")) as f:
        return f.read().splitlines()


def tool(name):
    return {"name": name, "description": "The %s tool." % name,
            "input_schema": {"type": "object"}}


def body(names, messages=None, **extra):
    b = {"model": "claude-sonnet-4-5", "max_tokens": 64,
         "messages": messages or [{"role": "user", "content": "hi"}],
         "tools": [tool(n) for n in names]}
    b.update(extra)
    return json.dumps(b, separators=(",", ":")).encode()


def test_core_tools_are_never_deferred(emulator, gateway):
    gw = gateway_for(gateway, "toolsearch_upstream anthropic; "
                     "toolsearch_defer_tools Agent Brief Edit;")
    r = post_json(gw, body(["Agent", "Brief", "Edit", "Read",
                            "mcp__a__b"]))
    assert r.status == 200, r.body
    sent = {t["name"]: t for t in emulator.last().json()["tools"]}
    assert [n for n, t in sent.items() if t.get("defer_loading")] == \
        ["Edit", "mcp__a__b"]
    assert "defer_loading" not in sent["Agent"]
    assert "defer_loading" not in sent["Brief"]


def test_lone_surrogate_name_stays_an_escape(emulator, gateway):
    emulator.profile = "proxy"
    gw = gateway_for(gateway, "toolsearch_upstream compatible;")
    raw = body(["Read", "mcp__a__b"]).replace(b"mcp__a__b",
                                               b"mcp__a__\\udc00")
    r = post_json(gw, raw)
    assert r.status == 200, r.body
    sent = emulator.last().body
    sent.decode("utf-8")                        # strict: valid UTF-8
    assert b"\xed\xb0\x80" not in sent
    system = emulator.last().json()["system"]
    assert system.endswith("conversation: mcp__a__\udc00.")
    assert b"mcp__a__\\udc00." in sent


@pytest.mark.parametrize("conf,decision,upstream", [
    ("toolsearch_upstream compatible; toolsearch_upstream_tool_reference on;",
     "deferred_hosted", "anthropic"),
    ("toolsearch_upstream compatible;", "deferred_gateway", "compatible"),
    ("toolsearch_upstream vertex; toolsearch_upstream_tool_reference on;",
     "deferred_hosted", "vertex"),
], ids=["compatible_tool_reference", "compatible", "vertex"])
def test_upstream_variable_names_the_profile_used(emulator, gateway, conf,
                                                  decision, upstream):
    emulator.profile = {"anthropic": "anthropic", "vertex": "vertex",
                        "compatible": "proxy"}[upstream]
    gw = gateway_for(gateway, conf)
    r = post_json(gw, body(["Read", "mcp__a__b"]))
    assert r.status == 200, r.body
    assert log_of(gw) == ["%s upstream=%s mode=on deferred=1 discovered=0"
                          % (decision, upstream)]


COMPACTED = ("This session is being continued from a previous conversation "
             "that ran out of context. Summary: the user asked to record "
             "Alice; mcp__memory__create_entities (loaded with a search) "
             "recorded her.")


@pytest.mark.parametrize("path", sorted(session.PATHS))
def test_tool_found_before_compaction_is_called_directly(emulator, gateway,
                                                         path):
    profile, conf = session.PATHS[path]
    emulator.profile = profile
    target = session.TARGETS[0]
    emulator.script = session.model((target,))
    gw = gateway_for(gateway, conf)

    # before: found by a search, then called
    answers = session.run(gw)
    assert [b["name"] for a in answers for b in a["content"]
            if b["type"] == "tool_use"] == [target]

    # the client compacts: a summary replaces the history
    emulator.reset()
    emulator.script = session.model((target,))
    msgs = [{"role": "user", "content": [
        {"type": "text", "text": COMPACTED},
        {"type": "text", "text": "Record Bob the same way."}]}]
    b = session.first_body()
    b["messages"] = msgs
    session.move_breakpoint(msgs)
    answer = session.run(gw, b, turns=1)[0]

    # the model calls the tool at once: no search, one upstream call
    kinds = [blk["type"] for blk in answer["content"]]
    assert "server_tool_use" not in kinds
    assert [blk["name"] for blk in answer["content"]
            if blk["type"] == "tool_use"] == [target]
    assert len(emulator.requests) == 1
    sent = {t["name"]: t for t in emulator.last().json()["tools"]}
    assert target in sent and "defer_loading" not in sent[target]
    assert log_of(gw)[-1].endswith(" deferred=4 discovered=1")
