"""Codex's namespace groups through a real nginx with the module, the
emulator playing OpenAI's Responses API (t/emulator_responses.py: strict
about namespaces: a member's call carries its namespace, namespace names
are unique in tools[], one tool_search_output per namespace).  The
requests are Codex's recorded session (t/fixtures/openai-responses/codex:
an unknown model, every MCP tool in a namespace mcp__<server>) and its
run with a model it knows (codex-known: its own client-run tool_search,
no MCP tool).  docs/gateway-search.md ("Responses", "Namespaces") says
what each path does."""

import json

import pytest

from emulator_responses import ResponsesReply, responses_seeker
from responses_fixtures import function_keys, recorded_requests, tool_bytes
from test_responses import (ARGS, HEADER, calls_of, response_of, send,
                            text_of, upstream_bodies)

NS, MEMBER = "mcp__memory", "create_entities"
QUALIFIED = NS + "__" + MEMBER
QUERY = "memory create entities"
HOSTED = "toolsearch on; toolsearch_upstream openai; " + HEADER


def codex(stream, turn=0, client="codex"):
    """Codex's recorded request (body bytes, headers)."""
    return recorded_requests(client, stream)[turn]


def namespaces(body):
    return [t for t in body["tools"] if t.get("type") == "namespace"]


def member_names(ns):
    return [f["name"] for f in ns["tools"]]


def client_namespace(name):
    body = json.loads(codex(False)[0])
    return [t for t in namespaces(body) if t["name"] == name][0]


def seek(emulator):
    emulator.responses_script = responses_seeker(MEMBER, ARGS, QUERY, "done",
                                                 namespace=NS)


@pytest.mark.parametrize("stream", [False, True])
def test_found_member_comes_in_its_namespace(gateway, emulator, stream):
    """Gateway search (store false, a compatible upstream): the members
    leave tools[], the announcement names them by their qualified names,
    a search loads what it found in its namespace after the search
    function, and the client's call carries its namespace."""
    seek(emulator)
    gw = gateway(server="toolsearch on; add_header X-Found "
                 "$toolsearch_found_tools always; " + HEADER)
    data, headers = codex(stream)
    r = send(gw, data, headers=headers)
    assert r.header("X-Toolsearch-Decision") == "deferred_gateway"
    resp = response_of(r, stream)
    assert [(c.get("namespace"), c["name"]) for c in calls_of(resp)] == \
        [(NS, MEMBER)]
    first, second = upstream_bodies(emulator)
    assert not [n for n in namespaces(first) if n["name"].startswith("mcp__")]
    assert QUALIFIED in first["instructions"]
    assert "mcp__github__create_issue" in first["instructions"]
    assert tool_bytes(json.dumps(first).encode()) <= tool_bytes(data) * 0.5
    # the continuation: the namespace with the members found, its own
    # bytes but for the members left out, after the search function
    names = [t.get("name") for t in second["tools"]]
    assert names.index(NS) > names.index("tool_search")
    ns = [n for n in namespaces(second) if n["name"] == NS][0]
    assert MEMBER in member_names(ns)
    whole = client_namespace(NS)
    assert ns["description"] == whole["description"]
    assert all(f in whole["tools"] for f in ns["tools"])
    assert len(ns["tools"]) < len(whole["tools"])
    assert "Loaded: " in second["input"][-1]["output"] and \
        QUALIFIED in second["input"][-1]["output"]
    # found tools load as tools: no call wrapper to point the model to
    assert "call_tool" not in json.dumps(second)
    assert "Input schema" not in second["input"][-1]["output"]
    assert r.header("X-Found") == "tools"


@pytest.mark.parametrize("stream", [False, True])
def test_next_turn_loads_the_member_from_history(gateway, emulator, stream):
    """Codex's next turn carries the call back with its namespace: the
    member is loaded in its namespace after the search function, alone,
    with no state in the gateway (another nginx serves the turn)."""
    seek(emulator)
    gw = gateway(server="toolsearch on; " + HEADER)
    data, headers = codex(stream, 1)
    resp = response_of(send(gw, data, headers=headers), stream)
    assert text_of(resp) == "done" and not calls_of(resp)
    up, = upstream_bodies(emulator)
    names = [t.get("name") for t in up["tools"]]
    assert names[-2:] == ["tool_search", NS]
    assert member_names(namespaces(up)[-1]) == [MEMBER]
    call = [it for it in up["input"] if it.get("type") == "function_call"]
    assert call[0]["namespace"] == NS


