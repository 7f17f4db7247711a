"""OpenAI's Responses API as the emulator plays it (POST …/responses):
strict about what the docs and observed errors state, with the state the
API keeps (store, previous_response_id, item_reference) and its hosted
tool_search for the models that have it (gpt-5.4 and later).

Rules checked (ApiError, status 400):
* a deferred tool (defer_loading on a function or a namespace member)
  needs a tool_search tool: "Deferred tools require tools.tool_search.";
  a hosted (server) tool_search needs a model that has it;
* every function_call of the request's input names a function declared
  by tools[] or loaded by a tool_search_output before it; a namespace
  member's call carries its namespace ("Missing namespace for
  function_call …"), in the stored history too, and a call with a
  namespace names a member of it; functions are told apart by namespace
  and name, so two namespaces may each have a member of one name, and
  namespace names are unique in tools[];
* a tool_search_output loads a namespace's members with it (a
  namespace object, named, with the functions found); defer_loading
  goes on functions, a namespace's members too, never on a namespace
  object ("Unknown parameter");
* a function_call the store holds (previous_response_id, item_reference)
  may name a function this request does not declare: tools and
  instructions are per request, never inherited, and OpenAI goes on from
  such history (the Agents SDK's handoffs change the tools along a
  previous_response_id chain); ctx.undeclared has those names;
* two tool_search_output items declaring the same namespace are refused;
* store (default true) keeps each response, its context and its output
  items, by id; previous_response_id must name a kept response (else
  400, code previous_response_not_found) and cannot come with
  conversation (400, mutually_exclusive_parameters);
* conversations (POST/GET …/conversations, …/conversations/{id}/items,
  emulator_conversations.py): a request with conversation ("conv_…" or
  {"id": …}; unknown: 404) sees the conversation's items before its
  input; when its response is made (store true or false), its input and
  output items are added to the conversation, and the response carries
  "conversation": {"id": …}; an input item whose id the conversation
  holds is a duplicate; an item_reference must name a kept item (404); when
  store is false, an input item whose id is all the API would have of it
  is refused: a reasoning item without its encrypted_content (observed:
  "Item with id 'rs_…' not found. Items are not persisted when `store`
  is set to false."); other items may carry ids with store false (Codex
  sends every item back with its id, and its own msg_<uuid> ids, and
  OpenAI takes them); an item the previous response holds already is
  refused ("Duplicate item found with id …");
* an input item that carries the id of a kept item (LangChain.js sends
  the answer's items back whole, with store left on) is read as the
  request gives it: whether OpenAI reads such an item from the request
  or from what it keeps is not documented nor observed, so no rule is
  made of it; the tests hold the gateway to items that agree with the
  kept one (type, name, call_id), which either reading takes the same;
* every function_call is answered by a function_call_output, and each
  output answers a call before it;
* with parallel_tool_calls false an answer has one call at most (the
  script's first); with tool_choice "none" it has none: the model
  answers in text whatever the script asked (its text, or a sentence of
  the emulator's), as the API holds a model to it.

The model is emu.responses_script(body, ctx) -> ResponsesReply, where ctx
is the whole context (stored history and the input, references
resolved) with the functions it declares; responses_seeker is the model
the tests use.
"""

import json
import re

import emulator_conversations

HOSTED_MODEL = re.compile(r"(^|/)gpt-(5\.([4-9]|[1-9]\d+)|([6-9]|\d\d+))")
NAME = re.compile(r"^[a-zA-Z0-9_-]{1,128}$")
HOSTED_TOOLS = {"web_search", "web_search_preview", "file_search",
                "image_generation", "code_interpreter", "mcp", "custom",
                "computer_use_preview", "local_shell", "shell",
                "apply_patch"}


class ResponsesReply:
    """One scripted answer: text, function calls ((name, arguments dict,
    call_id[, namespace]) each; without one, the namespace that declares
    the name), hosted searches ((paths, [tool definitions])) that come
    before them, and a search the client runs (the arguments of a
    tool_search_call with execution client, which the client answers
    with a tool_search_output on its next request)."""

    def __init__(self, text=None, calls=(), searches=(), client_search=None):
        self.text = text
        self.calls = list(calls)
        self.searches = list(searches)
        self.client_search = client_search


