# Sourced by scripts/e2e-deps.sh and scripts/e2e-agents.sh: an npm install
# in a folder of the build tree, kept between runs and redone only when
# the package files of the source folder change.

# npm_lock_prepare SRC DIR: 1 (false) when DIR/node_modules was installed
# from SRC's package files as they are now; otherwise copies them into DIR
npm_lock_prepare() {
    mkdir -p "$2"
    if [ -d "$2/node_modules" ] \
            && cmp -s "$1/package-lock.json" "$2/package-lock.json" \
            && cmp -s "$1/package.json" "$2/package.json"; then
        return 1
    fi
    cp "$1/package.json" "$1/package-lock.json" "$1/.npmrc" "$2/"
}

# npm_lock_failed DIR: forgets DIR's install, so that the next run retries
npm_lock_failed() {
    rm -f "$1/package-lock.json"
    exit 1
}