@pytest.mark.parametrize("stream", [False, True])
@pytest.mark.parametrize("spelling", ["qualified", "namespaced"])
def test_call_of_a_member_never_loaded_loads_it(gateway, emulator, stream,
                                                spelling):
    """A call of a deferred member (by the name the announcement gives,
    or in its namespace) is a select: of it, shown to the upstream as a
    call of the search function without a namespace."""
    seek_it = responses_seeker(MEMBER, ARGS, "", "done", namespace=NS)

    def model(body, ctx):
        if (NS, MEMBER) in ctx.functions:
            return seek_it(body, ctx)
        if spelling == "qualified":
            return ResponsesReply(None, [(QUALIFIED, ARGS, "call_direct")])
        return ResponsesReply(None, [(MEMBER, ARGS, "call_direct", NS)])
    emulator.responses_script = model
    gw = gateway(server="toolsearch on; " + HEADER)
    data, headers = codex(stream)
    resp = response_of(send(gw, data, headers=headers), stream)
    assert [(c.get("namespace"), c["name"]) for c in calls_of(resp)] == \
        [(NS, MEMBER)]
    ups = upstream_bodies(emulator)
    assert len(ups) == 2
    held = ups[1]["input"][-2]
    assert held["name"] == "tool_search" and "namespace" not in held
    assert json.loads(held["arguments"]) == {"query": "select:" + QUALIFIED}
    assert member_names(namespaces(ups[1])[-1]) == [MEMBER]


def test_namespace_with_a_member_kept_stays_in_place(gateway, emulator):
    """A namespace one of whose members the rules keep stays in its
    place with that member; a found member joins it there, so that the
    namespace is declared once."""
    seek(emulator)
    gw = gateway(server="toolsearch on; toolsearch_always_load "
                 "mcp__memory__read_graph; " + HEADER)
    data, headers = codex(False)
    resp = response_of(send(gw, data, headers=headers), False)
    assert calls_of(resp)[0]["namespace"] == NS
    first, second = upstream_bodies(emulator)
    names = [t.get("name") for t in first["tools"]]
    assert names.index(NS) < names.index("tool_search")
    mem = [n for n in namespaces(first) if n["name"] == NS]
    assert member_names(mem[0]) == ["read_graph"]
    assert QUALIFIED in first["instructions"]
    assert "mcp__memory__read_graph" not in first["instructions"]
    mem = [n for n in namespaces(second) if n["name"] == NS]
    assert len(mem) == 1
    assert "read_graph" in member_names(mem[0])
    assert MEMBER in member_names(mem[0])


@pytest.mark.parametrize("stream", [False, True])
@pytest.mark.parametrize("carry", ["intact", "dropped"])
def test_hosted_search_defers_members(gateway, emulator, stream, carry):
    """An openai upstream and gpt-5.4: the members get defer_loading (the
    namespace object does not: the API shows its name and description),
    tool_search goes after the last tool, not into a namespace; the
    upstream's search loads the member in its namespace and the call
    carries it.  The next turn is valid with the items intact (the
    member stays deferred: the search output loads it) or with the call
    alone (the member is declared)."""
    seek(emulator)
    gw = gateway(server=HOSTED)
    data, headers = codex(stream)
    body = json.loads(data)
    body["model"] = "gpt-5.4"
    r = send(gw, body, headers=headers)
    assert r.header("X-Toolsearch-Decision") == "deferred_hosted"
    resp = response_of(r, stream)
    up, = upstream_bodies(emulator)
    assert up["tools"][-1] == {"type": "tool_search"}
    for ns in namespaces(up):
        assert "defer_loading" not in ns
        mcp = ns["name"].startswith("mcp__")
        assert all(f.get("defer_loading") is (True if mcp else None)
                   or not mcp for f in ns["tools"])
    mem = [n for n in namespaces(up) if n["name"] == NS][0]
    assert all(f["defer_loading"] is True for f in mem["tools"])
    items = [it for it in resp["output"] if it["type"] != "reasoning"]
    assert [it["type"] for it in items] == [
        "tool_search_call", "tool_search_output", "function_call"]
    assert items[1]["tools"][0]["name"] == NS
    assert items[2]["namespace"] == NS
    emulator.reset()
    back = items if carry == "intact" else items[2:]
    body["input"] += [dict((k, v) for k, v in it.items() if k != "id")
                      for it in back]
    body["input"].append({"type": "function_call_output",
                          "call_id": items[2]["call_id"], "output": "ok"})
    assert text_of(response_of(send(gw, body, headers=headers),
                               stream)) == "done"
    up, = upstream_bodies(emulator)
    mem = [n for n in namespaces(up) if n["name"] == NS][0]
    flag = {f["name"]: f.get("defer_loading") for f in mem["tools"]}
    # the member stays deferred: the client's output, or the one the
    # gateway restores for a dropped search, loads it
    assert flag[MEMBER] is True
    assert flag["read_graph"] is True
    outputs = [it for it in up["input"] if it["type"] == "tool_search_output"]
    assert len(outputs) == 1
    assert [t["name"] for t in outputs[0]["tools"]] == [NS]


