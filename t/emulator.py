"""A strict Messages API emulator for the tests and the demo.

It listens on loopback, records every request exactly (method, path with
query, header lines, body bytes), validates POST /v1/messages like the real
API does for the tool-search rules, and answers from a scripted model in
JSON or in Anthropic's SSE event sequence.  POST /v1/chat/completions
(any path ending so) plays OpenAI's Chat Completions API the same way:
strict about its tools and turns (no defer_loading and no tool-search
tool in this API, every tool call of a declared function, every call
answered by a tool message) and answering from emu.chat_script in JSON or
chat.completion.chunk events (ChatReply, chat_seeker).  POST …/responses
plays OpenAI's Responses API (t/emulator_responses.py), …/conversations its
Conversations API (t/emulator_conversations.py).

Profiles (what kind of upstream it plays):
  anthropic   first-party API: tool search needs advanced-tool-use-2025-11-20
  vertex      tool search needs tool-search-tool-2025-10-19 (header)
  bedrock     tool search needs tool-search-tool-2025-10-19 in the body
              field anthropic_beta; advanced-tool-use-2025-11-20 is
              "invalid beta flag"
  proxy       a compatible proxy: rejects any tool_reference content and
              betas outside its allow-list
Models matching UNSUPPORTED_MODELS reject every tool-search field.

Message threads (beta message-threads-2026-08-12, every profile): a request
with "thread":{"type":"create"} stores its system, tools, betas and
messages with the reply under the reply's id; one with
"thread":{"type":"continue","previous_message_id":ID} carries only the new
messages and no system or tools.  The emulator rebuilds the conversation
from the stored thread and validates it whole under the continuation's own
betas, as the API does: a thread whose stored tools carry defer_loading
needs the tool-search beta on every continuation.  A thread is continued
once; an unknown id is thread_not_found (404).

Error texts marked (reference) are the real API's; the others are the
emulator's own wording for a rule the real API also enforces.
"""

import argparse
import hashlib
import json
import re
import socket
import socketserver
import struct
import sys
import threading
import time
from http.server import BaseHTTPRequestHandler

import emulator_conversations
import emulator_responses

TOOL_SEARCH_BETA = {
    "anthropic": "advanced-tool-use-2025-11-20",
    "vertex": "tool-search-tool-2025-10-19",
    "bedrock": "tool-search-tool-2025-10-19",
    "proxy": None,
}

# betas a typical compatible proxy forwards (everything Claude Code and
# the recorded clients of t/fixtures/clients send except the tool-search
# ones)
PROXY_BETAS = {
    "claude-code-20250219", "context-1m-2025-08-07",
    "structured-outputs-2025-11-13", "prompt-caching-2024-07-31",
    "thinking-display-updates-2026-08-18",
    "interleaved-thinking-2025-05-14", "thinking-token-count-2026-05-13",
    "context-management-2025-06-27", "prompt-caching-scope-2026-01-05",
    "mid-conversation-system-2026-04-07", "effort-2025-11-24",
    "token-counting-2024-11-01", "fine-grained-tool-streaming-2025-05-14",
    "message-threads-2026-08-12",
}

MID_CONVERSATION_SYSTEM_BETA = "mid-conversation-system-2026-04-07"
# prompt caching: "up to 4 cache breakpoints" a request
MAX_BREAKPOINTS = 4
THREADS_BETA = "message-threads-2026-08-12"
# what a thread keeps of the request that creates it; a continuation may
# not send them again
THREAD_CREATE_ONLY = ("system", "tools")
UNSUPPORTED_MODELS = re.compile(r"claude-3-(5-)?haiku", re.I)
SEARCH_TOOL_TYPE = re.compile(r"^tool_search_tool_(regex|bm25)_")
# the tools the API itself runs: a server_tool_use names one of them
SERVER_TOOLS = {"web_search", "web_fetch", "code_execution",
                "bash_code_execution", "text_editor_code_execution",
                "tool_search_tool_regex", "tool_search_tool_bm25"}


class ApiError(Exception):
    """An error answer; headers are extra lines (retry-after, say)."""

    def __init__(self, message, status=400, kind="invalid_request_error",
                 headers=(), details=None, code=None, param=None):
        super().__init__(message)
        self.status = status
        self.kind = kind
        self.message = message
        self.headers = headers
        self.details = details
        self.code = code
        self.param = param

    def body(self):
        error = {"type": self.kind, "message": self.message}
        if self.details is not None:
            error["details"] = self.details
        return json.dumps({"type": "error", "error": error}).encode()

    def openai_body(self):
        return json.dumps({"error": {
            "message": self.message, "type": self.kind, "param": self.param,
            "code": self.code}}).encode()


class Recorded:
    """One request as the emulator received it."""

    def __init__(self, method, path, version, headers, body):
        self.method = method
        self.path = path
        self.version = version
        self.headers = headers          # list of (name, value), in order
        self.body = body
        self.status = None              # what the emulator answered
        self.error = None
        self.whole = None               # the conversation the model reads
                                        # (a thread, a stored Responses chain)

    def header(self, name):
        values = self.header_all(name)
        return values[0] if values else None

    def header_all(self, name):
        return [v for k, v in self.headers if k.lower() == name.lower()]

    def json(self):
        return json.loads(self.body)


def betas_of(headers, body, profile):
    values = []
    for k, v in headers:
        if k.lower() == "anthropic-beta":
            values += [b.strip() for b in v.split(",") if b.strip()]
    if profile == "bedrock" and isinstance(body.get("anthropic_beta"), list):
        values += [b for b in body["anthropic_beta"] if isinstance(b, str)]
    return values


