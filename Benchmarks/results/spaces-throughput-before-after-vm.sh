set -e
cd /work/main
PG=$(cat /tmp/pgurl)
for run in 1 2 3; do
  for side in before after after-shared; do
    case $side in before) ROOTD=/work/wt-before; EXTRA=--private-only;; after) ROOTD=/work/main; EXTRA=--private-only;; *) ROOTD=/work/main; EXTRA=;; esac
    BIN=$ROOTD/Server/.build/release/optimist-server
    OPTIMIST_LIBRARY=$ROOTD/build/liboptimist.so PYTHONPATH=$ROOTD/Bindings/python/src \
      python3 Benchmarks/Sync/bench_spaces.py --server $BIN --pg $PG --runs 1 --only throughput $EXTRA 2>/dev/null | sed "s/^{/{\"side\": \"$side\", \"rep\": $run, /"
  done
done
