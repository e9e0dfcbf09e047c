"""The ``optimist`` command-line tool (Sources/OptimistCLI): inspect, outbox, explain and dump
on store files, against what the library itself says, on a store another process is
writing, and on files that are not stores (garbage, empty, another program's database,
damaged) or are of an older layout (version 1).

The tool is found through ``OPTIMIST_CLI`` (CTest sets it), else in this checkout's build
folders; without it these tests are skipped.
"""

import hashlib
import json
import os
import signal
import sqlite3
import subprocess
import sys
import time
from pathlib import Path
from typing import Any, Dict, List, Optional

import pytest

import optimist
from conftest import ROOT, SRC, library_path


def _find_cli() -> Optional[str]:
    env = os.environ.get("OPTIMIST_CLI")
    if env:
        return env
    for rel in ("build/bin/optimist", ".build/release/optimist-cli", ".build/debug/optimist-cli"):
        p = ROOT / rel
        if p.is_file() and os.access(p, os.X_OK):
            return str(p)
    return None


CLI = _find_cli()
pytestmark = pytest.mark.skipif(CLI is None, reason="the optimist tool is not built (set OPTIMIST_CLI)")


@pytest.fixture
def scratch(tmp_path, monkeypatch):
    """The tool's TMPDIR, checked empty after the test: it never leaves its copy behind."""
    d = tmp_path / "scratch"
    d.mkdir()
    monkeypatch.setenv("TMPDIR", str(d))
    yield d
    assert list(d.iterdir()) == [], "the tool left its scratch copy behind"


def cli(*args: str, ok: bool = True) -> subprocess.CompletedProcess:
    r = subprocess.run([CLI, *args], capture_output=True, text=True, timeout=120)
    if ok:
        assert r.returncode == 0, (args, r.returncode, r.stderr)
        assert r.stderr == "", r.stderr
    return r


def cli_json(*args: str) -> Any:
    return json.loads(cli(*args, "--json").stdout)


def lines(text: str) -> List[Dict[str, Any]]:
    return [json.loads(x) for x in text.splitlines()]


def fingerprint(path: Path) -> Dict[str, Any]:
    """Every file beside the store, with its bytes' hash and its mtime."""
    return {p.name: (hashlib.sha256(p.read_bytes()).hexdigest(), p.stat().st_mtime_ns)
            for p in sorted(path.parent.iterdir()) if p.is_file()}


def habits_store(path: Path) -> optimist.Store:
    """A store with confirmed records and mutations of every live status."""
    s = optimist.Store(path)
    s.server_apply([optimist.put("habits", "run", {"count": 1, "title": "Run"}),
                    optimist.put("habits", "read", {"count": 0}),
                    optimist.put("logs", "2025-11-21", {"n": 3})])
    a = s.mutate([optimist.incr("habits", "run", "count", 1)], dedupe_key="tap-1")
    b = s.mutate([optimist.patch("habits", "run", {"note": "morning"})], policy="keep")
    s.mutate([optimist.put("habits", "swim", {"count": 1})])
    s.mutate([optimist.delete("logs", "2025-11-21")])
    e = s.mutate([optimist.incr("habits", "read", "count", 5)])
    s.commit(e)
    now = 1763770000000
    assert s.outbox_next(now)[0] == a
    s.fail(a, True, "timeout", now)
    assert s.outbox_next(now)[0] == b
    s.fail(b, False, "rejected: too long", now)
    s.outbox_next(now)  # the put of swim: inflight
    s.index_define("habits", "count")
    s.flush()
    return s


# Help and usage -------------------------------------------------------------------------------

def test_help_explains_every_command(scratch):
    out = cli("--help").stdout
    for word in ("inspect", "outbox", "explain", "dump", "--json", "confirmed", "pending", "inflight",
                 "failed", "visible", "Exit status"):
        assert word in out
    for cmd in ("inspect", "outbox", "explain", "dump"):
        assert cli("help", cmd).stdout == cli(cmd, "--help").stdout
        assert f"optimist {cmd} FILE" in cli(cmd, "-h").stdout
    assert cli("--version").stdout.startswith("optimist ")


@pytest.mark.parametrize("args", [[], ["bogus", "x"], ["inspect"], ["inspect", "a", "b"], ["explain", "f", "c"],
                                  ["dump", "f", "--status", "pending"], ["outbox", "f", "--status", "committed"],
                                  ["inspect", "f", "--coll"], ["help", "nope"]])
