"""The C accelerator (``optimist._speedups`` through ``optimist._fast``): the same results,
errors and messages as the ctypes path, for the calls it takes over.

The test command builds it and sets ``OPTIMIST_REQUIRE_SPEEDUPS=1``, so there these tests run
rather than skip; the suites that set ``OPTIMIST_PYTHON_SPEEDUPS=0`` run the rest of the tests
on ctypes alone."""

import os
import subprocess
import sys
import threading

import hypothesis.strategies as st
import pytest
from hypothesis import given, settings

import optimist
from optimist import _fast, _json, _ops, _store

from conftest import SRC, library_path
from test_json import odd_values, same

needs_speedups = pytest.mark.skipif(not _fast.SPEEDUPS, reason="the C accelerator is not built or is turned off")


def test_the_accelerator_is_in_use_where_the_test_command_built_it():
    if os.environ.get("OPTIMIST_REQUIRE_SPEEDUPS") == "1":
        assert _fast.SPEEDUPS, "OPTIMIST_REQUIRE_SPEEDUPS=1, but optimist._speedups did not load"
    if os.environ.get("OPTIMIST_PYTHON_SPEEDUPS") == "0":
        assert not _fast.SPEEDUPS and _store._fast_get is None and _ops._fast_put_args is None
        assert _store._fast_view_get is None and _store._fast_put is None


def test_the_environment_turns_it_off():
    code = "import optimist._fast as f; print(f.SPEEDUPS, f.get)"
    env = dict(os.environ, OPTIMIST_PYTHON_SPEEDUPS="0", OPTIMIST_LIBRARY=library_path(), PYTHONPATH=str(SRC))
    out = subprocess.run([sys.executable, "-c", code], env=env, capture_output=True, text=True, check=True).stdout
    assert out.split() == ["False", "None"]


class ctypes_only:
    """Within it, the store and ops run on ctypes, as without the accelerator."""

    def __enter__(self):
        self.saved = (_store._fast_get, _store._fast_confirmed, _store._fast_put, _store._fast_view_get,
                      _ops._fast_put_args)
        _store._fast_get = _store._fast_confirmed = _store._fast_put = _store._fast_view_get = None
        _ops._fast_put_args = None

    def __exit__(self, *exc):
        (_store._fast_get, _store._fast_confirmed, _store._fast_put, _store._fast_view_get,
         _ops._fast_put_args) = self.saved


def outcome(fn, *args):
    """("ok", value) or ("error", type, message) of fn(*args)."""
    try:
        return ("ok", fn(*args))
    except Exception as e:  # noqa: BLE001 - the type and message are what is compared
        return ("error", type(e), str(e))


def both(fn, *args):
    """fn(*args) with the accelerator, then on ctypes alone."""
    fast = outcome(fn, *args)
    with ctypes_only():
        slow = outcome(fn, *args)
    return fast, slow


@needs_speedups
@settings(max_examples=200, deadline=None)
@given(key=st.text(max_size=6), value=st.dictionaries(st.text(max_size=4), st.integers() | st.text(), max_size=3))
def test_reads_agree_with_ctypes(key, value):
    with optimist.Store() as s:
        try:
            s.mutate([optimist.put("c", "k", value)])
            s.mutate([optimist.put("c", key, {"v": value, "n": 1})])
        except (optimist.InvalidError, TypeError):
            pass
        for k in (key, "k", "absent"):
            for read in (s.get, s.confirmed):
                fast, slow = both(read, "c", k)
                assert fast[0] == slow[0]
                if fast[0] == "ok":
                    assert same(fast[1], slow[1])
                else:
                    assert fast[1:] == slow[1:]


@needs_speedups
def test_a_record_larger_than_the_stack_buffer_is_read_whole():
    with optimist.Store() as s:
        for n in (4000, 4094, 4095, 4096, 100_000):
            record = {"note": "x" * n, "n": n}
            mid = s.mutate([optimist.put("c", "big", record)])
            assert s.get("c", "big") == record
            s.commit(mid)
            assert s.confirmed("c", "big") == record


@needs_speedups
@pytest.mark.parametrize("coll,key", [("c", 5), ("c", b"k"), (None, "k"), ("c", "a\0b"), ("c", "\ud800"),
                                      ("c\0", "k"), (bytearray(b"c"), "k")])
def test_odd_names_get_the_ctypes_errors(coll, key):
    with optimist.Store() as s:
        for read in (s.get, s.confirmed):
            fast, slow = both(read, coll, key)
            assert fast == slow and fast[0] == "error", fast
        fast, slow = both(lambda: s.mutate([optimist.put(coll, key, {"a": 1})]))
        assert fast == slow and fast[0] == "error", fast


