#!/bin/sh
# Runs the integration suite against each nginx built from source by
# scripts/nginx-build.sh (Debian's own nginx is the one `make test` runs):
#   1.26.3 (trixie) with the module dynamic, and compiled in
#   the newest release sid serves, the module dynamic
#   1.26.3 with ASan and UBSan, the module compiled in
# A build whose tarball does not download is skipped, saying why; any
# other failure fails the run.  Ends with what ran, what was skipped.
#   scripts/nginx-matrix.sh [PYTHON]

set -u
cd "$(dirname "$0")/.." || exit 1
python=${1:-python3}
ran=
skipped=
failed=

for build in "trixie dynamic" "trixie static" "sid dynamic" "trixie asan"
do
    # shellcheck disable=SC2086
    dir=$(sh scripts/nginx-build.sh $build)
    rc=$?
    if [ $rc = 3 ]; then
        skipped="$skipped
  $build: its tarball did not download (see above)"
        continue
    elif [ $rc != 0 ]; then
        failed="$failed
  $build: the build failed"
        continue
    fi
    version=$("$dir/nginx" -v 2>&1 | sed 's/^nginx version: //')
    label="$version ($build)"
    echo "== the suite against $label: $dir/nginx"
    if TOOLSEARCH_NGINX="$dir/nginx" "$python" -m pytest -q t; then
        ran="$ran
  $label"
    else
        failed="$failed
  $label"
    fi
done

echo "== nginx builds the suite ran against:${ran:-
  none}"
[ -n "$skipped" ] && echo "== skipped:$skipped"
if [ -n "$failed" ]; then
    echo "== failed:$failed"
    exit 1
fi
exit 0
