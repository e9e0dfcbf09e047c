"""GET /events (docs/protocol.md "Real time"): a Server-Sent Events stream per client that says
`ready` when it opens and `poke` whenever a space its user sees changes; with PostgreSQL, a push
to any server process pokes streams held by every other."""

import json
import queue
import socket
import threading
import time
import urllib.parse

import pytest

from conftest import Client, delete, http, mutation, put


class Events:
    """One open GET /events stream; `events` gets ("event", name) and ("comment", text)."""

    def __init__(self, server, token=None, timeout=10):
        url = urllib.parse.urlsplit(server.url)
        self.sock = socket.create_connection((url.hostname, url.port), timeout=timeout)
        auth = f"Authorization: Bearer {token}\r\n" if token else ""
        self.sock.sendall(f"GET /events HTTP/1.1\r\nHost: x\r\nAccept: text/event-stream\r\n{auth}\r\n".encode())
        self.file = self.sock.makefile("rb")
        status = self.file.readline().decode()
        self.status = int(status.split()[1])
        self.headers = {}
        while True:
            line = self.file.readline().decode().strip()
            if not line:
                break
            k, _, v = line.partition(":")
            self.headers[k.strip().lower()] = v.strip()
        self.events = queue.Queue()
        if self.status == 200:
            threading.Thread(target=self._read, daemon=True).start()

    def _read(self):
        name = None
        try:
            while True:
                raw = self._line()
                if raw is None:
                    break
                if raw == "":
                    if name:
                        self.events.put(("event", name))
                    name = None
                elif raw.startswith(":"):
                    self.events.put(("comment", raw[1:].strip()))
                elif raw.startswith("event:"):
                    name = raw[6:].strip()
        except OSError:
            pass
        self.events.put(("closed", None))

    def _line(self):
        # Chunked transfer: a chunk-size line, then data; SSE lines inside.
        while True:
            if getattr(self, "_buf", None):
                if "\n" in self._buf:
                    line, _, self._buf = self._buf.partition("\n")
                    return line.rstrip("\r")
            size = self.file.readline()
            if not size:
                return None
            size = size.strip()
            if not size:
                continue
            n = int(size, 16)
            if n == 0:
                return None
            data = self.file.read(n).decode()
            self.file.readline()
            self._buf = getattr(self, "_buf", "") + data

    def next_event(self, timeout=5):
        """The next event's name (comments skipped); None if none came in time."""
        deadline = time.monotonic() + timeout
        while True:
            left = deadline - time.monotonic()
            if left <= 0:
                return None
            try:
                kind, value = self.events.get(timeout=left)
            except queue.Empty:
                return None
            if kind == "event":
                return value
            if kind == "closed":
                return "closed"

    def drain(self, quiet=0.3):
        """Every event that arrives until `quiet` seconds pass without one."""
        got = []
        while (e := self.next_event(quiet)) is not None:
            got.append(e)
        return got

    def close(self):
        try:
            # shutdown, not only close: the reader thread's file keeps the socket open.
            self.sock.shutdown(socket.SHUT_RDWR)
            self.sock.close()
        except OSError:
            pass


def stream(server, token):
    """An open stream past its `ready`, and past the poke a PostgreSQL server sends every stream
    when it starts listening for changes (streams opened before that may have missed some)."""
    e = Events(server, token)
    assert e.status == 200 and e.next_event() == "ready"
    e.drain(0.3)
    return e


@pytest.fixture
def people(start_server, tmp_path):
    tokens = tmp_path / "tokens.json"
    tokens.write_text(json.dumps({f"tok-{n}": n for n in ("alice", "bob", "carol")}))
    return start_server("--tokens", str(tokens), "--events-keepalive", "0.5"), tokens


def v2(server, user):
    return Client(server, token=f"tok-{user}", protocol=2)


def test_a_stream_says_ready_then_pokes_on_the_users_changes(people):
    server, _ = people
    alice = Events(server, "tok-alice")
    assert alice.status == 200 and alice.headers["content-type"].startswith("text/event-stream")
    assert alice.next_event() == "ready"
    alice.drain(0.3)
    assert v2(server, "alice").push([mutation(1, put("notes", "n", {}))])[0]["status"] == "ok"
    assert alice.next_event() == "poke"
    # Another user's private change is not hers to hear of.
    bob = stream(server, "tok-bob")
    assert v2(server, "alice").push([mutation(2, put("notes", "m", {}))])[0]["status"] == "ok"
    assert alice.next_event() == "poke"
    assert "poke" not in bob.drain()


