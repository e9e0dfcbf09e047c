"""Shared spaces benchmarks: real time and throughput, through the library's own sync against
the reference server on loopback.

1. realtime: Alice and Bob share a room. Alice's client mutates a message; the clock stops when
   Bob's subscriber sees it. Default sync settings (no pull interval tuning): what carries it is
   the real-time stream (GET /events) and the pull its poke starts. One message at a time, a
   short pause between. On SQLite (one server process), PostgreSQL (one process) and PostgreSQL
   with Alice and Bob on two server processes of one database. Repeated `--runs` times.
2. throughput (PostgreSQL): 32 users' clients, each with its own space and one space all 32
   share, each making 500 mutations (every other one in the shared space) through its own sync;
   aggregate mutations/s from the first mutate to the last commit.
3. burst: 10,000 mutations made at once by one client, mutate to committed (mutations/s), on
   SQLite and on PostgreSQL.

    python3 bench_spaces.py --server BIN [--pg URL] [--quick] [--runs N] [--only realtime,throughput,burst]

Prints one JSON object per measurement on stdout; progress goes to stderr.
"""

import argparse
import json
import os
import statistics
import subprocess
import tempfile
import threading
import time

import optimist
from optimist import put

# The same directory's sync benchmarks: their server wrapper and figures.
import bench_sync
from bench_sync import pct, say


class Server(bench_sync.Server):
    def __init__(self, binary, db, workdir, tokens):
        super().__init__(binary, db, workdir, "--tokens", tokens)


def auth(user):
    return {"Authorization": f"Bearer tok-{user}"}


def fresh_pg(base, name):
    psql = os.environ.get("OPTIMIST_PSQL", "psql")
    subprocess.run([psql, base, "-v", "ON_ERROR_STOP=1", "-qc", f"DROP DATABASE IF EXISTS {name} WITH (FORCE)"],
                   check=True, stdout=subprocess.DEVNULL)
    subprocess.run([psql, base, "-v", "ON_ERROR_STOP=1", "-qc", f"CREATE DATABASE {name}"], check=True,
                   stdout=subprocess.DEVNULL)
    return base.rsplit("/", 1)[0] + "/" + name


def wait_for(pred, timeout_s=60):
    deadline = time.monotonic() + timeout_s
    while time.monotonic() < deadline:
        if pred():
            return True
        time.sleep(0.001)
    return pred()


def bench_realtime(url_a, url_b, n, label):
    alice, bob = optimist.Store(), optimist.Store()
    seen = {}
    lock = threading.Lock()

    def heard(changes):
        t = time.perf_counter()
        with lock:
            for c in changes:
                if c.value is not None and c.key not in seen:
                    seen[c.key] = t

    try:
        bob.subscribe(heard, coll="room/messages")
        alice.sync_start(url_a, headers=auth("alice"))
        bob.sync_start(url_b, headers=auth("bob"))
        room = alice.mutate([put("room/$members", "alice", {"role": "owner"}), put("room/$members", "bob", {"role": "writer"})])
        assert wait_for(lambda: alice.status(room) == "committed"), alice.sync_status()
        assert wait_for(lambda: bob.get("room/$members", "bob") is not None), bob.sync_status()
        time.sleep(0.5)
        lat = []
        for i in range(n):
            key = f"{i:06d}"
            t0 = time.perf_counter()
            alice.mutate([put("room/messages", key, {"from": "alice", "text": f"message {i}"})])
            if not wait_for(lambda: key in seen, 30):
                raise SystemExit(f"{label}: message {i} never reached bob: {bob.sync_status()}")
            lat.append((seen[key] - t0) * 1000)
            time.sleep(0.02)
    finally:
        alice.close()
        bob.close()
    return {"section": "realtime", "setup": label, "n": n, "p50_ms": pct(lat, 50), "p99_ms": pct(lat, 99),
            "max_ms": max(lat), "mean_ms": statistics.fmean(lat)}


