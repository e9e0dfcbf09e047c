"""The URLSession transport (OptimistURLSession, through FoundationNetworking here; the default
on Apple platforms) against the reference server on SQLite and PostgreSQL: a Swift client
(Tests/URLSessionClient) syncs two stores through their own URLSessionTransport; every mutation
of the first is committed, and the second pulls every record. Its event stream, against a
loopback server with GET /events (Bindings/python/tests/eventserver.py): a poke pulls."""

import json
import os
import subprocess
import sys
import threading

import pytest

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(os.path.dirname(HERE))
# The loopback server with an event stream that the Python package's tests use too.
sys.path.insert(0, os.path.join(ROOT, "Bindings", "python", "tests"))
from eventserver import EventServer  # noqa: E402


@pytest.fixture(scope="session")
def urlsession_client():
    """The client binary: OPTIMIST_URLSESSION_CLIENT, else built here (debug)."""
    given = os.environ.get("OPTIMIST_URLSESSION_CLIENT")
    if given:
        return given
    subprocess.run(["swift", "build", "--package-path", ROOT, "--product", "optimist-urlsession-client"], check=True,
                   stdout=subprocess.DEVNULL)
    bin_path = subprocess.run(["swift", "build", "--package-path", ROOT, "--show-bin-path"], check=True,
                              capture_output=True, text=True).stdout.strip()
    return os.path.join(bin_path, "optimist-urlsession-client")


def test_urlsession_transport_pushes_and_pulls(server, urlsession_client):
    done = subprocess.run([urlsession_client, f"http://127.0.0.1:{server.port}", "60"], capture_output=True, text=True,
                          timeout=120)
    assert done.returncode == 0, (done.stdout, done.stderr[-2000:])
    result = json.loads(done.stdout.strip().splitlines()[-1])
    assert result["idle"] is True and result["committed"] == 60 and result["seen"] == 60, result
    assert server.everything()[("notes", "n59")] == {"i": 59}


def test_urlsession_transport_reports_a_refused_connection(urlsession_client):
    # Nothing listens on the discard port: the client's sync never gets idle, and says so.
    done = subprocess.run([urlsession_client, "http://127.0.0.1:9", "1", "2"], capture_output=True, text=True, timeout=120)
    assert done.returncode == 1, (done.stdout, done.stderr[-2000:])
    result = json.loads(done.stdout.strip().splitlines()[-1])
    assert result["committed"] == 0 and result["state"] in ("offline", "backoff"), result


def test_urlsession_event_stream_pulls_on_a_poke(urlsession_client):
    srv = EventServer()
    try:
        proc = subprocess.Popen([urlsession_client, "events", srv.url, "30"], stdout=subprocess.PIPE,
                                stderr=subprocess.PIPE, text=True)
        killer = threading.Timer(120, proc.kill)
        killer.start()
        try:
            first = proc.stdout.readline()
            assert json.loads(first) == {"live": True}, (first, proc.stderr.read()[-2000:] if not first else "")
            # The client pulls every hour: only the stream can bring this within its wait.
            srv.write("notes", "poked", {"v": 1})
            srv.poke()
            out, err = proc.communicate()
        finally:
            killer.cancel()
        assert proc.returncode == 0, (out, err[-2000:])
        assert json.loads(out.strip().splitlines()[-1]) == {"live": True, "poked": True, "stream": "off"}
        assert srv.stream_count(200) == 1
        sent = srv.streams[0]
        assert sent["Accept"] == "text/event-stream"
        assert srv.violations == []
    finally:
        srv.close()
