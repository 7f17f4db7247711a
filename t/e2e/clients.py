"""Real clients through the real gateway, for make e2e.

An `Upstream` is the emulator (the project's strict Messages API stand-in,
playing a model that needs one MCP tool) behind a real nginx with the
module.  `run_claude` runs the Claude Code CLI non-interactively against it
with three MCP servers from npm over stdio; `run_agent` runs t/e2e/agent.cjs,
an agent loop on the Anthropic TypeScript SDK, or the SDK's own tool
runner on a message thread.  `measure` says what each
upstream request carried in tool definitions.
"""

import json
import os
import signal
import subprocess
import sys
import tempfile

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(os.path.dirname(HERE))
sys.path.insert(0, os.path.dirname(HERE))

from emulator import Emulator, seeker                     # noqa: E402
from gateway import Gateway                               # noqa: E402
from measure import compact_size, seen_bytes, visible_tools  # noqa: E402

E2E = os.path.join(ROOT, "build", "e2e")
MODULES = os.path.join(E2E, "node_modules")
CLAUDE = os.environ.get("TOOLSEARCH_E2E_CLAUDE") or \
    os.path.join(MODULES, ".bin", "claude")
MEASUREMENTS = os.path.join(E2E, "measurements.json")
CATALOGUE = os.path.join(ROOT, "t", "fixtures", "claude-code", "ts-unset",
                         "002.json")

PROMPT = "Remember that Alice is a person who likes tea."
TARGET = "mcp__memory__create_entities"
TARGET_INPUT = {"entities": [{"name": "Alice", "entityType": "person",
                              "observations": ["likes tea"]}]}
QUERY = "memory create entities"
FINAL = "Alice is stored in the knowledge graph."

# gateway configurations (server level), by profile
SERVERS = {
    "anthropic": "toolsearch on; toolsearch_upstream anthropic;",
    "compatible": "toolsearch on; toolsearch_upstream compatible;",
    "off": "toolsearch off;",
}
# the emulator profile playing each upstream
EMULATOR_PROFILE = {"anthropic": "anthropic", "compatible": "proxy"}

# the variables Claude Code needs to run offline, non-interactively
CLAUDE_ENV = {
    "ANTHROPIC_API_KEY": "sk-e2e",
    "IS_SANDBOX": "1",                        # skip-permissions as root
    "MCP_CONNECTION_NONBLOCKING": "false",    # every MCP tool in request 1
    "MCP_SERVER_CONNECTION_BATCH_SIZE": "10",
    "CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC": "1",
    "DISABLE_TELEMETRY": "1",
    "DISABLE_AUTOUPDATER": "1",
    "DISABLE_ERROR_REPORTING": "1",
}


def node_script(package, path):
    return os.path.join(MODULES, package, path)


class Upstream:
    """The emulator behind a started gateway; stop() ends both."""

    def __init__(self, profile, server, empty_streams=False):
        self.emulator = Emulator(EMULATOR_PROFILE[profile]).start()
        self.emulator.script = seeker(TARGET, TARGET_INPUT, QUERY, FINAL)
        self.emulator.empty_streams = empty_streams
        self.gateway = None
        try:
            self.gateway = Gateway(self.emulator.port, server=server).start()
        except Exception:
            self.emulator.stop()
            raise
        self.url = "http://127.0.0.1:%d" % self.gateway.port

    def finish(self):
        """Stops both; returns the Messages API requests the emulator
        received and the access-log fields (decision=, in=, out=, …) of
        each POST the gateway handled."""
        try:
            self.gateway.stop()
            log = [dict((kv.split("=", 1) for kv in line.split()
                         if "=" in kv), uri=line.split()[1])
                   for line in self.gateway.access_log()
                   if line.startswith("POST ")]
        finally:
            try:
                self.gateway.remove()
            finally:
                self.emulator.stop()
        posts = [r for r in self.emulator.requests if r.method == "POST"]
        return posts, log


def session(profile, client, server=None, empty_streams=False):
    """client(url) through a gateway (SERVERS[profile] unless `server`) in
    front of the emulator: (its Run, the upstream requests, the log)."""
    up = Upstream(profile, server or SERVERS[profile], empty_streams)
    try:
        result = client(up.url)
    finally:
        posts, log = up.finish()
    return result, posts, log


class Run:
    """One client run: exit code, its output, the memory server's store."""

    def __init__(self, rc, stdout, stderr, memory_file):
        self.rc = rc
        self.stdout = stdout
        self.stderr = stderr
        try:
            with open(memory_file) as f:
                self.memory = [json.loads(line) for line in f if line.strip()]
        except (OSError, ValueError):
            self.memory = []
        try:
            self.output = json.loads(stdout.strip().splitlines()[-1])
        except (ValueError, IndexError):
            self.output = None

    def stored_alice(self):
        return any(e.get("type") == "entity" and e.get("name") == "Alice" and
                   e.get("entityType") == "person" and
                   "likes tea" in e.get("observations", [])
                   for e in self.memory)

    def answer(self):
        """The final answer: Claude Code's "result", the agent's "final"."""
        out = self.output or {}
        return out.get("result", out.get("final"))

    def describe(self):
        return "rc=%s\nstdout=%s\nstderr=%s" % (
            self.rc, self.stdout[-3000:], self.stderr[-3000:])


