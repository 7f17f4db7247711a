"""Whole Chat Completions and Responses sessions under automatic prefix
caching (t/openai_cost_session.py, billed with t/billing.py's
PrefixSession), through a real nginx and the module in front of the
strict emulator: the fast variant of bench/openai_cost_bench.py.

With plain tools in tools[], which the model reads before the messages,
a discovery costs one break: the loop's call that loads the found tool.
Nothing else breaks the prefix: the announcement, the search function
and the tools before it keep their bytes on every call and turn, the
client's next turn sends the tools[] of the loop's call, and a found
tool never moves the ones found before it.  Where the API runs the search
(Responses, hosted tool_search) and the client drops the search's items,
no request breaks it: the found tool stays deferred and its search is
restored before its call (a namespace's members, Codex's, in one search
a namespace)."""

import json

import pytest

import billing
import openai_cost_session as ocs

ON = "toolsearch on;"
OFF = "toolsearch off;"
TOOLS = "toolsearch on; toolsearch_found_tools tools;"
CLIENTS = sorted(ocs.CLIENTS)
# clients whose requests hold their whole history: with
# toolsearch_found_tools tools, a turn loads what its history called (a
# chained one sends its new items alone, and found functions leave
# tools[] on its next turn)
WHOLE = [c for c in CLIENTS if c not in ocs.CHAINED]


def names(tools):
    return [billing.tool_name(t) for t in tools]


def loop_calls(result):
    """the upstream requests (from 1) that answer the gateway's search:
    the loop's calls after a search"""
    ids = [ocs.answered_ids(q.json()) for q in result.requests]
    return [i + 1 for i, a in enumerate(ids)
            if a and a[-1].startswith("call_s")]


def announcement(body):
    if "messages" in body:
        return body["messages"][0]
    return body["instructions"]


def said(client, answer):
    if ocs.CLIENTS[client].format == "chat":
        return answer["choices"][0]["message"]["content"]
    return answer["output"][-1]["content"][0]["text"]


@pytest.mark.parametrize("client", CLIENTS)
@pytest.mark.parametrize("query", ["select", "words"])
def test_wrapper_session_never_breaks_the_prefix(client, query):
    """The call wrapper (the default, stored Responses clients and chains
    included): tools[] is the same on every call and turn, the loop's
    calls only append, and the next turn restores the search before the
    call (or goes on from the upstream's kept exchange): no request after
    the first pays again for what the one before it had cached."""
    r = ocs.run(client, "default", ON, query=query)
    base = ocs.run(client, "off", OFF)
    bodies = [q.json() for q in r.requests]

    assert r.rejected() == []
    assert len(r.requests) > ocs.TURNS
    assert said(client, r.answers[-1]).endswith("Done.")
    assert r.bill.breaks() == []
    assert len({billing.compact(b["tools"]) for b in bodies}) == 1
    assert names(bodies[0]["tools"])[-2:] == [ocs.SEARCH, "call_tool"]
    assert r.bill.units() < base.bill.units()


@pytest.mark.parametrize("client", WHOLE)
def test_a_discovery_breaks_the_prefix_once(client):
    """toolsearch_found_tools tools: found functions join tools[]."""
    r = ocs.run(client, "default", TOOLS)
    bodies = [q.json() for q in r.requests]

    assert r.rejected() == []
    assert len(r.requests) > ocs.TURNS
    assert said(client, r.answers[-1]).endswith("Done.")
    # the only breaks are the loop's calls that load what a search found:
    # no turn's first request breaks, the client's next turn included
    searched = loop_calls(r)
    assert searched
    assert [b.n for b in r.bill.breaks()] == searched
    for b in r.bill.breaks():
        assert b.cause.startswith("tools[")

    # what the gateway writes is the same on every call and turn: the
    # announcement, and tools[] up to its search function
    assert len({json.dumps(announcement(b)) for b in bodies}) == 1
    heads = set()
    for b in bodies:
        at = names(b["tools"]).index(ocs.SEARCH)
        heads.add(billing.compact(b["tools"][:at + 1]))
    assert len(heads) == 1


@pytest.mark.parametrize("client", WHOLE)
def test_found_tools_keep_their_places(client):
    # each found tool goes after those found before it, so that a
    # discovery leaves their definitions in the cached prefix
    r = ocs.run(client, "default", TOOLS)
    before = []
    for q in r.requests:
        tools = q.json()["tools"]
        found = names(tools)[names(tools).index(ocs.SEARCH) + 1:]
        assert found[:len(before)] == before, (before, found)
        before = found
    assert len(before) >= 3


HOSTED = "toolsearch on; toolsearch_upstream openai;"
HOSTED_MODEL = "gpt-5.4"


def hosted_session(client):
    """a session on the hosted path: every request accepted, none breaks
    the prefix, cheaper than no module, tools[] the same bytes on every
    request (the found tools stay deferred); its bodies"""
    r = ocs.run(client, "hosted", HOSTED, model=HOSTED_MODEL)
    base = ocs.run(client, "off", OFF, model=HOSTED_MODEL)
    bodies = [q.json() for q in r.requests]

    assert r.rejected() == []
    assert len(r.requests) == ocs.TURNS
    assert r.bill.breaks() == []
    assert r.bill.units() < base.bill.units()
    assert len({billing.compact(b["tools"]) for b in bodies}) == 1
    return bodies


