"""The habit-tracker story, played through the Python package ``optimist``.

The same moments as ``habits_demo.c`` (a tap that shows at once, a refused write undone
exactly, the server's canonical value arriving under pending changes, a crash with the outbox
intact, reload versus optimistic timing), written the way a Python host would write them. Every
check prints a check mark or a cross; any cross makes the exit status 1.

Usage:  python3 demo/habits_demo.py [WORKDIR]          (default demo/.work)
        python3 demo/habits_demo.py --crash-child PATH (internal: the process section 4 kills)

``scripts/demo.sh`` runs it with ``PYTHONPATH=Bindings/python/src`` and
``OPTIMIST_LIBRARY=build/liboptimist.so``, so nothing is installed into your Python.
"""

from __future__ import annotations

import datetime
import json
import os
import select
import signal
import sqlite3
import statistics
import subprocess
import sys
import time

import optimist
from optimist import incr, patch, put

OK, CROSS = "\u2714", "\u2718"
failed = False


def section(title: str, why: str = "") -> None:
    print(f"\n\u2501\u2501 {title}")
    if why:
        print(f"   {why}")


def note(text: str) -> None:
    print(f"   {text}")


def check(ok: bool, text: str) -> None:
    global failed
    print(f"   {OK} {text}" if ok else f"   {CROSS} FAILED: {text}")
    if not ok:
        failed = True


def js(value) -> str:
    """A record as compact JSON with sorted members (as the C demo prints it), or (none)."""
    return "(none)" if value is None else json.dumps(value, sort_keys=True, separators=(",", ":"))


def show(store: optimist.Store, label: str, coll: str, key: str) -> None:
    """One record: its visible value, and the server's when they differ."""
    v, c = store.get(coll, key), store.confirmed(coll, key)
    if v == c:
        print(f"     {label:<26} {js(v)}")
    else:
        print(f"     {label:<26} {js(v)}   (server has {js(c)}, pending)")


def remove_store(path: str) -> None:
    for suffix in ("", "-wal", "-shm", "-journal"):
        try:
            os.unlink(path + suffix)
        except FileNotFoundError:
            pass


# ------------------------------------------------------------------------------------------
# Section 4's child: makes three changes, flushes, reports, and waits to be killed.
# ------------------------------------------------------------------------------------------

def crash_child(path: str) -> None:
    store = optimist.Store(path)
    a = store.mutate([put("logs", "2026-11-23/read", {"done": True, "pages": 25}),
                      incr("habits", "read", "streak", 1)], dedupe_key="2026-11-23/read")
    w = store.mutate([incr("logs", "2026-11-23/water", "glasses", 2)])
    r = store.mutate([patch("habits", "water", {"goal": 10})], policy="keep")
    for _ in range(3):
        store.outbox_next(5000)
    store.fail(w, True, "timeout", 5000)
    store.fail(r, False, "422 goal above the plan's limit", 5000)
    store.flush()
    print("READY", store.client_id, a, w, r, store.status(a), store.status(w), store.status(r), flush=True)
    while True:  # no close, no exit: the parent sends SIGKILL
        signal.pause()


# ------------------------------------------------------------------------------------------
# The story.
# ------------------------------------------------------------------------------------------

