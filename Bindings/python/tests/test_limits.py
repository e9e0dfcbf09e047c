"""The limits on one mutation (docs/python-guide.md, "Limits"): at each limit a mutation is
accepted; one over, ``mutate`` raises ``InvalidError`` naming the limit and nothing changes."""

import pytest

import optimist
from optimist import delete, patch, put

MAX_NAME = 1024
MAX_DEPTH = 64
MAX_OPS = 10_000
MAX_BYTES = 4 << 20
#: The ops text of put("c", "k", {"s": ""}): [{"coll":"c","key":"k","op":"put","value":{"s":""}}]
PUT_OVERHEAD = 52


def nested(levels):
    """A record nested `levels` deep (the record is level 1): {"v": [[...]]}."""
    value = []
    for _ in range(levels - 2):
        value = [value]
    return {"v": value}


def refused(store, ops, figure, coll, key):
    before = store.pending_count()
    with pytest.raises(optimist.InvalidError) as e:
        store.mutate(ops)
    assert figure in str(e.value)
    assert store.pending_count() == before
    assert store.get(coll, key) is None


@pytest.mark.parametrize("kind", [put, patch])
def test_names_are_counted_in_utf8_bytes(store, kind):
    at, over = "n" * MAX_NAME, "n" * (MAX_NAME + 1)
    store.mutate([kind(at, "k", {})])
    store.mutate([kind("c", at, {})])
    store.mutate([kind("c", "é" * (MAX_NAME // 2), {})])   # 512 characters, 1024 bytes
    refused(store, [kind(over, "k", {})], "1024", over, "k")
    refused(store, [kind("c", over, {})], "1024", "c", over)
    refused(store, [kind("c", "é" * (MAX_NAME // 2) + "x", {})], "1024", "c", "é" * (MAX_NAME // 2) + "x")
    # In a batch of several ops, with a policy (optimist_mutate_with_policy).
    refused(store, [put("c", "fine", {}), delete("c", over)], "1024", "c", "fine")
    with pytest.raises(optimist.InvalidError, match="1024"):
        store.mutate([put("c", over, {})], policy="keep", dedupe_key="d")
    assert store.get("c", over) is None


def test_depth(store):
    store.mutate([put("deep", "at", nested(MAX_DEPTH))])
    assert store.get("deep", "at") == nested(MAX_DEPTH)
    refused(store, [put("deep", "over", nested(MAX_DEPTH + 1))], "64", "deep", "over")
    refused(store, [patch("deep", "over", {"a": {"b": nested(MAX_DEPTH - 1)}})], "64", "deep", "over")
    store.mutate([patch("deep", "at2", {"a": nested(MAX_DEPTH - 1)})])   # 1 + 63: at the limit


def test_size_of_the_ops_text(store):
    at = {"s": "x" * (MAX_BYTES - PUT_OVERHEAD)}
    store.mutate([put("c", "k", at)])
    assert store.get("c", "k") == at
    refused(store, [put("c", "big", {"s": "x" * (MAX_BYTES - PUT_OVERHEAD + 1)})], "4194304", "c", "big")
    # Two ops of half the limit each: within; with one more small op: over.
    half = {"s": "x" * (MAX_BYTES // 2 - PUT_OVERHEAD)}
    store.mutate([put("c", "a", half), put("c", "b", half)])
    refused(store, [put("c", "a", half), put("c", "b", half), put("c", "z", {})], "4194304", "c", "z")


def test_ops_per_mutation(store):
    store.mutate([delete("many", "k%d" % i) for i in range(MAX_OPS)])
    refused(store, [delete("many", "k%d" % i) for i in range(MAX_OPS)] + [put("many", "x", {})],
            "10000", "many", "x")
