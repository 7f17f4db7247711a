"""Agent clients other than Claude Code, run headless against a URL.

Each client gets its own scratch HOME, the same five MCP servers from npm
over stdio (memory, filesystem, everything, sequential-thinking, github),
a fake key, and the prompt PROMPT.  `run_client(name, url, modules, base)`
configures and runs one; it returns a clients.Run-like result whose
memory store tells whether the memory server's tool really ran.

The clients are npm packages installed in `modules` (a node_modules
folder); the CLIs want Node 22, which `node` must be on PATH.
"""

import json
import os
import signal
import subprocess
import tempfile

from clients import run

HERE = os.path.dirname(os.path.abspath(__file__))

PROMPT = "Create a memory entity for Alice, a person who likes tea."
# the next user turn of a multi-turn session
MORE = "Thank you. Make sure Alice is stored."
MODEL = "claude-sonnet-4-5"
CHAT_MODEL = "gpt-4.1"
# a name continue sends to the Responses API (gpt-5*), of a model without
# OpenAI's hosted tool search (gpt-5.4 and later have it)
RESPONSES_MODEL = "gpt-5.1"
KEY = "sk-ant-test"

# the MCP servers: name -> (package, extra arguments)
SERVERS = (
    ("memory", "@modelcontextprotocol/server-memory", ()),
    ("filesystem", "@modelcontextprotocol/server-filesystem", ("{files}",)),
    ("everything", "@modelcontextprotocol/server-everything", ("stdio",)),
    ("sequential-thinking",
     "@modelcontextprotocol/server-sequential-thinking", ()),
    ("github", "@modelcontextprotocol/server-github", ()),
)

# what every client's environment lacks to stay offline and quiet
QUIET = {
    "DISABLE_TELEMETRY": "1", "DISABLE_AUTOUPDATER": "1",
    "DISABLE_ERROR_REPORTING": "1", "DO_NOT_TRACK": "1",
    "CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC": "1",
    "OPENCODE_DISABLE_MODELS_FETCH": "1", "OPENCODE_DISABLE_AUTOUPDATE": "1",
    "KILO_DISABLE_MODELS_FETCH": "1", "KILO_DISABLE_AUTOUPDATE": "1",
    "KILO_DISABLE_LSP_DOWNLOAD": "1", "KILO_DISABLE_CLAUDE_CODE": "1",
    "OPENCODE_DISABLE_LSP_DOWNLOAD": "1", "NO_UPDATE_NOTIFIER": "1",
    "CI": "1", "TERM": "dumb",
}


class Work:
    """A client's scratch folder: HOME, the filesystem server's folder,
    the memory store, and the servers' command lines."""

    def __init__(self, base, modules):
        self.dir = tempfile.mkdtemp(prefix="agent-", dir=base)
        self.home = os.path.join(self.dir, "home")
        self.files = os.path.join(self.dir, "files")
        os.makedirs(self.home)
        os.makedirs(self.files)
        self.memory = os.path.join(self.dir, "memory.jsonl")
        self.servers = {}
        for name, package, extra in SERVERS:
            args = [os.path.join(modules, package, "dist", "index.js")]
            args += [a.format(files=self.files) for a in extra]
            env = {"PATH": os.environ.get("PATH", "/usr/bin:/bin")}
            if name == "memory":
                env["MEMORY_FILE_PATH"] = self.memory
            self.servers[name] = {"command": "node", "args": args,
                                  "env": env}

    def write(self, rel, data):
        path = os.path.join(self.home, rel)
        os.makedirs(os.path.dirname(path), exist_ok=True)
        with open(path, "w") as f:
            if isinstance(data, str):
                f.write(data)
            else:
                json.dump(data, f, indent=1)
        return path


def opencode_config(work, url):
    mcp = {name: {"type": "local", "command": [s["command"]] + s["args"],
                  "environment": s["env"]}
           for name, s in work.servers.items()}
    return {"$schema": "https://opencode.ai/config.json",
            "provider": {"anthropic": {"options": {
                "baseURL": url + "/v1", "apiKey": KEY}}},
            "small_model": "anthropic/claude-haiku-4-5",
            "autoupdate": False, "share": "disabled", "mcp": mcp}


