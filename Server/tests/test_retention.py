"""Pruning: outcomes and tombstones older than --retention-days are removed; a cursor from
before what was pruned is answered with "reset": true, a later one is not."""

import subprocess
import time

from conftest import Client, cursor_seq, delete, mutation, put, server_binary

# About 1.7 seconds.
SHORT = "0.00002"


def wait_until(condition, what, timeout=60):
    deadline = time.monotonic() + timeout
    while not condition():
        assert time.monotonic() < deadline, f"timed out waiting until {what}"
        time.sleep(0.1)


def write_history(c):
    c.push([mutation(1, put("r", "a", {"v": 1})), mutation(2, put("r", "b", {"v": 2}))])
    before = c.pull()["cursor"]
    c.push([mutation(3, delete("r", "a"))])
    after = c.pull()["cursor"]
    assert cursor_seq(after) == cursor_seq(before) + 1
    return before, after


def tombstone_kept(c):
    return delete("r", "a") in c.pull()["changes"]


def test_old_tombstones_and_outcomes_are_pruned_and_old_cursors_reset(start_server):
    server = start_server()
    c = Client(server)
    before, after = write_history(c)
    # The default horizon (30 days) keeps everything.
    time.sleep(2)
    assert tombstone_kept(c)
    assert len(c.pull(unacked=[1, 2, 3])["outcomes"]) == 3
    server.terminate()

    # Restarted with a horizon of under two seconds: pruned at start, without any new request.
    server = start_server("--retention-days", SHORT)
    c = Client(server, client_id=c.client_id)
    wait_until(lambda: not tombstone_kept(c), "the tombstone is pruned")
    assert c.pull(unacked=[1, 2, 3])["outcomes"] == []
    # A cursor from before the pruned delete would miss it: start over.
    page = c.pull(before)
    assert page["reset"] is True and page["changes"] == [put("r", "b", {"v": 2})]
    # A cursor that had seen the delete is still good.
    page = c.pull(after)
    assert "reset" not in page and page["changes"] == []


def test_pruning_runs_periodically_and_keeps_live_records(start_server):
    server = start_server("--retention-days", SHORT)
    c = Client(server)
    c.push([mutation(1, put("r", "keep", {"v": 1}))])
    before, after = write_history(Client(server))
    wait_until(lambda: not tombstone_kept(c), "the tombstone is pruned")
    assert c.pull(before)["reset"] is True
    # A live record is never pruned, however old.
    state = c.state()
    assert state == {("r", "keep"): {"v": 1}, ("r", "b"): {"v": 2}}
    # Writes after pruning go on, and new cursors are good.
    c.push([mutation(9, put("r", "new", {}))])
    page = c.pull(after)
    assert "reset" not in page and page["changes"] == [put("r", "new", {})]


def test_retention_must_be_positive(db):
    r = subprocess.run([server_binary(), "--port", "0", "--db", db.url, "--retention-days", "0"],
                       capture_output=True, timeout=60)
    assert r.returncode != 0 and b"retention" in r.stderr
