"""Bad input gets a 4xx with {"error": ...}; the server stays up and loses nothing."""

import json

import pytest

from conftest import Client, http, incr, mutation, put

CID = "11111111-2222-3333-4444-555555555555"


def push_body(**overrides):
    body = {"protocol": 1, "client_id": CID, "mutations": [mutation(100, put("x", "y", {}))]}
    body.update(overrides)
    return body


def pull_body(**overrides):
    body = {"protocol": 1, "client_id": CID, "cursor": None, "unacked": []}
    body.update(overrides)
    return body


BAD_REQUESTS = {
    # name: (path, body bytes, content type)
    "malformed json": ("/push", b'{"protocol": 1, "client_id": ', "application/json"),
    "trailing garbage": ("/push", json.dumps(push_body()).encode() + b"}", "application/json"),
    "not json at all": ("/push", b"hello, world", "text/plain"),
    "form encoded": ("/pull", b"protocol=1&client_id=x", "application/x-www-form-urlencoded"),
    "binary": ("/push", bytes(range(256)), "application/octet-stream"),
    "invalid utf-8": ("/push", b'{"protocol":1,"client_id":"\xff\xfe","mutations":[]}', "application/json"),
    "empty body": ("/push", b"", "application/json"),
    "deep nesting": ("/push", b"[" * 100000 + b"]" * 100000, "application/json"),
    "array body": ("/push", b"[]", "application/json"),
    "protocol 3": ("/push", push_body(protocol=3), None),
    "protocol 1.5": ("/pull", pull_body(protocol=1.5), None),
    "protocol as string": ("/pull", pull_body(protocol="1"), None),
    "protocol missing": ("/push", {"client_id": CID, "mutations": []}, None),
    "client_id missing": ("/push", {"protocol": 1, "mutations": []}, None),
    "client_id number": ("/pull", pull_body(client_id=5), None),
    "client_id empty": ("/pull", pull_body(client_id=""), None),
    "mutations not array": ("/push", push_body(mutations={"id": 1}), None),
    "mutations missing": ("/push", {"protocol": 1, "client_id": CID}, None),
    "mutation not object": ("/push", push_body(mutations=[5]), None),
    "id missing": ("/push", push_body(mutations=[{"retry": 0, "ops": []}]), None),
    "id string": ("/push", push_body(mutations=[{"id": "5", "retry": 0, "ops": []}]), None),
    "id negative": ("/push", push_body(mutations=[{"id": -1, "retry": 0, "ops": []}]), None),
    "id fraction": ("/push", push_body(mutations=[{"id": 1.5, "retry": 0, "ops": []}]), None),
    "id too large": ("/push", push_body(mutations=[{"id": 2 ** 63, "retry": 0, "ops": []}]), None),
    "retry negative": ("/push", push_body(mutations=[{"id": 1, "retry": -1, "ops": []}]), None),
    "retry string": ("/push", push_body(mutations=[{"id": 1, "retry": "0", "ops": []}]), None),
    "ops not array": ("/push", push_body(mutations=[{"id": 1, "retry": 0, "ops": {}}]), None),
    "unknown op": ("/push", push_body(mutations=[mutation(1, {"op": "frobnicate", "coll": "x", "key": "y"})]), None),
    "op without key": ("/push", push_body(mutations=[mutation(1, {"op": "delete", "coll": "x"})]), None),
    "put value not object": ("/push", push_body(mutations=[mutation(1, {"op": "put", "coll": "x", "key": "y", "value": [1]})]), None),
    "incr delta string": ("/push", push_body(mutations=[mutation(1, incr("x", "y", "n", "1"))]), None),
    "coll number": ("/push", push_body(mutations=[mutation(1, {"op": "delete", "coll": 1, "key": "y"})]), None),
    "cursor number": ("/pull", pull_body(cursor=5), None),
    # A string cursor the server did not issue is answered with a reset (test_identity.py).
    "unacked strings": ("/pull", pull_body(unacked=["1"]), None),
    "unacked not array": ("/pull", pull_body(unacked=1), None),
}


def send(server, path, body, content_type):
    data = body if isinstance(body, bytes) else json.dumps(body).encode()
    return http("POST", server.url + path, data, {"Content-Type": content_type or "application/json"})


def assert_intact(server, client):
    assert http("GET", server.url + "/health").status == 200
    assert client.state() == {("keep", "k"): {"n": 1}}


@pytest.fixture
def seeded(server):
    c = Client(server)
    c.push([mutation(1, put("keep", "k", {"n": 0}), incr("keep", "k", "n", 1))])
    return server, c


@pytest.mark.parametrize("name", sorted(BAD_REQUESTS))
def test_bad_request_is_400_and_harmless(seeded, name):
    server, c = seeded
    path, body, content_type = BAD_REQUESTS[name]
    r = send(server, path, body, content_type)
    # A body not sent as JSON is refused for that before it is read (415).
    assert r.status == (400 if content_type in (None, "application/json") else 415), r
    assert r.headers.get("Content-Type", "").startswith("application/json")
    assert isinstance(r.json["error"], str) and r.json["error"]
    assert_intact(server, c)


def test_a_bad_op_rejects_the_whole_request(seeded):
    server, c = seeded
    # The first mutation is fine, the second malformed: nothing of the request is processed.
    r = send(server, "/push", push_body(mutations=[mutation(2, incr("keep", "k", "n", 1)),
                                                   mutation(3, {"op": "nope", "coll": "keep", "key": "k"})]), None)
    assert r.status == 400
    assert_intact(server, c)


def test_body_over_the_limit_is_413(start_server):
    server = start_server("--max-body", "4096")
    c = Client(server)
    c.push([mutation(1, put("keep", "k", {"n": 1}))])
    big = push_body(mutations=[mutation(2, put("x", "big", {"s": "a" * 5000}))])
    r = send(server, "/push", big, None)
    assert r.status == 413, r
    assert "error" in r.json
    assert_intact(server, c)
    # Just under the limit is fine.
    assert send(server, "/push", push_body(mutations=[mutation(3, put("x", "s", {"s": "a" * 3000}))]), None).status == 200


def test_huge_body_over_the_default_limit_is_413(seeded):
    server, c = seeded
    huge = b'{"protocol":1,"client_id":"c","mutations":[' + b" " * (9 << 20) + b"]}"
    r = send(server, "/push", huge, None)
    assert r.status == 413, r
    assert_intact(server, c)


def test_unknown_paths_and_methods(seeded):
    server, c = seeded
    r = http("GET", server.url + "/nope")
    assert r.status == 404 and "error" in r.json
    r = http("GET", server.url + "/push")
    assert r.status == 405 and "error" in r.json
    r = http("POST", server.url + "/health", b"{}")
    assert r.status == 405
    assert_intact(server, c)


def test_nul_in_a_key_is_rejected_not_stored(seeded):
    server, c = seeded
    results = c.push([mutation(5, put("keep", "a\u0000b", {}))])
    assert results[0]["status"] == "rejected"
    assert_intact(server, c)


def test_unicode_keys_are_distinct_bytewise(seeded):
    server, c = seeded
    c.push([mutation(6, put("u", "\u00e9", {"form": "nfc"}), put("u", "e\u0301", {"form": "nfd"}))])
    state = c.state()
    assert state[("u", "\u00e9")] == {"form": "nfc"}
    assert state[("u", "e\u0301")] == {"form": "nfd"}
