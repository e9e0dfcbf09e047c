"""A client killed with SIGKILL at random moments while it mutates and its sync runs.

Each mutation increments a counter and writes a log record, in one mutation: after the last
restart and a sync to idle, the server's counter equals its number of log records (no mutation
applied twice), every log record a child reported flushed is on the server (nothing flushed is
lost), and the pull cursor never went backwards across reopens.
"""

import os
import random
import signal
import subprocess
import sys
import time

import optimist

CHILD = r"""
import sys, optimist
path, url, start = sys.argv[1], sys.argv[2], int(sys.argv[3])
s = optimist.Store(path)
s.sync_start(url, pull_interval_ms=50, max_batch=int(sys.argv[4]))
i = start
while True:
    s.mutate([optimist.incr("c", "total", "n", 1), optimist.put("log", "%08d" % i, {"i": i})])
    i += 1
    if i % 7 == 0:
        s.flush()
        print("flushed", i, flush=True)
"""


def cursor_seq(cursor):
    """The seq in a reference server's cursor ("<database identity>.<seq>")."""
    return int(cursor.rpartition(".")[2])


def cursor_of(path):
    s = optimist.Store(path)
    try:
        c = s.sync_status()["cursor"]
        return cursor_seq(c) if c is not None else 0
    finally:
        s.close()


def test_killed_clients_lose_nothing_and_apply_nothing_twice(server, tmp_path):
    rng = random.Random(int(os.environ.get("OPTIMIST_CRASH_SEED", "1")))
    path = str(tmp_path / "client.optimist")
    flushed = []   # per round: keys start..end-1 were flushed by that child
    cursors = []
    for round_ in range(12):
        # Each child writes its own range of log keys, so a mutation lost with a killed
        # process (after its last flush) is simply absent, never confused with another.
        start = round_ * 1_000_000
        child = subprocess.Popen([sys.executable, "-c", CHILD, path, server.url, str(start), str(rng.choice([1, 5, 50]))],
                                 stdout=subprocess.PIPE, stderr=subprocess.PIPE)
        wanted = rng.randint(1, 30)
        end, seen = start, 0
        for line in child.stdout:
            if line.startswith(b"flushed "):
                end = int(line.split()[1])
                seen += 1
                if seen >= wanted:
                    break
        time.sleep(rng.random() * 0.05)
        child.send_signal(signal.SIGKILL)
        child.wait()
        assert child.returncode == -signal.SIGKILL, child.stderr.read().decode()[-2000:]
        flushed.append((start, end))
        cursors.append(cursor_of(path))
        assert cursors == sorted(cursors), f"the cursor went backwards: {cursors}"

    s = optimist.Store(path)
    try:
        s.sync_start(server.url, pull_interval_ms=0)
        assert s.sync_wait_idle(60), s.sync_status()
        status = s.sync_status()
        assert status["pending"] == 0 and status["inflight"] == 0 and status["failed"] == 0, status
        on_server = server.everything()
        logs = {k for (c, k) in on_server if c == "log"}
        total = on_server.get(("c", "total"), {}).get("n", 0)
        assert total == len(logs), f"counter {total} but {len(logs)} log records: a mutation was applied twice"
        expected = {"%08d" % i for (a, b) in flushed for i in range(a, b)}
        assert expected, "no child flushed anything: the test checked nothing"
        lost = sorted(expected - logs)
        assert not lost, f"flushed mutations missing on the server: {lost[:10]}"
        assert s.confirmed("c", "total") == {"n": total}
        assert cursor_seq(status["cursor"]) >= cursors[-1]
        print(f"crash rounds: {len(flushed)}, flushed mutations: {len(expected)}, on the server: {len(logs)}")
    finally:
        s.close()
