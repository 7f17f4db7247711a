#!/bin/sh
# Builds the Debian package libnginx-mod-http-toolsearch for the nginx
# installed on this machine (its nginx-abi-* is the package's dependency).
#   scripts/deb.sh MODULE.so VERSION OUTDIR
# Prints the path of the .deb.  Needs dpkg-deb only (no debhelper).

set -eu

so=$1
version=$2
out=$3
pkg=libnginx-mod-http-toolsearch
here=$(cd "$(dirname "$0")/.." && pwd)

# the upstream part of an installed package's version: 1:2.36-9 -> 2.36
upstream() {
    dpkg-query -W -f='${Version}' "$1" | sed 's/^[0-9]*://; s/-[^-]*$//'
}

abi=$(dpkg-query -W -f='${Provides}' nginx | tr ',' '\n' \
      | sed -n 's/^ *\(nginx-abi-[^ ]*\).*/\1/p')
if [ -z "$abi" ]; then
    echo "$0: the installed nginx provides no nginx-abi-*" >&2
    exit 1
fi

root=$(mktemp -d)
trap 'rm -rf "$root"' EXIT
chmod 755 "$root"

doc=$root/usr/share/doc/$pkg
install -d "$root/DEBIAN" "$root/usr/lib/nginx/modules" \
           "$root/usr/share/nginx/modules-available" "$doc/examples"
install -m 644 "$so" "$root/usr/lib/nginx/modules/"
strip --strip-unneeded "$root/usr/lib/nginx/modules/$(basename "$so")"
install -m 644 "$here/pkg/deb/mod-http-toolsearch.conf" \
               "$root/usr/share/nginx/modules-available/"
install -m 644 "$here/README.md" "$here"/docs/*.md "$doc/"
install -m 644 "$here"/docs/examples/*.conf "$doc/examples/"
install -m 755 "$here/pkg/deb/postinst" "$here/pkg/deb/prerm" \
               "$here/pkg/deb/postrm" "$root/DEBIAN/"

sed -e "s/@VERSION@/$version/" \
    -e "s/@ARCH@/$(dpkg --print-architecture)/" \
    -e "s/@SIZE@/$(du -sk --exclude=DEBIAN "$root" | cut -f1)/" \
    -e "s/@ABI@/$abi/" \
    -e "s/@LIBC@/$(upstream libc6)/" \
    -e "s/@CJSON@/$(upstream libcjson1)/" \
    -e "s/@PCRE2@/$(upstream libpcre2-8-0)/" \
    "$here/pkg/deb/control.in" > "$root/DEBIAN/control"

(cd "$root" && find usr -type f -exec md5sum {} + | sort -k2) \
    > "$root/DEBIAN/md5sums"

mkdir -p "$out"
deb="$out/${pkg}_${version}_$(dpkg --print-architecture).deb"
dpkg-deb --root-owner-group --build "$root" "$deb" >/dev/null
echo "$deb"
