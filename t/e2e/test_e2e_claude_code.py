"""The Claude Code CLI, unchanged, through the gateway.

Each scenario runs `claude -p` with the memory, filesystem and everything
MCP servers (npm, stdio) against a real nginx with the module in front of
the emulator, whose scripted model must find and call
mcp__memory__create_entities, then answer.  It asserts that Claude Code
exits with the scripted answer, that the memory server stored the entity,
that the emulator accepted every request and what the gateway decided; then
it runs the same client with `toolsearch off` (the baseline) and records
the tool-definition bytes of both for docs/clients.md."""

import json
import os

import pytest

from clients import (FINAL, QUERY, ROOT, SERVERS, TARGET, assert_completed,
                     measure, run_claude, session)

BETA = "advanced-tool-use-2025-11-20"
# the built-in tools Claude Code defers itself, deferred by the gateway too
BUILTINS = "include %s;" % os.path.join(ROOT, "docs", "examples",
                                        "claude-code.conf")


def scenario(id_, title, profile, decision, tool_search=None, model=None,
             server="", env=None, empty_streams=False, refs=None):
    """refs: whether the upstream and model take tool_reference (the
    anthropic profile, unless the model is one that does not)."""
    return pytest.param(dict(
        id=id_, title=title, profile=profile, decision=decision,
        tool_search=tool_search, model=model, server=server, env=env,
        empty_streams=empty_streams,
        refs=profile == "anthropic" if refs is None else refs), id=id_)


SCENARIOS = [
    scenario("unset-hosted", "ENABLE_TOOL_SEARCH unset, anthropic profile",
             "anthropic", "deferred_hosted"),
    scenario("unset-gateway", "ENABLE_TOOL_SEARCH unset, compatible upstream",
             "compatible", "deferred_gateway"),
    scenario("unset-gateway-anthropic",
             "ENABLE_TOOL_SEARCH unset, anthropic profile, "
             "toolsearch_search gateway", "anthropic", "deferred_gateway",
             server="toolsearch_search gateway;"),
    scenario("unset-hosted-conf",
             "ENABLE_TOOL_SEARCH unset, anthropic profile, claude-code.conf",
             "anthropic", "deferred_hosted", server=BUILTINS),
    scenario("unset-gateway-conf",
             "ENABLE_TOOL_SEARCH unset, compatible upstream, claude-code.conf",
             "compatible", "deferred_gateway", server=BUILTINS),
    scenario("true-anthropic", "ENABLE_TOOL_SEARCH=true, anthropic profile",
             "anthropic", "client_managed", tool_search="true"),
    scenario("true-compatible",
             "ENABLE_TOOL_SEARCH=true, compatible upstream "
             "(no tool_reference)",
             "compatible", "client_managed", tool_search="true"),
    scenario("auto-hosted",
             "ENABLE_TOOL_SEARCH=auto, claude-haiku-4-5, anthropic profile",
             "anthropic", "deferred_hosted", tool_search="auto",
             model="claude-haiku-4-5"),
    scenario("auto-gateway",
             "ENABLE_TOOL_SEARCH=auto, claude-haiku-4-5, compatible upstream",
             "compatible", "deferred_gateway", tool_search="auto",
             model="claude-haiku-4-5"),
    scenario("false-hosted", "ENABLE_TOOL_SEARCH=false, anthropic profile",
             "anthropic", "deferred_hosted", tool_search="false"),
    scenario("false-mode-off",
             "ENABLE_TOOL_SEARCH=false, X-Toolsearch-Mode: off",
             "anthropic", "standard_mode", tool_search="false",
             server="toolsearch_client_mode on;",
             env={"ANTHROPIC_CUSTOM_HEADERS": "X-Toolsearch-Mode: off"}),
    scenario("kill-switch", "kill switch (toolsearch_disable_betas on)",
             "anthropic", "kill_switch",
             server="toolsearch_disable_betas on;"),
    scenario("sonnet-4-5", "claude-sonnet-4-5", "anthropic",
             "deferred_hosted", model="claude-sonnet-4-5"),
    scenario("opus", "--model opus", "anthropic", "deferred_hosted",
             model="opus"),
    scenario("haiku-4-5", "claude-haiku-4-5", "anthropic", "deferred_hosted",
             model="claude-haiku-4-5"),
    scenario("3-5-haiku", "claude-3-5-haiku (no tool_reference)",
             "anthropic", "deferred_gateway",
             model="claude-3-5-haiku-20241022", refs=False),
    scenario("fallback-hosted",
             "non-streaming fallback, anthropic profile", "anthropic",
             "deferred_hosted", empty_streams=True),
    scenario("fallback-gateway",
             "non-streaming fallback, compatible upstream", "compatible",
             "deferred_gateway", empty_streams=True),
]


def claude(sc, tmp_path):
    return lambda url: run_claude(url, str(tmp_path), sc["tool_search"],
                                  sc["model"], sc["env"])


def bodies(posts):
    """The bodies of the Messages API calls (not count_tokens)."""
    return [r.json() for r in posts if "/count_tokens" not in r.path]


def blocks(body, kind):
    return [b for m in body["messages"] if isinstance(m["content"], list)
            for b in m["content"] if b.get("type") == kind]


