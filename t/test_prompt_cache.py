"""The prompt cache across a session's turns: through a real nginx and the
emulator, each upstream request of a multi-turn session, billed with
t/billing.py, reads from the cache all the request before it cached (up
to its last breakpoint), on the hosted path and on gateway search with
references or with the call wrapper (tools[] never changes), however
many tools the searches found.  With plain tools the loop's call that
loads a found tool is the only one that reads less: up to the search
tool, where the found tools begin."""

import json

import pytest

import billing
import session


def strip(value):
    """value without its cache_control members (the client moves them)"""
    if isinstance(value, dict):
        return {k: strip(v) for k, v in value.items() if k != "cache_control"}
    if isinstance(value, list):
        return [strip(v) for v in value]
    return value


@pytest.mark.parametrize("path", sorted(session.PATHS))
def test_each_request_repeats_the_cached_prefix(emulator, gateway, path):
    profile, conf = session.PATHS[path]
    emulator.profile = profile
    emulator.script = session.model()
    gw = gateway(server="toolsearch on; toolsearch_search_blocks keep; "
                 + conf)

    answers = session.run(gw)

    # the session ran: both tools found and called, then the answer
    assert answers[-1]["content"][-1]["text"] == "All done."
    called = [b["name"] for a in answers for b in a["content"]
              if b["type"] == "tool_use"]
    assert called == list(session.TARGETS)
    assert all(q.status == 200 for q in emulator.requests), \
        [q.error for q in emulator.requests]
    bodies = [q.body for q in emulator.requests]
    # hosted: one call per turn; gateway: a second call after each search
    assert len(bodies) == (3 if path == "hosted" else 5)

    # every deferred tool is announced the same way on every request
    systems = {json.dumps(json.loads(b)["system"]) for b in bodies}
    assert len(systems) == 1

    bill = billing.bill_session(bodies)
    assert all(b.read > 0 for b in bill.bills[1:])
    if path == "gateway_plain":
        # the calls after each search: the found tool follows the search
        # tool, which carries the gateway's own breakpoint
        assert [b.n for b in bill.breaks()] == [2, 4]
        for b, target in zip(bill.breaks(), session.TARGETS):
            assert b.cause.startswith("tools[") and target in b.cause
        for raw in bodies:
            tools = json.loads(raw)["tools"]
            at = [t["name"] for t in tools].index(session.SEARCH_TOOL)
            assert tools[at]["cache_control"] == {"type": "ephemeral"}
    else:
        assert [(b.n, b.cause) for b in bill.breaks()] == []

    # the turns a search loop appended are those the next turn carries
    if path != "hosted":
        msgs = [strip(json.loads(b)["messages"]) for b in bodies]
        for loop_call, next_turn in ((1, 2), (3, 4)):
            n = len(msgs[loop_call])
            assert msgs[next_turn][:n] == msgs[loop_call]

    if path == "gateway_wrapper":
        # one tools[] for the whole session: the search tool, then the
        # wrapper with the gateway's breakpoint; no found tool in it
        assert len({billing.compact(json.loads(b)["tools"])
                    for b in bodies}) == 1
        names = [t["name"] for t in json.loads(bodies[0])["tools"]]
        assert names[-2:] == [session.SEARCH_TOOL, "call_tool"]
        assert not set(names) & set(session.TARGETS)
        last = json.loads(bodies[-1])
        assert [b["name"] for m in last["messages"][1:]
                for b in m["content"] if b["type"] == "tool_use"] == [
            session.SEARCH_TOOL, "call_tool", session.SEARCH_TOOL,
            "call_tool"]

    if path == "gateway_references":
        last = json.loads(bodies[-1])
        assert [t.get("defer_loading") for t in last["tools"]][-2:] == \
            [True, True]
        assert b'"type":"tool_reference"' in bodies[-1]
