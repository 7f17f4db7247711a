"""Whole sessions of the clients recorded in the OpenAI formats through
nginx and the module in front of the emulator, billed with t/billing.py's
automatic prefix cache: bench/openai_cost_bench.py and
t/test_openai_session_cost.py.

The session is t/cost_session.py's (TURNS turns; a built-in tool called
most turns, a deferred tool discovered on the turns of DISCOVERY_TURNS
and called again two turns later, a text answer on the last turn), in
the format the client speaks.  The first request is the client's
recorded one with tools (t/fixtures/openai/<client>/ for Chat
Completions, t/fixtures/openai-responses/<client>/ for Responses), sent
with its recorded headers, as JSON; the later ones carry back what each
client carries back (the recordings' second turns):

* Chat Completions (opencode 1.18.33, cline 3.0.65, continue 1.5.47,
  qwen-code 0.24.4): the assistant message as `content` and
  `tool_calls` (id, type, function name and arguments); each result as
  a `tool` message in the client's own shape (opencode: the text;
  cline: a JSON string of the MCP result; continue: a JSON string of
  its parts, `content` before `tool_call_id`; qwen-code: an array of
  text parts).
* Responses (opencode 1.18.33, `store: false`): each output message as
  an assistant message of `output_text`, each `function_call` as an item
  without its id and status, each result as a `function_call_output`.
* Responses with `store` left at its default, the upstream keeping each
  response: cline 3.0.65 (`cline-responses`) and continue 1.5.47
  (`continue-responses`) carry back as opencode does; cline's recorded
  request carried back as LangChain.js does (`cline-responses-ids`: every
  output item whole, its id included), as the AI SDK does with store on
  (`cline-responses-refs`: messages by `item_reference`, calls whole
  without ids, as Mastra's recorded turn) and as the Agents SDK does with
  `previousResponseId` (`cline-responses-chained`: `previous_response_id`
  of the answer and the results alone).  These are billed on what the
  model reads: the emulator's context with the kept history resolved
  (`rec.whole`), not the request's bytes.
* Responses, Codex 0.171 (`store: false`, an unknown model: every MCP
  tool in a namespace `mcp__<server>`, the found tools' names qualified
  here: `mcp__memory__create_entities`), on the hosted path: every output
  item back as it came, ids, `namespace` and the hosted search's items
  included (`codex`), or the same session with the search's items
  dropped as opencode drops them (`codex-dropped`, the calls keeping
  their `namespace`).

The model searches with `select:<name>` (QUERIES["select"]) or with the
words of the tool's name (QUERIES["words"], which finds several tools);
where the API runs the search (Responses, hosted tool_search), it finds
the tool and calls it in one answer.
"""

import json

import billing
import chat_fixtures
import cost_session
import responses_fixtures
from emulator import (WRAPPER, ChatReply, Emulator, chat_answered, chat_tools,
                      chat_wrapped, valid_input)
from emulator_responses import ResponsesReply
from conftest import request
from gateway import Gateway

TURNS = cost_session.TURNS
DISCOVERY_TURNS = cost_session.DISCOVERY_TURNS
SEARCH = "tool_search"
PATHS = {"chat": "/v1/chat/completions", "responses": "/v1/responses"}
QUERIES = {
    "select": lambda name: "select:" + name,
    "words": lambda name: " ".join(
        name.replace("-", "_").replace("__", "_").split("_")[-3:]),
}


def text_result(text):
    return text


def mcp_result(text):
    # cline: the MCP result as a JSON string
    return json.dumps({"content": [{"type": "text", "text": text}]},
                      separators=(",", ":"))


def parts_string(text):
    # continue: its content parts as a JSON string
    return json.dumps([{"type": "text", "text": text}],
                      separators=(",", ":"))


def parts(text):
    return [{"type": "text", "text": text}]


class Client:
    def __init__(self, name, fmt, builtin, targets, result,
                 result_first=False, carry=None):
        self.name = name
        self.format = fmt               # "chat" or "responses"
        self.builtin = builtin          # (name, arguments) of its reader
        self.targets = targets          # the tools the model discovers
        self.result = result            # text -> a tool message's content
        self.result_first = result_first    # content before tool_call_id
        self.carry = carry              # Responses: what it carries back

    def schema(self, name):
        """the input schema of one of the recorded request's tools (a
        namespace's member by its qualified name)"""
        for t in json.loads(self.first()[0]).get("tools", []):
            for fn in t.get("tools") or [t.get("function", t)]:
                if qualified(t, fn) == name:
                    return fn.get("parameters") or {}
        return {}

    def first(self):
        """the recorded first request with tools: (body, headers)"""
        if self.format == "chat":
            return chat_fixtures.recorded_requests(self.name, False)[0]
        return responses_fixtures.recorded_requests(self.name, False)[0]


