"""Starts a real Nginx with the module in its own prefix on loopback.

Used by the integration tests and by the demo.  The nginx binary is
$TOOLSEARCH_NGINX (default /usr/sbin/nginx, Debian's); the module it loads
is $TOOLSEARCH_MODULE, else the ngx_http_toolsearch_module.so next to that
binary, else build/ngx_http_toolsearch_module.so; none when the binary was
built with the module compiled in (--add-module).  Every path nginx writes
is set in the configuration or on the command line, so that no path
compiled into a binary is relied on.

With TOOLSEARCH_VALGRIND=1 nginx runs as a single process under valgrind,
and stop() fails the caller when valgrind reported errors or leaks.  A
binary built with ASan and UBSan (scripts/nginx-build.sh SUITE asan) writes
its reports into the prefix, and stop() fails the caller when there is one.
"""

import os
import re
import shutil
import signal
import socket
import subprocess
import tempfile
import time

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
DEBIAN_NGINX = "/usr/sbin/nginx"
NGINX = os.path.abspath(os.environ.get("TOOLSEARCH_NGINX", DEBIAN_NGINX))
VALGRIND = os.environ.get("TOOLSEARCH_VALGRIND") == "1"
SUPPRESSIONS = os.path.join(ROOT, "t", "valgrind.supp")
UBSAN_SUPPRESSIONS = os.path.join(ROOT, "t", "ubsan.supp")



def configure_args(nginx=NGINX):
    """The configure arguments nginx -V reports ([] without that nginx:
    the tests that start one say so)."""
    try:
        r = subprocess.run([nginx, "-V"], capture_output=True, text=True,
                           timeout=30)
    except OSError:
        return []
    for line in r.stderr.splitlines():
        if line.startswith("configure arguments:"):
            return line.split()[2:]
    return []


def compiled_in(nginx=NGINX):
    """Whether nginx was built with this module (--add-module=DIR)."""
    return any(a.startswith("--add-module=") and os.path.isfile(
                   os.path.join(a.split("=", 1)[1],
                                "ngx_http_toolsearch_module",
                                "ngx_http_toolsearch_module.c"))
               for a in configure_args(nginx))


def module_path():
    """The .so nginx loads, or "" when the module is compiled in."""
    if "TOOLSEARCH_MODULE" in os.environ:
        return os.environ["TOOLSEARCH_MODULE"]
    if compiled_in():
        return ""
    beside = os.path.join(os.path.dirname(os.path.realpath(NGINX)),
                          "ngx_http_toolsearch_module.so")
    if os.path.isfile(beside):
        return beside
    return os.path.join(ROOT, "build", "ngx_http_toolsearch_module.so")


MODULE = module_path()
LOAD_MODULE = "load_module %s;" % MODULE if MODULE else ""
ASAN = "-fsanitize=address" in " ".join(configure_args())

LOG_FORMAT = ('log_format toolsearch \'$request_method $uri $status '
              'decision=$toolsearch_decision in=$toolsearch_bytes_in '
              'out=$toolsearch_bytes_out tools=$toolsearch_tools_total '
              'searches=$toolsearch_searches loaded=$toolsearch_loaded '
              'client=$toolsearch_client format=$toolsearch_format '
              'found=$toolsearch_found_tools '
              'chars=$toolsearch_defer_chars\';')

CONF = """
{load_module}
{main}
worker_processes 1;
{master}
daemon off;
pid {prefix}/nginx.pid;
error_log {prefix}/error.log {log_level};
events {{ worker_connections 256; }}
http {{
    {log_format}
    access_log {prefix}/access.log toolsearch;
    client_body_temp_path {prefix}/client_body;
    proxy_temp_path {prefix}/proxy;
    fastcgi_temp_path {prefix}/fastcgi;
    uwsgi_temp_path {prefix}/uwsgi;
    scgi_temp_path {prefix}/scgi;

    upstream emulator {{
        server 127.0.0.1:{upstream_port};
        keepalive 8;
    }}

    {http}

    server {{
        listen 127.0.0.1:{port};
        listen 127.0.0.1:{h2_port} http2;
        add_header X-Toolsearch-Decision $toolsearch_decision always;
        add_header X-Toolsearch-Tools $toolsearch_tools_total always;

        {server}

        location / {{
            proxy_http_version 1.1;
            proxy_set_header Connection "";
            proxy_set_header Accept-Encoding "";
            proxy_pass http://emulator;
            {location}
        }}
    }}
}}
"""


def sanitizer_env(leaks=True):
    """The environment nginx runs in: with ASan and UBSan, their options
    (the workers inherit them).  Leaks are looked for when nginx stops;
    nginx -t exits keeping its configuration, so there leaks=False."""
    if not ASAN:
        return None
    return dict(os.environ, ASAN_OPTIONS="detect_leaks=%d" % leaks,
                UBSAN_OPTIONS="print_stacktrace=1:suppressions="
                              + UBSAN_SUPPRESSIONS)


def read(path):
    """A file's text, or "" when there is none."""
    try:
        with open(path, errors="replace") as f:
            return f.read()
    except OSError:
        return ""


# the first line of a report: ASan's or LSan's, or UBSan's
REPORT = re.compile(r"==\d+==ERROR: \w+Sanitizer|: runtime error: ")


def sanitizer_reports(text):
    """The sanitizer reports in a text: an ASan or LSan report up to its
    SUMMARY line, a UBSan one with the stack lines that follow it."""
    out, inside = [], None
    for line in text.splitlines(True):
        if REPORT.search(line):
            inside = "asan" if "==ERROR: " in line else "ubsan"
        elif inside == "ubsan" and not line.startswith("    #"):
            inside = None
        if inside:
            out.append(line)
        if inside == "asan" and line.startswith("SUMMARY: "):
            inside = None
    return "".join(out)


