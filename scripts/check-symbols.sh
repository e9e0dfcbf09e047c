#!/usr/bin/env bash
# Usage: scripts/check-symbols.sh LIB HEADER
#
# Checks that the C API a header declares is exactly what a shared library exports: the set of
# optimist_* functions declared in HEADER must equal the set of optimist_* symbols LIB exports
# (global or weak, defined; `nm -D --defined-only`). Prints both differences and exits 1 when
# they are not equal, 2 on bad usage. Catches a function declared but not built (a link error
# for users) and one exported but undocumented.
set -euo pipefail

if [ $# -ne 2 ]; then
    echo "usage: $0 LIB HEADER" >&2
    exit 2
fi
lib=$1 header=$2
for f in "$lib" "$header"; do
    [ -r "$f" ] || { echo "$0: cannot read $f" >&2; exit 2; }
done

tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT

# Declared: an identifier optimist_xxx directly followed by "(" (a function declarator), after
# comments are stripped so prose mentioning functions does not count. Function-pointer typedefs
# are written "(*optimist_listener)" and so do not match.
sed -e 's://.*$::' "$header" \
    | perl -0777 -pe 's{/\*.*?\*/}{}gs' \
    | grep -oE '\boptimist_[A-Za-z0-9_]+[[:space:]]*\(' \
    | sed -E 's/[[:space:]]*\($//' | sort -u > "$tmp/declared"

# Exported: defined dynamic symbols with global or weak binding (upper-case nm type letters;
# lower-case ones are local). Symbol versions (name@@VER) are cut off.
nm -D --defined-only "$lib" \
    | awk 'NF >= 3 && $2 ~ /^[A-Z]$/ { print $3 }' \
    | sed -E 's/@.*$//' \
    | grep -E '^optimist_' | sort -u > "$tmp/exported" || true

declared=$(wc -l < "$tmp/declared")
exported=$(wc -l < "$tmp/exported")
missing=$(comm -23 "$tmp/declared" "$tmp/exported")
extra=$(comm -13 "$tmp/declared" "$tmp/exported")

status=0
if [ -n "$missing" ]; then
    echo "declared in $header but not exported by $lib:"
    echo "$missing" | sed 's/^/  /'
    status=1
fi
if [ -n "$extra" ]; then
    echo "exported by $lib but not declared in $header:"
    echo "$extra" | sed 's/^/  /'
    status=1
fi
if [ $status -eq 0 ]; then
    echo "symbols ok: $declared functions declared, $exported exported, the same set"
fi
exit $status
