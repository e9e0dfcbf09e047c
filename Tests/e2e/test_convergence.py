"""Several client processes converge through a faulty network, client crashes and server crashes.

Three Python clients (pyclient.py) and one C client (client.c), each with its own store file,
sync through a FaultProxy to one optimist-server. Each runs the workload described in
pyclient.py (a shared counter and a log record per step, in one mutation; a per-client counter
with a marker every third step; a flush and a "flushed k" line every fifth step). Meanwhile the
test cycles the proxy through its faults (delays, answers lost after the server applied the
request, answers cut in the middle, refused connections, requests cut before the server,
stalled requests delivered late, 502/503), kills clients with SIGKILL at random moments and
restarts them on the same store files, and kills the server with SIGKILL twice and restarts it
on the same database and port.

Then every client is restarted and synced to idle (for as long as its sync shows progress: see
Child.wait_idle_line), and:
- each client's visible state of the shared collections equals the server's, and a fresh
  client's; nothing is pending, inflight or failed;
- exactly once: the shared counter equals the number of log records, each per-client counter
  equals its number of markers (and their sum of steps);
- nothing flushed is lost: every step a client reported flushed is on the server;
- per-client order: the server's change log holds each client's log records in step order,
  and last/NAME (patched by every step) names the client's latest step; the proxy's record
  of the exchanges (FaultProxy.violations) shows mutation k+1 never forwarded before the
  server answered k, no mutation pushed again by a process that heard its "ok", and a pull
  naming them after every push whose answer a process did not get.

The same runs with two server processes on the one database behind the proxy (it sends each
connection to the next server in turn, as a load balancer would; each is killed once): the
reference server says several processes may share a database, PostgreSQL or SQLite, and stay
correct together (exactly once, per-client order, cursors). Both must then hand a new client the
same state.

OPTIMIST_E2E_SEED picks the random choices (default 1), OPTIMIST_E2E_CHAOS_S the length of the
faulty phase (default 20 s with one server, half of it with two).
"""

import json
import os
import random
import signal
import subprocess
import sys
import threading
import time

import pytest

import optimist
from conftest import Server
from faultproxy import FaultProxy

HERE = os.path.dirname(os.path.abspath(__file__))
PYCLIENT = os.path.join(HERE, "pyclient.py")
SEED = int(os.environ.get("OPTIMIST_E2E_SEED", "1"))
CHAOS_S = float(os.environ.get("OPTIMIST_E2E_CHAOS_S", "20"))
COLLECTIONS = ("shared", "log", "last", "pc", "pcmark")
PAGE_SIZE = 500
# The final sync to idle fails when a client's sync shows no progress for this long, or takes
# longer than the cap in all (see Child.wait_idle_line).
FINAL_STALL_S = 90
FINAL_CAP_S = 600


