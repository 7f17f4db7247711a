"""Status and metrics through a real Nginx: the toolsearch_zone counters
move by exactly what the requests did, the Prometheus text parses, the
zone keeps its values over a reload, and every decided request leaves one
info line in the error log."""

import json
import os
import re
import signal
import time

import pytest

import chat_fixtures
import responses_fixtures
from conftest import ROOT, load_fixture, post_json, request
from emulator import chat_seeker
from emulator_responses import responses_seeker
from gateway import VALGRIND

ZONE = "toolsearch_zone ts 64k;"

LOG = ("log_format st '$toolsearch_decision tools=$toolsearch_tools_total "
       "deferred=$toolsearch_tools_deferred "
       "chars=$toolsearch_defer_chars saved=$toolsearch_tokens_saved "
       "converted=$toolsearch_refs_converted "
       "stale=$toolsearch_refs_stale moved=$toolsearch_siblings_moved "
       "boundaries=$toolsearch_boundaries_added';")

# the kill switch converts tool-search history to text on its own route
SERVER = """
    toolsearch on;
    toolsearch_upstream anthropic;
    toolsearch_client_mode on;
    access_log st.log st;
    location = /status { toolsearch_status; }
    location /kill/ {
        toolsearch_disable_betas on;
        proxy_http_version 1.1;
        proxy_set_header Connection "";
        proxy_set_header Accept-Encoding "";
        proxy_pass http://emulator/;
    }
"""

PROMETHEUS_TYPE = "text/plain; version=0.0.4; charset=utf-8"

SCALARS = ["tools_seen", "tools_recalled", "messages_recalled",
           "tools_deferred", "tool_bytes_removed", "tokens_saved",
           "hosted_searches",
           "gateway_searches", "search_misses", "loop_iterations",
           "pause_turns", "refs_stale", "refs_converted", "siblings_moved",
           "boundaries_added", "searches_restored", "internal_errors"]

DECISIONS = ["passthrough", "passthrough_malformed", "passthrough_too_deep",
             "passthrough_duplicate_key", "passthrough_wrong_type",
             "passthrough_limit", "passthrough_error",
             "passthrough_too_large", "passthrough_not_json",
             "passthrough_encoded", "passthrough_method", "standard_mode",
             "kill_switch", "model_unsupported", "upstream_unsupported",
             "nothing_to_defer", "below_threshold", "client_managed",
             "server_state", "deferred_hosted", "deferred_gateway",
             "thread_create", "thread_continue"]


def status_gateway(gateway, http=""):
    return gateway(http=ZONE + LOG + http, server=SERVER)


def status(gw, path="/status", headers=()):
    r = request(gw, "GET", path, headers=headers)
    assert r.status == 200, r.body
    return r


def counters(gw):
    r = status(gw)
    assert r.header("Content-Type") == "application/json"
    return json.loads(r.body)


def delta(before, after):
    """after - before, per counter, for the maps and the scalars."""
    out = {}
    for k, v in after.items():
        if isinstance(v, dict):
            out[k] = {d: n - before[k][d] for d, n in v.items()}
        elif isinstance(v, int):
            out[k] = v - before[k]
    return out


def nonzero(m):
    return {k: v for k, v in m.items() if v}


def access_lines(gw):
    with open(os.path.join(gw.prefix, "st.log")) as f:
        return [line.split() for line in f.read().splitlines()
                if not line.startswith("-")]


def hosted_search_body():
    """A conversation whose last assistant turn ran two hosted searches."""
    result = {"type": "tool_search_tool_search_result", "tool_references": [
        {"type": "tool_reference", "tool_name": "mcp__db__query"}]}
    tools = [{"name": "Read", "input_schema": {"type": "object"}},
             {"name": "mcp__db__query", "input_schema": {"type": "object"}}]
    return json.dumps({
        "model": "claude-sonnet-4-5", "max_tokens": 64, "tools": tools,
        "messages": [
            {"role": "user", "content": "find the db tool"},
            {"role": "assistant", "content": [
                {"type": "server_tool_use", "id": "srvtoolu_%d" % i,
                 "name": "tool_search_tool_bm25",
                 "input": {"query": "database"}}
                for i in (1, 2)] + [
                {"type": "tool_search_tool_result",
                 "tool_use_id": "srvtoolu_%d" % i, "content": result}
                for i in (1, 2)] + [
                {"type": "text", "text": "found it"}]},
            {"role": "user", "content": "thanks"}]}).encode()


