"""Responses requests built from the recorded Messages sessions of
t/fixtures/clients: the same client's system prompt, conversation and MCP
tools, in the shapes docs/gateway-search.md ("Responses") names after
openai-formats.md's recordings: the AI SDK's openai provider (opencode,
kilo, mastra: store false, the system prompt as an input message,
encrypted reasoning asked for), the AI SDK with store left on (earlier
items as item_reference), the Agents SDK (instructions, and
previous_response_id when it chains), Codex (instructions, a
client-executed tool_search).  Built, not recorded, as
t/chat_fixtures.py builds its Chat Completions bodies."""

import json
import os

from chat_fixtures import text_of
from conftest import client_requests, recorded_session

# the clients recorded on the Responses API (t/fixtures/openai/README.md)
RECORDED_DIR = os.path.join(os.path.dirname(os.path.abspath(__file__)),
                            "fixtures", "openai-responses")
RECORDED = sorted(d for d in os.listdir(RECORDED_DIR)
                  if os.path.isdir(os.path.join(RECORDED_DIR, d)))

CLIENT_HEADERS = [("Content-Type", "application/json"),
                  ("Authorization", "Bearer sk-test"),
                  ("User-Agent", "ai-sdk/openai/3.0 runtime/node.js/22")]


def input_items(body):
    """A Messages conversation as Responses input items."""
    out = []
    for m in body["messages"]:
        content = m["content"]
        blocks = content if isinstance(content, list) else \
            [{"type": "text", "text": content}]
        if m["role"] == "assistant":
            said = text_of(blocks)
            if said:
                out.append({"role": "assistant", "content": [
                    {"type": "output_text", "text": said}]})
            for b in blocks:
                if b.get("type") == "tool_use":
                    out.append({"type": "function_call",
                                "call_id": b["id"], "name": b["name"],
                                "arguments": json.dumps(b["input"])})
            continue
        for b in blocks:
            if b.get("type") == "tool_result":
                out.append({"type": "function_call_output",
                            "call_id": b["tool_use_id"],
                            "output": text_of(b.get("content", ""))})
        said = text_of([b for b in blocks if b.get("type") == "text"])
        if said:
            out.append({"role": "user", "content": [
                {"type": "input_text", "text": said}]})
    return out


def functions(body):
    return [{"type": "function", "name": t["name"],
             "description": t.get("description", ""),
             "parameters": t["input_schema"], "strict": False}
            for t in body.get("tools", []) if "input_schema" in t]


def responses_body(body, shape="ai-sdk", stream=True, model="gpt-4.1"):
    """A Messages body as the same client's Responses body."""
    out = {"model": model}
    system = text_of(body.get("system") or "")
    items = input_items(body)
    if shape in ("agents", "codex"):
        out["instructions"] = system
        out["input"] = items
    else:
        out["input"] = ([{"role": "system", "content": system}]
                        if system else []) + items
    out["tools"] = functions(body)
    out["tool_choice"] = "auto"
    if shape == "ai-sdk":
        out["store"] = False
        out["include"] = ["reasoning.encrypted_content"]
        out["reasoning"] = {"effort": "low"}
    elif shape == "codex":
        out["store"] = False
        out["parallel_tool_calls"] = False
        out["tools"].append({"type": "tool_search", "execution": "client",
                             "description": "Search MCP tools.",
                             "parameters": {"type": "object"}})
    if stream:
        out["stream"] = True
    return out


def responses_requests(client, shape="ai-sdk", stream=True):
    """The client's recorded requests that carry tools, as Responses
    bodies (bytes, compact as the SDKs write them)."""
    out = []
    for _, body, _ in client_requests(client):
        b = json.loads(body)
        if b.get("tools"):
            out.append(json.dumps(responses_body(b, shape, stream),
                                  separators=(",", ":")).encode())
    return out


def recorded_requests(client, stream=True):
    """The client's recorded Responses session
    (conftest.recorded_session)."""
    return recorded_session(RECORDED_DIR, client, stream)



def tool_bytes(body):
    """What of a Responses body the model sees of its tools."""
    tools = json.loads(body).get("tools", [])
    return len(json.dumps(tools, separators=(",", ":")).encode())


def sse_events(data):
    """(event name, data object) of a Responses event stream."""
    out = []
    for event in data.decode().split("\n\n"):
        name, payload = None, None
        for line in event.split("\n"):
            if line.startswith("event: "):
                name = line[len("event: "):]
            elif line.startswith("data: "):
                payload = json.loads(line[len("data: "):])
        if payload is not None:
            out.append((name, payload))
    return out
