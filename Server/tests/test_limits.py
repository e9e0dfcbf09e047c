"""The server's limits on connections and requests (docs/protocol.md "Server limits"): read and
idle timeouts, the connection cap, per-user concurrency, PostgreSQL's statement_timeout, the
Content-Type check, the per-request caps, owner-only SQLite files and the refusal to serve an
open server beyond loopback.

Latency bounds here are generous (seconds): only a hang, a starved request or a connection held
forever misses them.
"""

import http.client as httpclient
import json
import os
import socket
import stat
import subprocess
import threading
import time
import urllib.parse
import uuid

import pytest

from conftest import Client, http, incr, mutation, put, psql_binary, read_line_with_timeout, server_binary

SLOW_BOUND_S = 10  # what "still fast" means for a request beside the slow or flooding clients


def address(server):
    parsed = urllib.parse.urlparse(server.url)
    return parsed.hostname, parsed.port


def connect(server, timeout=10):
    s = socket.create_connection(address(server), timeout=timeout)
    s.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
    return s


def request_bytes(method, path, body=b"", headers=None):
    lines = [f"{method} {path} HTTP/1.1", "Host: 127.0.0.1"]
    for k, v in (headers or {}).items():
        lines.append(f"{k}: {v}")
    if body or method == "POST":
        lines.append(f"Content-Length: {len(body)}")
    return ("\r\n".join(lines) + "\r\n\r\n").encode() + body


def read_response(sock):
    """(status, body) of one HTTP/1.1 response with a Content-Length; None when the server
    closed the connection first."""
    data = b""
    while b"\r\n\r\n" not in data:
        chunk = sock.recv(65536)
        if not chunk:
            return None
        data += chunk
    head, _, rest = data.partition(b"\r\n\r\n")
    lines = head.decode("latin-1").split("\r\n")
    status = int(lines[0].split()[1])
    length = 0
    for line in lines[1:]:
        name, _, value = line.partition(":")
        if name.strip().lower() == "content-length":
            length = int(value.strip())
    while len(rest) < length:
        chunk = sock.recv(65536)
        if not chunk:
            break
        rest += chunk
    return status, rest[:length]


def closed_by_server(sock, within):
    """Whether the server closes `sock` (EOF or reset, after any answer it sends) within
    `within` seconds, reading what comes."""
    end = time.monotonic() + within
    while time.monotonic() < end:
        sock.settimeout(max(0.05, end - time.monotonic()))
        try:
            if sock.recv(65536) == b"":
                return True
        except socket.timeout:
            return False
        except (ConnectionResetError, BrokenPipeError):
            return True
    return False


def trickle_until_closed(sock, data, every, within):
    """Sends `data` a byte at a time, one every `every` seconds, until the server closes the
    connection; returns the seconds that took, or None when it was still open after `within`
    (or all of `data` went out first)."""
    start = time.monotonic()
    for i in range(len(data)):
        try:
            sock.sendall(data[i:i + 1])
        except (ConnectionResetError, BrokenPipeError):
            return time.monotonic() - start
        if closed_by_server(sock, every):
            return time.monotonic() - start
        if time.monotonic() - start > within:
            return None
    return None


def timed(fn):
    start = time.monotonic()
    result = fn()
    return result, time.monotonic() - start


@pytest.fixture
def tokens(tmp_path):
    path = tmp_path / "tokens.json"
    path.write_text(json.dumps({"tok-a": "a", "tok-b": "b"}))
    return str(path)


# --- timeouts -----------------------------------------------------------------------------

def test_300_slow_connections_leave_health_and_pushes_fast(start_server, tokens):
    server = start_server("--tokens", tokens)
    slow = []
    try:
        for i in range(300):
            s = connect(server)
            # A request head that never ends: sent in part, a byte more every round.
            s.sendall(b"POST /push HTTP/1.1\r\nHost: 127.0.0.1\r\nAuthorization: Bearer tok-a\r\n")
            slow.append(s)
        bob = Client(server, token="tok-b")
        for round in range(5):
            for s in slow:
                s.sendall(b"X")
            r, took = timed(lambda: http("GET", server.url + "/health", timeout=30))
            assert r.status == 200 and took < SLOW_BOUND_S, (r, took)
            results, took = timed(lambda: bob.push([mutation(round + 1, put("todos", f"t{round}", {"n": round}))]))
            assert results[0]["status"] == "ok" and took < SLOW_BOUND_S, (results, took)
        # The slow connections were held, not dropped, all along.
        for s in slow:
            s.setblocking(False)
            try:
                assert s.recv(1) != b"", "the server closed a slow connection before its read timeout"
            except BlockingIOError:
                pass
    finally:
        for s in slow:
            s.close()


