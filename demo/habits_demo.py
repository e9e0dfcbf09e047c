"""The habit-tracker story, played through the Python package ``optimist`` against a real
``optimist-server``.

Two devices of one user, a phone and a tablet, each with its own store file, sync with the
server through the library's own background sync (no send loop here): a tap that shows at
once and is then confirmed, the tablet's change arriving under the phone's pending one, a
change the server refuses (kept as failed, or undone exactly), taps made while the server is
down surviving a SIGKILL and catching up once it is back, and reload versus optimistic timing.
Every check prints a check mark or a cross; any cross makes the exit status 1.

The story comes in three parts, because the server has to go down and come back in between:

    python3 demo/habits_demo.py WORKDIR URL online     # server up: sections 1-3
    python3 demo/habits_demo.py WORKDIR URL offline    # server stopped: section 4
    python3 demo/habits_demo.py WORKDIR URL catchup    # server up again, same address: 5-6
    python3 demo/habits_demo.py --crash-child PATH URL # internal: the process section 4 kills

``scripts/demo.sh`` starts the server (``--refuse 'logs/2026-11-1=...'``), stops and restarts
it between the parts, and runs this with ``PYTHONPATH=Bindings/python/src`` and
``OPTIMIST_LIBRARY=build/liboptimist.so``, so nothing is installed into your Python.
"""

from __future__ import annotations

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

# Section 6 measures with the benchmark's own two flows (the same workload, reload and tap).
sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "Benchmarks", "Python"))
import bench  # noqa: E402
from optimist import incr, patch, put

OK, CROSS = "\u2714", "\u2718"
ARROW = "\u2192"
TODAY = "2026-11-22"
WAIT_S = 20  # the longest a sync may take to settle on loopback before a check fails
failed = False


def section(title: str, *why: str) -> None:
    print(f"\n\u2501\u2501 {title}")
    for line in why:
        print(f"   {line}")


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
    """One record: its visible value, and the server's (confirmed) one while it is pending."""
    v = store.get(coll, key)
    if not store.is_pending(coll, key):
        print(f"     {label:<22} {js(v)}")
    else:
        c = store.confirmed(coll, key)
        print(f"     {label:<22} {js(v)}   (server: {js(c) if c is not None else 'none'})")


def sync_line(store: optimist.Store) -> str:
    s = store.sync_status()
    text = (f"sync: {s['state']}, pushed {s['pushed']}, pulled {s['pulled']}, cursor {s['cursor']}, "
            f"pending {s['pending']}, failed {s['failed']}")
    return text + (f"; last error: {s['last_error']}" if s["last_error"] else "")


def remove_store(path: str) -> None:
    for suffix in ("", "-wal", "-shm", "-journal"):
        try:
            os.unlink(path + suffix)
        except FileNotFoundError:
            pass


class Device:
    """One device of the user: its store file, today's ring (a view), a subscription that
    records what the UI hears, and the library's background sync."""

    def __init__(self, name: str, path: str, url: str | None = None) -> None:
        self.name, self.path = name, path
        self.store = optimist.Store(path)
        self.store.view_define("today", "logs", TODAY + "/", "count")
        self.heard: list = []  # every optimist.Change, in order (some arrive on the sync's thread)
        self.store.subscribe(self.heard.extend)
        # The screen: today's logs, longest first, and today's totals, as two live queries the
        # library keeps current. The UI draws their rows once and then only applies the deltas
        # it is sent: it never reloads them.
        today = {"prefix": TODAY + "/"}
        self.today_list = self.store.query({"collection": "logs", "range": today,
                                            "order": [{"field": "minutes", "desc": True}]})
        self.today_totals = self.store.query({"collection": "logs", "range": today, "group": {
            "by": ["done"], "aggregates": {"logs": "count", "minutes": "sum:minutes"}}})
        self.list_rows, self.totals_rows = self.today_list.rows(), self.today_totals.rows()
        self.today_list.subscribe(lambda d: optimist.apply_deltas(self.list_rows, d))
        self.today_totals.subscribe(lambda d: optimist.apply_deltas(self.totals_rows, d))
        if url:
            self.start_sync(url)

    def start_sync(self, url: str) -> None:
        # max_batch=1: one mutation per request, so each answer of the server shows on its own
        # (apps keep the default, 100). A request gives up after 2 s (loopback).
        self.store.sync_start(url, max_batch=1, timeout_ms=2000)

    def wait_idle(self, why: str) -> bool:
        """Waits until the sync sent everything and pulled after it."""
        t0 = time.perf_counter()
        ok = self.store.sync_wait_idle(WAIT_S)
        check(ok, f"{self.name}'s sync is idle after {(time.perf_counter() - t0) * 1e3:.0f} ms: {why}")
        return ok

    def wait_state(self, state: str) -> bool:
        deadline = time.monotonic() + WAIT_S
        while self.store.sync_status()["state"] != state and time.monotonic() < deadline:
            time.sleep(0.01)
        return self.store.sync_status()["state"] == state

    def events(self, coll: str, key: str) -> list:
        """What the UI heard about one record: (cause, status, value) in order."""
        return [(c.cause, c.status, c.value) for c in self.heard if (c.collection, c.key) == (coll, key)]

    def close(self) -> None:
        self.store.close()  # stops the sync first