def test_members_of_a_space_are_poked_and_a_removed_one_too(people):
    server, _ = people
    owner = v2(server, "alice")
    assert owner.push([mutation(1, put("room/$members", "alice", {"role": "owner"}),
                                put("room/$members", "bob", {"role": "writer"}))])[0]["status"] == "ok"
    bob, carol = stream(server, "tok-bob"), stream(server, "tok-carol")
    assert owner.push([mutation(2, put("room/messages", "m1", {"t": "hi"}))])[0]["status"] == "ok"
    assert bob.next_event() == "poke"
    assert "poke" not in carol.drain()
    # Removed: poked once more, to pull the drop; nothing after.
    assert owner.push([mutation(3, delete("room/$members", "bob"))])[0]["status"] == "ok"
    assert bob.next_event() == "poke"
    assert owner.push([mutation(4, put("room/messages", "m2", {"t": "later"}))])[0]["status"] == "ok"
    assert "poke" not in bob.drain()


def test_pokes_are_coalesced(people):
    server, _ = people
    alice = stream(server, "tok-alice")
    # One push of 200 mutations in three spaces is one change for the stream.
    ops = [put("room/$members", "alice", {"role": "owner"}), put("club/$members", "alice", {"role": "owner"})]
    mutations = [mutation(1, *ops)] + [mutation(i, put(["room/x", "club/x", "own"][i % 3], str(i), {})) for i in range(2, 201)]
    results = v2(server, "alice").push(mutations)
    assert all(r["status"] == "ok" for r in results)
    assert alice.drain(0.5) == ["poke"]


def test_keepalives_flow_while_nothing_changes(people):
    server, _ = people
    alice = Events(server, "tok-alice")
    assert alice.next_event() == "ready"
    comments = []
    deadline = time.monotonic() + 5
    while len(comments) < 2 and time.monotonic() < deadline:
        try:
            kind, value = alice.events.get(timeout=1)
        except queue.Empty:
            continue
        if kind == "comment":
            comments.append(value)
    assert comments == ["keepalive", "keepalive"]


def test_a_stream_needs_a_valid_token(people):
    server, _ = people
    for token in (None, "nope"):
        e = Events(server, token)
        assert e.status == 401
    r = http("POST", server.url + "/events", b"")
    assert r.status == 405 and r.headers.get("Allow") == "GET"


def test_streams_per_user_are_bounded(start_server, tmp_path):
    tokens = tmp_path / "tokens.json"
    tokens.write_text(json.dumps({"tok-alice": "alice", "tok-bob": "bob"}))
    server = start_server("--tokens", str(tokens), "--events-per-user", "3", "--events-keepalive", "0.5")
    held = [Events(server, "tok-alice") for _ in range(3)]
    assert all(e.status == 200 and e.next_event() == "ready" for e in held)
    extra = Events(server, "tok-alice")
    assert extra.status == 429
    assert Events(server, "tok-bob").status == 200
    held[0].close()
    # The slot comes back once the server notices the stream is gone (at a keepalive).
    deadline = time.monotonic() + 40
    while time.monotonic() < deadline:
        again = Events(server, "tok-alice")
        if again.status == 200:
            break
        time.sleep(0.5)
    assert again.status == 200


def test_shutdown_ends_open_streams(people):
    server, _ = people
    streams = [stream(server, "tok-alice") for _ in range(3)]
    start = time.monotonic()
    assert server.terminate() == 0
    assert time.monotonic() - start < 20
    assert all(s.next_event(5) == "closed" for s in streams)


def test_a_push_to_one_process_pokes_streams_of_another(db, start_server, tmp_path):
    if db.kind != "postgres":
        pytest.skip("pokes cross processes through PostgreSQL's LISTEN/NOTIFY")
    tokens = tmp_path / "tokens.json"
    tokens.write_text(json.dumps({"tok-alice": "alice", "tok-bob": "bob"}))
    a = start_server("--tokens", str(tokens))
    b = start_server("--tokens", str(tokens))
    bob = stream(b, "tok-bob")
    alice = v2(a, "alice")
    assert alice.push([mutation(1, put("room/$members", "alice", {"role": "owner"}),
                                put("room/$members", "bob", {"role": "reader"}))])[0]["status"] == "ok"
    assert bob.next_event() == "poke"
    assert alice.push([mutation(2, put("room/messages", "m", {}))])[0]["status"] == "ok"
    assert bob.next_event() == "poke"
    page = v2(b, "bob").pull()
    assert {(c["coll"], c["key"]) for c in page["changes"]} >= {("room/messages", "m")}
