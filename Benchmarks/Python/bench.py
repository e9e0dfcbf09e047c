"""Python bench: reload against optimistic apply, the same workload as the C and Swift benches.

    python3 bench.py [--quick|--full] [--dir DIR]

Prints one JSON object per line on stdout (collected by Benchmarks/run); progress on stderr.
The optimistic half needs the ``optimist`` package (Bindings/python) and its library
(``OPTIMIST_LIBRARY``); without them only the SQLite reload baseline runs.
"""

from __future__ import annotations

import argparse
import json
import os
import sqlite3
import sys
import time

HABITS_PER_DAY = 8
TODAY_SEED = 3
NOTE = "checked in from the widget, streak kept"
AT = 1_763_770_000_000


def today_index(n: int) -> int:
    return (n - TODAY_SEED) // HABITS_PER_DAY + 1


def existing_log(i: int, n: int) -> tuple[str, str, str]:
    """Key, day and habit of existing log ``i`` (the last TODAY_SEED fall on today)."""
    if i >= n - TODAY_SEED:
        day, habit = f"d{today_index(n):06d}", f"h{i - (n - TODAY_SEED):03d}"
    else:
        day, habit = f"d{i // HABITS_PER_DAY:06d}", f"h{i % HABITS_PER_DAY:03d}"
    return f"{day}/{habit}", day, habit


def tap_pick(seq: int, n: int) -> tuple[str, str]:
    """Which log tap `seq` adds (today, habit "t<seq>"). The app knows these when the user
    taps, so both flows pick them before the clock starts and build their key (and the
    optimistic flow its record) inside the timed part."""
    return f"d{today_index(n):06d}", f"t{seq:06d}"


def record(day: str, habit: str, seq: int) -> dict:
    return {"habit": habit, "day": day, "done": 1, "at": AT + seq, "note": NOTE}


