#!/usr/bin/env python3
"""What a whole session costs under prompt caching, per client and
configuration, against no module in the same run.

Each session (t/cost_session.py: 20 turns, 0, 1, 2 or 4 discoveries, the
client emulated as it behaves) runs through a fresh nginx in front of the
emulator; every upstream request is billed with t/billing.py.  Writes the
"cost" section of docs/benchmarks.md.  `--quick` runs 4 discoveries
only.  It takes about a minute.
"""

import os
import re
import sys

import report                                   # puts t/ on the path
import cost_session                             # noqa: E402

DISCOVERIES = (0, 1, 2, 4)
PROFILES = {"anthropic": "toolsearch on; toolsearch_upstream anthropic;",
            "compatible": "toolsearch on; toolsearch_upstream compatible;"}
KEEP = " toolsearch_search_blocks keep;"
TOOLS = " toolsearch_found_tools tools;"
NO_LAST = " toolsearch_cache_last_message off;"


def claude_code_conf():
    """the directives of docs/examples/claude-code.conf (Claude Code's own
    deferral list), which client profiles may apply by themselves"""
    path = os.path.join(report.ROOT, "docs", "examples", "claude-code.conf")
    text = re.sub(r"#[^\n]*", "", open(path).read())
    return " " + " ".join(text.split())


# (client, label, emulator profile, server directives); the first of each
# client is its baseline.  Claude Code's profile ($toolsearch_client
# claude_code: its own deferral list) applies by default; the rows
# "profiles off" show the module without it, and with its list from
# docs/examples/claude-code.conf.
def configurations():
    off = " toolsearch_client_profiles off;"
    cc = claude_code_conf()
    anthropic, compatible = PROFILES["anthropic"], PROFILES["compatible"]
    out = []
    for client in ("claude-code", "opencode", "cline"):
        out += [
            (client, "no module", "anthropic", "toolsearch off;"),
            (client, "default, anthropic (hosted)", "anthropic", anthropic),
        ]
        if client == "claude-code":
            out += [
                (client, "keep, anthropic", "anthropic", anthropic + KEEP),
                (client, "profiles off, anthropic (strip)", "anthropic",
                 anthropic + off),
                (client, "profiles off, keep, anthropic", "anthropic",
                 anthropic + off + KEEP),
                (client, "profiles off + claude-code.conf, anthropic",
                 "anthropic", anthropic + off + cc),
                ("claude-code-search", "Claude Code's own search, no module",
                 "anthropic", "toolsearch off;"),
            ]
        else:
            out.append((client, "keep, anthropic", "anthropic",
                        anthropic + KEEP))
        out += [
            (client, "gateway search, anthropic (references)", "anthropic",
             anthropic + " toolsearch_search gateway;"),
            (client, "default, compatible (gateway search, call wrapper)",
             "proxy", compatible),
            (client, "compatible, found tools in tools[]", "proxy",
             compatible + TOOLS),
        ]
        if client == "claude-code":
            out.append((client, "profiles off, compatible", "proxy",
                        compatible + off))
        if client == "cline":
            out += [
                (client, "compatible, no breakpoint of the gateway's",
                 "proxy", compatible + NO_LAST),
                (client, "compatible, found tools in tools[], no "
                 "breakpoint of the gateway's (before)", "proxy",
                 compatible + TOOLS + NO_LAST),
            ]
    return out


def kunits(x):
    return "%.1f K" % (x / 1000.0)


def measure(discoveries):
    """rows of one discovery count: (client, label, Result)"""
    rows = []
    for client, label, profile, server in configurations():
        r = cost_session.run(client, label, profile, server, discoveries)
        assert not r.rejected(), (client, label, r.rejected())
        rows.append((client.replace("-search", ""), label, r))
    return rows


def table(discoveries, rows):
    lines = ["### %d discover%s" % (discoveries,
                                    "y" if discoveries == 1 else "ies"), "",
             "| client | configuration | billed units | × no module "
             "| × Claude Code's own search | upstream calls | peak context "
             "| cache breaks: upstream request (turn): cause |",
             "|---|---|---|---|---|---|---|---|"]
    base = {}
    own = None
    for client, label, r in rows:
        base.setdefault(client, r.bill.units())
        if label.startswith("Claude Code's own"):
            own = r.bill.units()
    for client, label, r in rows:
        b = r.bill
        breaks = "; ".join("request %d (turn %d): %s"
                           % (x.n, r.turns[x.n - 1], x.cause)
                           for x in b.breaks())
        vs_own = "%.2f×" % (b.units() / own) \
            if own and client == "claude-code" else "–"
        lines.append("| %s | %s | %s | %.2f× | %s | %d | %s | %s |" % (
            client, label, kunits(b.units()), b.units() / base[client],
            vs_own, len(r.requests), kunits(b.peak()), breaks or "none"))
    return lines


def section(results):
    lines = report.heading("cost", "Session cost under prompt caching",
                           "bench/cost_bench.py")
    lines += [
        "Sessions of %d turns (t/cost_session.py) of recorded clients, "
        "each as it behaves: Claude Code 2.1.197 (149 tools, "
        "t/fixtures/claude-code/ts-unset; breakpoints on two system blocks "
        "and the last user block; carries search blocks back), the same "
        "with its own search on (ts-true), opencode 1.18.33 (77 tools; "
        "breakpoints on the system prompt and the last two messages, as "
        "its `applyCaching` in packages/opencode/src/provider/transform.ts "
        "places them; drops search blocks) and cline 3.0.65 (89 tools; one "
        "breakpoint, on the last text of its last user message, which tool "
        "results, AI SDK `tool` messages, never move: the task's first "
        "message, as `buildAiSdkRequestMessages` in cline's "
        "sdk/packages/llms/src/providers/ai-sdk.ts places it and its "
        "recorded requests show; drops search blocks). The model calls a "
        "built-in tool on most turns, discovers an MCP tool on turns %s "
        "(as many as the table says), calls each found tool again two "
        "turns later, and answers on the last turn. Every upstream request "
        "the emulator accepted (all of them) is billed with t/billing.py: "
        "tools, then system, then messages; a prefix is read from the "
        "cache only when byte-identical up to a breakpoint (20-block "
        "lookback); 1.0 uncached, 1.25 written, 0.1 read; deferred tools "
        "are not in the prompt; a `tool_reference` expands in place; "
        "tokens ≈ bytes / 3.5 for JSON, / 4 for text "
        "([gateway-search.md](gateway-search.md#what-a-session-costs)). "
        "*Peak context* is the largest prompt of the session in tokens; "
        "a *cache break* is a request that reads less than the one before "
        "it cached, with the first block that differs. Claude Code's "
        "client profile (`$toolsearch_client` `claude_code`: its own "
        "deferral list) applies by default; *profiles off* rows "
        "show the module without it (`toolsearch_client_profiles off`), "
        "one of them with the list of docs/examples/claude-code.conf "
        "instead."
        % (cost_session.TURNS, ", ".join(
            str(t) for t in cost_session.DISCOVERY_TURNS)), ""]
    return report.discovery_section("cost", lines, results, table)


if __name__ == "__main__":
    sys.exit(report.discovery_main("cost", DISCOVERIES, measure, section))