def setup_opencode(work, url, modules):
    work.write(".config/opencode/opencode.json", opencode_config(work, url))
    return [os.path.join(modules, ".bin", "opencode"), "run", "--auto",
            "-m", "anthropic/" + MODEL, PROMPT], {}


def opencode_chat_config(work, url):
    """opencode on Chat Completions: a provider of its own on the AI SDK's
    openai-compatible package (bundled in opencode), titles included."""
    config = opencode_config(work, url)
    config["provider"] = {"gateway": {
        "npm": "@ai-sdk/openai-compatible", "name": "Gateway",
        "options": {"baseURL": url + "/v1", "apiKey": KEY},
        "models": {CHAT_MODEL: {"name": CHAT_MODEL, "tool_call": True}}}}
    config["small_model"] = "gateway/" + CHAT_MODEL
    return config


def setup_opencode_chat(work, url, modules):
    work.write(".config/opencode/opencode.json",
               opencode_chat_config(work, url))
    return [os.path.join(modules, ".bin", "opencode"), "run", "--auto",
            "-m", "gateway/" + CHAT_MODEL, PROMPT], {}


def opencode_responses_config(work, url):
    """opencode or kilo on the Responses API: their own openai provider
    (the AI SDK's @ai-sdk/openai, store false) with a base URL."""
    config = opencode_config(work, url)
    config["provider"] = {"openai": {"options": {
        "baseURL": url + "/v1", "apiKey": KEY}}}
    config["small_model"] = "openai/" + CHAT_MODEL
    return config


def setup_opencode_responses(work, url, modules):
    work.write(".config/opencode/opencode.json",
               opencode_responses_config(work, url))
    return [os.path.join(modules, ".bin", "opencode"), "run", "--auto",
            "-m", "openai/" + CHAT_MODEL, PROMPT], {}


# a model Codex does not know: it sends every MCP tool, in namespaces
CODEX_MODEL = "emu-model"
# one it knows: its own client-run tool_search, no MCP tool sent
CODEX_KNOWN_MODEL = "gpt-5.5"


def toml_value(v):
    """A TOML value of a string, list of strings, bool or table of
    strings (JSON's string escapes are TOML's)."""
    if isinstance(v, bool):
        return "true" if v else "false"
    if isinstance(v, str):
        return json.dumps(v)
    if isinstance(v, dict):
        return "{%s}" % ", ".join("%s = %s" % (json.dumps(k), toml_value(x))
                                  for k, x in v.items())
    return "[%s]" % ", ".join(toml_value(x) for x in v)


def codex_bin(modules):
    """Codex's command: its own install beside the other clients'
    (scripts/e2e-agents.sh puts it in DIR/codex)."""
    return os.path.join(os.path.dirname(modules), "codex", "node_modules",
                        ".bin", "codex")


def codex_setup(model):
    """Codex CLI on the Responses API (its only one): a provider of its
    own pointed at url, the five servers required so that its first
    request waits for their tools."""
    def setup(work, url, modules):
        lines = ['model_provider = "gateway"', 'approval_policy = "never"',
                 'sandbox_mode = "danger-full-access"',
                 "[model_providers.gateway]", 'name = "gateway"',
                 "base_url = %s" % json.dumps(url + "/v1"),
                 'env_key = "GATEWAY_API_KEY"', 'wire_api = "responses"']
        for name, server in work.servers.items():
            lines += ["[mcp_servers.%s]" % json.dumps(name),
                      "command = %s" % toml_value(server["command"]),
                      "args = %s" % toml_value(server["args"]),
                      "env = %s" % toml_value(server["env"]),
                      "required = true", "startup_timeout_sec = 120"]
        work.write(".codex/config.toml", "\n".join(lines) + "\n")
        return [codex_bin(modules), "exec",
                "--skip-git-repo-check",
                "--dangerously-bypass-approvals-and-sandbox", "-m", model,
                PROMPT], {"CODEX_HOME": os.path.join(work.home, ".codex"),
                          "GATEWAY_API_KEY": KEY}
    return setup


def kilo(work, modules, config, model):
    """kilo (an opencode fork) reads the same configuration from
    KILO_CONFIG."""
    path = work.write(".config/kilo/kilo.json", config)
    return [os.path.join(modules, ".bin", "kilo"), "run", "--auto",
            "-m", model, PROMPT], {"KILO_CONFIG": path}


