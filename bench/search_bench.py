#!/usr/bin/env python3
"""Search speed: catalogue preparation + one query over 1,000 tools.

Builds a request with 1,000 tools from t/search/catalogue.json (cycled,
renamed per copy), runs build/bench_search, and writes the results into
docs/benchmarks.md between the search markers, with the retrieval quality
of bench/search_eval.py.
"""

import json
import os
import subprocess
import sys

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
sys.path.insert(0, os.path.join(ROOT, "bench"))
import report  # noqa: E402
import search_eval  # noqa: E402

TOOLS = 1000
ROUNDS = 200
RUNS = 5
QUERIES = [
    "create github issue comment",
    "take screenshot current page",
    "+slack send message channel",
    "remember user prefers dark",
]
BEGIN, END = report.markers("search")


def load_tools(corpus):
    """the tools of a corpus: the test catalogue or the fixture's MCP tools"""
    if corpus == "catalogue":
        with open(os.path.join(ROOT, "t", "search", "catalogue.json")) as f:
            return json.load(f)
    with open(os.path.join(ROOT, "t", "fixtures", "claude-code", "ts-unset",
                           "002.json")) as f:
        return [t for t in json.load(f)["tools"]
                if t["name"].startswith("mcp__")]


def body_with(corpus, n):
    """a request whose tools[] cycles a corpus to n tools"""
    cat = load_tools(corpus)
    tools = []
    for i in range(n):
        t = dict(cat[i % len(cat)])
        copy = i // len(cat)
        if copy:
            parts = t["name"].split("__")
            parts[1] = "%s%d" % (parts[1], copy)
            t["name"] = "__".join(parts)
        tools.append(t)
    return {"model": "claude-sonnet-4-5", "max_tokens": 1024,
            "messages": [{"role": "user", "content": "hi"}], "tools": tools}


def kernel():
    """whether the search's two-byte kernel runs here"""
    with open("/proc/cpuinfo") as f:
        for line in f:
            if line.startswith("flags") and "avx2" in line.split():
                return "AVX2 (the two-byte kernel runs)"
    return "no AVX2 (word starts only)"


# glibc serves allocations above its mmap threshold with fresh pages, so
# every request pays page faults; "warm" raises the threshold, as a long
# running worker whose heap already holds such blocks would see
WARM = {"MALLOC_MMAP_THRESHOLD_": "67108864",
        "MALLOC_TRIM_THRESHOLD_": "134217728"}


def measure(path, warm):
    """per query: the median over RUNS runs of each run's median"""
    env = dict(os.environ, **(WARM if warm else {}))
    runs = []
    for _ in range(RUNS):
        out = subprocess.run(
            [os.path.join(ROOT, "build", "bench_search"), path, str(ROUNDS)]
            + QUERIES, capture_output=True, text=True, check=True,
            timeout=600, env=env).stdout
        runs.append(json.loads(out))
    res = []
    for i, q in enumerate(QUERIES):
        med = {k: sorted(r["queries"][i][k] for r in runs)[RUNS // 2]
               for k in ("memcpy_us", "seed_us", "hybrid_us", "lent_us")}
        res.append((q, med))
    return runs[0], res


def section(tables, quality, steps):
    lines = [BEGIN, "## Tool search", "",
             "`make bench-search` (bench/search_bench.py). Machine: %s."
             % (report.machine() + ", " + kernel()), "",
             "Per request: catalogue preparation (decode, lowercase, name "
             "parts; input schemas are read in place) plus one query over "
             "%d tools; median of %d runs of %d "
             "rounds. The baseline is `memcpy` of the same request body, "
             "measured in the same rounds. Goal: a 4-term query in at most "
             "200 µs. *cold*: glibc's default allocator, which maps fresh "
             "pages for blocks above its mmap threshold (the catalogue is one "
             "block, so this costs once, not per field); *warm*: the same "
             "with a raised mmap threshold, as in a worker whose heap is "
             "already grown. *hybrid, lent*: the hybrid scorer "
             "with the catalogue in memory the caller lends and reuses "
             "(`ts_catalog_build_in`), as a worker's buffer would be."
             % (TOOLS, RUNS, ROUNDS), ""]
    for title, meta, warm, res in tables:
        lines += ["### %s, %s (%d KB body)" % (title, "warm" if warm
                                               else "cold",
                                               meta["bytes"] // 1024), "",
                  "| query | memcpy µs | seed µs | × memcpy | hybrid µs "
                  "| × memcpy | hybrid, lent µs | × memcpy |",
                  "|---|---|---|---|---|---|---|---|"]
        for q, m in res:
            lines.append("| `%s` | %.1f | %.1f | %.1f× | %.1f | %.1f× "
                         "| %.1f | %.1f× |"
                         % (q, m["memcpy_us"], m["seed_us"],
                            m["seed_us"] / m["memcpy_us"], m["hybrid_us"],
                            m["hybrid_us"] / m["memcpy_us"], m["lent_us"],
                            m["lent_us"] / m["memcpy_us"]))
        lines.append("")
    lines += ["Retrieval quality in the same run "
              "(bench/search_eval.py, see [search.md](search.md)):", "",
              search_eval.markdown(quality), "",
              "Step queries, one per step of a task's plan (a task succeeds"
              " when the union of its steps' top 5 holds a gold tool of "
              "every step):", "", search_eval.step_markdown(steps), END]
    return "\n".join(lines)


def main():
    out = os.path.join(ROOT, "build", "bench")
    os.makedirs(out, exist_ok=True)
    tables = []
    for corpus, title in (("catalogue", "test catalogue, 302-byte "
                           "descriptions on average"),
                          ("fixture", "Claude Code's MCP tools, 106-byte "
                           "descriptions on average")):
        path = os.path.join(out, "%s-%d.json" % (corpus, TOOLS))
        with open(path, "w") as f:
            json.dump(body_with(corpus, TOOLS), f)
        for warm in (False, True):
            meta, res = measure(path, warm)
            tables.append((title, meta, warm, res))
    catalogue = os.path.join(ROOT, "t", "search", "catalogue.json")
    with open(os.path.join(ROOT, "t", "search", "queries.json")) as f:
        quality = search_eval.evaluate(catalogue, json.load(f))
    with open(search_eval.STEPS) as f:
        steps = search_eval.step_evaluate(catalogue, json.load(f))
    report.publish("search", section(tables, quality, steps))


if __name__ == "__main__":
    main()
