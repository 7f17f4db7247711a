"""Conversation hygiene through a real Nginx: client-side tool search
recorded from Claude Code, routed to every upstream profile, always reaches
the strict emulator in a form it accepts; a conversation whose MCP server
disappears keeps working."""

import copy
import json

import pytest

from conftest import betas_of, load_fixture, post_json, request
from emulator import Reply, text, tool_use

CLIENT_SIDE = ["ts-true/002.json", "ts-true/003.json", "ts-true/004.json",
               "ts-true-haiku45/002.json", "ts-true-haiku45/003.json",
               "ts-true-haiku45/004.json", "ts-false-caller/002.json",
               "ts-false-caller/003.json"]

# gateway settings, the emulator profile they face, and whether
# tool_reference may reach it
ROUTES = {
    "anthropic": ("toolsearch_upstream anthropic;", "anthropic", True),
    "vertex": ("toolsearch_upstream vertex;", "vertex", True),
    "bedrock": ("toolsearch_upstream bedrock;", "bedrock", True),
    "compatible": ("toolsearch_upstream compatible;", "proxy", False),
    "compatible-opt-in": ("toolsearch_upstream compatible; "
                          "toolsearch_upstream_tool_reference on;",
                          "anthropic", True),
    "kill-switch": ("toolsearch_upstream anthropic; "
                    "toolsearch_disable_betas on;", "anthropic", False),
}

LOG = ("log_format hyg '$toolsearch_decision conv=$toolsearch_refs_converted "
       "stale=$toolsearch_refs_stale moved=$toolsearch_siblings_moved "
       "added=$toolsearch_boundaries_added "
       "discovered=$toolsearch_discovered';")


def hygiene_gateway(gateway, settings):
    return gateway(http=LOG, server="toolsearch on; access_log hyg.log hyg; "
                   + settings)


def hyg_log(gw):
    gw.stop()
    with open(gw.prefix + "/hyg.log") as f:
        return f.read().splitlines()


@pytest.mark.parametrize("route", sorted(ROUTES))
def test_client_side_fixtures_accepted_on_every_route(emulator, gateway,
                                                      route):
    settings, profile, refs_ok = ROUTES[route]
    emulator.profile = profile
    gw = hygiene_gateway(gateway, settings)
    for name in CLIENT_SIDE:
        fx = load_fixture(name)
        r = request(gw, "POST", fx.url, fx.body, fx.headers)
        got = emulator.last()
        assert r.status == 200, (name, got.error)
        assert got.error is None
        if not refs_ok:
            assert b"tool_reference" not in got.body, name
            assert b"defer_loading" not in got.body, name


def test_unsupported_model_mid_conversation(emulator, gateway):
    # the session switches to a model without tool_reference support
    fx = load_fixture("ts-true-haiku45/003.json")
    body = fx.body.replace(b'"model":"claude-haiku-4-5"',
                           b'"model":"claude-3-5-haiku-20241022"', 1)
    assert body != fx.body
    gw = hygiene_gateway(gateway, "toolsearch_upstream anthropic;")
    r = request(gw, "POST", fx.url, body, fx.headers)
    got = emulator.last()
    assert r.status == 200, got.error
    assert b"tool_reference" not in got.body
    assert "advanced-tool-use-2025-11-20" not in betas_of(got.headers)
    assert hyg_log(gw) == [
        "client_managed conv=1 stale=0 moved=0 added=0 discovered=1"]


MEMORY = ["mcp__memory__create_entities", "mcp__memory__read_graph"]
FILES = ["mcp__files__read_file", "mcp__files__write_file"]


def schema_tool(name, deferred):
    t = {"name": name, "description": "The %s tool." % name,
         "input_schema": {"type": "object"}}
    if deferred:
        t["defer_loading"] = True
    return t


class Client:
    """A client doing its own tool search, the way Claude Code does."""

    def __init__(self, gw):
        self.gw = gw
        self.servers = {"memory": MEMORY, "files": FILES}
        self.messages = [{"role": "user", "content": "work"}]
        self.found = set()

    def tools(self):
        tools = [schema_tool("ToolSearch", False), schema_tool("Read", False)]
        for names in self.servers.values():
            tools += [schema_tool(n, True) for n in names]
        return tools

    def turn(self):
        body = {"model": "claude-sonnet-4-5", "max_tokens": 100,
                "messages": self.messages, "tools": self.tools()}
        r = post_json(self.gw, json.dumps(body).encode(), headers=[
            ("Content-Type", "application/json"),
            ("anthropic-beta", "advanced-tool-use-2025-11-20")])
        return body, r

    def answer(self, reply):
        """Appends the assistant's reply and the client's tool results."""
        self.messages.append({"role": "assistant", "content": reply})
        results = []
        for b in reply:
            if b["type"] != "tool_use":
                continue
            if b["name"] == "ToolSearch":
                name = b["input"]["query"].split(":", 1)[1]
                self.found.add(name)
                results.append({"type": "tool_result",
                                "tool_use_id": b["id"], "content": [
                                    {"type": "tool_reference",
                                     "tool_name": name}]})
            else:
                results.append({"type": "tool_result",
                                "tool_use_id": b["id"], "content": "ok"})
        if results:
            self.messages.append({"role": "user", "content": results})