def setup_kilo(work, url, modules):
    return kilo(work, modules, opencode_config(work, url),
                "anthropic/" + MODEL)


def setup_kilo_chat(work, url, modules):
    return kilo(work, modules, opencode_chat_config(work, url),
                "gateway/" + CHAT_MODEL)


def setup_kilo_responses(work, url, modules):
    return kilo(work, modules, opencode_responses_config(work, url),
                "openai/" + CHAT_MODEL)


def setup_cline(work, url, modules):
    cline = os.path.join(modules, ".bin", "cline")
    # its own command writes the provider; -b is refused for anthropic
    subprocess.run([cline, "auth", "-p", "anthropic", "-k", KEY, "-m",
                    MODEL], env={"PATH": os.environ.get("PATH", ""),
                                 "HOME": work.home},
                   stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL,
                   check=True, timeout=120)
    data = os.path.join(work.home, ".cline", "data", "settings")
    with open(os.path.join(data, "providers.json")) as f:
        providers = json.load(f)
    providers["providers"]["anthropic"]["settings"]["baseUrl"] = url + "/v1"
    work.write(".cline/data/settings/providers.json", providers)
    cline_servers(work)
    return [cline, "--json", "-t", "150", PROMPT], {}


def setup_cline_chat(work, url, modules, provider="openai"):
    """cline on Chat Completions: its openai (compatible) provider, set
    with a base URL by its own auth command."""
    cline = os.path.join(modules, ".bin", "cline")
    subprocess.run([cline, "auth", "-p", provider, "-k", KEY, "-m",
                    CHAT_MODEL, "-b", url + "/v1"],
                   env={"PATH": os.environ.get("PATH", ""),
                        "HOME": work.home},
                   stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL,
                   check=True, timeout=120)
    cline_servers(work)
    return [cline, "--json", "-t", "150", PROMPT], {}


def setup_cline_responses(work, url, modules):
    """cline on the Responses API: its openai-native provider with a
    base URL."""
    return setup_cline_chat(work, url, modules, "openai-native")


def cline_servers(work):
    # a 60 s timeout: the servers start slowly on a small, busy machine
    work.write(".cline/data/settings/cline_mcp_settings.json", {
        "mcpServers": {name: dict(s, type="stdio", timeout=60)
                       for name, s in work.servers.items()}})


def setup_continue(work, url, modules, provider="anthropic", model=MODEL):
    servers = "".join(
        "  - name: %s\n    command: %s\n    args: %s\n    env: %s\n"
        % (name, s["command"], json.dumps(s["args"]), json.dumps(s["env"]))
        for name, s in work.servers.items())
    path = work.write(".continue/config.yaml", (
        "name: e2e\nversion: 1.0.0\nschema: v1\nmodels:\n"
        "  - name: main\n    provider: %s\n    model: %s\n"
        "    apiKey: %s\n    apiBase: %s/v1/\n    roles: [chat, edit]\n"
        "mcpServers:\n%s") % (provider, model, KEY, url, servers))
    return [os.path.join(modules, ".bin", "cn"), "--config", path, "--auto",
            "-p", PROMPT], {}


def setup_continue_chat(work, url, modules):
    """continue's openai provider: Chat Completions for a model name that
    is not gpt-5* or o* (those go to the Responses API)."""
    return setup_continue(work, url, modules, "openai", CHAT_MODEL)


def setup_continue_responses(work, url, modules):
    """continue's openai provider with a gpt-5* model name: the
    Responses API."""
    return setup_continue(work, url, modules, "openai", RESPONSES_MODEL)


def setup_qwen(work, url, modules, search=True, auth="anthropic"):
    settings = {"mcpServers": work.servers,
                "security": {"auth": {"selectedType": auth}},
                "privacy": {"usageStatisticsEnabled": False},
                "general": {"disableAutoUpdate": True}}
    if not search:
        settings["tools"] = {"toolSearch": {"enabled": False}}
    work.write(".qwen/settings.json", settings)
    env = {"ANTHROPIC_BASE_URL": url, "ANTHROPIC_API_KEY": KEY}
    if auth == "openai":
        env = {"OPENAI_BASE_URL": url + "/v1", "OPENAI_API_KEY": KEY}
    return [os.path.join(modules, ".bin", "qwen"), "--auth-type", auth,
            "-m", CHAT_MODEL if auth == "openai" else MODEL, "--yolo",
            PROMPT], env


