#!/bin/sh
# Builds nginx from the source Debian's archive serves, with the module.
#   scripts/nginx-build.sh SUITE FLAVOUR
#     SUITE    a Debian suite whose nginx source to build: bookworm,
#              trixie, sid
#     FLAVOUR  dynamic  the module as a dynamic module (--with-compat)
#              static   the module compiled in (--add-module)
#              asan     compiled in, nginx and the module built with ASan
#                       and UBSan, every pool allocation its own malloc
#                       (NGX_DEBUG_PALLOC) so that ASan sees its bounds
# The orig tarball is fetched with apt-get source --download-only and
# checked against the SHA-256 of the archive's signed index; a deb-src
# entry for the suite is added when apt has none (as root).  The build is
# kept in build/nginx-builds/VERSION-FLAVOUR/ and redone only where the
# module's sources changed.  Prints the directory, which holds the binary
# `nginx` and, for the dynamic flavour, ngx_http_toolsearch_module.so.
# Exits 3, saying why, when the suite's tarball does not download.

set -eu

suite=$1
flavour=$2
here=$(cd "$(dirname "$0")/.." && pwd)
cache=$here/build/nginx-builds
jobs=${NGINX_BUILD_JOBS:-2}

case $flavour in
    dynamic|static|asan) ;;
    *) echo "usage: $0 bookworm|trixie|sid dynamic|static|asan" >&2
       exit 2 ;;
esac

# apt's source URIs for nginx in the suite; a deb-src entry is added
# when apt knows none
uris() {
    apt-get source --print-uris -qq "nginx/$suite" 2>/dev/null \
        | grep "orig.tar" | grep -v '\.asc' || true
}

parts=/etc/apt/sources.list.d/
eval "$(apt-config shell parts Dir::Etc::sourceparts/d)"
src_entry=${parts}toolsearch-nginx-src.sources
if [ -z "$(uris)" ]; then
    if [ "$(id -u)" != 0 ]; then
        echo "$0: apt knows no source of nginx/$suite; add a deb-src" \
             "entry for it (as root this script does)" >&2
        exit 1
    fi
    echo "adding a deb-src entry for $suite: $src_entry" >&2
    if [ -f "$src_entry" ]; then
        sed -i "s/^Suites:.*/& $suite/" "$src_entry"
    else
        cat > "$src_entry" <<EOF
Types: deb-src
URIs: http://deb.debian.org/debian
Suites: $suite
Components: main
Signed-By: /usr/share/keyrings/debian-archive-keyring.gpg
EOF
    fi
    apt-get update -qq
fi

line=$(uris)
if [ -z "$line" ]; then
    echo "$0: apt lists no nginx source for $suite" >&2
    exit 1
fi
# 'URI' FILE SIZE SHA256:HASH
tarball=$(echo "$line" | awk '{print $2}')
sha=$(echo "$line" | awk '{print $4}' | sed 's/^SHA256://')
version=$(echo "$tarball" | sed 's/^nginx_//; s/\.orig\.tar\..*$//')

dist=$cache/dist
mkdir -p "$dist"
if ! echo "$sha  $dist/$tarball" | sha256sum -c --status 2>/dev/null; then
    # the .dsc and the Debian patches are not needed: a failure to
    # fetch them is not one; the tarball's checksum decides
    (cd "$dist" && apt-get source --download-only -qq "nginx/$suite" \
        >"$dist/$suite.log" 2>&1) || true
    if ! echo "$sha  $dist/$tarball" | sha256sum -c --status 2>/dev/null
    then
        echo "$0: nginx $version ($suite): $tarball did not download:" >&2
        grep "$tarball" "$dist/$suite.log" | head -1 >&2
        exit 3
    fi
fi

dir=$cache/$version-$flavour
opts="--with-compat --with-threads --with-http_ssl_module"
opts="$opts --with-http_v2_module --prefix=$dir/prefix"
cc_opt=
ld_opt=
case $flavour in
    dynamic) opts="$opts --add-dynamic-module=$here" ;;
    static)  opts="$opts --add-module=$here" ;;
    asan)    opts="$opts --add-module=$here --with-debug"
             cc_opt="-g -O1 -fno-omit-frame-pointer -DNGX_DEBUG_PALLOC=1"
             cc_opt="$cc_opt -fsanitize=address,undefined"
             ld_opt="-fsanitize=address,undefined" ;;
esac

# configure again when the options, the module's config, its lists of
# files or this script changed; otherwise nginx's make rebuilds what
# changed
stamp="$opts|$cc_opt|$ld_opt|$(cat "$here/config" "$here/src/sources" \
    "$here/ngx_http_toolsearch_module/sources" "$0" | sha256sum)"
if [ ! -f "$dir/configured" ] || [ "$(cat "$dir/configured")" != "$stamp" ]
then
    rm -rf "$dir"
    mkdir -p "$dir/src"
    tar -xzf "$dist/$tarball" -C "$dir/src" --strip-components=1
    echo "configuring nginx $version ($flavour)" >&2
    # $opts is a list of options (paths without spaces)
    # shellcheck disable=SC2086
    (cd "$dir/src" && ./configure $opts --with-cc-opt="$cc_opt" \
        --with-ld-opt="$ld_opt" >"$dir/configure.log" 2>&1) \
        || { cat "$dir/configure.log" >&2; exit 1; }
    echo "$stamp" > "$dir/configured"
fi

echo "building nginx $version ($flavour)" >&2
make -s -j"$jobs" -C "$dir/src" -f objs/Makefile >"$dir/make.log" 2>&1 \
    || { tail -40 "$dir/make.log" >&2; exit 1; }
cp "$dir/src/objs/nginx" "$dir/nginx"
if [ "$flavour" = dynamic ]; then
    cp "$dir/src/objs/ngx_http_toolsearch_module.so" "$dir/"
fi
echo "$dir"