def test_hosted_session_breaks_no_prefix():
    # the API runs the searches; opencode drops their items, so the next
    # turn's only trace of a search is the call of what it found
    bodies = hosted_session("opencode-responses")
    targets = ocs.CLIENTS["opencode-responses"].targets
    for t in bodies[0]["tools"]:
        if t.get("name") in targets:
            assert t["defer_loading"] is True
    # each search restored before the first call of what it found, the
    # same bytes on every later turn
    k = len(bodies[0]["input"])
    later = [billing.compact(b["input"][k:k + 4]) for b in bodies[1:]]
    assert len(set(later)) == 1
    said, call, output, used = json.loads(later[0])
    assert said["role"] == "assistant"
    assert call["type"] == "tool_search_call"
    assert call["arguments"] == {"paths": [targets[0]]}
    assert output["type"] == "tool_search_output"
    assert [t["name"] for t in output["tools"]] == [targets[0]]
    assert used["type"] == "function_call" and used["name"] == targets[0]
    assert sum(i.get("type") == "tool_search_output"
               for i in bodies[-1]["input"]) == len(targets)


@pytest.mark.parametrize("client", ["codex", "codex-dropped"])
def test_hosted_namespaced_session_breaks_no_prefix(client):
    # Codex's MCP tools in namespaces: the API loads a found member with
    # its namespace; with the search's items kept they load it on the
    # next turns, and where the client drops them the gateway restores
    # one search a namespace (the targets are of four namespaces)
    bodies = hosted_session(client)
    outputs = [i for i in bodies[-1]["input"]
               if i.get("type") == "tool_search_output"]
    assert sorted(t["name"] for o in outputs for t in o["tools"]) == \
        sorted(ocs.key_of(n)[0] for n in ocs.CODEX_TARGETS)


@pytest.mark.parametrize("client", ["opencode", "opencode-responses"])
def test_no_module_session_never_breaks(client):
    # the emulated clients only append to their history
    r = ocs.run(client, "off", OFF)
    assert r.rejected() == []
    assert len(r.requests) == ocs.TURNS
    assert r.bill.breaks() == []
    assert all(b.read > 0 for b in r.bill.bills[1:])


@pytest.mark.parametrize("client", ["qwen-code", "opencode-responses"])
def test_session_without_discovery_costs_less_than_no_module(client):
    base = ocs.run(client, "off", OFF, discoveries=0)
    on = ocs.run(client, "default", ON, discoveries=0)
    assert on.rejected() == [] and on.bill.breaks() == []
    assert len(on.requests) == ocs.TURNS
    assert on.bill.units() < base.bill.units()
    assert on.bill.peak() < base.bill.peak()
    assert on.vllm.units() < base.vllm.units()


# the billing model itself, on bodies made here

def chat(tools, *texts):
    return {"model": "m", "tools": [
        {"type": "function", "function": {"name": t, "description": t * 3000,
                                          "parameters": {}}} for t in tools],
        "messages": [{"role": "user", "content": x * 3000} for x in texts]}


def test_prefix_cache_reads_whole_steps_from_the_minimum():
    s = billing.PrefixSession()
    first = s.bill(chat(["a", "b"], "x"))
    assert first.read == 0 and first.units == first.tokens
    again = s.bill(chat(["a", "b"], "x", "y"))
    assert again.read % billing.OPENAI_STEP == 0
    assert first.tokens - billing.OPENAI_STEP < again.read <= first.tokens
    assert again.cause is None
    small = billing.PrefixSession()
    small.bill({"model": "m", "messages": [{"role": "user", "content": "hi"}]})
    assert small.bill({"model": "m", "messages": [
        {"role": "user", "content": "hi"}]}).read == 0


def test_prefix_cache_break_is_what_is_paid_again():
    s = billing.PrefixSession()
    s.bill(chat(["a", "b"], "x", "y"))
    # a tool added before the messages pays them again
    b = s.bill(chat(["a", "b", "c"], "x", "y"))
    assert b.cause == "tools[2] c changed (was messages[0] (user))"
    assert b.again > 0
    # dropping the last turn and going on differently pays nothing again
    assert s.bill(chat(["a", "b", "c"], "x", "z")).cause is None


def test_a_break_counts_only_what_is_paid_again():
    """A request whose tools[] goes back to what an older request had
    reads that older prefix from the cache: what its break paid again is
    only the part past what it read (a chained session's found function
    declared on one request and not on the next made the breaks cost
    more than the session's whole bill)."""
    def fn(i):
        return {"type": "function", "name": "f%d" % i,
                "description": "does thing %d " % i * 40,
                "parameters": {"type": "object", "properties": {}}}
    tools = [fn(i) for i in range(12)]
    said = [{"role": "user", "content": "message %d " % i * 200}
            for i in range(2)] + [{"role": "user", "content": "thanks"}]
    s = billing.prefix_session([
        {"model": "gpt-5", "tools": tools, "input": said[:1]},
        {"model": "gpt-5", "tools": tools + [fn(99)], "input": said[:2]},
        {"model": "gpt-5", "tools": tools, "input": said[:3]}])
    first, found, back = s.bills
    assert found.cause and back.cause
    # the third reads the first's tools and message from the cache
    assert back.read > 0
    assert 0 < back.again <= back.tokens - back.read
    assert all(b.again <= b.tokens - b.read for b in s.bills)