def test_slow_loris_head_is_cut_off_after_read_timeout(start_server):
    server = start_server("--read-timeout", "2")
    s = connect(server)
    head = b"POST /push HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Type: application/json\r\n" + b"X-Pad: " + b"a" * 200
    took = trickle_until_closed(s, head, every=0.2, within=15)
    s.close()
    assert took is not None, "a client sending its head a byte at a time kept the connection for 15 s"
    assert took >= 1.5, f"closed after {took:.1f}s, before the 2 s read timeout"
    assert http("GET", server.url + "/health").status == 200


def test_slow_loris_body_is_cut_off_after_read_timeout(start_server):
    server = start_server("--read-timeout", "2")
    s = connect(server)
    body = json.dumps({"protocol": 1, "client_id": "c", "mutations": []}).encode().ljust(400)
    s.sendall(b"POST /push HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Type: application/json\r\n"
              + f"Content-Length: {len(body)}\r\n\r\n".encode())
    took = trickle_until_closed(s, body, every=0.2, within=15)
    s.close()
    assert took is not None, "a client sending its body a byte at a time kept the connection for 15 s"
    assert took >= 1.5, f"closed after {took:.1f}s, before the 2 s read timeout"


def test_read_timeout_answers_408_to_an_unfinished_head(start_server):
    server = start_server("--read-timeout", "1")
    s = connect(server)
    s.sendall(b"GET /health HTTP/1.1\r\nHost: 127.0.0.1\r\n")
    s.settimeout(10)
    reply = read_response(s)
    s.close()
    assert reply is not None and reply[0] == 408, reply
    assert "read timeout" in json.loads(reply[1])["error"]


def test_idle_keep_alive_connection_is_closed_after_idle_timeout(start_server):
    server = start_server("--idle-timeout", "2")
    s = connect(server)
    s.sendall(request_bytes("GET", "/health"))
    assert read_response(s)[0] == 200
    start = time.monotonic()
    assert closed_by_server(s, within=15), "an idle keep-alive connection stayed open 15 s"
    assert time.monotonic() - start >= 1.5
    s.close()
    # A connection that never sends a byte is idle too.
    silent = connect(server)
    assert closed_by_server(silent, within=15), "a silent connection stayed open 15 s"
    silent.close()


def test_idle_timeout_does_not_cut_a_busy_connection(start_server):
    """Requests one after another on one connection, over longer than the idle timeout."""
    server = start_server("--idle-timeout", "1", "--read-timeout", "1")
    s = connect(server)
    for _ in range(8):
        s.sendall(request_bytes("GET", "/health"))
        assert read_response(s)[0] == 200
        time.sleep(0.4)
    s.close()


# --- the connection cap -------------------------------------------------------------------

def test_connections_beyond_the_cap_get_503_while_none_is_idle(start_server):
    server = start_server("--max-connections", "5", "--read-timeout", "60")
    busy = []
    try:
        for _ in range(5):
            s = connect(server)
            s.sendall(b"POST /push HTTP/1.1\r\nHost: 127.0.0.1\r\n")  # being read: not evictable
            busy.append(s)
        time.sleep(0.3)
        extra = connect(server)
        extra.sendall(request_bytes("GET", "/health"))
        extra.settimeout(10)
        try:
            reply = read_response(extra)
        except ConnectionResetError:
            reply = None
        extra.close()
        assert reply is None or reply[0] == 503, f"a sixth connection over --max-connections 5 got {reply}"
        # The busy ones were kept.
        for s in busy:
            assert not closed_by_server(s, within=0.05)
        # A slot that frees up is taken again.
        busy.pop().close()
        deadline = time.monotonic() + 10
        while http("GET", server.url + "/health").status != 200:
            assert time.monotonic() < deadline, "no connection was admitted after one closed"
            time.sleep(0.1)
    finally:
        for s in busy:
            s.close()


