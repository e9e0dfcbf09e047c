#!/usr/bin/env bash
# The 10k burst, before and after, alternated: BEFORE is a checkout of the earlier commit with its
# library (cmake --build build) and server (swift build --package-path Server -c release) built;
# this checkout's must be built the same way. PG_URL: a PostgreSQL server whose databases the
# bench may create (bash scripts/pg-cluster.sh start DIR prints one).
#
#   bash Benchmarks/results/spaces-burst-before-after-vm.sh BEFORE PG_URL > OUT.jsonl
set -euo pipefail
BEFORE=$1 PG=$2
AFTER="$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)"
cd "$AFTER"
for run in 1 2 3; do
  for side in before after; do
    if [ $side = before ]; then ROOTD=$BEFORE; else ROOTD=$AFTER; fi
    OPTIMIST_LIBRARY=$ROOTD/build/liboptimist.so PYTHONPATH=$ROOTD/Bindings/python/src \
      python3 Benchmarks/Sync/bench_spaces.py --server "$ROOTD/Server/.build/release/optimist-server" --pg "$PG" \
        --runs 1 --only burst 2>/dev/null | sed "s/^{/{\"side\": \"$side\", \"rep\": $run, /"
  done
done
