#!/usr/bin/env python3
"""Prints which glue files call functions of which others, from the
objects of the module's build, and exits 1 when the calls go round in a
circle (docs/design.md: the glue's files call one another one way only).

    scripts/glue-calls.py [OBJECT_DIR]

OBJECT_DIR defaults to build/nginx/objs/addon/ngx_http_toolsearch_module,
where `make` compiles the glue.  A reference to data (the module's
ngx_module_t, which every file names) is no call and is not counted."""

import os
import subprocess
import sys

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
DEFAULT = os.path.join(ROOT, "build", "nginx", "objs", "addon",
                       "ngx_http_toolsearch_module")


def nm(args, path):
    out = subprocess.run(["nm"] + args + [path], check=True,
                         capture_output=True, text=True).stdout
    return [line.split() for line in out.splitlines() if line.strip()]


def calls(objdir):
    """{(caller file, callee file): [functions]} between the objects."""
    objs = sorted(f for f in os.listdir(objdir) if f.endswith(".o"))
    if not objs:
        sys.exit("%s: no objects; run make first" % objdir)
    defined = {}
    for o in objs:
        for f in nm(["--defined-only"], os.path.join(objdir, o)):
            if len(f) == 3 and f[1] == "T":
                defined[f[2]] = o[:-2]
    edges = {}
    for o in objs:
        for f in nm(["-u"], os.path.join(objdir, o)):
            callee = defined.get(f[-1])
            if callee and callee != o[:-2]:
                edges.setdefault((o[:-2], callee), []).append(f[-1])
    return edges


def circle(edges):
    """A list of files that call round in a circle, or None."""
    graph = {}
    for a, b in edges:
        graph.setdefault(a, []).append(b)
    state = {}

    def visit(node, path):
        state[node] = 1
        for nxt in graph.get(node, []):
            if state.get(nxt) == 1:
                return path[path.index(nxt):] + [nxt]
            if nxt not in state:
                found = visit(nxt, path + [nxt])
                if found:
                    return found
        state[node] = 2
        return None

    for node in sorted(graph):
        if node not in state:
            found = visit(node, [node])
            if found:
                return found
    return None


def main():
    objdir = sys.argv[1] if len(sys.argv) > 1 else DEFAULT
    edges = calls(objdir)
    prefix = "ngx_http_toolsearch_"
    for (a, b), names in sorted(edges.items()):
        print("%s -> %s: %s" % (a[len(prefix):], b[len(prefix):],
                                " ".join(sorted(names))))
    found = circle(edges)
    if found:
        print("circle: " + " -> ".join(found))
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
