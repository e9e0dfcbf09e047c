"""File-backed stores: durability across reopen and the IO, CORRUPT and BUSY codes.

These need the SQLite persistence being built in Sources/OptimistSQLite; until it lands they
fail (not skipped) because every path is refused with IO.
"""

import os
import subprocess
import sys
import textwrap

import pytest

import optimist
from optimist import incr, patch, put

from conftest import SRC, library_path


def test_io_uncreatable_path(tmp_path):
    with pytest.raises(optimist.StoreIOError) as e:
        optimist.Store(tmp_path / "no" / "such" / "dir" / "s.db")
    assert e.value.code == 7


def test_reopen_keeps_state(tmp_path):
    path = tmp_path / "s.db"
    with optimist.Store(path) as s:
        cid = s.client_id
        s.server_apply([put("habits", "h1", {"name": "run"})])
        a = s.mutate([patch("habits", "h1", {"done": True})])
        b = s.mutate([incr("stats", "today", "count", 1)], dedupe_key="x")
        s.commit(b)
        s.flush()
    with optimist.Store(str(path)) as s:
        assert s.client_id == cid
        assert s.get("habits", "h1") == {"done": True, "name": "run"}
        assert s.confirmed("habits", "h1") == {"name": "run"}
        assert s.status(a) == "pending" and s.status(b) == "committed"
        assert s.pending_count() == 1
        c = s.mutate([put("c", "k", {})])
        assert c > b


def test_corrupt_garbage_file(tmp_path):
    path = tmp_path / "garbage.db"
    path.write_bytes(os.urandom(8192))
    with pytest.raises(optimist.CorruptError) as e:
        optimist.Store(path)
    assert e.value.code == 8


def test_busy_second_process(tmp_path):
    """A store file held by this process cannot be opened by another one."""
    path = tmp_path / "held.db"
    with optimist.Store(path) as s:
        s.mutate([put("c", "k", {})])
        s.flush()
        child = textwrap.dedent(f"""
            import sys
            sys.path.insert(0, {str(SRC)!r})
            import optimist
            try:
                optimist.Store({str(path)!r})
            except optimist.Error as e:
                print(type(e).__name__, e.code)
            else:
                print("opened")
        """)
        env = dict(os.environ, OPTIMIST_LIBRARY=library_path())
        out = subprocess.run([sys.executable, "-c", child], env=env, capture_output=True, text=True)
        assert out.stdout.split() == ["BusyError", "9"], out.stderr


def test_busy_second_open_in_this_process(tmp_path):
    path = tmp_path / "held.db"
    with optimist.Store(path):
        with pytest.raises(optimist.BusyError) as e:
            optimist.Store(path)
        assert e.value.code == 9
    with optimist.Store(path) as again:  # free once the first is closed
        assert again.pending_count() == 0


def test_close_flushes(tmp_path):
    """close() alone (no flush) keeps everything, and the file store's pending list,
    statuses and dedupe keys come back."""
    path = tmp_path / "s.db"
    with optimist.Store(path) as s:
        a = s.mutate([put("c", "k", {"v": 1})], dedupe_key="once", policy="keep")
        s.outbox_next(0)
        s.fail(a, False, "rejected", 0)
    with optimist.Store(path) as s:
        assert s.status(a) == "failed"
        assert s.get("c", "k") == {"v": 1} and s.is_pending("c", "k")
        with pytest.raises(optimist.DuplicateError) as e:
            s.mutate([put("c", "k2", {})], dedupe_key="once")
        assert e.value.existing_id == a
        s.retry(a)
        assert s.outbox_next(0) == (a, [{"op": "put", "coll": "c", "key": "k", "value": {"v": 1}}])
