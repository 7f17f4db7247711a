"""Client profiles through nginx: the clients whose behaviour is known are
recognised from the recorded request alone (User-Agent and tools), get
what pays for them with no configuration, and $toolsearch_client says
which; toolsearch_client_profiles off and an explicit
toolsearch_search_blocks override; any other client gets the defaults."""

import json
import os
import re

import pytest

from conftest import (ROOT, Rewrite, client_requests, load_fixture,
                      request)
from emulator import seeker
from test_gateway_search import message_of

HOSTED = "toolsearch on; toolsearch_upstream anthropic; %s"
TARGET = "mcp__memory__create_entities"


def logged(gw):
    """The access log's key=value fields of each POST."""
    return [dict(kv.split("=", 1) for kv in line.split() if "=" in kv)
            for line in gw.access_log() if line.startswith("POST ")]


def send_recorded(gw, client, n=0):
    path, body, headers = client_requests(client)[n]
    target = dict(headers).pop("path")
    headers = [(k, v) for k, v in headers if k.lower() not in (
        "path", "host", "content-length", "connection", "accept-encoding")]
    return request(gw, "POST", target, body, headers)


@pytest.mark.parametrize("client,n,profile,decision", [
    ("claude-code", 1, "claude_code", "client_managed"),
    ("claude-agent-sdk", 1, "claude_code", "client_managed"),
    ("langchain", 0, "anthropic_sdk", "deferred_hosted"),
    # qwen-code sends Claude Code's User-Agent with tools of its own
    ("qwen-code-nosearch", 0, "default", "deferred_hosted"),
    ("opencode", 1, "default", "deferred_hosted"),
])
def test_recorded_clients(emulator, gateway, client, n, profile, decision):
    gw = gateway(server=HOSTED % "")
    r = send_recorded(gw, client, n)
    assert r.status == 200, r.body
    assert r.decision == decision
    gw.stop()
    assert [f["client"] for f in logged(gw)] == [profile]


def claude_code_turn(emulator, gw, ua):
    """The recorded Claude Code 2.1.197 request (149 tools, its own search
    off), with the User-Agent ua, answered by a model that runs the hosted
    search: (the response, the client's answer, the upstream body)."""
    emulator.script = seeker(TARGET, {"entities": []},
                             "memory create entities", "Stored.")
    fx = load_fixture("ts-unset/002.json")
    headers = [(k, ua if k.lower() == "user-agent" else v)
               for k, v in fx.headers]
    r = request(gw, "POST", fx.url, fx.body, headers)
    assert r.status == 200, r.body
    return r, message_of(r, True), emulator.last().json()


def kinds(msg):
    return [b["type"] for b in msg["content"]]


BUILTINS_2_1_197 = {"CronCreate", "CronDelete", "CronList", "EnterWorktree",
                    "ExitWorktree", "ListMcpResourcesTool", "NotebookEdit",
                    "ReadMcpResourceDirTool", "ReadMcpResourceTool",
                    "SendMessage", "TaskCreate", "TaskGet", "TaskList",
                    "TaskStop", "TaskUpdate", "WebFetch", "WebSearch"}


def deferred_names(body):
    return {t["name"] for t in body["tools"]
            if t.get("defer_loading") is True}


def test_claude_code_profile(emulator, gateway):
    """Claude Code: its own built-in deferral list on top of the MCP tools,
    with no configuration; the search blocks stripped from its answer (its
    search is restored on its next turn, which costs less than the kept
    blocks: t/test_session_cost.py)."""
    gw = gateway(server=HOSTED % "")
    r, msg, up = claude_code_turn(emulator, gw,
                                  "claude-cli/2.1.197 (external, sdk-cli)")
    assert r.decision == "deferred_hosted"
    deferred = deferred_names(up)
    assert BUILTINS_2_1_197 <= deferred
    assert deferred - BUILTINS_2_1_197 == {
        t["name"] for t in up["tools"] if t["name"].startswith("mcp__")}
    assert kinds(msg) == ["text", "tool_use"]
    gw.stop()
    assert logged(gw)[0]["client"] == "claude_code"