class Validator:
    """The rules the real API applies that matter to tool search."""

    def __init__(self, profile, headers, body):
        self.profile = profile
        self.body = body
        self.betas = betas_of(headers, body, profile)
        self.model = body.get("model")
        self.search_beta = TOOL_SEARCH_BETA[profile]
        self.uses_search = False

    def run(self, count_tokens=False):
        self.check_top()
        self.check_betas()
        tools = self.check_tools()
        self.check_messages(tools)
        self.check_breakpoints()
        if not count_tokens and self.uses_search:
            self.check_model()

    def check_top(self):
        b = self.body
        if not isinstance(b, dict):
            raise ApiError("Input should be a valid dictionary")
        if not isinstance(b.get("model"), str):
            raise ApiError("model: Field required")
        if not isinstance(b.get("messages"), list):
            raise ApiError("messages: Field required")

    def check_betas(self):
        if self.profile == "bedrock":
            if "advanced-tool-use-2025-11-20" in self.betas:
                raise ApiError("invalid beta flag")
        if self.profile == "vertex":
            if "advanced-tool-use-2025-11-20" in self.betas:
                raise ApiError("Unsupported beta header: "
                               "advanced-tool-use-2025-11-20")
        if self.profile == "proxy":
            bad = [b for b in self.betas if b not in PROXY_BETAS]
            if bad:
                # (reference)
                raise ApiError(
                    "Unexpected value(s) `%s` for the `anthropic-beta` "
                    "header. Please consult our documentation at "
                    "docs.anthropic.com or try again without the header."
                    % ",".join(bad))

    def has_search_beta(self):
        return self.search_beta is not None and self.search_beta in self.betas

    def need_search_beta(self, where, field):
        self.uses_search = True
        if not self.has_search_beta():
            raise ApiError("%s.%s: Extra inputs are not permitted"
                           % (where, field))

    def check_tools(self):
        tools = self.body.get("tools", [])
        if not isinstance(tools, list):
            raise ApiError("tools: Input should be a valid list")
        names = {}
        for i, t in enumerate(tools):
            if not isinstance(t, dict):
                raise ApiError("tools.%d: Input should be a valid dictionary"
                               % i)
            self.check_tool(i, t)
            name = t.get("name")
            if name in names:
                raise ApiError("tools: Tool names must be unique.")
            names[name] = t
        deferred = [t for t in tools if t.get("defer_loading") is True]
        if tools and len(deferred) == len(tools):
            # (reference)
            raise ApiError("All tools have defer_loading set. At least one "
                           "tool must be non-deferred.")
        return names

    def check_tool(self, i, t):
        kind = t.get("type")
        if isinstance(kind, str) and SEARCH_TOOL_TYPE.match(kind):
            self.uses_search = True
            if not self.has_search_beta():
                # (reference)
                raise ApiError(
                    "tools.%d: Input tag '%s' found using 'type' does not "
                    "match any of the expected tags" % (i, kind))
            if t.get("defer_loading") is True:
                raise ApiError("tools.%d: the tool search tool cannot have "
                               "defer_loading set" % i)
        elif kind is None or kind == "custom":
            if not isinstance(t.get("name"), str):
                raise ApiError("tools.%d.name: Field required" % i)
            if not isinstance(t.get("input_schema"), dict):
                raise ApiError("tools.%d.input_schema: Field required" % i)
        if "defer_loading" in t:
            self.need_search_beta("tools.%d" % i, "defer_loading")

    def check_reference(self, where, ref, tools):
        if self.profile == "proxy" or not self.has_search_beta():
            # (reference)
            raise ApiError(
                "%s: Input tag 'tool_reference' found using 'type' does not "
                "match any of the expected tags: 'document', 'image', "
                "'search_result', 'text'" % where)
        self.uses_search = True
        name = ref.get("tool_name")
        tool = tools.get(name)
        if tool is None or tool.get("defer_loading") is not True:
            # (reference)
            raise ApiError("Tool reference '%s' not found in available tools"
                           % name)

    def check_messages(self, tools):
        previous_uses = None        # tool_use ids of the last assistant turn
        for i, m in enumerate(self.body["messages"]):
            if not isinstance(m, dict):
                raise ApiError("messages.%d: Input should be a valid "
                               "dictionary" % i)
            role = m.get("role")
            if role == "system" and MID_CONVERSATION_SYSTEM_BETA in self.betas:
                continue
            if role not in ("user", "assistant"):
                raise ApiError("messages.%d.role: Input should be 'user' or "
                               "'assistant'" % i)
            content = m.get("content")
            if isinstance(content, str):
                blocks = []
            elif isinstance(content, list):
                blocks = content
            else:
                raise ApiError("messages.%d.content: Field required" % i)
            if role == "user":
                self.check_results(i, blocks, previous_uses, tools)
                previous_uses = None
            else:
                if previous_uses:
                    self.missing_results(i - 1, previous_uses)
                previous_uses = self.check_assistant(i, blocks, tools)
        if previous_uses:
            self.missing_results(len(self.body["messages"]) - 1,
                                 previous_uses)

    @staticmethod
    def missing_results(i, ids):
        raise ApiError(
            "messages.%d: `tool_use` ids were found without `tool_result` "
            "blocks immediately after: %s. Each `tool_use` block must have a "
            "corresponding `tool_result` block in the next message."
            % (i, ", ".join(ids)))

    def check_results(self, i, blocks, previous_uses, tools):
        answered = set()
        for j, b in enumerate(blocks):
            if not isinstance(b, dict) or not isinstance(b.get("type"), str):
                raise ApiError("messages.%d.content.%d: Input should be a "
                               "valid dictionary" % (i, j))
            if b["type"] == "tool_reference":
                # only valid inside tool_result content (reference)
                raise ApiError(
                    "messages.%d.content.%d: Input tag 'tool_reference' found "
                    "using 'type' does not match any of the expected tags"
                    % (i, j))
            if b["type"] != "tool_result":
                continue
            use_id = b.get("tool_use_id")
            if not previous_uses or use_id not in previous_uses:
                raise ApiError(
                    "messages.%d.content.%d: unexpected `tool_use_id` found "
                    "in `tool_result` blocks: %s. Each `tool_result` block "
                    "must have a corresponding `tool_use` block in the "
                    "previous message." % (i, j, use_id))
            answered.add(use_id)
            inner = b.get("content")
            if isinstance(inner, list):
                for k, c in enumerate(inner):
                    if isinstance(c, dict) and c.get("type") == \
                            "tool_reference":
                        self.check_reference(
                            "messages.%d.content.%d.tool_result.content.%d"
                            % (i, j, k), c, tools)
        missing = [u for u in (previous_uses or []) if u not in answered]
        if missing:
            self.missing_results(i - 1, missing)

    def check_assistant(self, i, blocks, tools):
        uses = []
        searches = set()        # server_tool_use ids of this message
        for j, b in enumerate(blocks):
            if not isinstance(b, dict) or not isinstance(b.get("type"), str):
                raise ApiError("messages.%d.content.%d: Input should be a "
                               "valid dictionary" % (i, j))
            where = "messages.%d.content.%d" % (i, j)
            if b["type"] == "tool_use":
                uses.append(b.get("id"))
                if "caller" in b:
                    self.need_search_beta(where + ".tool_use", "caller")
            elif b["type"] == "tool_search_tool_result":
                if b.get("tool_use_id") not in searches:
                    raise ApiError(
                        "%s: tool_search_tool_result block(s) provided when "
                        "previous message does not have a corresponding "
                        "server_tool_use block: %s"
                        % (where, b.get("tool_use_id")))
                refs = (b.get("content") or {}).get("tool_references", [])
                for ref in refs:
                    self.check_reference(where, ref, tools)
            elif b["type"] == "server_tool_use" and \
                    b.get("name") not in SERVER_TOOLS:
                raise ApiError("%s.server_tool_use.name: '%s' is not a "
                               "server tool" % (where, b.get("name")))
            elif b["type"] == "server_tool_use" and \
                    str(b.get("name", "")).startswith("tool_search_tool"):
                self.need_search_beta(where, "server_tool_use")
                searches.add(b.get("id"))
        return uses

    def check_breakpoints(self):
        """Prompt caching takes up to 4 breakpoints: blocks of tools[],
        system, messages or tool_result content with cache_control."""
        b = self.body
        blocks = list(b.get("tools", []))
        if isinstance(b.get("system"), list):
            blocks += b["system"]
        for m in b["messages"]:
            for c in m["content"] if isinstance(m["content"], list) else []:
                blocks.append(c)
                if c.get("type") == "tool_result" and \
                        isinstance(c.get("content"), list):
                    blocks += c["content"]
        n = sum(1 for c in blocks if isinstance(c, dict)
                and "cache_control" in c)
        if n > MAX_BREAKPOINTS:
            raise ApiError("A maximum of %d blocks with cache_control may "
                           "be provided. Found %d." % (MAX_BREAKPOINTS, n))

    def check_model(self):
        if UNSUPPORTED_MODELS.search(self.model):
            raise ApiError("'%s' does not support tool search." % self.model)


