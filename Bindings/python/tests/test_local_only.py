"""Local-only stores (``Store(path, local_only=True)``): no server and no commit loop. In
memory a mutation is committed when ``mutate`` returns; on a file, ``flush`` commits everything
made before it, the committing thread gets there by itself, and a reopen commits what the file
held pending. There is no outbox to send."""

import pytest

import optimist


def test_in_memory_commits_at_once():
    with optimist.Store(local_only=True) as s:
        heard = []
        s.subscribe(lambda changes: heard.extend((c.cause, c.status) for c in changes))
        mid = s.mutate([optimist.put("habits", "run", {"count": 1})])
        assert s.status(mid) == "committed"
        assert s.confirmed("habits", "run") == {"count": 1}
        assert heard == [("mutate", "pending"), ("commit", "confirmed")]
        with pytest.raises(optimist.MisuseError):
            s.outbox_next(0)
        with pytest.raises(optimist.MisuseError):
            s.outbox_wait(0)
        with pytest.raises(optimist.MisuseError):
            s.sync_start("http://127.0.0.1:9")


def test_on_a_file(tmp_path):
    path = tmp_path / "local.db"
    with optimist.Store(path, local_only=True) as s:
        first = s.mutate([optimist.put("habits", "run", {"count": 0})])
        assert s.wait_settled(first, 10) == "committed"      # by itself, no flush
        ids = [s.mutate([optimist.incr("habits", "run", "count", 1)]) for _ in range(100)]
        s.flush()
        assert {s.status(m) for m in ids} == {"committed"}
        assert s.mutation(ids[-1])["status"] == "committed"
    with optimist.Store(path) as r:
        assert r.pending_count() == 0
        assert r.confirmed("habits", "run") == {"count": 100}
        pending = r.mutate([optimist.put("notes", "n1", {"t": "hi"})])
    with optimist.Store(path, local_only=True, cache_bytes=1 << 20) as s:
        assert s.status(pending) == "committed"                # committed at the open
        assert s.confirmed("notes", "n1") == {"t": "hi"}


def test_local_only_must_be_a_bool():
    with pytest.raises(optimist.MisuseError):
        optimist.Store(local_only=1)
