#!/usr/bin/env bash
# Usage: cli_example.sh BUILD_DIR SOURCE_DIR CMAKE PYTHON
#
# Installs the build into a fresh temporary prefix and checks the `optimist` tool there:
# PREFIX/bin/optimist beside PREFIX/lib/liboptimist.so, runnable with an empty
# LD_LIBRARY_PATH (the Swift runtime is linked in), its help, and inspect/outbox/explain/dump
# on a store file made through the installed library (by the Python package) and on a file
# that is not a store.
set -euo pipefail
build=$1 src=$2 cmake=$3 python=$4
# The version the library file is named with: OPTIMIST_VERSION of the header (its one place).
version=$(sed -n 's/^#define OPTIMIST_VERSION *"\(.*\)"$/\1/p' "$src/Include/optimist.h")
[ -n "$version" ] || { echo "no OPTIMIST_VERSION in $src/Include/optimist.h"; exit 1; }
tmp=$(mktemp -d "${TMPDIR:-/tmp}/optimist-install-cli-XXXXXX")
trap 'rm -rf "$tmp"' EXIT
prefix=$tmp/prefix

"$cmake" --install "$build" --prefix "$prefix" >/dev/null
tool=$prefix/bin/optimist
[ -x "$tool" ] || { echo "missing bin/optimist in the prefix"; exit 1; }
[ -f "$prefix/lib/liboptimist.so.$version" ] || { echo "missing the library beside the tool"; exit 1; }
needed=$(env LD_LIBRARY_PATH= ldd "$tool")
if grep 'not found' <<<"$needed"; then echo "ldd $tool: something is not found"; exit 1; fi
if grep -q 'libswiftCore' <<<"$needed"; then echo "the tool needs the Swift runtime's libraries"; exit 1; fi

env LD_LIBRARY_PATH= "$tool" --help | grep -q 'optimist inspect FILE'

store=$tmp/habits.db
OPTIMIST_LIBRARY=$prefix/lib/liboptimist.so.1 PYTHONPATH=$src/Bindings/python/src "$python" - "$store" <<'PY'
import sys
import optimist
with optimist.Store(sys.argv[1]) as s:
    s.server_apply([optimist.put("habits", "run", {"count": 1})])
    s.mutate([optimist.incr("habits", "run", "count", 1)], dedupe_key="tap-1")
PY

export TMPDIR=$tmp/scratch
mkdir "$TMPDIR"
out=$(env LD_LIBRARY_PATH= "$tool" inspect "$store")
grep -q 'mutations    1 not ended: 1 pending' <<<"$out" || { echo "inspect: $out"; exit 1; }
out=$("$tool" outbox "$store" --json)
grep -q '"dedupe_key":"tap-1"' <<<"$out" || { echo "outbox: $out"; exit 1; }
out=$("$tool" explain "$store" habits run --json)
[ "$out" = '{"confirmed":{"count":1},"layers":[{"id":1,"ops":[{"coll":"habits","delta":1,"field":"count","key":"run","op":"incr"}],"status":"pending","value":{"count":2}}],"visible":{"count":2}}' ] \
    || { echo "explain: $out"; exit 1; }
out=$("$tool" dump "$store")
[ "$out" = '{"coll":"habits","key":"run","value":{"count":1}}' ] || { echo "dump: $out"; exit 1; }

head -c 4096 /dev/urandom > "$tmp/garbage"
status=0
"$tool" inspect "$tmp/garbage" 2>"$tmp/err" || status=$?
[ "$status" = 1 ] && grep -q 'not an Optimist store' "$tmp/err" || { echo "garbage: $status $(cat "$tmp/err")"; exit 1; }
[ -z "$(ls -A "$TMPDIR")" ] || { echo "the tool left files in TMPDIR"; exit 1; }
echo ok
