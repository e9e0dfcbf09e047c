"""Fixtures for the reference server's tests.

Builds nothing: the server binary comes from OPTIMIST_SERVER_BIN, the PostgreSQL server from
OPTIMIST_TEST_PG_URL (Server/run-tests.sh sets both). Every test runs once per database; the
PostgreSQL run is skipped, visibly, only when OPTIMIST_TEST_PG_URL is unset.
"""

import glob
import json
import os
import shutil
import signal
import subprocess
import threading
import urllib.error
import urllib.request
import uuid

import pytest

STARTUP_TIMEOUT_S = 60


def server_binary():
    path = os.environ.get("OPTIMIST_SERVER_BIN")
    if not path:
        pytest.fail("OPTIMIST_SERVER_BIN is not set: point it at a built optimist-server", pytrace=False)
    if not os.access(path, os.X_OK):
        pytest.fail(f"OPTIMIST_SERVER_BIN={path} is not an executable", pytrace=False)
    return path


def psql_binary():
    found = shutil.which("psql") or next(iter(sorted(glob.glob("/usr/lib/postgresql/*/bin/psql"), reverse=True)), None)
    if not found:
        pytest.fail("psql not found: the PostgreSQL tests create a database per test with it", pytrace=False)
    return found


class Database:
    """One empty database for one test: a SQLite file or a fresh PostgreSQL database."""

    def __init__(self, kind, tmp_path):
        self.kind = kind
        if kind == "sqlite":
            self.url = f"sqlite:{tmp_path / 'server.sqlite'}"
            self._drop = None
        else:
            base = os.environ["OPTIMIST_TEST_PG_URL"]
            name = "t_" + uuid.uuid4().hex[:16]
            self._psql(base, f"CREATE DATABASE {name}")
            head, _, _ = base.rpartition("/")
            self.url = f"{head}/{name}"
            self._drop = lambda: self._psql(base, f"DROP DATABASE IF EXISTS {name} WITH (FORCE)")

    @staticmethod
    def _psql(url, sql):
        subprocess.run([psql_binary(), url, "-v", "ON_ERROR_STOP=1", "-qc", sql], check=True,
                       stdout=subprocess.DEVNULL, timeout=60)

    def close(self):
        if self._drop:
            self._drop()


def pytest_addoption(parser):
    parser.addoption("--store", choices=["sqlite", "postgres", "both"], default="both",
                     help="run the tests against this database only (default: both)")


def pytest_collection_modifyitems(config, items):
    store = config.getoption("--store")
    if store == "both":
        return
    keep, drop = [], []
    for item in items:
        param = getattr(item, "callspec", None) and item.callspec.params.get("db")
        (drop if param and param != store else keep).append(item)
    if drop:
        config.hook.pytest_deselected(items=drop)
        items[:] = keep


@pytest.fixture(params=["sqlite", "postgres"])
def db(request, tmp_path):
    if request.param == "postgres" and not os.environ.get("OPTIMIST_TEST_PG_URL"):
        pytest.skip("OPTIMIST_TEST_PG_URL is not set (Server/run-tests.sh starts a PostgreSQL and sets it)")
    database = Database(request.param, tmp_path)
    yield database
    database.close()


class Server:
    """A running optimist-server process."""

    def __init__(self, db_url, args, log_path):
        self.db_url = db_url
        self.args = list(args)
        self.log_path = log_path
        self.proc = None
        self.url = None

    def start(self):
        self.log = open(self.log_path, "ab")
        self.proc = subprocess.Popen(
            [server_binary(), "--port", "0", "--db", self.db_url, *self.args],
            stdout=subprocess.PIPE, stderr=self.log)
        line = read_line_with_timeout(self.proc.stdout, STARTUP_TIMEOUT_S)
        if not line.startswith("listening on "):
            self.proc.kill()
            raise AssertionError(f"server did not start (first line {line!r}); log:\n{self.read_log()}")
        self.url = line.split("listening on ", 1)[1].strip()
        return self

    def read_log(self):
        with open(self.log_path, "rb") as f:
            return f.read().decode("utf-8", "replace")

    def terminate(self, sig=signal.SIGTERM, timeout=30):
        """Sends `sig` and returns the exit code."""
        if self.proc.poll() is None:
            self.proc.send_signal(sig)
        code = self.proc.wait(timeout=timeout)
        self.log.close()
        return code

    def stop(self):
        if self.proc and self.proc.poll() is None:
            self.proc.kill()
            self.proc.wait(timeout=30)
        if self.proc:
            self.log.close()


def read_line_with_timeout(stream, timeout):
    result = []
    t = threading.Thread(target=lambda: result.append(stream.readline().decode("utf-8", "replace")), daemon=True)
    t.start()
    t.join(timeout)
    return result[0] if result else ""


