"""Whole sessions of recorded clients through nginx and the module in
front of the emulator, billed with t/billing.py: the session-cost
benchmark (bench/cost_bench.py) and t/test_session_cost.py.

A session is TURNS turns of a scripted model.  The first request is the
client's recorded one (t/fixtures), sent with its recorded headers; the
later ones follow the client's recorded behaviour:

* claude-code (Claude Code 2.1.197, 149 tools, t/fixtures/claude-code/
  ts-unset): breakpoints on system[1], system[2] and the last block of
  the last user message, moved there every turn; the assistant message
  carried back whole, search blocks included.
* claude-code-search (the same client with its own search on, ts-true):
  its ToolSearch, a tool_reference result with a "Tool loaded." sibling,
  the found tool added to tools[] deferred, sorted by name.
* opencode (1.18.33, 77 tools): breakpoints on system[0] and on the last
  block of each of the last two messages; search blocks dropped.  Source:
  opencode's applyCaching (packages/opencode/src/provider/transform.ts:
  the first two system messages and the last two others), and its
  recorded requests (t/fixtures/clients/opencode/003.json).
* cline (3.0.65, 89 tools): one breakpoint, on the last text part of the
  last user message, which stays the task's first message: cline's CLI
  sends through the AI SDK (buildAiSdkRequestMessages in
  sdk/packages/llms/src/providers/ai-sdk.ts), where tool results are
  `tool` messages, not `user` ones, so they never move it; its recorded
  requests show it there and nowhere else (t/fixtures/clients/cline,
  system prompt included).  The last-two-user-messages placement of
  cline's older VS Code anthropic provider does not apply to this
  client.  Search blocks dropped.

The model calls one of the client's built-in tools on most turns (its
result is a page of prose), discovers a deferred tool on the turns of
DISCOVERY_TURNS (hosted search, the gateway's search or the client's, as
the request offers), calls each found tool again two turns later, and
answers on the last turn.  Answers are JSON (the recorded bodies stream;
the billing does not depend on it).
"""

import json

import billing
from conftest import client_requests, load_fixture, request
from emulator import (Emulator, Reply, call_of, hosted_search,
                      hosted_search_tool, text, tool_results, tool_use,
                      valid_input)
from gateway import Gateway

TURNS = 20
DISCOVERY_TURNS = (1, 5, 12, 16)
CACHE = {"type": "ephemeral"}
SEARCH_BLOCKS = ("server_tool_use", "tool_search_tool_result")


class Client:
    def __init__(self, name, first, builtin, targets, breakpoints,
                 carries_search, search_tool=None):
        self.name = name
        self.first = first              # () -> (path, body bytes, headers)
        self.builtin = builtin          # (name, input) of its file reader
        self.targets = targets          # MCP tools the model discovers
        self.breakpoints = breakpoints  # moves them, on messages
        self.carries_search = carries_search
        self.search_tool = search_tool  # its own search tool, or None


def recorded(client, n):
    def first():
        path, body, headers = client_requests(client)[n]
        return dict(headers)["path"], body, [
            (k, v) for k, v in headers if k != "path"]
    return first


def claude_code_fixture(run):
    def first():
        f = load_fixture(run + "/002.json")
        return f.url, f.body, f.headers
    return first


def last_blocks(messages, count):
    """a breakpoint on the last block of each of the last count
    messages, none elsewhere in messages"""
    for m in messages:
        if isinstance(m["content"], list):
            for b in m["content"]:
                b.pop("cache_control", None)
    for m in messages[len(messages) - count:]:
        if isinstance(m["content"], list) and m["content"]:
            m["content"][-1]["cache_control"] = CACHE


def claude_code_breakpoints(messages):
    user = [m for m in messages if m["role"] == "user"]
    last_blocks(messages, 0)
    user[-1]["content"][-1]["cache_control"] = CACHE


def fixed_breakpoints(messages):
    """cline: the recorded breakpoint on the first user message stays (its
    later user turns are tool results only)"""


CC_TARGETS = ("mcp__memory__create_entities", "mcp__github__create_issue",
              "mcp__filesystem__write_file", "mcp__playwright__browser_click")
CC_READ = ("Read", {"file_path": "/src/main.c"})

CLIENTS = {
    "claude-code": Client(
        "claude-code", claude_code_fixture("ts-unset"), CC_READ, CC_TARGETS,
        claude_code_breakpoints, True),
    "claude-code-search": Client(
        "claude-code-search", claude_code_fixture("ts-true"), CC_READ,
        CC_TARGETS, claude_code_breakpoints, True, "ToolSearch"),
    "opencode": Client(
        "opencode", recorded("opencode", 1), ("read", {"filePath": "/src"}),
        ("memory_create_entities", "github_create_issue",
         "filesystem_write_file", "everything_echo"),
        lambda m: last_blocks(m, 2), False),
    "cline": Client(
        "cline", recorded("cline", 0), ("read_files", {"paths": ["/src"]}),
        ("memory__create_entities", "github__create_issue",
         "filesystem__write_file", "everything__echo"),
        fixed_breakpoints, False),
}


def plan(client, discoveries, turns=TURNS):
    """turn -> the tool the model calls then (the last turn answers)"""
    out = {t: client.builtin[0] for t in range(1, turns)}
    for d, target in zip(DISCOVERY_TURNS[:discoveries], client.targets):
        out[d] = target
        if d + 2 < turns and d + 2 not in DISCOVERY_TURNS[:discoveries]:
            out[d + 2] = target
    return out