def qualified(tool, fn):
    """a function's name here: a namespace's member's qualified by it"""
    if tool.get("type") == "namespace":
        return "%s__%s" % (tool.get("name"), fn.get("name"))
    return fn.get("name")


def key_of(name):
    """(namespace or None, name) of a name the session plans: Codex's MCP
    tools are members of mcp__<server>"""
    if name.startswith("mcp__") and name.count("__") >= 2:
        ns, member = name.rsplit("__", 1)
        return ns, member
    return None, name


CLIENTS = {
    "opencode": Client(
        "opencode", "chat", ("read", {"filePath": "/src/main.c"}),
        ("memory_create_entities", "github_create_issue",
         "filesystem_write_file", "everything_echo"), text_result),
    "cline": Client(
        "cline", "chat", ("read_files", {"paths": ["/src/main.c"]}),
        ("memory__create_entities", "github__create_issue",
         "filesystem__write_file", "everything__echo"), mcp_result),
    "continue": Client(
        "continue", "chat", ("Read", {"filepath": "/src/main.c"}),
        ("create_entities", "create_issue", "write_file", "echo"),
        parts_string, True),
    "qwen-code": Client(
        "qwen-code", "chat", ("read_file", {"absolute_path": "/src/main.c"}),
        ("mcp__memory__create_entities", "mcp__github__create_issue",
         "mcp__filesystem__write_file", "mcp__everything__echo"), parts),
    "opencode-responses": Client(
        "opencode", "responses", ("read", {"filePath": "/src/main.c"}),
        ("memory_create_entities", "github_create_issue",
         "filesystem_write_file", "everything_echo"), text_result),
}


def call_id(turn):
    return "call_t%02d" % turn


def turn_of(answered):
    """the session's turn of a request: one more than the calls of
    earlier turns its history answers"""
    return 1 + sum(1 for k in answered if k.startswith("call_t"))


def arguments(client, name, turn):
    """the call's arguments: the reader's recorded ones, else what the
    tool's schema requires (the gateway's call wrapper checks them), or a
    value of the turn"""
    if name == client.builtin[0]:
        return client.builtin[1]
    return valid_input(client.schema(name), "turn %d" % turn) or \
        {"value": "turn %d" % turn}


def decide(client, calls, answered, declared, turns, query,
           wrapped=frozenset()):
    """what the model does: (text, [(name, arguments, id)]); a function
    whose definition a search gave as text (wrapped) it calls through the
    gateway's call wrapper"""
    turn = turn_of(answered)
    if turn >= turns:
        return "Done.", []
    name = calls[turn]
    if name in declared:
        return "Calling %s." % name, [(name, arguments(client, name, turn),
                                       call_id(turn))]
    if name in wrapped:
        return "Calling %s." % name, [(WRAPPER, {
            "name": name, "arguments": arguments(client, name, turn)},
            call_id(turn))]
    search_id = "call_s%02d" % turn
    if search_id in answered or SEARCH not in declared:
        return "%s was not found." % name, []
    return "Searching.", [(SEARCH, {"query": query(name)}, search_id)]


def chat_model(client, calls, turns, query):
    def answer(body):
        text, out = decide(client, calls, chat_answered(body),
                           set(chat_tools(body)), turns, query,
                           chat_wrapped(body))
        return ChatReply(text, out)
    return answer


def responses_model(client, calls, turns, query):
    """Where the API runs the search (hosted tool_search), the model
    finds a deferred tool its context has not loaded and calls it in one
    answer."""
    def answer(body, ctx):
        turn = turn_of(ctx.answered())
        name = calls.get(turn)
        ns, member = key_of(name or "")
        # it searches for a tool its context has not loaded
        if turn < turns and ctx.hosted and (ns, member) in ctx.deferred \
                and (ns, member) not in ctx.functions:
            found = dict(ctx.deferred[(ns, member)])
            found.pop("defer_loading", None)
            if ns is not None:
                # the API loads a member with its namespace
                found = {"type": "namespace", "name": ns,
                         "description": ctx.namespaces.get(ns),
                         "tools": [found]}
            return ResponsesReply(
                "Calling %s." % name,
                [(member, arguments(client, name, turn), call_id(turn),
                  ns)], [([member], [found])])
        declared = {"%s__%s" % k if k[0] else k[1] for k in ctx.functions}
        text, out = decide(client, calls, ctx.answered(), declared, turns,
                           query, ctx.wrapped())
        # a member's call names it bare, in its namespace
        return ResponsesReply(text, [(key_of(c[0])[1],) + tuple(c[1:]) +
                                     ((key_of(c[0])[0],)
                                      if key_of(c[0])[0] else ())
                                     for c in out])
    return answer