@pytest.fixture
def start_server(db, tmp_path):
    """start_server(*args, db_url=None) -> Server: starts a server on the test's database."""
    servers = []

    def start(*args, db_url=None):
        s = Server(db_url or db.url, args, tmp_path / f"server-{len(servers)}.log")
        servers.append(s)
        return s.start()

    yield start
    for s in servers:
        s.stop()


@pytest.fixture
def server(start_server):
    return start_server()


class Reply:
    def __init__(self, status, body, headers):
        self.status = status
        self.raw = body
        self.headers = headers
        try:
            self.json = json.loads(body) if body else None
        except ValueError:
            self.json = None

    def __repr__(self):
        return f"Reply({self.status}, {self.raw[:300]!r})"


def http(method, url, body=None, headers=None, timeout=60):
    """One HTTP request; `body` is a dict/list (sent as JSON) or bytes. Never raises on a status."""
    data = body if isinstance(body, (bytes, type(None))) else json.dumps(body).encode()
    req = urllib.request.Request(url, data=data, method=method)
    if data is not None and not (headers and "Content-Type" in headers):
        req.add_header("Content-Type", "application/json")
    for k, v in (headers or {}).items():
        req.add_header(k, v)
    try:
        with urllib.request.urlopen(req, timeout=timeout) as r:
            return Reply(r.status, r.read(), dict(r.headers))
    except urllib.error.HTTPError as e:
        return Reply(e.code, e.read(), dict(e.headers))


class Client:
    """A protocol client of one (user, client id), speaking protocol 1 unless told."""

    def __init__(self, server, client_id=None, token=None, protocol=1):
        self.server = server
        self.client_id = client_id or str(uuid.uuid4())
        self.headers = {"Authorization": f"Bearer {token}"} if token else {}
        self.protocol = protocol

    def push_raw(self, mutations, client_id=None):
        return http("POST", self.server.url + "/push",
                    {"protocol": self.protocol, "client_id": client_id or self.client_id, "mutations": mutations}, self.headers)

    def push(self, mutations):
        r = self.push_raw(mutations)
        assert r.status == 200, r
        return r.json["results"]

    def pull_raw(self, cursor=None, unacked=(), digests=None):
        body = {"protocol": self.protocol, "client_id": self.client_id, "cursor": cursor, "unacked": list(unacked)}
        if digests is not None:
            body["unacked_digests"] = list(digests)
        return http("POST", self.server.url + "/pull", body, self.headers)

    def pull(self, cursor=None, unacked=(), digests=None):
        r = self.pull_raw(cursor, unacked, digests)
        assert r.status == 200, r
        return r.json

    def pages(self, cursor=None, unacked=()):
        """Every page of one pull round from `cursor`, following `more` to the end."""
        pages = []
        while True:
            page = self.pull(cursor, unacked)
            pages.append(page)
            cursor = page["cursor"]
            if not page["more"]:
                return pages

    def state(self):
        """Every record this user sees: {(coll, key): value}, following `more` to the end."""
        records, cursor = {}, None
        while True:
            page = self.pull(cursor)
            for c in page["changes"]:
                if c["op"] == "put":
                    records[(c["coll"], c["key"])] = c["value"]
                else:
                    records.pop((c["coll"], c["key"]), None)
            cursor = page["cursor"]
            if not page["more"]:
                return records


def cursor_seq(cursor):
    """The seq part of a cursor ("<database identity>.<seq>"); tests may look inside it."""
    identity, _, seq = cursor.rpartition(".")
    assert len(identity) == 32 and all(c in "0123456789abcdef" for c in identity), cursor
    return int(seq)


def change_text(change):
    """A pulled change as the JSON text the server wrote it in (canonical: members sorted, no
    spaces; the tests' values are ASCII strings and integers, written alike by both)."""
    return json.dumps(change, sort_keys=True, separators=(",", ":"), ensure_ascii=False)


def ops_digest(ops):
    """OpsDigest of a mutation's ops (Sources/OptimistProtocol/Digest.swift), over their
    canonical JSON text."""
    text = json.dumps(ops, sort_keys=True, separators=(",", ":"), ensure_ascii=False).encode()
    mask = (1 << 64) - 1
    a, b = 0xcbf29ce484222325, 0x6a09e667f3bcc909 ^ len(text)
    for byte in text:
        a = ((a ^ byte) * 0x100000001b3) & mask
        b = ((b ^ byte) * 0x9e3779b97f4a7c15) & mask
        b ^= b >> 31
    return f"{a:016x}{b:016x}"


def put(coll, key, value):
    return {"op": "put", "coll": coll, "key": key, "value": value}


def patch(coll, key, value):
    return {"op": "patch", "coll": coll, "key": key, "value": value}


def delete(coll, key):
    return {"op": "delete", "coll": coll, "key": key}


def incr(coll, key, field, delta):
    return {"op": "incr", "coll": coll, "key": key, "field": field, "delta": delta}


def mutation(id, *ops, retry=0):
    return {"id": id, "retry": retry, "ops": list(ops)}