def script():
    """Ten turns: search and call a memory tool, then a files tool."""
    plan = [("ToolSearch", {"query": "select:" + MEMORY[0]}),
            (MEMORY[0], {}),
            ("ToolSearch", {"query": "select:" + MEMORY[1]}),
            (MEMORY[1], {}),
            ("ToolSearch", {"query": "select:" + FILES[0]}),
            (FILES[0], {}),
            ("ToolSearch", {"query": "select:" + FILES[1]}),
            (FILES[1], {}),
            ("Read", {})]
    replies = [Reply([tool_use(n, i, "toolu_%02d" % k)])
               for k, (n, i) in enumerate(plan)]
    return replies + [Reply([text("all done")])]


def test_mcp_server_disappears_after_turn_four(emulator, gateway):
    emulator.script = script()
    gw = hygiene_gateway(gateway, "toolsearch_upstream anthropic;")
    client = Client(gw)
    last = None
    for turn in range(1, 11):
        if turn == 5:
            del client.servers["memory"]        # the MCP server went away
        body, r = client.turn()
        got = emulator.last()
        assert r.status == 200, (turn, got.error)
        last = json.loads(r.body)
        client.answer(last["content"])
        if turn == 5:
            sent_directly = body
    assert last["content"] == [text("all done")]

    # without the gateway the same turn fails for good
    direct = emulator.__class__(profile="anthropic").start()
    try:
        import http.client
        c = http.client.HTTPConnection("127.0.0.1", direct.port, timeout=10)
        c.request("POST", "/v1/messages", json.dumps(sent_directly),
                  {"Content-Type": "application/json",
                   "anthropic-beta": "advanced-tool-use-2025-11-20"})
        resp = c.getresponse()
        assert resp.status == 400
        assert b"Tool reference 'mcp__memory__create_entities' not found" \
            in resp.read()
        c.close()
    finally:
        direct.stop()

    log = hyg_log(gw)
    assert len(log) == 10
    # turns 5..10 carry both memory references, now stale
    assert all("stale=2" in line for line in log[4:]), log
    assert all("stale=0" in line for line in log[:4]), log


def test_turn_boundary_through_nginx(emulator, gateway):
    body = {
        "model": "claude-sonnet-4-5", "max_tokens": 100,
        "messages": [
            {"role": "user", "content": "go"},
            {"role": "assistant", "content": [tool_use(
                "ToolSearch", {"query": "select:mcp__a__b"}, "toolu_1")]},
            {"role": "user", "content": [
                {"type": "tool_result", "tool_use_id": "toolu_1",
                 "content": [{"type": "tool_reference",
                              "tool_name": "mcp__a__b"}]},
                {"type": "text", "text": "<system-reminder>memo"
                                         "</system-reminder>"}]},
            {"role": "assistant", "content": [tool_use(
                "mcp__a__b", {}, "toolu_2")]},
            {"role": "user", "content": [
                {"type": "tool_result", "tool_use_id": "toolu_2",
                 "content": "ok"}]}],
        "tools": [schema_tool("ToolSearch", False),
                  schema_tool("mcp__a__b", True)]}
    headers = [("Content-Type", "application/json"),
               ("anthropic-beta", "advanced-tool-use-2025-11-20")]
    on = hygiene_gateway(gateway, "toolsearch_upstream anthropic;")
    r = post_json(on, json.dumps(body).encode(), headers=headers)
    assert r.status == 200, emulator.last().error
    sent = emulator.last().json()["messages"]
    assert sent[2]["content"][1] == {"type": "text", "text": "Tool loaded."}
    assert sent[4]["content"][1]["text"].startswith("<system-reminder>")

    off = hygiene_gateway(gateway, "toolsearch_upstream anthropic; "
                          "toolsearch_turn_boundary off;")
    raw = json.dumps(body).encode()
    r = post_json(off, raw, headers=headers)
    assert r.status == 200
    assert emulator.last().body == raw
    assert hyg_log(on) == [
        "client_managed conv=0 stale=0 moved=1 added=1 discovered=1"]
