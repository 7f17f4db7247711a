#!/usr/bin/env python3
"""Retrieval quality of the gateway's tool search.

Runs every query of t/search/queries.json through `build/toolsearch search
--batch` once per scorer and reports recall@1, recall@5 and MRR (over the
top 10) per query kind.  Usage:

    bench/search_eval.py [--markdown] [--tools FILE] [--queries FILE]
"""

import argparse
import json
import os
import subprocess
import sys

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
SCORERS = ("seed", "bm25", "hybrid")
DEPTH = 10


def run(tools, scoring, queries):
    """the ranked names of every query, in order"""
    out = subprocess.run(
        [os.path.join(ROOT, "build", "toolsearch"), "search", "--tools", tools,
         "--batch", "--scoring", scoring, "--max", str(DEPTH)],
        input="".join(q["query"] + "\n" for q in queries),
        capture_output=True, text=True, check=True, timeout=300).stdout
    lines = out.split("\n")[:len(queries)]
    if len(lines) != len(queries):
        sys.exit("toolsearch answered %d of %d queries"
                 % (len(lines), len(queries)))
    return [line.split("\t") if line else [] for line in lines]


def metrics(queries, ranked):
    """recall@1, recall@5 and MRR of one scorer over some queries"""
    r1 = r5 = mrr = 0.0
    for q, names in zip(queries, ranked):
        gold = set(q["gold"])
        rank = next((i + 1 for i, n in enumerate(names) if n in gold), None)
        if rank is not None:
            r1 += rank == 1
            r5 += rank <= 5
            mrr += 1.0 / rank
    n = len(queries) or 1
    return r1 / n, r5 / n, mrr / n


def evaluate(tools, queries):
    """{kind: {scorer: (r1, r5, mrr)}} with "all" over every query"""
    ranked = {s: run(tools, s, queries) for s in SCORERS}
    kinds = sorted({q["kind"] for q in queries}) + ["all"]
    table = {}
    for kind in kinds:
        idx = [i for i, q in enumerate(queries)
               if kind == "all" or q["kind"] == kind]
        sub = [queries[i] for i in idx]
        table[kind] = {s: metrics(sub, [ranked[s][i] for i in idx])
                       for s in SCORERS}
        table[kind]["n"] = len(sub)
    return table


def markdown(table):
    rows = ["| queries | n | scorer | recall@1 | recall@5 | MRR |",
            "|---|---|---|---|---|---|"]
    for kind, res in table.items():
        for s in SCORERS:
            r1, r5, mrr = res[s]
            rows.append("| %s | %d | %s | %.3f | %.3f | %.3f |"
                        % (kind, res["n"], s, r1, r5, mrr))
    return "\n".join(rows)


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--tools", default=os.path.join(ROOT, "t", "search",
                                                    "catalogue.json"))
    ap.add_argument("--queries", default=os.path.join(ROOT, "t", "search",
                                                      "queries.json"))
    ap.add_argument("--json", action="store_true")
    args = ap.parse_args()
    with open(args.queries) as f:
        queries = json.load(f)
    table = evaluate(args.tools, queries)
    print(json.dumps(table) if args.json else markdown(table))


if __name__ == "__main__":
    main()