def test_bad_command_lines_exit_2_with_a_hint(scratch, args):
    r = cli(*args, ok=False)
    assert r.returncode == 2 and r.stdout == ""
    assert r.stderr.startswith("optimist: ") and "optimist --help" in r.stderr


# A store the test process has open -------------------------------------------------------------

def test_outbox_and_explain_match_the_library(tmp_path, scratch):
    path = tmp_path / "habits.db"
    with habits_store(path) as s:
        before = fingerprint(path)
        assert cli_json("outbox", str(path)) == s.mutations()
        for status in ("pending", "inflight", "failed"):
            assert cli_json("outbox", str(path), "--status", status) == s.mutations(status)
        for coll, key in (("habits", "run"), ("habits", "read"), ("habits", "swim"), ("logs", "2025-11-21"),
                          ("habits", "nothing"), ("nowhere", "k")):
            assert cli_json("explain", str(path), coll, key) == s.explain(coll, key), (coll, key)

        confirmed = lines(cli("dump", str(path)).stdout)
        assert confirmed == [{"coll": "habits", "key": "read", "value": {"count": 5}},
                             {"coll": "habits", "key": "run", "value": {"count": 1, "title": "Run"}},
                             {"coll": "logs", "key": "2025-11-21", "value": {"n": 3}}]
        visible = lines(cli("dump", str(path), "--visible").stdout)
        want = []
        for coll in ("habits", "logs"):
            for key, value in s.scan(coll):
                layers = s.explain(coll, key)["layers"]
                status = ("failed" if any(x["status"] == "failed" for x in layers)
                          else "pending" if layers else "confirmed")
                want.append({"coll": coll, "key": key, "value": value, "status": status})
        assert visible == want
        assert lines(cli("dump", str(path), "--coll", "habits", "--prefix", "r").stdout) == confirmed[:2]
        assert lines(cli("dump", str(path), "--prefix=2025").stdout) == confirmed[2:]
        assert cli("dump", str(path), "--coll", "none").stdout == ""

        info = cli_json("inspect", str(path))
        assert info["client_id"] == s.client_id
        assert info["open_by_pid"] is None  # held by this very process: F_GETLK only sees others
        assert info["mutations"] == {"pending": 2, "inflight": 1, "failed": 1, "total": 4}
        assert info["ended"] == {"committed": 1, "rolled_back": 0}
        assert info["records"] == {"total": 3, "by_collection": {"habits": 2, "logs": 1}}
        assert info["layout_version"] == 7 and info["next_mutation_id"] == 6
        assert info["indexes"] == [{"collection": "habits", "field": ["count"], "entries": 2}]
        assert info["file_bytes"] == path.stat().st_size and info["sync_cursor"] is None
        assert fingerprint(path) == before, "the tool changed the store's files"
        s.mutate([optimist.put("habits", "after", {})])  # the store still works
        s.flush()
    assert cli_json("inspect", str(path))["closed_cleanly"] is True


def test_human_output(tmp_path, scratch):
    path = tmp_path / "habits.db"
    habits_store(path).close()
    out = cli("inspect", str(path)).stdout
    assert "4 not ended: 2 pending, 1 inflight, 1 failed" in out and "closed cleanly" in out
    assert "layout       version 7" in out
    assert "habits: count (2 entries)" in out
    out = cli("outbox", str(path)).stdout.splitlines()
    assert out[0].split() == ["ID", "STATUS", "ATTEMPTS", "NEXT", "ATTEMPT", "POLICY", "DEDUPE", "LAST", "ERROR", "OPS"]
    assert out[1].split()[:3] == ["1", "pending", "1"] and "tap-1" in out[1] and "timeout" in out[1]
    assert "(2025-11-22 00:06:4" in out[1]            # the next attempt, as a UTC date
    assert "waits for retry" in out[2] and "keep" in out[2]
    assert out[4].split()[:4] == ["4", "pending", "0", "now"]
    out = cli("explain", str(path), "habits", "run").stdout
    assert 'record "run" of collection "habits"' in out
    assert "#1 pending  incr count +1" in out and '-> {"count":2,"note":"morning","title":"Run"}' in out
    assert "(skipped" not in out
    assert "nothing pending" in cli("explain", str(path), "habits", "read").stdout


