"""The sync's event stream through the built-in HTTP transport (libcurl), against a small
protocol server over real HTTP on loopback (:class:`eventserver.EventServer`) that also serves
``GET /events`` (Server-Sent Events): a poke pulls at once, ``ready`` pulls what changed while
no stream was open, a server without streams is still pulled at the interval, a cut stream
reconnects, a 401 there pauses the sync until new headers, and stopping never waits for a
quiet stream.

Every sync here pulls every hour (unless a test says otherwise): a change that arrives within
the test's deadline came through the stream. Nothing asserts how fast anything is: waits are
deadlines that only fail a test that would otherwise hang.
"""

import json
import threading
import time

import pytest

import optimist
from eventserver import EventServer

#: How long any wait may take before the test fails (generous: slow CI machines).
DEADLINE = 30.0
HOUR_MS = 3_600_000


def wait_for(predicate, timeout=DEADLINE):
    """Polls ``predicate`` until it is true or ``timeout`` seconds passed; returns its value."""
    end = time.monotonic() + timeout
    while time.monotonic() < end:
        if predicate():
            return True
        time.sleep(0.01)
    return bool(predicate())


@pytest.fixture
def server():
    srv = EventServer()
    yield srv
    srv.close()
    assert srv.violations == []


def start(store, server, **options):
    """Starts the sync over HTTP with quick backoff, pulling every hour (the options may
    override)."""
    store.sync_start(server.url, **{"pull_interval_ms": HOUR_MS, "backoff_base_ms": 5, "backoff_max_ms": 50,
                                    "timeout_ms": 5000, **options})


def live(store):
    assert wait_for(lambda: store.sync_status()["stream"] == "live"), store.sync_status()


def test_a_poke_pulls_at_once(server, store):
    start(store, server, headers={"Authorization": "Bearer t0k3n"})
    live(store)
    assert store.sync_wait_idle(DEADLINE)
    for i in range(3):
        server.write("notes", f"n{i}", {"i": i})
        server.poke()
        assert wait_for(lambda: store.get("notes", f"n{i}") == {"i": i}), store.sync_status()
    # The stream carried the sync's headers, asked for an event stream, and stayed one stream.
    assert server.stream_count() == 1
    sent = server.streams[0]
    assert sent["Authorization"] == "Bearer t0k3n" and sent["Accept"] == "text/event-stream"
    assert store.sync_status()["state"] == "idle"


def test_ready_pulls_what_changed_while_no_stream_was_open(server, store):
    # No stream at first (503, Retry-After: 1): the sync pulls at start, and then not again.
    server.events = 503
    start(store, server)
    assert store.sync_wait_idle(DEADLINE)
    assert wait_for(lambda: server.stream_count(503) >= 1)
    assert store.sync_status()["stream"] == "connecting"
    # A change nobody pokes about; then the stream comes back, and its `ready` pulls it.
    server.write("notes", "missed", {"v": 1})
    server.events = "sse"
    assert wait_for(lambda: store.get("notes", "missed") == {"v": 1}), store.sync_status()
    assert server.stream_count(200) == 1
    assert store.sync_status()["stream"] == "live"


def test_a_server_without_streams_is_pulled_at_the_interval(server, store):
    server.events = 404
    start(store, server, pull_interval_ms=100)
    assert wait_for(lambda: server.stream_count(404) == 1)
    pulls = server.pull_count()
    server.write("notes", "polled", {"v": 2})
    assert wait_for(lambda: store.get("notes", "polled") == {"v": 2})
    assert wait_for(lambda: server.pull_count() >= pulls + 3)
    # Asked once: a server without streams is asked again only minutes later.
    assert server.stream_count() == 1
    assert store.sync_status()["stream"] == "connecting"


def test_a_cut_stream_reconnects_and_pokes_still_work(server, store):
    start(store, server)
    live(store)
    server.cut()
    assert wait_for(lambda: server.stream_count(200) == 2), store.sync_status()
    live(store)
    assert wait_for(lambda: server.open_streams() == 1)
    server.write("notes", "after-cut", {"v": 3})
    server.poke()
    assert wait_for(lambda: store.get("notes", "after-cut") == {"v": 3}), store.sync_status()


def test_a_401_on_the_stream_pauses_until_new_headers(server, store):
    server.events_token = "fresh"
    start(store, server, headers={"Authorization": "Bearer stale"})
    assert wait_for(lambda: store.sync_status()["state"] == "unauthorized"), store.sync_status()
    status = store.sync_status()
    assert status["last_error"] == "events: HTTP 401: token expired" and status["stream"] == "connecting"
    # Paused: a mutation waits, and the stream is not asked again with the same headers.
    mid = store.mutate([optimist.put("notes", "mine", {"v": 4})])
    time.sleep(0.3)
    assert store.status(mid) == "pending" and server.stream_count() == 1
    store.sync_set_headers({"Authorization": "Bearer fresh"})
    live(store)
    assert store.sync_wait_idle(DEADLINE)
    assert store.status(mid) == "committed" and store.sync_status()["state"] == "idle"
    assert server.streams[-1]["Authorization"] == "Bearer fresh"
    server.write("notes", "theirs", {"v": 5})
    server.poke()
    assert wait_for(lambda: store.get("notes", "theirs") == {"v": 5})


@pytest.mark.parametrize("how", ["sync_stop", "close"])
def test_stopping_does_not_wait_for_a_quiet_stream(server, store, how):
    start(store, server)
    live(store)
    assert store.sync_wait_idle(DEADLINE)
    # The stream is open and says nothing (no keepalive for a minute); stopping cuts it.
    stopper = threading.Thread(target=getattr(store, how))
    stopper.start()
    stopper.join(10.0)
    assert not stopper.is_alive()
    if how == "sync_stop":
        assert store.sync_status()["stream"] == "off"
    # The connection is gone: the server's writes to it fail (a poke a round, until one does).
    assert wait_for(lambda: server.poke() is None and server.open_streams() == 0)


def test_events_off_opens_no_stream(server, store):
    with pytest.raises(TypeError):
        store.sync_start(server.url, events=1)
    start(store, server, events=False, pull_interval_ms=100)
    assert store.sync_wait_idle(DEADLINE)
    server.write("notes", "polled", {"v": 6})
    assert wait_for(lambda: store.get("notes", "polled") == {"v": 6})
    assert server.stream_count() == 0 and store.sync_status()["stream"] == "off"


def test_a_host_transport_has_no_stream(store):
    def transport(endpoint, url, body, headers, timeout_ms):
        return 200, json.dumps({"cursor": "0", "more": False, "outcomes": [], "changes": []})
    store.sync_start(transport=transport, pull_interval_ms=0)
    assert store.sync_wait_idle(DEADLINE)
    assert store.sync_status()["stream"] == "off"
