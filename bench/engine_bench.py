#!/usr/bin/env python3
"""Engine speed in process: build/bench_engine over the recorded request
and conversations of 1 MB and 4 MB (bench/corpus.py), for four cases:

  no change   what a tool-search client sends: the deferral output sent
              again with its beta (client_managed, no edit)
  deferral    the client's request, toolsearch_defer on (deferred_hosted)
  hygiene     the deferral output with toolsearch_defer off: defer_loading,
              the hosted tool and hosted search blocks stripped, references
              turned into text
  gateway     the client's request, toolsearch_search gateway

Each run times, in the same rounds, memcpy of the body and the engine,
the body read whole and as a session's next turn (after the turn before
it, whose messages the worker's memory then keeps), then in rounds of
their own cJSON parse + the same edit + print (the nodes a cJSON round
frees slowed the malloc calls of whatever ran next); figures are the
median over RUNS runs of each run's median.  Writes the "engine" section
of docs/benchmarks.md.
"""

import json
import os
import subprocess
import sys
import tempfile

import corpus
import report

ROOT = report.ROOT

RUNS = 5
BETA = "advanced-tool-use-2025-11-20"
CASES = [("no change", "deferred", ["--beta", BETA]),
         ("deferral", "client", []),
         ("hygiene", "deferred", ["--defer", "off", "--beta", BETA]),
         ("gateway search", "client", ["--search", "gateway"])]
# goals of issue 8, GB/s
GOALS = {("deferral", "161 KB"): 2.0, ("no change", "1 MB"): 4.0}


def tool(*args, stdin=None):
    return subprocess.run([os.path.join(ROOT, "build", args[0])]
                          + list(args[1:]), capture_output=True, check=True,
                          timeout=120, input=stdin).stdout


def bodies(tmp):
    """label -> {"client": path, "deferred": path, and each one's turn
    before as "client-1", "deferred-1"}; the recorded request's turn
    before is itself"""
    out = {}
    for label, size in [("161 KB", 0), ("1 MB", 1024 * 1024),
                        ("4 MB", 4 * 1024 * 1024)]:
        paths = {}
        for back in (0, 1):
            data = (corpus.conversation(size, back) if size
                    else corpus.fixture())
            for k in ("client", "deferred"):
                name = k + ("-1" if back else "")
                paths[name] = os.path.join(tmp, "%s-%s.json"
                                           % (label[:-3], name))
            client = paths["client-1" if back else "client"]
            with open(client, "wb") as f:
                f.write(data)
            with open(paths["deferred-1" if back else "deferred"], "wb") as f:
                f.write(tool("toolsearch", "rewrite", client))
        out[label] = paths
    return out


def rounds(path):
    """about 0.3 s of cJSON per run, bounded"""
    return max(5, min(300, (48 << 20) // os.path.getsize(path) // 8))


def measure(path, before, options):
    runs = [json.loads(tool("bench_engine", path, before,
                            str(rounds(path)), *options))
            for _ in range(RUNS)]
    res = dict(runs[0])
    for k in ("memcpy_us", "engine_us", "recalled_us", "cjson_us",
              "heap_bytes"):
        res[k] = report.median([r[k] for r in runs])
    res["deterministic"] = all(r["deterministic"] for r in runs)
    return res


def gbs(size, us):
    return size / us / 1e3


def section(results):
    begin, end = report.markers("engine")
    lines = [begin, "## Engine, in process", "",
             "`make bench` (bench/engine_bench.py, build/bench_engine). "
             "Machine: %s." % report.machine(), "",
             "Per request, what the glue does: `ts_request_process`, the "
             "output's pieces (`ts_request_pieces`) with the new bytes "
             "copied into one fresh block (the kept ranges are sent where "
             "they lie), `ts_request_free`. Baselines in the same run: "
             "`memcpy` of the body (the floor), in the same rounds as the "
             "engine, "
             "and cJSON parse + the same edit + print "
             "(`cJSON_PrintUnformatted`), in rounds of its own after them "
             "(the hundred thousand nodes a cJSON round frees made the "
             "next malloc sort them: interleaved, the engine paid up to 2x "
             "for cJSON's debris). Median of %d runs of each run's "
             "median. Bodies: the recorded Claude Code request "
             "(t/fixtures/claude-code/ts-unset/002.json, 149 tools) and "
             "conversations grown from it by bench/corpus.py (tool_use / "
             "tool_result turns, a hosted search with tool_reference blocks "
             "every eighth turn, escapes and raw UTF-8 in every result). "
             "*no change*: the deferral output sent again with its beta "
             "(what a tool-search client sends; no edit); *hygiene*: the "
             "deferral output with `toolsearch_defer off` (tool-search "
             "fields stripped, references to text); *gateway search*: "
             "`toolsearch_search gateway`. *heap*: the engine's peak "
             "malloc'd bytes during the request, the block of new bytes "
             "included; the index borrows memory kept from one request to "
             "the next (`ts_index_build_in`, as the glue lends each "
             "worker's), which is not counted. *engine*: the body read "
             "whole (the memory forgotten before the round, as for a "
             "worker's first request of a session); *next turn*: the same "
             "body in the same round after the turn before it (the "
             "conversation one exchange shorter, its cache breakpoint on "
             "its own last message), as a worker serving a session sees "
             "it: the tools array and the messages but the turn before's "
             "last taken from that memory by their bytes, the rest read. "
             "The recorded request's turn before is itself (the session "
             "recorded has no earlier body), so its next turn recalls all "
             "of it." % RUNS,
             "",
             "| case | body | decision | edits | memcpy µs | engine µs "
             "| GB/s | × memcpy | next turn µs | next turn GB/s | cJSON µs "
             "| cJSON ÷ engine | heap ÷ body | same bytes every run |",
             "|---|---|---|---|---|---|---|---|---|---|---|---|---|---|"]
    for (case, label), r in results:
        lines.append(
            "| %s | %s | %s | %d | %.1f | %.1f | %.2f | %.0f× | %.1f "
            "| %.2f | %.0f | %.1f× | %.2f | %s |"
            % (case, label, r["decision"], r["edits"], r["memcpy_us"],
               r["engine_us"], gbs(r["bytes"], r["engine_us"]),
               r["engine_us"] / r["memcpy_us"], r["recalled_us"],
               gbs(r["bytes"], r["recalled_us"]), r["cjson_us"],
               r["cjson_us"] / r["engine_us"],
               r["heap_bytes"] / r["bytes"],
               "yes" if r["deterministic"] else "**no**"))
    lines += ["", "Goals (issue 8):", ""]
    for (case, label), goal in GOALS.items():
        r = dict(results)[(case, label)]
        read = gbs(r["bytes"], r["engine_us"])
        turn = gbs(r["bytes"], r["recalled_us"])
        lines.append("- %s of the %s body, goal %.1f GB/s: read whole "
                     "%.2f GB/s, %s; on a next turn %.2f GB/s, %s"
                     % (case, label, goal, read,
                        "met" if read >= goal else "**missed**", turn,
                        "met" if turn >= goal else "**missed**"))
    lines.append(end)
    return "\n".join(lines)


def main():
    results = []
    with tempfile.TemporaryDirectory(prefix="toolsearch-bench-") as tmp:
        sets = bodies(tmp)
        for case, which, options in CASES:
            for label, paths in sets.items():
                results.append(((case, label),
                                measure(paths[which], paths[which + "-1"],
                                        options)))
    report.publish("engine", section(results))
    return 0


if __name__ == "__main__":
    sys.exit(main())