def told(events: list) -> str:
    """What a subscriber heard, as 'cause/status -> cause/status ...'."""
    return f" {ARROW} ".join(f"{cause}/{status}" for cause, status, _ in events)


def print_heard(dev: Device, coll: str, key: str) -> None:
    """What a device's UI heard about one record, a line per change: cause, record status, and
    the value when it changed."""
    note(f"the {dev.name}'s UI heard, on {coll}/{key}:")
    last = object()
    for cause, status, value in dev.events(coll, key):
        print(f"     {cause:<9} {status:<10} {js(value) if value != last else ''}".rstrip())
        last = value


def stored_reason(path: str, mid: int) -> str | None:
    """The server's error kept with a failed mutation. The library keeps it with the mutation,
    but neither the C ABI nor Python can read it yet, so the demo reads it from the store file
    (closed: an open store holds its file locked)."""
    db = sqlite3.connect(path)
    try:
        row = db.execute("SELECT last_error FROM mutations WHERE id = ?", (mid,)).fetchone()
    finally:
        db.close()
    return row[0] if row else None


# ------------------------------------------------------------------------------------------
# Part 1, server up: a tap, a second device, refusals.
# ------------------------------------------------------------------------------------------

def part_online(workdir: str, url: str) -> None:
    phone_path = os.path.join(workdir, "phone-py.optimist")
    tablet_path = os.path.join(workdir, "tablet-py.optimist")
    remove_store(phone_path)
    remove_store(tablet_path)
    print(f"The habit tracker, through Python (optimist from {os.path.dirname(optimist.__file__)})")
    print(f"Server: {url}   Store files: {phone_path}, {tablet_path}")

    # ---- 1 ---------------------------------------------------------------------------------
    section("1. A tap shows at once; the library's sync sends it",
            "The phone starts its sync (store.sync_start(url)) and adds three habits.")
    phone = Device("phone", phone_path, url)
    phone.store.mutate([put("habits", "run", {"name": "Morning run", "streak": 4}),
                        put("habits", "read", {"name": "Read 20 pages", "streak": 9}),
                        put("habits", "water", {"name": "Water", "goal": 8})])
    phone.wait_idle("the habits are on the server")

    note("You complete today's run: one mutation writes the log and bumps the streak.")
    phone.heard.clear()
    log_run = f"{TODAY}/run"
    t0 = time.perf_counter()
    m_run = phone.store.mutate([put("logs", log_run, {"done": True, "minutes": 32}),
                                incr("habits", "run", "streak", 1)], dedupe_key=log_run)
    t1 = time.perf_counter()
    note(f"store.mutate took {(t1 - t0) * 1e6:.0f} \u00b5s; right after it the phone shows:")
    show(phone.store, f"logs/{log_run}", "logs", log_run)
    show(phone.store, "habits/run", "habits", "run")
    check(phone.store.get("logs", log_run) == {"done": True, "minutes": 32}
          and phone.store.get("habits", "run")["streak"] == 5, "the log and streak 5 show at once")
    check([(c.cause, c.status) for c in phone.heard[:1]] == [("mutate", "pending")],
          "the UI heard it at once with status 'pending' (a sync badge)")
    check(phone.store.view_get("today") == 1, "today's ring counts 1 log")
    note("the screen's list and totals, two live queries, kept by their deltas alone:")
    for r in phone.list_rows:
        note(f"  {r['key']:<16} {r['value'].get('minutes', 0):>3} min   {r['status']}")
    for r in phone.totals_rows:
        note(f"  done={str(r['group']['done']).lower():<5} {r['values']['logs']:.0f} log(s), {r['values']['minutes']:.0f} min")
    check(phone.list_rows == phone.today_list.rows() and phone.totals_rows == phone.today_totals.rows()
          and [r["status"] for r in phone.list_rows] == ["pending"],
          "the screen shows the tap at once, pending, without reloading anything")
    phone.wait_idle("the sync sent the tap and the server said ok")
    check([r["status"] for r in phone.list_rows] == ["confirmed"] and phone.list_rows == phone.today_list.rows(),
          "the screen's row turned 'confirmed' when the server said ok (an update delta)")
    show(phone.store, f"logs/{log_run}", "logs", log_run)
    show(phone.store, "habits/run", "habits", "run")
    note(f"the UI heard on the log: {told(phone.events('logs', log_run))}")
    check(phone.store.status(m_run) == "committed", f"mutation #{m_run} is committed")
    check(phone.store.confirmed("habits", "run") == {"name": "Morning run", "streak": 5}
          and not phone.store.is_pending("habits", "run"), "confirmed = visible: no badge any more")
    check([(c, s) for c, s, _ in phone.events("logs", log_run)]
          == [("mutate", "pending"), ("sync", "pending"), ("commit", "confirmed")],
          "events: mutate (pending) \u2192 sync (sent) \u2192 commit (confirmed)")
    note(sync_line(phone.store))

    # ---- 2 ---------------------------------------------------------------------------------
    section("2. A second device",
            "The tablet (its own store file) starts its sync: its first pull brings the phone's taps.")
    tablet = Device("tablet", tablet_path, url)
    tablet.wait_idle("pulled")
    show(tablet.store, "habits/run", "habits", "run")
    show(tablet.store, f"logs/{log_run}", "logs", log_run)
    check(tablet.store.get("habits", "run") == {"name": "Morning run", "streak": 5}
          and tablet.store.get("logs", log_run) == {"done": True, "minutes": 32},
          "the tablet shows the phone's run and streak")
    check({c.cause for c in tablet.heard} == {"server"} and len(tablet.heard) == 4,
          f"its UI heard {len(tablet.heard)} records arrive, all with cause 'server'")

    note("The phone's app goes to the background: phone.sync_stop().")
    phone.store.sync_stop()
    log_water = f"{TODAY}/water"
    m_w = phone.store.mutate([incr("logs", log_water, "glasses", 1)])
    note("On the phone's widget you log +1 glass (it waits: no sync runs); on the tablet, +2.")
    tablet.store.mutate([incr("logs", log_water, "glasses", 2)])
    tablet.wait_idle("the tablet's +2 is on the server")
    show(phone.store, "phone: water", "logs", log_water)
    show(tablet.store, "tablet: water", "logs", log_water)
    note("The phone's app comes back: its sync starts, and pulls before it pushes.")
    phone.heard.clear()
    phone.start_sync(url)
    phone.wait_idle("pulled the tablet's +2, then sent its own +1")
    show(phone.store, "phone: water", "logs", log_water)
    print_heard(phone, "logs", log_water)
    first = phone.events("logs", log_water)[:1]
    check(first == [("server", "pending", {"glasses": 3})],
          "the tablet's 2 arrived (cause 'server') under the pending +1: 3 on screen, still pending")
    check(phone.store.status(m_w) == "committed" and phone.store.confirmed("logs", log_water) == {"glasses": 3},
          "then the +1 was sent: the server adds it up to 3 (an incr from each device)")
    tablet.store.sync_now()  # the tablet's "pull to refresh"
    tablet.wait_idle("pulled again")
    show(tablet.store, "tablet: water", "logs", log_water)
    check(tablet.store.get("logs", log_water) == {"glasses": 3}, "the tablet shows 3 too")

    # ---- 3 ---------------------------------------------------------------------------------
    section("3. The server refuses a change",
            "This server refuses any change to the logs of Nov 10-19 (its rule: --refuse 'logs/2026-11-1=...').",
            "Policy 'keep': a refused change stays on screen, marked failed, until you retry or discard it.")
    phone.heard.clear()
    old_read = "2026-11-14/read"
    m_note = phone.store.mutate([patch("logs", old_read, {"note": "felt great"})], policy="keep")
    phone.wait_idle("the server answered (a failed change does not count as busy)")
    show(phone.store, f"logs/{old_read}", "logs", old_read)
    print_heard(phone, "logs", old_read)
    check(phone.store.status(m_note) == "failed", f"#{m_note} is 'failed' (rejected by the server, kept)")
    check(phone.events("logs", old_read)[-1:] == [("fail", "failed", {"note": "felt great"})],
          "the UI heard cause 'fail' with status 'failed': the 'not saved - retry?' badge")
    check(phone.store.sync_status()["failed"] == 1, "sync status counts 1 failed")
    note("The app restarts (close, reopen): the failed change is still there, with the server's reason:")
    phone.close()
    reason = stored_reason(phone_path, m_note)
    note(f"  last error of #{m_note}: {reason!r}  (read from the store file: no API gives it yet)")
    check(reason == "refused by rule: that week is closed", "the server's error is kept with the mutation")
    phone = Device("phone", phone_path, url)
    phone.wait_idle("reopened")
    check(phone.store.status(m_note) == "failed" and phone.store.get("logs", old_read) == {"note": "felt great"},
          f"#{m_note} is still failed and shown after the restart")
    phone.store.rollback(m_note, "discarded by the user")
    check(phone.store.get("logs", old_read) is None and phone.store.pending_count() == 0,
          "you tap 'discard' (store.rollback): it is gone, nothing pending")

    note("Policy 'rollback' (the default): a refused change is undone exactly.")
    note("With the phone's sync stopped again you log a run for Nov 15, then rename 'run':")
    phone.store.sync_stop()
    old_run = "2026-11-15/run"
    m_old = phone.store.mutate([put("logs", old_run, {"done": True, "minutes": 25}),
                                incr("habits", "run", "streak", 1)])
    m_name = phone.store.mutate([patch("habits", "run", {"name": "Evening run"})])
    show(phone.store, f"logs/{old_run}", "logs", old_run)
    show(phone.store, "habits/run", "habits", "run")
    phone.heard.clear()
    phone.start_sync(url)
    phone.wait_idle(f"#{m_old} answered, then #{m_name}")
    show(phone.store, f"logs/{old_run}", "logs", old_run)
    show(phone.store, "habits/run", "habits", "run")
    print_heard(phone, "habits", "run")
    check(phone.store.status(m_old) == "rolled_back" and phone.store.get("logs", old_run) is None,
          f"#{m_old} was refused and rolled back: the Nov 15 log is gone")
    check([e for e in phone.events("habits", "run") if e[0] == "rollback"]
          == [("rollback", "pending", {"name": "Evening run", "streak": 5})],
          "at that moment the streak went back to 5 and the rename, still pending, stayed")
    check(phone.store.status(m_name) == "committed"
          and phone.store.confirmed("habits", "run") == {"name": "Evening run", "streak": 5},
          f"then the rename #{m_name} was committed")
    tablet.store.sync_now()
    tablet.wait_idle("pulled again")
    check(tablet.store.get("habits", "run") == {"name": "Evening run", "streak": 5}
          and tablet.store.get("logs", old_run) is None, "the tablet has the rename, and no Nov 15 log")
    note(sync_line(phone.store))
    phone.close()
    tablet.close()


