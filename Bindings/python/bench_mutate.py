"""Measures the per-call cost of ``store.mutate([optimist.put(...)])`` from Python.

Each sample times one call (building the op, the C batch and the mutation) on an in-memory
store with no subscribers, for a record of about 100 bytes of JSON; it prints the median and
the 10th/90th percentiles in microseconds. Run:

    OPTIMIST_LIBRARY=/path/to/liboptimist.so python3 Bindings/python/bench_mutate.py [N]
"""

import json
import statistics
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent / "src"))

import optimist  # noqa: E402


def main() -> None:
    n = int(sys.argv[1]) if len(sys.argv) > 1 else 100_000
    record = {"title": "Read twenty pages", "done": False, "streak": 12, "tags": ["books", "evening"],
              "updated": "2026-11-22T01:00"}
    size = len(json.dumps(record, separators=(",", ":")))
    clock = time.perf_counter_ns
    with optimist.Store() as store:
        mutate, put = store.mutate, optimist.put
        for i in range(2_000):  # warm up
            mutate([put("habits", f"warm{i:06d}", record)])
        samples = []
        for i in range(n):
            key = f"h{i:07d}"
            t0 = clock()
            mutate([put("habits", key, record)])
            samples.append(clock() - t0)
        # The op built once, outside the timing: the cost of the call alone.
        op = put("habits", "same", record)
        reused = []
        for _ in range(n):
            t0 = clock()
            mutate([op])
            reused.append(clock() - t0)
        # The floor: the same four C calls made directly through ctypes, JSON pre-encoded.
        from ctypes import byref, c_uint64, c_void_p
        from optimist import _ffi
        lib = _ffi.lib
        new, add, mut, free = lib.optimist_batch_new, lib.optimist_batch_put, lib.optimist_mutate, lib.optimist_batch_free
        js = json.dumps(record, separators=(",", ":")).encode()
        out = c_uint64()
        raw = []
        h_store = store._h
        for _ in range(n):
            t0 = clock()
            h = c_void_p()
            new(byref(h))
            add(h, b"habits", b"same", js)
            mut(h_store, h, None, byref(out))
            free(h)
            raw.append(clock() - t0)
    q = statistics.quantiles(samples, n=10)
    print(f"liboptimist {optimist.library_version()} at {optimist.library_path}")
    print(f"record: {size} bytes of JSON; {n} calls")
    print(f"store.mutate([optimist.put(...)]): median {statistics.median(samples) / 1000:.2f} us "
          f"(p10 {q[0] / 1000:.2f}, p90 {q[-1] / 1000:.2f})")
    print(f"store.mutate([op]) with the op built once: median {statistics.median(reused) / 1000:.2f} us")
    print(f"raw ctypes batch_new+batch_put+mutate+batch_free (floor): median {statistics.median(raw) / 1000:.2f} us")


if __name__ == "__main__":
    main()
