"""Database identity: a cursor names the database it came from; a cursor this database did not
issue (another database, an old or garbled one, a seq it never reached) is answered from the
start with "reset": true."""

import os

import pytest

from conftest import Client, Database, cursor_seq, delete, mutation, put


def test_cursors_carry_the_database_identity(start_server):
    server = start_server()
    c = Client(server)
    empty = c.pull()
    assert cursor_seq(empty["cursor"]) == 0 and "reset" not in empty
    c.push([mutation(1, put("a", "k", {}))])
    page = c.pull(empty["cursor"])
    assert cursor_seq(page["cursor"]) == 1 and "reset" not in page
    assert page["cursor"].rpartition(".")[0] == empty["cursor"].rpartition(".")[0]
    # The identity belongs to the database, not the process: a restart keeps it.
    server.terminate()
    again = Client(start_server()).pull(page["cursor"])
    assert again["cursor"] == page["cursor"] and again["changes"] == [] and "reset" not in again


def test_a_cursor_from_another_database_resets(db, start_server, tmp_path):
    first = start_server()
    c = Client(first, client_id="c1")
    c.push([mutation(1, put("old", "k", {}))])
    old_cursor = c.pull()["cursor"]
    first.terminate()
    # A second database that has gone further than the first: the seq alone would pass.
    other = Database(db.kind, tmp_path / "other") if db.kind == "postgres" else None
    if other is None:
        os.makedirs(tmp_path / "other")
        url = f"sqlite:{tmp_path / 'other' / 'server.sqlite'}"
    else:
        url = other.url
    try:
        second = start_server(db_url=url)
        c2 = Client(second, client_id="c1")
        c2.push([mutation(i, put("new", f"k{i}", {})) for i in range(1, 6)])
        page = c2.pull(old_cursor)
        assert page["reset"] is True
        assert sorted(ch["key"] for ch in page["changes"]) == [f"k{i}" for i in range(1, 6)]
        assert cursor_seq(page["cursor"]) == 5 and page["cursor"] != old_cursor
        # From the new cursor on, no more reset.
        assert "reset" not in c2.pull(page["cursor"])
        second.terminate()
    finally:
        if other:
            other.close()


def test_a_replaced_sqlite_file_resets(db, start_server, tmp_path):
    if db.kind != "sqlite":
        pytest.skip("replaces the SQLite file")
    server = start_server()
    c = Client(server)
    c.push([mutation(1, put("x", "k", {"v": 1}))])
    cursor = c.pull()["cursor"]
    server.terminate()
    path = db.url.split(":", 1)[1]
    for suffix in ("", "-wal", "-shm"):
        if os.path.exists(path + suffix):
            os.remove(path + suffix)
    server = start_server()
    c = Client(server)
    c.push([mutation(i, put("y", f"k{i}", {})) for i in range(1, 4)])
    page = c.pull(cursor)
    assert page["reset"] is True and page["more"] is False
    assert sorted(ch["key"] for ch in page["changes"]) == ["k1", "k2", "k3"]


@pytest.mark.parametrize("cursor", [
    "1",                    # the old form, a plain seq
    "abc",
    "-1",
    "",
    "0123456789abcdef0123456789abcdef",
    "0123456789abcdef0123456789abcdef.x",
    "0123456789abcdef0123456789abcdef.1",   # another database's identity
])
def test_a_cursor_not_issued_here_resets(server, cursor):
    c = Client(server)
    c.push([mutation(1, put("z", "k", {}))])
    page = c.pull(cursor)
    assert page["reset"] is True
    assert page["changes"] == [put("z", "k", {})]
    assert cursor_seq(page["cursor"]) == 1


def test_a_cursor_past_the_space_resets(server):
    c = Client(server)
    c.push([mutation(1, put("z", "k", {}))])
    identity = c.pull()["cursor"].rpartition(".")[0]
    page = c.pull(f"{identity}.2")
    assert page["reset"] is True and page["changes"] == [put("z", "k", {})]
    # Its own seq is fine.
    assert "reset" not in c.pull(f"{identity}.1")


def test_a_reset_over_several_pages(start_server):
    server = start_server("--page-size", "2")
    c = Client(server)
    c.push([mutation(i, put("p", f"k{i}", {})) for i in range(1, 6)])
    c.push([mutation(6, delete("p", "k5"))])
    first = c.pull("stale", unacked=[6])
    assert first["reset"] is True and first["more"] is True and first["outcomes"] == []
    pages = [first] + c.pages(first["cursor"], unacked=[6])
    assert all("reset" not in p for p in pages[1:])
    assert [ch["key"] for p in pages for ch in p["changes"]] == ["k1", "k2", "k3", "k4", "k5"]
    assert pages[-1]["outcomes"] == [{"id": 6, "status": "ok", "retry": 0}]