def setup_qwen_nosearch(work, url, modules):
    return setup_qwen(work, url, modules, search=False)


def setup_qwen_chat(work, url, modules):
    """qwen-code on Chat Completions (its OpenAI auth), its own tool
    search off so that it sends every tool."""
    return setup_qwen(work, url, modules, search=False, auth="openai")


def sdks_modules(modules):
    """The OpenAI SDK agents' packages (t/e2e/openai-sdks), installed
    beside the agent clients' (build/e2e-sdks)."""
    return os.path.join(os.path.dirname(os.path.dirname(modules)),
                        "e2e-sdks", "node_modules")


def sdk_setup(script, stream=False, api=None, sdks=False,
              conversation=False):
    """A script of t/e2e/sdk; api "chat": its Chat Completions provider,
    "responses": its Responses one; sdks: a two-turn session with the
    packages of t/e2e/openai-sdks; conversation: in a conversation of the
    Conversations API."""
    def setup(work, url, modules):
        path = os.path.join(work.dir, "config.json")
        with open(path, "w") as f:
            json.dump({"url": url, "model": CHAT_MODEL if api else MODEL,
                       "prompt": PROMPT, "more": [MORE] if sdks else [],
                       "stream": stream, "api": api,
                       "conversation": conversation,
                       "servers": work.servers}, f)
        # ES modules resolve packages from the script's folder upwards
        link = os.path.join(work.dir, "node_modules")
        os.symlink(sdks_modules(modules) if sdks else modules, link)
        copy = os.path.join(work.dir, script)
        with open(os.path.join(HERE, "sdk", script)) as src, \
                open(copy, "w") as dst:
            dst.write(src.read())
        return ["node", copy, path], {"IS_SANDBOX": "1"}
    return setup


def setup_claude_code(work, url, modules):
    path = os.path.join(work.dir, "mcp.json")
    with open(path, "w") as f:
        json.dump({"mcpServers": work.servers}, f)
    return [os.path.join(modules, ".bin", "claude"), "-p", PROMPT,
            "--mcp-config", path, "--strict-mcp-config",
            "--dangerously-skip-permissions", "--output-format", "json",
            "--max-turns", "8", "--model", MODEL], {
        "ANTHROPIC_BASE_URL": url, "ANTHROPIC_API_KEY": KEY,
        "IS_SANDBOX": "1", "MCP_CONNECTION_NONBLOCKING": "false"}


LANGCHAIN_OPENAI = ("langchain", "@langchain/openai",
                    "@langchain/mcp-adapters")
MASTRA_OPENAI = ("@mastra/core", "@mastra/mcp", "@ai-sdk/openai")

