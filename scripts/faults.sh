#!/usr/bin/env bash
# The long runs of the two fault tests in Tests/C/faults, which CTest runs cut short (every 2nd
# I/O call, 40 sweeps):
#
#   - io_faults --full: the workload once for every I/O call it makes with that call failing,
#     and once with every write failing from that call on until the disk comes back;
#   - crash_sweep --kills 200: kill -9 at 200 random instants while the store takes big batches
#     and a sync pulls, then reopen and check.
#
# Each prints its counts (runs, IO errors returned, records lost, mutations torn; kills,
# reopens, lost, torn) and exits non-zero on a broken promise.
#
#   bash scripts/faults.sh                 # both, after building the C tests in build/
#   FAULTS_KILLS=500 FAULTS_SEED=7 bash scripts/faults.sh
#   bash scripts/faults.sh --no-build      # reuse build/
set -uo pipefail
ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
cd "$ROOT"
if [ "${1:-}" != "--no-build" ]; then
    bash scripts/install-deps.sh || exit 1
    cmake -S . -B build -G Ninja -DCMAKE_BUILD_TYPE=Release -DOPTIMIST_BUILD_TESTS=ON >/dev/null &&
        cmake --build build --target io_faults crash_sweep || exit 1
fi
failed=0
echo "faults: io_faults --full"
build/Tests/C/io_faults --full || failed=1
echo "faults: crash_sweep --kills ${FAULTS_KILLS:-200} --seed ${FAULTS_SEED:-1}"
build/Tests/C/crash_sweep --kills "${FAULTS_KILLS:-200}" --seed "${FAULTS_SEED:-1}" || failed=1
[ "$failed" -eq 0 ]