@pytest.mark.parametrize("ua,conf", [
    ("curl/8.5.0", ""),
    ("claude-cli/2.1.197 (external, sdk-cli)",
     "toolsearch_client_profiles off;"),
], ids=["unknown-client", "profiles-off"])
def test_default_client(emulator, gateway, ua, conf):
    """An unknown client, or any client with the profiles off, gets what
    the location says: MCP tools only, the blocks stripped."""
    gw = gateway(server=HOSTED % conf)
    r, msg, up = claude_code_turn(emulator, gw, ua)
    assert r.decision == "deferred_hosted"
    assert not BUILTINS_2_1_197 & deferred_names(up)
    assert kinds(msg) == ["text", "tool_use"]
    gw.stop()
    assert logged(gw)[0]["client"] == "default"


def test_search_blocks_set_wins(emulator, gateway):
    """toolsearch_search_blocks set in the configuration is the operator's
    choice, for a recognised client too; its deferral list still holds."""
    gw = gateway(server=HOSTED % "toolsearch_search_blocks keep;")
    r, msg, up = claude_code_turn(emulator, gw,
                                  "claude-cli/2.1.197 (external, sdk-cli)")
    assert kinds(msg) == ["text", "server_tool_use",
                          "tool_search_tool_result", "tool_use"]
    assert BUILTINS_2_1_197 <= deferred_names(up)
    gw.stop()
    assert logged(gw)[0]["client"] == "claude_code"


def test_anthropic_sdk_keeps_blocks(emulator, gateway):
    """Anthropic's TypeScript SDK carries the blocks back: they stay in
    its answer; its tools are deferred by the location's rules only."""
    gw = gateway(server=HOSTED % "")
    r, msg, up = claude_code_turn(emulator, gw, "Anthropic/JS 1.14.0")
    assert kinds(msg) == ["text", "server_tool_use",
                          "tool_search_tool_result", "tool_use"]
    assert not BUILTINS_2_1_197 & deferred_names(up)
    gw.stop()
    assert logged(gw)[0]["client"] == "anthropic_sdk"


def strings(value):
    """Every string of a JSON value."""
    if isinstance(value, str):
        yield value
    elif isinstance(value, list):
        for v in value:
            yield from strings(v)
    elif isinstance(value, dict):
        for v in value.values():
            yield from strings(v)


def announced_builtins(client):
    """The built-ins a recorded Claude Code announces as deferred (the
    names after "…via ToolSearch…:" that are not MCP tools)."""
    for _, body, _ in client_requests(client):
        for text in strings(json.loads(body)):
            head, sep, names = text.partition(
                "The following deferred tools are now available via "
                "ToolSearch")
            if sep:
                lines = names.split(":\n", 1)[1].split("\n")
                return {n for n in lines if re.fullmatch(r"[A-Za-z]+", n)}
    raise AssertionError("no announcement in %s" % client)


def test_claude_code_list_is_its_newest_release():
    """The profile defers what claude-code.conf lists, and that list holds
    every built-in the newest recorded Claude Code defers itself (and
    DesignSync, which 2.1.332 sends, and defers, only in some
    environments: not in the recording's)."""
    own = announced_builtins("claude-code")
    with open(os.path.join(ROOT, "docs", "examples",
                           "claude-code.conf")) as f:
        conf = f.read()
    listed = set(conf.split("toolsearch_defer_tools", 1)[1]
                 .split(";", 1)[0].split())
    assert own and own <= listed and listed - own == {"DesignSync"}
    names = sorted(listed | {"Agent", "Bash", "Edit", "Read", "Write",
                             "Skill", "Workflow", "ScheduleWakeup"})
    body = json.dumps({
        "model": "claude-sonnet-4-5", "max_tokens": 9,
        "messages": [{"role": "user", "content": "hi"}],
        "tools": [{"name": n, "description": "d",
                   "input_schema": {"type": "object"}} for n in names]})
    out = Rewrite(body.encode(), "", "--user-agent",
                  "claude-cli/2.1.332 (external, sdk-cli)")
    assert out.report["client"] == "claude_code"
    assert deferred_names(json.loads(out.body)) == listed
    plain = Rewrite(body.encode(), "", "--user-agent", "curl/8")
    assert plain.decision == "nothing_to_defer"
