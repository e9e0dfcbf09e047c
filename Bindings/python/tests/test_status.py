"""Status you can see (docs/status.md): ``store.mutations(status=None)`` and
``store.explain(coll, key)`` with the names and shapes docs/status.md gives, on memory and file stores,
and their errors. The same calls are checked against the reference model in
test_stateful.py."""

import ctypes
import inspect

import pytest

import optimist
from optimist import _ffi

KEYS = {"id", "status", "ops", "attempts", "last_error", "next_attempt_ms", "created_ms", "policy", "dedupe_key",
        "retry"}


def test_documented_names():
    assert str(inspect.signature(optimist.Store.mutations)).startswith("(self, status")
    assert inspect.signature(optimist.Store.mutations).parameters["status"].default is None
    assert [p for p in inspect.signature(optimist.Store.explain).parameters] == ["self", "coll", "key"]
    assert optimist.Store.mutations.__doc__ and optimist.Store.explain.__doc__


def test_mutations_lists_the_not_ended_ones_in_id_order(store):
    store.server_apply([optimist.put("h", "run", {"count": 1})])
    a = store.mutate([optimist.incr("h", "run", "count", 1), optimist.put("h", "x", {})], dedupe_key="tap-1")
    b = store.mutate([optimist.patch("h", "run", {"note": "am"})], policy="keep")
    c = store.mutate([optimist.delete("h", "x")])
    d = store.mutate([optimist.put("h", "y", {"v": 1})])
    store.commit(d)
    assert store.outbox_next(5000)[0] == a
    store.fail(a, True, "timeout", 5000)
    store.fail(b, False, "rejected", 10 ** 9)  # sent by other means: kept as failed
    assert store.outbox_next(10 ** 9)[0] == a  # due again after its backoff: inflight

    got = store.mutations()
    assert [m["id"] for m in got] == [a, b, c]
    assert all(set(m) == KEYS for m in got)
    assert got[0]["status"] == "inflight" and got[0]["attempts"] == 2 and got[0]["dedupe_key"] == "tap-1"
    assert got[0]["last_error"] == "timeout" and got[0]["next_attempt_ms"] > 5000
    assert got[0]["ops"] == [{"op": "incr", "coll": "h", "key": "run", "field": "count", "delta": 1},
                             {"op": "put", "coll": "h", "key": "x", "value": {}}]
    assert got[1] == {"id": b, "status": "failed", "ops": [{"op": "patch", "coll": "h", "key": "run",
                                                             "value": {"note": "am"}}],
                      "attempts": 1, "last_error": "rejected", "next_attempt_ms": 0, "created_ms": None,
                      "policy": "keep", "dedupe_key": None, "retry": 0}
    assert got[2]["status"] == "pending" and got[2]["policy"] == "rollback" and got[2]["last_error"] is None
    assert [m["id"] for m in store.mutations("pending")] == [c]
    assert [m["id"] for m in store.mutations(status="inflight")] == [a]
    assert [m["id"] for m in store.mutations("failed")] == [b]
    store.retry(b)
    assert store.mutations("failed") == []
    assert [(m["id"], m["retry"], m["next_attempt_ms"]) for m in store.mutations("pending")] == [(b, 1, 0), (c, 0, 0)]


def test_explain_folds_the_layers(store):
    store.server_apply([optimist.put("h", "run", {"count": 1, "t": "Run"})])
    a = store.mutate([optimist.incr("h", "run", "count", 1), optimist.put("h", "other", {})])
    b = store.mutate([optimist.patch("h", "run", {"note": "am"})], policy="keep")
    store.mutate([optimist.put("h", "elsewhere", {})])
    d = store.mutate([optimist.delete("h", "run")])
    x = store.explain("h", "run")
    assert x == {
        "confirmed": {"count": 1, "t": "Run"},
        "layers": [
            {"id": a, "status": "pending", "ops": [{"op": "incr", "coll": "h", "key": "run", "field": "count",
                                                    "delta": 1}], "value": {"count": 2, "t": "Run"}},
            {"id": b, "status": "pending", "ops": [{"op": "patch", "coll": "h", "key": "run", "value": {"note": "am"}}],
             "value": {"count": 2, "t": "Run", "note": "am"}},
            {"id": d, "status": "pending", "ops": [{"op": "delete", "coll": "h", "key": "run"}], "value": None},
        ],
        "visible": None,
    }
    store.rollback(d)
    assert store.explain("h", "run")["visible"] == store.get("h", "run") == {"count": 2, "t": "Run", "note": "am"}
    assert store.explain("h", "nothing") == {"confirmed": None, "layers": [], "visible": None}
    assert store.explain("nowhere", "\u00e9") == {"confirmed": None, "layers": [], "visible": None}