class Threads:
    """The conversations the emulator holds for message threads, each by
    the id of the reply it ends with."""

    def __init__(self):
        self.held = {}
        self.lock = threading.Lock()

    def whole(self, profile, headers, body):
        """The request the model answers: the body itself, or for a
        continuation the conversation its thread holds with the new
        messages after it.  Raises what the API answers to a thread field
        it does not take or a thread it cannot continue."""
        thread = body.get("thread")
        if thread is None:
            return body
        if THREADS_BETA not in betas_of(headers, body, profile):
            raise ApiError("thread: Extra inputs are not permitted")
        kind = thread.get("type") if isinstance(thread, dict) else None
        if kind == "create":
            return body
        if kind != "continue":
            raise ApiError("thread.type: Input should be 'create' or "
                           "'continue'")
        for field in THREAD_CREATE_ONLY:
            if field in body:
                raise ApiError(
                    "%s: a thread keeps the `%s` of the request that "
                    "created it; leave it out of a continue request"
                    % (field, field))
        previous = thread.get("previous_message_id")
        with self.lock:
            held = self.held.get(previous)
        if held is None:
            raise ApiError("Thread not found: %s" % previous, 404,
                           "not_found_error",
                           details={"error_code": "thread_not_found"})
        if held["continued"]:
            raise ApiError("Thread %s was already continued" % previous,
                           details={"error_code":
                                    "thread_already_continued"})
        whole = {k: v for k, v in body.items() if k != "thread"}
        for field in THREAD_CREATE_ONLY:
            if field in held:
                whole[field] = held[field]
        whole["messages"] = held["messages"] + body["messages"]
        return whole

    def keep(self, headers, body, whole, message):
        """Holds the conversation a thread request and its reply make,
        with the creating request's system, tools and betas."""
        thread = body.get("thread")
        if thread is None:
            return
        held = {"continued": False,
                "messages": whole["messages"] + [
                    {"role": "assistant", "content": message["content"]}]}
        with self.lock:
            if thread["type"] == "continue":
                first = self.held[thread["previous_message_id"]]
                first["continued"] = True
                held["betas"] = first["betas"]
            else:
                held["betas"] = [v for k, v in headers
                                 if k.lower() == "anthropic-beta"]
            for field in THREAD_CREATE_ONLY:
                if field in whole:
                    held[field] = whole[field]
            self.held[message["id"]] = held


class Reply:
    """One scripted model turn: content blocks and a stop reason.

    searches counts the hosted searches the turn ran (usage's
    server_tool_use.tool_search_requests)."""

    def __init__(self, blocks, stop_reason=None, searches=0):
        self.blocks = blocks
        self.searches = searches
        self.stop_reason = stop_reason or (
            "tool_use" if any(b["type"] == "tool_use" for b in blocks)
            else "end_turn")


class Fault:
    """One call's answer broken the way a flaky upstream or network breaks
    it: the answer reply would give (SSE or JSON, as the request asks) is
    cut after `after` bytes of its body, then the connection is closed
    ("close"), reset ("reset"), or left silent ("hang") until the gateway
    gives up on it or `hang` seconds have passed."""

    def __init__(self, reply, after, how="close", hang=30.0):
        assert how in ("close", "reset", "hang")
        self.reply = reply
        self.after = after
        self.how = how
        self.hang = hang


class Raw:
    """An answer sent byte for byte: the status, the headers and the body
    as chunks of HTTP/1.1 chunked encoding, each flushed, with a pause
    between them.  chunks may be a generator that never ends: the answer
    then lasts until the gateway closes the connection."""

    def __init__(self, chunks, status=200, headers=(
            ("Content-Type", "text/event-stream; charset=utf-8"),),
            delay=0.0):
        self.chunks = chunks
        self.status = status
        self.headers = headers
        self.delay = delay


emulator_responses.ApiError = ApiError
emulator_conversations.ApiError = ApiError
emulator_responses.Fault = Fault


def text(s):
    return {"type": "text", "text": s}


def tool_use(name, tool_input, id_=None):
    return {"type": "tool_use", "id": id_ or "toolu_emu_%s" % name[-12:],
            "name": name, "input": tool_input}


def blocks_of(messages, kind):
    """Every content block of type `kind` in the messages."""
    return [b for m in messages if isinstance(m.get("content"), list)
            for b in m["content"]
            if isinstance(b, dict) and b.get("type") == kind]


