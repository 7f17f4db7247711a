"""Every request recorded from real agent clients (t/fixtures/clients/)
through a real nginx on both profiles, with no directive but the upstream
profile: the emulator (strict for anthropic, the compatible proxy for
compatible) accepts each, and a client that sends its tools in full has
its first request with tools leave with at most half the model-visible
tool-definition bytes it sent."""

import glob
import json
import os

import pytest

from conftest import CLIENTS, client_requests as recorded, load_fixture, \
    request
from emulator import Emulator
from gateway import Gateway

EMULATOR = {"anthropic": "anthropic", "compatible": "proxy"}
LOG = ("log_format clients '$toolsearch_decision "
       "rule=$toolsearch_defer_rule deferred=$toolsearch_tools_deferred';")
# the clients that run their own search: their tools arrive deferred
OWN_SEARCH = {"claude-code", "claude-agent-sdk", "qwen-code"}
# how the others name MCP tools ($toolsearch_defer_rule)
RULE = {"cline": "server_prefix", "qwen-code-nosearch": "mcp_prefix"}


def client_names():
    return sorted(os.path.basename(os.path.dirname(p)) for p in
                  glob.glob(os.path.join(CLIENTS, "*", "001.json")))


def visible_bytes(tools):
    """Compact JSON bytes of the definitions the model sees: every tool
    without defer_loading:true, the search tool included."""
    seen = [t for t in tools if t.get("defer_loading") is not True]
    return len(json.dumps(seen, separators=(",", ":"),
                          ensure_ascii=False).encode())


def run(client, profile, tmp_path):
    emu = Emulator(EMULATOR[profile]).start()
    gw = Gateway(emu.port, http=LOG, server=(
        "toolsearch on; toolsearch_upstream %s; "
        "access_log %s/clients.log clients;" % (profile, tmp_path)))
    try:
        gw.start()
        for path, body, headers in recorded(client):
            target = dict(headers).pop("path")
            sent = [(k, v) for k, v in headers if k != "path"]
            r = request(gw, "POST", target, body, sent)
            assert r.status == 200, (path, r.body[:500])
        gw.stop()
        with open(os.path.join(tmp_path, "clients.log")) as f:
            log = f.read().splitlines()
    finally:
        gw.remove()
        emu.stop()
    return emu.requests, log


def client_managed(bodies, got, log, profile):
    """A client running its own search: nothing deferred by the gateway
    (qwen-code's memory agent's six tools of its own stay loaded), its
    headers go on as sent to Anthropic; a compatible upstream gets no
    deferred tool made visible that history never found (Claude Code's
    DeferredToolPlaceholder)."""
    assert log[0].startswith("client_managed"), log
    assert not any(line.startswith("deferred_") for line in log), log
    for (path, body, headers), rec in zip(bodies, got):
        sent = json.loads(body).get("tools") or []
        names = [t.get("name") for t in rec.json().get("tools") or []]
        if profile == "anthropic":
            assert rec.header_all("anthropic-beta") == [
                v for k, v in headers if k == "anthropic-beta"], path
            assert len(names) == len(sent)
        else:
            assert "DeferredToolPlaceholder" not in names, path


@pytest.mark.parametrize("profile", sorted(EMULATOR))
@pytest.mark.parametrize("client", client_names())
def test_recorded_client(client, profile, tmp_path):
    bodies = recorded(client)
    got, log = run(client, profile, tmp_path)
    assert len(got) == len(bodies) == len(log)
    assert [(r.status, r.error) for r in got] == [(200, None)] * len(got)

    first = next((i for i, (_, b, _) in enumerate(bodies)
                  if json.loads(b).get("tools")), None)
    if client in OWN_SEARCH:
        client_managed(bodies, got, log, profile)
        return
    if first is None:
        return
    before = visible_bytes(json.loads(bodies[first][1])["tools"])
    after = visible_bytes(got[first].json()["tools"])
    assert after <= before / 2, (client, profile, before, after,
                                 log[first])
    assert log[first].startswith("deferred_"), log[first]
    assert " rule=%s " % RULE.get(client, "compound_name") in log[first]


@pytest.mark.parametrize("name", ["ts-true/002.json", "ts-true/003.json",
                                  "ts-true-haiku45/002.json",
                                  "ts-true-nonstream/002.json"])
def test_client_managed_betas_as_sent(name, emulator, gateway):
    """Claude Code 2.1.197 with its own search sends advanced-tool-use
    before its first deferred tool: Anthropic gets it as sent."""
    fx = load_fixture(name)
    gw = gateway(server="toolsearch on; toolsearch_upstream anthropic;")
    r = request(gw, "POST", fx.url, fx.body, fx.headers)
    assert r.status == 200, r.body
    assert r.decision == "client_managed"
    assert emulator.last().header_all("anthropic-beta") == [
        v for k, v in fx.headers if k.lower() == "anthropic-beta"]