def test_a_new_connection_evicts_the_longest_idle_one_when_full(start_server):
    server = start_server("--max-connections", "4", "--idle-timeout", "60")
    idle = []
    try:
        for _ in range(4):
            s = connect(server)
            s.sendall(request_bytes("GET", "/health"))
            assert read_response(s)[0] == 200
            idle.append(s)
            time.sleep(0.05)
        newcomer = connect(server)
        newcomer.sendall(request_bytes("GET", "/health"))
        newcomer.settimeout(10)
        assert read_response(newcomer)[0] == 200
        assert closed_by_server(idle[0], within=5), "the longest-idle connection was not closed for the newcomer"
        for s in idle[1:]:
            s.sendall(request_bytes("GET", "/health"))
            assert read_response(s)[0] == 200
        newcomer.close()
    finally:
        for s in idle:
            s.close()


# --- per-user fairness --------------------------------------------------------------------

def test_one_users_flood_of_pushes_leaves_another_users_pushes_fast(start_server, tokens):
    server = start_server("--tokens", tokens)
    statuses, errors = [], []

    def flood(n):
        c = Client(server, token="tok-a")
        try:
            for round in range(3):
                muts = [mutation(round * 20 + i + 1, put("items", f"{n}-{round}-{i}", {"v": "x" * 200})) for i in range(20)]
                r = c.push_raw(muts)
                statuses.append(r.status)
                if r.status == 429:
                    assert r.headers.get("Retry-After"), r
                    time.sleep(0.05)
        except Exception as e:  # noqa: BLE001 - reported below
            errors.append(e)

    threads = [threading.Thread(target=flood, args=(n,)) for n in range(50)]
    for t in threads:
        t.start()
    bob = Client(server, token="tok-b")
    worst = 0
    for i in range(10):
        results, took = timed(lambda: bob.push([mutation(i + 1, put("notes", f"n{i}", {"i": i}))]))
        assert results[0]["status"] == "ok"
        worst = max(worst, took)
    for t in threads:
        t.join(120)
    assert not errors, errors
    assert worst < SLOW_BOUND_S, f"user b's push took {worst:.1f}s during user a's flood"
    assert statuses.count(200) > 0 and set(statuses) <= {200, 429, 503}, sorted(set(statuses))
    assert len(bob.state()) == 10


def hold_space_lock(db, user, space=None):
    """A psql session holding `user`'s private space row lock (every push of that user waits on
    it), or the shared `space`'s, until the returned function is called."""
    p = subprocess.Popen([psql_binary(), db.url, "-v", "ON_ERROR_STOP=1", "-q"], stdin=subprocess.PIPE,
                         stdout=subprocess.PIPE, stderr=subprocess.STDOUT)
    row = f"s:{space}" if space else f"u:{user}"
    p.stdin.write(f"BEGIN;\nSELECT seq FROM spaces WHERE space = '{row}' FOR UPDATE;\n\\echo locked\n".encode())
    p.stdin.flush()
    while True:
        line = read_line_with_timeout(p.stdout, 30)
        assert line, "psql did not take the lock"
        if "locked" in line:
            break

    def release():
        p.stdin.write(b"ROLLBACK;\n")
        p.stdin.close()
        p.wait(30)
    return release


def test_per_user_concurrency_answers_429_and_others_go_on(db, start_server, tokens):
    if db.kind != "postgres":
        pytest.skip("holds a row lock from a second PostgreSQL session")
    server = start_server("--tokens", tokens, "--per-user-concurrency", "2")
    alice, bob = Client(server, token="tok-a"), Client(server, token="tok-b")
    alice.push([mutation(1, put("t", "first", {}))])
    release = hold_space_lock(db, "a")
    replies = []
    try:
        threads = [threading.Thread(target=lambda i=i: replies.append(
            Client(server, token="tok-a").push_raw([mutation(1, put("t", f"k{i}", {}))]))) for i in range(2)]
        for t in threads:
            t.start()
        time.sleep(1)  # both hold a slot of user a, waiting on the lock
        third, took = timed(lambda: alice.push_raw([mutation(2, put("t", "third", {}))]))
        assert third.status == 429, third
        assert third.headers.get("Retry-After") == "1"
        assert "in flight" in third.json["error"]
        assert took < SLOW_BOUND_S
        results, took = timed(lambda: bob.push([mutation(1, put("t", "b", {}))]))
        assert results[0]["status"] == "ok" and took < SLOW_BOUND_S
    finally:
        release()
    for t in threads:
        t.join(30)
    assert [r.status for r in replies] == [200, 200], replies
    assert set(alice.state()) == {("t", "first"), ("t", "k0"), ("t", "k1")}


