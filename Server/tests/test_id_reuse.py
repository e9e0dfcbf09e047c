"""Id reuse is never silent: a (client_id, id) sent again with other ops, or named in a pull's
unacked with another digest, is rejected ("mutation id reused with different ops"); what the
server recorded stays as it was."""

from conftest import Client, incr, mutation, ops_digest, put

REUSED = "mutation id reused with different ops"


def test_a_resent_id_with_other_ops_is_rejected(server):
    c = Client(server)
    original = mutation(1, put("n", "a", {"v": 1}), incr("n", "count", "n", 1))
    assert c.push([original])[0]["status"] == "ok"
    other = mutation(1, put("n", "b", {"v": 2}))
    results = c.push([other, mutation(2, put("n", "c", {"v": 3}))])
    assert results[0] == {"id": 1, "status": "rejected", "error": REUSED}
    assert results[1]["status"] == "ok"
    # Nothing of the other ops was written; the recorded outcome still stands.
    assert c.state() == {("n", "a"): {"v": 1}, ("n", "count"): {"n": 1}, ("n", "c"): {"v": 3}}
    assert c.push([original])[0] == {"id": 1, "status": "ok",
                                     "ops": [put("n", "a", {"v": 1}), put("n", "count", {"n": 1})]}
    assert c.pull(unacked=[1])["outcomes"] == [{"id": 1, "status": "ok", "retry": 0}]
    # Even with a higher retry, other ops under a used id are refused.
    assert c.push([mutation(1, put("n", "b", {}), retry=5)])[0]["error"] == REUSED


def test_a_rejected_id_with_other_ops_is_rejected_as_reused(server):
    c = Client(server)
    c.push([mutation(1, put("n", "s", {"t": "x"}))])
    failing = mutation(2, incr("n", "s", "t", 1))
    assert c.push([failing])[0]["status"] == "rejected"
    # A retry of the same ops is processed again; other ops under the id are not.
    assert c.push([mutation(2, put("n", "z", {}), retry=1)])[0] == {"id": 2, "status": "rejected", "error": REUSED}
    assert ("n", "z") not in c.state()


def test_the_same_ids_of_another_client_are_theirs(server):
    a, b = Client(server), Client(server)
    assert a.push([mutation(1, put("n", "a", {}))])[0]["status"] == "ok"
    assert b.push([mutation(1, put("n", "b", {}))])[0]["status"] == "ok"


def test_a_pull_with_another_digest_gets_rejected(server):
    c = Client(server)
    ops1 = [put("n", "a", {"v": 1})]
    ops2 = [incr("n", "count", "n", 2)]
    c.push([mutation(1, *ops1), mutation(2, *ops2)])
    # The right digests (the Python digest agrees with the server's): ok.
    page = c.pull(unacked=[1, 2], digests=[ops_digest(ops1), ops_digest(ops2)])
    assert page["outcomes"] == [{"id": 1, "status": "ok", "retry": 0}, {"id": 2, "status": "ok", "retry": 0}]
    # Another store file reusing id 2 for other ops hears that, not ok.
    page = c.pull(unacked=[1, 2], digests=[ops_digest(ops1), ops_digest([put("n", "other", {})])])
    assert page["outcomes"] == [{"id": 1, "status": "ok", "retry": 0},
                                {"id": 2, "status": "rejected", "retry": 0, "error": REUSED}]
    # Without digests the server cannot tell: the recorded outcome.
    assert c.pull(unacked=[2])["outcomes"] == [{"id": 2, "status": "ok", "retry": 0}]
    # The recorded outcome is untouched by the question.
    assert c.push([mutation(2, *ops2)])[0]["status"] == "ok"
    assert c.state()[("n", "count")] == {"n": 2}


def test_digests_must_match_unacked(server):
    c = Client(server)
    r = c.pull_raw(unacked=[1, 2], digests=["x"])
    assert r.status == 400 and "unacked_digests" in r.json["error"]
