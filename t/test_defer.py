"""Gateway-side deferral through a real Nginx in front of the strict
emulator: every profile, the kill switch, header merging, the Claude Code
example configuration and the directives' validation."""

import json
import os
import socket
import threading

import pytest

from conftest import (ROOT, Rewrite, betas_of, load_fixture, parse_raw,
                      post_json, raw_exchange, request)

CLAUDE_CODE_CONF = os.path.join(ROOT, "docs", "examples", "claude-code.conf")
FIRST = "advanced-tool-use-2025-11-20"
THIRD = "tool-search-tool-2025-10-19"

LOG = ("log_format defer '$toolsearch_decision mode=$toolsearch_mode "
       "upstream=$toolsearch_upstream total=$toolsearch_tools_total "
       "deferred=$toolsearch_tools_deferred chars=$toolsearch_defer_chars "
       "threshold=$toolsearch_threshold_chars "
       "converted=$toolsearch_refs_converted';")


def gateway_for(gateway, profile="anthropic", extra=""):
    return gateway(http=LOG, server="toolsearch on; toolsearch_upstream %s; "
                   "access_log defer.log defer; %s"
                   % (profile, extra))


def defer_log(gw):
    gw.stop()
    with open(os.path.join(gw.prefix, "defer.log")) as f:
        return f.read().splitlines()


def tools_sent(emulator):
    return emulator.last().json()["tools"]


# the recorded Claude Code's User-Agent, for the command line's engine
UA = "claude-cli/2.1.197 (external, sdk-cli)"


def deferred_names(tools):
    return sorted(t["name"] for t in tools if t.get("defer_loading"))


def send(gw, fx, headers=None, body=None):
    return request(gw, "POST", fx.url, fx.body if body is None else body,
                   fx.headers if headers is None else headers)


def test_unset_fixture_is_deferred_and_accepted(emulator, gateway):
    fx = load_fixture("ts-unset/002.json")
    gw = gateway_for(gateway)
    r = send(gw, fx)
    got = emulator.last()
    assert r.status == 200, r.body
    assert got.status == 200 and got.error is None
    assert r.decision == "deferred_hosted"

    tools = tools_sent(emulator)
    names = deferred_names(tools)
    # the MCP tools, and the 17 built-ins of the list Claude Code's client
    # profile adds (docs/clients.md#client-profiles)
    assert len(names) == 139
    assert sum(n.startswith("mcp__") for n in names) == 122
    assert tools[-1] == {"type": "tool_search_tool_bm25_20251119",
                         "name": "tool_search_tool_bm25"}
    # exactly one line, the client's values first, the beta added once
    assert got.header_all("anthropic-beta") == [
        betas_of(fx.headers) + "," + FIRST]
    # the body is the engine's, bit for bit
    assert got.body == Rewrite(fx.body, betas_of(fx.headers),
                               "--user-agent", UA).body
    assert defer_log(gw) == [
        "deferred_hosted mode=on upstream=anthropic total=149 deferred=139 "
        "chars=101136 threshold=0 converted=0"]


class FailingUpstream:
    """Reads each request whole, then answers 502: nginx sends the body
    again to the next server."""

    def __init__(self):
        self.sock = socket.socket()
        self.sock.bind(("127.0.0.1", 0))
        self.sock.listen(8)
        self.port = self.sock.getsockname()[1]
        self.bodies = []
        threading.Thread(target=self.serve, daemon=True).start()

    def serve(self):
        while True:
            try:
                conn, _ = self.sock.accept()
            except OSError:
                return
            with conn:
                self.answer(conn)

    def answer(self, conn):
        data = b""
        while b"\r\n\r\n" not in data:
            data += conn.recv(65536)
        head, body = data.split(b"\r\n\r\n", 1)
        length = [int(line.split(b":")[1]) for line in head.split(b"\r\n")
                  if line.lower().startswith(b"content-length:")][0]
        while len(body) < length:
            body += conn.recv(65536)
        self.bodies.append(body)
        conn.sendall(b"HTTP/1.1 502 Bad Gateway\r\nContent-Length: 0\r\n"
                     b"Connection: close\r\n\r\n")

    def close(self):
        self.sock.close()


