#!/usr/bin/env bash
# The newcomer's first command: builds liboptimist and the reference sync server
# (optimist-server), then plays the habit-tracker story through the C library and through
# Python against that server on loopback: two devices of one user sync for real through the
# library's own background sync, the server refuses a change by rule, goes down (the devices
# keep working offline, a client is killed with SIGKILL) and comes back (they catch up). It
# ends with reload-vs-optimistic numbers for this machine. A second story, in Python, is a chat
# between two users sharing a room on the same kind of server (demo/chat_demo.py).
#
#   bash scripts/demo.sh            # install what is missing, build, run both demos
#   bash scripts/demo.sh --no-build # reuse build/liboptimist.so and the built optimist-server
#
# On a fresh Debian/Ubuntu machine with Swift installed it first installs, only when missing,
# cmake, ninja-build, libffi-dev, libsqlite3-dev, libcurl4-openssl-dev, pkg-config and python3
# (one `apt-get update`, with sudo when not root). Nothing is installed into your Python: the
# demo runs the package from the checkout (PYTHONPATH=Bindings/python/src,
# OPTIMIST_LIBRARY=build/liboptimist.so), with its C accelerator built in place when it can be. Store files, the servers' databases and logs and the
# compiled C demo go to demo/.work (override with OPTIMIST_DEMO_DIR; the build folder with
# OPTIMIST_BUILD_DIR, the server binary with OPTIMIST_SERVER_BIN). The server listens on
# 127.0.0.1 only, on a free port, and is stopped when the demo ends.
# Exits non-zero as soon as a step or a check fails.
set -euo pipefail

ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
cd "$ROOT"
BUILD="${OPTIMIST_BUILD_DIR:-$ROOT/build}"
WORK="${OPTIMIST_DEMO_DIR:-$ROOT/demo/.work}"
SERVER_BIN="${OPTIMIST_SERVER_BIN:-$ROOT/Server/.build/debug/optimist-server}"
# The server's rule for section 3: it refuses every change to the logs of Nov 10-19.
RULE='logs/2026-11-1=that week is closed'
BUILD_LIB=1
for arg in "$@"; do
    case "$arg" in
        --no-build) BUILD_LIB=0 ;;
        -h|--help) sed -n '2,20p' "$0" | sed 's/^# \{0,1\}//'; exit 0 ;;
        *) echo "unknown argument: $arg (try --help)" >&2; exit 2 ;;
    esac
done

if [ -t 1 ]; then BOLD=$'\033[1m' PLAIN=$'\033[0m'; else BOLD="" PLAIN=""; fi
step()   { printf '\n%s==> %s%s\n' "$BOLD" "$*" "$PLAIN"; }
ok()     { printf '    \xE2\x9C\x94 %s\n' "$*"; }
die()    { printf '\n\xE2\x9C\x98 %s\n' "$*" >&2; exit 1; }
server() { printf '\n%s[demo.sh] %s%s\n' "$BOLD" "$*" "$PLAIN"; }

# ---------------------------------------------------------------------------------------------
# The server runs in the background; whatever happens, it is stopped when this script ends.
SERVER_PID="" SERVER_URL="" SERVER_PORT=0 SERVER_LOG=""

