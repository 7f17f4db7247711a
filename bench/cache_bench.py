#!/usr/bin/env python3
"""What the prompt cache keeps across a session's upstream requests, on
each path, against plain proxy_pass in the same run.

The session of t/session.py (a Claude Code-like client with breakpoints on
its system prompt and on its last user block; a model that searches for
two MCP tools in turn and calls each) runs through one nginx per path in
front of the emulator: plain proxy_pass (the baseline: every tool loaded,
no search), hosted search, gateway search with tool_reference, gateway
search with plain tools.  For each upstream request after the first, the
script compares its bytes (breakpoint markers removed) with those of the
request before, up to where that one's last breakpoint stood: the prefix
the client asked to be cached.  *kept* counts the bytes of it repeated
byte for byte; *kept, found set aside* the same with the tools the
gateway's searches found (which follow its search tool) taken out of both,
which is what the API caches with tool_reference (deferred tools are not
part of the cached prefix).  Writes the "cache" section of
docs/benchmarks.md; it runs in a few seconds.
"""

import json
import sys

import report                                   # puts t/ on the path
import session                                  # noqa: E402
from emulator import Emulator                   # noqa: E402
from gateway import Gateway                     # noqa: E402

PATHS = [("plain proxy_pass", "anthropic", "toolsearch off;")] + [
    (name.replace("_", " "), profile, "toolsearch on; " + conf)
    for name, (profile, conf) in sorted(session.PATHS.items())]


def run(profile, conf):
    """the upstream bodies of one session"""
    emu = Emulator(profile)
    emu.script = session.model()
    emu.start()
    gw = Gateway(emu.port, server=conf, log_level="warn").start()
    try:
        answers = session.run(gw)
        assert answers[-1]["content"][-1]["text"] == "All done.", answers
        return [q.body for q in emu.requests]
    finally:
        gw.remove()
        emu.stop()


def rows(bodies):
    out = []
    for i, (prev, cur) in enumerate(zip(bodies, bodies[1:])):
        pv, mark = session.static_view(prev, search_tool=None)
        cv, _ = session.static_view(cur, search_tool=None)
        raw = min(mark, session.common_prefix(pv, cv))
        marked, aside = session.kept_prefixes([prev, cur])[0]
        out.append((i + 2, len(cur), json.loads(cur).get("tools", []),
                    mark, raw, marked, aside))
    return out


def section(results):
    begin, end = report.markers("cache")
    lines = [begin, "## Prompt cache across a session", "",
             "`make bench` (bench/cache_bench.py). Machine: %s."
             % report.machine(), "",
             "One session (t/session.py: 8 tools, 5 of them `mcp__…`; "
             "breakpoints on the system prompt and on the last user block, "
             "as Claude Code sets them; the model finds and calls two MCP "
             "tools in turn) through nginx in front of the emulator, once "
             "per path. For each upstream request after the first: *asked* "
             "is the prefix the request before asked to be cached (bytes up "
             "to its last breakpoint), *kept* the bytes of it this request "
             "repeats byte for byte, *found set aside* the same without "
             "the tools the gateway's searches loaded, which follow its "
             "search tool (with `tool_reference` the API leaves them out "
             "of the cached prefix). Baseline: plain `proxy_pass`, where "
             "every tool is loaded and nothing is searched.", "",
             "| path | request | bytes | tools | asked | kept | × baseline "
             "| found set aside | × baseline |",
             "|---|---|---|---|---|---|---|---|---|"]
    base = results[0][1]
    bkept = sum(r[4] for r in base) / float(sum(r[3] for r in base))
    for name, rs in results:
        for n, size, tools, mark, raw, marked, aside in rs:
            lines.append("| %s | %d | %d | %d | %d | %d | %.2f× | %d of %d "
                         "| %.2f× |" % (name, n, size, len(tools), mark, raw,
                                        raw / float(mark) / bkept, aside,
                                        marked, aside / float(marked)
                                        / bkept))
    lines += ["", "Totals: the share of the asked prefix kept, over the "
              "session's requests.", "", "| path | upstream requests | kept "
              "| found set aside |", "|---|---|---|---|"]
    for name, rs in results:
        lines.append("| %s | %d | %.1f %% | %.1f %% |"
                     % (name, len(rs) + 1,
                        100.0 * sum(r[4] for r in rs) / sum(r[3] for r in rs),
                        100.0 * sum(r[6] for r in rs)
                        / sum(r[5] for r in rs)))
    lines.append(end)
    return "\n".join(lines)


def main():
    results = [(name, rows(run(profile, conf)))
               for name, profile, conf in PATHS]
    report.publish("cache", section(results))
    return 0


if __name__ == "__main__":
    sys.exit(main())
