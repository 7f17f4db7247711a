#!/usr/bin/env python3
"""Recall@5 of the engine's scorers on public tool-retrieval sets.

Each set in t/search/public/ (tools.json, queries.jsonl; see
t/search/README.md) is split in two halves by a hash of the query: a
query is dev when the first byte of the SHA-256 of its UTF-8 text is
even, test when it is odd.  The rule looks at one query only, so a
query keeps its half when others are added, and equal texts share a
half.  Tuning reads the dev halves only (--misses); the test halves
are the judge.

recall@5 is the share of a query's gold found in its top 5, averaged
over the queries (a gold entry that is a list is found when any of its
names is).  The project's own step queries (t/search/steps.json, the
split of t/search/steps_split.json) are reported beside them with their
own convention: a step is found when any of its gold tools is in its
top 5.  Usage:

    bench/search_sets.py [--json]          the dev / test table
    bench/search_sets.py --misses SET      the dev half's misses of the
                                           default scorer on one set
"""

import argparse
import hashlib
import json
import os
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import search_eval  # noqa: E402

ROOT = search_eval.ROOT
PUBLIC = os.path.join(ROOT, "t", "search", "public")
SETS = ("bfcl-multiturn", "stabletoolbench", "metatool")
SCORERS = ("seed", "bm25", "hybrid")
OWN = "own steps"
K = 5


def half(query):
    """dev or test: the parity of the SHA-256's first byte"""
    first = hashlib.sha256(query.encode("utf-8")).digest()[0]
    return "test" if first & 1 else "dev"


def load(name):
    d = os.path.join(PUBLIC, name)
    with open(os.path.join(d, "queries.jsonl")) as f:
        queries = [json.loads(line) for line in f if line.strip()]
    return os.path.join(d, "tools.json"), queries


def found(gold, names):
    """the share of the gold in names"""
    top = set(names[:K])
    hit = sum(bool(top & set(g if isinstance(g, list) else [g]))
              for g in gold)
    return hit / (len(gold) or 1)


def public_row(name):
    """{half: {scorer: recall@5, "n": queries}}"""
    tools, queries = load(name)
    ranked = {s: search_eval.run(tools, s, queries) for s in SCORERS}
    row = {}
    for h in ("dev", "test"):
        idx = [i for i, q in enumerate(queries) if half(q["query"]) == h]
        row[h] = {s: sum(found(queries[i]["gold"], ranked[s][i])
                         for i in idx) / (len(idx) or 1) for s in SCORERS}
        row[h]["n"] = len(idx)
    return row


def own_row():
    """the project's step queries: step recall@5 per half"""
    with open(search_eval.STEPS) as f:
        tasks = json.load(f)
    table = search_eval.step_evaluate(
        os.path.join(ROOT, "t", "search", "catalogue.json"), tasks,
        search_eval.recorded_step_split(tasks))
    return {h: dict({s: table[h][s][1] for s in SCORERS},
                    n=table[h]["steps"]) for h in ("dev", "test")}


def table():
    rows = {name: public_row(name) for name in SETS}
    rows[OWN] = own_row()
    return rows


def markdown(rows):
    out = ["| set | half | n | seed | bm25 | hybrid (default) | × bm25 |",
           "|---|---|---|---|---|---|---|"]
    for name, row in rows.items():
        for h in ("dev", "test"):
            r = row[h]
            out.append("| %s | %s | %d | %.3f | %.3f | %.3f | %.2f |"
                       % (name, h, r["n"], r["seed"], r["bm25"],
                          r["hybrid"], r["hybrid"] / (r["bm25"] or 1)))
    return "\n".join(out)


def misses(name):
    tools, queries = load(name)
    dev = [q for q in queries if half(q["query"]) == "dev"]
    for q, names in zip(dev, search_eval.run(tools, "hybrid", dev)):
        if found(q["gold"], names) < 1:
            print("%s\n  gold %s\n  got  %s"
                  % (q["query"], " ".join(map(str, q["gold"])),
                     " ".join(names[:K])))


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--json", action="store_true")
    ap.add_argument("--misses", choices=SETS)
    args = ap.parse_args()
    if args.misses:
        misses(args.misses)
        return
    rows = table()
    print(json.dumps(rows) if args.json else markdown(rows))


if __name__ == "__main__":
    main()