def call_id(turn):
    return "toolu_t%02d" % turn


def turn_of(req):
    """the session's turn a request belongs to: one more than the calls
    of earlier turns answered in its history"""
    results = tool_results(req.get("messages", []))
    return 1 + sum(1 for k in results if k.startswith("toolu_t"))


def model(client, calls, turns=TURNS):
    """The emulator's script: what the model does on each turn.  An MCP
    tool's input has the members its schema requires."""
    schemas = {t.get("name"): t.get("input_schema") or {}
               for t in json.loads(client.first()[1]).get("tools", [])}

    def answer(req):
        results = tool_results(req.get("messages", []))
        turn = turn_of(req)
        if turn >= turns:
            return Reply([text("Done.")])
        name = calls[turn]
        tool_input = client.builtin[1] if name == client.builtin[0] \
            else valid_input(schemas.get(name, {}), "turn %d" % turn)
        call = tool_use(name, tool_input, call_id(turn))
        through = call_of(req, name, tool_input, call_id(turn))
        if through:
            return Reply([text("Calling %s." % name), through])
        search_id = "toolu_s%02d" % turn
        if search_id in results:
            return Reply([text("%s was not found." % name)])
        if hosted_search_tool(req):
            blocks = hosted_search(req, name, "srvtoolu_s%02d" % turn)
            return Reply([text("Searching.")] + blocks + [call], searches=1)
        names = {t.get("name") for t in req.get("tools", [])}
        search = client.search_tool if client.search_tool in names \
            else "tool_search"
        query = {"query": "select:" + name}
        if search == "ToolSearch":
            query["max_results"] = 5
        return Reply([text("Searching."), tool_use(search, query, search_id)])
    return answer


def page(turn):
    """a built-in tool's result: a page of prose"""
    line = "Line %d of the file read on turn %d: the code does its work.\n"
    return "".join(line % (i, turn) for i in range(24))


def result_for(client, call, full_tools):
    """the client's answer to one call, and the tools it adds"""
    if call["name"] == client.search_tool:
        name = call["input"]["query"][len("select:"):]
        found = dict(full_tools[name], defer_loading=True)
        return [{"type": "tool_result", "tool_use_id": call["id"],
                 "content": [{"type": "tool_reference", "tool_name": name}]},
                text("Tool loaded.")], [found]
    content = page(int(call["id"][-2:])) if call["name"] == \
        client.builtin[0] else json.dumps({"ok": True, "turn": call["id"]})
    return [{"type": "tool_result", "tool_use_id": call["id"],
             "content": content}], []


def full_definitions():
    body = json.loads(load_fixture("ts-unset/002.json").body)
    return {t["name"]: t for t in body["tools"]}


def path_of(client):
    """the request target of the client's requests, without a query"""
    return client.first()[0].split("?")[0]


def play(gw, client, turns=TURNS):
    """Plays the session through gw; returns the client's answers."""
    path, raw, headers = client.first()
    body = json.loads(raw)
    body.pop("stream", None)
    full_tools = full_definitions() if client.search_tool else {}
    answers = []
    for _ in range(turns + len(DISCOVERY_TURNS)):
        data = json.dumps(body, separators=(",", ":"),
                          ensure_ascii=False).encode()
        r = request(gw, "POST", path, data, headers)
        assert r.status == 200, r.body[:2000]
        msg = json.loads(r.body)
        answers.append(msg)
        calls = [b for b in msg["content"] if b["type"] == "tool_use"]
        if not calls:
            break
        content = [b for b in msg["content"] if client.carries_search
                   or b["type"] not in SEARCH_BLOCKS]
        body["messages"].append({"role": "assistant", "content": content})
        user = []
        for c in calls:
            blocks, added = result_for(client, c, full_tools)
            user += blocks
            if added:
                # Claude Code sorts tools[] by name
                body["tools"] = sorted(body["tools"] + added,
                                       key=lambda t: t.get("name", ""))
        body["messages"].append({"role": "user", "content": user})
        client.breakpoints(body["messages"])
    return answers


class Result:
    """one session: the upstream's requests and what they cost"""

    def __init__(self, client, label, answers, requests):
        self.client = client
        self.label = label
        self.answers = answers
        self.requests = requests
        self.bill = billing.bill_session([q.body for q in requests])
        self.turns = [turn_of(q.json()) for q in requests]

    def rejected(self):
        return [(i + 1, q.error) for i, q in enumerate(self.requests)
                if q.status != 200]


def run(client_name, label, profile, server, discoveries=4, turns=TURNS):
    """One session of a client through a fresh nginx and emulator."""
    client = CLIENTS[client_name]
    emu = Emulator(profile)
    emu.script = model(client, plan(client, discoveries, turns), turns)
    emu.start()
    gw = Gateway(emu.port, server=server, log_level="warn").start()
    try:
        answers = play(gw, client, turns)
        # the session's own: a stray connection to the port is not
        return Result(client_name, label, answers,
                      [q for q in emu.requests if q.method == "POST"
                       and q.path.startswith(path_of(client))])
    finally:
        gw.remove()
        emu.stop()
