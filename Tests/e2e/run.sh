#!/usr/bin/env bash
# The end-to-end suite: client processes (Python and C, through the library's own sync) against
# optimist-server on SQLite and on PostgreSQL, through a fault-injecting proxy, with clients and
# server killed on the way. Builds what the environment does not name, runs pytest over
# Tests/e2e once (every test on both databases), stops what it started, and exits non-zero on
# any failure.
#
#   Tests/e2e/run.sh                  # everything
#   Tests/e2e/run.sh -k convergence   # extra arguments go to pytest
#
# Inputs, each built or started when unset:
#   OPTIMIST_SERVER_BIN    the server (else: swift build --package-path Server -c
#                          ${OPTIMIST_SERVER_CONFIG:-release} --product optimist-server)
#   OPTIMIST_LIBRARY       liboptimist.so (else: a CMake build in build-e2e/)
#   OPTIMIST_TEST_PG_URL   a PostgreSQL server (else: a throwaway cluster, stopped at the end)
# Knobs: OPTIMIST_E2E_SEED (random choices, default 1), OPTIMIST_E2E_CHAOS_S (the faulty phase
# of test_convergence.py, default 20 s), OPTIMIST_CRASH_SEED (test_crash_sync.py).
set -uo pipefail
ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)"
cd "$ROOT"

if [ -z "${OPTIMIST_SERVER_BIN:-}" ]; then
    CONFIG=${OPTIMIST_SERVER_CONFIG:-release}
    echo "== building optimist-server ($CONFIG)"
    swift build --package-path Server -c "$CONFIG" --product optimist-server || exit 1
    OPTIMIST_SERVER_BIN="$(swift build --package-path Server -c "$CONFIG" --show-bin-path)/optimist-server"
fi
[ -x "$OPTIMIST_SERVER_BIN" ] || { echo "e2e: OPTIMIST_SERVER_BIN=$OPTIMIST_SERVER_BIN is not an executable" >&2; exit 1; }

if [ -z "${OPTIMIST_LIBRARY:-}" ]; then
    echo "== building liboptimist in build-e2e"
    cmake -S . -B build-e2e -G Ninja -DCMAKE_BUILD_TYPE=Release -DOPTIMIST_BUILD_TESTS=OFF >/dev/null &&
        cmake --build build-e2e || exit 1
    OPTIMIST_LIBRARY="$ROOT/build-e2e/liboptimist.so"
fi
[ -f "$OPTIMIST_LIBRARY" ] || { echo "e2e: OPTIMIST_LIBRARY=$OPTIMIST_LIBRARY is not a file" >&2; exit 1; }
command -v "${CC:-cc}" >/dev/null || { echo "e2e: no C compiler (${CC:-cc}): the suite builds a C client" >&2; exit 1; }

VENV="$ROOT/build/venv-e2e"
if [ ! -x "$VENV/bin/python" ]; then
    echo "== creating $VENV"
    python3 -m venv "$VENV" || exit 1
fi
"$VENV/bin/python" -c "import pytest" 2>/dev/null || "$VENV/bin/pip" install -q --disable-pip-version-check pytest || exit 1

PGDIR=""
cleanup() {
    if [ -n "$PGDIR" ]; then
        bash "$ROOT/scripts/pg-cluster.sh" stop "$PGDIR" >/dev/null 2>&1
        rm -rf "$PGDIR"
    fi
}
trap cleanup EXIT
if [ -z "${OPTIMIST_TEST_PG_URL:-}" ]; then
    # Under /tmp, not the checkout: as root the cluster runs as a system user, which must reach
    # the directory through every parent.
    PGDIR="$(mktemp -d "${TMPDIR:-/tmp}/optimist-e2e-pg.XXXXXX")"
    chmod 755 "$PGDIR"
    echo "== starting PostgreSQL in $PGDIR"
    OPTIMIST_TEST_PG_URL="$(bash "$ROOT/scripts/pg-cluster.sh" start "$PGDIR")" || { echo "e2e: PostgreSQL did not start" >&2; exit 1; }
    echo "   $OPTIMIST_TEST_PG_URL"
fi

echo "== pytest Tests/e2e (server $OPTIMIST_SERVER_BIN, library $OPTIMIST_LIBRARY)"
LOG="$(mktemp "${TMPDIR:-/tmp}/optimist-e2e-log.XXXXXX")"
OPTIMIST_SERVER_BIN="$OPTIMIST_SERVER_BIN" OPTIMIST_LIBRARY="$OPTIMIST_LIBRARY" \
OPTIMIST_TEST_PG_URL="$OPTIMIST_TEST_PG_URL" PYTHONPATH="$ROOT/Bindings/python/src" PYTHONDONTWRITEBYTECODE=1 \
    timeout --kill-after=30 1800 "$VENV/bin/python" -m pytest "$ROOT/Tests/e2e" -p no:cacheprovider -v -rfEs --durations=6 "$@" 2>&1 | tee "$LOG"
STATUS=${PIPESTATUS[0]}
# Per database, from pytest -v's lines ("...::test[sqlite-case] PASSED").
for db in sqlite postgres; do
    count() { grep -E "\[$db(\]|-[^]]*\]) $1" "$LOG" | grep -vc '^FAILED\|^ERROR'; }
    echo "e2e $db: $(count PASSED) passed, $(count 'FAILED|ERROR') failed, $(count SKIPPED) skipped"
done
SUMMARY="$(grep -E '^=+ .*(passed|failed|error|skipped|no tests ran).* =+$' "$LOG" | tail -n 1)"
rm -f "$LOG"
echo "${SUMMARY:-e2e: no pytest summary (exit $STATUS)}"
exit "$STATUS"
