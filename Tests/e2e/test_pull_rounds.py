"""Pull rounds against the real server: the client only ever holds states the server had.

docs/sync.md: pages a pull reply says `more` after are staged, and the round's last page
applies them all at once. With --page-size 1 the server's page cut shows the classic mix: a
mutation M writes A and B, a later N rewrites A (A's change moves past the cut), so the first
page carries B from M without A. A client that applied pages as they came held B without A
until the next page; this one never does. Checked before every exchange the sync makes (the
previous page has been applied by then) through a transport of the test's own, and in every
listener call.

The second test takes 3,000 records of 20 KB to a fresh client through pages of 100 and
prints how long it took (no speed assertion: a generous limit only a hang would reach).
"""

import json
import time
import urllib.error
import urllib.request
import uuid

import pytest

import optimist
from conftest import Server


def _post(url, path, body):
    req = urllib.request.Request(url + path, data=json.dumps(body).encode(), headers={"Content-Type": "application/json"})
    with urllib.request.urlopen(req, timeout=60) as r:
        return json.loads(r.read())


def _push(url, client, first_id, mutations):
    """Pushes `mutations` (lists of ops as dicts) with ids from `first_id`; all must be ok."""
    body = {"protocol": 1, "client_id": client,
            "mutations": [{"id": first_id + n, "retry": 0, "ops": ops} for n, ops in enumerate(mutations)]}
    reply = _post(url, "/push", body)
    assert [r["status"] for r in reply["results"]] == ["ok"] * len(mutations), reply


def _transport(before_each):
    """A sync transport over urllib that calls `before_each()` before every request."""
    def send(endpoint, url, body, headers, timeout_ms):
        before_each()
        data = body.encode() if isinstance(body, str) else body
        req = urllib.request.Request(url, data=data, headers=dict(headers, **{"Content-Type": "application/json"}))
        try:
            with urllib.request.urlopen(req, timeout=timeout_ms / 1000) as r:
                return r.status, r.read()
        except urllib.error.HTTPError as e:
            return e.code, e.read()
    return send


@pytest.fixture
def paged_server(db_url, tmp_path, request):
    s = Server(db_url, tmp_path / "server.log", "--page-size", str(request.param))
    yield s
    s.stop()


@pytest.mark.parametrize("paged_server", [1], indirect=True)
def test_a_page_cut_never_shows_b_without_a(paged_server, tmp_path):
    url = paged_server.url
    writer = str(uuid.uuid4())
    _push(url, writer, 1, [[{"op": "put", "coll": "docs", "key": "A", "value": {"v": 1}},
                            {"op": "put", "coll": "docs", "key": "B", "value": {"v": 1}}]])   # M
    _push(url, writer, 2, [[{"op": "put", "coll": "docs", "key": "A", "value": {"v": 2}}]])   # N
    # The server's pages with one change each: B (from M) first, then A (from N).
    assert [(c["key"], c["value"]) for c in paged_server.changes()] == [("B", {"v": 1}), ("A", {"v": 2})]

    store = optimist.Store(str(tmp_path / "client.db"))
    seen, heard = [], []

    def look():
        seen.append((store.confirmed("docs", "A"), store.confirmed("docs", "B")))

    def listener(changes):
        heard.append(sorted((c.key, c.value, c.cause) for c in changes))

    had = [(None, None), ({"v": 2}, {"v": 1})]
    try:
        store.subscribe(listener, coll="docs")
        store.sync_start(url, pull_interval_ms=0, transport=_transport(look))
        assert store.sync_wait_idle(30), store.sync_status()
        status = store.sync_status()
        look()
    finally:
        store.close()
    assert status["pulled"] == 2, status
    assert len(seen) >= 3, seen  # before each of the two pulls, and at the end
    mixes = [s for s in seen if s not in had]
    assert not mixes, f"the client held states the server never had: {mixes} (all: {seen})"
    assert seen[-1] == had[1]
    assert heard == [[("A", {"v": 2}, "server"), ("B", {"v": 1}, "server")]], heard


@pytest.mark.parametrize("paged_server", [5000], indirect=True)  # the default: pages cut by bytes
def test_3000_records_of_20_kb_reach_a_fresh_client(paged_server, tmp_path):
    url = paged_server.url
    writer = str(uuid.uuid4())
    pad = "x" * 20_000
    n, per_push = 3_000, 40
    for start in range(0, n, per_push):
        _push(url, writer, start + 1, [[{"op": "put", "coll": "big", "key": f"k{i:05d}", "value": {"i": i, "pad": pad}}]
                                       for i in range(start, min(n, start + per_push))])
    store = optimist.Store(str(tmp_path / "fresh.db"))
    try:
        started = time.monotonic()
        store.sync_start(url, pull_interval_ms=0)
        assert store.sync_wait_idle(600), store.sync_status()
        took = time.monotonic() - started
        status = store.sync_status()
        rows = store.scan("big", "")
    finally:
        store.close()
    print(f"\n3000 x 20 KB to a fresh client (the server's default page bounds): {took:.2f} s ({status['pulled']} changes pulled)")
    assert status["pulled"] == n, status
    assert len(rows) == n
    assert all(len(value["pad"]) == 20_000 for _, value in rows[:10])
