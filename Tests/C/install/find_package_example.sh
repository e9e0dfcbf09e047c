#!/usr/bin/env bash
# Usage: find_package_example.sh BUILD_DIR SOURCE_DIR CMAKE GENERATOR CC
#
# Installs the build into a fresh temporary prefix, then configures, builds and runs
# examples/c as a project of its own that finds the installed package with
# find_package(Optimist) and links Optimist::optimist.
set -euo pipefail
build=$1 src=$2 cmake=$3 generator=$4 cc=$5
tmp=$(mktemp -d "${TMPDIR:-/tmp}/optimist-findpkg-XXXXXX")
trap 'rm -rf "$tmp"' EXIT
prefix=$tmp/prefix

"$cmake" --install "$build" --prefix "$prefix" >/dev/null
"$cmake" -S "$src/examples/c" -B "$tmp/build" -G "$generator" -DCMAKE_C_COMPILER="$cc" \
    -DCMAKE_PREFIX_PATH="$prefix" -DCMAKE_BUILD_TYPE=Release >/dev/null
"$cmake" --build "$tmp/build" >/dev/null
grep -q "$prefix/lib/cmake/Optimist" "$tmp/build/CMakeCache.txt" \
    || { echo "Optimist_DIR is not the installed package"; exit 1; }
if env LD_LIBRARY_PATH= ldd "$tmp/build/habits" | grep 'not found'; then exit 1; fi
env LD_LIBRARY_PATH= "$tmp/build/habits"
echo "find_package example ok"
