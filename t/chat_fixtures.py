"""Chat Completions requests: recorded from real clients
(t/fixtures/openai/<client>/, `recorded_requests`), and built from the
recorded Messages sessions of t/fixtures/clients for the clients not
recorded in this format yet (`chat_requests`): the same client's system
prompt, conversation and MCP tools, in the shape the AI SDK's
openai-compatible provider (opencode, kilo, mastra) sends them to
POST /v1/chat/completions."""

import json
import os

from conftest import client_requests, recorded_session

OPENAI = os.path.join(os.path.dirname(os.path.abspath(__file__)),
                      "fixtures", "openai")
# the clients recorded on Chat Completions (t/fixtures/openai/README.md)
RECORDED = sorted(d for d in os.listdir(OPENAI)
                  if os.path.isdir(os.path.join(OPENAI, d)))

CLIENT_HEADERS = [("Content-Type", "application/json"),
                  ("Authorization", "Bearer sk-test"),
                  ("User-Agent", "ai-sdk/openai-compatible/2.0 "
                                 "runtime/node.js/22")]


def text_of(content):
    if isinstance(content, str):
        return content
    return "".join(b.get("text", "") for b in content
                   if b.get("type") == "text")


def chat_messages(body):
    out = []
    if body.get("system"):
        out.append({"role": "system", "content": text_of(body["system"])})
    for m in body["messages"]:
        content = m["content"]
        blocks = content if isinstance(content, list) else \
            [{"type": "text", "text": content}]
        if m["role"] == "assistant":
            msg = {"role": "assistant", "content": text_of(blocks) or None}
            calls = [{"id": b["id"], "type": "function", "function": {
                "name": b["name"], "arguments": json.dumps(b["input"])}}
                for b in blocks if b.get("type") == "tool_use"]
            if calls:
                msg["tool_calls"] = calls
            out.append(msg)
            continue
        for b in blocks:
            if b.get("type") == "tool_result":
                out.append({"role": "tool", "tool_call_id": b["tool_use_id"],
                            "content": text_of(b.get("content", ""))})
        text = text_of([b for b in blocks if b.get("type") == "text"])
        if text:
            out.append({"role": "user", "content": text})
    return out


def chat_body(body, stream=True, model="gpt-4.1"):
    """A Messages body as the same client's Chat Completions body."""
    out = {"model": model, "max_tokens": body.get("max_tokens", 4096),
           "messages": chat_messages(body)}
    if body.get("tools"):
        out["tools"] = [{"type": "function", "function": {
            "name": t["name"], "description": t.get("description", ""),
            "parameters": t["input_schema"]}} for t in body["tools"]
            if "input_schema" in t]
        out["tool_choice"] = "auto"
    if stream:
        out["stream"] = True
        out["stream_options"] = {"include_usage": True}
    return out


def chat_requests(client, stream=True):
    """The client's recorded requests that carry tools, as Chat
    Completions bodies (bytes, compact as the AI SDK writes them)."""
    out = []
    for _, body, _ in client_requests(client):
        b = json.loads(body)
        if b.get("tools"):
            out.append(json.dumps(chat_body(b, stream),
                                  separators=(",", ":")).encode())
    return out


def recorded_requests(client, stream=True):
    """The client's recorded Chat Completions session
    (conftest.recorded_session)."""
    return recorded_session(OPENAI, client, stream)


def tool_bytes(body):
    """What of a Chat Completions body the model sees of its tools."""
    tools = json.loads(body).get("tools", [])
    return len(json.dumps(tools, separators=(",", ":")).encode())


def sse_chunks(data):
    """The data: payloads of an event stream, [DONE] as the string."""
    out = []
    for event in data.decode().split("\n\n"):
        for line in event.split("\n"):
            if line.startswith("data: "):
                v = line[len("data: "):]
                out.append(v if v == "[DONE]" else json.loads(v))
    return out