def test_retry_sends_the_rewritten_body_again(emulator, gateway):
    # proxy_next_upstream rewinds the body's buffers to their start
    fx = load_fixture("ts-unset/002.json")
    bad = FailingUpstream()
    try:
        gw = gateway(
            http="upstream retry { server 127.0.0.1:%d; server 127.0.0.1:%d; }"
                 % (bad.port, emulator.port),
            server="toolsearch on; toolsearch_upstream anthropic; "
                   "location /v1/ { proxy_pass http://retry; "
                   "proxy_next_upstream error http_502 non_idempotent; }")
        r = send(gw, fx)
    finally:
        bad.close()
    assert r.status == 200, r.body
    assert r.decision == "deferred_hosted"
    want = Rewrite(fx.body, betas_of(fx.headers), "--user-agent", UA).body
    assert bad.bodies == [want]
    assert emulator.last().body == want


def test_claude_code_example_defers_its_139(emulator, gateway):
    fx = load_fixture("ts-unset/002.json")
    gw = gateway_for(gateway, extra="include %s;" % CLAUDE_CODE_CONF)
    r = send(gw, fx)
    assert r.status == 200, r.body
    names = deferred_names(tools_sent(emulator))
    assert len(names) == 139
    loaded = [t["name"] for t in tools_sent(emulator)
              if not t.get("defer_loading")]
    # 2.1.332's list: ScheduleWakeup and TaskOutput stay loaded
    assert loaded == ["Agent", "Bash", "Edit", "Read", "ReportFindings",
                      "ScheduleWakeup", "Skill", "TaskOutput", "Workflow",
                      "Write", "tool_search_tool_bm25"]


def test_called_mcp_tool_stays_deferred_behind_its_search(emulator,
                                                          gateway):
    # ts-unset/003 carries the assistant's direct call of the memory tool:
    # what a client that drops search blocks sends after a hosted search
    fx = load_fixture("ts-unset/003.json")
    gw = gateway_for(gateway)
    r = send(gw, fx)
    assert r.status == 200, r.body
    sent = emulator.last().json()
    tools = {t["name"]: t for t in sent["tools"]}
    assert tools["mcp__memory__create_entities"]["defer_loading"] is True
    assert len(deferred_names(tools.values())) == 139
    # the search is restored before the call, its id derived from the
    # call's, so that the reference loads the tool where it was called
    client = json.loads(fx.body)["messages"]
    upstream = sent["messages"]
    i, call = next((i, b) for i, m in enumerate(client)
                   if m["role"] == "assistant" for b in m["content"]
                   if b["type"] == "tool_use")
    blocks = upstream[i]["content"]
    at = blocks.index(call)
    search_id = "srvtoolu_" + call["id"][len("toolu_"):]
    assert blocks[at - 2:at] == [
        {"type": "server_tool_use", "id": search_id,
         "name": "tool_search_tool_bm25",
         "input": {"query": "mcp__memory__create_entities"}},
        {"type": "tool_search_tool_result", "tool_use_id": search_id,
         "content": {"type": "tool_search_tool_search_result",
                     "tool_references": [
                         {"type": "tool_reference",
                          "tool_name": "mcp__memory__create_entities"}]}}]
    assert blocks[:at - 2] + blocks[at:] == client[i]["content"]
    assert upstream[:i] == client[:i] and upstream[i + 1:] == client[i + 1:]


@pytest.mark.parametrize("name", ["ts-true/002.json", "ts-true/003.json",
                                  "ts-true/004.json",
                                  "ts-true-haiku45/003.json"])
def test_client_managed_passes_on_first_party(emulator, gateway, name):
    fx = load_fixture(name)
    gw = gateway_for(gateway)
    r = send(gw, fx)
    assert r.status == 200, r.body
    assert r.decision == "client_managed"
    assert emulator.last().body == fx.body


@pytest.mark.parametrize("profile", ["vertex", "bedrock"])
def test_third_party_profiles_translate_the_beta(emulator, gateway,
                                                 profile):
    emulator.profile = profile
    fx = load_fixture("ts-unset/002.json")
    gw = gateway_for(gateway, profile)
    headers = fx.headers + [("anthropic-beta", FIRST)]
    r = send(gw, fx, headers)
    got = emulator.last()
    assert r.status == 200, (r.body, got.error)
    assert r.decision == "deferred_hosted"
    values = betas_of(got.headers).split(",")
    assert values.count(THIRD) == 1 and FIRST not in values


