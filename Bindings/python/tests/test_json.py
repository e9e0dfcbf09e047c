"""The decoder of the library's JSON (``optimist._json``): orjson when installed, else the
standard library, with the same Python values either way."""

import enum
import json
import math
import os
import subprocess
import sys
import uuid

import hypothesis.strategies as st
import pytest
from ctypes import byref, c_void_p
from hypothesis import given, settings

import optimist
from optimist import _ffi, _json, _ops

from conftest import SRC, library_path

json_values = st.recursive(
    st.none() | st.booleans() | st.integers(-(2 ** 63), 2 ** 63) | st.floats(allow_nan=False, allow_infinity=False)
    | st.text(),
    lambda inner: st.lists(inner, max_size=3) | st.dictionaries(st.text(max_size=5), inner, max_size=3),
    max_leaves=12,
)
records = st.dictionaries(st.text(max_size=8), json_values, max_size=5)


def same(a, b) -> bool:
    """Equal values of the same types all the way down (1 and 1.0 differ; so do 0.0 and -0.0)."""
    if type(a) is not type(b):
        return False
    if isinstance(a, dict):
        return a.keys() == b.keys() and all(same(a[k], b[k]) for k in a)
    if isinstance(a, list):
        return len(a) == len(b) and all(same(x, y) for x, y in zip(a, b))
    if isinstance(a, float):
        return a == b and math.copysign(1, a) == math.copysign(1, b)
    return a == b


def test_orjson_is_used_when_installed():
    # The test command installs orjson, so this suite runs on the fast decoder unless told not to.
    try:
        import orjson  # noqa: F401
    except ImportError:
        pytest.skip("orjson is not installed")
    expected = "json" if os.environ.get("OPTIMIST_PYTHON_JSON") == "stdlib" else "orjson"
    assert _json.DECODER == expected


def library_text(s, coll: str, key: str) -> bytes:
    """The record exactly as the library writes it (``optimist_get``), undecoded."""
    out = c_void_p()
    assert _ffi.lib.optimist_get(s._h, coll.encode(), key.encode(), byref(out)) == 0
    return _ffi.take_string(out).encode("utf-8")


@settings(max_examples=300, deadline=None)
@given(records)
def test_both_decoders_read_what_the_library_writes_alike(record):
    with optimist.Store() as s:
        try:
            s.mutate([optimist.put("c", "k", {"r": record, "list": [record]})])
        except optimist.InvalidError:
            return  # e.g. a number the library cannot hold; not this test's subject
        text = library_text(s, "c", "k")
        got = s.get("c", "k")
    assert same(_json.loads(text), json.loads(text.decode("utf-8")))
    assert same(got, json.loads(text.decode("utf-8")))


def test_canonical_numbers_decode_to_the_same_types():
    with optimist.Store() as s:
        s.mutate([optimist.put("c", "k", {"i": 3, "f": 2.5, "z": -0.0, "big": 2 ** 60, "tiny": 5e-324,
                                          "max": 9007199254740991, "huge": 1e300})])
        got = s.get("c", "k")
    assert same(got["i"], 3) and same(got["f"], 2.5)
    assert same(got["max"], 9007199254740991)
    # At or above 2**53 a number is a double in the library, written with an exponent.
    assert same(got["big"], float(2 ** 60))
    assert same(got["tiny"], 5e-324) and same(got["huge"], 1e300)
    assert got["z"] == 0


def test_a_text_the_fast_decoder_refuses_is_decoded_by_the_standard_library():
    # A lone surrogate escape: valid for json.loads, refused by orjson. The library never
    # writes one; the fallback is for whatever a later orjson refuses that json accepts.
    assert _json.loads(b'{"a":"\\ud800"}') == {"a": "\ud800"}
    with pytest.raises(ValueError):
        _json.loads(b'{"a":')  # and text neither accepts still raises


def test_stdlib_can_be_chosen_by_the_environment():
    code = ("import optimist, optimist._json as j; s = optimist.Store(); "
            "s.mutate([optimist.put('c', 'k', {'a': [1, 2.5]})]); "
            "print(j.DECODER, s.get('c', 'k'), s.scan('c')); s.close()")
    env = dict(os.environ, OPTIMIST_PYTHON_JSON="stdlib", OPTIMIST_LIBRARY=library_path(), PYTHONPATH=str(SRC))
    out = subprocess.run([sys.executable, "-c", code], env=env, capture_output=True, text=True, check=True).stdout
    assert out.strip() == "json {'a': [1, 2.5]} [('k', {'a': [1, 2.5]})]"


class Color(enum.Enum):
    RED = 1


class Level(enum.IntEnum):
    HIGH = 2


class Name(str):
    pass


odd_values = st.recursive(
    st.none() | st.booleans() | st.integers(-(2 ** 70), 2 ** 70) | st.floats() | st.text()
    | st.sampled_from([Color.RED, Level.HIGH, Name("n"), uuid.UUID(int=5), "\ud800", b"x", (1, 2)]),
    lambda inner: st.lists(inner, max_size=3) | st.tuples(inner, inner)
    | st.dictionaries(st.text(max_size=3) | st.integers(0, 3) | st.none(), inner, max_size=3),
    max_leaves=10,
)


def encoded(value, fast):
    """``_encode_record(value)`` with orjson's encoder on or off: ("ok", decoded) or ("error", type)."""
    saved = _ops._fast_encode
    _ops._fast_encode = fast
    try:
        return "ok", json.loads(_ops._encode_record(value).decode("utf-8"))
    except Exception as e:  # noqa: BLE001 - the type is what is compared
        return "error", type(e)
    finally:
        _ops._fast_encode = saved


@settings(max_examples=500, deadline=None)
@given(st.dictionaries(st.text(max_size=4) | st.integers(0, 3), odd_values, max_size=4))
def test_a_record_is_encoded_alike_with_or_without_orjson(record):
    if _json.encode_record is None:
        pytest.skip("orjson is not in use")
    fast, plain = encoded(record, _json.encode_record), encoded(record, None)
    assert fast[0] == plain[0]
    if fast[0] == "ok":
        assert same(fast[1], plain[1])
    else:
        assert fast[1] is plain[1]


def test_orjson_takes_only_what_json_writes_alike():
    if _json.encode_record is None:
        pytest.skip("orjson is not in use")
    assert _json.encode_record({"a": [1, 2.5, None, True, {"b": "é"}], "t": (1,)}) is not None
    for declined in ({"x": float("nan")}, {"x": float("inf")}, {"x": Color.RED}, {"x": Level.HIGH},
                     {"x": Name("n")}, {"x": uuid.UUID(int=5)}, {1: 2}, {"x": 2 ** 64}, {"x": "\ud800"}):
        assert _json.encode_record(declined) is None, declined
