"""The app developer's path: ``wait_settled`` returns a mutation's final status once another
thread ends it (None on timeout), ``outbox_wait`` wakes for a pending mutation (not an
inflight one), ``mutation`` still gives an ended mutation with its ``last_error``, and
``commit(..., renames=...)`` moves a record and its later edits to the server's key."""

import threading
import time

import pytest

import optimist


def later(seconds, fn):
    t = threading.Timer(seconds, fn)
    t.start()
    return t


def test_wait_settled_returns_the_final_status(store):
    a = store.mutate([optimist.put("todos", "a", {"t": "milk"})])
    b = store.mutate([optimist.put("todos", "b", {"t": "eggs"})])
    k = store.mutate([optimist.put("todos", "c", {})], policy="keep")
    assert store.wait_settled(a, 0) is None
    assert store.wait_settled(a, 0.02) is None

    def end():
        store.commit(a)
        store.rollback(b, "the title is taken")
        store.outbox_next(0)
        store.outbox_next(0)
        store.fail(k, False, "refused", 0)

    t = later(0.03, end)
    assert store.wait_settled(a, 10) == "committed"
    assert store.wait_settled(b, 10) == "rolled_back"
    assert store.wait_settled(k, None) == "failed"
    t.join()
    ended = store.mutation(b)
    assert ended["status"] == "rolled_back" and ended["last_error"] == "the title is taken"
    assert ended["ops"] == [{"op": "put", "coll": "todos", "key": "b", "value": {"t": "eggs"}}]
    assert store.mutation(k)["status"] == "failed"
    with pytest.raises(optimist.NotFoundError):
        store.mutation(999)
    with pytest.raises(optimist.NotFoundError):
        store.wait_settled(999, 0)
    for bad in (-1, "1", float("nan")):
        with pytest.raises(optimist.MisuseError):
            store.wait_settled(a, bad)


def test_a_close_ends_a_wait():
    s = optimist.Store()
    mid = s.mutate([optimist.put("todos", "a", {})])
    t = later(0.03, s.close)
    with pytest.raises(optimist.MisuseError):
        s.wait_settled(mid, 10)
    t.join()


def test_outbox_wait_wakes_for_pending_not_inflight(store):
    assert store.outbox_wait(0) is False
    started = time.monotonic()
    t = later(0.03, lambda: store.mutate([optimist.put("todos", "a", {})]))
    assert store.outbox_wait(10) is True
    assert time.monotonic() - started < 10
    t.join()
    mid, ops = store.outbox_next(0)
    assert ops[0]["key"] == "a"
    assert store.outbox_wait(0) is False          # inflight is not pending
    store.fail(mid, True, "offline", 0)
    assert store.outbox_wait(0) is True           # backing off is pending
    assert store.outbox_next(0) is None           # ...and not due yet


def test_the_last_thousand_ended_mutations_are_kept(store):
    first = store.mutate([optimist.put("todos", "a", {})])
    store.commit(first)
    for i in range(1000):
        store.commit(store.mutate([optimist.put("todos", f"k{i}", {})]))
    with pytest.raises(optimist.NotFoundError):
        store.mutation(first)
    assert store.status(first) == "committed"
    assert store.mutation(first + 1)["status"] == "committed"


def test_commit_with_renames(store):
    create = store.mutate([optimist.put("todos", "tmp-1", {"title": "Milk"})])
    edit = store.mutate([optimist.patch("todos", "tmp-1", {"done": True})])
    for bad in ([("todos", "tmp-1")], ["abc"], [("todos", "tmp-1", 3)], [("todos", "tmp-1", "")]):
        with pytest.raises(optimist.InvalidError):
            store.commit(create, renames=bad)
    assert store.status(create) == "pending"
    store.commit(create, renames=[("todos", "tmp-1", "812")])
    assert store.get("todos", "tmp-1") is None
    assert store.get("todos", "812") == {"title": "Milk", "done": True}
    assert store.confirmed("todos", "812") == {"title": "Milk"}
    assert store.mutation(edit)["ops"][0]["key"] == "812"
    store.commit(edit, server_ops=[optimist.put("todos", "812", {"title": "Milk", "done": True, "v": 2})], renames=[])
    assert store.confirmed("todos", "812") == {"title": "Milk", "done": True, "v": 2}


def test_outbox_wait_is_misuse_while_a_sync_runs(store):
    def transport(endpoint, url, body, headers, timeout_ms):
        return 503, b""

    store.sync_start(transport=transport)
    try:
        with pytest.raises(optimist.MisuseError):
            store.outbox_wait(0)
    finally:
        store.sync_stop()