def check_hosted(posts, log, sc):
    """Hosted search: the emulator ran it as Anthropic's servers do; its
    blocks stayed in the gateway (Claude Code's profile strips them) and
    its search was restored before the call of the target on the next
    turn, which stayed deferred."""
    last = bodies(posts)[-1]
    use = blocks(last, "server_tool_use")
    assert [u["name"] for u in use] == ["tool_search_tool_bm25"]
    assert use[0]["input"] == {"query": TARGET}
    assert use[0]["id"].startswith("srvtoolu_")
    result = blocks(last, "tool_search_tool_result")
    refs = [r["tool_name"] for r in result[0]["content"]["tool_references"]]
    assert refs == [TARGET]
    tools = {t["name"]: t for t in last["tools"]}
    assert tools[TARGET].get("defer_loading") is True
    assert all(BETA in r.header("anthropic-beta") for r in posts)


def check_gateway(posts, log, sc):
    """Gateway search: one search ran in the gateway, the upstream never
    saw the search blocks, and the found tool was loaded for it: deferred
    with a tool_reference (anthropic), or called through the gateway's
    call wrapper with tools[] the same on every request (compatible)."""
    assert sum(int(f["searches"]) for f in log) == 1
    for r in posts:
        assert b"server_tool_use" not in r.body
        if not sc["refs"]:
            assert b"tool_reference" not in r.body
            assert BETA not in (r.header("anthropic-beta") or "")
    if sc["refs"]:
        last = bodies(posts)[-1]
        deferred = {t["name"] for t in last["tools"]
                    if t.get("defer_loading") is True}
        assert TARGET in deferred and b'"tool_reference"' in posts[-1].body
    first = bodies(posts)[0]
    names = [t["name"] for t in first["tools"]]
    assert "tool_search" in names and TARGET not in names
    if sc["refs"]:
        assert TARGET in [t["name"] for t in bodies(posts)[-1]["tools"]]
        return
    assert len({json.dumps(b["tools"]) for b in bodies(posts)}) == 1
    assert names[-1] == "call_tool"
    wrapped = [c["input"]["name"] for m in bodies(posts)[-1]["messages"]
               if isinstance(m["content"], list) for c in m["content"]
               if c.get("type") == "tool_use" and c["name"] == "call_tool"]
    assert wrapped == [TARGET]


def check_untouched(posts, log, sc=None):
    """Forwarded byte for byte."""
    assert all(f["in"] == f["out"] for f in log), log


def check_converted(posts, log):
    """Claude Code's own search on an upstream without tool_reference:
    references became text, discovered tools were sent in full."""
    for r in posts:
        assert b"tool_reference" not in r.body
        assert b'"defer_loading"' not in r.body
        assert BETA not in (r.header("anthropic-beta") or "")
    assert any(b"Tool loaded: " + TARGET.encode() in r.body for r in posts)


def check_loaded(posts, log, sc):
    """Nothing deferred: every tool in full, no tool-search beta."""
    for r in posts:
        assert b'"defer_loading"' not in r.body
        assert BETA not in (r.header("anthropic-beta") or "")


CHECKS = {"deferred_hosted": check_hosted, "deferred_gateway": check_gateway,
          "standard_mode": check_untouched, "kill_switch": check_loaded}


@pytest.mark.parametrize("sc", SCENARIOS)
def test_claude_code(sc, tmp_path, record):
    # Claude Code's client profile strips the search blocks, with no
    # configuration (check_hosted sees the restored search)
    server = SERVERS[sc["profile"]] + " " + sc["server"]
    run, posts, log = session(sc["profile"], claude(sc, tmp_path), server,
                              sc["empty_streams"])
    assert_completed(run, posts)
    assert {f["decision"] for f in log} == {sc["decision"]}, log
    assert {f["client"] for f in log} == {"claude_code"}, log
    if sc["decision"] == "client_managed":
        if sc["profile"] == "anthropic":
            check_untouched(posts, log)
            # Claude Code's own round trip reached the upstream as it was
            assert any(b'"tool_reference"' in r.body for r in posts)
        else:
            check_converted(posts, log)
    else:
        CHECKS[sc["decision"]](posts, log, sc)
    if sc["tool_search"] == "auto":
        # Claude Code measured its deferrable tools with count_tokens,
        # through the gateway, which deferred them there too
        counts = [r for r in posts if "/count_tokens" in r.path]
        assert len(counts) == 1 and counts[0].status == 200
        assert log[0]["decision"] == sc["decision"]
    if sc["empty_streams"]:
        # every turn was tried streaming, then answered without streaming
        streams = [r.json().get("stream") is True for r in posts]
        assert True in streams and False in streams
        assert all(r.status == 200 for r in posts)

    # the same client without the module
    base, base_posts, _ = session(sc["profile"], claude(sc, tmp_path),
                                  SERVERS["off"], sc["empty_streams"])
    without = {"requests": [measure(r) for r in base_posts]}
    if sc["tool_search"] == "true" and sc["profile"] == "compatible":
        # the proxy refuses Claude Code's tool search: the session fails
        assert base.rc != 0 or base.answer() != FINAL
        errors = [r.error for r in base_posts if r.status != 200]
        assert errors, base.describe()
        without.update(ok=False, error=errors[0])
    else:
        assert_completed(base, base_posts)
        without["ok"] = True
    record({"id": "claude-code/" + sc["id"], "client": "Claude Code",
            "title": sc["title"], "decision": sc["decision"],
            "with": {"ok": True, "requests": [measure(r) for r in posts]},
            "without": without})