# client -> (how to configure and start it, the npm packages it is)
CLIENTS = {
    "opencode": (setup_opencode, ("opencode-ai",)),
    "opencode-chat": (setup_opencode_chat, ("opencode-ai",)),
    "cline-chat": (setup_cline_chat, ("cline",)),
    "continue-chat": (setup_continue_chat, ("@continuedev/cli",)),
    "cline-responses": (setup_cline_responses, ("cline",)),
    "continue-responses": (setup_continue_responses, ("@continuedev/cli",)),
    "qwen-code-chat": (setup_qwen_chat, ("@qwen-code/qwen-code",)),
    "opencode-responses": (setup_opencode_responses, ("opencode-ai",)),
    "codex-responses": (codex_setup(CODEX_MODEL), ("@openai/codex",)),
    "codex-known-responses": (codex_setup(CODEX_KNOWN_MODEL),
                              ("@openai/codex",)),
    "kilo": (setup_kilo, ("@kilocode/cli",)),
    "kilo-chat": (setup_kilo_chat, ("@kilocode/cli",)),
    "kilo-responses": (setup_kilo_responses, ("@kilocode/cli",)),
    "cline": (setup_cline, ("cline",)),
    "continue": (setup_continue, ("@continuedev/cli",)),
    "qwen-code": (setup_qwen, ("@qwen-code/qwen-code",)),
    "qwen-code-nosearch": (setup_qwen_nosearch, ("@qwen-code/qwen-code",)),
    "ai-sdk": (sdk_setup("aisdk.mjs"),
               ("ai", "@ai-sdk/anthropic", "@ai-sdk/mcp")),
    # the same SDK on Chat Completions (@ai-sdk/openai-compatible, as
    # opencode and kilo use it), streaming and not
    "ai-sdk-chat": (sdk_setup("aisdk.mjs", api="chat"),
                    ("ai", "@ai-sdk/openai-compatible", "@ai-sdk/mcp")),
    "ai-sdk-chat-stream": (sdk_setup("aisdk.mjs", True, "chat"),
                           ("ai", "@ai-sdk/openai-compatible",
                            "@ai-sdk/mcp")),
    # server-held state: the AI SDK's Responses model with its default
    # store (item_reference), the OpenAI Agents SDK on Responses
    # (previousResponseId) and on Chat Completions; two turns each
    "ai-sdk-responses": (sdk_setup("aisdk.mjs", False, "responses", True),
                         ("ai", "@ai-sdk/openai", "@ai-sdk/mcp")),
    "ai-sdk-responses-stream": (sdk_setup("aisdk.mjs", True, "responses",
                                          True),
                                ("ai", "@ai-sdk/openai", "@ai-sdk/mcp")),
    "openai-agents-responses": (sdk_setup("openai-agents.mjs", False,
                                          "responses", True),
                                ("@openai/agents",)),
    "openai-agents-responses-stream": (sdk_setup("openai-agents.mjs", True,
                                                 "responses", True),
                                       ("@openai/agents",)),
    # ... and in a conversation (conversationId)
    "openai-agents-conversation": (sdk_setup("openai-agents.mjs", False,
                                             "responses", True, True),
                                   ("@openai/agents",)),
    "openai-agents-conversation-stream": (
        sdk_setup("openai-agents.mjs", True, "responses", True, True),
        ("@openai/agents",)),
    "openai-agents-chat": (sdk_setup("openai-agents.mjs", False, "chat",
                                     True), ("@openai/agents",)),
    "openai-agents-chat-stream": (sdk_setup("openai-agents.mjs", True,
                                            "chat", True),
                                  ("@openai/agents",)),
    "langchain": (sdk_setup("langchain.mjs"),
                  ("langchain", "@langchain/anthropic",
                   "@langchain/mcp-adapters")),
    "mastra": (sdk_setup("mastra.mjs"),
               ("@mastra/core", "@mastra/mcp", "@ai-sdk/anthropic")),
    # LangChain.js (@langchain/openai's ChatOpenAI) and Mastra (on
    # @ai-sdk/openai) on both OpenAI formats, streaming and not
    "langchain-chat": (sdk_setup("langchain.mjs", api="chat"),
                       LANGCHAIN_OPENAI),
    "langchain-chat-stream": (sdk_setup("langchain.mjs", True, "chat"),
                              LANGCHAIN_OPENAI),
    "langchain-responses": (sdk_setup("langchain.mjs", api="responses"),
                            LANGCHAIN_OPENAI),
    "langchain-responses-stream": (
        sdk_setup("langchain.mjs", True, "responses"), LANGCHAIN_OPENAI),
    "mastra-chat": (sdk_setup("mastra.mjs", api="chat"), MASTRA_OPENAI),
    "mastra-chat-stream": (sdk_setup("mastra.mjs", True, "chat"),
                           MASTRA_OPENAI),
    "mastra-responses": (sdk_setup("mastra.mjs", api="responses"),
                         MASTRA_OPENAI),
    "mastra-responses-stream": (sdk_setup("mastra.mjs", True, "responses"),
                                MASTRA_OPENAI),
    "claude-agent-sdk": (sdk_setup("agentsdk.mjs"),
                         ("@anthropic-ai/claude-agent-sdk",)),
    "claude-code": (setup_claude_code, ("@anthropic-ai/claude-code",)),
}


def end_strays(folder):
    """Ends, by PID, what a client left running in its scratch folder
    outside its process group (cline's hub daemon)."""
    for pid in os.listdir("/proc"):
        if not pid.isdigit():
            continue
        try:
            cwd = os.readlink("/proc/%s/cwd" % pid)
        except OSError:
            continue
        if cwd == folder or cwd.startswith(folder + os.sep):
            try:
                os.kill(int(pid), signal.SIGKILL)
            except ProcessLookupError:
                pass


