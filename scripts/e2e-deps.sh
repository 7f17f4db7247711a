#!/bin/sh
# Installs the real clients of `make e2e` into a folder of the build tree:
#   scripts/e2e-deps.sh DIR
# DIR/node_modules gets the npm packages pinned by t/e2e/package.json and
# t/e2e/package-lock.json (npm ci). The install is kept between runs and
# redone only when the lock file changes. Node.js and npm come from the
# machine; as root, Debian's nodejs and npm are installed when missing.

set -e

dir=${1:?usage: $0 DIR}
src=$(dirname "$0")/../t/e2e
. "$(dirname "$0")/npm-lock.sh"

if ! command -v node >/dev/null 2>&1 || ! command -v npm >/dev/null 2>&1; then
    if [ "$(id -u)" != 0 ]; then
        echo "make e2e needs Node.js and npm: sudo apt-get install -y nodejs npm" >&2
        exit 1
    fi
    echo "installing: nodejs npm" >&2
    export DEBIAN_FRONTEND=noninteractive
    apt-get update -qq
    apt-get install -y -qq --no-install-recommends nodejs npm >/dev/null
fi

npm_lock_prepare "$src" "$dir" || exit 0
echo "npm ci in $dir (Claude Code, the Anthropic SDK, MCP servers)" >&2
if ! (cd "$dir" && npm ci --no-audit --no-fund --loglevel=error); then
    npm_lock_failed "$dir"
fi

# Claude Code's postinstall puts the native binary in place; an npm that
# skipped it leaves a stub that only prints instructions
claude=$dir/node_modules/.bin/claude
if ! "$claude" --version >/dev/null 2>&1; then
    (cd "$dir/node_modules/@anthropic-ai/claude-code" && node install.cjs)
fi
if ! "$claude" --version >/dev/null 2>&1; then
    echo "Claude Code did not install: $claude --version fails" >&2
    npm_lock_failed "$dir"
fi
