#!/usr/bin/env python3
"""What a whole Chat Completions or Responses session costs under
automatic prefix caching (OpenAI's, vLLM's), per client and
configuration, against no module in the same run.

Each session (t/openai_cost_session.py: 20 turns, 0, 1, 2 or 4
discoveries, the recorded client carrying back what it carries back)
runs through a fresh nginx in front of the emulator; every upstream
request is billed with t/billing.py's PrefixSession.  Writes the
"openai-cost" section of docs/benchmarks.md.  `--quick` runs 4
discoveries only and prints the section.  It takes about two minutes.
"""

import sys

import report                                   # puts t/ on the path
import billing                                  # noqa: E402
import cost_session                             # noqa: E402
import openai_cost_session                      # noqa: E402

DISCOVERIES = (0, 1, 2, 4)
GATEWAY_CLIENTS = ("opencode", "cline", "continue", "qwen-code",
                   "opencode-responses") + openai_cost_session.STORED
# Codex's namespaces on the hosted path: items kept, and dropped
CLIENTS = GATEWAY_CLIENTS + ("codex", "codex-dropped")
HOSTED_CLIENTS = ("opencode-responses", "codex", "codex-dropped")
# (label, server directives, the model's queries, the model, or None for
# the recorded one, the clients); the first is the baseline of its client
CONFIGURATIONS = (
    ("no module", "toolsearch off;", "select", None, CLIENTS),
    ("default (gateway search), select: queries", "toolsearch on;",
     "select", None, GATEWAY_CLIENTS),
    ("default, keyword queries", "toolsearch on;", "words", None,
     GATEWAY_CLIENTS),
    ("toolsearch_found_tools tools, select: queries",
     "toolsearch on; toolsearch_found_tools tools;", "select", None,
     GATEWAY_CLIENTS),
    ("toolsearch_found_tools tools, keyword queries",
     "toolsearch on; toolsearch_found_tools tools;", "words", None,
     GATEWAY_CLIENTS),
    ("hosted tool_search: openai upstream, gpt-5.4",
     "toolsearch on; toolsearch_upstream openai;", "select", "gpt-5.4",
     HOSTED_CLIENTS),
)


def kunits(x):
    return "%.1f K" % (x / 1000.0)


def measure(discoveries):
    """rows of one discovery count: (client, label, Result)"""
    rows = []
    for client in CLIENTS:
        for label, server, query, model, clients in CONFIGURATIONS:
            if client not in clients or (discoveries == 0 and
                                         query != "select"):
                continue
            r = openai_cost_session.run(client, label, server, discoveries,
                                        query=query, model=model)
            assert not r.rejected(), (client, label, r.rejected())
            rows.append((client, label, r))
    return rows


def break_cost(bill):
    """the units a session's breaks cost: what they paid again, at the
    uncached price instead of the cached one"""
    return sum(b.again for b in bill.breaks()) * \
        (billing.PRICE_UNCACHED - billing.OPENAI_READ_PRICES["gpt-5"])


def table(discoveries, rows):
    lines = ["### %d discover%s" % (discoveries,
                                    "y" if discoveries == 1 else "ies"), "",
             "| client | configuration | billed units (gpt-5 prices) "
             "| × no module | × no module, gpt-4.1 / gpt-4o prices "
             "| vLLM prefill × no module | upstream calls | peak context "
             "| what the breaks cost | × no module without them "
             "| cache breaks: upstream request (turn): cause, tokens paid "
             "again |",
             "|---|---|---|---|---|---|---|---|---|---|---|"]
    base = {}
    for client, label, r in rows:
        base.setdefault(client, r)
    for client, label, r in rows:
        b, first = r.bill, base[client]
        older = " / ".join(
            "%.2f×" % (r.bills[m].units() / first.bills[m].units())
            for m in ("gpt-4.1", "gpt-4o"))
        vllm = r.vllm.units() / first.vllm.units()
        breaks = "; ".join("request %d (turn %d): %s, %s"
                           % (x.n, r.turns[x.n - 1], x.cause,
                              kunits(x.again))
                           for x in b.breaks())
        lines.append("| %s | %s | %s | %.2f× | %s | %.2f× | %d | %s | %s "
                     "| %.2f× | %s |" % (
                         client, label, kunits(b.units()),
                         b.units() / first.bill.units(), older, vllm,
                         len(r.requests), kunits(b.peak()),
                         kunits(break_cost(b)),
                         (b.units() - break_cost(b)) / first.bill.units(),
                         breaks or "none"))
    return lines