def run_client(name, url, modules, base, timeout=240):
    """Configures and runs one client against url; ends its process group
    (MCP servers, daemons) whatever happens."""
    work = Work(base, modules)
    argv, extra = CLIENTS[name][0](work, url, modules)
    env = {"PATH": os.environ.get("PATH", "/usr/bin:/bin"),
           "HOME": work.home, "XDG_CONFIG_HOME":
           os.path.join(work.home, ".config"),
           "XDG_DATA_HOME": os.path.join(work.home, ".local", "share"),
           "XDG_CACHE_HOME": os.path.join(work.home, ".cache"),
           "XDG_STATE_HOME": os.path.join(work.home, ".local", "state")}
    env.update(QUIET)
    env.update(extra)
    result = run(argv, env, work.files, work.memory, timeout)
    end_strays(work.dir)
    result.work = work.dir
    return result


TARGET_SUFFIX = "create_entities"
TARGET_INPUT = {"entities": [{"name": "Alice", "entityType": "person",
                              "observations": ["likes tea"]}]}
QUERY = "memory create entities"
FINAL = "done"


def model(request):
    """The scripted model: calls the memory server's create_entities by
    the client's own name for it (searching first when it is deferred),
    then says FINAL.  A request without that tool (a title, a summary)
    gets a one-word answer."""
    from emulator import (Reply, seeker, text, tool_results, tool_use,
                          wrapped_tools)
    names = [t.get("name") for t in request.get("tools") or []
             if isinstance(t, dict) and isinstance(t.get("name"), str)]
    # with the gateway's call wrapper, what its searches found
    names += sorted(wrapped_tools(request))
    target = next((n for n in names if n.endswith(TARGET_SUFFIX)), None)
    searched = "toolu_emu_search" in tool_results(request.get("messages",
                                                             []))
    if target is None and "ToolSearch" in names and not searched:
        # Claude Code's own search: its deferred tools are only listed
        return Reply([text("Searching."), tool_use("ToolSearch", {
            "query": "select:mcp__memory__" + TARGET_SUFFIX,
            "max_results": 5}, "toolu_emu_search")])
    if target is None and "tool_search" in names and not searched:
        # the gateway's search tool: deferred tools are not sent at all
        return Reply([text("Searching."), tool_use("tool_search", {
            "query": QUERY, "max_results": 5}, "toolu_emu_search")])
    if target is None:
        return Reply([text("Alice")])
    return seeker(target, TARGET_INPUT, QUERY, FINAL)(request)


def chat_model(body):
    """The scripted model in Chat Completions: the same job, searching
    with the gateway's search function when the target is deferred."""
    from emulator import ChatReply, chat_seeker, chat_tools, chat_wrapped
    # with the gateway's call wrapper, what its searches found too
    target = next((n for n in chat_tools(body) + sorted(chat_wrapped(body))
                   if n.endswith(TARGET_SUFFIX)), None)
    if target is None and "tool_search" not in chat_tools(body):
        return ChatReply("Alice")
    return chat_seeker(target or TARGET_SUFFIX, TARGET_INPUT, QUERY,
                       FINAL)(body)


def responses_model(body, ctx):
    """The scripted model on the Responses API: the same job (the target
    a namespace's member, as Codex sends MCP tools, or a function)."""
    from emulator_responses import ResponsesReply, responses_seeker
    key = next((k for k in list(ctx.functions) + list(ctx.deferred)
                + [(None, n) for n in sorted(ctx.wrapped())]
                if k[1].endswith(TARGET_SUFFIX)), None)
    searched = any(it.get("type") == "tool_search_output"
                   for it in ctx.items)
    if key is None and ctx.client_search and not searched:
        # Codex's own search (execution client): it loads what it finds
        return ResponsesReply(client_search={"query": QUERY, "limit": 8})
    if key is None and (None, "tool_search") not in ctx.functions:
        return ResponsesReply("Alice")
    ns, target = key or (None, TARGET_SUFFIX)
    return responses_seeker(target, TARGET_INPUT, QUERY, FINAL,
                            namespace=ns)(body, ctx)
