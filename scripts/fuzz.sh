#!/usr/bin/env bash
# Builds the libFuzzer targets in Tests/Fuzz and runs each for FUZZ_SECONDS (default 60).
# Exits non-zero when any target finds something (a crash, a broken promise, a hang, an
# out-of-memory): the input is kept in build-fuzz/findings/. Prints each target's execs/s and
# coverage (libFuzzer's final stats).
#
#   bash scripts/fuzz.sh                                  # every target, 60 s each
#   FUZZ_SECONDS=15 bash scripts/fuzz.sh                  # what scripts/test.sh runs
#   FUZZ_TARGETS="fuzz_op_sequence" bash scripts/fuzz.sh  # some targets only
#   bash scripts/fuzz.sh --build-only
#
# fuzz_protocol is Swift: it calls the wire protocol's decoders (OptimistProtocol) directly, which
# the C ABI does not expose. It is linked with its own copy of the two modules it needs,
# OptimistModel and OptimistProtocol, compiled from Sources/ with the release build's flags plus
# -sanitize=fuzzer,address (in build-fuzz/protocol/), so it needs nothing of the library build.
#
# The library is built a second time for this, in build-fuzz/ (SwiftPM, -j 1: a shared machine),
# with the Swift compiler's -sanitize=fuzzer,address: libFuzzer then sees the engine's own
# branches (not just the harness's), and ASan watches the library's unsafe pointer work at the
# C boundary. The targets are C, compiled with the Swift toolchain's clang, whose libFuzzer
# matches the compiler that instrumented the library.
#
# Inputs found to grow coverage go to build-fuzz/corpus/<target> (not committed); the seeds and
# every regression input live in Tests/Fuzz/corpus/<target> and are replayed first on each run.
set -uo pipefail
ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
cd "$ROOT"
bash scripts/install-deps.sh || exit 1

SECONDS_EACH=${FUZZ_SECONDS:-60}
TARGETS=${FUZZ_TARGETS:-"fuzz_record_json fuzz_op_sequence fuzz_store_file fuzz_sync_response fuzz_protocol"}
JOBS=${FUZZ_JOBS:-1}
BUILD="$ROOT/build-fuzz"
mkdir -p "$BUILD/bin" "$BUILD/findings" "$BUILD/logs"

# The toolchain's clang first (plain clang may be a distribution one without libFuzzer, or
# another LLVM version than the one that instrumented the Swift code).
swift_bin="$(dirname "$(readlink -f "$(command -v swift)")")"
CLANG="${FUZZ_CC:-}"
[ -n "$CLANG" ] || { [ -x "$swift_bin/clang" ] && CLANG="$swift_bin/clang"; } || CLANG="$(command -v clang || true)"
if [ -z "$CLANG" ]; then echo "fuzz: no clang (looked beside swift in $swift_bin and on PATH)" >&2; exit 1; fi
# lld when the toolchain has it: the system's gold warns for every ASan symbol.
LINKER=()
[ -x "$swift_bin/ld.lld" ] || command -v ld.lld >/dev/null 2>&1 && LINKER=(-fuse-ld=lld)

# ---- the instrumented library ------------------------------------------------------------------
cmake -S . -B "$BUILD" -G Ninja -DCMAKE_BUILD_TYPE=Release -DCMAKE_C_COMPILER="$CLANG" \
    -DOPTIMIST_BUILD_TESTS=OFF -DOPTIMIST_LTO=OFF "-DOPTIMIST_SWIFT_EXTRA_FLAGS=-j;$JOBS;-Xswiftc;-sanitize=fuzzer,address" \
    >"$BUILD/logs/configure.log" 2>&1 || { cat "$BUILD/logs/configure.log"; exit 1; }
# Only the C targets need it (FUZZ_TARGETS=fuzz_protocol runs without).
for t in $TARGETS; do
    [ -f "$ROOT/Tests/Fuzz/$t.c" ] || continue
    echo "fuzz: building the instrumented liboptimist.so in build-fuzz/ (first time: a few minutes)"
    cmake --build "$BUILD" --target optimist_swift -j "$JOBS" || exit 1
    break
done

# ---- the targets ----------------------------------------------------------------------------------
CFLAGS=(-std=gnu11 -g -O1 -fno-omit-frame-pointer -Wall -Wextra -Werror
        -fsanitize=fuzzer,address,undefined -fno-sanitize-recover=undefined -I"$ROOT/Include")
# The Swift targets' two modules, each compiled whole (-wmo) as SwiftPM's release build does,
# again only when one of its sources (or the module below) changed.
SWIFT_FLAGS=(-O -g -parse-as-library -swift-version 6 -package-name optimist -enforce-exclusivity=unchecked
             -sanitize=fuzzer,address)
PROTO="$BUILD/protocol"
build_protocol_modules() {
    mkdir -p "$PROTO"
    local module below="" stale
    for module in OptimistModel OptimistProtocol; do
        stale=$(find "$ROOT/Sources/$module" -name '*.swift' -newer "$PROTO/$module.o" 2>/dev/null | head -n 1)
        if [ ! -f "$PROTO/$module.o" ] || [ -n "$stale" ] || { [ -n "$below" ] && [ "$PROTO/$below.o" -nt "$PROTO/$module.o" ]; }; then
            echo "fuzz: compiling $module for the Swift targets"
            # shellcheck disable=SC2046 # the module's source files
            swiftc "${SWIFT_FLAGS[@]}" -wmo -I "$PROTO" -module-name "$module" -emit-module \
                -emit-module-path "$PROTO/$module.swiftmodule" -c -o "$PROTO/$module.o" \
                $(find "$ROOT/Sources/$module" -name '*.swift' | sort) || return 1
        fi
        below=$module
    done
}