def test_explain_skips_an_op_that_no_longer_applies(store):
    store.server_apply([optimist.put("h", "k", {"n": 1})])
    a = store.mutate([optimist.incr("h", "k", "n", 1)])
    store.server_apply([optimist.put("h", "k", {"n": "text"})])
    x = store.explain("h", "k")
    assert x["layers"] == [{"id": a, "status": "pending", "value": {"n": "text"},
                            "ops": [{"op": "incr", "coll": "h", "key": "k", "field": "n", "delta": 1}]}]
    assert x["visible"] == store.get("h", "k") == {"n": "text"}


def test_on_a_file_across_a_reopen(tmp_path):
    path = tmp_path / "s.db"
    with optimist.Store(path) as s:
        a = s.mutate([optimist.incr("h", "k", "n", 2)], dedupe_key="once")
        s.outbox_next(0)
        before = s.mutations()
        assert before[0]["status"] == "inflight"
    with optimist.Store(path) as s:
        after = s.mutations()
        assert after == [dict(before[0], status="pending")]  # an inflight send may not have happened
        assert s.explain("h", "k")["layers"][0]["value"] == {"n": 2}


def test_errors(store):
    for bad in ("committed", "rolled_back", "Pending", "", 1, 0):
        with pytest.raises(optimist.MisuseError):
            store.mutations(bad)
    with pytest.raises(optimist.InvalidError):
        store.explain("h", "bad\udcff")
    with pytest.raises(TypeError):
        store.explain("h", 3)
    store.close()
    with pytest.raises(optimist.MisuseError):
        store.mutations()
    with pytest.raises(optimist.MisuseError):
        store.explain("h", "k")


def test_the_c_entry_points_refuse_ended_statuses_and_bad_utf8():
    lib = _ffi.lib
    with optimist.Store() as s:
        out = ctypes.c_void_p()
        for status in (-1, 4, 5, 6):
            assert lib.optimist_mutations(s._h, status, ctypes.byref(out)) == _ffi.MISUSE
        assert lib.optimist_explain(s._h, b"c\xff", b"k", ctypes.byref(out)) == _ffi.INVALID
        assert lib.optimist_explain(s._h, b"c", b"k", None) == _ffi.MISUSE
        assert out.value is None
        assert lib.optimist_mutations(s._h, 0, ctypes.byref(out)) == _ffi.OK
        assert _ffi.take_string(out) == "[]"


def test_cache_bytes_is_checked_and_a_tiny_cache_still_reads_right(tmp_path):
    import optimist as o
    for bad in (0, -1, 1.5, True, "8"):
        with pytest.raises(o.MisuseError):
            o.Store(tmp_path / "bad.db", cache_bytes=bad)
    path = tmp_path / "tiny.db"
    with o.Store(path, cache_bytes=1) as s:
        s.server_apply([o.put("logs", f"k{i:03}", {"i": i}) for i in range(200)])
        s.view_define("n", "logs", "", "sum:i")
        s.mutate([o.incr("logs", "k007", "i", 100)])
    with o.Store(path, cache_bytes=1) as s:  # reopened: the view is kept, records read on demand
        assert s.view_get("n") == sum(range(200)) + 100
        assert s.get("logs", "k007") == {"i": 107}
        assert [k for k, _ in s.scan("logs", "k19")] == [f"k{i}" for i in range(190, 200)]
    with o.Store(path, cache_bytes=1 << 60) as s:  # clamped
        assert s.get("logs", "k199") == {"i": 199}
