"""Whole sessions under prompt caching (t/cost_session.py, billed with
t/billing.py), through a real nginx and the module in front of the strict
emulator: the fast variant of bench/cost_bench.py, Claude Code's shape
with 4 discoveries.

On the hosted path with the default directives, and with
toolsearch_search_blocks strip (the client never sees the searches), no
request after the first breaks the cache: each found tool stays deferred, and the search that
found it is restored before its call, the same on every later turn.  On
gateway search over a compatible upstream, a discovery costs one break,
on the loop's call that loads the found tool, never on the client's turn
after it.  Gateway search that loads found tools as references (an
upstream that expands them) breaks no cache after the first turn: the
search a client dropped is restored before the first call of what it
found.  With the call wrapper (toolsearch_found_tools wrapper, the
default), gateway search on a compatible upstream keeps one tools[] for
the whole session and breaks no cache after the first turn either."""

import json

import pytest

import billing
import cost_session

HOSTED = "toolsearch on; toolsearch_upstream anthropic;"
COMPATIBLE = "toolsearch on; toolsearch_upstream compatible;"
TARGETS = cost_session.CC_TARGETS
GATEWAY_REFS = HOSTED + " toolsearch_search gateway;"


def calls_of(result):
    return [b["name"] for a in result.answers for b in a["content"]
            if b["type"] == "tool_use"]


@pytest.mark.parametrize("blocks", ["strip", "keep"])
def test_hosted_session_breaks_no_cache_after_the_first_turn(blocks):
    r = cost_session.run("claude-code", blocks, "anthropic", HOSTED +
                         " toolsearch_search_blocks %s;" % blocks)

    assert r.rejected() == []
    assert len(r.requests) == cost_session.TURNS
    assert r.answers[-1]["content"][-1]["text"] == "Done."
    # every discovery made, each found tool called on its turn and again
    assert [n for n in calls_of(r) if n in TARGETS] == \
        [t for t in TARGETS for _ in (0, 1)]
    assert [(b.n, b.cause) for b in r.bill.breaks()] == []
    for b in r.bill.bills[1:]:
        assert b.read > 0

    # the found tools stay deferred on every later request
    for q in r.requests:
        sent = q.json()
        for t in sent["tools"]:
            if t["name"] in TARGETS:
                assert t.get("defer_loading") is True, t["name"]


def test_hosted_session_restores_the_same_bytes_on_every_turn():
    # Claude Code's profile strips the blocks, with no configuration
    r = cost_session.run("claude-code", "default", "anthropic", HOSTED)
    bodies = [q.json() for q in r.requests]
    # the assistant turn of the first discovery, as each later request
    # sends it upstream
    turns = [json.dumps(b["messages"][2]) for b in bodies[1:]]
    assert len(set(turns)) == 1
    kinds = [c["type"] for c in json.loads(turns[0])["content"]]
    assert kinds == ["text", "server_tool_use", "tool_search_tool_result",
                     "tool_use"]
    # the client's own history holds no search
    client = r.answers[0]["content"]
    assert [c["type"] for c in client] == ["text", "tool_use"]


def test_claude_code_profile_costs_less_than_keeping_the_blocks():
    # a kept search result loads every tool it found on every later
    # turn, a restored one the tool called
    default = cost_session.run("claude-code", "default", "anthropic",
                               HOSTED)
    keep = cost_session.run("claude-code", "keep", "anthropic",
                            HOSTED + " toolsearch_search_blocks keep;")
    assert default.rejected() == [] and keep.rejected() == []
    assert default.bill.breaks() == [] and keep.bill.breaks() == []
    assert default.bill.units() < 0.95 * keep.bill.units()
    assert default.bill.peak() < keep.bill.peak()


def test_hosted_session_costs_less_than_no_module():
    base = cost_session.run("claude-code", "off", "anthropic",
                            "toolsearch off;")
    hosted = cost_session.run("claude-code", "strip", "anthropic", HOSTED)
    assert base.rejected() == [] and base.bill.breaks() == []
    assert hosted.bill.units() < base.bill.units()
    assert hosted.bill.peak() < base.bill.peak()