def bench_throughput(url, users, per_user, label, shared=True):
    """shared=False: every mutation in the user's own space (the shape a server without shared
    spaces can run, for a before/after)."""
    stores = [optimist.Store() for _ in range(users)]
    names = [f"u{i:02d}" for i in range(users)]
    try:
        for s, u in zip(stores, names):
            s.sync_start(url, headers=auth(u), pull_interval_ms=60_000, max_batch=100)
        if shared:
            owner = stores[0]
            made = owner.mutate([put("team/$members", names[0], {"role": "owner"})] +
                                [put("team/$members", u, {"role": "writer"}) for u in names[1:]])
            assert wait_for(lambda: owner.status(made) == "committed"), owner.sync_status()
            for s in stores:
                s.sync_now()
            assert wait_for(lambda: all(s.get("team/$members", u) is not None for s, u in zip(stores, names)), 120)
        for s in stores:
            assert s.sync_wait_idle(60), s.sync_status()
        t0 = time.perf_counter()
        threads = []

        def run(s, u):
            for i in range(per_user):
                coll = "team/log" if shared and i % 2 else "own"
                s.mutate([put(coll, f"{u}-{i:05d}", {"by": u, "i": i})])

        for s, u in zip(stores, names):
            threads.append(threading.Thread(target=run, args=(s, u)))
        for t in threads:
            t.start()
        for t in threads:
            t.join()
        for s in stores:
            assert s.sync_wait_idle(900), s.sync_status()
        t1 = time.perf_counter()
    finally:
        for s in stores:
            s.close()
    total = users * per_user
    return {"section": "throughput", "setup": label, "shared": shared, "users": users, "per_user": per_user, "n": total,
            "mutations_per_s": total / (t1 - t0), "seconds": t1 - t0}


def bench_burst(url, n, label, max_batch=100):
    store = optimist.Store()
    started, done = {}, {}
    lock = threading.Lock()

    def on_change(changes):
        t = time.perf_counter()
        with lock:
            for c in changes:
                if c.cause == "commit" and c.key not in done:
                    done[c.key] = t

    try:
        store.subscribe(on_change, coll="logs")
        store.sync_start(url, headers=auth("burst"), pull_interval_ms=0, max_batch=max_batch)
        assert store.sync_wait_idle(30)
        t0 = time.perf_counter()
        for i in range(n):
            key = "%06d" % i
            started[key] = time.perf_counter()
            store.mutate([put("logs", key, {"habit": "run", "done": True, "i": i})])
        assert store.sync_wait_idle(900), store.sync_status()
        t1 = max(done.values())
    finally:
        store.close()
    lat = [(done[k] - started[k]) * 1000 for k in started]
    return {"section": "burst", "setup": label, "n": n, "mutations_per_s": n / (t1 - t0),
            "p50_ms": pct(lat, 50), "p99_ms": pct(lat, 99)}


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--server", required=True)
    ap.add_argument("--pg")
    ap.add_argument("--quick", action="store_true")
    ap.add_argument("--runs", type=int, default=3)
    ap.add_argument("--only", default="realtime,throughput,burst")
    ap.add_argument("--private-only", action="store_true",
                    help="throughput without the shared space (runs on a server without shared spaces)")
    a = ap.parse_args()
    only = set(a.only.split(","))
    n_rt, per_user, n_burst = (50, 100, 2_000) if a.quick else (200, 500, 10_000)
    users = 32
    with tempfile.TemporaryDirectory() as work:
        tokens = os.path.join(work, "tokens.json")
        with open(tokens, "w") as f:
            json.dump({f"tok-{u}": u for u in ["alice", "bob", "burst"] + [f"u{i:02d}" for i in range(users)]}, f)
        if "realtime" in only:
            for run in range(a.runs):
                setups = [("sqlite", f"sqlite:{work}/rt-{run}.sqlite", False)]
                if a.pg:
                    setups += [("postgres", fresh_pg(a.pg, f"bench_rt_{run}"), False),
                               ("postgres, two processes", fresh_pg(a.pg, f"bench_rt2_{run}"), True)]
                for label, db, two in setups:
                    say(f"realtime {label}, run {run + 1}")
                    s1 = Server(a.server, db, work, tokens)
                    s2 = Server(a.server, db, work, tokens) if two else s1
                    try:
                        out = bench_realtime(s1.url, s2.url, n_rt, label)
                        out["run"] = run
                        print(json.dumps(out), flush=True)
                    finally:
                        s1.stop()
                        if s2 is not s1:
                            s2.stop()
        if "throughput" in only and a.pg:
            for run in range(a.runs):
                say(f"throughput postgres, run {run + 1}")
                s = Server(a.server, fresh_pg(a.pg, f"bench_tp_{run}"), work, tokens)
                try:
                    out = bench_throughput(s.url, users, per_user, "postgres", shared=not a.private_only)
                    out["run"] = run
                    print(json.dumps(out), flush=True)
                finally:
                    s.stop()
        if "burst" in only:
            for run in range(a.runs):
                setups = [("sqlite", f"sqlite:{work}/burst-{run}.sqlite")]
                if a.pg:
                    setups.append(("postgres", fresh_pg(a.pg, f"bench_burst_{run}")))
                for label, db in setups:
                    say(f"burst {label}, run {run + 1}")
                    s = Server(a.server, db, work, tokens)
                    try:
                        out = bench_burst(s.url, n_burst, label)
                        out["run"] = run
                        print(json.dumps(out), flush=True)
                    finally:
                        s.stop()


if __name__ == "__main__":
    main()
