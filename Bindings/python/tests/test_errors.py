"""Every result code maps to one exception class, and each one the library can produce is
provoked for real (IO, CORRUPT and BUSY need file-backed stores: see test_files.py)."""

import threading

import pytest

import optimist
from optimist import incr, put

EXPECTED = {
    1: optimist.InternalError,
    2: optimist.MisuseError,
    3: optimist.NotFoundError,
    4: optimist.StateError,
    5: optimist.InvalidError,
    6: optimist.DuplicateError,
    7: optimist.StoreIOError,
    8: optimist.CorruptError,
    9: optimist.BusyError,
}


def test_one_class_per_code():
    assert optimist.CLASSES == EXPECTED
    assert len(set(EXPECTED.values())) == 9
    for code, cls in EXPECTED.items():
        assert issubclass(cls, optimist.Error)
        e = cls("m")
        assert e.code == code and e.message == "m" and str(e) == "m"
    assert optimist.IOError_ is optimist.StoreIOError
    assert optimist.IOError_ is not IOError


def test_unknown_code_is_base_error():
    from optimist._error import error_for
    e = error_for(42, "")
    assert type(e) is optimist.Error and e.code == 42


def test_misuse(store):
    with pytest.raises(optimist.MisuseError) as e:
        store.mutate([])  # a mutation needs at least one op: rejected by the library
    assert e.value.code == 2 and e.value.message
    with pytest.raises(optimist.MisuseError):
        store.view_define("v", "c", "", "median")
    store.close()
    with pytest.raises(optimist.MisuseError) as e:
        store.pending_count()
    assert "closed" in e.value.message


def test_notfound(store):
    for call in (lambda: store.commit(999), lambda: store.rollback(999), lambda: store.status(999),
                 lambda: store.retry(999), lambda: store.fail(999, True, "x", 0),
                 lambda: store.view_get("v"), lambda: store.unsubscribe(12345)):
        with pytest.raises(optimist.NotFoundError) as e:
            call()
        assert e.value.code == 3


def test_state(store):
    mid = store.mutate([put("c", "k", {})])
    store.rollback(mid)
    with pytest.raises(optimist.StateError) as e:
        store.commit(mid)
    assert e.value.code == 4
    with pytest.raises(optimist.StateError):
        store.rollback(mid)
    with pytest.raises(optimist.StateError):
        store.fail(mid, False, "x", 0)


def test_invalid_is_atomic(store):
    store.server_apply([put("s", "k", {"count": "many"})])
    with pytest.raises(optimist.InvalidError) as e:
        store.mutate([put("s", "other", {"x": 1}), incr("s", "k", "count", 1)])
    assert e.value.code == 5 and "number" in e.value.message
    assert store.get("s", "other") is None
    assert store.pending_count() == 0
    with pytest.raises(optimist.InvalidError):
        store.server_apply([put("s", "a", {}), incr("s", "k", "count", 1)])
    assert store.get("s", "a") is None


def test_duplicate(store):
    a = store.mutate([put("c", "k", {})], dedupe_key="d")
    with pytest.raises(optimist.DuplicateError) as e:
        store.mutate([put("c", "k2", {})], dedupe_key="d", policy="keep")
    assert e.value.code == 6 and e.value.existing_id == a
    assert store.get("c", "k2") is None


def test_message_is_per_thread(store):
    """The message comes from optimist_last_error on the failing call's own thread."""
    messages = {}

    def worker(name, call):
        try:
            call()
        except optimist.Error as e:
            messages[name] = e.message

    mid = store.mutate([put("c", "k", {})])
    store.commit(mid)
    ts = [threading.Thread(target=worker, args=("nf", lambda: store.status(424242))),
          threading.Thread(target=worker, args=("st", lambda: store.commit(mid)))]
    for t in ts:
        t.start()
    for t in ts:
        t.join()
    assert "424242" in messages["nf"]
    assert "committed" in messages["st"]
