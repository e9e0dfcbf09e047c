"""Per-call cost of the Python binding's hot calls, for callgrind and for a quick median.

    python3 Benchmarks/Python/percall.py STORE_FILE OP REPS

OP is ``get`` (a confirmed log, cached), ``mutate`` (one put, rolled back untimed) or
``none`` (the setup alone). Under callgrind, the instructions of one call are the difference
between a run with REPS calls and one with none, divided by REPS (Benchmarks/callgrind.sh).
Without callgrind it prints the median in microseconds.
"""

import os
import statistics
import sys
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import bench  # noqa: E402
import optimist  # noqa: E402

N = 1000


def main() -> None:
    path, op, reps = sys.argv[1], sys.argv[2], int(sys.argv[3])
    store, _ = bench.open_logs(optimist, path, N)
    keys = [bench.existing_log(i, N)[0] for i in range(N)]
    for k in keys:  # every log read once: the gets below hit the cache
        store.get("logs", k)
    picks = [bench.tap_pick(i, N) for i in range(reps)]
    records = [bench.record(day, habit, i) for i, (day, habit) in enumerate(picks)]
    get, mutate, rollback, put = store.get, store.mutate, store.rollback, optimist.put
    clock, t = time.perf_counter_ns, []
    if op == "get":
        for i in range(reps):
            k = keys[(i * 7919) % N]
            t0 = clock()
            get("logs", k)
            t.append(clock() - t0)
    elif op == "mutate":
        for i, (day, habit) in enumerate(picks):
            t0 = clock()
            mid = mutate([put("logs", f"{day}/{habit}", records[i])])
            t.append(clock() - t0)
            rollback(mid)
    store.close()
    if t:
        decoder = getattr(getattr(optimist, "_json", None), "DECODER", "json")
        path = "accelerator" if getattr(getattr(optimist, "_fast", None), "SPEEDUPS", False) else "ctypes"
        print(f"python {op} ({decoder}, {path}): median {statistics.median(t) / 1000:.2f} µs over {reps}")


if __name__ == "__main__":
    main()
