set -e
cd /work/main
PG=$(cat /tmp/pgurl)
for run in 1 2 3; do
  for side in before after; do
    if [ $side = before ]; then ROOTD=/work/wt-before; else ROOTD=/work/main; fi
    BIN=$ROOTD/Server/.build/release/optimist-server
    OPTIMIST_LIBRARY=$ROOTD/build/liboptimist.so PYTHONPATH=$ROOTD/Bindings/python/src \
      python3 Benchmarks/Sync/bench_spaces.py --server $BIN --pg $PG --runs 1 --only burst 2>/dev/null | sed "s/^{/{\"side\": \"$side\", \"rep\": $run, /"
  done
done