def test_bedrock_invoke_betas_live_in_the_body(emulator, gateway):
    emulator.profile = "bedrock"
    fx = load_fixture("ts-unset/002.json")
    body = json.loads(fx.body)
    body = dict([("anthropic_version", "bedrock-2023-05-31")]
                + list(body.items()))
    raw = json.dumps(body, separators=(",", ":")).encode()
    gw = gateway_for(gateway, "bedrock")
    r = send(gw, fx, body=raw)
    got = emulator.last()
    assert r.status == 200, (r.body, got.error)
    assert got.json()["anthropic_beta"] == [THIRD]
    assert THIRD not in betas_of(got.headers)
    assert FIRST not in betas_of(got.headers)


def test_compatible_upstream_gets_nothing_it_rejects(emulator, gateway):
    emulator.profile = "proxy"
    gw = gateway_for(gateway, "compatible", "toolsearch_search hosted;")

    fx = load_fixture("ts-unset/002.json")
    r = send(gw, fx)
    assert r.status == 200, r.body
    assert r.decision == "upstream_unsupported"
    assert emulator.last().body == fx.body

    # Claude Code's own search, converted turn by turn
    for name in ("ts-true/002.json", "ts-true/003.json", "ts-true/004.json"):
        fx = load_fixture(name)
        r = send(gw, fx)
        got = emulator.last()
        assert r.status == 200, (name, got.error)
        assert r.decision == "client_managed"
        assert b"tool_reference" not in got.body
        assert b"defer_loading" not in got.body
        assert FIRST not in betas_of(got.headers)
    assert b'"text":"Tool loaded: mcp__memory__create_entities"' in got.body
    log = defer_log(gw)
    assert log[2].endswith("converted=1")


def test_compatible_with_tool_reference_defers(emulator, gateway):
    fx = load_fixture("ts-unset/002.json")
    gw = gateway_for(gateway, "compatible",
                     "toolsearch_upstream_tool_reference on;")
    r = send(gw, fx)
    assert r.status == 200, r.body
    assert r.decision == "deferred_hosted"
    assert FIRST in betas_of(emulator.last().headers)


def test_auto_profile_follows_the_proxied_host(emulator, gateway):
    fx = load_fixture("ts-unset/002.json")
    # the test server proxies to the upstream block named "emulator"
    gw = gateway_for(gateway, "auto",
                     "toolsearch_first_party_hosts ~^emul emulator.example;")
    assert send(gw, fx).decision == "deferred_hosted"
    gw2 = gateway_for(gateway, "auto", "toolsearch_search hosted;")
    assert send(gw2, fx).decision == "upstream_unsupported"


def test_kill_switch_strips_and_drops_the_beta(emulator, gateway):
    gw = gateway_for(gateway, extra="toolsearch_disable_betas on;")
    for name in ("ts-unset/002.json", "ts-true/003.json"):
        fx = load_fixture(name)
        r = send(gw, fx)
        got = emulator.last()
        assert r.status == 200, (name, got.error)
        assert r.decision == "kill_switch"
        assert FIRST not in betas_of(got.headers)
        for field in (b"tool_reference", b"defer_loading",
                      b"tool_search_tool"):
            assert field not in got.body
    log = defer_log(gw)
    assert log[0].startswith("kill_switch mode=off")
    assert log[1].endswith("converted=1")


def test_repeated_beta_lines_are_merged(emulator, gateway):
    fx = load_fixture("ts-unset/002.json")
    gw = gateway_for(gateway)
    headers = fx.headers + [("X-Other", "kept"),
                            ("anthropic-beta",
                             " effort-2025-11-24 , extra-2099-01-01")]
    r = send(gw, fx, headers)
    got = emulator.last()
    assert r.status == 200, r.body
    # values are trimmed and kept as sent, in order, each once (the
    # recorded request's line already has effort-2025-11-24)
    assert "effort-2025-11-24" in betas_of(fx.headers)
    assert got.header_all("anthropic-beta") == [
        betas_of(fx.headers) + ",extra-2099-01-01," + FIRST]
    assert got.header("X-Other") == "kept"


