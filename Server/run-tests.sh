#!/usr/bin/env bash
# Builds optimist-server, starts a throwaway PostgreSQL, and runs Server/tests against SQLite
# and PostgreSQL. Exits non-zero on any failure.
#
#   Server/run-tests.sh                 # everything
#   Server/run-tests.sh -k paging       # extra arguments go to pytest
set -uo pipefail
ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
cd "$ROOT"

CONFIG=${OPTIMIST_SERVER_CONFIG:-release}
echo "== building optimist-server ($CONFIG)"
swift build --package-path Server -c "$CONFIG" --product optimist-server || exit 1
BIN="$(swift build --package-path Server -c "$CONFIG" --show-bin-path)/optimist-server"
[ -x "$BIN" ] || { echo "no binary at $BIN" >&2; exit 1; }

VENV="$ROOT/build/venv"
if [ ! -x "$VENV/bin/python" ]; then
    echo "== creating $VENV"
    python3 -m venv "$VENV" || exit 1
fi
"$VENV/bin/python" -c "import pytest" 2>/dev/null || "$VENV/bin/pip" install -q pytest || exit 1
# test_jwt.py signs its RS256 and ES256 tokens with it.
"$VENV/bin/python" -c "import cryptography" 2>/dev/null || "$VENV/bin/pip" install -q cryptography || exit 1

# Under /tmp, not the checkout: as root the cluster runs as a system user, which must reach
# the directory through every parent (a clone under /root would shut it out).
PGDIR="$(mktemp -d "${TMPDIR:-/tmp}/optimist-server-tests-pg.XXXXXX")"
chmod 755 "$PGDIR"
cleanup() {
    bash "$ROOT/scripts/pg-cluster.sh" stop "$PGDIR" >/dev/null 2>&1
    rm -rf "$PGDIR"
}
trap cleanup EXIT

echo "== starting PostgreSQL in $PGDIR"
PG_URL="$(bash "$ROOT/scripts/pg-cluster.sh" start "$PGDIR")" || { echo "PostgreSQL did not start" >&2; exit 1; }
echo "   $PG_URL"

# One run per database, so each has its own summary line.
STATUS=0
for STORE in sqlite postgres; do
    echo "== pytest --store $STORE"
    OPTIMIST_SERVER_BIN="$BIN" OPTIMIST_TEST_PG_URL="$PG_URL" \
        "$VENV/bin/python" -m pytest "$ROOT/Server/tests" --store "$STORE" -p no:cacheprovider -rs "$@" || STATUS=1
done
exit $STATUS
