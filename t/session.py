"""A multi-turn client session through the gateway.

The client behaves like Claude Code: cache breakpoints on its system
blocks and on the last block of the last user message (moved there on
every turn), the assistant message carried back as it was received, the
result of each tool call sent in the next turn.  The model (the
emulator's script) calls each target tool in turn, searching for it first
when it is not loaded: hosted search where the request has the hosted
search tool, the gateway's tool_search otherwise.

Used by t/test_prompt_cache.py, which bills it with t/billing.py."""

import json

from conftest import request
from emulator import (Reply, call_of, hosted_search,
                      hosted_search_tool, text, tool_results, tool_use)

CACHE = {"type": "ephemeral"}
SEARCH_TOOL = "tool_search"
TARGETS = ("mcp__memory__create_entities", "mcp__github__create_issue")

# path: (the emulator's profile, the location's configuration)
PATHS = {
    "hosted": ("anthropic", "toolsearch_upstream anthropic; "
               "toolsearch_search hosted;"),
    "gateway_references": ("anthropic", "toolsearch_upstream anthropic; "
                           "toolsearch_search gateway;"),
    "gateway_plain": ("proxy", "toolsearch_upstream compatible; "
                      "toolsearch_search gateway; "
                      "toolsearch_found_tools tools;"),
    "gateway_wrapper": ("proxy", "toolsearch_upstream compatible; "
                        "toolsearch_search gateway;"),
}


def tool(name, description):
    return {"name": name, "description": description,
            "input_schema": {"type": "object", "properties": {
                "value": {"type": "string", "description": "the value"}}}}


TOOLS = [
    tool("Read", "Reads a file."),
    tool("Edit", "Edits a file."),
    tool("Agent", "Starts a sub-agent."),
    tool("mcp__memory__create_entities", "Create entities in memory"),
    tool("mcp__memory__read_graph", "Read the knowledge graph"),
    tool("mcp__github__create_issue", "Create an issue on github"),
    tool("mcp__github__list_issues", "List the issues of a repository"),
    tool("mcp__slack__send_message", "Send a message to a slack channel"),
]


def first_body():
    return {
        "model": "claude-sonnet-4-5",
        "max_tokens": 1024,
        "system": [
            {"type": "text", "text": "You are a coding agent."},
            {"type": "text", "text": "Work carefully.",
             "cache_control": CACHE}],
        "tools": [dict(t) for t in TOOLS],
        "messages": [{"role": "user", "content": [
            {"type": "text", "text": "Record Alice, then file an issue.",
             "cache_control": CACHE}]}],
    }


def call_id(name):
    return "toolu_call_" + name.split("__")[-1]


def model(targets=TARGETS):
    """The emulator's script: the next target tool not called yet."""
    def answer(req):
        results = tool_results(req.get("messages", []))
        for target in targets:
            if call_id(target) in results:
                continue
            call = tool_use(target, {"value": "x"}, call_id(target))
            through = call_of(req, target, {"value": "x"}, call_id(target))
            if through:
                return Reply([text("Calling %s." % target), through])
            search_id = "toolu_search_" + target.split("__")[-1]
            if search_id in results:
                return Reply([text("%s was not found." % target)])
            if hosted_search_tool(req):
                blocks = hosted_search(req, target.replace("_", " "),
                                       "srv" + search_id)
                return Reply([text("Searching.")] + blocks + [call],
                             searches=1)
            return Reply([text("Searching."), tool_use(
                SEARCH_TOOL, {"query": "select:" + target}, search_id)])
        return Reply([text("All done.")])
    return answer


def move_breakpoint(messages):
    """Claude Code's breakpoint: only on the last block of the last user
    message."""
    for m in messages:
        if isinstance(m["content"], list):
            for b in m["content"]:
                b.pop("cache_control", None)
    messages[-1]["content"][-1]["cache_control"] = CACHE


def run(gw, body=None, turns=4, path="/v1/messages"):
    """Plays the session; returns the client's answers (parsed)."""
    body = body or first_body()
    answers = []
    for _ in range(turns):
        raw = json.dumps(body, separators=(",", ":")).encode()
        r = request(gw, "POST", path, raw,
                    (("Content-Type", "application/json"),
                     ("anthropic-version", "2023-06-01")))
        assert r.status == 200, r.body
        msg = json.loads(r.body)
        answers.append(msg)
        calls = [b for b in msg["content"] if b["type"] == "tool_use"]
        if not calls:
            break
        body["messages"].append({"role": "assistant",
                                 "content": msg["content"]})
        body["messages"].append({"role": "user", "content": [
            {"type": "tool_result", "tool_use_id": c["id"],
             "content": "ok"} for c in calls]})
        move_breakpoint(body["messages"])
    return answers