def tool_results(messages):
    """tool_use_id -> tool_result block of the history."""
    return {b.get("tool_use_id"): b
            for b in blocks_of(messages, "tool_result")}


def referenced_names(messages):
    """Tool names that tool_reference blocks of the history load: in a
    client search's tool_result or in a hosted tool_search_tool_result."""
    refs = [r for b in blocks_of(messages, "tool_result")
            if isinstance(b.get("content"), list) for r in b["content"]]
    refs += [r for b in blocks_of(messages, "tool_search_tool_result")
             for r in (b.get("content") or {}).get("tool_references", [])]
    return {r.get("tool_name") for r in refs
            if isinstance(r, dict) and r.get("type") == "tool_reference"}


def callable_tools(request):
    """The tools a model can call: loaded ones, and deferred ones that a
    tool_reference in the history has loaded."""
    found = referenced_names(request.get("messages", []))
    return {t["name"] for t in request.get("tools", [])
            if isinstance(t, dict) and isinstance(t.get("name"), str) and
            not SEARCH_TOOL_TYPE.match(str(t.get("type", ""))) and
            (t.get("defer_loading") is not True or t["name"] in found)}


WRAPPER = "call_tool"
WRAPPED = re.compile(r"\n\nTool: ([^\n]+)\n")


def wrapped_tools(request):
    """The tools a model can call through the gateway's call wrapper
    (toolsearch_found_tools wrapper): the request has the wrapper, and a
    search's text result in the history gave the tool's definition."""
    if not any(isinstance(t, dict) and t.get("name") == WRAPPER
               for t in request.get("tools", [])):
        return set()
    out = set()
    for b in blocks_of(request.get("messages", []), "tool_result"):
        inner = b.get("content")
        parts = [inner] if isinstance(inner, str) else [
            c.get("text", "") for c in inner or []
            if isinstance(c, dict) and c.get("type") == "text"]
        for part in parts:
            out.update(WRAPPED.findall(part + "\n"))
    return out


def valid_input(schema, word="x"):
    """An input a model would write for a tool: each required member of
    the input schema, of the type its schema gives."""
    props = schema.get("properties") or {}
    sample = {"string": word, "integer": 1, "number": 1, "boolean": True,
              "array": [], "object": {}, "null": None}
    out = {}
    for key in schema.get("required") or []:
        kind = (props.get(key) or {}).get("type", "string")
        if isinstance(kind, list):
            kind = kind[0] if kind else "string"
        out[key] = sample.get(kind, word)
    return out


def call_of(request, name, tool_input, id_):
    """The model's call of a tool it can call, or None: directly when the
    tool is loaded, else through the call wrapper."""
    if name in callable_tools(request):
        return tool_use(name, tool_input, id_)
    if name in wrapped_tools(request):
        return tool_use(WRAPPER, {"name": name, "arguments": tool_input}, id_)
    return None


def hosted_search_tool(request):
    """(name, "regex" | "bm25") of the hosted search tool, or None."""
    for t in request.get("tools", []):
        m = SEARCH_TOOL_TYPE.match(str(t.get("type", "")))
        if m:
            return t.get("name"), m.group(1)
    return None


def words(s):
    return re.findall(r"[a-z0-9]+", s.lower())


def hosted_search(request, query, id_, max_results=5):
    """What the API's hosted search answers: a server_tool_use block and
    its tool_search_tool_result over the request's deferred tools, in the
    shapes of the API reference.  Regex: Python re.search over name and
    description (at most 200 characters); bm25: query words in the name
    (weight 3) and the description."""
    name, variant = hosted_search_tool(request)
    use = {"type": "server_tool_use", "id": id_, "name": name,
           "input": {"query": query}}
    deferred = [t for t in request.get("tools", [])
                if t.get("defer_loading") is True]

    def error(code):
        return [use, {"type": "tool_search_tool_result", "tool_use_id": id_,
                      "content": {"type": "tool_search_tool_result_error",
                                  "error_code": code}}]
    scored = []
    if variant == "regex":
        if len(query) > 200:
            return error("pattern_too_long")
        try:
            pattern = re.compile(query)
        except re.error:
            return error("invalid_pattern")
        for i, t in enumerate(deferred):
            if pattern.search(t["name"]) or \
                    pattern.search(str(t.get("description", ""))):
                scored.append((1, i, t["name"]))
    else:
        terms = set(words(query))
        for i, t in enumerate(deferred):
            score = 3 * len(terms & set(words(t["name"]))) + \
                len(terms & set(words(str(t.get("description", "")))))
            if score:
                scored.append((score, i, t["name"]))
    scored.sort(key=lambda x: (-x[0], x[1]))
    refs = [{"type": "tool_reference", "tool_name": n}
            for _, _, n in scored[:max_results]]
    return [use, {"type": "tool_search_tool_result", "tool_use_id": id_,
                  "content": {"type": "tool_search_tool_search_result",
                              "tool_references": refs}}]


CLIENT_SEARCH_TOOLS = ("ToolSearch", "tool_search")


def seeker(target, target_input, query, final):
    """A model with one job: call `target`, then answer `final`.

    It calls the tool when it is loaded.  When it is deferred, it searches
    with `query` the way the request allows: the hosted search tool (the
    search runs here, as on Anthropic's servers, and the model calls the
    tool it found in the same answer), or a client or gateway search tool
    (ToolSearch, tool_search) whose result the next request carries.  It
    gives up, saying so, when a search did not load the tool."""
    def model(request):
        messages = request.get("messages", [])
        results = tool_results(messages)
        if "toolu_emu_target" in results:
            return Reply([text(final)])
        can_call = callable_tools(request)
        call = tool_use(target, target_input, "toolu_emu_target")
        through = call_of(request, target, target_input, "toolu_emu_target")
        if through:
            return Reply([text("Calling %s." % target), through])
        if "toolu_emu_search" in results or any(
                b.get("tool_use_id") == "srvtoolu_emu_search"
                for b in blocks_of(messages, "tool_search_tool_result")):
            return Reply([text("The search did not find %s." % target)])
        deferred = {t.get("name") for t in request.get("tools", [])
                    if t.get("defer_loading") is True}
        if hosted_search_tool(request) and target in deferred:
            blocks = hosted_search(request, query, "srvtoolu_emu_search")
            refs = blocks[1]["content"].get("tool_references", [])
            if any(r["tool_name"] == target for r in refs):
                return Reply([text("Searching.")] + blocks + [call],
                             searches=1)
            return Reply([text("Searching.")] + blocks + [
                text("The search did not find %s." % target)], searches=1)
        for name in CLIENT_SEARCH_TOOLS:
            if name in can_call:
                return Reply([text("Searching."), tool_use(
                    name, {"query": query, "max_results": 5},
                    "toolu_emu_search")])
        return Reply([text("I have no tool named %s." % target)])
    return model