def test_statement_timeout_frees_a_push_stuck_on_a_lock(db, start_server):
    if db.kind != "postgres":
        pytest.skip("statement_timeout is PostgreSQL's")
    server = start_server("--statement-timeout-ms", "1000")
    c = Client(server)
    c.push([mutation(1, put("t", "first", {}))])
    release = hold_space_lock(db, "")
    try:
        r, took = timed(lambda: c.push_raw([mutation(2, put("t", "second", {}))]))
        assert took < 15, f"a push waited {took:.1f}s on a lock"
        assert r.status == 503 and r.headers.get("Retry-After"), r
    finally:
        release()
    # Nothing was half-written; the retry goes through.
    assert c.push([mutation(2, put("t", "second", {}))])[0]["status"] == "ok"
    assert set(c.state()) == {("t", "first"), ("t", "second")}


def test_transaction_timeout_answers_503_and_closes_the_connection(db, start_server):
    """The process's own bound on a transaction, for what statement_timeout cannot see (a
    backend killed under a query whose answer never comes): here a lock wait stands in for it,
    with statement_timeout far longer."""
    if db.kind != "postgres":
        pytest.skip("the transaction timeout is the PostgreSQL store's")
    server = start_server("--statement-timeout-ms", "120000", "--transaction-timeout-ms", "1500")
    c = Client(server)
    c.push([mutation(1, put("t", "first", {}))])
    release = hold_space_lock(db, "")
    try:
        r, took = timed(lambda: c.push_raw([mutation(2, put("t", "second", {}))]))
        assert took < 15, f"a push waited {took:.1f}s on a lock"
        assert r.status == 503 and r.headers.get("Retry-After"), r
        # The closed connection does not cost the pool its place: more requests than the pool
        # has connections still go through (they queue on the held lock only for pushes).
        for i in range(20):
            assert http("GET", server.url + "/health").status == 200
    finally:
        release()
    # The stuck transaction never committed: the retry applies it exactly once.
    assert c.push([mutation(2, put("t", "second", {}))])[0]["status"] == "ok"
    for i in range(3, 23):
        assert c.push([mutation(i, incr("t", "n", "v", 1))])[0]["status"] == "ok"
    state = c.state()
    assert set(state) == {("t", "first"), ("t", "second"), ("t", "n")}
    assert state[("t", "n")] == {"v": 20}


# --- Content-Type -------------------------------------------------------------------------

def post_raw(server, path, body, content_type):
    host, port = address(server)
    conn = httpclient.HTTPConnection(host, port, timeout=30)
    headers = {"Content-Length": str(len(body))}
    if content_type is not None:
        headers["Content-Type"] = content_type
    conn.request("POST", path, body=body, headers=headers)
    r = conn.getresponse()
    reply = (r.status, r.read())
    conn.close()
    return reply


@pytest.mark.parametrize("content_type", [None, "text/plain", "application/x-www-form-urlencoded",
                                          "application/jsonx", "json"])
def test_push_and_pull_without_json_content_type_are_415(server, content_type):
    c = Client(server)
    push = json.dumps({"protocol": 1, "client_id": c.client_id, "mutations": [mutation(1, put("t", "k", {}))]}).encode()
    pull = json.dumps({"protocol": 1, "client_id": c.client_id, "cursor": None, "unacked": []}).encode()
    for path, body in (("/push", push), ("/pull", pull)):
        status, text = post_raw(server, path, body, content_type)
        assert status == 415, (path, content_type, status, text)
        assert "application/json" in json.loads(text)["error"]
    assert c.state() == {}, "a refused push was applied"


@pytest.mark.parametrize("content_type", ["application/json; charset=utf-8", "Application/JSON",
                                          "application/json;charset=UTF-8", " application/json "])
