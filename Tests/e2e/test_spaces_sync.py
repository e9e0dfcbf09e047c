"""Shared spaces through the library's own sync (docs/sync.md "Shared spaces", docs/protocol.md):
three users share a room with each role, a non-member is kept out, a space cannot be claimed,
a removed member's pending write is refused and the room leaves their store (subscribers hear
it), and a protocol 1 client goes on beside them. On PostgreSQL, the users talk to two server
processes on one database."""

import json
import uuid
import urllib.request

import optimist
from conftest import Server, wait_for

USERS = ("alice", "bob", "carol", "dave")
OPTS = dict(pull_interval_ms=100, backoff_base_ms=20, backoff_max_ms=200)


def headers(user):
    return {"Authorization": f"Bearer tok-{user}"}


def start_servers(db_url, tmp_path):
    tokens = tmp_path / "tokens.json"
    tokens.write_text(json.dumps({f"tok-{u}": u for u in USERS}))
    first = Server(db_url, tmp_path / "server-a.log", "--tokens", str(tokens))
    # SQLite: one process per file; PostgreSQL: a second process on the same database.
    second = Server(db_url, tmp_path / "server-b.log", "--tokens", str(tokens)) if db_url.startswith("postgres") else first
    return first, second



def device(server, user):
    store = optimist.Store()
    store.sync_start(server.url, headers=headers(user), **OPTS)
    return store


def room(store):
    return {k: v for k, v in store.scan("room/messages")}


def test_three_users_share_a_room_with_each_role(db_url, tmp_path):
    a, b = start_servers(db_url, tmp_path)
    stores = {}
    try:
        alice, bob, carol, dave = (device(a if u in ("alice", "carol") else b, u) for u in USERS)
        stores = dict(zip(USERS, (alice, bob, carol, dave)))
        made = alice.mutate([optimist.put("room/$members", "alice", {"role": "owner"}),
                             optimist.put("room/$members", "bob", {"role": "writer"}),
                             optimist.put("room/$members", "carol", {"role": "reader"})])
        assert alice.sync_wait_idle(20) and alice.status(made) == "committed"
        hello = alice.mutate([optimist.put("room/messages", "1", {"text": "hello", "from": "alice"})])
        reply = bob.mutate([optimist.put("room/messages", "2", {"text": "hi!", "from": "bob"})])
        # The reader's write is refused, rolled back, and says why.
        sneaky = carol.mutate([optimist.put("room/messages", "3", {"text": "me too", "from": "carol"})])
        intruder = dave.mutate([optimist.put("room/messages", "4", {"text": "let me in", "from": "dave"})])
        for s in stores.values():
            assert s.sync_wait_idle(20), s.sync_status()
        assert alice.status(hello) == "committed" and bob.status(reply) == "committed"
        for s, mid in ((carol, sneaky), (dave, intruder)):
            assert s.status(mid) == "rolled_back"
            assert s.mutation(mid)["last_error"].startswith("forbidden"), s.mutation(mid)
        expected = {"1": {"text": "hello", "from": "alice"}, "2": {"text": "hi!", "from": "bob"}}
        for s in (alice, bob, carol):
            assert wait_for(lambda: room(s) == expected), room(s)
        assert room(dave) == {} and dave.scan("room/$members") == []
        assert {k for k, _ in carol.scan("room/$members")} == {"alice", "bob", "carol"}
        # Claiming the existing room is refused too.
        claim = dave.mutate([optimist.put("room/$members", "dave", {"role": "owner"})])
        assert dave.sync_wait_idle(20) and dave.status(claim) == "rolled_back"
        assert dave.get("room/$members", "dave") is None
    finally:
        for s in stores.values():
            s.close()
        a.stop()
        if b is not a:
            b.stop()


def test_a_removed_member_loses_the_room_and_their_pending_write(db_url, tmp_path):
    a, b = start_servers(db_url, tmp_path)
    alice = bob = None
    try:
        alice, bob = device(a, "alice"), device(b, "bob")
        alice.mutate([optimist.put("room/$members", "alice", {"role": "owner"}),
                      optimist.put("room/$members", "bob", {"role": "writer"}),
                      optimist.put("room/messages", "1", {"text": "welcome"})])
        assert alice.sync_wait_idle(20)
        assert wait_for(lambda: room(bob) == {"1": {"text": "welcome"}}), room(bob)
        heard = []
        sub = bob.subscribe(lambda changes: heard.extend(changes))
        # Bob goes offline with a write pending; meanwhile he is removed.
        bob.sync_stop()
        pending = bob.mutate([optimist.put("room/messages", "2", {"text": "sent from the train"})])
        assert bob.get("room/messages", "2") == {"text": "sent from the train"}
        alice.mutate([optimist.delete("room/$members", "bob")])
        later = alice.mutate([optimist.put("room/messages", "3", {"text": "after bob left"})])
        assert alice.sync_wait_idle(20) and alice.status(later) == "committed"
        bob.sync_start(b.url, headers=headers("bob"), **OPTS)
        assert bob.sync_wait_idle(20), bob.sync_status()
        assert bob.status(pending) == "rolled_back"
        assert bob.mutation(pending)["last_error"].startswith("forbidden")
        assert wait_for(lambda: room(bob) == {} and bob.scan("room/$members") == []), (room(bob), bob.scan("room/$members"))
        removed = {(c.collection, c.key) for c in heard if c.value is None and c.cause == "server"}
        assert {("room/messages", "1"), ("room/$members", "alice"), ("room/$members", "bob")} <= removed, heard
        # Never the message written after the removal.
        assert all(c.key != "3" for c in heard), heard
        sub.close()
        assert wait_for(lambda: room(alice) == {"1": {"text": "welcome"}, "3": {"text": "after bob left"}})
    finally:
        for s in (alice, bob):
            if s:
                s.close()
        a.stop()
        if b is not a:
            b.stop()


def pull_v1(server, user, cursor=None):
    body = json.dumps({"protocol": 1, "client_id": str(uuid.uuid4()), "cursor": cursor, "unacked": []}).encode()
    req = urllib.request.Request(server.url + "/pull", data=body,
                                 headers={"Content-Type": "application/json", **headers(user)})
    with urllib.request.urlopen(req, timeout=30) as r:
        return json.loads(r.read())


def test_protocol_1_clients_go_on_beside_protocol_2_ones(db_url, tmp_path):
    a, b = start_servers(db_url, tmp_path)
    alice = None
    try:
        alice = device(a, "alice")
        alice.mutate([optimist.put("notes", "n", {"v": 1}),
                      optimist.put("room/$members", "alice", {"role": "owner"}),
                      optimist.put("room/messages", "1", {"text": "shared"})])
        assert alice.sync_wait_idle(20)
        # An old client of the same user sees the private space only, as before.
        old = pull_v1(b, "alice")
        assert [(c["coll"], c["key"]) for c in old["changes"]] == [("notes", "n")]
        assert pull_v1(b, "alice", old["cursor"])["changes"] == []
    finally:
        if alice:
            alice.close()
        a.stop()
        if b is not a:
            b.stop()