def result_text(client, call_name, cid):
    """a call's result: a page of prose for the built-in reader"""
    if call_name == client.builtin[0]:
        return cost_session.page(int(cid[-2:]))
    return json.dumps({"ok": True, "turn": cid})


def tool_message(client, cid, text):
    if client.result_first:
        return {"role": "tool", "content": client.result(text),
                "tool_call_id": cid}
    return {"role": "tool", "tool_call_id": cid,
            "content": client.result(text)}


def carry_chat(client, body, answer):
    """appends the answer and the results as the client does; returns
    whether the model called a tool"""
    msg = answer["choices"][0]["message"]
    calls = msg.get("tool_calls") or []
    carried = {"role": "assistant", "content": msg.get("content")}
    if calls:
        carried["tool_calls"] = [
            {"id": c["id"], "type": "function", "function": {
                "name": c["function"]["name"],
                "arguments": c["function"]["arguments"]}} for c in calls]
    body["messages"].append(carried)
    for c in calls:
        body["messages"].append(tool_message(
            client, c["id"], result_text(client, c["function"]["name"],
                                         c["id"])))
    return bool(calls)


def said_message(it):
    """an output message as opencode and cline carry it back"""
    return {"role": "assistant", "content": [
        {"type": "output_text", "text": c["text"]}
        for c in it["content"] if c["type"] == "output_text"]}


def bare_call(it):
    """a function_call without its id and status (its namespace kept)"""
    return dict({"type": "function_call", "call_id": it["call_id"],
                 "name": it["name"], "arguments": it["arguments"]},
                **({"namespace": it["namespace"]} if "namespace" in it
                   else {}))


def whole_item(it):
    return dict(it)


def reference(it):
    return {"type": "item_reference", "id": it["id"]}


def carrier(message, call, chained=False, other=None):
    """A Responses client's carry: each output message and function_call
    as message(item) and call(item), any other item as other(item) (none
    without), then each call's result; chained, it goes on from the
    answer (previous_response_id) with the results alone.  Returns
    whether the model called a tool."""
    def carry(client, body, answer):
        new, outputs = [], []
        for it in answer["output"]:
            if it["type"] == "message" and message:
                new.append(message(it))
            elif it["type"] not in ("message", "function_call") and other:
                new.append(other(it))
            elif it["type"] == "function_call":
                new.append(call(it) if call else None)
                outputs.append({
                    "type": "function_call_output",
                    "call_id": it["call_id"],
                    "output": result_text(client, it["name"],
                                          it["call_id"])})
        if chained:
            body["previous_response_id"] = answer["id"]
            body["input"] = outputs
        else:
            body["input"] += [it for it in new if it] + outputs
        return bool(outputs)
    return carry


# opencode (store false) and cline and continue (store left on, the
# upstream keeps each response): the whole history, no ids, the hosted
# search's items dropped
carry_responses = carrier(said_message, bare_call)
# LangChain.js: the answer's items back whole, with their ids
carry_with_ids = carrier(whole_item, whole_item)
# the AI SDK with store on (Mastra): messages by item_reference, calls
# whole without their ids (t/fixtures/openai-responses/mastra/002.json)
carry_references = carrier(reference, bare_call)
# the Agents SDK with previousResponseId: the results alone
carry_chained = carrier(None, None, chained=True)
# Codex: every item back as it came, reasoning and hosted search included
carry_everything = carrier(whole_item, whole_item, other=whole_item)

CLINE_RESPONSES = dict(
    builtin=("read_files", {"paths": ["/src/main.c"]}),
    targets=("memory__create_entities", "github__create_issue",
             "filesystem__write_file", "everything__echo"),
    result=mcp_result)

