"""No poison pill through the real server: a server started with a small --max-body refuses a
push over it whole (413). docs/sync.md ("Narrowing"): the client halves the push down to one
mutation; the one the server will not take alone ends rejected with the server's reason (its
policy decides), and the mutations behind it arrive.
"""

import pytest

import optimist
from conftest import Server

MAX_BODY = 65536
WAIT_S = 60


@pytest.fixture
def small_server(db_url, tmp_path):
    s = Server(db_url, tmp_path / "server.log", "--max-body", str(MAX_BODY))
    yield s
    s.stop()


@pytest.mark.parametrize("policy", ["keep", "rollback"])
def test_a_mutation_over_the_servers_body_limit_does_not_stop_the_ones_behind_it(small_server, policy):
    store = optimist.Store()
    try:
        big = store.mutate([optimist.put("docs", "big", {"text": "x" * 100_000})], policy=policy)
        small = [store.mutate([optimist.put("logs", "k%02d" % i, {"n": i})]) for i in range(20)]
        store.sync_start(small_server.url, max_batch=100, pull_interval_ms=0)
        idle = store.sync_wait_idle(WAIT_S)
        status = store.sync_status()
        statuses = [store.status(m) for m in small]
        big_status = store.status(big)
        failed = store.mutations(status="failed")
    finally:
        store.close()
    assert idle, status
    # The 20 arrive at the server, committed here.
    assert statuses == ["committed"] * 20, status
    on_server = small_server.everything()
    assert {k: v for (c, k), v in on_server.items() if c == "logs"} == {"k%02d" % i: {"n": i} for i in range(20)}
    # The big one never reached it, and ended rejected with the server's reason.
    assert ("docs", "big") not in on_server
    assert status["pending"] == 0 and status["inflight"] == 0, status
    if policy == "keep":
        assert big_status == "failed"
        assert [m["id"] for m in failed] == [big]
        assert str(MAX_BODY) in (failed[0]["last_error"] or ""), failed
        assert status["failed"] == 1, status
    else:
        assert big_status == "rolled_back"
        assert failed == [] and status["failed"] == 0, status
