"""The bad-input table of docs/robustness.md, row by row, through a real
nginx: every input ends forwarded untouched, with a clear 4xx from nginx's
own limits, or handled as documented, and never with a crash or a hang.
After each test the gateway's error log must show no crashed worker."""

import gzip    # noqa: F401  (the gzip row is test_passthrough's)
import json
import socket
import time

import pytest

from conftest import Rewrite, parse_raw, post_json, raw_exchange, request
from emulator import Raw, Reply, sse_events, text, tool_use
from gateway import VALGRIND

JSON = ("Content-Type", "application/json")
HOSTED = "toolsearch on; toolsearch_search hosted; toolsearch_upstream %s;"
GATEWAY = ("toolsearch on; toolsearch_upstream compatible; "
           "toolsearch_search_blocks keep;")

# time limits stretch under valgrind, which runs nginx 20 to 50 times slower
SLOW = 20 if VALGRIND else 1

# a secret that must never reach a log
SECRET = "sk-ant-api03-SECRET-do-not-log"


def tool(name, desc="A tool.", schema=None):
    return {"name": name, "description": desc,
            "input_schema": schema or {"type": "object"}}


def body(messages=None, tools=None, **top):
    b = {"model": "claude-sonnet-4-5", "max_tokens": 64,
         "messages": messages or [{"role": "user", "content": "hi"}],
         "tools": [tool("Bash"), tool("mcp__memory__create_entities"),
                   tool("mcp__memory__read_graph")]
         if tools is None else tools}
    b.update(top)
    return json.dumps(b).encode()


SMALL = body()


@pytest.fixture
def healthy(gateway):
    """gateway(...) whose error logs are checked for crashed workers."""
    started = []

    def make(**conf):
        gw = gateway(**conf)
        started.append(gw)
        return gw

    yield make
    for gw in started:
        log = gw.error_log()
        assert "exited on signal" not in log, log[-2000:]
        assert "[alert]" not in log and "[emerg]" not in log, log[-2000:]


def forwarded(emulator, count=1):
    assert emulator.wait_for(count), "nothing reached the upstream"
    return emulator.last()


def engine(data, *options):
    return Rewrite(data, "", *options)


# -- malformed JSON of each kind: forwarded untouched ------------------------

MALFORMED = {
    "truncated": SMALL[:-9],
    "trailing_garbage": SMALL + b" x",
    "two_documents": SMALL + SMALL,
    "bad_escape": SMALL.replace(b'"hi"', b'"h\\xi"'),
    "short_unicode_escape": SMALL.replace(b'"hi"', b'"h\\u12i"'),
    "raw_control_char": SMALL.replace(b'"hi"', b'"h\x01i"'),
    "raw_newline_in_string": SMALL.replace(b'"hi"', b'"h\ni"'),
    "unterminated_string": SMALL.replace(b'"hi"}', b'"hi}'),
    "bad_literal": SMALL.replace(b'"max_tokens": 64', b'"max_tokens": tru'),
    "leading_zero": SMALL.replace(b'"max_tokens": 64', b'"max_tokens": 064'),
    "bare_minus": SMALL.replace(b'"max_tokens": 64', b'"max_tokens": -'),
    "nan": SMALL.replace(b'"max_tokens": 64', b'"max_tokens": NaN'),
    "missing_colon": SMALL.replace(b'"max_tokens": 64', b'"max_tokens" 64'),
    "missing_comma": SMALL.replace(b'64, "messages"', b'64 "messages"'),
    "trailing_comma": SMALL[:-1] + b",}",
    "single_quotes": SMALL.replace(b'"hi"', b"'hi'"),
    "unquoted_key": SMALL.replace(b'"max_tokens"', b"max_tokens"),
    "byte_order_mark": b"\xef\xbb\xbf" + SMALL,
    "empty": b"",
    "whitespace_only": b" \r\n\t ",
    "lone_brace": b"}",
}


@pytest.mark.parametrize("name", sorted(MALFORMED))
def test_malformed_json_is_forwarded_untouched(emulator, healthy, name):
    data = MALFORMED[name]
    gw = healthy()
    r = post_json(gw, data)
    got = forwarded(emulator)
    assert got.body == data
    assert r.decision == "passthrough_malformed"
    assert r.status == got.status     # the upstream's own answer


# -- invalid UTF-8: not JSON text, forwarded untouched ------------------------