def test_explain_marks_skipped_ops(tmp_path, scratch):
    path = tmp_path / "s.db"
    with optimist.Store(path) as s:
        s.server_apply([optimist.put("c", "k", {"n": 1})])
        s.mutate([optimist.incr("c", "k", "n", 1)])
        s.server_apply([optimist.put("c", "k", {"n": "text"})])
        s.flush()
        assert cli_json("explain", str(path), "c", "k") == s.explain("c", "k")
        assert "incr n +1 (skipped: cannot apply here)" in cli("explain", str(path), "c", "k").stdout


# A store another process is writing ------------------------------------------------------------

WRITER = r"""
import os, random, sys, time
sys.path.insert(0, sys.argv[3])
import optimist
path, seconds = sys.argv[1], float(sys.argv[2])
s = optimist.Store(path)
print("ready", flush=True)
end = time.time() + seconds
i, live = 0, []
while time.time() < end:
    i += 1
    live.append(s.mutate([optimist.put("big", "k%05d" % (i % 3000), {"n": i, "pad": "x" * 300}),
                          optimist.incr("counters", "c", "n", 1)]))
    if len(live) > 40:
        s.commit(live.pop(random.randrange(len(live))))
    if i % 400 == 0:
        s.flush()
s.close()
print("done", i, flush=True)
"""


def test_a_store_being_written_by_another_process(tmp_path, scratch):
    """Every command succeeds and sees one consistent state while another process mutates,
    commits and flushes (checkpoints and log restarts included), and the writer is neither
    blocked nor disturbed."""
    path = tmp_path / "live.db"
    env = dict(os.environ, OPTIMIST_LIBRARY=library_path())
    writer = subprocess.Popen([sys.executable, "-c", WRITER, str(path), "12", str(SRC)],
                              stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, env=env)
    try:
        assert writer.stdout.readline().strip() == "ready"
        runs, start, seen_ids = 0, time.time(), set()
        while time.time() - start < 9:
            runs += 1
            info = cli_json("inspect", str(path))
            assert info["open_by_pid"] == writer.pid
            m, e = info["mutations"], info["ended"]
            # One snapshot: every id ever handed out is either stored live or ended.
            assert m["total"] + e["committed"] + e["rolled_back"] == info["next_mutation_id"] - 1, info
            assert m["total"] <= 41 and m["inflight"] == 0 and m["failed"] == 0
            x = cli_json("explain", str(path), "counters", "c")
            confirmed = x["confirmed"]["n"] if x["confirmed"] else 0   # none yet at the very start
            visible = x["visible"]["n"] if x["visible"] else 0
            assert visible == confirmed + len(x["layers"]), x
            ids = [layer["id"] for layer in x["layers"]]
            assert ids == sorted(ids)
            out = cli_json("outbox", str(path))
            assert all(o["status"] == "pending" and len(o["ops"]) == 2 for o in out)
            seen_ids.update(o["id"] for o in out)
            if runs % 5 == 0:
                dumped = lines(cli("dump", str(path), "--coll", "big").stdout)
                keys = [d["key"] for d in dumped]
                assert keys == sorted(keys) and len(keys) == len(set(keys)) <= 3000
        out, err = writer.communicate(timeout=60)
    finally:
        if writer.poll() is None:
            writer.kill()
    assert writer.returncode == 0, err
    done = int(out.split()[-1])
    assert runs >= 5 and len(seen_ids) > 10
    # The writer closed: its last state, all of it, and nothing of the tool's beside it.
    info = cli_json("inspect", str(path))
    assert info["open_by_pid"] is None and info["closed_cleanly"] is True
    assert info["next_mutation_id"] - 1 == done
    x = cli_json("explain", str(path), "counters", "c")
    assert x["visible"]["n"] == done and x["confirmed"]["n"] == info["ended"]["committed"]
    assert sorted(p.name for p in tmp_path.iterdir()) == ["live.db", "scratch"]
    with optimist.Store(path) as s:
        assert s.get("counters", "c") == {"n": done} and s.pending_count() == info["mutations"]["total"]


def test_a_closed_pipe_still_removes_the_copy(tmp_path, scratch):
    path = tmp_path / "big.db"
    with optimist.Store(path) as s:
        s.server_apply([optimist.put("c", "k%05d" % i, {"pad": "y" * 500}) for i in range(3000)])
    p = subprocess.Popen([CLI, "dump", str(path)], stdout=subprocess.PIPE)
    assert json.loads(p.stdout.readline())["key"] == "k00000"
    p.stdout.close()
    assert p.wait(timeout=60) == 128 + signal.SIGPIPE
    # the scratch fixture checks that the copy is gone


