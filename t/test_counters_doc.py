"""The counters exist once, in src/rewrite/ts_counters.h: docs/directives.md
lists what that table gives (scripts/counters-doc.py --check), and a real
Nginx with the module registers those variables and shows those metrics."""

import importlib.util
import json
import os
import re
import subprocess
import sys

from conftest import ROOT, load_fixture, request

SCRIPT = os.path.join(ROOT, "scripts", "counters-doc.py")
DOC = os.path.join(ROOT, "docs", "directives.md")
VARIABLES_C = os.path.join(ROOT, "ngx_http_toolsearch_module",
                           "ngx_http_toolsearch_variables.c")

spec = importlib.util.spec_from_file_location("counters_doc", SCRIPT)
counters_doc = importlib.util.module_from_spec(spec)
spec.loader.exec_module(counters_doc)

# the metrics by decision, which are no counters of a request
FAMILIES = ["requests", "passthroughs"]


def variables():
    """Every $toolsearch_* variable: the table's and the glue's own."""
    with open(VARIABLES_C) as f:
        own = re.findall(r"NGX_HTTP_TOOLSEARCH_VAR\((\w+), \w+, 0\)",
                         f.read())
    return set(own) | set(counters_doc.variables())


def documented_variables():
    """The variables of the table of docs/directives.md#variables."""
    with open(DOC) as f:
        doc = f.read()
    section = doc[doc.index("\n## Variables\n"):]
    section = section[:section.index("\n### ")]
    return set(re.findall(r"^\| `\$toolsearch_(\w+)` \|", section, re.M))


def test_generated_sections_match_the_table():
    r = subprocess.run([sys.executable, SCRIPT, "--check"],
                       capture_output=True, text=True)
    assert r.returncode == 0, r.stdout + r.stderr


def test_every_variable_is_documented():
    assert documented_variables() == variables()


def test_nginx_has_the_tables_variables_and_metrics(emulator, gateway):
    names = counters_doc.variables()
    log = "log_format all '%s';" % " ".join(
        "%s=$toolsearch_%s" % (n, n) for n in names)
    gw = gateway(http="toolsearch_zone ts 64k; " + log, server="""
        toolsearch on;
        toolsearch_upstream anthropic;
        access_log all.log all;
        location = /status { toolsearch_status; }
    """)
    fx = load_fixture("ts-unset/002.json")
    r = request(gw, "POST", fx.url, fx.body, fx.headers)
    assert r.status == 200 and r.decision == "deferred_hosted"

    status = json.loads(request(gw, "GET", "/status").body)
    assert set(status) == {"zone", "formats"} | set(FAMILIES) | \
        set(counters_doc.metrics())
    assert status["tools_seen"] == 149
    for each in status["formats"]:
        assert set(each) == {"format"} | set(FAMILIES) | \
            set(counters_doc.metrics())

    prom = request(gw, "GET", "/status?format=prometheus").body.decode()
    shown = re.findall(r"^# TYPE toolsearch_(\w+)_total counter$", prom,
                       re.M)
    assert shown == FAMILIES + counters_doc.metrics()

    with open(os.path.join(gw.prefix, "all.log")) as f:
        line = f.read().splitlines()[0]
    values = dict(field.split("=") for field in line.split())
    assert list(values) == names
    assert all(v.isdigit() for v in values.values()), line
    assert values["tools_total"] == "149"