class Child:
    """One client process and the lines it printed."""

    def __init__(self, argv, log_path):
        self.argv = argv
        self.log = open(log_path, "ab")
        self.log.write(f"--- {' '.join(argv)}\n".encode())
        self.log.flush()
        self.proc = subprocess.Popen(argv, stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=self.log)
        self.lines = []
        self.eof = False
        self.cond = threading.Condition()
        self.reader = threading.Thread(target=self._read, daemon=True)
        self.reader.start()

    def _read(self):
        for raw in self.proc.stdout:
            with self.cond:
                self.lines.append(raw.decode("utf-8", "replace").strip())
                self.cond.notify_all()
        with self.cond:
            self.eof = True
            self.cond.notify_all()

    def wait_for(self, prefix, timeout, after=0):
        """The first line from index `after` on that starts with `prefix`, or None."""
        deadline = time.monotonic() + timeout
        with self.cond:
            while True:
                for line in self.lines[after:]:
                    if line.startswith(prefix):
                        return line
                left = deadline - time.monotonic()
                if self.eof or left <= 0:
                    return None
                self.cond.wait(min(left, 0.5))

    def wait_idle_line(self, stall_s, cap_s):
        """The client's "idle 0|1" line (final mode), waiting as long as its "progress" lines show
        the sync moving: fewer mutations left, more accepted or pulled, a new cursor. None when
        nothing moved for `stall_s` (a wedged sync, or a silent process), or after `cap_s`.

        Patience follows progress, not a fixed time: on a loaded machine (a fresh clone's whole
        test run, other builds beside it) the last outbox batches take minutes where they take
        seconds on an idle one, and a fixed limit failed the suite by chance."""
        start = time.monotonic()
        last_move, state, seen = start, None, 0
        with self.cond:
            while True:
                for line in self.lines[seen:]:
                    if line.startswith("idle"):
                        return line
                    if line.startswith("progress "):
                        st = json.loads(line.split(" ", 1)[1])
                        now = (st["pending"] + st["inflight"], st["pushed"], st["pulled"], st["cursor"])
                        if now != state:
                            state, last_move = now, time.monotonic()
                seen = len(self.lines)
                t = time.monotonic()
                if self.eof or t - last_move > stall_s or t - start > cap_s:
                    return None
                self.cond.wait(0.5)

    def progress(self):
        """The client's last progress line, for a failure message."""
        with self.cond:
            return next((line for line in reversed(self.lines) if line.startswith("progress ")), "no progress line")

    def flushed(self):
        with self.cond:
            ks = [int(line.split()[1]) for line in self.lines if line.startswith("flushed ")]
        return max(ks, default=0)

    def send(self, text):
        self.proc.stdin.write(text.encode())
        self.proc.stdin.flush()

    def kill(self):
        if self.proc.poll() is None:
            self.proc.send_signal(signal.SIGKILL)
        self.proc.wait(30)
        self.reader.join(10)
        self.log.close()
        return self.proc.returncode

    def wait(self, timeout):
        code = self.proc.wait(timeout)
        self.reader.join(10)
        self.log.close()
        return code

    def stderr_tail(self):
        try:
            with open(self.log.name, "rb") as f:
                return f.read()[-3000:].decode("utf-8", "replace")
        except OSError:
            return ""


class Client:
    """One client: a store file, and its processes one after another."""

    def __init__(self, name, kind, tmp_path, c_client):
        self.name = name
        self.kind = kind
        self.store = str(tmp_path / f"{name}.optimist")
        self.log_path = tmp_path / f"{name}.log"
        self.c_client = c_client
        self.inc = -1
        self.child = None
        self.flushed = {}   # incarnation -> last step reported flushed
        self.kills = 0
        self.client_id = None

    def program(self):
        return [self.c_client] if self.kind == "c" else [sys.executable, PYCLIENT]

    def start(self, url, rng):
        self.inc += 1
        max_batch = rng.choice([1, 5, 20, 100])
        self.child = Child(self.program() + ["run", self.store, url, self.name, str(self.inc),
                                             str(rng.randrange(1 << 30)), str(max_batch)], self.log_path)

    def kill(self, proxy):
        code = self.child.kill()
        self.flushed[self.inc] = self.child.flushed()
        self.kills += 1
        assert code == -signal.SIGKILL, \
            f"{self.name} (incarnation {self.inc}) ended by itself with {code}:\n{self.child.stderr_tail()}"
        # Whatever the dead process had in flight reaches the proxy first; then the proxy
        # takes the next connections of this client id for the next process's.
        time.sleep(0.02)
        if self.client_id:
            proxy.mark_restart(self.client_id)

    def check_alive(self):
        code = self.child.proc.poll()
        assert code is None, f"{self.name} (incarnation {self.inc}) exited with {code}:\n{self.child.stderr_tail()}"

    def final(self, url, dump):
        self.child = Child(self.program() + ["final", self.store, url, self.name, dump], self.log_path)


