"""Sync benchmarks against the reference server on loopback.

1. push: N mutations made in a burst through the Python package with the library's sync
   running; throughput (mutations/s from the first mutate to the last commit) and latency from
   each mutate to its commit event (p50, p99).
2. pull: M records already on the server, pulled by a fresh store (rows/s, start to idle).
3. server: pushes/s and push latency (p50, p99) with 1 and 8 concurrent raw HTTP clients (one
   process each, keep-alive, one mutation per push), on every database given.

    python3 bench_sync.py --server BIN [--pg URL] [--quick]

Prints one JSON object per measurement on stdout; progress goes to stderr.
"""

import argparse
import http.client
import json
import multiprocessing
import os
import subprocess
import sys
import tempfile
import threading
import time
import uuid

import optimist


def say(*a):
    print("==", *a, file=sys.stderr, flush=True)


def pct(values, p):
    s = sorted(values)
    return s[min(len(s) - 1, int(round(p / 100 * (len(s) - 1))))]


class Server:
    def __init__(self, binary, db, workdir, *args):
        self.log = open(os.path.join(workdir, "server.log"), "ab")
        self.proc = subprocess.Popen([binary, "--port", "0", "--db", db, *args], stdout=subprocess.PIPE, stderr=self.log)
        line = self.proc.stdout.readline().decode()
        if not line.startswith("listening on "):
            raise SystemExit(f"optimist-server did not start: {line!r}")
        self.url = line.split()[-1].strip()
        self.host, port = self.url[len("http://"):].split(":")
        self.port = int(port)
        threading.Thread(target=self.proc.stdout.read, daemon=True).start()

    def stop(self):
        self.proc.terminate()
        self.proc.wait(timeout=30)
        self.log.close()


def bench_push(server, workdir, n):
    store = optimist.Store(os.path.join(workdir, f"push-{uuid.uuid4().hex[:6]}.optimist"))
    started = {}
    done = {}
    lock = threading.Lock()

    def on_change(changes):
        t = time.perf_counter()
        with lock:
            for c in changes:
                if c.cause == "commit" and c.key not in done:
                    done[c.key] = t

    store.subscribe(on_change, coll="logs")
    store.sync_start(server.url, pull_interval_ms=0, max_batch=100)
    assert store.sync_wait_idle(30)
    t0 = time.perf_counter()
    for i in range(n):
        key = "%06d" % i
        started[key] = time.perf_counter()
        store.mutate([optimist.put("logs", key, {"habit": "run", "done": True, "i": i})])
    assert store.sync_wait_idle(600), store.sync_status()
    t1 = max(done.values())
    store.close()
    lat = [(done[k] - started[k]) * 1e6 for k in started]
    return {"section": "sync_push", "n": n, "mutations_per_s": n / (t1 - t0),
            "p50_us": pct(lat, 50), "p99_us": pct(lat, 99), "seconds": t1 - t0}


def bench_pull(server, workdir, m):
    # Load the server through a client's sync (not timed), then pull into an empty store.
    loader = optimist.Store(os.path.join(workdir, f"loader-{uuid.uuid4().hex[:6]}.optimist"))
    for i in range(0, m, 1000):
        loader.mutate([optimist.put("bulk", "%07d" % j, {"habit": "run", "done": True, "note": "x" * 40, "i": j})
                       for j in range(i, min(m, i + 1000))])
    loader.sync_start(server.url, pull_interval_ms=0, max_batch=100)
    assert loader.sync_wait_idle(900), loader.sync_status()
    loader.close()
    fresh = optimist.Store(os.path.join(workdir, f"fresh-{uuid.uuid4().hex[:6]}.optimist"))
    t0 = time.perf_counter()
    fresh.sync_start(server.url, pull_interval_ms=0)
    assert fresh.sync_wait_idle(900), fresh.sync_status()
    t1 = time.perf_counter()
    got = len(fresh.scan("bulk"))
    fresh.close()
    assert got >= m, got
    return {"section": "sync_pull", "n": m, "rows_per_s": m / (t1 - t0), "seconds": t1 - t0}


def _client(args):
    host, port, n, barrier = args
    client = str(uuid.uuid4())
    conn = http.client.HTTPConnection(host, port, timeout=60)
    lat = []
    barrier.wait()
    for i in range(1, n + 1):
        body = json.dumps({"protocol": 1, "client_id": client, "mutations": [
            {"id": i, "retry": 0, "ops": [{"op": "incr", "coll": "bench", "key": client, "field": "n", "delta": 1}]}]})
        t = time.perf_counter()
        conn.request("POST", "/push", body, {"Content-Type": "application/json"})
        r = conn.getresponse()
        data = r.read()
        lat.append((time.perf_counter() - t) * 1e6)
        if r.status != 200 or b'"ok"' not in data:
            raise SystemExit(f"push failed: {r.status} {data[:200]!r}")
    conn.close()
    return lat


def bench_server(server, db_kind, clients, n):
    manager = multiprocessing.Manager()
    barrier = manager.Barrier(clients + 1)
    with multiprocessing.Pool(clients) as pool:
        result = pool.map_async(_client, [(server.host, server.port, n, barrier)] * clients)
        barrier.wait()
        t0 = time.perf_counter()
        lats = result.get()
        t1 = time.perf_counter()
    lat = [x for l in lats for x in l]
    return {"section": "server_push", "db": db_kind, "clients": clients, "n": clients * n,
            "pushes_per_s": clients * n / (t1 - t0), "p50_us": pct(lat, 50), "p99_us": pct(lat, 99)}


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--server", required=True)
    ap.add_argument("--pg")
    ap.add_argument("--quick", action="store_true")
    a = ap.parse_args()
    n_push, n_pull, n_server = (2_000, 20_000, 300) if a.quick else (10_000, 100_000, 2_000)
    with tempfile.TemporaryDirectory() as work:
        say(f"server on SQLite in {work}")
        s = Server(a.server, f"sqlite:{work}/server.sqlite", work)
        try:
            say(f"push {n_push}")
            print(json.dumps(bench_push(s, work, n_push)), flush=True)
            say(f"pull {n_pull}")
            print(json.dumps(bench_pull(s, work, n_pull)), flush=True)
        finally:
            s.stop()
        dbs = [("sqlite", f"sqlite:{work}/raw.sqlite")] + ([("postgres", a.pg)] if a.pg else [])
        for kind, url in dbs:
            s = Server(a.server, url, work)
            try:
                for clients in (1, 8):
                    say(f"server {kind}, {clients} client(s) x {n_server}")
                    print(json.dumps(bench_server(s, kind, clients, n_server)), flush=True)
            finally:
                s.stop()


if __name__ == "__main__":
    main()