def test_counters_move_by_exact_deltas(emulator, gateway):
    gw = status_gateway(gateway)
    before = counters(gw)
    assert before["zone"] == "ts"
    assert set(before["requests"]) == set(DECISIONS)
    assert set(before["passthroughs"]) == set(DECISIONS)

    fx = load_fixture("ts-unset/002.json")
    assert request(gw, "POST", fx.url, fx.body, fx.headers).status == 200
    standard = fx.headers + [("X-Toolsearch-Mode", "off")]
    assert request(gw, "POST", fx.url, fx.body, standard).status == 200
    assert request(gw, "GET", "/v1/models").decision == "passthrough_method"
    assert post_json(gw, b'{"model":').status == 400
    history = load_fixture("ts-true/004.json")
    r = request(gw, "POST", "/kill" + history.url, history.body,
                history.headers)
    assert r.status == 200 and r.decision == "kill_switch"
    r = post_json(gw, hosted_search_body(), headers=[
        ("Content-Type", "application/json"),
        ("anthropic-beta", "advanced-tool-use-2025-11-20")])
    assert r.status == 200, emulator.last().error

    d = delta(before, counters(gw))
    assert nonzero(d["requests"]) == {
        "deferred_hosted": 2, "standard_mode": 1, "passthrough_method": 1,
        "passthrough_malformed": 1, "kill_switch": 1}
    # the standard-mode request carried no tool-search field to convert
    assert nonzero(d["passthroughs"]) == {
        "standard_mode": 1, "passthrough_method": 1,
        "passthrough_malformed": 1}

    # every other counter is the sum of what the requests reported
    logged = access_lines(gw)
    assert len(logged) == 6

    def total(field, only=None):
        return sum(int(dict(kv.split("=") for kv in line[1:])[field])
                   for line in logged if only in (None, line[0]))

    assert d["tools_seen"] == total("tools")
    assert d["tools_deferred"] == total("deferred", "deferred_hosted")
    assert d["tool_bytes_removed"] == total("chars", "deferred_hosted")
    assert d["refs_converted"] == total("converted") > 0
    assert d["refs_stale"] == total("stale")
    assert d["siblings_moved"] == total("moved")
    assert d["boundaries_added"] == total("boundaries")
    # the Claude Code request: its 122 MCP tools and the 17 built-ins its
    # client profile defers (docs/clients.md#client-profiles)
    assert d["tools_deferred"] == 139 + 1
    assert d["tokens_saved"] == d["tool_bytes_removed"] * 2 // 5
    assert d["hosted_searches"] == 2
    for name in ("gateway_searches", "search_misses", "loop_iterations",
                 "pause_turns", "internal_errors"):
        assert d[name] == 0, name


def test_tokens_saved_per_request_adds_up_to_the_counter(emulator,
                                                        gateway):
    gw = status_gateway(gateway)
    fx = load_fixture("ts-unset/002.json")
    for _ in range(2):
        before = counters(gw)
        assert request(gw, "POST", fx.url, fx.body, fx.headers).status == 200
        d = delta(before, counters(gw))
        line = access_lines(gw)[-1]
        fields = dict(kv.split("=") for kv in line[1:])
        assert line[0] == "deferred_hosted"
        # the deferred definitions' 101136 bytes (Claude Code's profile) at
        # 2.5 bytes per token
        assert int(fields["saved"]) == 101136 * 2 // 5 == d["tokens_saved"]

    # nothing deferred, nothing saved: the variable says 0, not "-"
    standard = fx.headers + [("X-Toolsearch-Mode", "off")]
    assert request(gw, "POST", fx.url, fx.body, standard).status == 200
    assert request(gw, "GET", "/v1/models").status == 404
    # the log line is written once the answer has gone out
    assert wait_for(lambda: len(access_lines(gw)) == 4)
    assert [(line[0], dict(kv.split("=") for kv in line[1:])["saved"])
            for line in access_lines(gw)[-2:]] == [
        ("standard_mode", "0"), ("passthrough_method", "0")]


