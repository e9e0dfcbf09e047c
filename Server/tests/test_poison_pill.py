"""No poison pill: a mutation over a limit, or one the database itself refuses, is that
mutation's `rejected` result; the mutations around it, in the same push or later ones, go on."""

import json
import random
import string

import pytest

from conftest import Client, mutation, patch, put

MAX_NAME_BYTES = 1024
MAX_DEPTH = 64
MAX_MUTATION_BYTES = 4 << 20
MAX_OPS = 10_000


def nested(levels):
    """A record `levels` deep (the record itself is level 1)."""
    value = {"leaf": 1}
    for _ in range(levels - 1):
        value = {"a": value}
    return value


def random_text(n, seed):
    # Random letters: PostgreSQL compresses an index entry of repeated letters below its limit.
    rng = random.Random(seed)
    return "".join(rng.choice(string.ascii_letters) for _ in range(n))


POISON = {
    # name: (ops of the poisoned mutation, words its error must hold)
    "3 KB key": ([put("p", random_text(3000, 1), {"v": 1})], "key"),
    "3 KB collection": ([put(random_text(3000, 2), "k", {"v": 1})], "collection"),
    "record 65 deep": ([put("p", "deep", nested(MAX_DEPTH + 1))], "deep"),
    "patch 65 deep": ([patch("p", "deep", nested(MAX_DEPTH + 1))], "deep"),
    "ops over 4 MiB": ([put("p", "big", {"s": "x" * MAX_MUTATION_BYTES})], "bytes"),
    "10,001 ops": ([put("p", f"k{i}", {}) for i in range(MAX_OPS + 1)], "ops"),
}

ORDINARY = [mutation(100 + i, put("ok", f"n{i}", {"i": i})) for i in range(20)]


def assert_the_rest_went_on(c, results, words):
    assert results[0]["id"] == 1 and results[0]["status"] == "rejected", str(results[0])[:300]
    assert words in results[0]["error"], results[0]["error"]
    assert [r["status"] for r in results[1:]] == ["ok"] * 20
    state = c.state()
    assert {k for (coll, k) in state if coll == "ok"} == {f"n{i}" for i in range(20)}
    assert not any(coll == "p" for (coll, _) in state), "nothing of the refused mutation was written"


@pytest.mark.parametrize("name", sorted(POISON))
def test_a_mutation_over_a_limit_is_rejected_and_the_rest_of_the_push_goes_on(server, name):
    ops, words = POISON[name]
    c = Client(server)
    r = c.push_raw([mutation(1, *ops)] + ORDINARY)
    assert r.status == 200, r
    assert_the_rest_went_on(c, r.json["results"], words)


@pytest.mark.parametrize("name", sorted(POISON))
def test_a_mutation_over_a_limit_is_rejected_and_later_pushes_go_on(server, name):
    ops, words = POISON[name]
    c = Client(server)
    first = c.push_raw([mutation(1, *ops)])
    assert first.status == 200, first
    results = first.json["results"]
    for m in ORDINARY:
        results += c.push([m])
    assert_the_rest_went_on(c, results, words)
    # Sent again, it gets its recorded answer; nothing else changes.
    again = c.push_raw([mutation(1, *ops)])
    assert again.status == 200 and again.json["results"][0]["status"] == "rejected"


def test_mutations_at_the_limits_are_applied(server):
    c = Client(server)
    coll, key = random_text(MAX_NAME_BYTES, 3), random_text(MAX_NAME_BYTES, 4)
    at_depth = nested(MAX_DEPTH)
    many = [put("many", f"k{i}", {}) for i in range(MAX_OPS)]
    # The ops text of one put: {"coll":"b","key":"b","op":"put","value":{"s":"..."}} plus [ ].
    frame = len(json.dumps([put("b", "b", {"s": ""})], separators=(",", ":")))
    big = [put("b", "b", {"s": "y" * (MAX_MUTATION_BYTES - frame)})]
    assert len(json.dumps(big, separators=(",", ":"))) == MAX_MUTATION_BYTES
    results = c.push([mutation(1, put(coll, key, {"v": 1})), mutation(2, put("d", "k", at_depth)),
                      mutation(3, *many), mutation(4, *big)])
    assert [r["status"] for r in results] == ["ok"] * 4, [str(r)[:200] for r in results]
    state = c.state()
    assert state[(coll, key)] == {"v": 1}
    assert state[("d", "k")] == at_depth
    assert len([k for (cl, k) in state if cl == "many"]) == MAX_OPS
    assert len(state[("b", "b")]["s"]) == MAX_MUTATION_BYTES - frame


def test_a_write_the_database_refuses_is_that_mutations_rejection(db, start_server, tmp_path):
    """A long user name (from the tokens file) and a long key pass the limits but, together,
    exceed PostgreSQL's largest index entry (error 54000): that mutation alone is rejected.
    SQLite has no such limit and applies it."""
    user = random_text(1900, 5)
    tokens = tmp_path / "tokens.json"
    tokens.write_text(json.dumps({"tok": user}))
    server = start_server("--tokens", str(tokens))
    c = Client(server, token="tok")
    long_key = random_text(1000, 6)
    r = c.push_raw([mutation(1, put("p", "first", {}), put("p", long_key, {"v": 1}))] + ORDINARY)
    assert r.status == 200, r
    results = r.json["results"]
    assert [x["status"] for x in results[1:]] == ["ok"] * 20
    state = c.state()
    assert {k for (coll, k) in state if coll == "ok"} == {f"n{i}" for i in range(20)}
    if db.kind == "postgres":
        assert results[0]["status"] == "rejected", results[0]
        assert "database" in results[0]["error"]
        # All or nothing: the mutation's first record, written before the refusal, is gone.
        assert not any(coll == "p" for (coll, _) in state)
    else:
        assert results[0]["status"] == "ok"
        assert state[("p", long_key)] == {"v": 1}