HOSTED_MODEL = "gpt-5.4"


def hosted_turn(turn=0, stream=False):
    """Codex's recorded request for the hosted path: gpt-5.4"""
    data, headers = codex(stream, turn)
    body = json.loads(data)
    body["model"] = HOSTED_MODEL
    return body, headers


def member_call(name, call_id, ns=NS):
    """a call of a namespace's member as the client carries it back
    without the search's items, and its output"""
    return [{"type": "function_call", "call_id": call_id, "name": name,
             "namespace": ns, "arguments": json.dumps(ARGS)},
            {"type": "function_call_output", "call_id": call_id,
             "output": "ok"}]


def restored(up):
    """the gateway's restored search items of an upstream body, with the
    index of each"""
    return [(i, it) for i, it in enumerate(up["input"])
            if it.get("type") in ("tool_search_call", "tool_search_output")]


def client_member(ns, name):
    return [f for f in client_namespace(ns)["tools"] if f["name"] == name][0]


@pytest.mark.parametrize("stream", [False, True])
def test_dropped_searches_restore_one_output_per_namespace(gateway, emulator,
                                                           stream):
    """Hosted path, a client that dropped the search's items (as opencode,
    cline and continue drop them): calls of two members of one namespace,
    on different turns, and of a member of another.  tools[] keeps the
    bytes of the first turn (every member stays deferred), and before the
    first call of each namespace one tool_search_call and one
    tool_search_output are restored: the namespace's name and
    description, with all its called members as the client defined them,
    in the client's order, so that the strict emulator (one output per
    namespace) takes the request."""
    gw = gateway(server=HOSTED)
    body, headers = hosted_turn(0, stream)
    send(gw, body, headers=headers)
    first, = upstream_bodies(emulator)
    n = len(body["input"])
    body["input"] += member_call("read_graph", "call_a")
    body["input"] += member_call("write_file", "call_b", "mcp__filesystem")
    body["input"] += member_call(MEMBER, "call_c")
    emulator.reset()
    r = send(gw, body, headers=headers)
    assert r.status == 200, r.body[:300]
    assert r.header("X-Toolsearch-Decision") == "deferred_hosted"
    up, = upstream_bodies(emulator)
    assert up["tools"] == first["tools"]
    items = restored(up)
    assert [i for i, _ in items] == [n, n + 1, n + 4, n + 5]
    call, output = items[0][1], items[1][1]
    assert call == {"type": "tool_search_call", "execution": "server",
                    "call_id": None, "status": "completed",
                    "arguments": {"paths": [NS]}}
    assert output["execution"] == "server" and output["call_id"] is None
    ns, = output["tools"]
    whole = client_namespace(NS)
    assert ns == {"type": "namespace", "name": NS,
                  "description": whole["description"],
                  "tools": [client_member(NS, MEMBER),
                            client_member(NS, "read_graph")]}
    fs, = items[3][1]["tools"]
    assert fs["name"] == "mcp__filesystem"
    assert fs["tools"] == [client_member("mcp__filesystem", "write_file")]
    # the client's items as they came, after the restored ones
    assert up["input"][n + 2:n + 4] == body["input"][n:n + 2]


def test_restored_namespace_output_keeps_its_bytes(gateway, emulator):
    """Each later turn that carries the same calls sends the restored
    items with the same bytes, after the prefix the cache holds."""
    gw = gateway(server=HOSTED)
    body, headers = hosted_turn()
    n = len(body["input"])
    body["input"] += member_call(MEMBER, "call_a")
    seen = []
    for turn in range(3):
        emulator.reset()
        r = send(gw, body, headers=headers)
        assert r.status == 200, r.body[:300]
        up, = upstream_bodies(emulator)
        assert [i for i, _ in restored(up)] == [n, n + 1]
        seen.append(json.dumps(up["input"][:n + 4], separators=(",", ":")))
        body["input"] += [{"role": "user", "content": "turn %d" % turn},
                          {"type": "function_call", "name": "exec_command",
                           "call_id": "call_x%d" % turn,
                           "arguments": '{"cmd":"ls"}'},
                          {"type": "function_call_output",
                           "call_id": "call_x%d" % turn, "output": "ok"}]
    assert len(set(seen)) == 1


