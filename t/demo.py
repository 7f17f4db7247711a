"""make run: the gateway in front of the bundled emulator, on loopback.

Starts the Messages API emulator (playing the first-party API) and a real
Nginx with the module, replays requests recorded from Claude Code through
the gateway and prints, for each, what the gateway did and what the model
sees of the tools: the bytes of the tool definitions it sees and their
estimated tokens before (as the client sent them) and after (as the
upstream got them), the gateway's own estimate ($toolsearch_tokens_saved:
the deferred definitions' bytes as the request carried them, at the same
2.5 bytes per token), then the totals.  On the hosted path the deferred
definitions still travel upstream, so the body grows a little, but the
model does not see them; gateway-executed search (the /compatible route)
leaves them out and lists their names in the system prompt, which is not
counted here.
With --serve it then keeps running until Ctrl-C so you can send your own
requests.
"""

import argparse
import json
import os
import sys
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))

from conftest import client_requests, load_fixture, request   # noqa: E402
from emulator import Emulator                  # noqa: E402
from gateway import Gateway                    # noqa: E402
import measure                                              # noqa: E402
from measure import tokens                                  # noqa: E402

# (route, recorded request): "" is the anthropic profile (hosted search),
# /compatible an upstream without tool search (gateway-executed search)
REPLAY = [("", "ts-unset/002.json"), ("", "ts-unset/003.json"),
          ("/compatible", "ts-unset/002.json"), ("", "ts-true/004.json"),
          ("", "ts-true-haiku45/002.json"),
          ("", "ts-true-nonstream/007.json")]

# the first request with tools of a recorded client of each way of naming
# MCP tools (t/fixtures/clients): server_tool, server__tool, bare MCP
# names, mcp__server__tool
CLIENTS = [("", "opencode"), ("/compatible", "cline"), ("", "ai-sdk"),
           ("/compatible", "qwen-code-nosearch")]

COMPATIBLE = """
    location /compatible/ {
        toolsearch_upstream compatible;
        proxy_http_version 1.1;
        proxy_set_header Connection "";
        proxy_set_header Accept-Encoding "";
        proxy_pass http://emulator/;
    }
"""

LOG = ("log_format demo '$toolsearch_decision "
       "saved=$toolsearch_tokens_saved in=$toolsearch_bytes_in "
       "out=$toolsearch_bytes_out tools=$toolsearch_tools_total "
       "deferred=$toolsearch_tools_deferred';")


def seen_bytes(body):
    """Bytes of the tool definitions the model sees, or None."""
    try:
        return measure.seen_bytes(json.loads(body))
    except (ValueError, AttributeError):
        return None


def replay(gw, emu, route, name):
    fx = load_fixture(name)
    return send(gw, emu, route, name, fx.url, fx.body, fx.headers)


def replay_client(gw, emu, route, client):
    """The client's first request with tools."""
    _, body, headers = next(
        r for r in client_requests(client) if json.loads(r[1]).get("tools"))
    url = dict(headers)["path"]
    return send(gw, emu, route, client, url, body,
                [(k, v) for k, v in headers if k != "path"])


def send(gw, emu, route, name, url, body, headers):
    emu.reset()
    r = request(gw, "POST", route + url, body, headers)
    got = emu.last()
    return {"name": route + " " + name if route else name,
            "decision": r.decision, "status": r.status,
            "before": seen_bytes(body),
            "after": seen_bytes(got.body if got else b"")}


def saved_of(line):
    """$toolsearch_tokens_saved of an access log line."""
    for field in line.split():
        if field.startswith("saved="):
            return int(field[len("saved="):])
    return 0


def table(rows):
    widths = [max(len(r[i]) for r in rows) for i in range(len(rows[0]))]
    for r in rows:
        print("  ".join(c.ljust(w) for c, w in zip(r, widths)).rstrip())


def arrow(a, b):
    return "%s -> %s" % ("{:,}".format(a), "{:,}".format(b))


def report(results, logged):
    rows = [["request", "decision", "model sees: bytes", "~ tokens",
             "gateway: saved", "status"]]
    for res, line in zip(results, logged):
        b, a = res["before"], res["after"]
        rows.append([res["name"], res["decision"], arrow(b, a),
                     arrow(tokens(b), tokens(a)), str(saved_of(line)),
                     str(res["status"])])
    table(rows)
    before = sum(r["before"] for r in results)
    after = sum(r["after"] for r in results)
    print("\ntotal over %d requests: the model sees %s bytes of tool "
          "definitions (~ %s tokens);\nsaved %s bytes, ~ %s tokens (%d %%); "
          "the gateway's estimate: %s tokens"
          % (len(results), arrow(before, after),
             arrow(tokens(before), tokens(after)),
             "{:,}".format(before - after),
             "{:,}".format(tokens(before) - tokens(after)),
             round(100 * (before - after) / before) if before else 0,
             "{:,}".format(sum(saved_of(line) for line in logged))))


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--serve", action="store_true",
                    help="keep the gateway running until Ctrl-C")
    args = ap.parse_args()

    emu = Emulator().start()
    gw = Gateway(emu.port, http=LOG, server="toolsearch on; "
                 "toolsearch_upstream anthropic; "
                 "access_log demo.log demo;" + COMPATIBLE).start()
    try:
        print("gateway  http://127.0.0.1:%d  ->  emulator 127.0.0.1:%d\n"
              % (gw.port, emu.port))
        results = [replay(gw, emu, route, n) for route, n in REPLAY] + [
            replay_client(gw, emu, route, c) for route, c in CLIENTS]
        time.sleep(0.2)
        logged = gw.read("demo.log").splitlines()[-len(results):]
        report(results, logged)
        print("\n(bytes on the wire are in=/out= of the access log: on the "
              "hosted path the deferred\ndefinitions still travel upstream, "
              "but the model does not see them)")
        print("\naccess log:")
        for line in logged:
            print("  " + line)
        if args.serve:
            print("\nserving; try: curl -H 'Content-Type: application/json' "
                  "--data-binary @t/fixtures/claude-code/ts-unset/002.json "
                  "%s   (Ctrl-C stops)" % gw.url())
            while True:
                time.sleep(3600)
    except KeyboardInterrupt:
        pass
    finally:
        gw.remove()
        emu.stop()
    return 0


if __name__ == "__main__":
    sys.exit(main())
