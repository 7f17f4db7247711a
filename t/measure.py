"""What the model sees of a request's tools, as `make run` and the tables
of docs/clients.md count it: the compact JSON of the tool definitions that
are loaded, and of deferred ones only once a tool_reference in the history
has loaded them (deferred definitions still travel on the hosted path, but
the model does not see them; on Responses it sees a deferred function's
name and description, and a namespace's own); the definitions a hosted
tool_search_output of the history loaded; and the found tools'
definitions the gateway's call wrapper gave as a search result's text
(docs/gateway-search.md, the call wrapper).  Tokens are estimated at 2.5
bytes per token, the ratio of toolsearch_defer auto and the status page."""

import json

from billing import hosted_seen
from emulator import referenced_names

CHARS_PER_TOKEN = 2.5


def compact_size(value):
    return len(json.dumps(value, separators=(",", ":"),
                          ensure_ascii=False).encode())


def visible_tools(request):
    """The tool definitions of a request body (parsed) the model sees."""
    found = referenced_names(request.get("messages", []))
    return [t for t in request.get("tools", [])
            if not isinstance(t, dict) or t.get("defer_loading") is not True
            or t.get("name") in found]


# where the call wrapper's search result gives a found tool's definition
# (src/rewrite/ts_wrapper.c: "Loaded: …", then per tool "Tool: …")
FOUND_TEXT = "\n\nTool: "


def texts(content):
    """The text of a tool result's content: a string, or text parts."""
    if isinstance(content, str):
        yield content
    elif isinstance(content, list):
        for part in content:
            if isinstance(part, dict) and isinstance(part.get("text"), str):
                yield part["text"]


def history_items(request):
    items = request.get("messages", request.get("input"))
    return [m for m in items if isinstance(m, dict)] \
        if isinstance(items, list) else []


def result_texts(request):
    """The text of every tool result of the history, in the three formats:
    Messages' tool_result blocks, Chat Completions' tool messages,
    Responses' function_call_output items."""
    for m in history_items(request):
        if m.get("role") == "tool":
            yield from texts(m.get("content"))
        elif m.get("type") == "function_call_output":
            yield from texts(m.get("output"))
        elif isinstance(m.get("content"), list):
            for b in m["content"]:
                if isinstance(b, dict) and b.get("type") == "tool_result":
                    yield from texts(b.get("content"))


def found_text_bytes(request):
    """The bytes of the found tools' definitions the call wrapper gave the
    model as search results' text: from each result's first "Tool: "."""
    return sum(len(t[t.index(FOUND_TEXT):].encode())
               for t in result_texts(request)
               if t.startswith("Loaded: ") and FOUND_TEXT in t)


def loaded_tools(request):
    """The definitions the hosted tool_search_output items of a Responses
    history loaded."""
    return [t for m in history_items(request)
            if m.get("type") == "tool_search_output"
            for t in m.get("tools") or []]


def seen_bytes(request):
    """All the tool definitions' bytes the model sees in a request: its
    tools[], what hosted search loaded, and the wrapper's found text."""
    loaded = loaded_tools(request)
    tools = [hosted_seen(t) for t in request.get("tools", [])] \
        if "input" in request else visible_tools(request)
    return compact_size(tools) + found_text_bytes(request) \
        + (compact_size(loaded) if loaded else 0)


def tokens(n):
    return int(n / CHARS_PER_TOKEN)
