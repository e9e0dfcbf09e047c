#!/usr/bin/env bash
# The one test command: installs what is missing, builds everything and runs every suite —
# the layering check (every module imports only modules below it), Swift tests, the DocC
# documentation (warnings fail it), CTest (C tests, the libffi scenario
# shim, install and example tests), the same C tests under sanitizers, a short run of every
# fuzz target (scripts/fuzz.sh), pytest over the Python package (with its C accelerator and
# orjson, and without them), the Swift quick start, and the package added by URL as an app does.
# Prints each suite's summary and exits non-zero if any suite fails.
#
#   bash scripts/test.sh            # everything
#   OPTIMIST_SKIP_SANITIZERS=1 OPTIMIST_SKIP_FUZZ=1 bash scripts/test.sh   # a faster local loop
set -uo pipefail
ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
cd "$ROOT"
bash scripts/install-deps.sh || exit 1

LOGS="$ROOT/build/test-logs"
mkdir -p "$LOGS"
declare -a SUITES=() STATUS=() SUMMARY=()

# run_suite NAME SUMMARY-PATTERN COMMAND...: runs, logs, keeps the runner's closing line.
run_suite() {
    local name=$1 pattern=$2; shift 2
    printf '\n==================== %s ====================\n' "$name"
    local start=$SECONDS
    "$@" 2>&1 | tee "$LOGS/$name.log"
    local rc=${PIPESTATUS[0]}
    local line
    line=$(grep -E "$pattern" "$LOGS/$name.log" | tail -n 1)
    SUITES+=("$name")
    STATUS+=("$([ "$rc" -eq 0 ] && echo PASS || echo "FAIL (exit $rc)")")
    SUMMARY+=("${line:-no summary line} [$((SECONDS - start)) s]")
}