def test_namespace_an_output_declares_loads_a_member_in_place(gateway,
                                                              emulator):
    """A namespace a tool_search_output of the input declares (the client
    kept that search) cannot be declared by a restored output too: a call
    of another member whose search was dropped loads that member in its
    place, and the request stays valid."""
    gw = gateway(server=HOSTED)
    body, headers = hosted_turn()
    kept = dict(client_member(NS, MEMBER))
    body["input"] += [
        {"type": "tool_search_call", "execution": "server", "call_id": None,
         "status": "completed", "arguments": {"paths": [MEMBER]}},
        {"type": "tool_search_output", "execution": "server",
         "call_id": None, "status": "completed",
         "tools": [{"type": "namespace", "name": NS,
                    "description": client_namespace(NS)["description"],
                    "tools": [kept]}]}]
    body["input"] += member_call(MEMBER, "call_a")
    body["input"] += member_call("read_graph", "call_b")
    r = send(gw, body, headers=headers)
    assert r.status == 200, r.body[:300]
    up, = upstream_bodies(emulator)
    assert len(restored(up)) == 2
    mem = [n for n in namespaces(up) if n["name"] == NS][0]
    flag = {f["name"]: f.get("defer_loading") for f in mem["tools"]}
    assert flag[MEMBER] is True and flag["read_graph"] is None


def test_member_counts_and_variables(gateway, emulator):
    """The counters count members as tools: $toolsearch_tools_deferred is
    the MCP members (and the other groups the naming rules defer)."""
    seek(emulator)
    gw = gateway(server="toolsearch on; add_header X-Deferred "
                 "$toolsearch_tools_deferred always;" + HEADER)
    data, headers = codex(False)
    body = json.loads(data)
    r = send(gw, data, headers=headers)
    mcp = [k for k in function_keys(body)
           if k[0] and k[0].startswith("mcp__")]
    assert int(r.header("X-Deferred")) >= len(mcp)
    assert int(r.header("X-Toolsearch-Tools")) == len(function_keys(body)) \
        + len([t for t in body["tools"]
               if t["type"] not in ("function", "namespace")])


@pytest.mark.parametrize("stream", [False, True])
def test_known_model_search_passes_byte_identical(gateway, emulator,
                                                  stream):
    """Codex with a model it knows runs its own search (tool_search with
    execution client, no MCP tool sent; then its tool_search_call and
    tool_search_output items, and the call of the member it loaded):
    every request of its session byte-identical, client_managed."""
    gw = gateway(server="toolsearch on; " + HEADER)
    session = recorded_requests("codex-known", stream)
    assert len(session) == 3
    for data, headers in session:
        emulator.reset()
        r = send(gw, data, headers=headers)
        assert r.status == 200, r.body[:300]
        assert r.header("X-Toolsearch-Decision") == "client_managed"
        assert [rec.body for rec in emulator.requests] == [data]


def test_namespaced_array_is_recalled_alike(gateway, emulator):
    """A worker keeps the tools arrays it read (toolsearch_recall) for
    the requests that send them again, one with namespaces with each
    member's namespace: Codex's request sent again takes its tools from
    memory, and the upstream gets the bytes a worker that keeps nothing
    sends; a request whose array names one namespace otherwise, in
    between, is read and sent as its own, never mixed with Codex's."""
    seek(emulator)
    conf = ("toolsearch on; add_header X-Recalled "
            "$toolsearch_tools_recalled always;" + HEADER)
    data, headers = codex(False)
    other = data.replace(b'"mcp__github"', b'"mcp__gitlab"')
    assert other != data
    bodies = {"codex": data, "other": other}

    fresh = {}
    for name, body in bodies.items():
        gw = gateway(server=conf + " toolsearch_recall off;")
        emulator.reset()
        r = send(gw, body, headers=headers)
        assert r.header("X-Toolsearch-Decision") == "deferred_gateway"
        fresh[name] = [rec.body for rec in emulator.requests]
        gw.stop()
    assert b"mcp__gitlab__" in fresh["other"][0]
    assert b"mcp__gitlab__" not in fresh["codex"][0]

    gw = gateway(server=conf)
    order = ["codex", "codex", "other", "codex", "other"]
    recalled = []
    for name in order:
        emulator.reset()
        r = send(gw, bodies[name], headers=headers)
        assert r.header("X-Toolsearch-Decision") == "deferred_gateway"
        assert calls_of(response_of(r, False))[0]["namespace"] == NS
        assert [rec.body for rec in emulator.requests] == fresh[name], name
        recalled.append(r.header("X-Recalled"))
    n = str(sum(len(t.get("tools", [t])) if t.get("type") == "namespace"
                else 1 for t in json.loads(data)["tools"]))
    assert recalled == ["0", n, "0", n, n]
