"""The prompt cache across a session's turns: through a real nginx and the
emulator, consecutive upstream requests of a multi-turn session repeat the
bytes the previous one asked to be cached (up to its last cache
breakpoint), on every path, however many tools the searches found.  On
the gateway paths the found tools follow the search tool in tools[], and
only they differ."""

import json

import pytest

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

    for i, (marked, kept) in enumerate(session.kept_prefixes(bodies)):
        assert marked > 0
        assert kept == marked, "request %d changed byte %d of the cached " \
            "prefix (%d bytes)" % (i + 2, kept, marked)

    # the turns a search loop appended are those the next turn carries
    if path != "hosted":
        msgs = [strip(json.loads(b)["messages"]) for b in bodies]
        for loop_call, next_turn in ((1, 2), (3, 4)):
            n = len(msgs[loop_call])
            assert msgs[next_turn][:n] == msgs[loop_call]

    if path == "gateway_references":
        last = json.loads(bodies[-1])
        assert [t.get("defer_loading") for t in last["tools"]][-2:] == \
            [True, True]
        assert b'"type":"tool_reference"' in bodies[-1]
