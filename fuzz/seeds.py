"""Writes the fuzz targets' seed corpora from the fixtures and the shapes
the tests use: python3 fuzz/seeds.py DIR makes DIR/request, DIR/sse,
DIR/search, DIR/chat and DIR/responses.  Each seed starts with the bytes
its target draws its settings from."""

import glob
import hashlib
import json
import os
import sys

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
sys.path.insert(0, os.path.join(ROOT, "t"))

from emulator import (ChatReply, Emulator, Reply, chat_completion,  # noqa
                      chat_events, sse_events, text, tool_use)
from chat_fixtures import chat_requests                      # noqa: E402

# policy prefixes (fuzz/fz.c): hosted on anthropic, gateway on compatible,
# auto:10 with lists and hints on vertex, kill switch on bedrock
POLICIES = [bytes([1, 10, 0x88, 1, 2, 4, 0x00, 0x01]),
            bytes([1, 10, 0x8b, 2, 2, 4, 0x05, 0x0a]),
            bytes([2, 10, 0x89, 0, 5, 9, 0x19, 0x63]),
            bytes([0, 0, 0x02, 0, 0, 0, 0x00, 0x04])]

TOOL = {"name": "Bash", "description": "Runs a command.",
        "input_schema": {"type": "object",
                         "properties": {"command": {"type": "string"}}}}


def mcp(name, desc="Creates entities in the memory graph."):
    return {"name": "mcp__memory__" + name, "description": desc,
            "input_schema": {"type": "object"}}


def body(messages, tools=None, **top):
    b = {"model": "claude-sonnet-4-5", "max_tokens": 64,
         "messages": messages,
         "tools": [TOOL, mcp("create_entities"), mcp("read_graph")]
         if tools is None else tools}
    b.update(top)
    return json.dumps(b).encode()


def user(content):
    return {"role": "user", "content": content}


def assistant(content):
    return {"role": "assistant", "content": content}


def ref(name):
    return {"type": "tool_reference", "tool_name": name}


def search_pair(id_, name, query, found):
    """A search call and its result, as hosted search writes them."""
    return [{"type": "server_tool_use", "id": id_, "name": name,
             "input": {"query": query}},
            {"type": "tool_search_tool_result", "tool_use_id": id_,
             "content": {"type": "tool_search_tool_search_result",
                         "tool_references": [ref(n) for n in found]}}]


def shapes():
    """Small bodies with every tool-search artifact the engine reads."""
    hi = [user("hi")]
    client = [user("find memory"),
              assistant([tool_use("ToolSearch", {"query": "memory"}, "tu1")]),
              user([{"type": "tool_result", "tool_use_id": "tu1",
                     "content": [ref("mcp__memory__read_graph"),
                                 ref("mcp__gone__x")]},
                    {"type": "text", "text": "go on"}])]
    hosted = [user("find memory"),
              assistant(search_pair("srv1", "tool_search_tool_bm25", "memory",
                                    ["mcp__memory__read_graph",
                                     "mcp__gone__x"]) + [text("found")]),
              user("thanks")]
    gateway = [user("find memory"),
               assistant(search_pair("toolu_search1", "tool_search",
                                     "select:mcp__memory__read_graph",
                                     ["mcp__memory__read_graph"])
                         + [dict(tool_use("mcp__memory__read_graph", {},
                                          "tu2"),
                                 caller={"type": "direct"})]),
               user([{"type": "tool_result", "tool_use_id": "tu2",
                      "content": "ok"}])]
    deferred = [dict(t, defer_loading=True) for t in
                [mcp("create_entities"), mcp("read_graph")]]
    yield body(hi)
    yield body(hi, tools=[])
    yield body(client, tools=[TOOL, {"name": "ToolSearch",
                                     "input_schema": {"type": "object"}}]
               + deferred)
    yield body(hosted, tools=[TOOL, {"type": "tool_search_tool_bm25_20251119",
                                     "name": "tool_search_tool_bm25"}]
               + deferred)
    yield body(hosted)
    yield body(gateway, stream=True)
    yield body(hi, system="You are terse.", stream=False,
               tool_choice={"type": "tool", "name": "mcp__memory__read_graph"})
    yield body(hi, system=[{"type": "text", "text": "S",
                            "cache_control": {"type": "ephemeral"}}],
               tools=[TOOL, dict(mcp("read_graph"),
                                 cache_control={"type": "ephemeral"})])
    yield body(hi, anthropic_version="bedrock-2023-05-31",
               anthropic_beta=["tool-search-tool-2025-10-19", "x"])
    yield body(hi, model="claude-3-5-haiku-20241022")


def small(fixture):
    """A fixture cut to a few tools and its last messages."""
    b = json.loads(fixture)
    b["tools"] = b.get("tools", [])[:4] + b.get("tools", [])[-4:]
    b["messages"] = b.get("messages", [])[-4:]
    return json.dumps(b).encode()


def request_seeds():
    fixtures = sorted(p for p in glob.glob(os.path.join(
        ROOT, "t", "fixtures", "claude-code", "*", "[0-9][0-9][0-9].json")))
    bodies = list(shapes())
    for path in fixtures:
        with open(path, "rb") as f:
            data = f.read()
        bodies += [data, small(data)]
    for i, b in enumerate(bodies):
        for p in POLICIES if len(b) < 20000 else POLICIES[:1]:
            yield p + b
        del i


def message(blocks, stop=None):
    r = Reply(blocks, stop)
    return {"id": "msg_1", "type": "message", "role": "assistant",
            "model": "m", "content": r.blocks, "stop_reason": r.stop_reason,
            "stop_sequence": None,
            "usage": {"input_tokens": 10, "output_tokens": 5}}


