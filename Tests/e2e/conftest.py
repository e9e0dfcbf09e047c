"""Fixtures for the end-to-end tests: the reference server, real clients through the library.

The server binary comes from OPTIMIST_SERVER_BIN and the library from OPTIMIST_LIBRARY
(Tests/e2e/run.sh sets both, building what is missing); PostgreSQL from OPTIMIST_TEST_PG_URL
(the PostgreSQL runs are skipped, visibly, only when it is unset).
"""

import json
import os
import shutil
import subprocess
import sys
import threading
import time
import urllib.request
import uuid

import pytest

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(os.path.dirname(HERE))
sys.path.insert(0, HERE)

from faultproxy import FaultProxy  # noqa: E402


def _require(name):
    value = os.environ.get(name)
    if not value:
        pytest.fail(f"{name} is not set (Tests/e2e/run.sh sets it)", pytrace=False)
    return value


class Server:
    """A running optimist-server, on a port it picked itself."""

    def __init__(self, db_url, log_path, *args):
        self.db_url = db_url
        self.log_path = log_path
        self.args = list(args)
        self.port = 0
        self.start()

    def start(self):
        self._log = open(self.log_path, "ab")
        argv = [_require("OPTIMIST_SERVER_BIN"), "--port", str(self.port), "--db", self.db_url, *self.args]
        self.proc = subprocess.Popen(argv, stdout=subprocess.PIPE, stderr=self._log)
        line = b""
        timer = threading.Timer(60, self.proc.kill)
        timer.start()
        try:
            while True:
                line = self.proc.stdout.readline()
                if not line or line.startswith(b"listening on "):
                    break
        finally:
            timer.cancel()
        if not line.startswith(b"listening on "):
            self.proc.kill()
            self.proc.wait()
            self._log.close()
            raise RuntimeError(f"optimist-server did not start: {open(self.log_path, 'rb').read()[-2000:]!r}")
        self.url = line.decode().split()[-1]
        self.port = int(self.url.rsplit(":", 1)[1])
        # Keep reading stdout so the server never blocks on a full pipe.
        threading.Thread(target=self.proc.stdout.read, daemon=True).start()

    def kill(self):
        """SIGKILL: no draining, no clean close of the database."""
        self.proc.kill()
        self.proc.wait()
        self._log.close()

    def restart(self, attempts=20):
        """Starts the server again on the same port and database (after kill or stop); the
        port may take a moment to be free again."""
        for i in range(attempts):
            try:
                self.start()
                return self
            except RuntimeError:
                if i == attempts - 1:
                    raise
                time.sleep(0.25)

    def stop(self):
        if self.proc.poll() is None:
            self.proc.terminate()
            try:
                self.proc.wait(timeout=30)
            except subprocess.TimeoutExpired:
                self.proc.kill()
                self.proc.wait()
        self._log.close()

    def changes(self, headers=None):
        """Every change a new client pulls, in the server's order, following `more` to the end."""
        cursor, out, client = None, [], str(uuid.uuid4())
        for _ in range(100_000):
            body = json.dumps({"protocol": 1, "client_id": client, "cursor": cursor, "unacked": []}).encode()
            req = urllib.request.Request(self.url + "/pull", data=body, headers={"Content-Type": "application/json", **(headers or {})})
            with urllib.request.urlopen(req, timeout=30) as r:
                reply = json.loads(r.read())
            out.extend(reply["changes"])
            cursor = reply["cursor"]
            if not reply["more"]:
                return out
        raise AssertionError("the server never stopped saying more")

    def everything(self, headers=None):
        """The server's records as one new client sees them: {(coll, key): value}."""
        out = {}
        for c in self.changes(headers):
            if c["op"] == "put":
                out[(c["coll"], c["key"])] = c["value"]
            else:
                out.pop((c["coll"], c["key"]), None)
        return out


def wait_for(predicate, timeout_s=20):
    """Polls `predicate` until it holds or `timeout_s` passes; returns its last answer."""
    deadline = time.monotonic() + timeout_s
    while time.monotonic() < deadline:
        if predicate():
            return True
        time.sleep(0.01)
    return predicate()


@pytest.fixture(params=["sqlite", "postgres"])
def db_url(request, tmp_path):
    if request.param == "sqlite":
        yield f"sqlite:{tmp_path / 'server.sqlite'}"
        return
    base = os.environ.get("OPTIMIST_TEST_PG_URL")
    if not base:
        pytest.skip("OPTIMIST_TEST_PG_URL is not set (Tests/e2e/run.sh starts a PostgreSQL and sets it)")
    name = "e2e_" + uuid.uuid4().hex[:12]
    psql = os.environ.get("OPTIMIST_PSQL", "psql")
    subprocess.run([psql, base, "-v", "ON_ERROR_STOP=1", "-qc", f"CREATE DATABASE {name}"], check=True, stdout=subprocess.DEVNULL)
    yield base.rsplit("/", 1)[0] + "/" + name
    subprocess.run([psql, base, "-qc", f"DROP DATABASE IF EXISTS {name} WITH (FORCE)"], stdout=subprocess.DEVNULL)


@pytest.fixture
def server(db_url, tmp_path):
    s = Server(db_url, tmp_path / "server.log")
    yield s
    s.stop()


@pytest.fixture
def proxy(server):
    """A FaultProxy in front of `server` (pass-through until told otherwise)."""
    seed = int(os.environ.get("OPTIMIST_E2E_SEED", "1"))
    p = FaultProxy(server.port, seed=seed).start()
    yield p
    p.close()


@pytest.fixture(scope="session")
def c_client(tmp_path_factory):
    """Tests/e2e/client.c compiled against OPTIMIST_LIBRARY (the very file Python loads)."""
    library = os.path.realpath(_require("OPTIMIST_LIBRARY"))
    cc = os.environ.get("CC") or shutil.which("cc") or shutil.which("gcc") or shutil.which("clang")
    if not cc:
        pytest.fail("no C compiler (cc) on PATH: the end-to-end suite builds a C client", pytrace=False)
    out = tmp_path_factory.mktemp("c-client")
    # The linker wants liboptimist.so and the loader the soname, liboptimist.so.1: both point
    # at the library under test, whatever its file is called.
    libdir = out / "lib"
    libdir.mkdir()
    for name in ("liboptimist.so", "liboptimist.so.1"):
        os.symlink(library, libdir / name)
    exe = out / "client"
    cmd = [cc, "-std=c11", "-O2", "-Wall", "-Wextra", "-I", os.path.join(ROOT, "Include"),
           os.path.join(HERE, "client.c"), "-L", str(libdir), "-loptimist", f"-Wl,-rpath,{libdir}", "-o", str(exe)]
    r = subprocess.run(cmd, capture_output=True, text=True, timeout=120)
    if r.returncode != 0:
        pytest.fail(f"compiling the C client failed: {' '.join(cmd)}\n{r.stderr}", pytrace=False)
    return str(exe)