# ------------------------------------------------------------------------------------------
# Part 2, server stopped: taps wait in the outbox, a child process is killed.
# ------------------------------------------------------------------------------------------

def crash_child(path: str, url: str) -> None:
    """Section 4's child: taps three times with its sync running, flushes, reports, and waits
    to be killed."""
    store = optimist.Store(path)
    store.sync_start(url, max_batch=1, timeout_ms=2000)
    ids = [store.mutate([incr("logs", f"{TODAY}/water", "glasses", 1)]) for _ in range(3)]
    store.flush()  # the durability point: what happened before it survives a crash
    deadline = time.monotonic() + WAIT_S
    while store.sync_status()["state"] != "offline" and time.monotonic() < deadline:
        time.sleep(0.01)
    print("READY", store.client_id, store.sync_status()["state"], *ids, flush=True)
    while True:  # no close, no exit: the parent sends SIGKILL
        signal.pause()


def part_offline(workdir: str, url: str) -> None:
    phone_path = os.path.join(workdir, "phone-py.optimist")
    section("4. Offline: taps wait in the outbox, even through a crash",
            "demo.sh stopped the server. The phone reopens its store and starts its sync anyway.")
    phone = Device("phone", phone_path, url)
    check(phone.wait_state("offline"), "the sync's state is 'offline' (connection refused)")
    note(sync_line(phone.store))
    log_read, log_water = f"{TODAY}/read", f"{TODAY}/water"
    m_read = phone.store.mutate([put("logs", log_read, {"done": True, "pages": 20}),
                                 incr("habits", "read", "streak", 1)], dedupe_key=log_read)
    try:
        phone.store.mutate([put("logs", log_read, {"done": True, "pages": 20})], dedupe_key=log_read)
        check(False, "a double tap is refused")
    except optimist.DuplicateError as e:
        check(e.existing_id == m_read, f"you complete 'read' (a double tap is refused: DuplicateError of #{m_read})")
    m_w = phone.store.mutate([incr("logs", log_water, "glasses", 1)])
    note("... and log +1 glass. Both show at once and wait:")
    show(phone.store, f"logs/{log_read}", "logs", log_read)
    show(phone.store, "habits/read", "habits", "read")
    show(phone.store, f"logs/{log_water}", "logs", log_water)
    check(phone.wait_state("offline") and phone.store.pending_count() == 2,
          "still offline, 2 changes pending; today's ring says %.0f" % phone.store.view_get("today"))
    phone.close()

    note("A child process opens the phone's store, starts its sync (offline too), logs +1 glass")
    note("three times, flushes, and is killed with SIGKILL (kill -9):")
    child = subprocess.Popen([sys.executable, os.path.abspath(__file__), "--crash-child", phone_path, url],
                             stdout=subprocess.PIPE, text=True)
    # Never hang the demo on a child that got stuck: give it 60 s to report.
    ready, _, _ = select.select([child.stdout], [], [], 60)
    line = child.stdout.readline().split() if ready else []
    child.kill()  # SIGKILL
    child.wait()
    child.stdout.close()
    if len(line) != 6 or line[0] != "READY":
        check(False, f"the child reported its taps (got {line})")
        return
    client, state, child_ids = line[1], line[2], [int(x) for x in line[3:]]
    note(f"  child (pid {child.pid}): sync {state}, taps #{', #'.join(map(str, child_ids))}; then killed")
    check(child.returncode == -signal.SIGKILL, "the child died of SIGKILL (no close, no exit)")

    store = optimist.Store(phone_path)  # no sync: just look
    check(store.client_id == client, f"reopened: same client id {client}")
    ids = [m_read, m_w] + child_ids
    statuses = [store.status(i) for i in ids]
    check(store.pending_count() == 5 and set(statuses) == {"pending"},
          f"the outbox is intact: {store.pending_count()} changes, all pending")
    show(store, f"logs/{log_water}", "logs", log_water)
    check(store.get("logs", log_water) == {"glasses": 7} and store.confirmed("logs", log_water) == {"glasses": 3},
          "nothing lost: 3 + 1 + 3 = 7 glasses on screen, the server has 3")
    s = store.sync_status()
    note(f"sync_status() without a sync: state {s['state']}, pending {s['pending']}")
    store.close()
    with open(os.path.join(workdir, "phone-py.offline-ids"), "w") as f:
        json.dump(ids, f)