def answers():
    search = tool_use("tool_search", {"query": "memory create"},
                      "toolu_search1")
    yield message([text("Hello.")])
    yield message([text("Let me search."), search])
    yield message([search, tool_use("Bash", {"command": "ls"}, "tu1")])
    yield message([tool_use("mcp__memory__create_entities", {}, "tu2")])
    yield message([{"type": "thinking", "thinking": "hm",
                    "signature": "sig"}, search])
    yield message([{"type": "server_tool_use", "id": "srv1",
                    "name": "web_search", "input": {"query": "x"}}, search])
    yield message([text("cut")], "max_tokens")
    # the call wrapper's calls: one of a tool of the request, one not
    yield message([text("Calling."), tool_use("call_tool", {
        "name": "mcp__memory__create_entities", "arguments": {"a": 1}},
        "tu_w")])
    yield message([tool_use("call_tool", {"name": "nope", "arguments": {}},
                            "tu_w"), search])


def sse_seeds():
    for m in answers():
        events = "".join(sse_events(m)).encode()
        yield b"\x00" + events
        yield b"\x02" + events.replace(b"\n", b"\r\n")
        yield b"\x01" + json.dumps(m).encode()
    broken = message([{"type": "server_tool_use", "id": "srv1",
                       "name": "web_search", "input": {"q": 1}},
                      tool_use("tool_search", {"query": "memory"}, "tu_s")])
    yield b"\x04" + "".join(sse_events(broken)).replace(
        '{\\"q\\": 1}', '{\\"q\\": ').encode()
    yield b"\x00event: error\ndata: {\"type\":\"error\",\"error\":{}}\n\n"
    yield b"\x00data: not json\n\n: comment\n\nevent: ping\n\n"


def search_seeds():
    with open(os.path.join(ROOT, "t", "search", "queries.json")) as f:
        queries = [q["query"] for q in json.load(f)][:60]
    queries += ["select:mcp__memory__read_graph,Bash", "+slack send message",
                "mcp__github", "(a+)+$", "^.*(x|y)*.*$", "", "   ",
                "select:", "a" * 1100]
    for i, q in enumerate(queries):
        yield bytes([i % 3, 5 + i % 7]) + q.encode()


def chat_seeds():
    """Chat Completions: requests (even first byte, then a policy) and
    answers (odd first byte: stream or JSON, budget, cuts)."""
    for client in ("opencode", "cline", "ai-sdk"):
        for b in chat_requests(client):
            yield b"\x00" + POLICIES[1] + b
    emu = Emulator.__new__(Emulator)
    emu.counter = 0
    emu.lock = __import__("threading").Lock()
    search = ("tool_search", {"query": "memory create"}, "call_s")
    for reply in (ChatReply("Hello."), ChatReply("Let me search.", [search]),
                  ChatReply(None, [search, ("bash", {"c": "ls"}, "call_b")]),
                  ChatReply(None, [("mcp__memory__create_entities", {},
                                    "call_d")]),
                  ChatReply("cut", finish_reason="length")):
        c = chat_completion(emu, {"model": "gpt-4.1"}, reply, 400)
        events = "".join(chat_events(c, {"include_usage": True})).encode()
        yield b"\x01" + events
        yield b"\x15" + events.replace(b"\n", b"\r\n")
        yield b"\x03" + json.dumps(c).encode()


def responses_seeds():
    """Responses: requests (even first byte: the compatible upstream, 2:
    openai; then a policy) and answers (odd first byte: events or JSON,
    budget, cuts)."""
    from emulator_responses import (Context, ResponsesReply,
                                    response_object, responses_events)
    from responses_fixtures import responses_requests
    for client in ("opencode", "cline"):
        for b in responses_requests(client):
            yield b"\x00" + POLICIES[1] + b
            yield b"\x02" + POLICIES[1] + b.replace(b"gpt-4.1", b"gpt-5.4")
    emu = Emulator.__new__(Emulator)
    emu.counter = 0
    emu.lock = __import__("threading").Lock()
    search = ("tool_search", {"query": "memory create"}, "call_s")
    for reply in (ResponsesReply("Hello."),
                  ResponsesReply("Let me search.", [search]),
                  ResponsesReply(None, [search, ("bash", {"c": "ls"},
                                                 "call_b")]),
                  ResponsesReply(None, [("mcp__memory__create_entities", {},
                                         "call_d")])):
        r = response_object(emu, {"model": "gpt-4.1", "reasoning": {}},
                            reply, Context(), 400)
        events = "".join(responses_events(r)).encode()
        # each answer at both parities: fuzz_responses runs an answer of
        # odd length as a stored exchange
        for tail in (b"", b"\n"):
            yield b"\x01" + events + tail
            yield b"\x15" + events.replace(b"\n", b"\r\n") + tail
            yield b"\x03" + json.dumps(r).encode() + tail


def write(directory, seeds):
    os.makedirs(directory, exist_ok=True)
    for s in seeds:
        name = hashlib.sha1(s).hexdigest()
        with open(os.path.join(directory, name), "wb") as f:
            f.write(s)


def main():
    out = sys.argv[1]
    write(os.path.join(out, "request"), request_seeds())
    write(os.path.join(out, "sse"), sse_seeds())
    write(os.path.join(out, "search"), search_seeds())
    write(os.path.join(out, "chat"), chat_seeds())
    write(os.path.join(out, "responses"), responses_seeds())


if __name__ == "__main__":
    main()
