"""make run: the gateway in front of the bundled emulator, on loopback.

Starts the Messages API emulator (playing the first-party API) and a real
Nginx with the module, replays requests recorded from Claude Code through
the gateway and prints, for each, what the gateway did: the decision, bytes
and tools in and out, how many tools the model no longer sees up front, and
the upstream's answer.  With --serve it then keeps running until Ctrl-C so
you can send your own requests.
"""

import argparse
import json
import os
import sys
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))

from conftest import load_fixture, request     # noqa: E402
from emulator import Emulator                  # noqa: E402
from gateway import Gateway                    # noqa: E402

REPLAY = ["ts-unset/002.json", "ts-unset/003.json", "ts-true/004.json",
          "ts-true-haiku45/002.json", "ts-true-nonstream/007.json"]


def tools_of(body, deferred=False):
    try:
        tools = json.loads(body).get("tools", [])
    except ValueError:
        return "-"
    if deferred:
        return sum(1 for t in tools if t.get("defer_loading") is True)
    return len(tools)


def replay(gw, emu, name):
    fx = load_fixture(name)
    emu.reset()
    r = request(gw, "POST", fx.url, fx.body, fx.headers)
    got = emu.last()
    sent = got.body if got else b""
    return [name, r.decision, len(fx.body), len(sent), tools_of(fx.body),
            tools_of(sent), tools_of(sent, deferred=True), r.status,
            "yes" if sent == fx.body else "no"]


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--serve", action="store_true",
                    help="keep the gateway running until Ctrl-C")
    args = ap.parse_args()

    emu = Emulator().start()
    gw = Gateway(emu.port, server="toolsearch on; "
                 "toolsearch_upstream anthropic;").start()
    try:
        print("gateway  http://127.0.0.1:%d  ->  emulator 127.0.0.1:%d\n"
              % (gw.port, emu.port))
        cols = ["request", "decision", "bytes in", "bytes out", "tools in",
                "tools out", "deferred", "status", "unchanged"]
        rows = [cols] + [[str(c) for c in replay(gw, emu, n)]
                         for n in REPLAY]
        widths = [max(len(r[i]) for r in rows) for i in range(len(cols))]
        for r in rows:
            print("  ".join(c.ljust(w) for c, w in zip(r, widths)))
        print("\naccess log:")
        time.sleep(0.2)
        for line in gw.access_log()[-len(REPLAY):]:
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
