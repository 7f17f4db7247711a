"""What the model sees of a request's tools, as `make run` and the tables
of docs/clients.md count it: the compact JSON of the tool definitions that
are loaded, and of deferred ones only once a tool_reference in the history
has loaded them (deferred definitions still travel on the hosted path, but
the model does not see them).  Tokens are estimated at 2.5 bytes per token,
the ratio of toolsearch_defer auto and the status page."""

import json

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


def tokens(n):
    return int(n / CHARS_PER_TOKEN)