# Files that are not stores, damaged ones, and old layouts -------------------------------------

def refused(path: Path, reason: str) -> None:
    for cmd in (["inspect"], ["outbox"], ["explain", "c", "k"], ["dump"]):
        r = cli(cmd[0], str(path), *cmd[1:], ok=False)
        assert r.returncode == 1 and r.stdout == "", (cmd, r)
        assert r.stderr.startswith(f"optimist: {path}: ") and reason in r.stderr, r.stderr


def test_refuses_an_empty_file(tmp_path, scratch):
    (tmp_path / "empty.db").write_bytes(b"")
    refused(tmp_path / "empty.db", "not an Optimist store: the file is empty")


def test_refuses_garbage(tmp_path, scratch):
    (tmp_path / "garbage.db").write_bytes(os.urandom(10000))
    refused(tmp_path / "garbage.db", "not an Optimist store: it is not a SQLite database")
    fake = tmp_path / "fake.db"
    fake.write_bytes(b"SQLite format 3\0" + os.urandom(8192))
    refused(fake, "not an Optimist store")


def test_refuses_other_sqlite_files(tmp_path, scratch):
    other = tmp_path / "other.db"
    with sqlite3.connect(other) as c:
        c.execute("CREATE TABLE people(name TEXT)")
    refused(other, "not an Optimist store: it is a SQLite database without the Optimist application id")
    foreign = tmp_path / "foreign.db"
    with sqlite3.connect(foreign) as c:
        c.execute("PRAGMA application_id = 1234")
        c.execute("CREATE TABLE t(x)")
    refused(foreign, "another program (application id 1234)")
    blank = tmp_path / "blank.db"
    with sqlite3.connect(blank) as c:
        c.execute("PRAGMA user_version = 0")
        c.execute("CREATE TABLE t(x)")
        c.execute("DROP TABLE t")
    refused(blank, "an empty SQLite database")


def test_refuses_a_missing_file_a_directory_and_a_log(tmp_path, scratch):
    refused(tmp_path / "missing.db", "cannot read it: No such file or directory")
    refused(tmp_path, "not a regular file")
    path = tmp_path / "s.db"
    s = optimist.Store(path)
    s.mutate([optimist.put("c", "k", {})])
    s.flush()
    try:
        refused(Path(str(path) + "-wal"), "write-ahead log")
    finally:
        s.close()


@pytest.mark.parametrize("damage,reason", [
    ("UPDATE mutations SET status = 9", "mutation 1 has status 9"),
    ("UPDATE mutations SET ops = 'not json'", "the ops of mutation 1 do not decode"),
    ("UPDATE mutations SET ops = X'B101'", "the ops of mutation 1 do not decode: a count runs past the end"),
    ("UPDATE mutations SET policy = 7", "unknown policy"),
    ("UPDATE records SET value = '[1]'", "record k of c is not a JSON object"),
    ("DELETE FROM meta", "its meta table has no row"),
    ("DROP TABLE mutations", "it has no mutations table"),
    ("PRAGMA user_version = 0", "no layout version"),
])
def test_refuses_a_damaged_store(tmp_path, scratch, damage, reason):
    path = tmp_path / "s.db"
    with optimist.Store(path) as s:
        s.server_apply([optimist.put("c", "k", {"v": 1})])
        s.mutate([optimist.put("c", "k", {"v": 2})])
    with sqlite3.connect(path) as c:
        c.executescript(damage)
    r = cli("inspect" if "meta" in damage or "user_version" in damage or "DROP" in damage else "explain",
            str(path), *([] if "meta" in damage or "user_version" in damage or "DROP" in damage else ["c", "k"]), ok=False)
    assert r.returncode == 1 and reason in r.stderr, r.stderr


