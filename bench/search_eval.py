#!/usr/bin/env python3
"""Retrieval quality of the gateway's tool search.

Runs every query of t/search/queries.json through `build/toolsearch search
--batch` once per scorer and reports recall@1, recall@5 and MRR (over the
top 10) per query kind and per half of the split (t/search/split.json):
the scorer is tuned on the dev half only, and judged on the held-out test
half.

Step queries (t/search/steps.json) are what a model searches mid-task:
one query per step of a task's plan, each with its gold tools.  A task
succeeds when the union of the top 5 of its step queries holds a gold
tool of every step; step recall@5 counts the steps whose own top 5 holds
one.  The tasks are split in two halves the same way.  Usage:

    bench/search_eval.py [--json] [--tools FILE] [--queries FILE]
    bench/search_eval.py --steps [--json]    the step-query table
    bench/search_eval.py --misses SCORER     the dev half's misses at 5
    bench/search_eval.py --step-misses SCORER   the same for step queries
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
STEPS = os.path.join(ROOT, "t", "search", "steps.json")
STEPS_SPLIT = os.path.join(ROOT, "t", "search", "steps_split.json")


def halve(items, text, halves):
    """adds items, ordered by the SHA-256 of their text, to the halves:
    the first half (rounded up) dev, the rest test"""
    sub = sorted(items,
                 key=lambda q: hashlib.sha256(text(q).encode("utf-8"))
                 .hexdigest())
    half = (len(sub) + 1) // 2
    halves["dev"] += sorted(q["id"] for q in sub[:half])
    halves["test"] += sorted(q["id"] for q in sub[half:])
    return halves


def split(queries):
    """{"dev": ids, "test": ids}: per kind, the queries ordered by the
    SHA-256 of their text, the first half (rounded up) dev"""
    halves = {"dev": [], "test": []}
    for kind in sorted({q["kind"] for q in queries}):
        halve([q for q in queries if q["kind"] == kind],
              lambda q: q["query"], halves)
    return halves


def step_split(tasks):
    """the tasks' halves, by the SHA-256 of the task's text"""
    return halve(tasks, lambda t: t["task"], {"dev": [], "test": []})


def write_split(path, rule, halves):
    """a split file: the rule, then one line of ids per half"""
    with open(path, "w") as f:
        f.write('{"rule": "%s",\n' % rule)
        f.write(' "dev": %s,\n "test": %s}\n'
                % (json.dumps(halves["dev"]), json.dumps(halves["test"])))


def write_splits(queries, tasks):
    write_split(SPLIT, "per kind, queries ordered by the SHA-256 of their"
                " UTF-8 text; the first half (rounded up) is dev, the rest"
                " test (bench/search_eval.py, split)", split(queries))
    write_split(STEPS_SPLIT, "tasks ordered by the SHA-256 of the UTF-8"
                " text of their task; the first half (rounded up) is dev,"
                " the rest test (bench/search_eval.py, step_split)",
                step_split(tasks))


def recorded(path, halves):
    """a recorded split, which must be the one the rule gives"""
    with open(path) as f:
        rec = json.load(f)
    if {k: rec[k] for k in ("dev", "test")} != halves:
        sys.exit("%s does not match its items: --write-split" % path)
    return rec


def recorded_split(queries):
    return recorded(SPLIT, split(queries))


def recorded_step_split(tasks):
    return recorded(STEPS_SPLIT, step_split(tasks))


def run(tools, scoring, queries):
    """the ranked names of every query, in order (a line break inside a
    query is a blank: --batch reads one query a line)"""
    out = subprocess.run(
        [os.path.join(ROOT, "build", "toolsearch"), "search", "--tools", tools,
         "--batch", "--scoring", scoring, "--max", str(DEPTH)],
        input="".join(" ".join(q["query"].splitlines()) + "\n"
                      for q in queries),
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


def step_run(tools, scoring, tasks):
    """per task, the ranked names of each of its step queries"""
    flat = [{"query": st["query"]} for t in tasks for st in t["steps"]]
    ranked = iter(run(tools, scoring, flat))
    return [[next(ranked) for _ in t["steps"]] for t in tasks]


def step_metrics(tasks, ranked):
    """task success, step recall@5 and the mean number of distinct tools
    the union of a task's top 5s loads"""
    ok = hits = steps = loaded = 0
    for t, per_step in zip(tasks, ranked):
        union = set(n for names in per_step for n in names[:5])
        ok += all(set(st["gold"]) & union for st in t["steps"])
        hits += sum(bool(set(st["gold"]) & set(names[:5]))
                    for st, names in zip(t["steps"], per_step))
        steps += len(t["steps"])
        loaded += len(union)
    n = len(tasks) or 1
    return ok / n, hits / (steps or 1), loaded / n


def step_evaluate(tools, tasks, halves=None):
    """{half: {scorer: (success, step recall@5, loaded), "n": tasks,
    "steps": steps}}"""
    halves = halves or step_split(tasks)
    half_of = {i: h for h in ("dev", "test") for i in halves[h]}
    ranked = {s: step_run(tools, s, tasks) for s in SCORERS}
    table = {}
    for half in ("dev", "test", "all"):
        idx = [i for i, t in enumerate(tasks)
               if half in ("all", half_of[t["id"]])]
        sub = [tasks[i] for i in idx]
        res = {s: step_metrics(sub, [ranked[s][i] for i in idx])
               for s in SCORERS}
        res["n"] = len(sub)
        res["steps"] = sum(len(t["steps"]) for t in sub)
        table[half] = res
    return table


def step_markdown(table):
    rows = ["| half | tasks | steps | scorer | task success | step recall@5"
            " | tools loaded |",
            "|---|---|---|---|---|---|---|"]
    for half, res in table.items():
        for s in SCORERS:
            rows.append("| %s | %d | %d | %s | %.3f | %.3f | %.1f |"
                        % ((half, res["n"], res["steps"], s) + res[s]))
    return "\n".join(rows)


def step_misses(tools, tasks, halves, scorer):
    """the dev half's step queries whose gold is not in their top 5"""
    dev = set(halves["dev"])
    sub = [t for t in tasks if t["id"] in dev]
    for t, per_step in zip(sub, step_run(tools, scorer, sub)):
        for st, names in zip(t["steps"], per_step):
            if not set(st["gold"]) & set(names[:5]):
                print("%d %s\n  gold %s\n  got  %s"
                      % (t["id"], st["query"], " ".join(st["gold"]),
                         " ".join(names[:5])))


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
    ap.add_argument("--steps", action="store_true")
    ap.add_argument("--misses", choices=SCORERS)
    ap.add_argument("--step-misses", choices=SCORERS)
    ap.add_argument("--write-split", action="store_true")
    args = ap.parse_args()
    with open(args.queries) as f:
        queries = json.load(f)
    with open(STEPS) as f:
        tasks = json.load(f)
    if args.write_split:
        write_splits(queries, tasks)
        return
    if args.steps or args.step_misses:
        items, halves = tasks, recorded_step_split(tasks)
        miss, scorer = step_misses, args.step_misses
        table_of, text_of = step_evaluate, step_markdown
    else:
        items, halves = queries, recorded_split(queries)
        miss, scorer = misses, args.misses
        table_of, text_of = evaluate, markdown
    if scorer:
        miss(args.tools, items, halves, scorer)
        return
    table = table_of(args.tools, items, halves)
    print(json.dumps(table) if args.json else text_of(table))


if __name__ == "__main__":
    main()