def default_script(request):
    """Answers "done" after a tool result, else a greeting."""
    last = request["messages"][-1] if request.get("messages") else {}
    content = last.get("content")
    if isinstance(content, list) and any(
            isinstance(b, dict) and b.get("type") == "tool_result"
            for b in content):
        return Reply([text("done")])
    return Reply([text("Hello from the emulator.")])


class Emulator:
    """The server; start() runs it on a thread, stop() ends it."""

    def __init__(self, profile="anthropic", host="127.0.0.1", port=0):
        self.profile = profile
        self.script = default_script
        self.event_delay = 0.0
        # True: streaming requests get an empty 200 event stream (no
        # message_start), as from a proxy that breaks SSE; clients fall
        # back to non-streaming requests
        self.empty_streams = False
        self.requests = []
        self.lock = threading.Lock()
        self.threads = Threads()
        self.counter = 0
        self.keep = True            # record every request (off under load)
        self.received = 0           # requests received, kept or not
        self.corrupted = 0          # bodies whose digest did not match
        self.aborted = 0            # Raw answers the gateway cut short
        self.finished = 0           # Raw answers sent to their end
        self.faults = 0             # Fault answers sent
        self.chat_script = None     # Chat Completions: chat_default
        # Responses: responses_default; what its API keeps
        self.responses_script = None
        self.responses_state = emulator_responses.ResponsesState()
        emulator = self

        class Handler(EmulatorHandler):
            emu = emulator

        self.server = ThreadingServer((host, port), Handler)
        self.port = self.server.server_address[1]
        self.thread = None

    def start(self):
        self.thread = threading.Thread(target=self.server.serve_forever,
                                       kwargs={"poll_interval": 0.05},
                                       daemon=True)
        self.thread.start()
        return self

    def stop(self):
        self.server.shutdown()
        self.server.server_close()

    def reset(self):
        with self.lock:
            self.requests = []

    def record(self, rec):
        with self.lock:
            self.received += 1
            if self.keep:
                self.requests.append(rec)

    def count(self, attr):
        with self.lock:
            setattr(self, attr, getattr(self, attr) + 1)

    def last(self):
        with self.lock:
            return self.requests[-1] if self.requests else None

    def wait_for(self, count, timeout=5.0):
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            with self.lock:
                if len(self.requests) >= count:
                    return True
            time.sleep(0.01)
        return False

    def next_id(self, prefix):
        with self.lock:
            self.counter += 1
            return "%s_emu%06d" % (prefix, self.counter)

    def reply_for(self, request):
        if isinstance(self.script, list):
            return self.script.pop(0) if self.script else \
                default_script(request)
        return self.script(request)


class ThreadingServer(socketserver.ThreadingMixIn, socketserver.TCPServer):
    daemon_threads = True
    allow_reuse_address = True
    # socketserver's backlog is 5: a burst of new upstream connections
    # from nginx under load overflowed it, and the kernel reset the ones
    # it could not queue after nginx had sent its request (a 502)
    request_queue_size = 128