def test_status_page_is_not_counted_and_takes_only_get(emulator, gateway):
    gw = status_gateway(gateway)
    before = counters(gw)
    r = status(gw)
    assert r.decision is None
    assert request(gw, "POST", "/status", body=b"{}").status == 405
    head = request(gw, "HEAD", "/status")
    assert head.status == 200 and head.body == b""
    assert delta(before, counters(gw))["requests"] == {
        d: 0 for d in DECISIONS}


def test_each_format_is_counted_apart(emulator, gateway):
    """A Chat Completions and a Responses session's first request go to
    their own format's counters (the gateway's search, its loop's calls
    included); the top-level counters are the sums over the formats."""
    args = {"entities": [{"name": "Alice"}]}
    emulator.chat_script = chat_seeker("memory_create_entities", args,
                                       "memory create entities", "done")
    emulator.responses_script = responses_seeker(
        "memory_create_entities", args, "memory create entities", "done")
    gw = status_gateway(gateway)
    before = counters(gw)
    for uri, module in (("/v1/chat/completions", chat_fixtures),
                        ("/v1/responses", responses_fixtures)):
        body, headers = module.recorded_requests("opencode", False)[0]
        r = request(gw, "POST", uri, body, headers)
        assert r.status == 200 and r.decision == "deferred_gateway", r.body
    after = counters(gw)
    d = {a["format"]: delta(b, a)
         for b, a in zip(before["formats"], after["formats"])}
    for fmt in ("chat_completions", "responses"):
        assert nonzero(d[fmt]["requests"]) == {"deferred_gateway": 1}, fmt
        assert (d[fmt]["gateway_searches"], d[fmt]["loop_iterations"]) == \
            (1, 2), fmt
        assert d[fmt]["tools_deferred"] > 0, fmt
    assert nonzero(d["messages"]["requests"]) == {}
    assert d["messages"]["tools_seen"] == 0
    for key in ["requests", "passthroughs"] + SCALARS:
        if isinstance(after[key], dict):
            assert after[key] == {w: sum(f[key][w] for f in after["formats"])
                                  for w in after[key]}, key
        else:
            assert after[key] == sum(f[key] for f in after["formats"]), key


METRIC_NAME = re.compile(r"^[a-zA-Z_:][a-zA-Z0-9_:]*$")
SAMPLE = re.compile(r'^([a-zA-Z_:][a-zA-Z0-9_:]*)'
                    r'\{format="([a-z_]+)"'
                    r'(?:,([a-zA-Z_][a-zA-Z0-9_]*)="([^"\\\n]*)")?\}'
                    r' (\d+)$')
FORMATS = ["messages", "chat_completions", "responses"]


def parse_prometheus(text):
    """Checks the text exposition format 0.0.4 as the counters use it
    (every series labelled with its API format) and returns {(name,
    format, label value or None): value}."""
    assert text.endswith("\n")
    helped, typed, samples = set(), {}, {}
    for line in text[:-1].split("\n"):
        if line.startswith("# HELP "):
            name, _, help_ = line[7:].partition(" ")
            assert METRIC_NAME.match(name) and help_, line
            assert name not in helped, "second HELP: " + line
            helped.add(name)
        elif line.startswith("# TYPE "):
            name, _, kind = line[7:].partition(" ")
            assert kind == "counter", line
            assert name not in typed and name not in {
                n for n, _, _ in samples}, "TYPE after samples: " + line
            typed[name] = kind
        else:
            m = SAMPLE.match(line)
            assert m, "not a sample line: %r" % line
            name, fmt, label, value, n = m.groups()
            assert name in typed, "sample without TYPE: " + line
            assert name.endswith("_total") and fmt in FORMATS, line
            # one group a metric: no other metric's sample since its TYPE
            assert name == list(typed)[-1], "not grouped: " + line
            key = (name, fmt, value if label else None)
            assert key not in samples, "duplicate series: " + line
            samples[key] = int(n)
    assert helped == set(typed)
    return samples