for t in $TARGETS; do
    out="$BUILD/bin/$t"
    if [ -f "$ROOT/Tests/Fuzz/$t.swift" ]; then
        src="$ROOT/Tests/Fuzz/$t.swift"
        build_protocol_modules || exit 1
        if [ ! -x "$out" ] || [ "$src" -nt "$out" ] || [ "$PROTO/OptimistProtocol.o" -nt "$out" ] || [ "$PROTO/OptimistModel.o" -nt "$out" ]; then
            echo "fuzz: compiling $t"
            swiftc "${SWIFT_FLAGS[@]}" -I "$PROTO" "${LINKER[@]/-fuse-ld=/-use-ld=}" "$src" \
                "$PROTO/OptimistModel.o" "$PROTO/OptimistProtocol.o" -o "$out" 2> >(grep -v "Cannot export local symbol" >&2) || exit 1
        fi
        continue
    fi
    src="$ROOT/Tests/Fuzz/$t.c"
    [ -f "$src" ] || { echo "fuzz: no target $t ($src)" >&2; exit 1; }
    if [ ! -x "$out" ] || [ "$src" -nt "$out" ] || [ "$ROOT/Tests/Fuzz/fuzz_common.h" -nt "$out" ] ||
        [ "$BUILD/liboptimist.so.1" -nt "$out" ]; then
        echo "fuzz: compiling $t"
        # The linker's notes about ASan's local symbols are noise; real errors still print.
        "$CLANG" "${CFLAGS[@]}" "${LINKER[@]}" "$src" -L"$BUILD" -l:liboptimist.so.1 -Wl,-rpath,"$BUILD" \
            -lm -lpthread -o "$out" 2> >(grep -v "Cannot export local symbol" >&2) || exit 1
    fi
done
[ "${1:-}" = "--build-only" ] && exit 0

# ---- the runs ------------------------------------------------------------------------------------
# -detect_leaks=0: every in-memory store opened leaves a small tombstone for the life of the
#  process (optimist.h, HANDLES), so LeakSanitizer would scan the whole heap after every input
#  and run 25 times slower; leaks are the sanitizer CTest suite's job.
# -timeout: one input running this long is a hang (a finding).
failed=0
declare -a LINES=()
declare -a NAMED=()
for t in $TARGETS; do
    corpus="$BUILD/corpus/$t"
    seeds="$ROOT/Tests/Fuzz/corpus/$t"
    mkdir -p "$corpus"
    rm -f "$BUILD/findings/$t-"*
    log="$BUILD/logs/$t.log"
    echo "fuzz: running $t for ${SECONDS_EACH}s"
    "$BUILD/bin/$t" -max_total_time="$SECONDS_EACH" -print_final_stats=1 -timeout=20 -detect_leaks=0 \
        -rss_limit_mb=3072 -artifact_prefix="$BUILD/findings/$t-" "$corpus" "$seeds" >"$log" 2>&1
    rc=$?
    execs=$(grep -E '^stat::average_exec_per_sec:' "$log" | awk '{print $2}')
    runs=$(grep -E '^stat::number_of_executed_units:' "$log" | awk '{print $2}')
    cov=$(grep -oE 'cov: [0-9]+ ft: [0-9]+' "$log" | tail -n 1)
    corp=$(grep -oE 'corp: [0-9]+/[0-9]+[a-zA-Z]*' "$log" | tail -n 1)
    findings=$(find "$BUILD/findings" -name "$t-*" -type f | wc -l)
    status=ok
    if [ "$rc" -ne 0 ] || [ "$findings" -ne 0 ]; then
        status="FINDING (exit $rc)"
        failed=$((failed + 1))
        # What broke, in a few words, for the one-line summary (a CI page may show only that).
        cause=$(grep -m1 -oE 'Swift runtime failure: [^/]*|runtime error: .*|fuzz_[a-z_]+\.c:[0-9]+: .*|fuzz_[a-z_]+\.swift: .*|ERROR: libFuzzer: [a-z -]*|ERROR: AddressSanitizer: [a-z-]*' "$log" | head -n 1 | sed "s/ *$//")
        where=$(grep -m1 -oE '/Sources/[^ ]+\.swift:[0-9]+' "$log" | sed 's|^/Sources/||')
        NAMED+=("$t: ${cause:-exit $rc}${where:+ at $where}")
        # The report: the first lines that say what broke, then where the input is.
        grep -E 'FUZZ|ERROR|runtime error|SUMMARY|: .*(returned|expected|says|not canonical)' "$log" | head -n 20
        find "$BUILD/findings" -name "$t-*" -type f | sed 's/^/  input: /'
        echo "  log: $log"
    fi
    LINES+=("$(printf '%-20s %-16s execs/s %-7s runs %-9s %-22s %-16s' "$t" "$status" "${execs:-?}" "${runs:-?}" "${cov:-cov: ?}" "${corp:-}")")
done

printf '\n%s\n' "---- fuzz summary (${SECONDS_EACH}s each) ----"
printf '%s\n' "${LINES[@]}"
n=$(wc -w <<<"$TARGETS")
if [ "$failed" -eq 0 ]; then
    echo "fuzz: $n targets, $failed with findings"
else
    echo "fuzz: $n targets, $failed with findings ($(IFS=';'; echo "${NAMED[*]}"))"
fi
[ "$failed" -eq 0 ]
