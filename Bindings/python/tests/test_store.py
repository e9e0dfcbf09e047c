"""Every Store method, through the Pythonic API (Bindings/python/README.md, docs/python-guide.md)."""

import uuid

import pytest

import optimist
from optimist import delete, incr, patch, put


def test_module_surface():
    assert optimist.library_version()
    for name in ("Store", "put", "patch", "delete", "incr", "Change", "Error", "MisuseError",
                 "NotFoundError", "StateError", "InvalidError", "DuplicateError", "IOError_",
                 "CorruptError", "BusyError"):
        assert hasattr(optimist, name), name


def test_put_get_confirmed_pending(store):
    assert store.get("habits", "h1") is None
    assert store.confirmed("habits", "h1") is None
    assert store.is_pending("habits", "h1") is False
    mid = store.mutate([put("habits", "h1", {"name": "run", "n": 1, "tags": ["a"], "x": None})])
    assert isinstance(mid, int)
    assert store.get("habits", "h1") == {"name": "run", "n": 1, "tags": ["a"], "x": None}
    assert store.confirmed("habits", "h1") is None
    assert store.is_pending("habits", "h1") is True
    assert store.status(mid) == "pending"
    assert store.pending_count() == 1
    store.commit(mid)
    assert store.status(mid) == "committed"
    assert store.confirmed("habits", "h1") == store.get("habits", "h1")
    assert store.is_pending("habits", "h1") is False
    assert store.pending_count() == 0


def test_ids_increase(store):
    ids = [store.mutate([put("c", str(i), {})]) for i in range(5)]
    assert ids == sorted(ids) and len(set(ids)) == 5


def test_patch_merge_semantics(store):
    store.server_apply([put("c", "k", {"a": 1, "b": {"x": 1, "y": 2}, "c": 3})])
    store.mutate([patch("c", "k", {"a": None, "b": {"x": None, "z": 9}, "d": [1, None]})])
    assert store.get("c", "k") == {"b": {"y": 2, "z": 9}, "c": 3, "d": [1, None]}
    store.mutate([patch("c", "missing", {"a": 1, "gone": None})])
    assert store.get("c", "missing") == {"a": 1}


def test_delete_and_incr(store):
    store.server_apply([put("c", "k", {"n": 1})])
    store.mutate([incr("c", "k", "n", 2), incr("c", "k", "m", 0.5), incr("c", "new", "n", -3)])
    assert store.get("c", "k") == {"n": 3, "m": 0.5}
    assert store.get("c", "new") == {"n": -3}
    mid = store.mutate([delete("c", "k"), delete("c", "never")])
    assert store.get("c", "k") is None
    assert store.confirmed("c", "k") == {"n": 1}
    store.rollback(mid, "undo")
    assert store.get("c", "k") == {"n": 3, "m": 0.5}
    assert store.status(mid) == "rolled_back"


def test_commit_with_server_ops_and_wire_dicts(store):
    mid = store.mutate([incr("s", "today", "count", 1)])
    store.commit(mid, [{"op": "put", "coll": "s", "key": "today", "value": {"count": 41}}])
    assert store.confirmed("s", "today") == {"count": 41}
    assert store.get("s", "today") == {"count": 41}
    mid2 = store.mutate([put("s", "x", {"v": 1})])
    store.commit(mid2, [])  # the server changed nothing
    assert store.confirmed("s", "x") is None
    assert store.get("s", "x") is None
    assert store.status(mid2) == "committed"


def test_rollback_keeps_later_mutation(store):
    m1 = store.mutate([put("h", "1", {"done": False, "name": "run"})])
    store.mutate([patch("h", "1", {"done": True})])
    store.rollback(m1)
    assert store.get("h", "1") == {"done": True}
    assert store.is_pending("h", "1")


def test_scan(store):
    store.server_apply([put("logs", k, {"k": k}) for k in ("2026-01-02", "2025-12-31", "2026-01-01", "2026-02-01")])
    assert [k for k, _ in store.scan("logs", "2026-01")] == ["2026-01-01", "2026-01-02"]
    assert store.scan("logs", limit=2) == [("2025-12-31", {"k": "2025-12-31"}), ("2026-01-01", {"k": "2026-01-01"})]
    assert len(store.scan("logs")) == 4
    assert store.scan("nothing") == []
    with pytest.raises(optimist.MisuseError):
        store.scan("logs", limit=-1)


def test_scan_is_bytewise(store):
    keys = ["b", "a", "\u00e9", "Z", "\U0001F600", "ab"]
    store.server_apply([put("c", k, {}) for k in keys])
    assert [k for k, _ in store.scan("c")] == sorted(keys, key=lambda k: k.encode("utf-8"))


def test_outbox_fail_retry(store):
    store.set_retry_policy(2, 100, 1000)
    a = store.mutate([put("q", "k1", {"v": 1})])
    b = store.mutate([put("q", "k2", {"v": 2})], policy="keep")
    got = store.outbox_next(0)
    assert got == (a, [{"op": "put", "coll": "q", "key": "k1", "value": {"v": 1}}])
    assert store.status(a) == "inflight"
    assert store.outbox_next(0)[0] == b
    assert store.outbox_next(0) is None
    store.fail(a, True, "timeout", 0)
    assert store.status(a) == "pending"
    assert store.outbox_next(49) is None        # backoff is at least half of 100 ms
    assert store.outbox_next(100)[0] == a       # and at most 100 ms
    store.fail(a, True, None, 100)              # second attempt of 2: final, policy rollback
    assert store.status(a) == "rolled_back"
    assert store.get("q", "k1") is None
    store.fail(b, False, "rejected", 0)
    assert store.status(b) == "failed"
    assert store.get("q", "k2") == {"v": 2} and store.is_pending("q", "k2")
    store.retry(b)
    assert store.status(b) == "pending"
    assert store.outbox_next(0)[0] == b
    with pytest.raises(optimist.StateError):
        store.retry(b)  # inflight