@needs_speedups
def test_view_values_agree_with_ctypes():
    with optimist.Store() as s:
        s.view_define("n", "c", "d1/", "count")
        s.view_define("total", "c", "", "sum:m")
        for i in range(5):
            s.mutate([optimist.put("c", f"d{i % 2}/{i}", {"m": i * 1.5})])
        for name in ("n", "total", "absent", "", "a\0b", "\ud800", 5, None, b"n"):
            fast, slow = both(s.view_get, name)
            assert fast == slow, (name, fast, slow)
        assert both(s.view_get, "n")[0] == ("ok", 2.0)
        assert both(s.view_get, "total")[0] == ("ok", 15.0)
        assert both(s.view_get, "absent")[0][1] is optimist.NotFoundError


@needs_speedups
def test_a_closed_store_raises_misuse_on_both_paths():
    s = optimist.Store()
    op = optimist.put("c", "k", {"a": 1})
    s.close()
    for call in (lambda: s.get("c", "k"), lambda: s.confirmed("c", "k"), lambda: s.mutate([op]),
                 lambda: s.view_get("v")):
        fast, slow = both(call)
        assert fast == slow and fast[1] is optimist.MisuseError, fast


@needs_speedups
def test_a_fast_mutation_is_an_ordinary_mutation():
    with optimist.Store() as s:
        mid = s.mutate([optimist.put("c", "k", {"a": 1})])
        assert s.status(mid) == "pending" and s.is_pending("c", "k")
        sent_id, ops = s.outbox_next(0)
        assert sent_id == mid and len(ops) == 1 and ops[0]["value"] == {"a": 1} and ops[0]["key"] == "k"
        s.rollback(mid)
        assert s.get("c", "k") is None
        # with a subscription it takes the ctypes path, which delivers the callback's error
        seen = []
        s.subscribe(lambda changes: seen.append(changes))
        s.mutate([optimist.put("c", "k", {"a": 2})])
        assert len(seen) == 1 and s.get("c", "k") == {"a": 2}


def put_args_ctypes(coll, key, value):
    """What optimist.put builds on the Python path: ("ok", args) or ("error", type, message)."""
    with ctypes_only():
        return outcome(lambda: optimist.put(coll, key, value)[6])


@needs_speedups
@settings(max_examples=500, deadline=None)
@given(st.dictionaries(st.text(max_size=4) | st.integers(0, 3), odd_values, max_size=4))
def test_put_args_are_the_python_paths_or_left_to_it(record):
    # The C check that decides which records orjson encodes is _json._plain's rule: it takes a
    # record exactly when the Python path would encode it with orjson, and gives the same bytes.
    got = _fast.put_args("c", "k", record)
    python = _json.encode_record(record) if _json.encode_record is not None else None
    if python is None:
        assert got is None
    else:
        assert got == (b"c", b"k", python)
    # and what put() builds is the same with or without the accelerator
    slow = put_args_ctypes("c", "k", record)
    fast = outcome(lambda: optimist.put("c", "k", record)[6])
    assert fast[0] == slow[0]
    if fast[0] == "ok":
        assert same(_json.loads(fast[1][2]), _json.loads(slow[1][2])) and fast[1][:2] == slow[1][:2]
    else:
        assert fast[1:] == slow[1:]


@needs_speedups
def test_put_args_declines_what_python_must_handle():
    if _json.encode_record is None:
        assert _fast.put_args("c", "k", {"a": 1}) is None  # no orjson: Python encodes
        return
    deep = {"a": 1}
    for _ in range(40):
        deep = {"d": deep}
    for coll, key, value in [("c", "k", {"x": float("nan")}), ("c", "k", {1: 2}), ("c", "k", {"x": 2 ** 64}),
                             ("c", "k", deep), ("c", "k", [1]), ("c", 5, {}), ("c", "a\0", {}),
                             ("c", "\ud800", {}), ("c", "k", {"x": "\ud800"})]:
        assert _fast.put_args(coll, key, value) is None, (coll, key, value)
    assert _fast.put_args("c", "k", {"a": [1, 2.5, None, True, {"b": "é"}], "t": (1,)}) is not None


@needs_speedups
def test_threads_read_and_write_through_it_at_once():
    # The accelerator lets go of the GIL for each library call, as ctypes does: threads
    # interleave, and every read sees a whole record.
    with optimist.Store() as s:
        errors = []

        def writer(n):
            try:
                for i in range(300):
                    s.mutate([optimist.put("c", f"k{i % 7}", {"w": n, "i": i, "pair": [n, i]})])
            except Exception as e:  # noqa: BLE001
                errors.append(e)

        def reader():
            try:
                for i in range(2000):
                    r = s.get("c", f"k{i % 7}")
                    assert r is None or r["pair"] == [r["w"], r["i"]]
            except Exception as e:  # noqa: BLE001
                errors.append(e)

        threads = [threading.Thread(target=writer, args=(n,)) for n in range(2)]
        threads += [threading.Thread(target=reader) for _ in range(2)]
        for t in threads:
            t.start()
        for t in threads:
            t.join()
        assert errors == []
        assert s.pending_count() == 600