@pytest.mark.parametrize("where", ["message", "description"])
def test_invalid_utf8_is_forwarded_as_it_came(emulator, healthy, where):
    bad = b"\xff\xfe\xc3(\xed\xa0\x80\xf4\x90\x80\x80"
    data = body([{"role": "user", "content": "x"}])
    data = data.replace(b'"x"', b'"' + bad + b'"') if where == "message" \
        else data.replace(b'"A tool."', b'"' + bad + b' desc"')
    assert bad in data
    gw = healthy(server=HOSTED % "anthropic")
    r = post_json(gw, data)
    want = engine(data, "--upstream", "anthropic", "--search", "hosted")
    got = forwarded(emulator)
    assert r.decision == want.decision == "passthrough_malformed"
    assert got.body == data


# -- nesting: passthrough_too_deep --------------------------------------------

@pytest.mark.parametrize("where", ["schema", "message", "top"])
def test_10000_deep_nesting_is_forwarded_untouched(emulator, healthy, where):
    deep = "[" * 10000 + "]" * 10000
    if where == "schema":
        data = body(tools=[tool("mcp__a__b", schema={"type": "object"}),
                           tool("Bash")]).replace(
            b'{"type": "object"}', b'{"x": %s}' % deep.encode(), 1)
    elif where == "message":
        data = body().replace(b'"hi"', deep.encode())
    else:
        data = ("[" * 10000 + "]" * 10000).encode()
    gw = healthy(server=HOSTED % "anthropic")
    r = post_json(gw, data)
    got = forwarded(emulator)
    assert got.body == data
    assert r.decision == "passthrough_too_deep"


# -- sizes: 10,000 tools, a 1 MB description ----------------------------------

@pytest.mark.parametrize("search", ["hosted", "gateway"])
def test_10000_tools(emulator, healthy, search):
    tools = [tool("mcp__s%d__tool%d" % (i % 50, i), "Tool number %d." % i)
             for i in range(10000)] + [tool("Bash")]
    data = body(tools=tools)
    gw = healthy(server="toolsearch on; toolsearch_upstream anthropic; "
                        "toolsearch_search %s; client_max_body_size 8m;"
                        % search)
    start = time.monotonic()
    r = post_json(gw, data, headers=[JSON, ("anthropic-beta",
                                            "advanced-tool-use-2025-11-20")])
    assert time.monotonic() - start < 10 * SLOW
    want = engine(data, "--upstream", "anthropic", "--search", search)
    got = forwarded(emulator)
    assert r.status == 200, r.body
    assert r.decision == want.decision == "deferred_%s" % search
    assert r.header("X-Toolsearch-Tools") == "10001"
    assert got.body == want.body


def test_1mb_description(emulator, healthy):
    data = body(tools=[tool("mcp__big__tool", "d" * (1 << 20)), tool("Bash")])
    gw = healthy(server=HOSTED % "anthropic" + " client_max_body_size 4m;")
    r = post_json(gw, data, headers=[JSON, ("anthropic-beta",
                                            "advanced-tool-use-2025-11-20")])
    want = engine(data, "--upstream", "anthropic", "--search", "hosted")
    got = forwarded(emulator)
    assert r.status == 200
    assert r.decision == "deferred_hosted"
    assert got.body == want.body and b"d" * (1 << 20) in got.body


# -- duplicate keys -----------------------------------------------------------

def test_duplicate_key_the_engine_reads_is_forwarded_untouched(emulator,
                                                               healthy):
    data = SMALL.replace(b'"model": "claude-sonnet-4-5"',
                         b'"model": "a", "model": "b"')
    gw = healthy(server=HOSTED % "anthropic")
    r = post_json(gw, data)
    assert forwarded(emulator).body == data
    assert r.decision == "passthrough_duplicate_key"


def test_duplicate_key_the_engine_does_not_read_is_kept(emulator, healthy):
    data = SMALL[:-1] + b', "metadata": {"a": 1, "a": 2}}'
    gw = healthy(server=HOSTED % "anthropic")
    r = post_json(gw, data)
    want = engine(data, "--upstream", "anthropic", "--search", "hosted")
    got = forwarded(emulator)
    assert r.decision == "deferred_hosted"
    assert got.body == want.body
    assert b'"metadata": {"a": 1, "a": 2}' in got.body


# -- wrong types at every level -----------------------------------------------

H = b'"model": "claude-sonnet-4-5", "max_tokens": 64, '
M = b'"messages": [{"role": "user", "content": "hi"}]'
T = b'"tools": [{"name": "mcp__a__b", "input_schema": {}}, {"name": "Bash"}]'

