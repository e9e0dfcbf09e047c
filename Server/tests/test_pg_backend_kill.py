"""PostgreSQL backends killed under the server while clients push: nothing lost, nothing twice.

Four clients push 2,000 mutations in all through the real server on PostgreSQL, each mutation
incrementing one shared counter and the client's own counter, as the library's sync sends them:
in id order, a batch at a time, the next batch only after the previous one is answered. Twice
during the run a separate connection terminates every backend serving the test's database
(`pg_terminate_backend`), so pushes in flight lose their connection mid-transaction. A client
treats a failed exchange as the library does: on a 5xx or a broken connection it asks a pull
about the mutations it sent (`unacked`) and sends again what the server did not report applied;
on a `retry` result it sends that mutation and the rest again. A request unanswered within
REQUEST_TIMEOUT_S counts as a broken connection (the library's sync times out too). A push
left unanswered for good after its backend was killed was seen on an earlier server (its
request never ended, while the other clients went on); the server now bounds a transaction
(`--transaction-timeout-ms`, 5 s here) and answers 503, so no request may go unanswered.

At the end the shared counter is exactly 2,000 and each client's counter exactly its 500: a
mutation lost or applied twice shows. The server must answer every push with 200 or 503 (the
database went away: "try again"), never another 5xx, and stay healthy.
"""

import subprocess
import threading
import time
import urllib.parse

import pytest

from conftest import Client, http, incr, mutation, psql_binary

CLIENTS = 4
PER_CLIENT = 500
BATCH = 20
# A request unanswered this long is given up and treated like a broken connection, as the
# library's sync does with its own timeout (10 s by default).
REQUEST_TIMEOUT_S = 20
TRANSACTION_TIMEOUT_MS = 5000
KILL_AT = (0.25, 0.6)  # fractions of the 2,000 mutations answered when the backends are killed


def terminate_backends(db_url):
    """Terminates every backend connected to the database of `db_url`, from another one (the
    cluster's maintenance database); returns how many it terminated."""
    u = urllib.parse.urlsplit(db_url)
    name = u.path.lstrip("/")
    admin = urllib.parse.urlunsplit(u._replace(path="/postgres"))
    sql = ("SELECT count(pg_terminate_backend(pid)) FROM pg_stat_activity "
           f"WHERE datname = '{name}' AND pid <> pg_backend_pid()")
    out = subprocess.run([psql_binary(), admin, "-v", "ON_ERROR_STOP=1", "-tAc", sql], check=True,
                         capture_output=True, text=True, timeout=60)
    return int(out.stdout.strip())


def failure_name(e):
    """A failed exchange's name; "timeout" when it was one (urllib wraps a connect timeout)."""
    if isinstance(e, TimeoutError) or isinstance(getattr(e, "reason", None), TimeoutError):
        return "timeout"
    return type(e).__name__