def summary(ns: list[int]) -> dict:
    """Median (headline), p99 (tail), IQR and min/max (spread), in microseconds; nearest rank."""
    s = sorted(ns)
    k = len(s)

    def q(p: float) -> float:
        rank = max(1, min(k, -(-int(p * k * 1_000_000) // 1_000_000)))
        return round(s[rank - 1] / 1000, 3)

    return {"median_us": q(0.5), "p99_us": q(0.99), "p25_us": q(0.25), "p75_us": q(0.75),
            "min_us": round(s[0] / 1000, 3), "max_us": round(s[-1] / 1000, 3),
            "mean_us": round(sum(s) / k / 1000, 3), "reps": k}


def emit(fields: dict) -> None:
    print(json.dumps(fields), flush=True)


def unlink_all(path: str) -> None:
    for suffix in ("", "-wal", "-shm", "-journal"):
        try:
            os.unlink(path + suffix)
        except FileNotFoundError:
            pass


class Reload:
    """The pessimistic flow, done well: WAL, synchronous=NORMAL, cached (prepared) statements.
    A tap writes one log in a transaction, then reads every log back and recounts today. The
    heavy reload reads all six columns of text rows (key, habit, day, a ~40-byte note ...); the
    lean one (``lean``) keeps the five narrow columns the screen needs as integers in a table of
    its own."""

    def __init__(self, path: str, n: int) -> None:
        unlink_all(path)
        self.n = n
        self.today = f"d{today_index(n):06d}"
        self.db = sqlite3.connect(path, isolation_level=None, cached_statements=64)
        self.db.execute("PRAGMA journal_mode=WAL")
        self.db.execute("PRAGMA synchronous=NORMAL")
        self.db.execute("CREATE TABLE logs(id TEXT PRIMARY KEY, habit TEXT NOT NULL, day TEXT NOT NULL, "
                        "done INTEGER NOT NULL, at INTEGER NOT NULL, note TEXT NOT NULL)")
        self.db.execute("BEGIN")
        rows = []
        for i in range(n):
            key, day, habit = existing_log(i, n)
            rows.append((key, habit, day, AT + i, NOTE))
        self.db.executemany("INSERT INTO logs VALUES(?, ?, ?, 1, ?, ?)", rows)
        self.db.execute("CREATE TABLE lean_logs(id INTEGER PRIMARY KEY, habit INTEGER NOT NULL, "
                        "day INTEGER NOT NULL, done INTEGER NOT NULL, at INTEGER NOT NULL)")
        self.db.executemany("INSERT INTO lean_logs VALUES(?, ?, ?, 1, ?)",
                            [(i, int(habit[1:]), int(day[1:]), at) for i, (_, habit, day, at, _) in enumerate(rows)])
        self.db.execute("COMMIT")
        self.db.execute("PRAGMA wal_checkpoint(TRUNCATE)")

    def tap(self, day: str, habit: str, seq: int) -> int:
        return self._write_then_count("INSERT INTO logs VALUES(?, ?, ?, 1, ?, ?)",
                                      (f"{day}/{habit}", habit, day, AT + seq, NOTE),
                                      "SELECT id, habit, day, done, at, note FROM logs", self.today)

    def tap_lean(self, day: str, habit: str, seq: int) -> int:
        return self._write_then_count("INSERT INTO lean_logs VALUES(?, ?, ?, 1, ?)",
                                      (self.n + seq, int(habit[1:]), int(day[1:]), AT + seq),
                                      "SELECT id, habit, day, done, at FROM lean_logs", int(self.today[1:]))

    def _write_then_count(self, insert: str, row: tuple, select: str, today) -> int:
        """One tap: the log in a transaction, then every log read back and today recounted."""
        db = self.db
        db.execute("BEGIN IMMEDIATE")
        db.execute(insert, row)
        db.execute("COMMIT")
        rows = db.execute(select).fetchall()
        return sum(1 for r in rows if r[3] and r[2] == today)

    def undo_lean(self, seq: int) -> None:
        self.db.execute("DELETE FROM lean_logs WHERE id = ?", (self.n + seq,))

    def undo(self, seq: int) -> None:
        day, habit = tap_pick(seq, self.n)
        self.db.execute("DELETE FROM logs WHERE id = ?", (f"{day}/{habit}",))

    def close(self) -> None:
        self.db.close()


def open_logs(optimist, path: str, n: int):
    """A file-backed store (memory if that fails) with n confirmed logs and a count view."""
    unlink_all(path)
    try:
        store, file_backed = optimist.Store(path), True
    except optimist.Error as e:
        print(f"python: file-backed store unavailable ({e}); using memory", file=sys.stderr)
        store, file_backed = optimist.Store(), False
    chunk = []
    for i in range(n):
        key, day, habit = existing_log(i, n)
        chunk.append(optimist.put("logs", key, record(day, habit, i)))
        if len(chunk) == 10_000:
            store.server_apply(chunk)
            chunk = []
    if chunk:
        store.server_apply(chunk)
    store.view_define("today", "logs", f"d{today_index(n):06d}/", "count")
    store.flush()
    return store, file_backed


def optimistic_tap(store, optimist, day: str, habit: str, seq: int) -> tuple[int, float]:
    """One optimistic tap as a Python app writes it: the key and the record, one mutation, the
    view read. Returns the mutation's id and today's count."""
    mid = store.mutate([optimist.put("logs", f"{day}/{habit}", record(day, habit, seq))])
    return mid, store.view_get("today")


BLOCKS = 10


def reload_vs_optimistic(n: int, full: bool, workdir: str, optimist) -> None:
    """Both flows open side by side: warm-up taps of both, then BLOCKS rounds of some reload taps
    followed by some optimistic taps, so a change in the shared machine's load hits both alike.
    Each tap is followed by an untimed undo so every tap sees the same n."""
    reload_reps = (max(5, min(600, 3_000_000 // n)) if full else max(20, min(500, 2_000_000 // n)))
    reload_reps = max(BLOCKS, reload_reps // BLOCKS * BLOCKS)
    opt_reps = 10_000 if full else 5000
    print(f"python reload/optimistic n={n}", file=sys.stderr)
    r = Reload(f"{workdir}/reload-py-{n}.db", n)
    store = file_backed = None
    if optimist is not None:
        store, file_backed = open_logs(optimist, f"{workdir}/opt-py-{n}.optimist", n)
    clock = time.perf_counter_ns
    rs, ls, os_, value, rseq, oseq = [], [], [], 0.0, 0, 0
    counts = [0, 0]  # what the heavy and the lean reload counted last
    for block in range(-1, BLOCKS):  # block -1: warm-up, discarded
        # Both reloads in each block: the heavy one (every column), then the lean one.
        for k, (tap, undo, out) in enumerate(((r.tap, r.undo, rs), (r.tap_lean, r.undo_lean, ls))):
            for _ in range(max(2, reload_reps // 10) if block < 0 else reload_reps // BLOCKS):
                day, habit = tap_pick(rseq, n)
                t0 = clock()
                counts[k] = tap(day, habit, rseq)
                t = clock() - t0
                undo(rseq)
                rseq += 1
                if block >= 0:
                    out.append(t)
        if store is None:
            continue
        for _ in range(opt_reps // 10 if block < 0 else opt_reps // BLOCKS):
            day, habit = tap_pick(oseq, n)
            t0 = clock()
            mid, value = optimistic_tap(store, optimist, day, habit, oseq)
            t = clock() - t0
            store.rollback(mid)
            oseq += 1
            if block >= 0:
                os_.append(t)
    r.close()
    count = counts[0]
    if counts[1] != count:
        sys.exit(f"python: the heavy reload counted {count}, the lean one {counts[1]}")
    for kind, samples in (("reload", rs), ("reload_lean", ls)):
        emit({"section": "reload_vs_optimistic", "host": "python", "kind": kind, "n": n, "store": "sqlite",
              "today_count": count, **summary(samples)})
    if store is None:
        return
    store.close()
    if int(value) != count:
        sys.exit(f"python: reload counted {count}, the view says {value}")
    emit({"section": "reload_vs_optimistic", "host": "python", "kind": "optimistic", "n": n,
          "store": "file" if file_backed else "memory", "today_count": int(value), **summary(os_)})


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--quick", action="store_true")
    ap.add_argument("--full", action="store_true")
    ap.add_argument("--dir", default="/tmp/optimist-bench")
    a = ap.parse_args()
    os.makedirs(a.dir, exist_ok=True)
    try:
        import optimist
    except ImportError as e:  # the library or the package is not there yet
        print(f"python: optimist unavailable ({e}); reload baseline only", file=sys.stderr)
        optimist = None
    ns = [1_000, 10_000, 100_000] + ([1_000_000] if a.full else [])
    for n in ns:
        reload_vs_optimistic(n, a.full, a.dir, optimist)


if __name__ == "__main__":
    main()
