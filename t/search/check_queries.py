#!/usr/bin/env python3
"""Checks t/search/catalogue.json, t/search/queries.json and
t/search/steps.json against each other.

- catalogue: a list of {name, description, input_schema}, names unique and
  valid Anthropic tool names, every name of the form mcp__<server>__<tool>;
- queries: ids unique, kind is keyword or natural, no query text twice,
  keyword queries are 1-4 words, gold is non-empty, without repeats, and
  every gold name is in the catalogue;
- steps: task ids unique, every task has steps, every step a query and
  gold tools of the catalogue, and no step query holds every word of a
  gold tool's name (the honesty rule, see README.md).

Prints counts per kind and per server; exits 1 on any problem.
Usage: python3 t/search/check_queries.py [--quiet]
"""
import collections
import json
import os
import re
import sys

HERE = os.path.dirname(os.path.abspath(__file__))


def server_of(name):
    return name.split('__')[1]


def stem(w):
    """a light stem, so that 'issues' counts as 'issue'"""
    for suffix in ('ing', 'es', 'ed', 's'):
        if w.endswith(suffix) and len(w) - len(suffix) >= 3:
            return w[:-len(suffix)]
    return w


def words(text):
    return {stem(w) for w in re.findall(r'[a-z0-9]+', text.lower())}


# verbs are what a name says, even when most of a server's names start so
VERBS = {'create', 'get', 'list', 'search', 'update', 'delete', 'find', 'run'}


def name_words(name, prefixes):
    """the words of a tool's name, without its server's words and a
    leading word, not a verb, that half its server's tools share
    (browser_, kubectl_, maps_)"""
    server, tool = name.split('__')[1:3]
    tool = re.sub(r'([a-z])([A-Z])', r'\1_\2', tool).lower()
    ws = [stem(w) for w in re.split(r'[_-]+', tool) if w]
    if len(ws) > 1 and ws[0] in prefixes[server]:
        ws = ws[1:]
    own = {w for w in ws if w not in words(server.replace('-', ' '))}
    return own or set(ws)


def check_steps(names, errors):
    """steps.json: tasks of step queries, each with gold tools"""
    with open(os.path.join(HERE, 'steps.json')) as f:
        tasks = json.load(f)
    firsts = collections.defaultdict(collections.Counter)
    for n in names:
        tool = re.sub(r'([a-z])([A-Z])', r'\1_\2', n.split('__')[2])
        firsts[server_of(n)][stem(re.split(r'[_-]+', tool.lower())[0])] += 1
    per_server = collections.Counter(server_of(n) for n in names)
    prefixes = {s: {w for w, k in c.items()
                    if 2 * k >= per_server[s] and w not in VERBS}
                for s, c in firsts.items()}
    ids = set()
    for t in tasks:
        if t.get('id') in ids:
            errors.append(f"task id {t.get('id')} repeated")
        ids.add(t.get('id'))
        if not t.get('task') or not t.get('steps'):
            errors.append(f"task {t.get('id')}: no task text or no steps")
        for st in t.get('steps', []):
            q = words(st.get('query', ''))
            for g in st.get('gold') or [None]:
                if g not in names:
                    errors.append(f"task {t['id']}: gold {g} not in catalogue")
                elif name_words(g, prefixes) <= q:
                    errors.append(f"task {t['id']}: {st['query']!r} holds "
                                  f"every word of the name {g}")
    return tasks


def main():
    quiet = '--quiet' in sys.argv
    errors = []
    with open(os.path.join(HERE, 'catalogue.json')) as f:
        catalogue = json.load(f)
    with open(os.path.join(HERE, 'queries.json')) as f:
        queries = json.load(f)

    names = set()
    for t in catalogue:
        if set(t) != {'name', 'description', 'input_schema'}:
            errors.append(f"catalogue: {t.get('name')}: keys {sorted(t)}")
        n = t.get('name', '')
        if not re.fullmatch(r'[a-zA-Z0-9_-]{1,64}', n):
            errors.append(f'catalogue: bad tool name {n!r}')
        if not re.fullmatch(r'mcp__[^_].*?__.+', n):
            errors.append(f'catalogue: not mcp__<server>__<tool>: {n!r}')
        if n in names:
            errors.append(f'catalogue: duplicate name {n}')
        names.add(n)
        if not isinstance(t.get('input_schema'), dict) or t['input_schema'].get('type') != 'object':
            errors.append(f'catalogue: {n}: input_schema is not an object schema')

    ids, texts = set(), {}
    for q in queries:
        qid = q.get('id')
        if qid in ids:
            errors.append(f'query id {qid} repeated')
        ids.add(qid)
        if q.get('kind') not in ('keyword', 'natural'):
            errors.append(f"query {qid}: kind {q.get('kind')!r}")
        text = ' '.join(q.get('query', '').lower().split())
        if not text:
            errors.append(f'query {qid}: empty')
        if text in texts:
            errors.append(f'query {qid}: same text as query {texts[text]}')
        texts[text] = qid
        if q.get('kind') == 'keyword' and not 1 <= len(text.split()) <= 4:
            errors.append(f'query {qid}: keyword query of {len(text.split())} words')
        gold = q.get('gold') or []
        if not gold:
            errors.append(f'query {qid}: no gold')
        if len(set(gold)) != len(gold):
            errors.append(f'query {qid}: gold repeats a tool')
        for g in gold:
            if g not in names:
                errors.append(f'query {qid}: gold {g} not in catalogue')

    tasks = check_steps(names, errors)

    if not quiet:
        per_server_tools = collections.Counter(server_of(n) for n in names)
        kinds = collections.Counter(q['kind'] for q in queries)
        per_server_q = collections.Counter()
        for q in queries:
            for s in sorted({server_of(g) for g in q.get('gold', []) if g in names}):
                per_server_q[(s, q['kind'])] += 1
        print(f'catalogue: {len(names)} tools from {len(per_server_tools)} servers')
        print(f"queries: {len(queries)} ({', '.join(f'{k} {v}' for k, v in sorted(kinds.items()))})")
        print(f"{'server':22} {'tools':>5} {'natural':>7} {'keyword':>7}")
        for s, n in per_server_tools.most_common():
            print(f"{s:22} {n:5} {per_server_q[(s, 'natural')]:7} {per_server_q[(s, 'keyword')]:7}")
        multi = sum(1 for q in queries if len(q['gold']) > 1)
        multi_srv = sum(1 for q in queries if len({server_of(g) for g in q['gold']}) > 1)
        print(f'queries with >1 gold tool: {multi}; with gold on >1 server: {multi_srv}')
        print(f"steps: {len(tasks)} tasks, "
              f"{sum(len(t['steps']) for t in tasks)} step queries")

    for e in errors:
        print('ERROR', e, file=sys.stderr)
    print(f'{len(errors)} problems' if errors else 'ok')
    return 1 if errors else 0


if __name__ == '__main__':
    sys.exit(main())
