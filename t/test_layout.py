"""The glue's files call one another one way only (docs/design.md#layout):
scripts/glue-calls.py reads the calls from the objects `make` built."""

import os
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