WRONG_TYPES = {
    "top_level_array": b"[" + SMALL + b"]",
    "top_level_string": b'"hello"',
    "top_level_number": b"42",
    "model": b'{"model": 5, ' + M + b", " + T + b"}",
    "messages": b"{" + H + b'"messages": {}, ' + T + b"}",
    "message": b"{" + H + b'"messages": ["hi"], ' + T + b"}",
    "role": b"{" + H + b'"messages": [{"role": 5, "content": "hi"}], '
            + T + b"}",
    "content": b"{" + H + b'"messages": [{"role": "user", "content": 5}], '
               + T + b"}",
    "block": b"{" + H + b'"messages": [{"role": "user", "content": ["x"]}], '
             + T + b"}",
    "block_type": b"{" + H + b'"messages": [{"role": "user", "content": '
                  b'[{"type": 5}]}], ' + T + b"}",
    "tools": b"{" + H + M + b', "tools": {}}',
    "tool": b"{" + H + M + b', "tools": ["x"]}',
    "tool_name": b"{" + H + M + b', "tools": [{"name": 5}]}',
}


@pytest.mark.parametrize("name", sorted(WRONG_TYPES))
def test_wrong_type_is_forwarded_untouched(emulator, healthy, name):
    data = WRONG_TYPES[name]
    gw = healthy(server=HOSTED % "anthropic")
    r = post_json(gw, data)
    assert forwarded(emulator).body == data
    assert r.decision == "passthrough_wrong_type"


# members the engine reads for nothing it decides: analysed, kept as they came
UNCHECKED_TYPES = {
    "stream": b"{" + H + M + b", " + T + b', "stream": "yes"}',
    "system": b"{" + H + M + b", " + T + b', "system": 5}',
    "tool_choice": b"{" + H + M + b", " + T + b', "tool_choice": "auto"}',
    "tool_result_content": b"{" + H + b'"messages": [{"role": "user", '
                           b'"content": [{"type": "tool_result", '
                           b'"tool_use_id": "x", "content": 5}]}], ' + T
                           + b"}",
}


@pytest.mark.parametrize("name", sorted(UNCHECKED_TYPES))
@pytest.mark.parametrize("search", ["hosted", "gateway"])
def test_wrong_type_the_engine_does_not_check(emulator, healthy, name,
                                              search):
    data = UNCHECKED_TYPES[name]
    gw = healthy(server="toolsearch on; toolsearch_upstream anthropic; "
                        "toolsearch_search %s;" % search)
    r = post_json(gw, data)
    want = engine(data, "--upstream", "anthropic", "--search", search)
    got = forwarded(emulator)
    assert r.decision == want.decision == "deferred_%s" % search
    assert got.body == want.body
    assert r.status == got.status     # the upstream's own verdict


def test_gateway_search_call_without_id(emulator, healthy):
    """Found by fuzzing: this history crashed the worker."""
    data = body([{"role": "user", "content": "find"},
                 {"role": "assistant", "content": [
                     {"type": "server_tool_use", "name": "tool_search",
                      "input": {"query": "memory"}}]},
                 {"role": "user", "content": "go"}])
    gw = healthy(server=HOSTED % "vertex")
    r = post_json(gw, data)
    want = engine(data, "--upstream", "vertex", "--search", "hosted")
    assert r.decision == want.decision
    assert forwarded(emulator).body == want.body


# -- references to unknown tools, empty tools ---------------------------------

def references(data):
    names = []
    for m in json.loads(data)["messages"]:
        for b in m["content"] if isinstance(m["content"], list) else []:
            if b.get("type") == "tool_result" and \
                    isinstance(b.get("content"), list):
                names += [c["tool_name"] for c in b["content"]
                          if c.get("type") == "tool_reference"]
            if b.get("type") == "tool_search_tool_result":
                names += [c["tool_name"] for c in
                          b["content"].get("tool_references", [])]
    return names