@pytest.mark.parametrize("path,accept", [
    ("/status?format=prometheus", None),
    ("/status", "text/plain"),
    ("/status", "application/openmetrics-text;version=1.0.0,"
                "text/plain;version=0.0.4;q=0.5,*/*;q=0.1"),
])
def test_prometheus_text_parses_and_matches_json(emulator, gateway, path,
                                                 accept):
    gw = status_gateway(gateway)
    fx = load_fixture("ts-unset/002.json")
    assert request(gw, "POST", fx.url, fx.body, fx.headers).status == 200
    assert request(gw, "GET", "/v1/models").status == 404

    headers = [("Accept", accept)] if accept else []
    r = status(gw, path, headers)
    assert r.header("Content-Type") == PROMETHEUS_TYPE
    samples = parse_prometheus(r.body.decode())

    js = counters(gw)
    expected = {}
    for each in js["formats"]:
        fmt = each["format"]
        for family in ("requests", "passthroughs"):
            for word, n in each[family].items():
                expected[("toolsearch_%s_total" % family, fmt, word)] = n
        for name in SCALARS:
            expected[("toolsearch_%s_total" % name, fmt, None)] = each[name]
    assert samples == expected
    assert samples[("toolsearch_requests_total", "messages",
                    "deferred_hosted")] == 1
    assert samples[("toolsearch_tokens_saved_total", "messages", None)] == \
        101136 * 2 // 5
    assert samples[("toolsearch_tokens_saved_total", "responses", None)] == 0


DASHBOARD = os.path.join(ROOT, "docs", "examples", "grafana-dashboard.json")
PROMQL_KEYWORDS = {"by", "without", "on", "ignoring", "group_left",
                   "group_right", "bool", "offset", "and", "or", "unless"}


def promql_names(expr):
    """(metric names, label names) a PromQL expression uses."""
    labels = set()
    for matchers in re.findall(r"\{([^}]*)\}", expr):
        labels |= set(re.findall(r"([a-zA-Z_]\w*)\s*(?:=~|!~|!=|=)",
                                 matchers))
    for grouping in re.findall(r"\b(?:by|without)\s*\(([^)]*)\)", expr):
        labels |= {n.strip() for n in grouping.split(",") if n.strip()}
    rest = re.sub(r"\{[^}]*\}|\[[^\]]*\]|\b(?:by|without)\s*\([^)]*\)",
                  " ", expr)
    metrics = {m for m in re.findall(
        r"(?<![\w$])([a-zA-Z_:][a-zA-Z0-9_:]*)\b(?!\s*\()", rest)
        if m not in PROMQL_KEYWORDS}
    return metrics, labels


def dashboard_names():
    """(metric names, label names) the dashboard's queries use."""
    with open(DASHBOARD) as f:
        dash = json.load(f)
    metrics, labels = set(), set()
    for panel in dash["panels"]:
        for target in panel["targets"]:
            m, lb = promql_names(target["expr"])
            metrics |= m
            labels |= lb
    for var in dash["templating"]["list"]:
        if var["type"] == "query":
            m = re.fullmatch(r"label_values\((\w+),\s*(\w+)\)",
                             var["query"]["query"])
            metrics.add(m.group(1))
            labels.add(m.group(2))
    return metrics, labels


def test_dashboard_queries_only_exported_metrics(emulator, gateway):
    gw = status_gateway(gateway)
    fx = load_fixture("ts-unset/002.json")
    assert request(gw, "POST", fx.url, fx.body, fx.headers).status == 200
    text = status(gw, "/status?format=prometheus").body.decode()
    exported = {name for name, _, _ in parse_prometheus(text)}
    # the labels of the series, and those every Prometheus scrape adds
    exported_labels = set(re.findall(r"[{,](\w+)=", text)) | {"instance",
                                                               "job"}

    metrics, labels = dashboard_names()
    assert metrics - exported == set()
    assert labels - exported_labels == set()
    # what the dashboard is for: each of these has a query
    for name in ("requests", "passthroughs", "tokens_saved",
                 "hosted_searches", "gateway_searches", "loop_iterations"):
        assert "toolsearch_%s_total" % name in metrics, name
    assert {"decision", "reason", "format"} <= labels


