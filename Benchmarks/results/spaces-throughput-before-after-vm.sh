#!/usr/bin/env bash
# 32 clients x 500 mutations on PostgreSQL, before and after, alternated: each in its own space on
# both sides, then (after only) every other mutation in one shared space. BEFORE and PG_URL as in
# spaces-burst-before-after-vm.sh.
#
#   bash Benchmarks/results/spaces-throughput-before-after-vm.sh BEFORE PG_URL > OUT.jsonl
set -euo pipefail
BEFORE=$1 PG=$2
AFTER="$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)"
cd "$AFTER"
for run in 1 2 3; do
  for side in before after after-shared; do
    case $side in
      before) ROOTD=$BEFORE; EXTRA=--private-only ;;
      after) ROOTD=$AFTER; EXTRA=--private-only ;;
      *) ROOTD=$AFTER; EXTRA= ;;
    esac
    OPTIMIST_LIBRARY=$ROOTD/build/liboptimist.so PYTHONPATH=$ROOTD/Bindings/python/src \
      python3 Benchmarks/Sync/bench_spaces.py --server "$ROOTD/Server/.build/release/optimist-server" --pg "$PG" \
        --runs 1 --only throughput $EXTRA 2>/dev/null | sed "s/^{/{\"side\": \"$side\", \"rep\": $run, /"
  done
done