def test_unsupported_model_and_standard_mode(emulator, gateway):
    fx = load_fixture("ts-unset/002.json")
    haiku = fx.body.replace(b'"model":"claude-opus-4-8"',
                            b'"model":"claude-3-5-haiku-20241022"', 1)
    assert haiku != fx.body
    gw = gateway_for(gateway, extra="toolsearch_search hosted;")
    assert send(gw, fx, body=haiku).decision == "model_unsupported"
    assert emulator.last().body == haiku

    off = gateway_for(gateway, extra="toolsearch_defer off;")
    assert send(off, fx).decision == "standard_mode"
    assert emulator.last().body == fx.body


def test_auto_threshold_and_context_window(emulator, gateway):
    fx = load_fixture("ts-unset/002.json")
    # the fixture carries context-1m: 10 % is 250,000 characters
    gw = gateway_for(gateway, extra="toolsearch_defer auto;")
    assert send(gw, fx).decision == "below_threshold"
    assert emulator.last().body == fx.body

    headers = [(k, v.replace("context-1m-2025-08-07,", ""))
               for k, v in fx.headers]
    assert headers != fx.headers
    gw2 = gateway_for(gateway, extra="toolsearch_defer auto:5; "
                      "toolsearch_context_window ~opus 300000; "
                      "toolsearch_context_window ~. 1000;")
    r = send(gw2, fx, headers)
    assert r.status == 200 and r.decision == "deferred_hosted"
    log = defer_log(gw) + defer_log(gw2)
    assert log[0] == ("below_threshold mode=auto:10 upstream=anthropic "
                      "total=149 deferred=139 chars=101136 threshold=250000 "
                      "converted=0")
    assert "threshold=37500 " in log[1]


def test_client_mode_header_needs_the_directive(emulator, gateway):
    fx = load_fixture("ts-unset/002.json")
    headers = fx.headers + [("X-Toolsearch-Mode", "off")]
    gw = gateway_for(gateway)
    assert send(gw, fx, headers).decision == "deferred_hosted"
    trusted = gateway_for(gateway, extra="toolsearch_client_mode on;")
    assert send(trusted, fx, headers).decision == "standard_mode"
    odd = fx.headers + [("X-Toolsearch-Mode", "sometimes")]
    assert send(trusted, fx, odd).decision == "deferred_hosted"


@pytest.mark.parametrize("directive,message", [
    ("toolsearch_defer auto:101;", 'invalid value "auto:101"'),
    ("toolsearch_defer maybe;", 'invalid value "maybe"'),
    ("toolsearch_upstream azure;", 'invalid value "azure"'),
    ("toolsearch_defer_tools ~(unclosed;", "missing closing parenthesis"),
    ("toolsearch_context_window ~opus many;", 'invalid value "many"'),
    ("toolsearch_defer_tools a; toolsearch_defer_tools b;",
     '"toolsearch_defer_tools" directive is duplicate'),
    ("toolsearch_hosted_search fuzzy;", 'invalid value "fuzzy"'),
])
def test_nginx_t_rejects_bad_values(emulator, gateway, directive, message):
    from gateway import Gateway
    gw = Gateway(emulator.port, server="toolsearch on; " + directive)
    try:
        rc, out = gw.test_config()
        assert rc != 0
        assert message in out, out
    finally:
        gw.remove()


def test_small_hand_built_request(emulator, gateway):
    gw = gateway_for(gateway)
    body = json.dumps({
        "model": "claude-sonnet-4-5", "max_tokens": 64,
        "messages": [{"role": "user", "content": "hi"}],
        "tools": [
            {"name": "Read", "input_schema": {"type": "object"},
             "cache_control": {"type": "ephemeral"}},
            {"name": "mcp__a__b", "input_schema": {"type": "object"},
             "cache_control": {"type": "ephemeral"}}]}).encode()
    r = post_json(gw, body)
    assert r.status == 200, r.body
    tools = tools_sent(emulator)
    assert tools[0]["cache_control"] == {"type": "ephemeral"}
    assert "cache_control" not in tools[1] and tools[1]["defer_loading"]


RECALL_LOG = ("log_format recall '$toolsearch_decision "
              "total=$toolsearch_tools_total "
              "recalled=$toolsearch_tools_recalled';")


