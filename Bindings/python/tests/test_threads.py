"""One store shared by many threads: ctypes releases the GIL in each call (CDLL), and the
library serializes internally."""

import threading

import optimist
from optimist import incr, put

THREADS = 8
PER_THREAD = 300


def run_all(target, n=THREADS):
    errors = []

    def wrapped(i):
        try:
            target(i)
        except BaseException as e:  # noqa: BLE001
            errors.append(e)

    ts = [threading.Thread(target=wrapped, args=(i,), name=f"worker-{i}") for i in range(n)]
    for t in ts:
        t.start()
    for t in ts:
        t.join()
    assert errors == []


def test_concurrent_mutations_and_reads(store):
    ids = [[] for _ in range(THREADS)]

    def work(i):
        for j in range(PER_THREAD):
            ids[i].append(store.mutate([incr("s", "counter", "n", 1), put("t", f"{i}-{j:04d}", {"i": i, "j": j})]))
            assert store.get("s", "counter")["n"] >= 1
            store.is_pending("t", f"{i}-{j:04d}")

    run_all(work)
    flat = [x for xs in ids for x in xs]
    assert len(set(flat)) == THREADS * PER_THREAD
    for xs in ids:
        assert xs == sorted(xs)  # increasing within each thread
    assert store.get("s", "counter") == {"n": THREADS * PER_THREAD}
    assert len(store.scan("t")) == THREADS * PER_THREAD
    assert store.pending_count() == THREADS * PER_THREAD


def test_concurrent_commits_and_rollbacks(store):
    mids = [store.mutate([incr("s", "c", "n", 1)]) for _ in range(THREADS * 50)]

    def work(i):
        for mid in mids[i::THREADS]:
            if mid % 2:
                store.commit(mid)
            else:
                store.rollback(mid)

    run_all(work)
    committed = sum(1 for m in mids if m % 2)
    assert store.get("s", "c") == {"n": committed}
    assert store.confirmed("s", "c") == {"n": committed}
    assert store.pending_count() == 0


def test_callbacks_and_their_exceptions_stay_on_their_thread(store):
    """Each thread's callback exceptions are raised in that thread's own call."""
    seen = {}
    lock = threading.Lock()

    def cb(changes):
        for c in changes:
            with lock:
                seen.setdefault(threading.current_thread().name, []).append(c.key)
            if c.value and c.value.get("boom"):
                raise ValueError(c.key)

    store.subscribe(cb)
    raised = {}

    def work(i):
        mine = []
        for j in range(50):
            key = f"{i}-{j}"
            try:
                store.mutate([put("c", key, {"boom": j % 5 == 0})])
            except ValueError as e:
                mine.append(str(e))
        raised[i] = mine

    run_all(work)
    for i in range(THREADS):
        assert raised[i] == [f"{i}-{j}" for j in range(0, 50, 5)]
    assert sum(len(v) for v in seen.values()) == THREADS * 50
    for name, keys in seen.items():  # delivered on the mutating thread
        assert {"worker-" + k.split("-")[0] for k in keys} == {name}


def test_close_while_other_threads_work():
    """Closing from one thread while others call: they get MisuseError, nothing crashes."""
    s = optimist.Store()
    started = threading.Barrier(THREADS + 1)

    def work(i):
        started.wait()
        for j in range(2000):
            try:
                s.mutate([put("c", f"{i}-{j}", {})])
                s.get("c", f"{i}-{j}")
            except optimist.MisuseError:
                return

    ts = [threading.Thread(target=work, args=(i,)) for i in range(THREADS)]
    for t in ts:
        t.start()
    started.wait()
    s.close()
    for t in ts:
        t.join()
    assert s.closed


def test_calls_release_the_gil(store):
    """While one thread is inside the library, another runs Python code.

    With the switch interval raised far out, the main thread never hands the GIL over between
    Python statements, so the spinning thread can only advance while the main thread is
    inside a foreign call that released the GIL (or blocked). Deterministic, no timing.
    """
    import sys
    import time

    from optimist import _ffi
    assert not isinstance(_ffi.lib, __import__("ctypes").PyDLL)

    ops = [put("c", f"k{i:05d}", {"v": i}) for i in range(5000)]
    counter = [0]
    stop = [False]
    started = threading.Event()

    def spin():
        started.set()
        while not stop[0]:
            counter[0] += 1
            time.sleep(0)  # releases the GIL, so the main thread can take it back

    old = sys.getswitchinterval()
    t = threading.Thread(target=spin)
    try:
        sys.setswitchinterval(1000.0)
        t.start()
        started.wait()
        before = counter[0]
        store.server_apply(ops)
        after = counter[0]
    finally:
        stop[0] = True
        sys.setswitchinterval(old)
        t.join()
    assert after > before
    assert store.pending_count() == 0 and len(store.scan("c")) == 5000