def test_gateway_session_breaks_once_per_discovery():
    r = cost_session.run("claude-code", "gateway", "proxy",
                         COMPATIBLE + " toolsearch_found_tools tools;")

    assert r.rejected() == []
    assert r.answers[-1]["content"][-1]["text"] == "Done."
    bodies = [q.json() for q in r.requests]
    # a search's loop call: the request whose last turn answers the
    # gateway's search tool
    loop_calls = [i + 1 for i, b in enumerate(bodies)
                  if any(isinstance(c, dict) and
                         c.get("type") == "tool_result" and
                         c["tool_use_id"].startswith("toolu_s")
                         for c in b["messages"][-1]["content"])]
    assert len(loop_calls) == len(TARGETS)
    assert [b.n for b in r.bill.breaks()] == loop_calls

    # tools[]: the loaded tools, the search tool with a breakpoint of the
    # gateway's own (Claude Code puts none in tools[]), the found tools
    for b in bodies:
        names = [t["name"] for t in b["tools"]]
        at = names.index("tool_search")
        assert b["tools"][at]["cache_control"] == {"type": "ephemeral"}
        assert set(names[at + 1:]) <= set(TARGETS)
        assert not set(names[:at]) & set(TARGETS)


@pytest.mark.parametrize("client,blocks", [("claude-code", "strip"),
                                           ("opencode", "strip"),
                                           ("opencode", "keep")])
def test_gateway_session_with_references_breaks_no_cache(client, blocks):
    # opencode drops the search blocks whatever the gateway gives it
    r = cost_session.run(client, blocks, "anthropic", GATEWAY_REFS +
                         " toolsearch_search_blocks %s;" % blocks)
    targets = cost_session.CLIENTS[client].targets

    assert r.rejected() == []
    assert r.answers[-1]["content"][-1]["text"] == "Done."
    assert [n for n in calls_of(r) if n in targets] == \
        [t for t in targets for _ in (0, 1)]
    assert [(b.n, b.cause) for b in r.bill.breaks()] == []

    # the found tools stay deferred after the search tool on every call
    # and turn; the tools before it keep their bytes
    bodies = [q.json() for q in r.requests]
    before = set()
    for b in bodies:
        names = [t["name"] for t in b["tools"]]
        at = names.index("tool_search")
        after = b["tools"][at + 1:]
        assert set(names[at + 1:]) <= set(targets)
        assert all(t.get("defer_loading") is True for t in after)
        before.add(billing.compact(b["tools"][:at + 1]))
    assert len(before) == 1

    # the first discovery's search, restored before its call in the
    # client's history: the same bytes on every later turn
    k = len(bodies[0]["messages"])
    later = [billing.compact(billing.without_cache_control(
        b["messages"][k:k + 2])) for b, turn in zip(bodies, r.turns)
        if turn > 1]
    assert len(later) > 10 and len(set(later)) == 1
    search, result = json.loads(later[0])
    assert search["content"][-1]["name"] == "tool_search"
    assert search["content"][-1]["input"] == \
        {"query": "select:" + targets[0]}
    assert result["content"] == [
        {"type": "tool_result", "tool_use_id": search["content"][-1]["id"],
         "content": [{"type": "tool_reference", "tool_name": targets[0]}]},
        {"type": "text", "text": "Tool loaded."}]


@pytest.mark.parametrize("client", ["claude-code", "opencode", "cline"])
def test_gateway_wrapper_session_breaks_no_cache(client):
    # the default on a compatible upstream: the call wrapper
    r = cost_session.run(client, "wrapper", "proxy", COMPATIBLE)
    targets = cost_session.CLIENTS[client].targets

    assert r.rejected() == []
    assert r.answers[-1]["content"][-1]["text"] == "Done."
    # the client sees its own tools called, each found one twice
    assert [n for n in calls_of(r) if n in targets] == \
        [t for t in targets for _ in (0, 1)]
    assert "call_tool" not in calls_of(r)
    assert [(b.n, b.cause) for b in r.bill.breaks()] == []
    for b in r.bill.bills[1:]:
        assert b.read > 0

    # one tools[] for every call and turn, without the found tools
    bodies = [q.json() for q in r.requests]
    assert len({billing.compact(b["tools"]) for b in bodies}) == 1
    names = [t["name"] for t in bodies[0]["tools"]]
    assert names[-2:] == ["tool_search", "call_tool"]
    assert not set(names) & set(targets)


def test_gateway_wrapper_costs_less_than_found_tools():
    tools = cost_session.run("opencode", "tools", "proxy", COMPATIBLE +
                             " toolsearch_found_tools tools;")
    wrapper = cost_session.run("opencode", "wrapper", "proxy", COMPATIBLE)
    assert len(tools.bill.breaks()) == len(TARGETS)
    assert wrapper.bill.breaks() == []
    assert wrapper.bill.units() < tools.bill.units()