@pytest.mark.parametrize("bound", ["", "toolsearch_recall_tools 100k;"])
def test_tools_array_of_an_earlier_turn_is_recalled(emulator, gateway,
                                                    bound):
    """Turn 3 of a session sends turn 2's tools further into the body: the
    worker recalls them and sends the bytes a fresh worker sends; another
    array is read, and remembered besides the first, which is recalled
    after it.  A bound below what the array takes keeps none: every
    array is read."""
    turn2 = load_fixture("ts-unset/002.json")
    turn3 = load_fixture("ts-unset/003.json")
    other = load_fixture("ts-true/002.json")
    conf = dict(http=RECALL_LOG + bound, server="toolsearch on; "
                "toolsearch_upstream anthropic; access_log recall.log recall;")

    fresh = gateway(**conf)
    assert send(fresh, turn3).status == 200
    fresh_bytes = emulator.last().body

    gw = gateway(**conf)
    for fx in (turn2, turn3, turn3, other, turn3):
        r = send(gw, fx)
        assert r.status == 200, r.body
    sent = [rec.body for rec in emulator.requests[-5:]]

    gw.stop()
    with open(os.path.join(gw.prefix, "recall.log")) as f:
        log = f.read().splitlines()

    assert [line.split()[0] for line in log] == [
        "deferred_hosted", "deferred_hosted", "deferred_hosted",
        "client_managed", "deferred_hosted"]
    total = int(log[0].split()[1][len("total="):])
    assert total > 100
    recalled = "recalled=%d" % (0 if bound else total)
    assert [line.split()[2] for line in log] == [
        "recalled=0", recalled, recalled, "recalled=0", recalled]
    assert sent[1] == fresh_bytes and sent[2] == fresh_bytes
    assert sent[4] == fresh_bytes


def test_recalled_array_is_weighed_by_each_locations_rules(emulator,
                                                          gateway):
    """One worker serves the recorded array from two locations whose
    rules differ (/keep/ keeps MCP tools loaded, and gives Claude Code no
    profile of its own) in turn: what the rules
    say of its tools is kept with the array, remade when the other
    location's lists ask, so every request's decision and bytes are
    those of a worker that remembers nothing, however often the array is
    recalled."""
    fx = load_fixture("ts-unset/002.json")
    keep = ('location /keep/ { toolsearch_always_load "~^mcp__"; '
            'toolsearch_client_profiles off; '
            'proxy_http_version 1.1; proxy_set_header Connection ""; '
            'proxy_set_header Accept-Encoding ""; '
            'proxy_pass http://emulator/; }')
    conf = dict(http=RECALL_LOG, server="toolsearch on; "
                "toolsearch_upstream anthropic; "
                "access_log recall.log recall; " + keep)

    def post(gw, where):
        r = request(gw, "POST", where + fx.url, fx.body, fx.headers)
        assert r.status == 200, r.body
        return emulator.last().body

    fresh = {}
    for where in ("", "/keep"):
        fresh[where] = post(gateway(**conf), where)
    assert fresh[""] != fresh["/keep"]

    gw = gateway(**conf)
    order = ["", "/keep", "", "/keep", "/keep", ""]
    sent = [post(gw, where) for where in order]

    gw.stop()
    with open(os.path.join(gw.prefix, "recall.log")) as f:
        log = [line.split() for line in f.read().splitlines()]

    assert [line[0] for line in log] == [
        "nothing_to_defer" if where else "deferred_hosted"
        for where in order]
    total = int(log[0][1][len("total="):])
    assert [line[2] for line in log] == (
        ["recalled=0"] + ["recalled=%d" % total] * (len(order) - 1))
    assert sent == [fresh[where] for where in order]


MESSAGES_LOG = ("log_format messages '$toolsearch_decision "
                "messages=$toolsearch_messages_recalled';")