class Context:
    """The items a request's model sees, and what they declare.
    Functions are keyed by (namespace or None, name)."""

    def __init__(self):
        self.items = []
        self.functions = {}     # (namespace, name) -> True
        self.deferred = {}      # (namespace, name) -> definition
        self.namespaces = {}    # name -> description
        self.hosted = False     # a server tool_search is declared
        self.client_search = False
        self.stored = set()     # id() of the items the store gave
        self.undeclared = set()     # stored calls' functions not declared

    def namespace_of(self, name, table=None):
        """The namespace a function of this name is declared in (None
        for a top-level one, first), or False when none declares it."""
        keys = [k for k in (table if table is not None else self.functions)
                if k[1] == name]
        if not keys:
            return False
        return None if (None, name) in keys else keys[0][0]

    def answered(self):
        """{call_id: name} of calls answered by a function_call_output."""
        calls, out = {}, {}
        for it in self.items:
            if it.get("type") == "function_call":
                calls[it["call_id"]] = called(it)
            elif it.get("type") == "function_call_output":
                out[it["call_id"]] = calls.get(it["call_id"])
        return out

    def wrapped(self):
        """The functions the model can call through the gateway's call
        wrapper: declared, and a search's output gave their definitions."""
        if (None, WRAPPER) not in self.functions:
            return set()
        out = set()
        for it in self.items:
            if it.get("type") == "function_call_output" and \
                    isinstance(it.get("output"), str):
                out.update(WRAPPED.findall(it["output"] + "\n"))
        return out


WRAPPER = "call_tool"
WRAPPED = re.compile(r"\n\nTool: ([^\n]+)\n")


def called(item):
    """The function a function_call runs: the one it names, or through
    the call wrapper the one its arguments name."""
    if item.get("name") == WRAPPER:
        try:
            inner = json.loads(item["arguments"])
            if isinstance(inner["name"], str):
                return inner["name"]
        except (ValueError, TypeError, KeyError):
            pass
    return item.get("name")


def call_of(ctx, name, arguments, call_id, namespace=None):
    """The model's call (name, arguments, call_id, namespace) of a
    function it can call, or None: directly when declared, else through
    the wrapper (top-level functions only)."""
    if (namespace, name) in ctx.functions:
        return (name, arguments, call_id, namespace)
    if namespace is None and name in ctx.wrapped():
        return (WRAPPER, {"name": name, "arguments": arguments}, call_id)
    return None


# set by t/emulator.py, whose classes these are
ApiError = Fault = None


def api_error(message, status=400):
    return ApiError(message, status)


class ResponsesState:
    """What the emulator's API keeps: responses and their items by id,
    and conversations."""

    def __init__(self):
        self.responses = {}     # id -> the context items after it
        self.items = {}         # item id -> item
        self.conversations = {}     # id -> emulator_conversations record


def declare(ctx, tools, model):
    if not isinstance(tools, list):
        raise api_error("Invalid type for 'tools': expected an array.")
    deferred_any = False
    for i, t in enumerate(tools):
        kind = t.get("type") if isinstance(t, dict) else None
        if kind == "function":
            deferred_any |= declare_function(ctx, t, None, i)
        elif kind == "namespace":
            name = t.get("name")
            if not isinstance(name, str) or name in ctx.namespaces:
                raise api_error("Invalid namespace tools[%d]" % i)
            # defer_loading is a function's, a namespace's members' too
            if "defer_loading" in t:
                raise api_error("Unknown parameter: "
                                "'tools[%d].defer_loading'." % i)
            ctx.namespaces[name] = t.get("description")
            for f in t.get("tools") or []:
                deferred_any |= declare_function(ctx, f, name, i)
        elif kind == "tool_search":
            if t.get("execution", "server") == "client":
                ctx.client_search = True
            else:
                if not HOSTED_MODEL.search(model):
                    raise api_error("Tool 'tool_search' is not supported "
                                    "with the model %s." % model)
                ctx.hosted = True
        elif kind not in HOSTED_TOOLS:
            raise api_error("Invalid value for 'tools[%d].type'." % i)
    if deferred_any and not (ctx.hosted or ctx.client_search):
        raise api_error("Deferred tools require tools.tool_search.")


def declare_function(ctx, f, namespace, i):
    name = f.get("name") if isinstance(f, dict) else None
    if not isinstance(name, str) or not NAME.match(name):
        raise api_error("Invalid 'tools[%d].name'." % i)
    key = (namespace, name)
    if key in ctx.functions or key in ctx.deferred:
        raise api_error("Duplicate function name: %s" % name)
    if "parameters" in f and not isinstance(f["parameters"], dict):
        raise api_error("Invalid 'tools[%d].parameters'." % i)
    if f.get("defer_loading") is True:
        ctx.deferred[key] = f
        return True
    ctx.functions[key] = True
    return False


