"""One end-to-end client process (Python, through the library's built-in sync).

    python pyclient.py run   STORE URL NAME INC SEED MAX_BATCH
    python pyclient.py final STORE URL NAME DUMP

run: mutates for ever (the test kills it with SIGKILL), syncing in the background. Step k
(from 1) of incarnation INC is one mutation that increments the shared counter, writes the
client's log record log/NAME/INC-k and patches last/NAME; every third step adds a mutation on
the client's own counter pc/NAME (n += 1, sum += k) with a marker pcmark/NAME/INC-k. Every
FLUSH_EVERY steps it flushes and prints "flushed k": everything up to step k is on disk.

final: syncs to idle, printing "progress STATUS-JSON" every PROGRESS_S seconds until then (the
test's patience follows that progress rather than a fixed time), and prints "idle 0|1"; then
waits for a line on stdin, asks for one more exchange (sync_now: a pull after every client went
idle), waits for idle again, writes its status and visible state to DUMP as JSON, prints "done"
and closes the store. Its requests get the library's default timeout: the proxy passes
everything by then, and on a loaded machine a push of a whole outbox batch can take longer than
the faulty phase's 1.5 s, which would only make the client send it again while the server is
still working on it (each abandoned copy is processed too, behind the others).

Both modes give up on their own (run after LIFETIME_S, final's wait for idle after FINAL_IDLE_S),
and when their parent is gone.
"""

import json
import os
import random
import sys
import time

import optimist

COLLECTIONS = ("shared", "log", "last", "pc", "pcmark")
FLUSH_EVERY = 5
LIFETIME_S = 240
SYNC = dict(pull_interval_ms=100, timeout_ms=1500, backoff_base_ms=50, backoff_max_ms=400)
FINAL_SYNC = dict(SYNC, timeout_ms=10_000)
PROGRESS_S = 5
FINAL_IDLE_S = 900


def run(path, url, name, inc, seed, max_batch):
    rng = random.Random(seed)
    parent = os.getppid()
    s = optimist.Store(path)
    s.sync_start(url, max_batch=max_batch, **SYNC)
    print("started", s.client_id, flush=True)
    deadline = time.monotonic() + LIFETIME_S
    for k in range(1, 10_000_000):
        key = f"{name}/{inc:03d}-{k:06d}"
        s.mutate([optimist.incr("shared", "total", "n", 1),
                  optimist.put("log", key, {"c": name, "inc": inc, "k": k}),
                  optimist.patch("last", name, {"at": {"inc": inc, "k": k}})])
        if k % 3 == 0:
            s.mutate([optimist.incr("pc", name, "n", 1), optimist.incr("pc", name, "sum", k),
                      optimist.put("pcmark", key, {"k": k})])
        if k % FLUSH_EVERY == 0:
            s.flush()
            print("flushed", k, flush=True)
            if time.monotonic() > deadline or os.getppid() != parent:
                break
        time.sleep(rng.uniform(0.004, 0.016))
    s.close()


def final(path, url, name, dump):
    s = optimist.Store(path)
    s.sync_start(url, **FINAL_SYNC)
    parent = os.getppid()
    deadline = time.monotonic() + FINAL_IDLE_S
    idle = s.sync_wait_idle(PROGRESS_S)
    while not idle and time.monotonic() < deadline and os.getppid() == parent:
        print("progress", json.dumps(s.sync_status()), flush=True)
        idle = s.sync_wait_idle(PROGRESS_S)
    print("idle", int(idle), flush=True)
    line = sys.stdin.readline()
    if line.strip() != "check":
        s.close()
        sys.exit(f"{name}: expected 'check' on stdin, got {line!r}")
    s.sync_now()
    idle = s.sync_wait_idle(60)
    state = {
        "idle": idle,
        "client_id": s.client_id,
        "status": s.sync_status(),
        "scans": {c: [[k, v] for k, v in s.scan(c)] for c in COLLECTIONS},
    }
    with open(dump, "w") as f:
        json.dump(state, f)
    print("done", flush=True)
    s.close()


if __name__ == "__main__":
    if sys.argv[1] == "run":
        run(sys.argv[2], sys.argv[3], sys.argv[4], int(sys.argv[5]), int(sys.argv[6]), int(sys.argv[7]))
    elif sys.argv[1] == "final":
        final(sys.argv[2], sys.argv[3], sys.argv[4], sys.argv[5])
    else:
        sys.exit(f"unknown mode {sys.argv[1]!r}")
