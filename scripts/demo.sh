#!/usr/bin/env bash
# The newcomer's first command: builds liboptimist and plays the habit-tracker story through
# the C library and through Python, printing a report of what happened and what it measured.
#
#   bash scripts/demo.sh            # install what is missing, build, run both demos
#   bash scripts/demo.sh --no-build # reuse build/liboptimist.so
#
# On a fresh Debian/Ubuntu machine with Swift installed it first installs, only when missing,
# cmake, ninja-build, libffi-dev, libsqlite3-dev, pkg-config and python3 (one `apt-get update`,
# with sudo when not root). Nothing is installed into your Python: the demo runs the package
# from the checkout (PYTHONPATH=Bindings/python/src, OPTIMIST_LIBRARY=build/liboptimist.so).
# Store files and the compiled C demo go to demo/.work (override with OPTIMIST_DEMO_DIR; the
# build folder with OPTIMIST_BUILD_DIR).
# Exits non-zero as soon as a step or a check fails.
set -euo pipefail

ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
cd "$ROOT"
BUILD="${OPTIMIST_BUILD_DIR:-$ROOT/build}"
WORK="${OPTIMIST_DEMO_DIR:-$ROOT/demo/.work}"
BUILD_LIB=1
for arg in "$@"; do
    case "$arg" in
        --no-build) BUILD_LIB=0 ;;
        -h|--help) sed -n '2,14p' "$0" | sed 's/^# \{0,1\}//'; exit 0 ;;
        *) echo "unknown argument: $arg (try --help)" >&2; exit 2 ;;
    esac
done

if [ -t 1 ]; then BOLD=$'\033[1m' PLAIN=$'\033[0m'; else BOLD="" PLAIN=""; fi
step() { printf '\n%s==> %s%s\n' "$BOLD" "$*" "$PLAIN"; }
ok()   { printf '    \xE2\x9C\x94 %s\n' "$*"; }
die()  { printf '\n\xE2\x9C\x98 %s\n' "$*" >&2; exit 1; }
trap 'rc=$?; [ $rc -eq 0 ] || printf "\n\xE2\x9C\x98 demo failed (exit %d) during: %s\n" "$rc" "${CURRENT:-setup}" >&2' EXIT

# ---------------------------------------------------------------------------------------------
CURRENT="checking prerequisites"
step "Checking prerequisites"
command -v swift >/dev/null 2>&1 ||
    die "Swift is not installed (or not on PATH). Install a Swift 6 toolchain: https://www.swift.org/install/linux/"
ok "swift: $(swift --version 2>/dev/null | head -n1)"

CURRENT="installing what is missing"
bash "$ROOT/scripts/install-deps.sh"
# The Python package needs 3.9+ and nothing from PyPI (it is ctypes over liboptimist).
python3 -c 'import sys; sys.exit(sys.version_info < (3, 9))' ||
    die "python3 is $(python3 --version 2>&1); the optimist package needs Python 3.9 or newer"
ok "cmake $(cmake --version | head -n1 | awk '{print $3}'), ninja $(ninja --version), pkg-config, libffi-dev, libsqlite3-dev, $(python3 --version)"

CC="${CC:-}"
if [ -z "$CC" ]; then
    for c in cc gcc clang; do command -v "$c" >/dev/null 2>&1 && { CC="$c"; break; }; done
fi
[ -n "$CC" ] || die "no C compiler found (cc, gcc or clang); the Swift toolchain's clang normally provides one"
ok "C compiler: $CC"

# ---------------------------------------------------------------------------------------------
if [ "$BUILD_LIB" -eq 1 ]; then
    CURRENT="building liboptimist with CMake"
    step "Building liboptimist (CMake + SwiftPM, release; the first build takes a minute or two)"
    t0=$(date +%s)
    cmake -S . -B "$BUILD" -G Ninja -DCMAKE_BUILD_TYPE=Release -DOPTIMIST_BUILD_TESTS=OFF >/dev/null
    cmake --build "$BUILD"
    ok "built in $(( $(date +%s) - t0 )) s"
fi
[ -e "$BUILD/liboptimist.so" ] || die "$BUILD/liboptimist.so is missing (run without --no-build)"
ok "$(readlink -f "$BUILD/liboptimist.so")"

# ---------------------------------------------------------------------------------------------
CURRENT="compiling demo/habits_demo.c"
step "Compiling demo/habits_demo.c against Include/optimist.h"
mkdir -p "$WORK"
SQLITE_LIBS="$(pkg-config --libs sqlite3 2>/dev/null || echo -lsqlite3)"
# shellcheck disable=SC2086  # SQLITE_LIBS is a list of flags
"$CC" -std=c11 -O2 -Wall -Wextra -I Include demo/habits_demo.c -o "$WORK/habits_demo" \
    -L "$BUILD" -loptimist $SQLITE_LIBS -Wl,-rpath,"$BUILD"
ok "$WORK/habits_demo"

demo_start=$(date +%s)
CURRENT="the C demo (demo/habits_demo.c)"
step "The story through the C library"
"$WORK/habits_demo" "$WORK"

CURRENT="the Python demo (demo/habits_demo.py)"
step "The story through Python"
OPTIMIST_LIBRARY="$BUILD/liboptimist.so" \
PYTHONPATH="$ROOT/Bindings/python/src${PYTHONPATH:+:$PYTHONPATH}" \
    python3 demo/habits_demo.py "$WORK"

CURRENT="finishing"
step "Done in $(( $(date +%s) - demo_start )) s after the build"
echo "    Store files are in $WORK (delete it freely)."
[ -x Benchmarks/run ] && echo "    For the full benchmark suite: Benchmarks/run (Benchmarks/run --quick for a short pass)."
echo "    Next: read Include/optimist.h and Bindings/python; the sources of this demo are demo/habits_demo.{c,py}."