def sanitizer_log(prefix):
    """What the sanitizers reported in a prefix, or "".  They write to
    stderr: nginx's output (output.log) until it opens its error log, the
    error log after (workers, which run as another user, could not open
    files of their own in the prefix)."""
    return "".join(sanitizer_reports(read(os.path.join(prefix, name)))
                   for name in ("output.log", "error.log"))


def free_ports(n):
    """n distinct ports the kernel just handed out on loopback: all are
    held bound until the last is chosen, so none is handed out twice."""
    socks = [socket.socket(socket.AF_INET, socket.SOCK_STREAM)
             for _ in range(n)]
    try:
        for s in socks:
            s.bind(("127.0.0.1", 0))
        return [s.getsockname()[1] for s in socks]
    finally:
        for s in socks:
            s.close()


def free_port():
    """A port the kernel just handed out on loopback (bound, then freed)."""
    return free_ports(1)[0]


class Gateway:
    def __init__(self, upstream_port, http="",
                 server="toolsearch on; toolsearch_search hosted;",
                 location="", log_level="info", main="", valgrind=VALGRIND):
        self.valgrind = valgrind
        self.prefix = tempfile.mkdtemp(prefix="toolsearch-t-")
        # workers of a root master run as an unprivileged user
        os.chmod(self.prefix, 0o755)
        self.port, self.h2_port = free_ports(2)
        self.conf = os.path.join(self.prefix, "nginx.conf")
        self.proc = None
        with open(self.conf, "w") as f:
            f.write(CONF.format(
                load_module=LOAD_MODULE, prefix=self.prefix,
                port=self.port,
                h2_port=self.h2_port, upstream_port=upstream_port,
                http=http, server=server, location=location,
                log_format=LOG_FORMAT, log_level=log_level, main=main,
                master="master_process off;" if valgrind else ""))

    def command(self):
        cmd = [NGINX, "-p", self.prefix, "-c", self.conf, "-e",
               os.path.join(self.prefix, "error.log")]
        if self.valgrind:
            cmd = ["valgrind", "--leak-check=full",
                   "--errors-for-leak-kinds=definite", "--error-exitcode=99",
                   "--suppressions=" + SUPPRESSIONS,
                   "--log-file=" + os.path.join(self.prefix, "valgrind.log")
                   ] + cmd
        return cmd

    def sanitizer_log(self):
        """What ASan, LSan and UBSan reported (after stop()), or ""."""
        return sanitizer_log(self.prefix)

    def test_config(self):
        """nginx -t; returns (exit code, output)."""
        r = subprocess.run([NGINX, "-t", "-p", self.prefix, "-c", self.conf,
                            "-e", os.path.join(self.prefix, "error.log")],
                           capture_output=True, text=True, timeout=30,
                           env=sanitizer_env(leaks=False))
        with open(os.path.join(self.prefix, "output.log"), "a") as f:
            f.write(r.stderr)
        return r.returncode, r.stderr

    def start(self, timeout=20.0):
        with open(os.path.join(self.prefix, "output.log"), "wb") as out:
            self.proc = subprocess.Popen(self.command(),
                                         env=sanitizer_env(),
                                         stdout=out, stderr=subprocess.STDOUT)
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            if self.proc.poll() is not None:
                raise RuntimeError("nginx exited: %s\n%s" % (
                    self.proc.returncode, self.error_log()))
            try:
                socket.create_connection(("127.0.0.1", self.port),
                                         timeout=0.2).close()
                return self
            except OSError:
                time.sleep(0.05)
        self.stop()
        raise RuntimeError("nginx did not start within %ss" % timeout)

    def stop(self, timeout=20.0):
        """Stops nginx if it runs; fails the caller when valgrind or the
        sanitizers reported anything."""
        if self.proc is not None:
            self.wait_stopped(timeout)
        if self.sanitizer_log():
            raise AssertionError("the sanitizers reported:\n"
                                 + self.sanitizer_log())

    def wait_stopped(self, timeout):
        """Graceful stop, a kill after timeout seconds.  Under valgrind a
        signal that arrives just after a response can be lost (nginx stays
        in epoll_wait), so the signal is sent again every 2 s."""
        deadline = time.monotonic() + timeout
        while self.proc.poll() is None:
            left = deadline - time.monotonic()
            if left <= 0:
                self.proc.kill()
                self.proc.wait(5)
                break
            self.proc.send_signal(signal.SIGQUIT)
            try:
                self.proc.wait(min(2.0, left))
            except subprocess.TimeoutExpired:
                pass
        rc = self.proc.returncode
        self.proc = None
        if self.valgrind and rc == 99:
            raise AssertionError("valgrind reported errors:\n"
                                 + self.valgrind_log())

    def remove(self):
        """Stops nginx and deletes its prefix."""
        try:
            self.stop()
        finally:
            shutil.rmtree(self.prefix, ignore_errors=True)

    def read(self, name):
        """A file of the prefix, or "" when there is none."""
        return read(os.path.join(self.prefix, name))

    def valgrind_log(self):
        """What valgrind wrote (after stop()), or ""."""
        return self.read("valgrind.log")

    def error_log(self):
        return self.read("error.log")

    def access_log(self):
        return self.read("access.log").splitlines()

    def url(self, path="/v1/messages?beta=true"):
        return "http://127.0.0.1:%d%s" % (self.port, path)
