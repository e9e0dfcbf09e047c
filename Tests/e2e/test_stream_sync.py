"""The real-time stream through a fault proxy (docs/sync.md, docs/protocol.md "GET {url}/events"):
with pulls at the interval made rare, a change reaches the other user through the stream's poke;
a stream the proxy cuts (and refuses for a while) reconnects and nothing is lost; a stream the
proxy never lets through leaves the interval pull to carry the changes."""

import json

import optimist
from conftest import Server, wait_for
from faultproxy import FaultProxy

HOUR_MS = 3_600_000



def room_server(db_url, tmp_path):
    tokens = tmp_path / "tokens.json"
    tokens.write_text(json.dumps({"tok-alice": "alice", "tok-bob": "bob"}))
    return Server(db_url, tmp_path / "server.log", "--tokens", str(tokens))


def open_room(server_url, bob_url, bob_pull_interval_ms):
    alice, bob = optimist.Store(), optimist.Store()
    alice.sync_start(server_url, headers={"Authorization": "Bearer tok-alice"})
    made = alice.mutate([optimist.put("room/$members", "alice", {"role": "owner"}),
                         optimist.put("room/$members", "bob", {"role": "writer"})])
    assert wait_for(lambda: alice.status(made) == "committed"), alice.sync_status()
    bob.sync_start(bob_url, headers={"Authorization": "Bearer tok-bob"}, pull_interval_ms=bob_pull_interval_ms)
    assert wait_for(lambda: bob.get("room/$members", "bob") is not None), bob.sync_status()
    return alice, bob


def close_all(alice, bob, proxy, server):
    for s in (alice, bob):
        if s:
            s.close()
    proxy.close()
    server.stop()


def say(alice, key):
    alice.mutate([optimist.put("room/messages", key, {"text": key})])


def test_a_poke_carries_changes_and_a_cut_stream_reconnects_losing_nothing(db_url, tmp_path):
    server = room_server(db_url, tmp_path)
    proxy = FaultProxy(server.port).start()
    alice = bob = None
    try:
        alice, bob = open_room(server.url, proxy.url, HOUR_MS)
        assert wait_for(lambda: bob.sync_status().get("stream") == "live"), bob.sync_status()
        # Bob pulls hourly at most: only the stream's poke can bring this in time.
        say(alice, "1")
        assert wait_for(lambda: bob.get("room/messages", "1") is not None, 10), bob.sync_status()
        # The proxy cuts the stream and refuses every connection for a while; Alice goes on.
        proxy.refuse_for(2)
        assert proxy.cut_streams() == 1
        for key in ("2", "3", "4"):
            say(alice, key)
        assert alice.sync_wait_idle(20)
        # The stream comes back by itself, and its first event makes Bob pull what he missed.
        assert wait_for(lambda: all(bob.get("room/messages", k) for k in ("2", "3", "4")), 30), bob.sync_status()
        assert wait_for(lambda: bob.sync_status().get("stream") == "live" and proxy.open_streams() == 1, 30)
        say(alice, "5")
        assert wait_for(lambda: bob.get("room/messages", "5") is not None, 10), bob.sync_status()
        assert [k for k, _ in bob.scan("room/messages")] == ["1", "2", "3", "4", "5"]
    finally:
        close_all(alice, bob, proxy, server)


def test_without_a_stream_the_interval_pull_carries_changes(db_url, tmp_path):
    server = room_server(db_url, tmp_path)
    proxy = FaultProxy(server.port).start()
    proxy.set_mode("refuse", endpoints=("events",))
    alice = bob = None
    try:
        alice, bob = open_room(server.url, proxy.url, 300)
        for key in ("1", "2"):
            say(alice, key)
        assert wait_for(lambda: bob.get("room/messages", "1") and bob.get("room/messages", "2"), 20), bob.sync_status()
        assert bob.sync_status().get("stream") != "live"
        assert proxy.open_streams() == 0
    finally:
        close_all(alice, bob, proxy, server)
