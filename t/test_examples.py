"""Every configuration in docs/examples/ passes nginx -t with the module
loaded.  Upstream host names become 127.0.0.1 (no DNS needed), log files
(the default one too: a binary's compiled-in path is not relied on) and
the included claude-code.conf point into the test's prefix."""

import glob
import os
import re
import shutil
import subprocess
import sys
import tempfile

import pytest

from conftest import ROOT
from gateway import (LOAD_MODULE, NGINX, free_port, sanitizer_env,
                     sanitizer_log, sanitizer_reports)

EXAMPLES = os.path.join(ROOT, "docs", "examples")
CLAUDE_CODE = os.path.join(EXAMPLES, "claude-code.conf")

MAIN = """
{load_module}
pid {prefix}/nginx.pid;
error_log {prefix}/error.log;
events {{ worker_connections 64; }}
http {{
    access_log {prefix}/access.log;
    client_body_temp_path {prefix}/client_body;
    proxy_temp_path {prefix}/proxy;
    fastcgi_temp_path {prefix}/fastcgi;
    uwsgi_temp_path {prefix}/uwsgi;
    scgi_temp_path {prefix}/scgi;
    {http}
}}
"""


def localize(text, prefix):
    """The example as nginx -t can check it on any machine."""
    text = re.sub(r"(\bserver\s+)[a-z][a-z0-9.-]*(:\d+;)",
                  r"\g<1>127.0.0.1\2", text)
    text = re.sub(r"\blisten\s+(127\.0\.0\.1:)?\d+", lambda m:
                  "listen 127.0.0.1:%d" % free_port(), text)
    text = text.replace("/var/log/nginx/", prefix + "/")
    return text.replace("/etc/nginx/toolsearch/claude-code.conf",
                        CLAUDE_CODE)


def nginx_t(http):
    prefix = tempfile.mkdtemp(prefix="toolsearch-ex-")
    try:
        conf = os.path.join(prefix, "nginx.conf")
        with open(conf, "w") as f:
            f.write(MAIN.format(load_module=LOAD_MODULE, prefix=prefix,
                                http=localize(http, prefix)))
        r = subprocess.run([NGINX, "-t", "-p", prefix, "-c", conf, "-e",
                            os.path.join(prefix, "error.log")],
                           capture_output=True, text=True, timeout=30,
                           env=sanitizer_env(leaks=False))
        assert sanitizer_log(prefix) + sanitizer_reports(r.stderr) == ""
        return r
    finally:
        shutil.rmtree(prefix, ignore_errors=True)


@pytest.mark.parametrize("path", sorted(glob.glob(
    os.path.join(EXAMPLES, "*.conf"))), ids=os.path.basename)
def test_example_passes_nginx_t(path):
    with open(path) as f:
        text = f.read()
    if os.path.basename(path) == "claude-code.conf":
        # a snippet for a location: check it where it is meant to go
        text = ("server { listen 8080; location / { toolsearch on; "
                "include %s; } }" % path)
    r = nginx_t(text)
    assert r.returncode == 0, r.stderr
    assert "test is successful" in r.stderr


def test_examples_use_every_new_directive():
    texts = "".join(open(p).read() for p in glob.glob(
        os.path.join(EXAMPLES, "*.conf")))
    for directive in ("toolsearch_zone", "toolsearch_status",
                      "toolsearch_upstream vertex", "toolsearch_upstream "
                      "bedrock", "toolsearch_upstream_tool_reference on",
                      "limit_req ", "proxy_ssl_server_name on",
                      "toolsearch_recall ", "$toolsearch_tokens_saved"):
        assert directive in texts, directive


def test_make_run_shows_what_the_model_sees():
    """`make run` (t/demo.py): each replayed request, Claude Code's and a
    recorded client of each MCP naming style, with the tool-definition
    bytes and tokens the model sees before -> after, and the total saved."""
    out = subprocess.run([sys.executable, os.path.join(ROOT, "t", "demo.py")],
                         capture_output=True, text=True, timeout=120)
    assert out.returncode == 0, out.stderr
    rows = {line.split()[0] if not line.startswith("/") else
            line.split()[1]: line for line in out.stdout.splitlines()
            if " -> " in line}
    for name in ("ts-unset/002.json", "opencode", "cline", "ai-sdk",
                 "qwen-code-nosearch"):
        line = rows[name]
        before, after = (int(x.replace(",", "")) for x in
                         line.split(" -> ")[0].split()[-1:] +
                         line.split(" -> ")[1].split()[:1])
        assert "deferred_" in line and after < before / 2, line
    assert "total over 10 requests" in out.stdout
    assert "the gateway's estimate" in out.stdout
