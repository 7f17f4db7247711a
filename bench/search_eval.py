#!/usr/bin/env python3
"""Retrieval quality of the gateway's tool search.

Runs every query of t/search/queries.json through `build/toolsearch search
--batch` once per scorer and reports recall@1, recall@5 and MRR (over the
top 10) per query kind and per half of the split (t/search/split.json):
the scorer is tuned on the dev half only, and judged on the held-out test
half.  Usage:

    bench/search_eval.py [--json] [--tools FILE] [--queries FILE]
    bench/search_eval.py --misses SCORER     the dev half's misses at 5
    bench/search_eval.py --write-split       records the split
"""

import argparse
import hashlib
import json
import os
import subprocess
import sys

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
SCORERS = ("seed", "bm25", "hybrid")
DEPTH = 10
SPLIT = os.path.join(ROOT, "t", "search", "split.json")


def split(queries):
    """{"dev": ids, "test": ids}: per kind, the queries ordered by the
    SHA-256 of their text, the first half (rounded up) dev"""
    halves = {"dev": [], "test": []}
    for kind in sorted({q["kind"] for q in queries}):
        sub = sorted((q for q in queries if q["kind"] == kind),
                     key=lambda q: hashlib.sha256(
                         q["query"].encode("utf-8")).hexdigest())
        half = (len(sub) + 1) // 2
        halves["dev"] += sorted(q["id"] for q in sub[:half])
        halves["test"] += sorted(q["id"] for q in sub[half:])
    return halves


def write_split(queries):
    """t/search/split.json: the rule, then one line of ids per half"""
    halves = split(queries)
    with open(SPLIT, "w") as f:
        f.write('{"rule": "per kind, queries ordered by the SHA-256 of their'
                ' UTF-8 text; the first half (rounded up) is dev, the rest'
                ' test (bench/search_eval.py, split)",\n')
        f.write(' "dev": %s,\n "test": %s}\n'
                % (json.dumps(halves["dev"]), json.dumps(halves["test"])))


def recorded_split(queries):
    """the recorded split, which must be the one the rule gives"""
    with open(SPLIT) as f:
        rec = json.load(f)
    if {k: rec[k] for k in ("dev", "test")} != split(queries):
        sys.exit("%s does not match the queries: --write-split" % SPLIT)
    return rec


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


def evaluate(tools, queries, halves=None):
    """{kind: {half: {scorer: (r1, r5, mrr), "n": n}}}, "all" for every
    kind and for both halves"""
    halves = halves or split(queries)
    half_of = {i: h for h in ("dev", "test") for i in halves[h]}
    ranked = {s: run(tools, s, queries) for s in SCORERS}
    table = {}
    for kind in sorted({q["kind"] for q in queries}) + ["all"]:
        table[kind] = {}
        for half in ("dev", "test", "all"):
            idx = [i for i, q in enumerate(queries)
                   if kind in ("all", q["kind"])
                   and half in ("all", half_of[q["id"]])]
            sub = [queries[i] for i in idx]
            res = {s: metrics(sub, [ranked[s][i] for i in idx])
                   for s in SCORERS}
            res["n"] = len(sub)
            table[kind][half] = res
    return table


def markdown(table):
    rows = ["| queries | half | n | scorer | recall@1 | recall@5 | MRR |",
            "|---|---|---|---|---|---|---|"]
    for kind, halves in table.items():
        for half, res in halves.items():
            for s in SCORERS:
                r1, r5, mrr = res[s]
                rows.append("| %s | %s | %d | %s | %.3f | %.3f | %.3f |"
                            % (kind, half, res["n"], s, r1, r5, mrr))
    return "\n".join(rows)


def misses(tools, queries, halves, scorer):
    """the dev half's queries whose gold is not in the scorer's top 5"""
    dev = set(halves["dev"])
    sub = [q for q in queries if q["id"] in dev]
    for q, names in zip(sub, run(tools, scorer, sub)):
        if not set(q["gold"]) & set(names[:5]):
            print("%d %s: %s\n  gold %s\n  got  %s"
                  % (q["id"], q["kind"], q["query"], " ".join(q["gold"]),
                     " ".join(names[:5])))


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--tools", default=os.path.join(ROOT, "t", "search",
                                                    "catalogue.json"))
    ap.add_argument("--queries", default=os.path.join(ROOT, "t", "search",
                                                      "queries.json"))
    ap.add_argument("--json", action="store_true")
    ap.add_argument("--misses", choices=SCORERS)
    ap.add_argument("--write-split", action="store_true")
    args = ap.parse_args()
    with open(args.queries) as f:
        queries = json.load(f)
    if args.write_split:
        write_split(queries)
        return
    halves = recorded_split(queries)
    if args.misses:
        misses(args.tools, queries, halves, args.misses)
        return
    table = evaluate(args.tools, queries, halves)
    print(json.dumps(table) if args.json else markdown(table))


if __name__ == "__main__":
    main()