def test_refuses_a_truncated_store(tmp_path, scratch):
    path = tmp_path / "s.db"
    with optimist.Store(path) as s:
        s.server_apply([optimist.put("c", "k%04d" % i, {"pad": "z" * 300}) for i in range(2000)])
    data = path.read_bytes()
    path.write_bytes(data[: len(data) // 2])
    r = cli("dump", str(path), ok=False)
    assert r.returncode == 1 and "damaged" in r.stderr, r.stderr


def make_version1(path: Path) -> None:
    """The first layout, by hand (as Tests/OptimistSQLiteTests/EndedChunksTests.swift)."""
    ops = lambda *o: json.dumps([x.to_dict() for x in o], separators=(",", ":"), sort_keys=True)  # noqa: E731
    with sqlite3.connect(path) as c:
        c.executescript(f"""
            PRAGMA application_id = {0x4F50544D};
            PRAGMA user_version = 1;
            CREATE TABLE meta(one INTEGER PRIMARY KEY CHECK (one = 1), client_id TEXT NOT NULL,
                next_mutation_id INTEGER NOT NULL, closed_cleanly INTEGER NOT NULL DEFAULT 1);
            CREATE TABLE records(coll TEXT NOT NULL, key TEXT NOT NULL, value TEXT NOT NULL,
                PRIMARY KEY (coll, key)) WITHOUT ROWID;
            CREATE TABLE mutations(id INTEGER PRIMARY KEY, ops TEXT NOT NULL, status INTEGER NOT NULL,
                attempts INTEGER NOT NULL, next_attempt_ms INTEGER NOT NULL, dedupe_key TEXT,
                policy INTEGER NOT NULL, last_error TEXT);
            CREATE TABLE ended(id INTEGER PRIMARY KEY, status INTEGER NOT NULL);
            CREATE TABLE loaded(seq INTEGER PRIMARY KEY, coll TEXT NOT NULL, from_key TEXT NOT NULL,
                to_key TEXT NOT NULL, at_ms INTEGER NOT NULL);
            INSERT INTO meta VALUES (1, 'old-client', 9000, 1);
            INSERT INTO records VALUES ('c', 'q', '{{"v":0}}');
            INSERT INTO ended VALUES (1, 4), (2, 5), (3, 4);
        """)
        c.execute("INSERT INTO mutations VALUES (8500, ?, 1, 0, 0, NULL, 0, NULL)",
                  (ops(optimist.put("c", "p", {"v": 1})),))
        c.execute("INSERT INTO mutations VALUES (8501, ?, 3, 2, 0, 'dk', 1, 'boom')",
                  (ops(optimist.patch("c", "q", {"w": 2})),))


def test_reads_a_layout_1_file_without_migrating_it(tmp_path, scratch):
    path = tmp_path / "v1.db"
    make_version1(path)
    before = fingerprint(path)
    info = cli_json("inspect", str(path))
    assert info["layout_version"] == 1 and info["client_id"] == "old-client"
    assert info["mutations"] == {"pending": 1, "inflight": 0, "failed": 1, "total": 2}
    assert info["ended"] == {"committed": 2, "rolled_back": 1}
    assert info["sync_cursor"] is None and info["next_mutation_id"] == 9000
    out = cli_json("outbox", str(path))
    assert [(o["id"], o["status"], o["retry"], o["policy"], o["dedupe_key"], o["last_error"]) for o in out] == [
        (8500, "pending", 0, "rollback", None, None), (8501, "failed", 0, "keep", "dk", "boom")]
    assert cli_json("explain", str(path), "c", "q") == {
        "confirmed": {"v": 0},
        "layers": [{"id": 8501, "status": "failed", "ops": [{"op": "patch", "coll": "c", "key": "q", "value": {"w": 2}}],
                    "value": {"v": 0, "w": 2}}],
        "visible": {"v": 0, "w": 2}}
    assert lines(cli("dump", str(path), "--visible").stdout) == [
        {"coll": "c", "key": "p", "value": {"v": 1}, "status": "pending"},
        {"coll": "c", "key": "q", "value": {"v": 0, "w": 2}, "status": "failed"}]
    assert fingerprint(path) == before  # read as it is: not migrated, not touched
    # The library opens (and migrates) it to the same picture.
    with optimist.Store(path) as s:
        assert s.explain("c", "q")["visible"] == {"v": 0, "w": 2}


def test_a_newer_layout_is_read_with_a_note(tmp_path, scratch):
    path = tmp_path / "s.db"
    habits_store(path).close()
    with sqlite3.connect(path) as c:
        c.execute("PRAGMA user_version = 99")
    r = cli("inspect", str(path), "--json", ok=False)
    assert r.returncode == 0 and "layout version 99 is newer than this tool knows" in r.stderr
    assert json.loads(r.stdout)["layout_version"] == 99