def main(workdir: str) -> int:
    os.makedirs(workdir, exist_ok=True)
    path = os.path.join(workdir, "habits-py.optimist")
    remove_store(path)
    print(f"The habit tracker, through Python (optimist from {os.path.dirname(optimist.__file__)})")
    print(f"Store file: {path}")

    store = optimist.Store(path)
    store.server_apply([
        put("habits", "run", {"name": "Morning run", "streak": 4}),
        put("habits", "read", {"name": "Read 20 pages", "streak": 9}),
        put("habits", "water", {"name": "Water", "goal": 8}),
        put("logs", "2026-11-21/run", {"done": True, "minutes": 30}),
    ])
    store.view_define("today", "logs", "2026-11-22/", "count")
    seen: list = []
    sub = store.subscribe(lambda changes: seen.extend(changes), coll="logs")

    # ---- 1 ---------------------------------------------------------------------------------
    section("1. Complete a habit: it shows at once",
            "One mutation writes today's log and bumps the streak; a subscribed UI hears about it.")
    t0 = time.perf_counter()
    m_run = store.mutate([put("logs", "2026-11-22/run", {"done": True, "minutes": 32}),
                          incr("habits", "run", "streak", 1)], dedupe_key="2026-11-22/run")
    t1 = time.perf_counter()
    value = store.get("logs", "2026-11-22/run")
    note(f"store.mutate took {(t1 - t0) * 1e6:.1f} \u00b5s from Python (the process's first mutate, "
         "ctypes set-up included; warmed-up figures in section 5).")
    show(store, "logs/2026-11-22/run", "logs", "2026-11-22/run")
    show(store, "habits/run", "habits", "run")
    check(value == {"done": True, "minutes": 32}, "get returns the new log")
    check(store.is_pending("logs", "2026-11-22/run"), "is_pending(logs/2026-11-22/run) is True")
    check(store.get("habits", "run")["streak"] == 5, "the streak shows 5 at once")
    check(store.view_get("today") == 1, "today's ring counts 1 log")
    got = [(c.key, c.value, c.pending, c.cause) for c in seen]
    check(got == [("2026-11-22/run", {"done": True, "minutes": 32}, True, "mutate")],
          f"the subscriber got one change: {got}")
    try:
        store.mutate([put("logs", "2026-11-22/run", {"done": True})], dedupe_key="2026-11-22/run")
        check(False, "a double tap is refused")
    except optimist.DuplicateError as e:
        check(e.existing_id == m_run, f"a double tap raises DuplicateError (existing_id = {e.existing_id})")

    # ---- 2 ---------------------------------------------------------------------------------
    section("2. A failed write is undone exactly",
            'A completes "read", B renames "run"; the server refuses A for good.')
    m_a = store.mutate([put("logs", "2026-11-22/read", {"done": True, "pages": 20}),
                        incr("habits", "read", "streak", 1)])
    m_b = store.mutate([patch("habits", "run", {"name": "Evening run"})])
    note(f"Before (A = #{m_a}, B = #{m_b}, {store.pending_count()} pending):")
    show(store, "habits/read", "habits", "read")
    show(store, "logs/2026-11-22/read", "logs", "2026-11-22/read")
    show(store, "habits/run", "habits", "run")
    first = store.outbox_next(1000)
    second = store.outbox_next(1000)
    note(f"outbox hands out #{first[0]} and #{second[0]}: {js(second[1])}")
    check(first[0] == m_run and second[0] == m_a, "oldest first")
    seen.clear()
    store.fail(m_a, False, "403: habit archived on another device", 1200)
    note("After the permanent failure of A:")
    show(store, "habits/read", "habits", "read")
    show(store, "logs/2026-11-22/read", "logs", "2026-11-22/read")
    show(store, "habits/run", "habits", "run")
    check(store.status(m_a) == "rolled_back", "A is rolled_back")
    check(store.get("habits", "read") == {"name": "Read 20 pages", "streak": 9}
          and store.get("logs", "2026-11-22/read") is None, "A is gone exactly: streak 9, no log")
    check(store.get("habits", "run") == {"name": "Evening run", "streak": 5} and store.status(m_b) == "pending",
          "B's rename and the earlier streak +1 are kept")
    check([(c.key, c.value, c.cause) for c in seen] == [("2026-11-22/read", None, "fail")],
          "the subscriber saw the log disappear (cause 'fail')")

    # ---- 3 ---------------------------------------------------------------------------------
    section("3. The server's canonical value wins, pending changes stay on top",
            "The server accepts the run with its own streak (12); the watch pushes 5 glasses of water.")
    store.commit(m_run, [put("logs", "2026-11-22/run", {"done": True, "minutes": 32, "source": "phone"}),
                         patch("habits", "run", {"streak": 12})])
    show(store, "habits/run", "habits", "run")
    check(store.confirmed("habits", "run") == {"name": "Morning run", "streak": 12}
          and store.get("habits", "run") == {"name": "Evening run", "streak": 12},
          "confirmed streak 12 from the server, the pending rename re-applied on top")
    m_w = store.mutate([incr("logs", "2026-11-22/water", "glasses", 1)])
    store.server_apply([put("logs", "2026-11-22/water", {"glasses": 5})])
    show(store, "logs/2026-11-22/water", "logs", "2026-11-22/water")
    check(store.get("logs", "2026-11-22/water") == {"glasses": 6}
          and store.confirmed("logs", "2026-11-22/water") == {"glasses": 5},
          "the pending +1 is rebased onto the watch's 5: 6 on screen")
    store.commit(m_b)
    store.commit(m_w)
    check(store.pending_count() == 0 and store.view_get("today") == 2, "all confirmed; today's ring = 2")
    try:
        store.commit(m_b)
        check(False, "a second commit is refused")
    except optimist.StateError:
        check(True, "a second commit of the same id raises StateError")
    sub.close()
    store.close()

    # ---- 4 ---------------------------------------------------------------------------------
    section("4. A restart with the outbox intact",
            "A child Python process makes 3 changes, flushes, and is killed with SIGKILL.")
    child = subprocess.Popen([sys.executable, os.path.abspath(__file__), "--crash-child", path],
                             stdout=subprocess.PIPE, text=True)
    # Never hang the demo on a child that got stuck: give it 60 s to report.
    ready, _, _ = select.select([child.stdout], [], [], 60)
    line = child.stdout.readline().split() if ready else []
    child.kill()  # SIGKILL
    child.wait()
    child.stdout.close()
    if len(line) != 8 or line[0] != "READY":
        check(False, f"the child reported its mutations (got {line})")
        return 1
    client, a, w, r = line[1], int(line[2]), int(line[3]), int(line[4])
    note(f"Child before the kill: client {client}; #{a} {line[5]}, #{w} {line[6]}, #{r} {line[7]}")
    check(child.returncode == -signal.SIGKILL, "the child died of SIGKILL")
    with optimist.Store(path) as store:
        check(store.client_id == client, f"same client id {store.client_id}")
        check(store.pending_count() == 3, f"{store.pending_count()} mutations pending")
        check((store.status(a), store.status(w), store.status(r)) == ("pending", line[6], line[7]),
              f"statuses: #{a} {store.status(a)} (was {line[5]}: sent again), #{w} {store.status(w)}, "
              f"#{r} {store.status(r)}")
        show(store, "logs/2026-11-23/read", "logs", "2026-11-23/read")
        show(store, "habits/water", "habits", "water")
        check(store.get("habits", "read")["streak"] == 10 and store.get("habits", "water")["goal"] == 10
              and store.get("logs", "2026-11-23/water") == {"glasses": 2}, "the screen is as before the crash")
        out = [store.outbox_next(65000), store.outbox_next(65000), store.outbox_next(65000)]
        check([o and o[0] for o in out] == [a, w, None],
              f"the outbox hands out #{a} and #{w} again; the failed #{r} waits for retry")
        store.retry(r)
        check(store.outbox_next(65000)[0] == r, f"after retry, #{r} goes out too")

    # ---- 5 ---------------------------------------------------------------------------------
    n, reps = 10000, 200
    section("5. Reload vs optimistic from Python, measured",
            f"{n} logs; per tap: sqlite3 INSERT + SELECT all + recount, vs store.mutate + view_get. "
            f"{reps} taps, medians.")
    habits = ("run", "read", "water", "stretch", "journal")
    start = datetime.date(2000, 1, 1)
    keys = [f"{start + datetime.timedelta(days=i // 5)}/{habits[i % 5]}" for i in range(n + reps)]
    db_path = os.path.join(workdir, "reload-py.sqlite")
    remove_store(db_path)
    db = sqlite3.connect(db_path, isolation_level=None)
    db.execute("PRAGMA journal_mode=WAL")
    db.execute("PRAGMA synchronous=NORMAL")
    db.execute("CREATE TABLE logs(key TEXT PRIMARY KEY, json TEXT NOT NULL)")
    db.execute("BEGIN")
    db.executemany("INSERT OR REPLACE INTO logs VALUES(?, ?)", [(k, '{"done":true}') for k in keys[:n]])
    db.execute("COMMIT")
    reload_t = []
    for i in range(reps):
        t0 = time.perf_counter()
        db.execute("INSERT OR REPLACE INTO logs VALUES(?, ?)", (keys[n + i], '{"done":true}'))
        count = sum(1 for (j,) in db.execute("SELECT json FROM logs") if '"done":true' in j)
        reload_t.append(time.perf_counter() - t0)
    db.close()
    bench_path = os.path.join(workdir, "bench-py.optimist")
    remove_store(bench_path)
    opt_t = []
    with optimist.Store(bench_path) as bench:
        bench.server_apply([put("logs", k, {"done": True}) for k in keys[:n]])
        bench.view_define("all", "logs", "", "count")
        for i in range(reps):
            t0 = time.perf_counter()
            bench.mutate([put("logs", keys[n + i], {"done": True})])
            opt_count = bench.view_get("all")
            opt_t.append(time.perf_counter() - t0)
    r_med, o_med = statistics.median(reload_t) * 1e6, statistics.median(opt_t) * 1e6
    print(f"\n     {'reload (median)':>22} {'optimistic (median)':>22} {'ratio':>8}")
    print(f"     {r_med:19.1f} \u00b5s {o_med:19.1f} \u00b5s {r_med / o_med:7.0f}x")
    check(count == n + reps and opt_count == n + reps, f"both ways count {count} logs")

    print(f"\n{CROSS + ' Some checks FAILED.' if failed else OK + ' All Python checks passed.'}")
    return 1 if failed else 0


if __name__ == "__main__":
    if len(sys.argv) >= 3 and sys.argv[1] == "--crash-child":
        crash_child(sys.argv[2])
    sys.exit(main(sys.argv[1] if len(sys.argv) > 1 else "demo/.work"))