def walk(ctx, items):
    """Checks the context's items in order against what is declared."""
    open_calls = []
    loaded_ns = set()
    for i, it in enumerate(items):
        kind = it.get("type", "message") if isinstance(it, dict) else None
        if kind == "tool_search_output":
            for t in it.get("tools") or []:
                if t.get("type") == "namespace" and not (
                        isinstance(t.get("name"), str) and
                        isinstance(t.get("tools"), list) and
                        all(isinstance(f, dict) and
                            isinstance(f.get("name"), str)
                            for f in t["tools"])):
                    raise api_error("Invalid 'input[%d].tools': a "
                                    "namespace needs a name and its "
                                    "functions." % i)
                if t.get("type") == "namespace":
                    if t["name"] in loaded_ns:
                        raise api_error("Namespace %s is declared by two "
                                        "tool_search_output items."
                                        % t["name"])
                    loaded_ns.add(t["name"])
                    for f in t.get("tools") or []:
                        ctx.functions[(t["name"], f["name"])] = True
                else:
                    ctx.functions[(None, t.get("name"))] = True
        elif kind == "function_call":
            name = it.get("name")
            key = (it.get("namespace"), name)
            if key not in ctx.functions and id(it) in ctx.stored:
                ctx.undeclared.add(name)
            elif key not in ctx.functions:
                if it.get("namespace") is None and \
                        ctx.namespace_of(name) is not False:
                    raise api_error("Missing namespace for function_call "
                                    "%s." % it.get("call_id"))
                raise api_error("input[%d]: function_call of %s, which is "
                                "not a declared function." % (i, name))
            if not isinstance(it.get("arguments"), str):
                raise api_error("input[%d].arguments: expected a string."
                                % i)
            open_calls.append(it.get("call_id"))
        elif kind == "function_call_output":
            if it.get("call_id") not in open_calls:
                raise api_error("No tool call found for function call "
                                "output with call_id %s." % it.get("call_id"))
            open_calls.remove(it["call_id"])
        elif kind not in ("message", "reasoning", "tool_search_call"):
            raise api_error("Invalid value for 'input[%d].type'." % i)
    if open_calls:
        raise api_error("No tool output found for function call %s."
                        % open_calls[0])


def context(state, body):
    """The request's whole context, checked; raises ApiError."""
    model = body.get("model")
    if not isinstance(model, str):
        raise api_error("Missing required parameter: 'model'.")
    ctx = Context()
    declare(ctx, body.get("tools", []), model)
    prev = body.get("previous_response_id")
    held = set()
    if prev is not None and body.get("conversation") is not None:
        raise ApiError("Mutually exclusive parameters: Ensure you are "
                       "only providing one of: 'previous_response_id' "
                       "or 'conversation'.", 400,
                       code="mutually_exclusive_parameters")
    if body.get("conversation") is not None:
        conv = emulator_conversations.of_request(state, body)
        ctx.items.extend(conv["items"])
        ctx.stored.update(id(it) for it in conv["items"])
        held = {it.get("id") for it in conv["items"]}
    if prev is not None:
        if prev not in state.responses:
            raise ApiError("Previous response with id '%s' not found."
                           % prev, 400, code="previous_response_not_found",
                           param="previous_response_id")
        ctx.items.extend(state.responses[prev])
        ctx.stored.update(id(it) for it in state.responses[prev])
        held = {it.get("id") for it in state.responses[prev]
                if isinstance(it, dict) and it.get("id")}
    inp = body.get("input")
    if isinstance(inp, str):
        inp = [{"role": "user", "content": inp}]
    if not isinstance(inp, list):
        raise api_error("Invalid type for 'input'.")
    for it in inp:
        if isinstance(it, dict) and it.get("id") and \
                it.get("type") == "reasoning" and \
                "encrypted_content" not in it and \
                body.get("store") is False:
            raise api_error("Item with id '%s' not found. Items are not "
                            "persisted when `store` is set to false. Try "
                            "again with `store` set to true, or remove "
                            "this item from your input." % it["id"], 404)
        if isinstance(it, dict) and it.get("type") == "reasoning" and \
                "encrypted_content" not in it and body.get("store") is False:
            raise api_error("Reasoning items need their encrypted_content "
                            "when `store` is set to false.")
        if isinstance(it, dict) and it.get("id") in held and \
                it.get("type") != "item_reference":
            raise api_error("Duplicate item found with id %s. Remove "
                            "duplicate items from your input and try "
                            "again." % it["id"])
        if isinstance(it, dict) and it.get("type") == "item_reference":
            if it.get("id") not in state.items:
                raise api_error("Item with id '%s' not found." % it.get("id"),
                                404)
            ctx.items.append(state.items[it["id"]])
            ctx.stored.add(id(state.items[it["id"]]))
        else:
            ctx.items.append(it)
    walk(ctx, ctx.items)
    choice = body.get("tool_choice")
    if isinstance(choice, dict) and choice.get("type") == "function" and \
            ctx.namespace_of(choice.get("name")) is False:
        raise api_error("Tool choice '%s' not found in 'tools'."
                        % choice.get("name"))
    return ctx