# ------------------------------------------------------------------------------------------
# Part 3, server back: catch-up, then reload versus optimistic.
# ------------------------------------------------------------------------------------------

def part_catchup(workdir: str, url: str) -> None:
    phone_path = os.path.join(workdir, "phone-py.optimist")
    tablet_path = os.path.join(workdir, "tablet-py.optimist")
    with open(os.path.join(workdir, "phone-py.offline-ids")) as f:
        ids = json.load(f)
    section("5. The server is back: the sync catches up",
            "demo.sh started the server again (same address, same database). The phone reopens its store:")
    phone = Device("phone", phone_path)
    note(sync_line(phone.store))
    phone.start_sync(url)
    phone.wait_idle("everything sent")
    log_water, log_read = f"{TODAY}/water", f"{TODAY}/read"
    show(phone.store, f"logs/{log_water}", "logs", log_water)
    show(phone.store, "habits/read", "habits", "read")
    statuses = [phone.store.status(i) for i in ids]
    check(set(statuses) == {"committed"} and phone.store.pending_count() == 0,
          f"all {len(ids)} offline changes are committed (#{', #'.join(map(str, ids))})")
    check(phone.store.confirmed("logs", log_water) == {"glasses": 7}
          and phone.store.confirmed("habits", "read") == {"name": "Read 20 pages", "streak": 10},
          "the server counted each tap once: 7 glasses, streak 10")
    note(sync_line(phone.store))
    tablet = Device("tablet", tablet_path, url)
    tablet.wait_idle("pulled")
    show(tablet.store, "tablet: water", "logs", log_water)
    show(tablet.store, "tablet: read", "logs", log_read)
    check(tablet.store.get("logs", log_water) == {"glasses": 7}
          and tablet.store.get("logs", log_read) == {"done": True, "pages": 20}
          and tablet.store.view_get("today") == 3,
          "the tablet sees them all: 7 glasses, the read log; today's ring = 3")
    phone.close()
    tablet.close()

    # ---- 6 ---------------------------------------------------------------------------------
    n, reps = 10000, 200
    section("6. Reload vs optimistic from Python, measured",
            f"{n} logs of ~100 bytes; per tap: sqlite3 INSERT of the log + SELECT every log + recount today "
            f"(WAL, synchronous=NORMAL), vs store.mutate + view_get on a store file. {reps} taps each, "
            "medians: the benchmark's own code (Benchmarks/Python/bench.py). The package runs "
            + ("with its C accelerator" if getattr(getattr(optimist, "_fast", None), "SPEEDUPS", False)
               else "on ctypes alone (no accelerator built)")
            + f" and decodes with {getattr(getattr(optimist, '_json', None), 'DECODER', 'json')}.")
    reload = bench.Reload(os.path.join(workdir, "reload-py.sqlite"), n)
    store, file_backed = bench.open_logs(optimist, os.path.join(workdir, "bench-py.optimist"), n)
    check(file_backed, "the optimistic side runs on a store file")
    reload_t, opt_t, count, value = [], [], 0, 0.0
    clock = time.perf_counter_ns
    for block in range(10):  # interleaved, so a change in the machine's load hits both alike
        seqs = range(reps * block // 10, reps * (block + 1) // 10)
        for seq in seqs:
            day, habit = bench.tap_pick(seq, n)
            t0 = clock()
            count = reload.tap(day, habit, seq)
            reload_t.append(clock() - t0)
            reload.undo(seq)  # untimed: every tap sees n logs
        for seq in seqs:
            day, habit = bench.tap_pick(seq, n)
            t0 = clock()
            mid, value = bench.optimistic_tap(store, optimist, day, habit, seq)
            opt_t.append(clock() - t0)
            store.rollback(mid)
    reload.close()
    store.close()
    r_med, o_med = statistics.median(reload_t) / 1e3, statistics.median(opt_t) / 1e3
    print(f"\n     {'reload (median)':>22} {'optimistic (median)':>22} {'ratio':>8}")
    print(f"     {r_med:19.1f} \u00b5s {o_med:19.1f} \u00b5s {r_med / o_med:7.0f}x")
    check(count == bench.TODAY_SEED + 1 and int(value) == count,
          f"both ways count the same logs today ({count}, {value:g})")
    check(o_med < r_med, "optimistic is faster than reload")


PARTS = {"online": part_online, "offline": part_offline, "catchup": part_catchup}


def main(argv: list) -> int:
    if len(argv) == 4 and argv[1] == "--crash-child":
        crash_child(argv[2], argv[3])
    if len(argv) != 4 or argv[3] not in PARTS:
        print("usage: habits_demo.py WORKDIR URL online|offline|catchup   (scripts/demo.sh runs it)",
              file=sys.stderr)
        return 2
    workdir, url, part = argv[1], argv[2], argv[3]
    os.makedirs(workdir, exist_ok=True)
    PARTS[part](workdir, url)
    if failed:
        print(f"\n{CROSS} Some checks FAILED.")
    elif part == "catchup":
        print(f"\n{OK} All Python checks passed.")
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
