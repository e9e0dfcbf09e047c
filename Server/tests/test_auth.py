"""--tokens: 401 without a valid token; each user sees and writes only their own records."""

import json

import pytest

from conftest import Client, http, incr, mutation, put


@pytest.fixture
def secured(start_server, tmp_path):
    tokens = tmp_path / "tokens.json"
    tokens.write_text(json.dumps({"tok-alice": "alice", "tok-bob": "bob", "tok-alice-2": "alice"}))
    return start_server("--tokens", str(tokens))


@pytest.mark.parametrize("headers", [
    {},
    {"Authorization": "Bearer nope"},
    {"Authorization": "tok-alice"},
    {"Authorization": "Basic tok-alice"},
    {"Authorization": "Bearer "},
])
def test_missing_or_wrong_token_is_401(secured, headers):
    for path in ("/push", "/pull"):
        r = http("POST", secured.url + path, {"protocol": 1, "client_id": "c", "mutations": [], "cursor": None}, headers)
        assert r.status == 401, r
        assert isinstance(r.json["error"], str)
    # Nothing was written.
    assert Client(secured, token="tok-alice").state() == {}


def test_health_needs_no_token(secured):
    assert http("GET", secured.url + "/health").status == 200


def test_users_are_isolated(secured):
    alice = Client(secured, token="tok-alice")
    alice_phone = Client(secured, token="tok-alice-2")
    bob = Client(secured, token="tok-bob")
    alice.push([mutation(1, put("notes", "n", {"by": "alice"}), incr("c", "k", "n", 1))])
    assert bob.state() == {}
    bob.push([mutation(1, put("notes", "n", {"by": "bob"}), incr("c", "k", "n", 10))])
    assert alice_phone.state() == {("notes", "n"): {"by": "alice"}, ("c", "k"): {"n": 1}}
    assert bob.state() == {("notes", "n"): {"by": "bob"}, ("c", "k"): {"n": 10}}
    # Outcomes are per user too: under bob's token, alice's client id has no outcomes.
    bob_with_alices_client_id = Client(secured, client_id=alice.client_id, token="tok-bob")
    assert bob_with_alices_client_id.pull(unacked=[1])["outcomes"] == []
    assert alice_phone.pull(unacked=[1])["outcomes"] == []  # another client of alice's
    assert alice.pull(unacked=[1])["outcomes"] == [{"id": 1, "status": "ok", "retry": 0}]


def test_same_pair_under_two_users_is_two_pairs(secured):
    alice = Client(secured, client_id="shared-id", token="tok-alice")
    bob = Client(secured, client_id="shared-id", token="tok-bob")
    m = mutation(1, incr("c", "k", "n", 1))
    alice.push([m])
    bob.push([m])
    assert alice.state() == {("c", "k"): {"n": 1}}
    assert bob.state() == {("c", "k"): {"n": 1}}