def test_json_content_type_with_parameters_or_any_case_is_accepted(server, content_type):
    c = Client(server)
    push = json.dumps({"protocol": 1, "client_id": c.client_id, "mutations": [mutation(1, put("t", "k", {}))]}).encode()
    status, text = post_raw(server, "/push", push, content_type)
    assert status == 200, text
    pull = json.dumps({"protocol": 1, "client_id": c.client_id, "cursor": None, "unacked": []}).encode()
    status, text = post_raw(server, "/pull", pull, content_type)
    assert status == 200, text
    assert json.loads(text)["changes"][0]["key"] == "k"


# --- per-request caps ---------------------------------------------------------------------

def test_push_over_max_push_mutations_is_413_and_applies_nothing(start_server):
    server = start_server("--max-push-mutations", "3")
    c = Client(server)
    r = c.push_raw([mutation(i + 1, put("t", f"k{i}", {})) for i in range(4)])
    assert r.status == 413, r
    assert "at most 3 mutations" in r.json["error"]
    assert c.state() == {}
    assert [x["status"] for x in c.push([mutation(i + 1, put("t", f"k{i}", {})) for i in range(3)])] == ["ok"] * 3


def test_default_max_push_mutations_is_1000(server):
    c = Client(server)
    r = c.push_raw([mutation(i + 1, put("t", f"k{i}", {})) for i in range(1001)])
    assert r.status == 413, r
    assert "at most 1000 mutations" in r.json["error"]
    assert len(c.push([mutation(i + 1, put("t", f"k{i}", {})) for i in range(1000)])) == 1000


def test_pull_over_max_unacked_is_400(start_server):
    server = start_server("--max-unacked", "5")
    c = Client(server)
    r = c.pull_raw(None, range(1, 7))
    assert r.status == 400, r
    assert "at most 5 unacked" in r.json["error"]
    assert c.pull_raw(None, range(1, 6)).status == 200


def test_default_max_unacked_is_10000(server):
    c = Client(server)
    r = c.pull_raw(None, range(1, 10002))
    assert r.status == 400, r
    assert "at most 10000 unacked" in r.json["error"]
    assert c.pull_raw(None, range(1, 10001)).status == 200


# --- files and start-up -------------------------------------------------------------------

def test_sqlite_files_are_owner_only_whatever_the_umask(db, start_server, tmp_path):
    if db.kind != "sqlite":
        pytest.skip("SQLite files")
    path = tmp_path / "owner-only.sqlite"
    old = os.umask(0o022)
    try:
        server = start_server(db_url=f"sqlite:{path}")
    finally:
        os.umask(old)
    Client(server).push([mutation(1, put("t", "k", {"v": 1}))])
    files = [path, tmp_path / "owner-only.sqlite-wal", tmp_path / "owner-only.sqlite-shm"]
    for f in files:
        assert f.exists(), f
        assert stat.S_IMODE(f.stat().st_mode) == 0o600, f"{f.name}: {oct(stat.S_IMODE(f.stat().st_mode))}"


def run_to_exit(args, db_url, timeout=30):
    return subprocess.run([server_binary(), "--port", "0", "--db", db_url, *args], capture_output=True,
                          text=True, timeout=timeout)


@pytest.mark.parametrize("host", ["0.0.0.0", "::", "192.0.2.1", "example.com"])
def test_open_server_on_non_loopback_host_refuses_to_start(db, host):
    r = run_to_exit(["--host", host], db.url)
    assert r.returncode != 0, r
    assert "--insecure-open" in r.stderr and "--tokens" in r.stderr, r.stderr
    assert not r.stdout.startswith("listening"), r.stdout


def test_open_server_starts_on_any_host_with_insecure_open_or_tokens(start_server, tokens):
    for args in (["--host", "0.0.0.0", "--insecure-open"], ["--host", "0.0.0.0", "--tokens", tokens]):
        server = start_server(*args)
        _, port = address(server)
        assert http("GET", f"http://127.0.0.1:{port}/health").status == 200
        server.stop()
    # Loopback needs neither.
    for host in ("127.0.0.1", "127.0.0.2", "localhost"):
        server = start_server("--host", host)
        assert http("GET", server.url + "/health").status == 200
        server.stop()