@pytest.mark.parametrize("profile", ["anthropic", "compatible"])
def test_tool_reference_to_unknown_tools_never_dangles(emulator, healthy,
                                                       profile):
    ref = [{"type": "tool_reference", "tool_name": "mcp__gone__x"},
           {"type": "tool_reference", "tool_name": "mcp__memory__read_graph"}]
    data = body([
        {"role": "user", "content": "find"},
        {"role": "assistant", "content": [
            {"type": "server_tool_use", "id": "srv1",
             "name": "tool_search_tool_bm25", "input": {"query": "m"}},
            {"type": "tool_search_tool_result", "tool_use_id": "srv1",
             "content": {"type": "tool_search_tool_search_result",
                         "tool_references": ref}},
            tool_use("ToolSearch", {"query": "m"}, "tu1")]},
        {"role": "user", "content": [
            {"type": "tool_result", "tool_use_id": "tu1", "content": ref}]}])
    gw = healthy(server=HOSTED % profile)
    r = post_json(gw, data, headers=[JSON, ("anthropic-beta",
                                            "advanced-tool-use-2025-11-20")])
    got = forwarded(emulator)
    assert r.decision not in ("", None) and \
        not r.decision.startswith("passthrough")
    tools = {t["name"] for t in json.loads(got.body)["tools"]}
    assert "mcp__gone__x" not in references(got.body)
    assert set(references(got.body)) <= tools
    assert got.status == 200, got.error


@pytest.mark.parametrize("tools", [[], None], ids=["empty", "absent"])
def test_empty_tools_are_forwarded_untouched(emulator, healthy, tools):
    b = json.loads(SMALL)
    b["tools"] = tools
    if tools is None:
        del b["tools"]
    data = json.dumps(b).encode()
    gw = healthy(server=HOSTED % "anthropic")
    r = post_json(gw, data)
    assert forwarded(emulator).body == data
    assert r.decision == "nothing_to_defer"
    assert r.status == 200


# -- bodies that arrive badly: truncated, aborted, slow -----------------------

def head(length=None, chunked=False, extra=""):
    h = ("POST /v1/messages HTTP/1.1\r\nHost: gw\r\n"
         "Content-Type: application/json\r\n" + extra)
    h += "Transfer-Encoding: chunked\r\n" if chunked else \
        "Content-Length: %d\r\n" % length
    return (h + "\r\n").encode()


def send_and_close(gw, parts):
    s = socket.create_connection(("127.0.0.1", gw.port), timeout=5 * SLOW)
    try:
        for p in parts:
            s.sendall(p)
            time.sleep(0.05)
    finally:
        s.close()


def still_serves(emulator, gw):
    """The same worker answers the next request as usual."""
    emulator.reset()
    r = post_json(gw, SMALL)
    assert r.status == 200 and r.decision == "upstream_unsupported"
    assert forwarded(emulator).body == SMALL


@pytest.mark.parametrize("chunked", [True, False],
                         ids=["truncated_chunked", "client_abort"])
def test_body_cut_short_reaches_nobody(emulator, healthy, chunked):
    gw = healthy(server=HOSTED % "compatible")
    if chunked:
        parts = [head(chunked=True), b"%x\r\n%s" % (len(SMALL), SMALL[:40])]
    else:
        parts = [head(len(SMALL)), SMALL[:40]]
    send_and_close(gw, parts)
    time.sleep(0.3)
    assert emulator.received == 0
    still_serves(emulator, gw)
    gw.stop()
    assert "decision=none" in "\n".join(gw.access_log())


def test_slow_body_is_read_whole(emulator, healthy):
    gw = healthy(server=HOSTED % "anthropic")
    data = body()
    parts = [head(len(data), extra="Connection: close\r\n")] + \
        [data[i:i + 16] for i in range(0, len(data), 16)]
    status, headers, _ = parse_raw(raw_exchange(gw, parts, pause=0.02))
    want = engine(data, "--upstream", "anthropic", "--search", "hosted")
    assert forwarded(emulator).body == want.body
    assert headers["x-toolsearch-decision"] == "deferred_hosted"


def test_stalled_body_gets_nginx_408(emulator, healthy):
    gw = healthy(server=HOSTED % "compatible" + " client_body_timeout 1s;")
    data = body()
    started = time.monotonic()
    answer = raw_exchange(gw, [head(len(data), extra="Connection: close\r\n"),
                               data[:50]], timeout=10)
    assert time.monotonic() - started < 5 * SLOW
    # nginx answers 408 by closing the connection (no status line sent)
    assert answer == b"" or parse_raw(answer)[0] == 408
    assert emulator.received == 0
    still_serves(emulator, gw)


# -- the gateway's search: long and regex-shaped queries ----------------------

