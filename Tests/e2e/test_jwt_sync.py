"""The library's own sync against a server that accepts JSON Web Tokens (--jwt-secret, HS256).

docs/sync.md: a 401 makes the sync's state `unauthorized`; it keeps every pending mutation and
resumes when the host sets new headers. Here the app starts with a token that has expired, mutates
offline-style while refused, then refreshes the token: everything it made reaches the server, under
the token's user (`sub`), and nothing of it reaches another user.
"""

import base64
import hashlib
import hmac
import json
import time

import pytest

import optimist
from conftest import Server, wait_for

SECRET = b"the e2e suite's HS256 secret, longer than 32 bytes"


def jwt(sub, exp_in_s):
    def b64(b):
        return base64.urlsafe_b64encode(b).rstrip(b"=").decode()
    head = b64(json.dumps({"alg": "HS256", "typ": "JWT"}).encode())
    body = b64(json.dumps({"sub": sub, "exp": int(time.time()) + exp_in_s}).encode())
    sig = hmac.new(SECRET, f"{head}.{body}".encode(), hashlib.sha256).digest()
    return f"{head}.{body}.{b64(sig)}"


@pytest.fixture
def jwt_server(db_url, tmp_path):
    secret = tmp_path / "secret"
    secret.write_bytes(SECRET)
    s = Server(db_url, tmp_path / "server.log", "--jwt-secret", str(secret))
    yield s
    s.stop()



def test_expired_token_pauses_the_sync_and_a_fresh_one_sends_everything(jwt_server):
    store = optimist.Store()
    try:
        first = store.mutate([optimist.put("notes", "a", {"n": 1})])
        store.sync_start(jwt_server.url, headers={"Authorization": f"Bearer {jwt('alice', -10)}"}, pull_interval_ms=100)
        assert wait_for(lambda: store.sync_status()["state"] == "unauthorized", 10), store.sync_status()
        assert "expired" in (store.sync_status()["last_error"] or ""), store.sync_status()
        # Refused, not failed: the mutations stay pending and visible, and more can be made.
        second = store.mutate([optimist.put("notes", "b", {"n": 2})])
        assert store.status(first) == "pending" and store.status(second) == "pending"
        assert store.get("notes", "a") == {"n": 1}
        store.sync_set_headers({"Authorization": f"Bearer {jwt('alice', 600)}"})
        assert store.sync_wait_idle(20), store.sync_status()
        assert store.status(first) == "committed" and store.status(second) == "committed"
    finally:
        store.close()
    alice = {"Authorization": f"Bearer {jwt('alice', 600)}"}
    bob = {"Authorization": f"Bearer {jwt('bob', 600)}"}
    assert jwt_server.everything(alice) == {("notes", "a"): {"n": 1}, ("notes", "b"): {"n": 2}}
    assert jwt_server.everything(bob) == {}