@pytest.mark.parametrize("recall", ["on", "off"])
def test_messages_of_the_last_conversation_are_recalled(emulator, gateway,
                                                        recall):
    """Turns 3, 3, 3, 4, 4 of a session through one worker: its messages
    are remembered the second time the conversation comes running, and
    recalled from the third as far as their bytes come again (turn 4
    moves cache_control off turn 3's last message and adds two).  The
    upstream gets the bytes a fresh worker sends.  toolsearch_recall off
    recalls nothing."""
    turns = {"3": load_fixture("ts-true/003.json"),
             "4": load_fixture("ts-true/004.json")}
    conf = dict(http=MESSAGES_LOG, server="toolsearch on; "
                "toolsearch_upstream anthropic; toolsearch_recall %s; "
                "access_log messages.log messages;" % recall)

    fresh = {}
    for name, body in turns.items():
        gw = gateway(**conf)
        assert send(gw, body).status == 200
        fresh[name] = emulator.last().body
        gw.stop()

    order = ["3", "3", "3", "4", "4"]
    gw = gateway(**conf)
    for name in order:
        r = send(gw, turns[name])
        assert r.status == 200, r.body
    sent = [rec.body for rec in emulator.requests[-len(order):]]

    gw.stop()
    with open(os.path.join(gw.prefix, "messages.log")) as f:
        log = f.read().splitlines()

    recalled = ([0, 0, 4, 3, 6] if recall == "on" else [0, 0, 0, 0, 0])
    assert [line.split()[1] for line in log] == [
        "messages=%d" % n for n in recalled]
    assert sent == [fresh[name] for name in order]


@pytest.mark.parametrize("extra,decision", [
    ("toolsearch_disable_betas on;", "kill_switch"),
    ("toolsearch_defer off;", "standard_mode"),
    ("", "deferred_hosted"),
    ("toolsearch_search gateway;", "deferred_gateway")],
    ids=["kill_switch", "standard_mode", "hosted", "gateway"])
@pytest.mark.parametrize("at", [21, 22, 41, 42])
def test_a_removed_beta_line_alone_in_its_header_part(emulator, gateway,
                                                      extra, decision, at):
    """nginx keeps request headers in parts of 20 lines; a removed
    tool-search beta line that was the only line of the last part must not
    travel (the proxy module reads a part's first slot unchecked)."""
    fx = load_fixture("ts-unset/002.json")
    gw = gateway_for(gateway, extra=extra)
    lines = [("Host", "127.0.0.1")] + [
        (k, v) for k, v in fx.headers if k.lower() != "anthropic-beta"]
    lines.append(("anthropic-beta", betas_of(fx.headers)))
    lines.append(("Content-Length", str(len(fx.body))))
    lines.append(("Connection", "close"))
    assert len(lines) < at
    lines += [("X-Pad-%d" % i, "x") for i in range(at - 1 - len(lines))]
    lines.append(("anthropic-beta", THIRD))
    assert len(lines) == at
    head = "POST %s HTTP/1.1\r\n" % fx.url + "".join(
        "%s: %s\r\n" % kv for kv in lines) + "\r\n"
    raw = raw_exchange(gw, [head.encode() + fx.body])
    status, headers, _ = parse_raw(raw)
    assert status == 200
    assert headers["x-toolsearch-decision"] == decision
    assert emulator.requests
    for got in emulator.requests:
        assert got.status == 200, got.error
        assert THIRD not in betas_of(got.headers), got.header_all(
            "anthropic-beta")


@pytest.mark.parametrize("extra", ["toolsearch_disable_betas on;",
                                   "toolsearch_search gateway;"])
def test_header_parts_of_nothing_but_removed_betas(emulator, gateway, extra):
    """45 tool-search beta lines first: whole parts of nginx's header list
    go, and the upstream gets no beta line it must not get."""
    fx = load_fixture("ts-unset/002.json")
    gw = gateway_for(gateway, extra=extra)
    head = ("POST %s HTTP/1.1\r\nHost: 127.0.0.1\r\n" % fx.url
            + "anthropic-beta: %s\r\n" % THIRD * 45
            + "".join("%s: %s\r\n" % (k, v) for k, v in fx.headers)
            + "Content-Length: %d\r\nConnection: close\r\n\r\n"
            % len(fx.body))
    status, _, body = parse_raw(raw_exchange(gw, [head.encode() + fx.body]))
    assert status == 200, body
    for got in emulator.requests:
        assert got.status == 200, got.error
        assert THIRD not in betas_of(got.headers)


