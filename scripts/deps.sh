#!/bin/sh
# Makes sure the Debian packages a make target needs are installed.
#   scripts/deps.sh build    compiler, nginx, nginx-dev, cJSON, PCRE2
#   scripts/deps.sh test     the above plus python3-pytest, curl and
#                            ca-certificates (the examples' trusted CAs),
#                            wrk (the load test)
#   scripts/deps.sh bench    the above plus the Lua peer (lua-nginx-module,
#                            lua-cjson) and valgrind
#   scripts/deps.sh fuzz     the build set plus clang-14 and its libFuzzer
#                            and sanitizer runtimes
#   scripts/deps.sh versions the test set plus what building nginx from
#                            source takes (OpenSSL, zlib, dpkg-dev)
# As root, missing packages are installed with apt-get; otherwise the exact
# command to run is printed and the script fails.

set -e

build="gcc make nginx nginx-dev libcjson-dev libpcre2-dev"
test="$build python3 python3-pytest curl ca-certificates wrk"
bench="$test libnginx-mod-http-lua lua-cjson valgrind"
fuzz="$build clang-14 libclang-rt-14-dev"
versions="$test libssl-dev zlib1g-dev dpkg-dev"

case "${1:-build}" in
    build) wanted=$build ;;
    test)  wanted=$test ;;
    bench) wanted=$bench ;;
    fuzz)  wanted=$fuzz ;;
    versions) wanted=$versions ;;
    *)     echo "usage: $0 build|test|bench|fuzz|versions" >&2; exit 2 ;;
esac

missing=
for p in $wanted; do
    if ! dpkg-query -W -f='${Status}' "$p" 2>/dev/null \
         | grep -q 'install ok installed'; then
        missing="$missing $p"
    fi
done

[ -z "$missing" ] && exit 0

if [ "$(id -u)" != 0 ]; then
    echo "missing Debian packages:$missing" >&2
    echo "install them with: sudo apt-get install -y$missing" >&2
    exit 1
fi

echo "installing:$missing" >&2
export DEBIAN_FRONTEND=noninteractive
apt-get update -qq
# shellcheck disable=SC2086
apt-get install -y -qq --no-install-recommends $missing >/dev/null
