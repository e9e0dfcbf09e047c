#!/usr/bin/env bash
# The store's threaded tests under ThreadSanitizer: readers beside writers checking every read
# (ReaderConsistency, on memory and on a file), gets and view reads beside a held lock, many
# threads on one store, a file store used from many threads, the sync's event stream beside the
# sync's thread (its runner alone, and inside a running sync). Its own build tree (.build-tsan):
# a TSan build of the package takes several minutes, so the test command leaves it out; run
# it after changing the locking.
#
#   bash scripts/tsan.sh
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.."
bash scripts/install-deps.sh
log=$(mktemp)
swift test --sanitize=thread --scratch-path .build-tsan \
    --filter 'ReaderConsistency|ConcurrencyTests|readersSeeOnly|ReadCacheTests|ViewDirectoryTests|EventStreamTests|SyncStreamTests' 2>&1 | tee "$log"
warnings=$(grep -c 'WARNING: ThreadSanitizer' "$log" || true)
echo "tsan: $warnings warnings"
[ "$warnings" -eq 0 ]