swift_tests() { swift test; }
# The tests are asked for explicitly: the demo configures build/ without them, and a cached
# OFF must not turn this into a run of nothing (ctest --no-tests=error also refuses that).
cmake_build() {
    cmake -S . -B build -G Ninja -DCMAKE_BUILD_TYPE=Release -DOPTIMIST_BUILD_TESTS=ON && cmake --build build
}
ctest_run() { ctest --test-dir build --output-on-failure --no-tests=error; }
sanitizer_tests() {
    cmake -S . -B build-san -G Ninja -DCMAKE_BUILD_TYPE=Release -DOPTIMIST_BUILD_TESTS=ON -DOPTIMIST_SANITIZERS=ON &&
        cmake --build build-san && ctest --test-dir build-san --output-on-failure --no-tests=error
}
# Every libFuzzer target briefly (its seeds and regression inputs replayed first, then new
# inputs): a quick net, not the long runs (bash scripts/fuzz.sh, 60 s a target by default).
fuzz_run() { FUZZ_SECONDS="${FUZZ_SECONDS:-15}" bash scripts/fuzz.sh; }
python_tests() {
    # A venv of our own: nothing is installed into the user's Python.
    local venv="$ROOT/build/venv"
    [ -x "$venv/bin/python" ] || python3 -m venv "$venv" || return 1
    # orjson: the package's optional `fast` extra (its decoder); the suite below runs on it.
    # setuptools: builds the accelerator in place below (a venv of Python 3.12 or later has none).
    "$venv/bin/python" -m pip install -q --disable-pip-version-check pytest hypothesis orjson setuptools || return 1
    # The README's Python quick start, as written: pip install ./Bindings/python.
    OPTIMIST_LIBRARY="$ROOT/build/liboptimist.so" "$venv/bin/python" -m pip install -q \
        --disable-pip-version-check --force-reinstall --no-deps ./Bindings/python || return 1
    # ... which builds the C accelerator (optimist._speedups) beside the bundled library.
    (cd /tmp && env -u OPTIMIST_LIBRARY "$venv/bin/python" -c 'import optimist, optimist._fast as f; s = optimist.Store(); print("bundled library loads:", s.client_id, "accelerator:", f.SPEEDUPS); s.close(); assert f.SPEEDUPS') || return 1
    # The tests import the package from src/: the accelerator is built there too, and required.
    (cd Bindings/python && "$venv/bin/python" setup.py -q build_ext --inplace --force) || return 1
    OPTIMIST_REQUIRE_SPEEDUPS=1 OPTIMIST_LIBRARY="$ROOT/build/liboptimist.so" "$venv/bin/python" -m pytest -q Bindings/python/tests
}
# The codecs compared, the encoding of ops, the scenario corpus, the model-based test and the
# accelerator's tests again on the standard library's decoder (installed without orjson) with
# the accelerator; then the codecs, ops and scenarios on orjson without it (installed where
# nothing could be compiled; the suite below runs everything else on ctypes).
python_stdlib_json_tests() {
    local t=Bindings/python/tests
    OPTIMIST_PYTHON_JSON=stdlib OPTIMIST_REQUIRE_SPEEDUPS=1 OPTIMIST_LIBRARY="$ROOT/build/liboptimist.so" \
        "$ROOT/build/venv/bin/python" -m pytest -q $t/test_json.py $t/test_ops_encoding.py $t/test_scenarios.py \
        $t/test_stateful.py $t/test_fast.py || return 1
    OPTIMIST_PYTHON_SPEEDUPS=0 OPTIMIST_LIBRARY="$ROOT/build/liboptimist.so" \
        "$ROOT/build/venv/bin/python" -m pytest -q $t/test_json.py $t/test_ops_encoding.py $t/test_scenarios.py
}
# Every Python test on ctypes alone and the standard library's decoder: the package as
# installed with no extra and no compiler.
python_ctypes_tests() {
    OPTIMIST_PYTHON_SPEEDUPS=0 OPTIMIST_PYTHON_JSON=stdlib OPTIMIST_LIBRARY="$ROOT/build/liboptimist.so" \
        "$ROOT/build/venv/bin/python" -m pytest -q Bindings/python/tests
}
# The Swift API's DocC catalog and doc comments (scripts/docs.sh): fails on any DocC warning.
docs_build() { bash scripts/docs.sh "$ROOT/build/docs"; }
# Its scratch folder is kept between runs; SwiftPM's incremental build of a path dependency can
# miss a source file added to it since (a pulled checkout), so a failed build is tried once more
# from an empty folder.
quickstart_run() {
    swift run --package-path examples/swift --scratch-path "$ROOT/build/swift-quickstart" habits-quickstart &&
        swift run --package-path examples/swift --scratch-path "$ROOT/build/swift-quickstart" habits-viewmodel
}
swift_quickstart() {
    swift build --package-path examples/swift --scratch-path "$ROOT/build/swift-quickstart" || {
        echo "the quick start's build failed: building again from an empty scratch folder"
        rm -rf "$ROOT/build/swift-quickstart"
    }
    quickstart_run
}
# The package as an app adds it: by a file:// URL and a version tag, built in debug and release
# with no environment variable, and run (SwiftPM refuses unsafe flags in such a package).
consumer_package() { bash Tests/Consumer/run.sh; }
# The reference server (debug: its first build is several times faster than release) against
# SQLite and a throwaway PostgreSQL; then the clients and the server end to end.
server_tests() { OPTIMIST_SERVER_CONFIG=debug bash Server/run-tests.sh; }
e2e_tests() {
    OPTIMIST_SERVER_CONFIG=debug OPTIMIST_LIBRARY="$ROOT/build/liboptimist.so" bash Tests/e2e/run.sh
}

# The module graph (Tests/Layering/layers.txt): every import and every target dependency points down.
layering() { python3 Tests/Layering/check_layers.py --graph; }

run_suite layering 'layering: [0-9]+ passed' layering
run_suite swift-tests 'Test run with|Executed [0-9]+ tests' swift_tests
run_suite docs 'docs: built' docs_build
run_suite cmake-build 'Linking|ninja: no work|liboptimist' cmake_build
run_suite ctest 'tests passed' ctest_run
if [ -z "${OPTIMIST_SKIP_SANITIZERS:-}" ]; then
    run_suite sanitizers 'tests passed' sanitizer_tests
fi
if [ -z "${OPTIMIST_SKIP_FUZZ:-}" ]; then
    run_suite fuzz 'fuzz: [0-9]+ targets' fuzz_run
fi
run_suite python 'passed|failed' python_tests
run_suite python-stdlib-json 'passed|failed' python_stdlib_json_tests
run_suite python-ctypes 'passed|failed' python_ctypes_tests
run_suite swift-quickstart 'habits-viewmodel|habits-quickstart|done' swift_quickstart
run_suite consumer 'consumer: ' consumer_package
run_suite server 'passed|failed' server_tests
run_suite e2e 'passed|failed' e2e_tests

printf '\n==================== summary ====================\n'
failed=0
for i in "${!SUITES[@]}"; do
    printf '%-18s %-14s %s\n' "${SUITES[$i]}" "${STATUS[$i]}" "${SUMMARY[$i]}"
    [ "${STATUS[$i]}" = PASS ] || failed=$((failed + 1))
done
echo "suites: $(( ${#SUITES[@]} - failed )) passed, $failed failed"
[ "$failed" -eq 0 ]
