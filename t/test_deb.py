"""make deb builds libnginx-mod-http-toolsearch; installed with apt-get it
puts the module where Debian's nginx loads it from, enables it through
modules-enabled like Debian's own libnginx-mod-* packages, and a purge
leaves nothing behind."""

import os
import shutil
import subprocess
import tempfile

import pytest

from conftest import ROOT
from gateway import DEBIAN_NGINX, NGINX

PKG = "libnginx-mod-http-toolsearch"
SO = "/usr/lib/nginx/modules/ngx_http_toolsearch_module.so"
SNIPPET = "/usr/share/nginx/modules-available/mod-http-toolsearch.conf"
LINK = "/etc/nginx/modules-enabled/50-mod-http-toolsearch.conf"

CONF = """
include /etc/nginx/modules-enabled/*.conf;
pid {prefix}/nginx.pid;
error_log {prefix}/error.log;
events {{ worker_connections 64; }}
http {{
    access_log off;
    client_body_temp_path {prefix}/client_body;
    proxy_temp_path {prefix}/proxy;
    fastcgi_temp_path {prefix}/fastcgi;
    uwsgi_temp_path {prefix}/uwsgi;
    scgi_temp_path {prefix}/scgi;
    toolsearch_zone toolsearch 64k;
    server {{
        listen 127.0.0.1:9;
        location /v1/ {{
            toolsearch on;
            toolsearch_defer auto;
            proxy_pass http://127.0.0.1:9;
        }}
        location = /status {{ toolsearch_status; }}
    }}
}}
"""

pytestmark = [
    pytest.mark.skipif(os.path.realpath(NGINX) != DEBIAN_NGINX,
                       reason="the .deb is for Debian's nginx (%s); this run "
                       "tests %s" % (DEBIAN_NGINX, NGINX)),
    pytest.mark.skipif(os.geteuid() != 0,
                       reason="installing a .deb needs root"),
    pytest.mark.skipif(shutil.which("apt-get") is None,
                       reason="not a Debian system (no apt-get)"),
]

ENV = dict(os.environ, DEBIAN_FRONTEND="noninteractive")


def run(*cmd):
    r = subprocess.run(cmd, capture_output=True, text=True, timeout=300,
                       env=ENV)
    assert r.returncode == 0, (cmd, r.stdout, r.stderr)
    return r.stdout


def installed():
    r = subprocess.run(["dpkg-query", "-W", "-f=${Status}", PKG],
                       capture_output=True, text=True)
    return "installed" in r.stdout.split()


def nginx_t():
    prefix = tempfile.mkdtemp(prefix="toolsearch-deb-")
    try:
        conf = os.path.join(prefix, "nginx.conf")
        with open(conf, "w") as f:
            f.write(CONF.format(prefix=prefix))
        # Debian's own prefix: "modules/" is /usr/share/nginx/modules
        return subprocess.run(
            [DEBIAN_NGINX, "-t", "-c", conf, "-e",
             os.path.join(prefix, "error.log")],
            capture_output=True, text=True, timeout=30)
    finally:
        shutil.rmtree(prefix, ignore_errors=True)


@pytest.fixture
def deb():
    if installed():
        pytest.skip(PKG + " is installed on this machine: left alone")
    out = run("make", "-s", "-C", ROOT, "deb").strip().splitlines()[-1]
    path = os.path.join(ROOT, out)
    yield path
    subprocess.run(["dpkg", "--purge", PKG], capture_output=True,
                   timeout=120, env=ENV)


def test_deb_installs_loads_and_purges(deb):
    fields = run("dpkg-deb", "-f", deb, "Package", "Depends")
    abi = run("dpkg-query", "-W", "-f=${Provides}", "nginx")
    assert "Package: " + PKG in fields
    depends = fields.split("Depends: ")[1]
    assert [d for d in abi.replace(" ", "").split(",")
            if d.startswith("nginx-abi-")][0] in depends
    assert "libcjson1 (>= " in depends and "libpcre2-8-0 (>= " in depends

    run("apt-get", "install", "-y", "--no-install-recommends", deb)
    assert installed()
    assert os.path.isfile(SO)
    with open(SNIPPET) as f:
        assert f.read() == \
            "load_module modules/ngx_http_toolsearch_module.so;\n"
    assert os.readlink(LINK) == SNIPPET

    r = nginx_t()
    assert r.returncode == 0, r.stderr
    assert "test is successful" in r.stderr

    # remove keeps the administrator's choice aside; reinstall restores it
    run("dpkg", "--remove", PKG)
    assert not os.path.exists(SO)
    assert not os.path.lexists(LINK) and os.path.islink(LINK + ".removed")
    assert "unknown directive \"toolsearch_zone\"" in nginx_t().stderr
    run("dpkg", "-i", deb)
    assert os.readlink(LINK) == SNIPPET
    assert not os.path.lexists(LINK + ".removed")

    run("dpkg", "--purge", PKG)
    assert not installed()
    assert not os.path.lexists(LINK)
    assert not os.path.lexists(LINK + ".removed")
    assert not os.path.exists(SO) and not os.path.exists(SNIPPET)