class EmulatorHandler(BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"
    emu = None

    def log_message(self, fmt, *args):
        pass

    def read_body(self):
        if self.headers.get("Transfer-Encoding", "").lower() == "chunked":
            body = b""
            while True:
                size = int(self.rfile.readline().split(b";")[0].strip(), 16)
                if size == 0:
                    while self.rfile.readline() not in (b"\r\n", b"\n", b""):
                        pass
                    return body
                body += self.rfile.read(size)
                self.rfile.readline()
        length = int(self.headers.get("Content-Length") or 0)
        return self.rfile.read(length) if length else b""

    def handle_any(self):
        body = self.read_body()
        rec = Recorded(self.command, self.path, self.request_version,
                       list(self.headers.items()), body)
        self.emu.record(rec)
        path = self.path.split("?")[0]
        digest = self.headers.get("X-Expect-Digest")
        if digest is not None:
            # the load test: is this the body the gateway had to send?
            ok = hashlib.sha256(body).hexdigest() == digest
            if not ok:
                self.emu.count("corrupted")
            rec.status = 200 if ok else 500
            self.send_json(rec.status, b'{"digest":"%s"}'
                           % (b"ok" if ok else b"mismatch"))
            return
        try:
            if self.command == "POST" and path == "/v1/messages":
                self.messages(rec)
            elif self.command == "POST" and path == \
                    "/v1/messages/count_tokens":
                self.count_tokens(rec)
            elif self.command == "POST" and path.endswith(
                    "/chat/completions"):
                self.chat(rec)
            elif self.command == "POST" and path.endswith("/responses"):
                emulator_responses.handle(self, rec)
            elif "/conversations" in path and \
                    emulator_conversations.handle(self, rec, self.path):
                pass
            else:
                raise ApiError("Not found", 404, "not_found_error")
        except ApiError as e:
            rec.status = e.status
            rec.error = e.message
            self.send_json(e.status, e.openai_body() if path.endswith(
                ("/chat/completions", "/responses")) or
                "/conversations" in path else e.body(), e.headers)

    do_GET = do_POST = do_PUT = do_DELETE = do_PATCH = handle_any

    def do_HEAD(self):
        self.read_body()
        rec = Recorded("HEAD", self.path, self.request_version,
                       list(self.headers.items()), b"")
        rec.status = 200
        self.emu.record(rec)
        self.send_response(200)
        self.send_header("Content-Length", "0")
        self.end_headers()

    def parse(self, rec):
        try:
            body = json.loads(rec.body)
        except (ValueError, UnicodeDecodeError):
            raise ApiError("There was an error parsing the body of your "
                           "request as JSON.")
        if not isinstance(body, dict):
            raise ApiError("Input should be a valid dictionary")
        return body

    def count_tokens(self, rec):
        body = self.parse(rec)
        Validator(self.emu.profile, rec.headers, body).run(count_tokens=True)
        rec.status = 200
        self.send_json(200, json.dumps(
            {"input_tokens": max(1, len(rec.body) // 4)}).encode())

    def scripted(self, rec, reply):
        """A script's reply: an error raised, a Raw answer sent (None),
        else the reply to answer with, status 200."""
        if isinstance(reply, ApiError):
            raise reply
        if isinstance(reply, Raw):
            rec.status = reply.status
            self.send_raw(reply)
            return None
        rec.status = 200
        return reply

    def messages(self, rec):
        body = self.parse(rec)
        if not isinstance(body.get("max_tokens"), int):
            raise ApiError("max_tokens: Field required")
        whole = self.emu.threads.whole(self.emu.profile, rec.headers, body)
        rec.whole = whole
        Validator(self.emu.profile, rec.headers, whole).run()
        reply = self.scripted(rec, self.emu.reply_for(whole))
        if reply is None:
            return
        if isinstance(reply, Fault):
            self.send_fault(reply, self.message(body, reply.reply,
                                                len(rec.body)),
                            body.get("stream") is True)
            return
        message = self.message(body, reply, len(rec.body))
        self.emu.threads.keep(rec.headers, body, whole, message)
        if body.get("stream") is True:
            self.send_sse([] if self.emu.empty_streams else
                          [e.encode() for e in sse_events(message)])
        else:
            self.send_json(200, json.dumps(message).encode())

    def chat(self, rec):
        body = self.parse(rec)
        ChatValidator(body).run()
        reply = self.scripted(rec, (self.emu.chat_script or chat_default)(
            body))
        if reply is None:
            return
        stream = body.get("stream") is True
        fault = reply if isinstance(reply, Fault) else None
        if fault:
            reply = fault.reply
        completion = chat_completion(self.emu, body, reply, len(rec.body))
        if fault:
            self.send_fault(fault, completion, stream, chat=True)
        elif stream:
            self.send_sse([e.encode() for e in chat_events(
                completion, body.get("stream_options") or {})])
        else:
            self.send_json(200, json.dumps(completion).encode())

    def message(self, body, reply, size):
        return {
            "id": self.emu.next_id("msg"), "type": "message",
            "role": "assistant", "model": body["model"],
            "content": reply.blocks, "stop_reason": reply.stop_reason,
            "stop_sequence": None,
            "usage": usage(size, reply),
        }

    def send_json(self, status, data, headers=()):
        self.send_response(status)
        self.send_header("Content-Type", "application/json")
        self.send_header("request-id", self.emu.next_id("req"))
        for k, v in headers:
            self.send_header(k, v)
        self.send_header("Content-Length", str(len(data)))
        self.end_headers()
        self.wfile.write(data)

    def send_raw(self, raw):
        self.send_response(raw.status)
        for k, v in raw.headers:
            self.send_header(k, v)
        self.send_header("Transfer-Encoding", "chunked")
        self.end_headers()
        try:
            for data in raw.chunks:
                self.wfile.write(b"%x\r\n%s\r\n" % (len(data), data))
                self.wfile.flush()
                if raw.delay:
                    time.sleep(raw.delay)
            self.wfile.write(b"0\r\n\r\n")
            self.wfile.flush()
            self.emu.count("finished")
        except (BrokenPipeError, ConnectionResetError):
            self.emu.count("aborted")
            self.close_connection = True

    def send_fault(self, fault, message, stream, chat=False, events=None):
        """The answer's head and its first fault.after body bytes (SSE as
        one chunk), then the fault; events: the format's event stream."""
        if stream:
            events = events(message) if events else \
                chat_events(message, {}) if chat else sse_events(message)
            data = b"".join(e.encode() for e in events)
            kind = "text/event-stream; charset=utf-8"
        else:
            data = json.dumps(message).encode()
            kind = "application/json"
        self.send_response(200)
        self.send_header("Content-Type", kind)
        self.send_header("request-id", self.emu.next_id("req"))
        if stream:
            self.send_header("Transfer-Encoding", "chunked")
        else:
            self.send_header("Content-Length", str(len(data)))
        self.end_headers()
        # a fault past the end would be no fault: the test is wrong
        assert fault.after < len(data), (fault.after, len(data))
        part = data[:fault.after]
        if stream and part:
            part = b"%x\r\n%s\r\n" % (len(part), part)
        self.close_connection = True
        try:
            self.wfile.write(part)
            self.wfile.flush()
            if fault.how == "reset":
                # closed here: socketserver would send a FIN first
                self.connection.setsockopt(socket.SOL_SOCKET,
                                           socket.SO_LINGER,
                                           struct.pack("ii", 1, 0))
                self.connection.close()
            elif fault.how == "hang":
                self.wait_for_close(fault.hang)
        except OSError:
            pass
        self.emu.count("faults")

    def wait_for_close(self, limit):
        """Holds the connection silent until the peer closes it."""
        self.connection.settimeout(0.1)
        deadline = time.monotonic() + limit
        while time.monotonic() < deadline:
            try:
                if not self.connection.recv(4096):
                    return
            except socket.timeout:
                continue

    # SSE: chunked for HTTP/1.1 clients, close-delimited for HTTP/1.0
    def send_sse(self, pieces):
        chunked = self.request_version == "HTTP/1.1"
        self.send_response(200)
        self.send_header("Content-Type", "text/event-stream; charset=utf-8")
        self.send_header("Cache-Control", "no-cache")
        self.send_header("request-id", self.emu.next_id("req"))
        if chunked:
            self.send_header("Transfer-Encoding", "chunked")
        else:
            self.send_header("Connection", "close")
            self.close_connection = True
        self.end_headers()
        for data in pieces:
            if chunked:
                data = b"%x\r\n%s\r\n" % (len(data), data)
            self.wfile.write(data)
            self.wfile.flush()
            if self.emu.event_delay:
                time.sleep(self.emu.event_delay)
        if chunked:
            self.wfile.write(b"0\r\n\r\n")


def usage(size, reply):
    """The emulator counts body bytes / 4 as input tokens."""
    u = {"input_tokens": max(1, size // 4), "output_tokens": 10}
    if getattr(reply, "searches", 0):
        u["server_tool_use"] = {"tool_search_requests": reply.searches}
    return u


def sse(kind, data):
    return "event: %s\ndata: %s\n\n" % (kind, json.dumps(data))


def block_events(index, block, piece=0):
    """content_block_start/delta/stop for one block, as the API streams;
    a text in deltas of piece characters (0: one delta)."""
    kind = block["type"]
    if kind == "text":
        start = {"type": "text", "text": ""}
        s = block["text"]
        step = piece or max(1, len(s))
        deltas = [{"type": "text_delta", "text": s[i:i + step]}
                  for i in range(0, max(1, len(s)), step)]
    elif kind in ("tool_use", "server_tool_use"):
        start = dict(block, input={})
        deltas = [{"type": "input_json_delta",
                   "partial_json": json.dumps(block["input"])}]
    else:
        start, deltas = block, []
    yield sse("content_block_start", {"type": "content_block_start",
                                      "index": index,
                                      "content_block": start})
    for d in deltas:
        yield sse("content_block_delta", {"type": "content_block_delta",
                                          "index": index, "delta": d})
    yield sse("content_block_stop", {"type": "content_block_stop",
                                     "index": index})


def sse_events(message, piece=0):
    start = dict(message, content=[], stop_reason=None)
    start["usage"] = {"input_tokens": message["usage"]["input_tokens"],
                      "output_tokens": 1}
    yield sse("message_start", {"type": "message_start", "message": start})
    yield sse("ping", {"type": "ping"})
    for i, block in enumerate(message["content"]):
        yield from block_events(i, block, piece)
    yield sse("message_delta", {
        "type": "message_delta",
        "delta": {"stop_reason": message["stop_reason"],
                  "stop_sequence": None},
        "usage": {k: v for k, v in message["usage"].items()
                  if k != "input_tokens"}})
    yield sse("message_stop", {"type": "message_stop"})


# Chat Completions: OpenAI's rules for what this API takes (2026-11)
CHAT_NAME = re.compile(r"^[a-zA-Z0-9_-]{1,64}$")
CHAT_TOOL_KEYS = {"type", "function"}
CHAT_FUNCTION_KEYS = {"name", "description", "parameters", "strict"}
CHAT_ROLES = {"system", "developer", "user", "assistant", "tool"}


class ChatValidator:
    """POST /v1/chat/completions checked as the API checks it: a tool is a
    function (no defer_loading, no tool-search type in this API), names
    unique; an assistant's tool_calls name declared functions and are
    answered, each, by the tool messages right after it; a tool message
    answers such a call; tool_choice names a declared function."""

    def __init__(self, body):
        self.body = body

    def run(self):
        b = self.body
        if not isinstance(b.get("model"), str):
            raise ApiError("you must provide a model parameter")
        if not isinstance(b.get("messages"), list) or not b["messages"]:
            raise ApiError("messages: expected a non-empty array")
        if "stream_options" in b and b.get("stream") is not True:
            raise ApiError("The 'stream_options' parameter is only allowed "
                           "when 'stream' is enabled.")
        names = self.check_tools(b.get("tools", []))
        self.check_choice(b.get("tool_choice"), names)
        self.check_messages(b["messages"], names)

    def check_tools(self, tools):
        if not isinstance(tools, list):
            raise ApiError("tools: expected an array")
        names = set()
        for i, t in enumerate(tools):
            where = "tools[%d]" % i
            if not isinstance(t, dict) or t.get("type") != "function":
                raise ApiError("Invalid value for '%s.type': expected "
                               "'function'." % where)
            extra = set(t) - CHAT_TOOL_KEYS
            fn = t.get("function")
            if extra or not isinstance(fn, dict) or \
                    set(fn) - CHAT_FUNCTION_KEYS:
                raise ApiError("Unrecognized request argument supplied: "
                               "%s" % sorted(extra or set(fn or {}) -
                                             CHAT_FUNCTION_KEYS))
            name = fn.get("name")
            if not isinstance(name, str) or not CHAT_NAME.match(name):
                raise ApiError("Invalid '%s.function.name'" % where)
            if name in names:
                raise ApiError("tools: duplicate function name %s" % name)
            if "parameters" in fn and not isinstance(fn["parameters"],
                                                     dict):
                raise ApiError("Invalid '%s.function.parameters'" % where)
            names.add(name)
        return names

    @staticmethod
    def check_choice(choice, names):
        if isinstance(choice, dict):
            name = (choice.get("function") or {}).get("name")
            if name not in names:
                raise ApiError("Invalid value for 'tool_choice': function "
                               "%s is not in tools." % name)
        elif choice is not None and choice not in ("auto", "none",
                                                   "required"):
            raise ApiError("Invalid value for 'tool_choice'.")

    @staticmethod
    def check_messages(messages, names):
        open_ids = []
        for i, m in enumerate(messages):
            role = m.get("role") if isinstance(m, dict) else None
            if role not in CHAT_ROLES:
                raise ApiError("Invalid value for 'messages[%d].role'" % i)
            if open_ids and role != "tool":
                raise ApiError("An assistant message with 'tool_calls' "
                               "must be followed by tool messages "
                               "responding to each 'tool_call_id'. The "
                               "following tool_call_ids did not have "
                               "response messages: %s"
                               % ", ".join(open_ids))
            if role == "tool":
                if m.get("tool_call_id") not in open_ids:
                    raise ApiError("Invalid parameter: messages with role "
                                   "'tool' must be a response to a "
                                   "preceeding message with 'tool_calls'.")
                open_ids.remove(m["tool_call_id"])
            elif role == "assistant":
                for c in m.get("tool_calls") or []:
                    name = (c.get("function") or {}).get("name")
                    if name not in names:
                        raise ApiError("messages[%d]: tool call of %s, "
                                       "which is not in tools" % (i, name))
                    if not isinstance(c["function"].get("arguments"), str):
                        raise ApiError("messages[%d]: arguments must be a "
                                       "string" % i)
                    open_ids.append(c.get("id"))
        if open_ids:
            raise ApiError("tool_call_ids did not have response messages: "
                           "%s" % ", ".join(open_ids))


class ChatReply:
    """One scripted Chat Completions answer: text and tool calls
    ((name, arguments dict, id) each)."""

    def __init__(self, content=None, calls=(), finish_reason=None):
        self.content = content
        self.calls = list(calls)
        self.finish_reason = finish_reason or (
            "tool_calls" if self.calls else "stop")


def chat_tools(body):
    return [t["function"]["name"] for t in body.get("tools", [])]


def chat_called(call):
    """The function a tool call runs: the one it names, or through the
    call wrapper the one its arguments name."""
    name = call["function"]["name"]
    if name == WRAPPER:
        try:
            inner = json.loads(call["function"]["arguments"])
            return inner["name"] if isinstance(inner["name"], str) else name
        except (ValueError, TypeError, KeyError):
            return name
    return name


def chat_wrapped(body):
    """The functions a model can call through the gateway's call wrapper:
    the request declares it, and a tool message gave their definitions."""
    if WRAPPER not in chat_tools(body):
        return set()
    out = set()
    for m in body["messages"]:
        if m.get("role") == "tool" and isinstance(m.get("content"), str):
            out.update(WRAPPED.findall(m["content"] + "\n"))
    return out


def chat_call_of(body, name, arguments, id_):
    """The model's call (name, arguments, id) of a function it can call,
    or None: directly when declared, else through the call wrapper."""
    if name in chat_tools(body):
        return (name, arguments, id_)
    if name in chat_wrapped(body):
        return (WRAPPER, {"name": name, "arguments": arguments}, id_)
    return None


def chat_answered(body):
    """{tool_call_id: the function the call ran} for answered calls."""
    names, out = {}, {}
    for m in body["messages"]:
        for c in m.get("tool_calls") or []:
            names[c["id"]] = chat_called(c)
        if m["role"] == "tool":
            out[m["tool_call_id"]] = names.get(m["tool_call_id"])
    return out


def chat_default(body):
    """Answers "done" after a tool message, else a greeting."""
    if body["messages"][-1]["role"] == "tool":
        return ChatReply("done")
    return ChatReply("Hello from the emulator.")


def chat_seeker(target, arguments, query, final, search="tool_search"):
    """A Chat Completions model with one job: call `target`, then answer
    `final`.  It calls the target when it is declared; else it calls the
    gateway's search function when it is, and gives up when a search did
    not declare the target."""
    def model(body):
        last = body["messages"][-1]
        answered = chat_answered(body)
        declared = chat_tools(body)
        if last["role"] == "tool" and answered.get(
                last["tool_call_id"]) == target:
            return ChatReply(final)
        # a call id of its own, as an API gives, on a later turn too
        call = chat_call_of(body, target, arguments,
                            "call_target_%d" % len(body["messages"])
                            if answered else "call_target")
        if call:
            return ChatReply("Calling %s." % target, [call])
        if last["role"] == "tool" and answered.get(
                last["tool_call_id"]) == search:
            return ChatReply("The search did not find %s." % target)
        if search in declared:
            return ChatReply(None, [(search, {"query": query},
                                     "call_search_%d" % len(answered))])
        return ChatReply("I have no tool named %s." % target)
    return model


def chat_completion(emu, body, reply, size):
    message = {"role": "assistant", "content": reply.content}
    if reply.calls:
        message["tool_calls"] = [
            {"id": id_, "type": "function", "function": {
                "name": name, "arguments": json.dumps(args)}}
            for name, args, id_ in reply.calls]
    prompt = max(1, size // 4)
    return {
        "id": emu.next_id("chatcmpl"), "object": "chat.completion",
        "created": 1764201600, "model": body["model"],
        "choices": [{"index": 0, "message": message, "logprobs": None,
                     "finish_reason": reply.finish_reason}],
        "usage": {"prompt_tokens": prompt, "completion_tokens": 10,
                  "total_tokens": prompt + 10,
                  "prompt_tokens_details": {"cached_tokens": 0}},
        "system_fingerprint": "fp_emu",
    }


def chat_events(c, options):
    """The completion as chat.completion.chunk events: role, content,
    each tool call (id and name, then its arguments in two pieces), the
    finish, the usage when include_usage asks for it, [DONE]."""
    usage = options.get("include_usage") is True
    head = {k: c[k] for k in ("id", "object", "created", "model",
                              "system_fingerprint")}
    head["object"] = "chat.completion.chunk"

    def chunk(delta, finish=None):
        d = dict(head, choices=[{"index": 0, "delta": delta,
                                 "logprobs": None,
                                 "finish_reason": finish}])
        if usage:
            d["usage"] = None
        return "data: %s\n\n" % json.dumps(d)

    m = c["choices"][0]["message"]
    yield chunk({"role": "assistant", "content": ""})
    if m["content"]:
        for piece in (m["content"][:3], m["content"][3:]):
            yield chunk({"content": piece})
    for i, call in enumerate(m.get("tool_calls", [])):
        yield chunk({"tool_calls": [{"index": i, "id": call["id"],
                                     "type": "function", "function": {
                                         "name": call["function"]["name"],
                                         "arguments": ""}}]})
        args = call["function"]["arguments"]
        for piece in (args[:5], args[5:]):
            yield chunk({"tool_calls": [{"index": i, "function": {
                "arguments": piece}}]})
    yield chunk({}, c["choices"][0]["finish_reason"])
    if usage:
        yield "data: %s\n\n" % json.dumps(dict(head, choices=[],
                                                 usage=c["usage"]))
    yield "data: [DONE]\n\n"


def answer_bytes(message, stream, piece=4096):
    """A message as an upstream sends it: its SSE events (texts in deltas
    of piece characters, as a long answer streams) or one JSON document."""
    if stream:
        return "".join(sse_events(message, piece)).encode()
    return json.dumps(message).encode()


def paced(data, stream, size=65536, delay=0.0):
    """An answer's bytes as a Raw answer in chunks of size bytes, delay
    seconds apart: a long answer at the pace the test wants."""
    kind = "text/event-stream; charset=utf-8" if stream else \
        "application/json"
    return Raw([data[i:i + size] for i in range(0, len(data), size)],
               headers=(("Content-Type", kind),), delay=delay)


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--port", type=int, default=0)
    ap.add_argument("--profile", default="anthropic",
                    choices=sorted(TOOL_SEARCH_BETA))
    args = ap.parse_args()
    emu = Emulator(args.profile, port=args.port)
    print("emulator listening on 127.0.0.1:%d (%s)" % (emu.port, args.profile),
          flush=True)
    try:
        emu.server.serve_forever(poll_interval=0.2)
    except KeyboardInterrupt:
        pass
    return 0


if __name__ == "__main__":
    sys.exit(main())
