"""Writes the measured tables of docs/clients.md from the measurements of
the last `make e2e` run (build/e2e/measurements.json, written by the tests):
Claude Code and the TypeScript SDK on the Messages API, the agent clients
on Chat Completions and Responses (t/e2e/test_e2e_agents.py).

    python3 t/e2e/report.py [MEASUREMENTS] [DOC]

Only the part between the two marker lines of DOC is replaced."""

import json
import os
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(os.path.dirname(HERE))
sys.path.insert(0, os.path.dirname(HERE))

from measure import tokens                                 # noqa: E402

BEGIN = "<!-- measured by make e2e: begin -->"
END = "<!-- measured by make e2e: end -->"


def mean(values):
    return round(sum(values) / len(values)) if values else 0


def num(n):
    return "{:,}".format(n)


def side(run, key):
    return mean([r[key] for r in run["requests"]])


# a scenario's API, as the tables name it (Messages when it says none)
FORMATS = {"messages": "Messages", "chat_completions": "Chat Completions",
           "responses": "Responses"}


def api(sc):
    return FORMATS[sc.get("format", "messages")]


def summary_row(sc):
    w, wo = sc["with"], sc["without"]
    ctx_w, ctx_wo = side(w, "context_bytes"), side(wo, "context_bytes")
    if wo["ok"]:
        saved = "%d %%" % round(100 * (ctx_wo - ctx_w) / ctx_wo) \
            if ctx_wo else "–"
        without = "%s (≈ %s)" % (num(ctx_wo), num(tokens(ctx_wo)))
    else:
        saved = "session fails without the module"
        without = "%s (≈ %s), then 400" % (num(ctx_wo), num(tokens(ctx_wo)))
    return ("| %s | %s | %s | `%s` | %d / %d | %s / %s | %s (≈ %s) | %s "
            "| %s |") % (
        sc["client"], api(sc), sc["title"], sc["decision"],
        len(w["requests"]), len(wo["requests"]),
        num(side(w, "tools_bytes")), num(side(wo, "tools_bytes")),
        num(ctx_w), num(tokens(ctx_w)), without, saved)


def turns(run):
    return " · ".join(num(r["context_bytes"]) for r in run["requests"])


def render(data):
    out = [
        "Measured with Claude Code %s, @anthropic-ai/sdk %s and the agent "
        "clients `t/e2e/agents/package.json` pins. Per upstream request, "
        "averaged over the session:" % (data["claude_code"], data["sdk"]),
        "",
        "| client | API | scenario | decision | upstream requests, with / "
        "without | `tools[]` bytes sent, with / without | tool definitions "
        "the model sees, with: bytes (≈ tokens) | without | saved |",
        "|---|---|---|---|---|---|---|---|---|",
    ]
    out += [summary_row(sc) for sc in data["scenarios"]]
    out += [
        "",
        "Tool definitions the model sees, bytes, request by request "
        "(with the module; without it):",
        "",
        "| client | API | scenario | with | without |",
        "|---|---|---|---|---|",
    ]
    out += ["| %s | %s | %s | %s | %s |" % (
        sc["client"], api(sc), sc["title"], turns(sc["with"]),
        turns(sc["without"])) for sc in data["scenarios"]]
    return "\n".join(out) + "\n"


def main():
    src = sys.argv[1] if len(sys.argv) > 1 else \
        os.path.join(ROOT, "build", "e2e", "measurements.json")
    doc = sys.argv[2] if len(sys.argv) > 2 else \
        os.path.join(ROOT, "docs", "clients.md")
    with open(src) as f:
        data = json.load(f)
    with open(doc) as f:
        text = f.read()
    head, sep1, rest = text.partition(BEGIN + "\n")
    _, sep2, tail = rest.partition(END)
    if not sep1 or not sep2:
        sys.exit("%s: the marker lines are missing" % doc)
    new = head + BEGIN + "\n" + render(data) + END + tail
    if new != text:
        with open(doc, "w") as f:
            f.write(new)
        print("updated the measured tables of %s" % os.path.relpath(doc, ROOT))
    return 0


if __name__ == "__main__":
    sys.exit(main())
