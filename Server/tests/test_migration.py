"""A database written by an earlier server (schema version 1: no identity, no digests, no
timestamps) is upgraded in place: its records, seqs and outcomes stay; old cursors reset."""

import sqlite3

from conftest import Client, cursor_seq, incr, mutation, put

SQLITE_V1 = """
CREATE TABLE spaces (user_id TEXT PRIMARY KEY, seq INTEGER NOT NULL);
CREATE TABLE records (user_id TEXT NOT NULL, coll TEXT NOT NULL, key TEXT NOT NULL, value TEXT,
    version INTEGER NOT NULL, seq INTEGER NOT NULL, PRIMARY KEY (user_id, coll, key));
CREATE INDEX records_by_seq ON records (user_id, seq);
CREATE TABLE outcomes (user_id TEXT NOT NULL, client_id TEXT NOT NULL, mutation_id INTEGER NOT NULL,
    status TEXT NOT NULL, retry INTEGER NOT NULL, error TEXT, seq INTEGER NOT NULL,
    PRIMARY KEY (user_id, client_id, mutation_id));
PRAGMA user_version = 1;
"""

POSTGRES_V1 = """
CREATE TABLE optimist_schema (version INTEGER NOT NULL);
CREATE TABLE spaces (user_id TEXT COLLATE "C" PRIMARY KEY, seq BIGINT NOT NULL);
CREATE TABLE records (user_id TEXT COLLATE "C" NOT NULL, coll TEXT COLLATE "C" NOT NULL, key TEXT COLLATE "C" NOT NULL,
    value TEXT, version BIGINT NOT NULL, seq BIGINT NOT NULL, PRIMARY KEY (user_id, coll, key));
CREATE INDEX records_by_seq ON records (user_id, seq);
CREATE TABLE outcomes (user_id TEXT COLLATE "C" NOT NULL, client_id TEXT COLLATE "C" NOT NULL, mutation_id BIGINT NOT NULL,
    status TEXT NOT NULL, retry BIGINT NOT NULL, error TEXT, seq BIGINT NOT NULL,
    PRIMARY KEY (user_id, client_id, mutation_id));
INSERT INTO optimist_schema (version) VALUES (1);
"""

ROWS = """
INSERT INTO spaces VALUES ('', 2);
INSERT INTO records VALUES ('', 'c', 'n', '{"n":1}', 1, 1);
INSERT INTO records VALUES ('', 'c', 'gone', NULL, 2, 2);
INSERT INTO outcomes VALUES ('', 'client', 1, 'ok', 0, NULL, 1);
INSERT INTO outcomes VALUES ('', 'client', 2, 'ok', 0, NULL, 2);
"""


def write_v1(db):
    if db.kind == "sqlite":
        conn = sqlite3.connect(db.url.split(":", 1)[1])
        conn.executescript(SQLITE_V1 + ROWS)
        conn.close()
    else:
        db._psql(db.url, POSTGRES_V1 + ROWS)


def test_a_version_1_database_is_upgraded_in_place(db, start_server):
    write_v1(db)
    server = start_server()
    c = Client(server, client_id="client")
    page = c.pull()
    assert cursor_seq(page["cursor"]) == 2 and "reset" not in page
    assert page["changes"] == [put("c", "n", {"n": 1}), {"op": "delete", "coll": "c", "key": "gone"}]
    # The cursors the old server issued (plain seqs) are not this database's: start over.
    assert c.pull("2")["reset"] is True
    # Outcomes recorded without a digest count as matching: the recorded answer, not applied again.
    results = c.push([mutation(1, incr("c", "n", "n", 1))])
    assert results == [{"id": 1, "status": "ok", "ops": [put("c", "n", {"n": 1})]}]
    assert c.pull(unacked=[2], digests=["0" * 32])["outcomes"] == [{"id": 2, "status": "ok", "retry": 0}]
    # New writes go on from the old seq.
    c.push([mutation(3, incr("c", "n", "n", 1))])
    later = c.pull(page["cursor"])
    assert later["changes"] == [put("c", "n", {"n": 2})] and cursor_seq(later["cursor"]) == 3
    # Upgraded once: a restart finds the same identity.
    server.terminate()
    assert "reset" not in Client(start_server(), client_id="client").pull(later["cursor"])
