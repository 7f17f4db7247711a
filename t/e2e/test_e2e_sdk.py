"""The Anthropic TypeScript SDK through the gateway: t/e2e/agent.cjs, an
agent loop with 149 tools (the live memory MCP server's and the rest of a
recorded Claude Code catalogue), streaming and not.  The client carries
the assistant message back whole, so its history holds the
server_tool_use / tool_search_tool_result blocks of the search, hosted or
run by the gateway (kept by the SDK's client profile); on a compatible
upstream the found tool is called through the gateway's call wrapper.  With "runner" it
runs the SDK's own tool runner, which holds the conversation on a message
thread."""

import json

import pytest

from clients import (QUERY, SERVERS, TARGET, assert_completed, measure,
                     run_agent, session)

MODEL = "claude-sonnet-4-5"


def agent(tmp_path, stream):
    return lambda url: run_agent(url, str(tmp_path), MODEL, stream)


def search_blocks(report, name):
    """The search as the SDK parsed it: its call and its result."""
    first = [b for b in report["turns"][0]["content"] if b["type"] != "text"]
    kinds = [b["type"] for b in first]
    assert kinds == ["server_tool_use", "tool_search_tool_result",
                     "tool_use"], kinds
    use, result, call = first
    assert use["name"] == name and use["input"]["query"] == QUERY
    assert result["tool_use_id"] == use["id"]
    refs = [r["tool_name"] for r in result["content"]["tool_references"]]
    assert TARGET in refs
    assert call["name"] == TARGET
    assert report["turns"][0]["usage"]["server_tool_use"] == {
        "tool_search_requests": 1}
    return refs


@pytest.mark.parametrize("stream", [True, False], ids=["stream", "json"])
@pytest.mark.parametrize("profile,decision,search_tool", [
    ("anthropic", "deferred_hosted", "tool_search_tool_bm25"),
    ("compatible", "deferred_gateway", "tool_search"),
], ids=["hosted", "gateway"])
def test_sdk_agent(profile, decision, search_tool, stream, tmp_path, record):
    # the SDK takes the search blocks: its client profile keeps them for
    # it to carry back, with no configuration
    run, posts, log = session(profile, agent(tmp_path, stream),
                              SERVERS[profile])
    assert_completed(run, posts)
    assert run.output["tools"] == 149
    assert [f["decision"] for f in log] == [decision] * 2, log
    assert [f["client"] for f in log] == ["anthropic_sdk"] * 2, log
    search_blocks(run.output, search_tool)
    last = posts[-1].json()
    if decision == "deferred_hosted":
        # the blocks went back upstream as the SDK kept them, and the
        # found tools stayed deferred so their references hold
        assert len(posts) == 2
        kinds = [b["type"] for b in last["messages"][1]["content"]]
        assert "server_tool_use" in kinds and \
            "tool_search_tool_result" in kinds
        deferred = {t["name"] for t in last["tools"]
                    if t.get("defer_loading") is True}
        assert TARGET in deferred
    else:
        # the gateway turned them back into ordinary turns upstream,
        # and the found tool was called through its call wrapper, with
        # tools[] the same on every request
        assert len(posts) == 3
        for r in posts:
            assert b"server_tool_use" not in r.body
            assert b"tool_reference" not in r.body
        assert len({json.dumps(r.json()["tools"]) for r in posts}) == 1
        names = [t["name"] for t in last["tools"]]
        assert names[-1] == "call_tool" and TARGET not in names
        wrapped = [c["input"]["name"] for m in last["messages"]
                   if isinstance(m["content"], list) for c in m["content"]
                   if c.get("type") == "tool_use"
                   and c["name"] == "call_tool"]
        assert wrapped == [TARGET]
        assert sum(int(f["searches"]) for f in log) == 1

    base, base_posts, _ = session(profile, agent(tmp_path, stream),
                                  SERVERS["off"])
    assert_completed(base, base_posts)
    record({"id": "sdk/%s-%s" % ("hosted" if profile == "anthropic" else
                                 "gateway", "stream" if stream else "json"),
            "client": "TypeScript SDK",
            "title": "agent loop, 149 tools, %s upstream, %s" % (
                profile, "streaming" if stream else "non-streaming"),
            "decision": decision,
            "with": {"ok": True, "requests": [measure(r) for r in posts]},
            "without": {"ok": True,
                        "requests": [measure(r) for r in base_posts]}})


@pytest.mark.parametrize("stream", [True, False], ids=["stream", "json"])
@pytest.mark.parametrize("profile", ["anthropic", "compatible"],
                         ids=["hosted", "gateway"])
def test_sdk_thread_runner(profile, stream, tmp_path):
    """The SDK's tool runner on a thread: the creating request keeps its
    tools as sent (the thread holds them for turns that send none), every
    later turn goes on as sent, and the emulator, which judges each
    continuation with the thread's tools under its own betas, accepts all."""
    run, posts, log = session(profile, lambda url: run_agent(
        url, str(tmp_path), MODEL, stream, runner=True))
    assert_completed(run, posts)
    assert run.output["tools"] == 149
    assert [f["decision"] for f in log] == \
        ["thread_create", "thread_continue"], log
    assert [f["client"] for f in log] == ["anthropic_sdk"] * 2, log
    first, last = posts[0].json(), posts[-1].json()
    assert first["thread"] == {"type": "create"}
    assert len(first["tools"]) == 149
    assert b"defer_loading" not in posts[0].body
    assert last["thread"] == {"type": "continue",
                              "previous_message_id": run.output["turns"][0][
                                  "id"]}
    assert "tools" not in last and "system" not in last
    for r in posts:
        assert "message-threads-2026-08-12" in \
            ",".join(r.header_all("anthropic-beta"))
    assert json.loads(posts[-1].body)["messages"][0]["role"] == "user"