class Pusher:
    """One client: sends its mutations 1..PER_CLIENT and records what it saw."""

    def __init__(self, server, progress, lock):
        self.client = Client(server)
        self.progress = progress
        self.lock = lock
        self.statuses = {}
        self.failures = 0

    def count(self, what):
        self.statuses[what] = self.statuses.get(what, 0) + 1

    def settle_by_pull(self, ids):
        """After a failed push: the ids of `ids` the server reports applied (a pull's outcomes,
        as the library asks before sending again). Retries the pull itself until it answers."""
        for _ in range(200):
            try:
                r = http("POST", self.client.server.url + "/pull",
                         {"protocol": 1, "client_id": self.client.client_id, "cursor": None, "unacked": ids},
                         timeout=REQUEST_TIMEOUT_S)
            except OSError as e:
                self.count(f"pull: {failure_name(e)}")
                time.sleep(0.05)
                continue
            self.count(f"pull: {r.status}")
            if r.status == 200:
                # Outcomes come on the last page only; with a cursor of None the changes are
                # the whole space, so follow `more` to the end.
                cursor = r.json["cursor"]
                while r.json["more"]:
                    r = self.client.pull_raw(cursor, ids)
                    assert r.status == 200, r
                    cursor = r.json["cursor"]
                done = {o["id"] for o in r.json["outcomes"] if o["status"] == "ok"}
                rejected = [o for o in r.json["outcomes"] if o["status"] == "rejected"]
                assert not rejected, f"the server rejected mutations: {rejected}"
                return done
            assert r.status == 503, f"pull answered {r}"
            time.sleep(0.05)
        raise AssertionError("no pull got through in 200 tries")

    def run(self):
        c = self.client
        next_id = 1
        while next_id <= PER_CLIENT:
            ids = list(range(next_id, min(PER_CLIENT, next_id + BATCH - 1) + 1))
            batch = [mutation(i, incr("counters", "total", "n", 1), incr("counters", c.client_id, "n", 1)) for i in ids]
            broken = None
            try:
                r = http("POST", c.server.url + "/push", {"protocol": 1, "client_id": c.client_id, "mutations": batch},
                         timeout=REQUEST_TIMEOUT_S)
            except OSError as e:  # a refused or broken connection, or the timeout
                r, broken = None, e
            if r is None or r.status >= 500:
                self.count(f"push: {failure_name(broken)}" if r is None else f"push: {r.status}")
                assert r is None or r.status == 503, f"push answered {r}"
                self.failures += 1
                # It may have been applied before the answer was lost: ask, as the library does.
                done = self.settle_by_pull(ids)
                while next_id in done:
                    next_id += 1
                    self.advance(1)
                time.sleep(0.02)
                continue
            self.count(f"push: {r.status}")
            assert r.status == 200, r
            for result in r.json["results"]:
                assert result["id"] == next_id, f"answers come in send order: {result} for {next_id}"
                if result["status"] == "retry":
                    break
                assert result["status"] == "ok", result
                next_id += 1
                self.advance(1)

    def advance(self, n):
        with self.lock:
            self.progress[0] += n


@pytest.mark.parametrize("db", ["postgres"], indirect=True)
def test_backends_killed_mid_push_lose_nothing_and_apply_nothing_twice(db, start_server):
    server = start_server("--transaction-timeout-ms", str(TRANSACTION_TIMEOUT_MS))
    total = CLIENTS * PER_CLIENT
    progress, lock = [0], threading.Lock()
    pushers = [Pusher(server, progress, lock) for _ in range(CLIENTS)]
    errors = []

    def guard(p):
        try:
            p.run()
        except BaseException as e:  # noqa: BLE001 - reported below
            errors.append(e)

    threads = [threading.Thread(target=guard, args=(p,)) for p in pushers]
    for t in threads:
        t.start()
    killed = []
    for fraction in KILL_AT:
        while progress[0] < fraction * total and any(t.is_alive() for t in threads):
            time.sleep(0.005)
        killed.append((progress[0], terminate_backends(db.url)))
    for t in threads:
        t.join(600)
    assert not any(t.is_alive() for t in threads), "a client hung"
    if errors:
        raise errors[0]

    assert len(killed) == 2 and all(n >= 1 for _, n in killed), f"the backends were not terminated twice: {killed}"
    assert http("GET", server.url + "/health").status == 200
    state = Client(server).state()
    assert state[("counters", "total")] == {"n": total}, \
        f"the counter is {state[('counters', 'total')]} after {total} increments (lost or applied twice)"
    for p in pushers:
        assert state[("counters", p.client.client_id)] == {"n": PER_CLIENT}, (p.client.client_id, state[("counters", p.client.client_id)])
    statuses = {}
    for p in pushers:
        for k, v in p.statuses.items():
            statuses[k] = statuses.get(k, 0) + v
    unanswered = {k: v for k, v in statuses.items() if "timeout" in k.lower()}
    assert not unanswered, f"requests went unanswered for {REQUEST_TIMEOUT_S} s: {unanswered}"
    print(f"pg backend kill: {total} mutations, backends terminated at {killed} (answered, terminated), "
          f"failed pushes {sum(p.failures for p in pushers)}, answers {dict(sorted(statuses.items()))}")