def test_mutate_with_incr_wire_form(store):
    mid = store.mutate([incr("s", "k", "n", 2)])
    assert store.outbox_next(0) == (mid, [{"op": "incr", "coll": "s", "key": "k", "field": "n", "delta": 2}])


def test_freshness(store):
    assert store.needs_reload("logs", "2026-01-01", 0, 1000) is True
    store.mark_loaded("logs", "2026-01-01", "2026-01-31", 5000)
    assert store.needs_reload("logs", "2026-01-15", 5500, 1000) is False
    assert store.needs_reload("logs", "2026-01-15", 7000, 1000) is True
    assert store.needs_reload("logs", "2026-02-01", 5500, 1000) is True
    assert store.needs_reload("other", "2026-01-15", 5500, 1000) is True
    with pytest.raises(optimist.MisuseError):
        store.mark_loaded("logs", "b", "a", 0)


def test_views(store):
    store.view_define("jan", "logs", "2026-01", "count")
    store.view_define("total", "logs", "", "sum:done")
    assert store.view_get("jan") == 0.0
    store.server_apply([put("logs", "2026-01-01", {"done": 1}), put("logs", "2025-12-31", {"done": 2.5})])
    assert store.view_get("jan") == 1.0
    assert store.view_get("total") == 3.5
    mid = store.mutate([put("logs", "2026-01-02", {"done": 1})])
    assert store.view_get("jan") == 2.0
    store.rollback(mid)
    assert store.view_get("jan") == 1.0
    assert isinstance(store.view_get("total"), float)
    with pytest.raises(optimist.NotFoundError):
        store.view_get("nope")
    with pytest.raises(optimist.MisuseError):
        store.view_define("bad", "logs", "", "median")


def test_client_id_is_stable_uuid(store):
    cid = store.client_id
    assert str(uuid.UUID(cid)) == cid.lower()
    assert store.client_id == cid
    with optimist.Store() as other:
        assert other.client_id != cid


def test_context_manager_and_double_close():
    with optimist.Store() as s:
        s.mutate([put("c", "k", {})])
        assert not s.closed
    assert s.closed
    s.close()
    s.close()
    with pytest.raises(optimist.MisuseError, match="closed"):
        s.get("c", "k")
    with pytest.raises(optimist.MisuseError):
        s.mutate([put("c", "k", {})])
    with pytest.raises(optimist.MisuseError):
        s.client_id
    with pytest.raises(optimist.MisuseError):
        s.flush()


def test_flush_in_memory(store):
    store.mutate([put("c", "k", {})])
    store.flush()


def test_dedupe(store):
    a = store.mutate([incr("h", "1", "done", 1)], dedupe_key="tap-1")
    with pytest.raises(optimist.DuplicateError) as e:
        store.mutate([incr("h", "1", "done", 1)], dedupe_key="tap-1")
    assert e.value.existing_id == a
    assert store.get("h", "1") == {"done": 1}
    store.commit(a)
    c = store.mutate([incr("h", "1", "done", 1)], dedupe_key="tap-1")
    assert c > a


def test_op_values():
    op = put("c", "k", {"a": 1})
    assert op.kind == "put" and op.collection == "c" and op.key == "k" and op.value == {"a": 1}
    assert op == optimist.Op.from_dict(op.to_dict())
    assert incr("c", "k", "n", 1).to_dict() == {"op": "incr", "coll": "c", "key": "k", "field": "n", "delta": 1.0}
    assert delete("c", "k").to_dict() == {"op": "delete", "coll": "c", "key": "k"}
    assert repr(patch("c", "k", {})) == "optimist.patch('c', 'k', {})"
    with pytest.raises(AttributeError):
        op.key = "x"


def test_values_pickle_and_show_under_the_package_name():
    import pickle
    for op in (put("c", "k", {"a": [1]}), incr("c", "k", "n", 2), delete("c", "k")):
        assert pickle.loads(pickle.dumps(op)) == op
    e = pickle.loads(pickle.dumps(optimist.DuplicateError("m", 6, 7)))
    assert type(e) is optimist.DuplicateError and e.existing_id == 7 and e.code == 6
    assert optimist.NotFoundError.__module__ == "optimist"
    assert repr(optimist.Change("c", "k", None, True, "mutate")).startswith("Change(")


def test_op_argument_checks():
    with pytest.raises(TypeError):
        put("c", "k", [1, 2])
    with pytest.raises(TypeError):
        put("c", 1, {})
    with pytest.raises(TypeError):
        incr("c", "k", "n", "1")
    with pytest.raises(optimist.InvalidError):
        put("c", "k\0x", {})
    with pytest.raises(optimist.InvalidError):
        put("c", "\ud800", {})
    with pytest.raises(optimist.InvalidError):
        put("c", "k", {"n": float("nan")})
    with pytest.raises(optimist.InvalidError):
        incr("c", "k", "n", float("inf"))
    with pytest.raises(TypeError):
        optimist.Store().mutate(put("c", "k", {}))  # a bare op, not a list


def test_bad_arguments(store):
    with pytest.raises(optimist.MisuseError):
        store.mutate([put("c", "k", {})], policy="sometimes")
    with pytest.raises(optimist.MisuseError):
        store.status(-1)
    with pytest.raises(optimist.MisuseError):
        store.outbox_next(1 << 63)
    with pytest.raises(TypeError):
        store.status("1")
    with pytest.raises(optimist.MisuseError):
        store.set_retry_policy(0, 100, 100)
    with pytest.raises(optimist.MisuseError):
        store.set_retry_policy(3, -1, 100)
