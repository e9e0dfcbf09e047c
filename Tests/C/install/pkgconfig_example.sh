#!/usr/bin/env bash
# Usage: pkgconfig_example.sh BUILD_DIR SOURCE_DIR CMAKE CC
#
# Installs the build into a fresh temporary prefix, checks the installed layout, builds
# examples/c/habits.c the way the README tells users to (cc + pkg-config, with an rpath
# instead of LD_LIBRARY_PATH), and runs it with LD_LIBRARY_PATH empty. ldd on the program and
# on the library must show nothing "not found".
set -euo pipefail
build=$1 src=$2 cmake=$3 cc=$4
# The version the library file is named with: OPTIMIST_VERSION of the header (its one place).
version=$(sed -n 's/^#define OPTIMIST_VERSION *"\(.*\)"$/\1/p' "$src/Include/optimist.h")
[ -n "$version" ] || { echo "no OPTIMIST_VERSION in $src/Include/optimist.h"; exit 1; }
tmp=$(mktemp -d "${TMPDIR:-/tmp}/optimist-install-XXXXXX")
trap 'rm -rf "$tmp"' EXIT
prefix=$tmp/prefix

"$cmake" --install "$build" --prefix "$prefix" >/dev/null

for f in include/optimist.h lib/liboptimist.so.$version lib/pkgconfig/optimist.pc \
         lib/cmake/Optimist/OptimistConfig.cmake lib/cmake/Optimist/OptimistConfigVersion.cmake; do
    [ -f "$prefix/$f" ] || { echo "missing $f in the prefix"; exit 1; }
done
[ "$(readlink "$prefix/lib/liboptimist.so.1")" = liboptimist.so.$version ] || { echo "bad liboptimist.so.1 symlink"; exit 1; }
[ "$(readlink "$prefix/lib/liboptimist.so")" = liboptimist.so.1 ] || { echo "bad liboptimist.so symlink"; exit 1; }

export PKG_CONFIG_PATH=$prefix/lib/pkgconfig
[ "$(pkg-config --variable=prefix optimist)" = "$prefix" ] || { echo "pkg-config prefix is not $prefix"; exit 1; }
libdir=$(pkg-config --variable=libdir optimist)
# shellcheck disable=SC2046 # pkg-config output is meant to be split into words
"$cc" -std=c11 -Wall -Wextra -Werror -o "$tmp/habits" "$src/examples/c/habits.c" \
    $(pkg-config --cflags --libs optimist) "-Wl,-rpath,$libdir"

for f in "$tmp/habits" "$prefix/lib/liboptimist.so.$version"; do
    if env LD_LIBRARY_PATH= ldd "$f" | grep 'not found'; then
        echo "ldd $f: something is not found"; exit 1
    fi
done
# ldd's output is read whole before grep: `ldd | grep -q` under pipefail fails at random when
# grep exits at its match while ldd is still writing (SIGPIPE), more often now that the library
# pulls in libcurl and its dependencies.
needed=$(env LD_LIBRARY_PATH= ldd "$tmp/habits")
grep -q "$prefix/lib/liboptimist.so.1" <<<"$needed" \
    || { echo "habits does not load the installed library"; exit 1; }
env LD_LIBRARY_PATH= "$tmp/habits"
echo "installed example ok"