# the clients whose requests leave store at its default (the upstream
# keeps each response): cline's and continue's as they carry back, and
# cline's request carried back as LangChain.js, the AI SDK (Mastra) and
# the Agents SDK do
CLIENTS.update({
    "cline-responses": Client("cline", "responses",
                              carry=carry_responses, **CLINE_RESPONSES),
    "continue-responses": Client(
        "continue", "responses", ("Read", {"filepath": "/src/main.c"}),
        ("create_entities", "create_issue", "write_file", "echo"),
        parts_string, carry=carry_responses),
    "cline-responses-ids": Client("cline", "responses",
                                  carry=carry_with_ids, **CLINE_RESPONSES),
    "cline-responses-refs": Client("cline", "responses",
                                   carry=carry_references, **CLINE_RESPONSES),
    "cline-responses-chained": Client("cline", "responses",
                                      carry=carry_chained,
                                      **CLINE_RESPONSES),
})
STORED = ("cline-responses", "continue-responses", "cline-responses-ids",
          "cline-responses-refs", "cline-responses-chained")
# those that send their new items alone
CHAINED = ("cline-responses-chained",)

# the Codex sessions: the hosted path only (bench/openai_cost_bench.py)
CODEX_TARGETS = ("mcp__memory__create_entities", "mcp__github__create_issue",
                 "mcp__filesystem__write_file", "mcp__everything__echo")
CODEX = {
    "codex": Client("codex", "responses",
                    ("exec_command", {"cmd": "cat /src/main.c"}),
                    CODEX_TARGETS, text_result, carry=carry_everything),
    "codex-dropped": Client("codex", "responses",
                            ("exec_command", {"cmd": "cat /src/main.c"}),
                            CODEX_TARGETS, text_result,
                            carry=carry_responses),
}


def play(gw, client, turns=TURNS, model=None):
    """Plays the session through gw; returns the client's answers."""
    raw, headers = client.first()
    body = json.loads(raw)
    if model:
        body["model"] = model
    carry = carry_chat if client.format == "chat" else \
        client.carry or carry_responses
    answers = []
    for _ in range(turns + len(DISCOVERY_TURNS)):
        data = json.dumps(body, separators=(",", ":"),
                          ensure_ascii=False).encode()
        r = request(gw, "POST", PATHS[client.format], data, headers)
        assert r.status == 200, r.body[:2000]
        answers.append(json.loads(r.body))
        if not carry(client, body, answers[-1]):
            break
    return answers


class Result(cost_session.Result):
    """one session: the upstream's requests and what they cost under
    automatic prefix caching"""

    def __init__(self, client, label, answers, requests):
        self.client, self.label = client, label
        self.answers, self.requests = answers, requests
        # what the model read: a stored chain's history resolved
        bodies = [q.whole or q.json() for q in requests]
        self.bill = billing.prefix_session(bodies)
        self.bills = {
            name: billing.prefix_session(bodies, read_price=price)
            for name, price in billing.OPENAI_READ_PRICES.items()}
        self.vllm = billing.prefix_session(
            bodies, read_price=0.0, minimum=billing.VLLM_BLOCK,
            step=billing.VLLM_BLOCK)
        self.turns = [turn_of(answered_ids(b)) for b in bodies]


def answered_ids(body):
    """the call ids a Chat Completions or Responses body answers"""
    if "messages" in body:
        return [m["tool_call_id"] for m in body["messages"]
                if m.get("role") == "tool"]
    return [it["call_id"] for it in body.get("input", [])
            if isinstance(it, dict) and
            it.get("type") == "function_call_output"]


def run(client_name, label, server, discoveries=4, turns=TURNS,
        query="select", model=None):
    """One session of a client through a fresh nginx and emulator; model
    replaces the recorded one."""
    client = CLIENTS.get(client_name) or CODEX[client_name]
    calls = cost_session.plan(client, discoveries, turns)
    emu = Emulator("proxy")
    if client.format == "chat":
        emu.chat_script = chat_model(client, calls, turns, QUERIES[query])
    else:
        emu.responses_script = responses_model(client, calls, turns,
                                               QUERIES[query])
    emu.start()
    gw = Gateway(emu.port, server=server, log_level="warn").start()
    try:
        answers = play(gw, client, turns, model)
        return Result(client_name, label, answers,
                      [q for q in emu.requests if q.method == "POST"
                       and q.path.startswith(PATHS[client.format])])
    finally:
        gw.remove()
        emu.stop()