# start_server DB PORT [ARG...]: starts optimist-server on 127.0.0.1:PORT (0: a free port) with
# the SQLite database DB (and the habit story's refusal rule, or the ARGs given) and waits for
# its "listening on http://HOST:PORT" line.
start_server() {
    local db=$1 port=$2 out="$WORK/server.stdout" line=""
    shift 2
    [ $# -gt 0 ] || set -- --refuse "$RULE"
    : >"$out"
    "$SERVER_BIN" --port "$port" --host 127.0.0.1 --db "sqlite:$db" "$@" >"$out" 2>>"$SERVER_LOG" &
    SERVER_PID=$!
    for _ in $(seq 1 600); do  # up to 60 s
        line=$(grep -m1 '^listening on http://' "$out" || true)
        [ -n "$line" ] && break
        if ! kill -0 "$SERVER_PID" 2>/dev/null; then
            wait "$SERVER_PID" || true
            SERVER_PID=""
            tail -n 5 "$SERVER_LOG" >&2 || true
            die "optimist-server exited at start (its log: $SERVER_LOG)"
        fi
        sleep 0.1
    done
    [ -n "$line" ] || die "optimist-server did not say where it listens within 60 s (its log: $SERVER_LOG)"
    SERVER_URL=${line#listening on }
    SERVER_PORT=${SERVER_URL##*:}
}

# stop_server: SIGTERM (the server finishes its requests and closes its database), SIGKILL
# after 10 s.
stop_server() {
    [ -n "$SERVER_PID" ] || return 0
    kill -TERM "$SERVER_PID" 2>/dev/null || true
    for _ in $(seq 1 100); do
        kill -0 "$SERVER_PID" 2>/dev/null || break
        sleep 0.1
    done
    kill -KILL "$SERVER_PID" 2>/dev/null || true
    wait "$SERVER_PID" 2>/dev/null || true
    SERVER_PID=""
}

on_exit() {
    local rc=$?
    stop_server
    [ $rc -eq 0 ] || printf "\n\xE2\x9C\x98 demo failed (exit %d) during: %s\n" "$rc" "${CURRENT:-setup}" >&2
}
trap on_exit EXIT
trap 'exit 130' INT
trap 'exit 143' TERM

# run_story NAME COMMAND...: the story in three parts against a server of its own (a fresh
# database, so each story starts from nothing): COMMAND WORKDIR URL online, then with the
# server stopped COMMAND WORKDIR URL offline, then with the server back at the same address
# COMMAND WORKDIR URL catchup.
run_story() {
    local name=$1 db="$WORK/server-$1.sqlite"
    shift
    SERVER_LOG="$WORK/server-$name.log"
    rm -f "$db" "$db-wal" "$db-shm" "$SERVER_LOG"
    start_server "$db" 0
    server "optimist-server is up at $SERVER_URL"
    echo "          database $db, rule --refuse '$RULE'"
    "$@" "$WORK" "$SERVER_URL" online
    stop_server
    server "optimist-server stopped (SIGTERM): from now on the devices are offline"
    "$@" "$WORK" "$SERVER_URL" offline
    local url=$SERVER_URL
    start_server "$db" "$SERVER_PORT"
    [ "$SERVER_URL" = "$url" ] || die "the server came back at $SERVER_URL, not $url"
    server "optimist-server is back at $SERVER_URL (same database)"
    "$@" "$WORK" "$SERVER_URL" catchup
    stop_server
}

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
ok "cmake $(cmake --version | head -n1 | awk '{print $3}'), ninja $(ninja --version), pkg-config, libffi-dev, libsqlite3-dev, libcurl, $(python3 --version)"

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

if [ "$BUILD_LIB" -eq 1 ] && [ -z "${OPTIMIST_SERVER_BIN:-}" ]; then
    CURRENT="building optimist-server"
    step "Building optimist-server (SwiftPM, debug: the build scripts/test.sh reuses; the first one compiles its dependencies: several minutes)"
    t0=$(date +%s)
    swift build --package-path Server -c debug --product optimist-server
    ok "built in $(( $(date +%s) - t0 )) s"
fi
[ -x "$SERVER_BIN" ] || die "$SERVER_BIN is missing (run without --no-build)"
ok "$SERVER_BIN"

# ---------------------------------------------------------------------------------------------
CURRENT="compiling demo/habits_demo.c"
step "Compiling demo/habits_demo.c against Include/optimist.h"
mkdir -p "$WORK"
# liboptimist brings its own libcurl (the sync's HTTP transport); sqlite3 is for the reload
# side of section 6, which is the benchmark's own code (Benchmarks/C), built in.
SQLITE_LIBS="$(pkg-config --libs sqlite3 2>/dev/null || echo -lsqlite3)"
# shellcheck disable=SC2086  # SQLITE_LIBS is a list of flags
"$CC" -std=c11 -O2 -Wall -Wextra -pthread -I Include -I Benchmarks/C -o "$WORK/habits_demo" \
    demo/habits_demo.c Benchmarks/C/common.c Benchmarks/C/reload.c Benchmarks/C/optimistic.c \
    -L "$BUILD" -loptimist $SQLITE_LIBS -Wl,-rpath,"$BUILD"
ok "$WORK/habits_demo"

demo_start=$(date +%s)
CURRENT="the C demo (demo/habits_demo.c)"
step "The story through the C library"
run_story c "$WORK/habits_demo"

CURRENT="the Python demo (demo/habits_demo.py)"
step "The story through Python"
export OPTIMIST_LIBRARY="$BUILD/liboptimist.so"
export PYTHONPATH="$ROOT/Bindings/python/src${PYTHONPATH:+:$PYTHONPATH}"
# The package's C accelerator, built in place beside its sources (nothing is installed); where
# it cannot be built (no compiler, no Python headers, no setuptools) the package uses ctypes alone.
if (cd Bindings/python && python3 setup.py -q build_ext --inplace >"$WORK/speedups-build.log" 2>&1) &&
    python3 -c 'import optimist._fast as f, sys; sys.exit(not f.SPEEDUPS)' 2>/dev/null; then
    ok "the Python package's C accelerator (optimist._speedups) is built"
else
    echo "   (the Python package's C accelerator did not build, see $WORK/speedups-build.log: the package uses ctypes alone)"
fi
run_story py python3 demo/habits_demo.py

CURRENT="the chat demo (demo/chat_demo.py)"
step "The chat story: two users share a room (Python)"
SERVER_LOG="$WORK/server-chat.log"
rm -f "$WORK/server-chat.sqlite" "$WORK/server-chat.sqlite-wal" "$WORK/server-chat.sqlite-shm" "$SERVER_LOG"
printf '{"tok-alice": "alice", "tok-bob": "bob"}\n' >"$WORK/chat-tokens.json"
start_server "$WORK/server-chat.sqlite" 0 --tokens "$WORK/chat-tokens.json"
server "optimist-server is up at $SERVER_URL (tokens for alice and bob)"
python3 demo/chat_demo.py "$WORK" "$SERVER_URL"
stop_server

CURRENT="finishing"
step "Done in $(( $(date +%s) - demo_start )) s after the build"
echo "    Store files, the servers' databases and their logs (one line per request) are in $WORK (delete it freely)."
echo "    Run a server yourself: $SERVER_BIN --port 8080 (see Server/README.md)."
[ -x Benchmarks/run ] && echo "    For the full benchmark suite: Benchmarks/run (Benchmarks/run --quick for a short pass)."
echo "    Next: read docs/sync.md, Include/optimist.h and Bindings/python; the sources of this demo are demo/habits_demo.{c,py} and demo/chat_demo.py."