def fault_phases(rng, scale):
    """One cycle of the proxy's faults, shuffled: (mode, parameters, seconds), 15 s times scale."""
    phases = [
        ("delay", dict(delay_ms=rng.randint(5, 60)), 1.5),
        ("drop_before", dict(rate=0.5), 1.5),
        ("drop_mid", dict(rate=0.5), 1.5),
        ("refuse", {}, 0.7),
        ("cut_request", dict(rate=0.4), 1.2),
        ("stall", dict(stall_ms=1800, rate=0.25), 2.0),
        ("error_before", dict(rate=0.5), 1.2),
        ("error_after", dict(rate=0.5), 1.2),
        ("mix", dict(delay_ms=20, stall_ms=1800, weights={
            "pass": 6, "delay": 2, "drop_before": 2, "drop_mid": 2, "cut_request": 1, "refuse": 1,
            "stall": 1, "error_before": 1, "error_after": 1}), 3.0),
        ("pass", {}, 1.0),
    ]
    rng.shuffle(phases)
    return [(mode, params, seconds * scale) for mode, params, seconds in phases]


def by_collection(records):
    out = {c: {} for c in COLLECTIONS}
    for (coll, key), value in records.items():
        if coll in out:
            out[coll][key] = value
    return out


def scans_to_state(scans):
    return {c: {k: v for k, v in scans.get(c, [])} for c in COLLECTIONS}


def state_diff(a, b):
    """A short description of how two {coll: {key: value}} states differ ('' when equal)."""
    lines = []
    for c in COLLECTIONS:
        x, y = a.get(c, {}), b.get(c, {})
        if x == y:
            continue
        only_x = sorted(set(x) - set(y))
        only_y = sorted(set(y) - set(x))
        differ = sorted(k for k in set(x) & set(y) if x[k] != y[k])
        lines.append(f"  {c}: {len(x)} vs {len(y)} records; only in the first {only_x[:5]} ({len(only_x)}), "
                     f"only in the second {only_y[:5]} ({len(only_y)}), different {[(k, x[k], y[k]) for k in differ[:3]]} ({len(differ)})")
    return "\n".join(lines)


def step_of(key):
    """log / pcmark key NAME/III-KKKKKK -> (name, inc, k)."""
    name, _, rest = key.rpartition("/")
    inc, _, k = rest.partition("-")
    return name, int(inc), int(k)


