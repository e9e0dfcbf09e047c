"""The owner of C pointers (``optimist._managed.Managed``): a batch is freed exactly once, by
``with`` or ``close()``, and never reaches the library after that."""

import ctypes

import pytest

import optimist
from optimist import _ffi
from optimist._ops import Batch, make_batch


def test_batch_passes_to_ctypes_and_closes_once():
    with optimist.Store() as store:
        with make_batch([optimist.put("c", "k", {"n": 1})]) as b:
            assert isinstance(b, Batch) and not b.closed
            out = ctypes.c_uint64()
            assert _ffi.lib.optimist_mutate(store._h, b, None, ctypes.byref(out)) == _ffi.OK
        assert b.closed
        b.close()  # a second close does nothing
        with pytest.raises(ctypes.ArgumentError, match="Batch used after close"):
            _ffi.lib.optimist_mutate(store._h, b, None, None)
        assert store.get("c", "k") == {"n": 1}


def test_a_batch_that_fails_to_build_is_freed(monkeypatch):
    freed = []
    real = Batch._free
    monkeypatch.setattr(Batch, "_free", staticmethod(lambda p: (freed.append(p), real(p))))
    with pytest.raises(TypeError, match="expected an optimist op"):
        make_batch([optimist.put("c", "k", {"n": 1}), 42])
    assert len(freed) == 1