def responses_default(body, ctx):
    last = ctx.items[-1] if ctx.items else {}
    if last.get("type") == "function_call_output":
        return ResponsesReply("done")
    return ResponsesReply("Hello from the emulator.")


def responses_seeker(target, arguments, query, final, search="tool_search",
                     namespace=None):
    """A model with one job: call `target` (a member of `namespace`, if
    given), then answer `final`.  It calls the target when it is
    declared; when it is deferred and a hosted tool_search is there, it
    searches (hosted: a namespace's member is found with its namespace)
    and calls it; else it calls the gateway's search function when that
    is declared."""
    key = (namespace, target)

    def model(body, ctx):
        answered = ctx.answered()
        last = ctx.items[-1] if ctx.items else {}
        call = (target, arguments, "call_target", namespace)
        if last.get("type") == "function_call_output" and \
                answered.get(last["call_id"]) == target:
            return ResponsesReply(final)
        # a call id of its own, as the API gives, on a later turn too
        direct = call_of(ctx, target, arguments,
                         "call_target_%d" % len(ctx.items) if answered
                         else "call_target", namespace)
        if direct:
            return ResponsesReply("Calling %s." % target, [direct])
        if key in ctx.deferred and ctx.hosted:
            found = dict(ctx.deferred[key])
            found.pop("defer_loading", None)
            if namespace is not None:
                found = {"type": "namespace", "name": namespace,
                         "description": ctx.namespaces.get(namespace),
                         "tools": [found]}
            return ResponsesReply(None, [call], [([target], [found])])
        if last.get("type") == "function_call_output" and \
                answered.get(last["call_id"]) == search:
            return ResponsesReply("The search did not find %s." % target)
        if (None, search) in ctx.functions:
            return ResponsesReply(None, [(search, {"query": query},
                                          "call_search_%d" % len(answered))])
        return ResponsesReply("I have no tool named %s." % target)
    return model


def responses_searcher(query="nothing like this"):
    """A model that ignores what its searches answer, the budget's end
    too: it calls the gateway's search function on every call it may
    (tool_choice "none" holds it to text, as the API does)."""
    def model(body, ctx):
        return ResponsesReply(None, [("tool_search", {"query": query},
                                      "call_search_%d" % len(ctx.items))])
    return model


def message_item(emu, text):
    return {"type": "message", "id": emu.next_id("msg"),
            "status": "completed", "role": "assistant",
            "content": [{"type": "output_text", "text": text,
                         "annotations": []}]}


