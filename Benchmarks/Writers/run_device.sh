#!/usr/bin/env bash
# The write path's figures for several builds of the library, side by side in one run, for a
# machine that has no toolchain: `bundle.sh` (beside this script) copies the programs, the
# libraries and their shared libraries into one folder, and this script, run there, prints
# every figure as JSON lines (Benchmarks/C/writers.c and percall.c), three runs each,
# alternating the builds run by run.
#
#   bash run.sh [REPS]     # in the bundle's folder
set -u
cd "$(dirname "${BASH_SOURCE[0]}")"
reps=${1:-3}
echo "{\"machine\":\"$(nproc) CPUs, $(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2 | sed 's/^ *//')\"}"
work=$(mktemp -d)
for r in $(seq 1 "$reps"); do
    for lib in lib/*/; do
        name=$(basename "$lib")
        export LD_LIBRARY_PATH="$PWD/$lib:$PWD/deps"
        for store in mem "$work/w.optimist"; do
            timeout 120 ./bin/writers "$store" 1 | sed "s/^{/{\"lib\":\"$name\",\"rep\":$r,/"
        done
        for store in mem "$work/t.optimist"; do
            WRITERS_TAP_EVERY_US=100 timeout 60 ./bin/writers "$store" 1 tap_beside_batches | sed "s/^{/{\"lib\":\"$name\",\"rep\":$r,/"
        done
        for store in mem "$work/p.optimist"; do
            rm -f "$work/p.optimist"*
            timeout 60 ./bin/percall "$store" 20000 | sed "s/^/$name rep $r $(basename "$store"): /"
        done
    done
done
rm -rf "$work"
