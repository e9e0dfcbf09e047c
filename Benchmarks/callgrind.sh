#!/usr/bin/env bash
# Instructions per call of the hot path, counted by callgrind: repeatable where timings are
# not (a shared, noisy machine). Prints one table row per step:
#   C: the tap through a batch (JSON, fields), the one-op tap (optimist_put, _put_fields),
#      commit, and a cached get, each in its own function of Benchmarks/C/percall.c;
#   Python: get and mutate (one put) from Benchmarks/Python/percall.py, as the difference
#      between a run with REPS calls and one with none (the interpreter's start-up cancels).
#
#   bash Benchmarks/callgrind.sh [LIBRARY]     (default build/liboptimist.so)
#
# A LIBRARY from before optimist_put runs only the batch steps; with OPTIMIST_PYTHON_SRC set to
# another checkout's Bindings/python/src, the Python rows use that package (a "before" row).
# OPTIMIST_BENCH_PYTHON picks the interpreter (default: python3). The Python rows come once per
# JSON decoder (json, and orjson when installed there) and per path (ctypes alone, and the C
# accelerator, built here in place when missing); an older package ignores the choices.
set -euo pipefail
root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
lib="$(realpath "${1:-$root/build/liboptimist.so}")"
pysrc="${OPTIMIST_PYTHON_SRC:-$root/Bindings/python/src}"
reps=2000
work="$(mktemp -d)"
trap 'rm -rf "$work"' EXIT
command -v valgrind >/dev/null || { echo "callgrind.sh: valgrind is needed (apt-get install valgrind)" >&2; exit 2; }
[ -f "$lib" ] || { echo "callgrind.sh: no library at $lib (build it first: cmake --build build)" >&2; exit 2; }

# The C steps. The binary links whatever liboptimist.so sits in $work (the one measured).
ln -sf "$lib" "$work/liboptimist.so"
soname="$(readelf -d "$lib" | sed -n 's/.*SONAME.*\[\(.*\)\]/\1/p')"
[ -n "$soname" ] && ln -sf "$lib" "$work/$soname"
mode="" link=()
symbols="$(nm -D --defined-only "$lib")"
# An older library lacks optimist_put: the binary then runs the batch steps only, and the
# one-op calls it never makes are weak references (null, never called).
if ! grep -q ' optimist_put$' <<<"$symbols"; then
    mode=batch
    printf '#pragma weak optimist_put\n#pragma weak optimist_put_fields\n' >"$work/weak.h"
    link=(-include "$work/weak.h")
fi
cc -O2 -std=c11 -I"$root/Include" -I"$root/Benchmarks/C" "$root/Benchmarks/C/percall.c" \
   "$root/Benchmarks/C/common.c" "$root/Benchmarks/C/optimistic.c" -L"$work" -loptimist \
   -Wl,-rpath,"$work" "${link[@]}" -o "$work/percall"
valgrind --tool=callgrind --callgrind-out-file="$work/c.out" --toggle-collect='step_*' \
    "$work/percall" "$work/c.optimist" "$reps" $mode >/dev/null 2>"$work/c.err" || { cat "$work/c.err" >&2; exit 1; }
echo "library: $lib"
printf '%-34s %14s\n' "step" "instructions"
callgrind_annotate --inclusive=yes "$work/c.out" | awk -v reps="$reps" '
    / \?\?\?:step_/ { n = $1; gsub(",", "", n); for (f = 2; f <= NF; f++) if ($f ~ /^\?\?\?:step_/) name = $f;
                      sub(/^\?\?\?:step_/, "", name);
                      printf "C %-32s %14.0f\n", name, n / reps }'

# The Python rows: total instructions with REPS calls minus with none; on the standard
# library's JSON decoder, and on orjson (the package's `fast` extra) when this Python has it.
py="${OPTIMIST_BENCH_PYTHON:-$(python3 -c 'import sys; print(sys.executable)')}"
py="$(realpath "$py")"
total() {  # total DECODER PATH OP COUNT
    rm -f "$work"/p.optimist*
    local choice="" speedups=1
    [ "$1" = json ] && choice=stdlib
    [ "$2" = ctypes ] && speedups=0
    # A fixed hash seed: with Python's random one, the same rows moved by ~500 instructions
    # from run to run (its dicts and sets probe differently each time).
    PYTHONHASHSEED=0 \
    OPTIMIST_PYTHON_JSON="$choice" OPTIMIST_PYTHON_SPEEDUPS="$speedups" OPTIMIST_LIBRARY="$lib" PYTHONPATH="$pysrc" \
        valgrind --tool=callgrind --callgrind-out-file="$work/p.out" \
        "$py" "$root/Benchmarks/Python/percall.py" "$work/p.optimist" "$3" "$4" 2>&1 >/dev/null |
        sed -n 's/.*refs: *//p' | tr -d ','
}
decoders=(json)
"$py" -c 'import orjson' 2>/dev/null && decoders+=(orjson)
paths=(ctypes)
if [ -f "$pysrc/optimist/_speedups.c" ]; then
    (cd "$pysrc/.." && "$py" setup.py -q build_ext --inplace >/dev/null 2>&1) || true
    ls "$pysrc"/optimist/_speedups*.so >/dev/null 2>&1 && paths+=(accelerator)
fi
for path in "${paths[@]}"; do
    for decoder in "${decoders[@]}"; do
        base=$(total "$decoder" "$path" none "$reps")
        for op in get mutate; do
            n=$(total "$decoder" "$path" "$op" "$reps")
            printf 'Python %-27s %14.0f\n' "$op ($decoder, $path)" "$(echo "($n - $base) / $reps" | bc -l)"
        done
    done
done
