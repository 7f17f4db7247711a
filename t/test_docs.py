"""The documentation against the tree: every relative link of README.md and
docs/ reaches a file (and a heading, when it names one), the two source
lists name every source file of their folders, and the layout table of
docs/design.md names every file they compile."""

import glob
import os
import re

import pytest

from conftest import ROOT

LINK = re.compile(r"\]\(([^)\s]+)\)")
HEADING = re.compile(r"^#{1,6}\s+(.*?)\s*#*\s*$")
FENCE = re.compile(r"^\s*(```|~~~)")


def markdown_files():
    found = [os.path.join(ROOT, "README.md")]
    for top, _, names in os.walk(os.path.join(ROOT, "docs")):
        found += [os.path.join(top, n) for n in names if n.endswith(".md")]
    return sorted(found)


def prose_lines(path):
    """The lines outside fenced code blocks."""
    fenced = False
    with open(path, encoding="utf-8") as f:
        for line in f:
            if FENCE.match(line):
                fenced = not fenced
            elif not fenced:
                yield line


def slug(heading):
    """The anchor GitHub gives a heading."""
    text = re.sub(r"\[([^\]]*)\]\([^)]*\)", r"\1", heading).lower()
    text = re.sub(r"[^\w\- ]", "", text)
    return text.replace(" ", "-")


def anchors(path):
    seen, out = {}, set()
    for line in prose_lines(path):
        m = HEADING.match(line)
        if not m:
            continue
        s = slug(m.group(1))
        n = seen.get(s, 0)
        seen[s] = n + 1
        out.add(s if n == 0 else "%s-%d" % (s, n))
    return out


def links(path):
    for line in prose_lines(path):
        for target in LINK.findall(line):
            if re.match(r"[a-z]+:", target):
                continue
            yield target


@pytest.mark.parametrize("path", markdown_files(),
                         ids=lambda p: os.path.relpath(p, ROOT))
def test_relative_links_resolve(path):
    broken = []
    for target in links(path):
        file, _, anchor = target.partition("#")
        dest = (os.path.normpath(os.path.join(os.path.dirname(path), file))
                if file else path)
        if not os.path.exists(dest):
            broken.append(target)
        elif anchor and dest.endswith(".md") and anchor not in anchors(dest):
            broken.append(target)
    assert not broken, "links that lead nowhere: %s" % broken


def listed(folder):
    """The files a folder's source list names, from the repository root."""
    with open(os.path.join(ROOT, folder, "sources"), encoding="utf-8") as f:
        return {os.path.join(folder, line.strip()) for line in f
                if re.match(r"^[a-z].*\.[ch]$", line.strip())}


def design_paths():
    """The source files docs/design.md's layout table names by their path,
    with the `x.[ch]` shorthand expanded."""
    out = set()
    with open(os.path.join(ROOT, "docs", "design.md"), encoding="utf-8") as f:
        for line in f:
            if not line.startswith("| `"):
                continue
            for p in re.findall(r"`([\w.\[\]-]+/[\w./\[\]-]+"
                                r"\.(?:\[ch\]|[ch]))`", line):
                if p.endswith(".[ch]"):
                    out |= {p[:-4] + "c", p[:-4] + "h"}
                else:
                    out.add(p)
    return out


def test_design_map_matches_the_tree():
    compiled = listed("src") | listed("ngx_http_toolsearch_module")
    named = design_paths()
    existing = {p for p in named if os.path.exists(os.path.join(ROOT, p))}
    assert named == existing, "named but absent: %s" % sorted(named - existing)
    assert compiled <= named, \
        "compiled, not in docs/design.md: %s" % sorted(compiled - named)


def test_source_lists_name_every_file():
    """A file missing from its list would not be compiled, nor a header
    rebuild what includes it."""
    on_disk = {os.path.relpath(p, ROOT) for p in
               glob.glob(os.path.join(ROOT, "src", "*", "*.[ch]"))
               + glob.glob(os.path.join(ROOT, "ngx_http_toolsearch_module",
                                        "*.[ch]"))
               if os.sep + "cli" + os.sep not in p}
    assert on_disk == listed("src") | listed("ngx_http_toolsearch_module")


def path_table():
    """(function, file) of each row of docs/design.md's table of a
    request's path."""
    with open(os.path.join(ROOT, "docs", "design.md"), encoding="utf-8") as f:
        section = f.read().split("## A request's path", 1)[1]
    rows = re.findall(r"^\| [^|]+ \| `(\w+)\(\)` \(`([\w./]+)`\) \|",
                      section.split("\n\n", 2)[1], re.M)
    return rows


def test_path_table_names_defined_functions():
    rows = path_table()
    assert len(rows) >= 8, rows
    missing = []
    for function, path in rows:
        if "/" not in path:
            path = os.path.join("ngx_http_toolsearch_module", path)
        with open(os.path.join(ROOT, path), encoding="utf-8") as f:
            if not re.search(r"^%s\(" % function, f.read(), re.M):
                missing.append("%s() in %s" % (function, path))
    assert not missing, "not defined where the path table says: %s" % missing