def restore_body(calls, tools=None):
    """a request whose history calls tools (name, id) in one assistant
    message each, with the MCP tools of a session"""
    names = tools or ["Read", "mcp__memory__create_entities",
                      "mcp__memory__read_graph", "mcp__x__a.b"]
    messages = [{"role": "user", "content": "go"}]
    for name, id_ in calls:
        messages += [
            {"role": "assistant", "content": [
                {"type": "text", "text": "Calling."},
                {"type": "tool_use", "id": id_, "name": name, "input": {}}]},
            {"role": "user", "content": [
                {"type": "tool_result", "tool_use_id": id_,
                 "content": "ok"}]}]
    return json.dumps({
        "model": "claude-sonnet-4-5", "max_tokens": 64,
        "tools": [{"name": n, "description": "d " * 400,
                   "input_schema": {"type": "object"}} for n in names],
        "messages": messages}).encode()


def test_restored_search_once_per_tool_with_an_id_of_the_call():
    body = restore_body([("mcp__memory__create_entities", "toolu_a-b.c"),
                         ("mcp__memory__create_entities", "toolu_second")])
    r = Rewrite(body, "")
    assert r.decision == "deferred_hosted"
    assert r.report["searches_restored"] == "1"
    out = json.loads(r.body)
    first, second = out["messages"][1]["content"], out["messages"][3]["content"]
    assert [b["type"] for b in first] == [
        "text", "server_tool_use", "tool_search_tool_result", "tool_use"]
    assert first[1]["id"] == first[2]["tool_use_id"] == "srvtoolu_a_b_c"
    # the second call finds the tool loaded by the first one's search
    assert [b["type"] for b in second] == ["text", "tool_use"]
    # fed back, the output is left as it is
    again = Rewrite(r.body, r.betas)
    assert again.body == r.body
    assert again.report["searches_restored"] == "0"


def test_a_name_a_search_cannot_carry_is_loaded_in_full():
    body = restore_body([("mcp__x__a.b", "toolu_1")])
    out = json.loads(Rewrite(body, "").body)
    tools = {t["name"]: t for t in out["tools"]}
    assert "defer_loading" not in tools["mcp__x__a.b"]
    assert tools["mcp__memory__read_graph"]["defer_loading"] is True
    assert [b["type"] for b in out["messages"][1]["content"]] == \
        ["text", "tool_use"]


def test_a_call_spelled_with_escapes_restores_the_tools_own_name():
    body = restore_body([("mcp__memory__create_entities", "toolu_1")])
    plain = b'"name": "mcp__memory__create_entities", "input"'
    assert body.count(plain) == 1
    body = body.replace(plain, b'"name": "mcp\\u005f_memory__create_entities'
                               b'", "input"')
    r = Rewrite(body, "")
    out = json.loads(r.body)
    tools = {t["name"]: t for t in out["tools"]}
    assert tools["mcp__memory__create_entities"]["defer_loading"] is True
    found = out["messages"][1]["content"][2]
    assert found["content"]["tool_references"] == [
        {"type": "tool_reference",
         "tool_name": "mcp__memory__create_entities"}]
    assert r.report["searches_restored"] == "1"


@pytest.mark.parametrize("client_breakpoints", [3, 4])
def test_gateway_breakpoint_on_the_search_tool_within_the_limit(
        client_breakpoints):
    """gateway search puts a breakpoint of its own on the last tool it
    writes (the search tool; call_tool with the call wrapper, the default)
    where the client put none in tools[], unless the request has the 4 the
    API takes already"""
    body = json.loads(restore_body([]))
    cache = {"type": "ephemeral"}
    body["system"] = [{"type": "text", "text": "s%d" % i,
                       "cache_control": cache} for i in range(3)]
    body["messages"] = [{"role": "user", "content": [
        {"type": "text", "text": "go", "cache_control": cache}]}]
    body["system"] = body["system"][:client_breakpoints - 1]
    r = Rewrite(json.dumps(body).encode(), "", "--upstream", "compatible")
    assert r.decision == "deferred_gateway"
    out = json.loads(r.body)
    search = out["tools"][-1]
    assert search["name"] == "call_tool"
    marks = r.body.count(b'"cache_control"')
    if client_breakpoints < 4:
        assert search["cache_control"] == cache and marks == 4
    else:
        assert "cache_control" not in search and marks == 4