def searcher(query):
    """A model that searches once with query, then answers."""
    def model(req):
        last = req["messages"][-1]
        if isinstance(last["content"], list) and any(
                b.get("type") == "tool_result" for b in last["content"]):
            return Reply([text("done")])
        return Reply([tool_use("tool_search", {"query": query},
                               "toolu_search1")])
    return model


QUERIES = {
    "100kb": "memory " * (100 * 1024 // 7),
    "100kb_one_word": "m" * (100 * 1024),
    "nested_quantifiers": "(a+)+$ " + "a" * 5000 + "!",
    "alternation": "(a|aa)*b " + "a" * 5000,
    "regex_soup": "^.*(x|y)*.*$ [[[ ((( \\\\ +*? {1,99999}",
    "select_many": "select:" + ",".join("mcp__x__%d" % i
                                        for i in range(5000)),
}


@pytest.mark.parametrize("name", sorted(QUERIES))
@pytest.mark.parametrize("stream", [False, True], ids=["json", "sse"])
def test_hostile_search_query(emulator, healthy, name, stream):
    emulator.profile = "proxy"
    emulator.script = searcher(QUERIES[name])
    gw = healthy(server=GATEWAY)
    started = time.monotonic()
    r = post_json(gw, body(stream=stream))
    assert time.monotonic() - started < 5 * SLOW
    assert r.status == 200, r.body
    assert r.decision == "deferred_gateway"
    assert emulator.wait_for(2)
    assert b"tool_search_tool_result" in r.body
    assert b"done" in r.body


def test_search_loading_every_deferred_tool_goes_on(emulator, healthy):
    """Found by fuzzing: the next call could not be built (a 500)."""
    emulator.profile = "proxy"
    emulator.script = searcher("select:mcp__memory__create_entities,"
                               "mcp__memory__read_graph")
    gw = healthy(server=GATEWAY)
    r = post_json(gw, body())
    assert r.status == 200, r.body
    assert json.loads(r.body)["content"][-1] == text("done")
    # the call wrapper (the default): the found tools stay deferred
    assert [t["name"] for t in json.loads(emulator.last().body)["tools"]] \
        == ["Bash", "tool_search", "call_tool"]


# -- the upstream's stream: endless, malformed, split at every byte -----------

def endless(counter):
    message = {"id": "msg_1", "type": "message", "role": "assistant",
               "model": "m", "content": [], "stop_reason": None,
               "usage": {"input_tokens": 1, "output_tokens": 1}}
    yield ("event: message_start\ndata: %s\n\n" % json.dumps(
        {"type": "message_start", "message": message})).encode()
    yield (b'event: content_block_start\ndata: {"type":"content_block_start",'
           b'"index":0,"content_block":{"type":"text","text":""}}\n\n')
    for _ in range(100000):
        counter.append(1)
        yield (b'event: content_block_delta\ndata: {"type":'
               b'"content_block_delta","index":0,"delta":{"type":'
               b'"text_delta","text":"and on "}}\n\n')


@pytest.mark.parametrize("conf", [HOSTED % "compatible", GATEWAY],
                         ids=["proxied", "gateway_search"])
def test_endless_stream_ends_with_the_client(emulator, healthy, conf):
    sent = []
    emulator.script = lambda req: Raw(endless(sent), delay=0.005)
    gw = healthy(server=conf)
    s = socket.create_connection(("127.0.0.1", gw.port), timeout=5 * SLOW)
    data = body(stream=True)
    s.sendall(head(len(data)) + data)
    got = b""
    deadline = time.monotonic() + 5 * SLOW
    while got.count(b"and on") < 20 and time.monotonic() < deadline:
        got += s.recv(65536)
    # events reach the client while the stream goes on
    assert got.count(b"and on") >= 20
    s.close()
    deadline = time.monotonic() + 10 * SLOW
    while emulator.aborted == 0 and time.monotonic() < deadline:
        time.sleep(0.05)
    assert emulator.aborted == 1, "the upstream kept streaming"
    assert len(sent) < 100000


MALFORMED_SSE = (
    b"event: message_start\ndata: {\"type\":\"message_start\",\"message\":"
    b"{\"id\":\"m\",\"type\":\"message\",\"role\":\"assistant\","
    b"\"content\":[],\"usage\":{\"input_tokens\":1,\"output_tokens\":1}}}\n\n"
    b"data: not json at all\n\n"
    b": a comment\n\n"
    b"event: mystery\ndata: {\"type\":\"mystery\",\"index\":\"x\"}\n\n"
    b"event: content_block_delta\ndata: {\"type\":\"content_block_delta\","
    b"\"index\":9,\"delta\":{\"type\":\"text_delta\",\"text\":\"orphan\"}}\n\n"
    b"event: content_block_start\r\ndata: {\"type\":\"content_block_start\","
    b"\"index\":0,\"content_block\":{\"type\":\"text\",\"text\":\"\"}}\r\n\r\n"
    b"event: content_block_delta\ndata: {\"type\":\"content_block_delta\","
    b"\"index\":0,\"delta\":{\"type\":\"text_delta\",\"text\":\"ok\"}}\n\n"
    b"event: content_block_stop\ndata: {\"type\":\"content_block_stop\","
    b"\"index\":0}\n\n"
    b"event: ping\n\n"
    b"event: message_delta\ndata: {\"type\":\"message_delta\",\"delta\":"
    b"{\"stop_reason\":\"end_turn\"},\"usage\":{\"output_tokens\":2}}\n\n"
    b"event: message_stop\ndata: {\"type\":\"message_stop\"}\n\n")


def test_malformed_events_pass_as_they_came(emulator, healthy):
    emulator.script = lambda req: Raw([MALFORMED_SSE])
    gw = healthy(server=GATEWAY)
    r = post_json(gw, body(stream=True))
    assert r.status == 200
    assert r.decision == "deferred_gateway"
    assert r.body == MALFORMED_SSE


def search_stream():
    """A model turn that searches, as the upstream streams it."""
    message = {"id": "msg_1", "type": "message", "role": "assistant",
               "model": "m", "stop_reason": "tool_use", "stop_sequence": None,
               "content": [text("Let me look."), tool_use(
                   "tool_search", {"query": "memory"}, "toolu_search1")],
               "usage": {"input_tokens": 10, "output_tokens": 5}}
    return "".join(sse_events(message)).encode()


def test_stream_split_at_every_byte(emulator, healthy):
    stream = search_stream()
    answers = []

    def model(req):
        if len(req["messages"]) > 1:
            return Reply([text("done")])
        # the first time whole, the second time byte by byte
        pieces = [stream] if not answers else \
            [stream[i:i + 1] for i in range(len(stream))]
        answers.append(1)
        return Raw(pieces, delay=0.0005 if answers[1:] else 0)

    emulator.script = model
    gw = healthy(server=GATEWAY)
    whole = post_json(gw, body(stream=True))
    split = post_json(gw, body(stream=True))
    assert whole.status == split.status == 200
    assert b"tool_search_tool_result" in whole.body
    assert split.body.replace(b"msg_emu", b"") == \
        whole.body.replace(b"msg_emu", b"")


# -- security: nothing secret in the logs, credentials untouched --------------

def test_no_body_or_key_in_the_logs(emulator, healthy):
    emulator.profile = "proxy"
    emulator.script = searcher(SECRET)
    gw = healthy(server=GATEWAY, log_level="info")
    auth = [JSON, ("x-api-key", SECRET), ("Authorization", "Bearer " + SECRET)]
    secret_body = body([{"role": "user", "content": SECRET}],
                       tools=[tool("Bash", SECRET),
                              tool("mcp__x__" + "y", SECRET)])
    for data in (secret_body, secret_body[:-5], gzip.compress(secret_body)):
        post_json(gw, data, headers=auth)
    gw.stop()
    assert SECRET not in gw.error_log()
    assert SECRET not in "\n".join(gw.access_log())
    assert "toolsearch: decision=" in gw.error_log()


@pytest.mark.parametrize("conf", [HOSTED % "anthropic", GATEWAY,
                                  HOSTED % "compatible"],
                         ids=["hosted", "gateway_search", "unchanged"])
def test_credentials_and_target_are_never_altered(emulator, healthy, conf):
    emulator.profile = "proxy" if conf == GATEWAY else "anthropic"
    emulator.script = searcher("memory")
    gw = healthy(server=conf)
    auth = [("x-api-key", SECRET), ("Authorization", "Bearer " + SECRET),
            ("anthropic-version", "2023-06-01")]
    r = request(gw, "POST", "/v1/messages?beta=true&x=%2F", body(),
                [JSON] + auth)
    assert r.status == 200, r.body
    calls = emulator.requests
    assert calls and (len(calls) == 2) == (conf == GATEWAY)
    for got in calls:
        assert got.path == "/v1/messages?beta=true&x=%2F"
        for name, value in auth:
            assert got.header_all(name) == [value]
