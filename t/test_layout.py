"""The glue's files call one another one way only (docs/design.md#layout):
scripts/glue-calls.py reads the calls from the objects `make` built.  The
engine's folders include only their own floor and those below it."""

import glob
import os
import re
import subprocess
import sys

from conftest import ROOT

SCRIPT = os.path.join(ROOT, "scripts", "glue-calls.py")
OBJECTS = os.path.join(ROOT, "build", "nginx", "objs", "addon",
                       "ngx_http_toolsearch_module")


def test_glue_files_call_one_way():
    r = subprocess.run([sys.executable, SCRIPT, OBJECTS],
                       capture_output=True, text=True)
    assert r.returncode == 0, r.stdout + r.stderr
    # the handler's calls are seen: the objects are the glue's
    assert "handler -> body:" in r.stdout


def engine_floors():
    """The engine's folders as docs/design.md's map draws them, bottom
    first: the map lists them top down."""
    with open(os.path.join(ROOT, "docs", "design.md"), encoding="utf-8") as f:
        text = f.read()
    layout = text.split("## Layout", 1)[1]
    drawing = layout.split("```", 2)[1]
    return re.findall(r"src/(\w+)", drawing)[::-1]


def engine_includes():
    """(file, line number, folder it includes) for every
    #include "folder/ts_x.h" of src/*/*.[ch]."""
    for path in sorted(glob.glob(os.path.join(ROOT, "src", "*", "*.[ch]"))):
        with open(path, encoding="utf-8") as f:
            for n, line in enumerate(f, 1):
                m = re.match(r'\s*#\s*include\s+"(\w+)/[^"]+"', line)
                if m:
                    yield os.path.relpath(path, ROOT), n, m.group(1)


def test_engine_floors_include_down():
    floors = engine_floors()
    assert floors == ["scan", "messages", "rewrite", "search", "loop",
                      "chat", "responses"], floors
    wrong = []
    for path, n, inc in engine_includes():
        folder = path.split(os.sep)[1]
        if folder == "cli":
            continue
        assert folder in floors, "%s: a folder the map does not show" % path
        if inc not in floors or floors.index(inc) > floors.index(folder):
            wrong.append("%s:%d includes %s/" % (path, n, inc))
    assert not wrong, "includes reaching up a floor:\n" + "\n".join(wrong)


def design_glue_calls():
    """{caller: {callees}} of docs/design.md's sentence "`module` calls
    `conf`, ...; `handler` calls ...": the glue's calls as the map says."""
    with open(os.path.join(ROOT, "docs", "design.md"), encoding="utf-8") as f:
        text = " ".join(f.read().split())
    sentence = text.split("The glue's files call one another one way only, "
                          "from the module down:", 1)[1].split(".", 1)[0]
    said = {}
    for clause in re.split(r";|, and ", sentence):
        caller, _, callees = clause.partition(" calls ")
        said[caller.strip().strip("`")] = set(re.findall(r"`(\w+)`", callees))
    return said


def test_design_names_the_glue_calls():
    r = subprocess.run([sys.executable, SCRIPT, OBJECTS],
                       capture_output=True, text=True)
    assert r.returncode == 0, r.stdout + r.stderr
    built = {}
    for line in r.stdout.splitlines():
        m = re.match(r"(\w+) -> (\w+):", line)
        if m:
            built.setdefault(m.group(1), set()).add(m.group(2))
    assert built, r.stdout
    assert design_glue_calls() == built