def run(cmd, env, cwd, memory_file, timeout=180):
    """Runs a client in its own process group and ends whatever of that
    group is left (MCP servers) when it returns or times out."""
    proc = subprocess.Popen(cmd, env=env, cwd=cwd, stdin=subprocess.DEVNULL,
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                            start_new_session=True)
    try:
        out, err = proc.communicate(timeout=timeout)
    except subprocess.TimeoutExpired:
        os.killpg(proc.pid, signal.SIGKILL)
        out, err = proc.communicate(timeout=10)
        err += b"\n(timed out after %ds)" % timeout
    finally:
        try:
            os.killpg(proc.pid, signal.SIGKILL)
        except ProcessLookupError:
            pass
    return Run(proc.returncode, out.decode(errors="replace"),
               err.decode(errors="replace"), memory_file)


def assert_completed(run, posts):
    """The client exited with the scripted answer, the memory server
    stored the entity, and the emulator accepted every request."""
    assert run.rc == 0, run.describe()
    assert run.answer() == FINAL, run.describe()
    assert run.stored_alice(), (run.memory, run.describe())
    refused = [(r.status, r.error) for r in posts if r.status != 200]
    assert not refused, refused
    assert posts


def workdir(base):
    d = tempfile.mkdtemp(prefix="client-", dir=base)
    os.makedirs(os.path.join(d, "home"))
    os.makedirs(os.path.join(d, "files"))
    return d


def run_claude(url, base, tool_search=None, model=None, env=None):
    """Claude Code -p with the memory, filesystem and everything servers.

    tool_search: the value of ENABLE_TOOL_SEARCH, None to leave it unset."""
    work = workdir(base)
    memory = os.path.join(work, "memory.jsonl")
    config = {"mcpServers": {
        "memory": {"command": "node", "args": [node_script(
            "@modelcontextprotocol/server-memory", "dist/index.js")],
            "env": {"MEMORY_FILE_PATH": memory}},
        "filesystem": {"command": "node", "args": [node_script(
            "@modelcontextprotocol/server-filesystem", "dist/index.js"),
            os.path.join(work, "files")]},
        "everything": {"command": "node", "args": [node_script(
            "@modelcontextprotocol/server-everything", "dist/index.js"),
            "stdio"]},
    }}
    config_file = os.path.join(work, "mcp.json")
    with open(config_file, "w") as f:
        json.dump(config, f)
    full_env = {"PATH": os.environ.get("PATH", "/usr/bin:/bin"),
                "HOME": os.path.join(work, "home"),
                "ANTHROPIC_BASE_URL": url}
    full_env.update(CLAUDE_ENV)
    if tool_search is not None:
        full_env["ENABLE_TOOL_SEARCH"] = tool_search
    full_env.update(env or {})
    cmd = [CLAUDE, "-p", PROMPT, "--mcp-config", config_file,
           "--strict-mcp-config", "--dangerously-skip-permissions",
           "--output-format", "json", "--max-turns", "8"]
    if model:
        cmd += ["--model", model]
    return run(cmd, full_env, work, memory)


def run_agent(url, base, model, stream, runner=False):
    """t/e2e/agent.cjs on the Anthropic SDK with ~150 tools: its own loop,
    or with runner the SDK's tool runner (on a message thread)."""
    work = workdir(base)
    memory = os.path.join(work, "memory.jsonl")
    config = {
        "baseURL": url, "model": model, "stream": stream, "prompt": PROMPT,
        "runner": runner,
        "maxTurns": 6, "catalogue": CATALOGUE,
        "memory": {"command": "node", "args": [node_script(
            "@modelcontextprotocol/server-memory", "dist/index.js")],
            "env": {"PATH": os.environ.get("PATH", "/usr/bin:/bin"),
                    "MEMORY_FILE_PATH": memory}},
    }
    config_file = os.path.join(work, "agent.json")
    with open(config_file, "w") as f:
        json.dump(config, f)
    env = {"PATH": os.environ.get("PATH", "/usr/bin:/bin"),
           "HOME": os.path.join(work, "home"), "NODE_PATH": MODULES}
    return run(["node", os.path.join(HERE, "agent.cjs"), config_file], env,
               work, memory)


def measure(rec):
    """What one upstream request carried: body bytes, tools[] bytes (compact
    JSON) and the bytes of the definitions the model sees (t/measure.py):
    loaded tools, deferred ones only once a tool_reference in the history
    loaded them, and found definitions given as a search result's text."""
    body = rec.json()
    tools = body.get("tools", [])
    seen = visible_tools(body)
    return {"status": rec.status, "stream": body.get("stream") is True,
            "body": len(rec.body), "tools": len(tools),
            "deferred": len(tools) - len(seen),
            "tools_bytes": compact_size(tools),
            "context_bytes": seen_bytes(body)}
