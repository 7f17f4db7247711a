"""What the benchmark scripts share: the machine line and the sections of
docs/benchmarks.md, each between its own markers so that every script
regenerates its part and leaves the others as they are.  Importing it puts
the test harness of t/ (gateway, emulator) on the path."""

import os
import platform
import re
import sys

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
sys.path.insert(0, os.path.join(ROOT, "t"))
DOC = os.path.join(ROOT, "docs", "benchmarks.md")
# server settings of every benchmark nginx: the whole body in memory,
# keepalive to the upstream, no access log
NGINX_COMMON = """
    access_log off;
    client_max_body_size 16m;
    client_body_buffer_size 16m;
    proxy_http_version 1.1;
    proxy_set_header Connection "";
"""



def locations(name, upstream, search):
    """/plain/ (proxy_pass) and /NAME/ (the module with an upstream
    profile and a search mode), both to the harness's upstream"""
    return """
    location /plain/ {
        proxy_pass http://emulator/;
    }
    location /%s/ {
        toolsearch on;
        toolsearch_upstream %s;
        toolsearch_search %s;
        proxy_pass http://emulator/;
    }
""" % (name, upstream, search)


HEAD = ("# Benchmarks\n\nEvery figure is measured by a script of `bench/` "
        "against a baseline measured in the same run.\n")


def machine():
    model = "unknown CPU"
    with open("/proc/cpuinfo") as f:
        for line in f:
            if line.startswith("model name"):
                model = line.split(":", 1)[1].strip()
                break
    return "%s, %d cores, %s" % (model, os.cpu_count(), platform.platform())


def markers(name):
    return "<!-- %s:begin -->" % name, "<!-- %s:end -->" % name


def heading(name, title, script):
    """the first lines of the section name: its marker, its title, the
    script that writes it and the machine"""
    return [markers(name)[0], "## " + title, "",
            "`make bench` (%s). Machine: %s." % (script, machine()), ""]


def write_section(name, text):
    """replaces the section name (text includes its markers), or appends
    it when the document does not have it yet"""
    begin, end = markers(name)
    old = open(DOC).read() if os.path.exists(DOC) else HEAD
    pattern = re.escape(begin) + ".*?" + re.escape(end)
    if re.search(pattern, old, flags=re.S):
        new = re.sub(pattern, lambda _: text, old, flags=re.S)
    else:
        new = old.rstrip("\n") + "\n\n" + text + "\n"
    with open(DOC, "w") as f:
        f.write(new)


def publish(name, text):
    """writes the section name and shows it"""
    write_section(name, text)
    print(text)


def discovery_section(name, lines, results, table):
    """a session-cost section: its first lines, a table per discovery
    count (results: (count, rows)), its end marker"""
    for discoveries, rows in results:
        lines += table(discoveries, rows) + [""]
    lines.append(markers(name)[1])
    return "\n".join(lines)


def discovery_main(name, counts, measure, section):
    """measures each discovery count and publishes the section; with
    --quick, 4 discoveries only, and the section printed"""
    quick = "--quick" in sys.argv
    text = section([(d, measure(d)) for d in ((4,) if quick else counts)])
    if quick:
        print(text)
    else:
        publish(name, text)
    return 0


def median(values):
    v = sorted(values)
    return v[len(v) // 2]