@pytest.mark.parametrize("n_servers", [1, 2], ids=["1 server", "2 servers"])
def test_clients_converge_through_faults_and_crashes(db_url, tmp_path, c_client, n_servers):
    rng = random.Random(SEED * 10 + n_servers)
    chaos_s = CHAOS_S if n_servers == 1 else CHAOS_S * 0.5
    servers, proxy, clients = [], None, []
    server_kills = 0
    try:
        for i in range(n_servers):
            servers.append(Server(db_url, tmp_path / f"server{i}.log", "--page-size", str(PAGE_SIZE)))
        server = servers[0]
        proxy = FaultProxy(server.port, seed=SEED).start()
        proxy.set_upstreams([s.port for s in servers])
        clients = [Client(f"py{i}", "py", tmp_path, c_client) for i in range(3)] + [Client("c0", "c", tmp_path, c_client)]
        t_begin = time.monotonic()
        for c in clients:
            c.start(proxy.url, rng)
        for c in clients:
            line = c.child.wait_for("started", 30)
            assert line, f"{c.name} did not start:\n{c.child.stderr_tail()}"
            c.client_id = line.split()[1]

        # -- the faulty phase --------------------------------------------------------------
        t0 = time.monotonic()
        end = t0 + chaos_s
        phases = []
        phase_end = t0
        next_kill = t0 + rng.uniform(0.5, 1.2)
        server_kill_at = [(t0 + chaos_s * 0.3, servers[0]), (t0 + chaos_s * 0.65, servers[-1])]
        for _ in range(100_000):
            now = time.monotonic()
            if now >= end:
                break
            for c in clients:
                c.check_alive()
            if now >= phase_end:
                if not phases:
                    phases = fault_phases(rng, chaos_s / CHAOS_S)
                mode, params, seconds = phases.pop()
                proxy.set_mode(mode, **params)
                phase_end = now + seconds
            if now >= next_kill:
                victim = rng.choice(clients)
                if rng.random() < 0.4:
                    # Right after a flush: the moment a lost write would show.
                    victim.child.wait_for("flushed", 1.0, after=len(victim.child.lines))
                    time.sleep(rng.uniform(0, 0.02))
                victim.kill(proxy)
                if rng.random() < 0.5:
                    time.sleep(rng.uniform(0, 0.3))
                victim.start(proxy.url, rng)
                next_kill = time.monotonic() + rng.uniform(0.3, 1.2)
            if server_kill_at and now >= server_kill_at[0][0]:
                victim = server_kill_at.pop(0)[1]
                port = victim.port
                victim.kill()
                server_kills += 1
                time.sleep(rng.uniform(0.3, 1.5))
                victim.restart()
                assert victim.port == port
            time.sleep(0.05)

        # -- everyone to idle --------------------------------------------------------------
        timing = {"start+chaos": time.monotonic() - t_begin}
        proxy.set_mode("pass")
        proxy.refuse_for(0)
        for c in clients:
            c.kill(proxy)
        # Stalled requests the proxy still holds reach the server late, and are answered
        # from the recorded outcomes: let them go before the final check.
        assert proxy.quiesce(15), "the proxy still holds connections"
        timing["quiesce"] = time.monotonic() - t_begin - sum(timing.values())
        dumps = {c.name: str(tmp_path / f"{c.name}.final.json") for c in clients}
        for c in clients:
            c.final(proxy.url, dumps[c.name])
        for c in clients:
            line = c.child.wait_idle_line(FINAL_STALL_S, FINAL_CAP_S)
            assert line == "idle 1", (f"{c.name} did not reach idle ({line!r}; no progress for {FINAL_STALL_S} s or "
                                      f"{FINAL_CAP_S} s in all; {c.child.progress()}):\n{c.child.stderr_tail()}")
        timing["final idle"] = time.monotonic() - t_begin - sum(timing.values())
        for c in clients:
            c.child.send("check\n")
        for c in clients:
            assert c.child.wait_for("done", 70), f"{c.name} did not finish:\n{c.child.stderr_tail()}"
            assert c.child.wait(30) == 0, c.child.stderr_tail()

        timing["check+dump"] = time.monotonic() - t_begin - sum(timing.values())
        # -- what the server holds ---------------------------------------------------------
        changes = server.changes()
        records = {}
        for ch in changes:
            if ch["op"] == "put":
                records[(ch["coll"], ch["key"])] = ch["value"]
            else:
                records.pop((ch["coll"], ch["key"]), None)
        truth = by_collection(records)
        for other in servers[1:]:
            diff = state_diff(by_collection(other.everything()), truth)
            assert not diff, f"two server processes on one database answer different states:\n{diff}"

        fresh = optimist.Store()
        try:
            fresh.sync_start(server.url, pull_interval_ms=0)
            assert fresh.sync_wait_idle(60), fresh.sync_status()
            fresh_state = {c: dict(fresh.scan(c)) for c in COLLECTIONS}
        finally:
            fresh.close()
        diff = state_diff(fresh_state, truth)
        assert not diff, f"a fresh client's state differs from the server's:\n{diff}"

        for c in clients:
            with open(dumps[c.name]) as f:
                d = json.load(f)
            assert d["client_id"] == c.client_id
            st = d["status"]
            assert d["idle"], f"{c.name} was not idle at the end: {st}"
            assert (st["pending"], st["inflight"], st["failed"]) == (0, 0, 0), f"{c.name}: {st}"
            diff = state_diff(scans_to_state(d["scans"]), truth)
            assert not diff, f"{c.name}'s visible state differs from the server's:\n{diff}"

        # -- exactly once --------------------------------------------------------------------
        logs = truth["log"]
        total = truth["shared"].get("total", {}).get("n", 0)
        assert total == len(logs), f"shared counter {total} but {len(logs)} log records: a mutation applied twice or half"
        for c in clients:
            marks = [v["k"] for k, v in truth["pcmark"].items() if k.startswith(c.name + "/")]
            pc = truth["pc"].get(c.name, {})
            assert pc.get("n", 0) == len(marks), f"{c.name}: counter {pc} but {len(marks)} markers"
            assert pc.get("sum", 0) == sum(marks), f"{c.name}: counter {pc} but the markers' steps sum to {sum(marks)}"

        # -- nothing flushed lost ------------------------------------------------------------
        expected = 0
        for c in clients:
            for inc, last in c.flushed.items():
                for k in range(1, last + 1):
                    key = f"{c.name}/{inc:03d}-{k:06d}"
                    assert key in logs, f"{c.name}: step {k} of incarnation {inc} was flushed but is not on the server"
                    if k % 3 == 0:
                        assert key in truth["pcmark"], f"{c.name}: marker of flushed step {k} (incarnation {inc}) missing"
                    expected += 1
        assert expected > 100, f"only {expected} flushed steps: the test checked too little"

        # -- per-client order ----------------------------------------------------------------
        seen = {}
        for ch in changes:
            if ch["coll"] != "log" or ch["op"] != "put":
                continue
            name, inc, k = step_of(ch["key"])
            prev = seen.get(name)
            assert prev is None or prev < (inc, k), \
                f"{name}: the server applied step {(inc, k)} after step {prev} (its change log is out of the client's order)"
            seen[name] = (inc, k)
        for c in clients:
            mine = [step_of(k)[1:] for k in logs if k.startswith(c.name + "/")]
            if mine:
                inc, k = max(mine)
                assert truth["last"].get(c.name) == {"at": {"inc": inc, "k": k}}, \
                    f"{c.name}: last is {truth['last'].get(c.name)} but its latest step on the server is {(inc, k)}"
        names = {c.client_id[:8]: c.name for c in clients}
        bad = [f"{names.get(v.split()[1], '')} {v}" for v in proxy.violations()]
        # Known library bug, shown on its own by test_lost_answers.py ("closed right after the
        # status line"): a push answer cut off by a plain close before its Content-Length header
        # reaches the client as HTTP 200 with an empty body (curl returns CURLE_OK), and the sync
        # sends the mutations again without the pull that resolves lost answers. The server's
        # recorded outcomes keep that harmless here; it is counted, not failed, in this test.
        known = [v for v in bad if "lost its answer" in v and "closed after" in v
                 and "before its Content-Length" in v and "next request is not a pull" in v]
        bad = [v for v in bad if v not in known]
        assert not bad, "protocol violations seen by the proxy:\n" + "\n".join(f"  {v}" for v in bad[:20])

        # -- the faults really happened ------------------------------------------------------
        stats = proxy.stats
        for kind in ("delay", "drop_before", "drop_mid", "stall", "error_before", "error_after"):
            assert sum(n for key, n in stats.items() if key.startswith(kind + ":push")) > 0, f"no {kind} on a push: {dict(stats)}"
        # A cut request is one short phase of the random mix: which endpoint it hits is timing
        # (a fresh-clone CI run once saw 12 on pulls and none on pushes); it must have happened.
        assert sum(n for key, n in stats.items() if key.startswith("cut_request:")) > 0, f"no cut_request: {dict(stats)}"
        assert stats["refused"] > 0, dict(stats)
        assert stats["upstream_down"] + stats["upstream_lost"] > 0, dict(stats)
        assert server_kills == 2
        kills = sum(c.kills for c in clients)
        assert kills >= 6 * chaos_s / CHAOS_S, f"only {kills} client kills"
        print(f"convergence [{db_url.split(':')[0]}, {n_servers} server(s)]: {len(logs)} log records, {expected} flushed steps checked, "
              f"{kills} client kills, {server_kills} server kills, {len(known)} re-pushes of the known "
              f"header-cut bug, timing {dict((k, round(v, 1)) for k, v in timing.items())}, "
              f"checks {time.monotonic() - t_begin - sum(timing.values()):.1f} s, proxy {proxy.summary()}")
    finally:
        # Each step on its own: one that fails must not leave processes behind.
        for c in clients:
            if c.child and c.child.proc.poll() is None:
                c.child.proc.kill()
                c.child.proc.wait(30)
        for s in servers:
            try:
                s.stop()
            except Exception as e:  # noqa: BLE001 - keep cleaning up
                print(f"stopping a server: {e!r}")
        if proxy:
            proxy.close()
            try:
                proxy.dump(tmp_path / "proxy-events.txt")  # for a post-mortem: every push and pull, and every answer
            except OSError as e:
                print(f"writing the proxy's events: {e!r}")