def section(results):
    lines = report.heading("openai-cost", "Session cost under automatic "
                           "prefix caching (Chat Completions, Responses)",
                           "bench/openai_cost_bench.py")
    lines += [
        "Sessions of %d turns (t/openai_cost_session.py) of the clients "
        "recorded in the OpenAI formats, each carrying back what it "
        "carries back: on Chat Completions opencode 1.18.33 (77 tools), "
        "cline 3.0.65 (88), continue 1.5.47 (74) and qwen-code 0.24.4 "
        "(90, its own search off), on Responses opencode 1.18.33 "
        "(`opencode-responses`, 77 tools, `store: false`), and the "
        "clients that leave `store` at its default, the upstream keeping "
        "each response: cline 3.0.65 (`cline-responses`, 90 tools) and "
        "continue 1.5.47 (`continue-responses`, 74), which send their "
        "whole history without ids, and cline's request carried back as "
        "LangChain.js does (`cline-responses-ids`: every item whole, with "
        "its id), as the AI SDK does with store on "
        "(`cline-responses-refs`: messages by `item_reference`) and as the "
        "Agents SDK does with `previousResponseId` "
        "(`cline-responses-chained`: the results alone, going on from the "
        "answer); these are billed on what the model reads, the kept "
        "history resolved; and Codex 0.171 (`codex`, 81 tools, its MCP "
        "tools in namespaces `mcp__<server>`, on the hosted path only: "
        "every item back as it came, the search's included; "
        "`codex-dropped`: the same with the search's items dropped, as "
        "opencode drops them). The model "
        "calls a built-in tool on most turns, discovers an MCP tool on "
        "turns %s (as many as the table says) with `select:<name>` or "
        "with the words of the tool's name (*keyword queries*, which "
        "find up to 5 tools), calls each found tool again two turns "
        "later, and answers on the last turn; on the hosted path (an "
        "`openai` upstream and a model that has hosted `tool_search`) "
        "the API finds the tool (a namespace's member in its namespace) "
        "and the model calls it in one answer, and opencode drops the "
        "search's items. Every upstream request "
        "the emulator accepted (all of them) is billed with "
        "t/billing.py's automatic prefix cache: tools, then the "
        "instructions, then the messages or input items; a request reads "
        "the longest prefix, ending at a tool, message or item, that an "
        "earlier request of the session had, in whole 128-token steps "
        "from 1,024 tokens on; a token read costs 0.1 (the gpt-5 family; "
        "0.25 for gpt-4.1, 0.5 for gpt-4o in the fifth column), any "
        "other 1.0, with no write premium; *vLLM prefill* counts the "
        "tokens vLLM computes (its prefix cache reads 16-token blocks). "
        "Tokens ≈ bytes / 4 for text, / 3.5 for JSON "
        "([gateway-search.md](gateway-search.md#what-a-chat-completions-"
        "or-responses-session-costs)). *Peak context* is the largest "
        "prompt of the session in tokens; a *cache break* is a request "
        "that pays again for what the request before it had after their "
        "first difference (a continuation that only drops the turns the "
        "gateway's loop appended breaks nothing), with that difference "
        "and the tokens paid again; *what the breaks cost* is those "
        "tokens at 0.9 (uncached instead of read), and the next column "
        "the session without them. *default* is the call wrapper "
        "(`toolsearch_found_tools wrapper`: `tools[]` never changes, "
        "the found definitions as text); `toolsearch_found_tools tools` "
        "puts found functions in `tools[]`, as before the wrapper (and as "
        "stored Responses requests had them before the wrapper reached "
        "them). The "
        "sessions call the found tools with the arguments their schemas "
        "require (the wrapper checks them)."
        % (cost_session.TURNS, ", ".join(
            str(t) for t in cost_session.DISCOVERY_TURNS)), ""]
    return report.discovery_section("openai-cost", lines, results, table)


if __name__ == "__main__":
    sys.exit(report.discovery_main("openai-cost", DISCOVERIES, measure,
                                   section))
