"""A cursor knows its database, and a mutation id means one set of ops.

- A replaced database (a restore, a new or failed-over one): the server answers the client's
  old cursor with `reset`; the client drops the confirmed records the new database does not
  have (its subscribers see them go, cause `server`), keeps its pending mutation and sends it,
  and ends with exactly the new database's records.
- A copied store file: two stores with one client id make different mutations under the same
  id; the server applies the first and refuses the second as a reused id, visibly (the second
  store's mutation fails with that reason), instead of answering it `ok` for writes it never
  made.
"""

import os
import shutil
import subprocess
import uuid

import pytest

import optimist

OPTS = dict(pull_interval_ms=0, timeout_ms=5000, backoff_base_ms=20, backoff_max_ms=200)


@pytest.fixture
def other_db_url(db_url, tmp_path):
    """A second, empty database of the same kind as `db_url`."""
    if db_url.startswith("sqlite:"):
        yield f"sqlite:{tmp_path / 'replacement.sqlite'}"
        return
    base = os.environ["OPTIMIST_TEST_PG_URL"]
    name = "e2e_" + uuid.uuid4().hex[:12]
    psql = os.environ.get("OPTIMIST_PSQL", "psql")
    subprocess.run([psql, base, "-v", "ON_ERROR_STOP=1", "-qc", f"CREATE DATABASE {name}"], check=True, stdout=subprocess.DEVNULL)
    yield base.rsplit("/", 1)[0] + "/" + name
    subprocess.run([psql, base, "-qc", f"DROP DATABASE IF EXISTS {name} WITH (FORCE)"], stdout=subprocess.DEVNULL)


def synced_writer(url, ops):
    """Another device: writes `ops` through the library and waits until the server has them."""
    s = optimist.Store()
    try:
        s.sync_start(url, **OPTS)
        for op in ops:
            s.mutate([op])
        assert s.sync_wait_idle(30), s.sync_status()
    finally:
        s.close()


def copied_store_file(path, to):
    """A copy of a closed store file (with its write-ahead log, if any), as a user's backup
    tool or a second device's restore makes it."""
    for suffix in ("", "-wal", "-shm"):
        if os.path.exists(str(path) + suffix):
            shutil.copy(str(path) + suffix, str(to) + suffix)
    return to


def test_a_replaced_database_resets_the_client(server, other_db_url, tmp_path):
    synced_writer(server.url, [optimist.put("notes", "a", {"t": "old a"}), optimist.put("notes", "b", {"t": "old b"})])
    store = optimist.Store(tmp_path / "client.optimist")
    seen = []
    try:
        store.subscribe(lambda changes: seen.extend(changes), coll="notes")
        store.sync_start(server.url, **OPTS)
        assert store.sync_wait_idle(30), store.sync_status()
        assert store.get("notes", "a") == {"t": "old a"} and store.get("notes", "b") == {"t": "old b"}
        store.sync_stop()

        # The database is replaced by one that never had a or b; another device writes c there.
        server.stop()
        server.db_url = other_db_url
        server.restart()
        synced_writer(server.url, [optimist.put("notes", "c", {"t": "new c"})])

        # Offline meanwhile, this store edited b: a pending mutation, which must survive.
        mid = store.mutate([optimist.patch("notes", "b", {"edited": True})])
        del seen[:]
        store.sync_start(server.url, **OPTS)
        assert store.sync_wait_idle(30), store.sync_status()
        assert store.status(mid) == "committed"
        assert store.get("notes", "a") is None, "a record the new database never had stayed"
        assert store.get("notes", "c") == {"t": "new c"}
        # The patch applied on the new database's (missing) b: b is what the server made of it.
        assert server.everything() == {("notes", "c"): {"t": "new c"}, ("notes", "b"): {"edited": True}}
        assert store.confirmed("notes", "b") == {"edited": True}
        gone = [c for c in seen if c.key == "a"]
        assert gone and gone[-1].value is None and gone[-1].cause == "server", seen
    finally:
        store.close()


def test_a_copied_store_file_cannot_lose_writes(server, tmp_path):
    first = tmp_path / "first.optimist"
    store = optimist.Store(first)
    store.sync_start(server.url, **OPTS)
    store.mutate([optimist.put("c", "k", {"v": 0})])
    assert store.sync_wait_idle(30), store.sync_status()
    store.close()
    copy = copied_store_file(first, tmp_path / "copy.optimist")

    a, b = optimist.Store(first), optimist.Store(copy)
    try:
        assert a.client_id == b.client_id  # the copy's whole trouble
        ma = a.mutate([optimist.put("c", "from-a", {"v": 1})])
        mb = b.mutate([optimist.put("c", "from-b", {"v": 2})])
        assert ma == mb  # the same id, other ops
        a.sync_start(server.url, **OPTS)
        assert a.sync_wait_idle(30), a.sync_status()
        assert a.status(ma) == "committed"
        b.sync_start(server.url, **OPTS)
        assert b.sync_wait_idle(30), b.sync_status()
        # Refused, not answered ok: b's write is visibly not on the server.
        assert b.status(mb) == "rolled_back"
        assert b.get("c", "from-b") is None
        everything = server.everything()
        assert everything[("c", "from-a")] == {"v": 1} and ("c", "from-b") not in everything
    finally:
        a.close()
        b.close()


def test_a_copied_store_file_keeps_a_failed_write_with_its_reason(server, tmp_path):
    first = tmp_path / "first.optimist"
    store = optimist.Store(first)
    store.close()
    copy = copied_store_file(first, tmp_path / "copy.optimist")
    a, b = optimist.Store(first), optimist.Store(copy)
    try:
        ma = a.mutate([optimist.put("c", "x", {"by": "a"})])
        mb = b.mutate([optimist.put("c", "x", {"by": "b"})], policy="keep")
        assert ma == mb
        a.sync_start(server.url, **OPTS)
        assert a.sync_wait_idle(30), a.sync_status()
        b.sync_start(server.url, **OPTS)
        assert b.sync_wait_idle(30), b.sync_status()
        failed = b.mutations("failed")
        assert [m["id"] for m in failed] == [mb]
        assert "reused" in (failed[0]["last_error"] or ""), failed
        assert b.get("c", "x") == {"by": "b"}  # kept, pending, for the app to resolve
        assert server.everything()[("c", "x")] == {"by": "a"}
    finally:
        a.close()
        b.close()