@pytest.mark.parametrize("path,accept", [
    ("/status", "application/json"),
    ("/status", None),
    ("/status?format=json", "text/plain"),
])
def test_json_by_default_and_on_request(emulator, gateway, path, accept):
    gw = status_gateway(gateway)
    r = status(gw, path, [("Accept", accept)] if accept else [])
    assert r.header("Content-Type") == "application/json"
    body = json.loads(r.body)
    assert set(body) == {"zone", "requests", "passthroughs", "formats"} | \
        set(SCALARS)
    assert [each["format"] for each in body["formats"]] == FORMATS
    for each in body["formats"]:
        assert set(each) == {"format", "requests", "passthroughs"} | \
            set(SCALARS)


def wait_for(predicate, timeout=20.0):
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if predicate():
            return True
        time.sleep(0.1)
    return False


def workers(master):
    """pids of the processes whose parent is master"""
    pids = set()
    for entry in os.listdir("/proc"):
        try:
            with open("/proc/%s/stat" % entry) as f:
                fields = f.read().rsplit(")", 1)[1].split()
        except (OSError, IndexError):
            continue
        if int(fields[1]) == master:
            pids.add(int(entry))
    return pids


@pytest.mark.skipif(VALGRIND, reason="under valgrind nginx runs without a "
                    "master process, and only a master reloads cleanly")
def test_zone_survives_reload(emulator, gateway):
    gw = status_gateway(gateway)
    fx = load_fixture("ts-unset/002.json")
    for _ in range(2):
        assert request(gw, "POST", fx.url, fx.body, fx.headers).status == 200
    before = counters(gw)
    assert before["requests"]["deferred_hosted"] == 2
    # the worker read the tools once and recalled them the second time
    assert before["tools_recalled"] == 149

    # a visible change tells when the new configuration answers
    with open(gw.conf) as f:
        conf = f.read()
    with open(gw.conf, "w") as f:
        f.write(conf.replace("location = /status {",
                             "location = /status { add_header X-Gen 2;"))
    old = workers(gw.proc.pid)
    gw.proc.send_signal(signal.SIGHUP)
    assert wait_for(lambda: status(gw).header("X-Gen") == "2"), \
        gw.error_log()
    # until the old worker exits it may still accept a connection
    assert wait_for(lambda: not old & workers(gw.proc.pid)), gw.error_log()

    assert counters(gw) == before
    assert request(gw, "POST", fx.url, fx.body, fx.headers).status == 200
    after = counters(gw)
    assert after["requests"]["deferred_hosted"] == 3
    assert after["tools_seen"] == 3 * 149
    # the new worker remembered nothing: it read them
    assert after["tools_recalled"] == 149


def test_one_info_line_per_decided_request(emulator, gateway):
    gw = status_gateway(gateway)
    fx = load_fixture("ts-unset/002.json")
    assert request(gw, "POST", fx.url, fx.body, fx.headers).status == 200
    assert request(gw, "GET", "/v1/models").status == 404
    status(gw)
    lines = [line for line in gw.error_log().splitlines()
             if "toolsearch: decision=" in line]
    assert len(lines) == 2
    assert all("[info]" in line for line in lines)
    assert ("toolsearch: decision=deferred_hosted changed=1 in=%d "
            "out=" % len(fx.body)) in lines[0]
    assert " tools=149 deferred=139 chars=101136 " in lines[0]
    assert "decision=passthrough_method changed=0 in=0 out=0" in lines[1]
    # counts only: no prompt text, tool schema or header value
    log = gw.error_log()
    for secret in [b"x-api-key", b"Authorization", b'"content"',
                   b"input_schema", b"mcp__"]:
        assert secret.decode() not in log


def test_without_zone_nothing_is_counted_and_nginx_runs(emulator, gateway):
    gw = gateway(server="toolsearch on;")
    fx = load_fixture("ts-unset/002.json")
    r = request(gw, "POST", fx.url, fx.body, fx.headers)
    assert r.status == 200
    assert "toolsearch: decision=" in gw.error_log()