def response_object(emu, body, reply, ctx, size):
    out = []
    if body.get("reasoning"):
        # a reasoning model's item; its content only when include asks
        item = {"type": "reasoning", "id": emu.next_id("rs"), "summary": []}
        if "reasoning.encrypted_content" in (body.get("include") or []):
            item["encrypted_content"] = "enc_%d" % len(ctx.items)
        out.append(item)
    none = body.get("tool_choice") == "none"
    for paths, tools in [] if none else reply.searches:
        out.append({"type": "tool_search_call",
                    "id": emu.next_id("tsc"), "execution": "server",
                    "call_id": None, "status": "completed",
                    "arguments": {"paths": paths}})
        out.append({"type": "tool_search_output",
                    "id": emu.next_id("tso"), "execution": "server",
                    "call_id": None, "status": "completed", "tools": tools})
    if reply.client_search is not None and not none:
        out.append({"type": "tool_search_call", "id": emu.next_id("tsc"),
                    "execution": "client", "call_id": emu.next_id("call"),
                    "status": "completed",
                    "arguments": reply.client_search})
    if reply.text:
        out.append(message_item(emu, reply.text))
    # parallel_tool_calls false: one call an answer at most
    calls = reply.calls[:1] if body.get("parallel_tool_calls") is False \
        else reply.calls
    if none:
        calls = []
        if not reply.text:
            out.append(message_item(emu, "I will answer without tools."))
    for call in calls:
        name, args, call_id = call[:3]
        item = {"type": "function_call", "id": emu.next_id("fc"),
                "call_id": call_id, "name": name,
                "arguments": json.dumps(args), "status": "completed"}
        ns = call[3] if len(call) > 3 else \
            ctx.namespace_of(name) or ctx.namespace_of(name, ctx.deferred)
        if ns:
            item["namespace"] = ns
        out.append(item)
    prompt = max(1, size // 4)
    conv = body.get("conversation")
    return {
        "id": emu.next_id("resp"), "object": "response",
        "created_at": 1764201600, "status": "completed",
        "model": body["model"], "output": out,
        "previous_response_id": body.get("previous_response_id"),
        "conversation": None if conv is None else
        {"id": conv if isinstance(conv, str) else conv["id"]},
        "store": body.get("store", True),
        "usage": {"input_tokens": prompt,
                  "input_tokens_details": {"cached_tokens": 0},
                  "output_tokens": 10,
                  "output_tokens_details": {"reasoning_tokens": 0},
                  "total_tokens": prompt + 10},
    }


def keep(emu, state, body, ctx, resp):
    """store (true by default): the response and its items are kept; a
    conversation takes the input and output items whatever store says."""
    if body.get("conversation") is not None:
        emulator_conversations.add_response(emu, state, body, resp)
    if body.get("store") is False:
        return
    items = ctx.items + resp["output"]
    state.responses[resp["id"]] = items
    for it in items:
        if isinstance(it, dict) and it.get("id"):
            state.items[it["id"]] = it


def responses_events(resp):
    """The response as its event stream: created, in_progress, each
    item's events, completed; sequence_number from 0."""
    seq = [0]

    def ev(kind, **data):
        data = dict(type=kind, sequence_number=seq[0], **data)
        seq[0] += 1
        return "event: %s\ndata: %s\n\n" % (kind, json.dumps(data))

    head = dict(resp, status="in_progress", output=[], usage=None)
    yield ev("response.created", response=head)
    yield ev("response.in_progress", response=head)
    for i, item in enumerate(resp["output"]):
        kind = item["type"]
        if kind == "message":
            text = item["content"][0]["text"]
            yield ev("response.output_item.added", output_index=i,
                     item=dict(item, status="in_progress", content=[]))
            part = {"type": "output_text", "text": "", "annotations": []}
            yield ev("response.content_part.added", item_id=item["id"],
                     output_index=i, content_index=0, part=part)
            for piece in (text[:3], text[3:]):
                yield ev("response.output_text.delta", item_id=item["id"],
                         output_index=i, content_index=0, delta=piece)
            yield ev("response.output_text.done", item_id=item["id"],
                     output_index=i, content_index=0, text=text)
            yield ev("response.content_part.done", item_id=item["id"],
                     output_index=i, content_index=0,
                     part=item["content"][0])
        elif kind == "function_call":
            args = item["arguments"]
            yield ev("response.output_item.added", output_index=i,
                     item=dict(item, status="in_progress", arguments=""))
            for piece in (args[:5], args[5:]):
                yield ev("response.function_call_arguments.delta",
                         item_id=item["id"], output_index=i, delta=piece)
            yield ev("response.function_call_arguments.done",
                     item_id=item["id"], output_index=i, arguments=args)
        else:
            yield ev("response.output_item.added", output_index=i,
                     item=dict(item, status="in_progress"))
        yield ev("response.output_item.done", output_index=i, item=item)
    yield ev("response.completed", response=resp)


def handle(handler, rec):
    """POST …/responses: checked, answered from the script, kept."""
    emu = handler.emu
    body = handler.parse(rec)
    with emu.lock:
        ctx = context(emu.responses_state, body)
    # what the model reads: the request with the kept history resolved
    rec.whole = dict(body, input=list(ctx.items))
    rec.whole.pop("previous_response_id", None)
    reply = handler.scripted(rec, (emu.responses_script or
                                   responses_default)(body, ctx))
    if reply is None:
        return
    stream = body.get("stream") is True
    fault = reply if isinstance(reply, Fault) else None
    if fault:
        reply = fault.reply
    resp = response_object(emu, body, reply, ctx, len(rec.body))
    with emu.lock:
        keep(emu, emu.responses_state, body, ctx, resp)
    if fault:
        handler.send_fault(fault, resp, stream, events=responses_events)
    elif stream:
        handler.send_sse([e.encode() for e in responses_events(resp)])
    else:
        handler.send_json(200, json.dumps(resp).encode())
