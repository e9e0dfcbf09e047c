"""Records are encoded once, when the op is made; the encoder must agree with ``json``'s
public one on every JSON value, and the library must give the value back unchanged."""

import json

import hypothesis.strategies as st
from hypothesis import given, settings

import optimist
from optimist import _ops

json_values = st.recursive(
    st.none() | st.booleans() | st.integers(-(2 ** 53), 2 ** 53) | st.floats(allow_nan=False, allow_infinity=False)
    | st.text(),
    lambda inner: st.lists(inner, max_size=3) | st.dictionaries(st.text(max_size=5), inner, max_size=3),
    max_leaves=10,
)
records = st.dictionaries(st.text(max_size=8), json_values, max_size=4)


@settings(max_examples=300, deadline=None)
@given(records)
def test_encoder_matches_json(record):
    try:
        want = _ops._public_dumps(record)
    except ValueError:
        return
    try:
        text = _ops._dumps(record)
    except ValueError:
        raise AssertionError("fast encoder rejected what json accepts")
    assert text == want


@settings(max_examples=200, deadline=None)
@given(records)
def test_round_trip_through_the_library(record):
    """What goes in comes back (numbers compared as the doubles the library keeps)."""
    try:
        op = optimist.put("c", "k", record)
    except optimist.InvalidError:
        return  # lone surrogates are not UTF-8
    with optimist.Store() as s:
        s.mutate([op])
        got = s.get("c", "k")
    assert got == record


def test_encoder_rejections():
    a = {}
    a["self"] = a
    for bad in (a, {"x": float("nan")}, {"x": float("inf")}, {"x": "\ud800"}):
        try:
            optimist.put("c", "k", bad)
        except optimist.InvalidError:
            pass
        else:
            raise AssertionError(bad)
