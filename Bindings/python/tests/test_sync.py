"""The background sync through a Python transport that plays a small protocol server in
the test (:class:`FakeServer`): push order, pulls, exactly once across a lost reply,
rejections, 401, garbage, backoff, threads, status, misuse, and close during a blocked call.

Nothing here asserts how fast anything is: waits are deadlines that only fail a test that
would otherwise hang.
"""

import gc
import json
import logging
import threading
import time
import weakref

import pytest

import optimist
from optimist import _sync, delete, incr, patch, put

#: How long any wait may take before the test fails (generous: slow CI machines).
DEADLINE = 30.0
#: A time so far ahead that a mutation backed off to it never comes due during a test.
FAR_FUTURE_MS = 1 << 60


def wait_for(predicate, timeout=DEADLINE):
    """Polls ``predicate`` until it is true or ``timeout`` seconds passed; returns its value."""
    end = time.monotonic() + timeout
    while time.monotonic() < end:
        if predicate():
            return True
        time.sleep(0.005)
    return bool(predicate())


def merge_patch(target, patch_value):
    """RFC 7396 on dicts."""
    out = dict(target)
    for k, v in patch_value.items():
        if v is None:
            out.pop(k, None)
        elif isinstance(v, dict):
            out[k] = merge_patch(out[k] if isinstance(out.get(k), dict) else {}, v)
        else:
            out[k] = v
    return out


class FakeServer:
    """The wire protocol over a dict of records, called as the sync's transport: version 2
    (what the library sends) without shared spaces, so it never answers a ``drop``.

    It keeps per-record change sequence numbers (the cursor is the last one), each client's
    recorded outcomes (exactly once: a re-sent ``(client_id, id)`` gets its recorded outcome
    back, a rejected one is processed again only with a higher ``retry``), and every request.

    Knobs: ``token`` (requests need ``Authorization: Bearer <token>``, else 401), ``page`` (at
    most that many changes per pull, ``more`` set), ``reject(mutation) -> error or None``,
    ``drop_reply`` (ids whose push is applied and then answered with no reply: the transport
    raises; or with ``drop_with``, e.g. a 5xx), ``fault(endpoint, request) -> reply or None``
    (replaces the answer; may raise).
    """

    def __init__(self, token=None, page=0):
        self.lock = threading.RLock()
        self.records = {}
        self.changed_at = {}
        self.seq = 0
        self.outcomes = {}
        self.applied = []        # (client_id, id) each time a mutation's ops took effect
        self.sent = []           # mutation ids in the order pushes carried them
        self.requests = []       # (endpoint, request dict, headers dict, url)
        self.violations = []     # protocol rules the client broke
        self.token = token
        self.page = page
        self.reject = lambda m: None
        self.drop_reply = set()
        self.drop_with = None
        self.fault = None

    # The server's own writes (another device).
    def write(self, coll, key, value):
        with self.lock:
            self._commit({(coll, key): value})

    def value(self, coll, key):
        with self.lock:
            return self.records.get((coll, key))

    def pulls(self):
        with self.lock:
            return [r for e, r, _, _ in self.requests if e == "pull"]

    # The transport.
    def __call__(self, endpoint, url, body, headers, timeout_ms):
        request = json.loads(body)
        with self.lock:
            self.requests.append((endpoint, request, dict(headers), url))
            if request.get("protocol") != 2 or request.get("client_id") in (None, ""):
                self.violations.append(("bad request", request))
            if self.fault is not None:
                reply = self.fault(endpoint, request)
                if reply is not None:
                    return reply
            if self.token is not None and headers.get("Authorization") != f"Bearer {self.token}":
                return 401, '{"error": "no or wrong token"}'
            if endpoint == "push":
                return self._push(request)
            if endpoint == "pull":
                return self._pull(request)
            return 404, '{"error": "no such endpoint"}'

    def _push(self, request):
        client = request["client_id"]
        results = []
        ids = [m["id"] for m in request["mutations"]]
        if ids != sorted(ids):
            self.violations.append(("push out of order", ids))
        for m in request["mutations"]:
            self.sent.append(m["id"])
            pair = (client, m["id"])
            rec = self.outcomes.get(pair)
            if rec is not None and (rec["status"] == "ok" or m["retry"] <= rec["retry"]):
                results.append(self._result(m["id"], rec))
                continue
            error = self.reject(m)
            new = None
            if error is None:
                new, error = self._apply(m["ops"])
            if error is None:
                self._commit(new)
                self.applied.append(pair)
                rec = {"status": "ok", "retry": m["retry"], "keys": list(new)}
            else:
                rec = {"status": "rejected", "retry": m["retry"], "error": error}
            self.outcomes[pair] = rec
            results.append(self._result(m["id"], rec))
        if self.drop_reply & set(ids):
            self.drop_reply -= set(ids)
            if self.drop_with is not None:
                return self.drop_with
            raise ConnectionResetError("the reply was lost")
        return 200, json.dumps({"results": results})

    def _result(self, mid, rec):
        if rec["status"] == "ok":
            return {"id": mid, "status": "ok", "ops": [self._absolute(c, k) for c, k in rec["keys"]]}
        return {"id": mid, "status": rec["status"], "error": rec["error"]}

    def _absolute(self, coll, key):
        v = self.records.get((coll, key))
        if v is None:
            return {"op": "delete", "coll": coll, "key": key}
        return {"op": "put", "coll": coll, "key": key, "value": v}

    def _apply(self, ops):
        """All or nothing: the new values of the touched records, or an error."""
        new = {}
        for op in ops:
            at = (op["coll"], op["key"])
            current = new[at] if at in new else self.records.get(at)
            kind = op["op"]
            if kind == "put":
                new[at] = dict(op["value"])
            elif kind == "delete":
                new[at] = None
            elif kind == "patch":
                new[at] = merge_patch(current or {}, op["value"])
            elif kind == "incr":
                r = dict(current or {})
                v = r.get(op["field"], 0)
                if isinstance(v, bool) or not isinstance(v, (int, float)):
                    return None, f"incr of the non-number {op['field']}"
                r[op["field"]] = v + op["delta"]
                new[at] = r
            else:
                return None, f"unknown op {kind}"
        return new, None

    def _commit(self, new):
        for at, v in new.items():
            self.seq += 1
            self.changed_at[at] = self.seq
            if v is None:
                self.records.pop(at, None)
            else:
                self.records[at] = v

    def _pull(self, request):
        since = 0 if request["cursor"] is None else int(request["cursor"])
        changed = sorted((s, at) for at, s in self.changed_at.items() if s > since)
        more = bool(self.page) and len(changed) > self.page
        if more:
            changed = changed[:self.page]
        cursor = changed[-1][0] if more else self.seq
        outcomes = []
        if not more:
            for mid in request["unacked"]:
                rec = self.outcomes.get((request["client_id"], mid))
                if rec is not None:
                    o = {"id": mid, "status": rec["status"], "retry": rec["retry"]}
                    if "error" in rec:
                        o["error"] = rec["error"]
                    outcomes.append(o)
        return 200, json.dumps({"cursor": str(cursor), "more": more, "outcomes": outcomes,
                                "changes": [self._absolute(c, k) for _, (c, k) in changed]})


FAST = dict(pull_interval_ms=0, backoff_base_ms=5, backoff_max_ms=50)


@pytest.fixture
def server():
    srv = FakeServer()
    yield srv
    assert srv.violations == []


def start(store, server, **options):
    """Starts the sync over ``server`` with quick backoff (the options may override)."""
    store.sync_start(transport=server, **{**FAST, **options})


def idle(store, timeout=DEADLINE):
    assert store.sync_wait_idle(timeout), store.sync_status()


def test_mutations_pushed_in_order_and_committed(store, server):
    server.write("c", "seed", {"n": 0})
    ids = [store.mutate([put("c", "a", {"v": 1})]),
           store.mutate([incr("c", "n", "count", 2)]),
           store.mutate([patch("c", "a", {"w": 2})]),
           store.mutate([delete("c", "seed")])]
    start(store, server)
    idle(store)
    assert [store.status(i) for i in ids] == ["committed"] * 4
    assert server.sent == ids  # each sent once, in id order
    assert server.value("c", "a") == {"v": 1, "w": 2}
    assert store.confirmed("c", "a") == {"v": 1, "w": 2} and store.get("c", "a") == {"v": 1, "w": 2}
    assert store.confirmed("c", "n") == {"count": 2} and not store.is_pending("c", "n")
    assert store.get("c", "seed") is None and store.pending_count() == 0
    # Later mutations go too, still in order.
    later = [store.mutate([incr("c", "n", "count", 1)]) for _ in range(5)]
    idle(store)
    assert server.sent == ids + later
    assert server.value("c", "n") == {"count": 7} == store.confirmed("c", "n")


def test_pull_applies_server_changes(store, server):
    seen = []
    store.subscribe(lambda changes: seen.extend(changes), coll="notes")
    server.write("notes", "n1", {"t": "from another device"})
    server.write("notes", "n2", {"t": "two"})
    start(store, server)
    idle(store)
    assert store.get("notes", "n1") == {"t": "from another device"}
    assert store.confirmed("notes", "n2") == {"t": "two"}
    assert {(c.key, c.cause, c.status) for c in seen} >= {("n1", "server", "confirmed"), ("n2", "server", "confirmed")}
    server.write("notes", "n1", {"t": "edited"})
    server.write("notes", "n2", None)
    store.sync_now()
    idle(store)
    assert store.get("notes", "n1") == {"t": "edited"} and store.get("notes", "n2") is None
    assert store.sync_status()["cursor"] == str(server.seq)
    # A pending edit rebases on pulled changes: the incr lands on the server's new value.
    store.sync_stop()
    mid = store.mutate([incr("notes", "n1", "likes", 1)])
    server.write("notes", "n1", {"t": "edited", "likes": 10})
    start(store, server)
    idle(store)
    assert store.status(mid) == "committed"
    assert store.get("notes", "n1") == {"t": "edited", "likes": 11} == server.value("notes", "n1")


def test_pull_pages_while_more(store, server):
    server.page = 2
    for i in range(7):
        server.write("p", f"k{i}", {"i": i})
    start(store, server)
    idle(store)
    assert [k for k, _ in store.scan("p")] == [f"k{i}" for i in range(7)]
    assert len(server.pulls()) >= 4  # 2 + 2 + 2 + 1
    assert store.sync_status()["pulled"] == 7


@pytest.mark.parametrize("lost_as", [None, (502, '{"error": "bad gateway"}')])
def test_lost_reply_ended_by_pull_outcome(store, server, lost_as):
    """The server applied the push but its answer was lost (no answer, or a 5xx after
    applying): the next pull lists the id in ``unacked``, its ``outcomes`` end the mutation,
    and the incr counts once, without the mutation being pushed again."""
    other = store.mutate([put("s", "other", {"v": 1})])
    mid = store.mutate([incr("s", "k", "n", 5)])
    server.drop_reply = {mid}
    server.drop_with = lost_as
    start(store, server)
    idle(store)
    assert store.status(mid) == "committed" and store.status(other) == "committed"
    assert server.sent == [other, mid]  # never pushed again
    assert any(mid in p["unacked"] for p in server.pulls())
    assert server.applied == [(store.client_id, other), (store.client_id, mid)]
    assert server.value("s", "k") == {"n": 5}
    assert store.confirmed("s", "k") == {"n": 5} == store.get("s", "k")
    assert store.pending_count() == 0


def test_request_lost_before_the_server_is_sent_again(store, server):
    """No answer, and the server never saw the request: the pull has no outcome for the id,
    so the mutation is pushed again, and applied once."""
    mid = store.mutate([incr("s", "k", "n", 5)])
    lost = []

    def fault(endpoint, request):
        if endpoint == "push" and not lost:
            lost.append(request)
            raise ConnectionResetError("connection reset before the server read it")
        return None

    server.fault = fault
    start(store, server)
    idle(store)
    assert lost and store.status(mid) == "committed"
    assert server.sent == [mid] and server.applied == [(store.client_id, mid)]
    assert store.confirmed("s", "k") == {"n": 5} == server.value("s", "k")


def test_held_back_mutation_ended_by_pull_outcome(store, server):
    """A mutation the server applied and that is held back (backing off) when the next sync
    starts is ended by the start's pull, not sent again."""
    mid = store.mutate([incr("s", "k", "n", 5)])
    server.drop_reply = {mid}
    applied = threading.Event()
    original_push = server._push

    def push_then_go_offline(request):
        try:
            return original_push(request)
        finally:
            applied.set()
            server.fault = lambda endpoint, request: (503, '{"error": "down"}')

    server._push = push_then_go_offline
    start(store, server)
    assert applied.wait(DEADLINE)
    store.sync_stop()
    assert server.applied == [(store.client_id, mid)]
    assert store.status(mid) == "pending" and store.get("s", "k") == {"n": 5}
    store.fail(mid, True, "reply lost", FAR_FUTURE_MS)  # held back: not due again
    server._push = original_push
    server.fault = None
    start(store, server)
    assert wait_for(lambda: store.status(mid) == "committed"), store.sync_status()
    assert server.sent == [mid]
    assert server.applied == [(store.client_id, mid)]
    assert store.confirmed("s", "k") == {"n": 5} == store.get("s", "k")


def test_rejected_rolls_back_or_keeps_as_failed(store, server):
    server.reject = lambda m: "no bad values" if any(op.get("value", {}).get("bad") for op in m["ops"]) else None
    seen = []
    store.subscribe(lambda changes: seen.extend(changes))
    store.server_apply([put("r", "x", {"v": 0})])
    rolled = store.mutate([put("r", "x", {"bad": True})])
    kept = store.mutate([put("r", "y", {"bad": True})], policy="keep")
    after = store.mutate([put("r", "z", {"ok": 1})])
    start(store, server)
    idle(store)
    assert store.status(rolled) == "rolled_back"
    assert store.get("r", "x") == {"v": 0}
    assert store.status(kept) == "failed"
    assert store.get("r", "y") == {"bad": True} and store.is_pending("r", "y")
    assert store.status(after) == "committed"  # a kept failure does not block later ones
    y = [c for c in seen if c.key == "y"]
    assert y[-1].status == "failed" and y[-1].pending and y[-1].cause == "fail"
    x = [c for c in seen if c.key == "x"]
    assert x[-1].cause == "rollback" and x[-1].status == "confirmed" and x[-1].value == {"v": 0}
    status = store.sync_status()
    assert status["failed"] == 1 and status["pending"] == 0 and status["inflight"] == 0
    # Retried after the server changed its mind: sent again with a higher retry, applied once.
    server.reject = lambda m: None
    store.retry(kept)
    idle(store)
    assert store.status(kept) == "committed"
    assert server.value("r", "y") == {"bad": True}
    retries = [m["retry"] for e, r, _, _ in server.requests if e == "push" for m in r["mutations"] if m["id"] == kept]
    assert retries[0] == 0 and retries[-1] >= 1
    assert [c for c in seen if c.key == "y"][-1].status == "confirmed"


def test_unauthorized_until_new_headers(store, server):
    server.token = "good"
    mid = store.mutate([put("a", "k", {"v": 1})])
    store.sync_start(transport=server, headers={"Authorization": "Bearer stale"}, **FAST)
    assert wait_for(lambda: store.sync_status()["state"] == "unauthorized"), store.sync_status()
    assert store.sync_status()["last_error"]
    assert store.status(mid) == "pending" and store.get("a", "k") == {"v": 1}  # nothing rolled back
    assert not store.sync_wait_idle(0.05)
    store.sync_set_headers({"Authorization": "Bearer good", "X-Trace": "t1"})
    idle(store)
    assert store.status(mid) == "committed" and server.value("a", "k") == {"v": 1}
    assert server.requests[-1][2] == {"Authorization": "Bearer good", "X-Trace": "t1"}
    assert store.sync_status()["state"] == "idle" and store.sync_status()["last_error"] is None


@pytest.mark.parametrize("reply", [
    (200, "this is not json"),
    (200, b'{"results": "nope"}'),
    (200, "[]"),
    (400, '{"error": "bad request"}'),
    (404, ""),
])
def test_garbage_is_an_error_and_loses_nothing(store, server, reply):
    broken = threading.Event()
    broken.set()
    server.fault = lambda endpoint, request: reply if broken.is_set() else None
    mid = store.mutate([incr("g", "k", "n", 1)])
    start(store, server)
    assert wait_for(lambda: store.sync_status()["state"] == "error"), store.sync_status()
    assert store.sync_status()["last_error"]
    assert store.status(mid) in ("pending", "inflight") and store.get("g", "k") == {"n": 1}
    broken.clear()
    store.sync_now()
    idle(store)
    assert store.status(mid) == "committed" and server.value("g", "k") == {"n": 1}
    assert server.applied == [(store.client_id, mid)]


@pytest.mark.parametrize("reply", [
    (503, '{"error": "down"}'),
    (500, ""),
    (429, '{"error": "slow down"}', 20),
    (503, "", 10),
])
def test_overload_backs_off_and_recovers(store, server, reply):
    failing = threading.Event()
    failing.set()
    server.fault = lambda endpoint, request: reply if failing.is_set() else None
    mid = store.mutate([put("b", "k", {"v": 1})])
    start(store, server)
    assert wait_for(lambda: store.sync_status()["state"] == "backoff"), store.sync_status()
    assert store.status(mid) in ("pending", "inflight") and store.get("b", "k") == {"v": 1}
    failing.clear()
    idle(store)
    assert store.status(mid) == "committed" and server.value("b", "k") == {"v": 1}


def test_transport_exception_is_no_answer_with_its_reason(store, server):
    down = threading.Event()
    down.set()

    def fault(endpoint, request):
        if down.is_set():
            raise ConnectionRefusedError("nobody listens on 9999")
        return None

    server.fault = fault
    mid = store.mutate([put("o", "k", {})])
    start(store, server)
    assert wait_for(lambda: store.sync_status()["state"] == "offline"), store.sync_status()
    assert "nobody listens on 9999" in store.sync_status()["last_error"]
    assert store.status(mid) in ("pending", "inflight")
    down.clear()
    store.sync_now()
    idle(store)
    assert store.status(mid) == "committed"


@pytest.mark.parametrize("bad", [None, 200, (200,), ("200", "{}"), (200, 12), (200, "{}", "soon"), (200, "a\0b")])
def test_malformed_transport_return_is_no_answer(store, bad):
    def transport(endpoint, url, body, headers, timeout_ms):
        return bad

    store.sync_start(transport=transport, **FAST)
    assert wait_for(lambda: store.sync_status()["state"] == "offline"), store.sync_status()
    assert "Error: " in store.sync_status()["last_error"]  # the Python exception is the reason


def test_transport_gets_url_headers_and_timeout(store, server):
    calls = []

    def transport(endpoint, url, body, headers, timeout_ms):
        calls.append((endpoint, url, headers, timeout_ms))
        return server(endpoint, url, body, headers, timeout_ms)

    store.mutate([put("u", "k", {})])
    store.sync_start("http://example.test/api/", transport=transport, headers={"Authorization": "Bearer t"},
                     timeout_ms=1234, **FAST)
    idle(store)
    assert ("push", "http://example.test/api/push", {"Authorization": "Bearer t"}, 1234) in calls
    assert ("pull", "http://example.test/api/pull", {"Authorization": "Bearer t"}, 1234) in calls


def test_threads_mutate_while_syncing(store, server):
    start(store, server, max_batch=50)
    errors = []

    def work():
        try:
            for _ in range(200):
                store.mutate([incr("t", "total", "n", 1)])
        except BaseException as e:  # noqa: BLE001
            errors.append(e)

    threads = [threading.Thread(target=work) for _ in range(4)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert errors == []
    idle(store)
    assert store.confirmed("t", "total") == {"n": 800} == store.get("t", "total")
    assert server.value("t", "total") == {"n": 800}
    assert len(server.applied) == 800 and len(set(server.applied)) == 800
    assert server.sent == sorted(server.sent)
    assert store.pending_count() == 0 and store.sync_status()["pushed"] == 800


def test_sync_status_fields_and_on_status(store, server):
    before = store.sync_status()
    assert set(before) >= {"state", "last_error", "pending", "inflight", "failed", "cursor", "pushed", "pulled"}
    assert before["state"] == "stopped" and before["cursor"] is None
    statuses = []
    store.mutate([put("st", "a", {})])
    store.mutate([put("st", "b", {})])
    server.write("st", "z", {"from": "server"})
    start(store, server, on_status=statuses.append)
    idle(store)
    s = store.sync_status()
    assert s["state"] == "idle" and s["last_error"] is None
    assert (s["pending"], s["inflight"], s["failed"]) == (0, 0, 0)
    assert s["pushed"] == 2 and s["pulled"] >= 1
    assert s["cursor"] == str(server.seq)
    assert statuses and all(isinstance(x, dict) and "state" in x for x in statuses)
    store.sync_stop()
    assert statuses[-1]["state"] == "stopped"
    after = store.sync_status()
    assert after["state"] == "stopped" and after["cursor"] == s["cursor"]


def test_on_status_exception_is_logged(store, server, caplog):
    def bad(status):
        raise RuntimeError("status callback broke")

    with caplog.at_level(logging.ERROR, logger="optimist"):
        start(store, server, on_status=bad)
        store.mutate([put("l", "k", {})])
        idle(store)
        store.sync_stop()
    assert "on_status" in caplog.text and "status callback broke" in caplog.text
    assert store.status(1) == "committed"


def test_subscription_exception_on_sync_thread_is_logged(store, server, caplog):
    def bad(changes):
        if any(c.cause == "commit" for c in changes):
            raise RuntimeError("subscriber broke on the sync thread")

    store.subscribe(bad)
    with caplog.at_level(logging.ERROR, logger="optimist"):
        mid = store.mutate([put("l", "k", {})])
        start(store, server)
        idle(store)
        store.sync_stop()
    assert "subscriber broke on the sync thread" in caplog.text
    assert store.status(mid) == "committed"


def test_misuse(store, server):
    with pytest.raises(optimist.MisuseError):
        store.sync_now()
    with pytest.raises(optimist.MisuseError):
        store.sync_wait_idle(0.01)
    with pytest.raises(optimist.MisuseError):
        store.sync_set_headers({"A": "b"})
    with pytest.raises(optimist.MisuseError):
        store.sync_start()  # no url and no transport
    with pytest.raises(optimist.MisuseError):
        store.sync_start("ftp://example.test")
    with pytest.raises(optimist.MisuseError):
        store.sync_start(transport=server, max_batch=0)
    with pytest.raises(optimist.MisuseError):
        store.sync_start(transport=server, headers={"Bad Name": "x"})
    with pytest.raises(optimist.InvalidError):
        store.sync_start(transport=server, headers={"A": "nul\0inside"})
    with pytest.raises(TypeError):
        store.sync_start(transport="not callable")
    with pytest.raises(TypeError):
        store.sync_start(transport=server, headers=[("A", "b")])
    assert store.sync_status()["state"] == "stopped" and store._sync is None
    start(store, server)
    with pytest.raises(optimist.MisuseError):
        start(store, server)  # a second sync
    with pytest.raises(optimist.MisuseError):
        store.outbox_next(0)  # the sync owns the outbox
    with pytest.raises(optimist.MisuseError):
        store.sync_set_headers({"Bad\nName": "x"})
    mid = store.mutate([put("m", "k", {})])  # the first sync still runs
    idle(store)
    assert store.status(mid) == "committed"
    store.sync_stop()
    store.sync_stop()  # no sync: nothing happens
    with pytest.raises(optimist.MisuseError):
        store.sync_now()
    assert store.outbox_next(0) is None  # the hand-driven outbox is back
    store.close()
    for call in (store.sync_status, store.sync_now, store.sync_stop, lambda: start(store, server)):
        with pytest.raises(optimist.MisuseError):
            call()


def test_stop_and_restart_keep_state(tmp_path, server):
    path = tmp_path / "s.db"
    with optimist.Store(path) as s:
        first = s.mutate([incr("k", "n", "v", 1)])
        start(s, server)
        idle(s)
        s.sync_stop()
        second = s.mutate([incr("k", "n", "v", 1)])
        assert s.status(second) == "pending"
        cursor = s.sync_status()["cursor"]
        assert cursor is not None
    with optimist.Store(path) as s:
        assert s.sync_status()["cursor"] == cursor
        assert s.status(first) == "committed" and s.status(second) == "pending"
        start(s, server)
        idle(s)
        assert s.status(second) == "committed"
        assert s.confirmed("k", "n") == {"v": 2} == server.value("k", "n")


class Blocking:
    """A transport whose first push blocks until released, then gets no answer."""

    def __init__(self, server):
        self.server = server
        self.entered = threading.Event()
        self.release = threading.Event()

    def __call__(self, endpoint, url, body, headers, timeout_ms):
        if endpoint == "push" and not self.release.is_set():
            self.entered.set()
            self.release.wait(DEADLINE)
            raise TimeoutError("released")
        return self.server(endpoint, url, body, headers, timeout_ms)


def test_close_during_blocked_transport(tmp_path, server):
    path = tmp_path / "c.db"
    s = optimist.Store(path)
    mid = s.mutate([put("c", "k", {"v": 1})])
    transport = Blocking(server)
    ref = weakref.ref(transport)
    s.sync_start(transport=transport, **FAST)
    token = s._sync.token
    assert transport.entered.wait(DEADLINE)
    waited = []

    def wait_idle():
        try:
            waited.append(s.sync_wait_idle(DEADLINE))
        except optimist.MisuseError:
            waited.append("closed before the wait began")  # only if this thread ran very late

    waiter = threading.Thread(target=wait_idle)
    waiter.start()
    closer = threading.Thread(target=s.close)
    closer.start()
    closer.join(0.2)
    assert closer.is_alive()  # close waits for the transport call in progress
    transport.release.set()
    closer.join(DEADLINE)
    assert not closer.is_alive() and s.closed
    waiter.join(DEADLINE)
    assert waited in ([False], ["closed before the wait began"])  # not idle, and no hang
    assert token not in _sync._active and s._sync is None
    del transport
    gc.collect()
    assert ref() is None  # the package let go of the transport
    with pytest.raises(optimist.MisuseError):
        s.sync_status()
    with optimist.Store(path) as again:  # nothing lost
        assert again.status(mid) == "pending" and again.get("c", "k") == {"v": 1}


def test_stop_releases_callbacks(store, server):
    class T:
        def __call__(self, *args):
            return server(*args)

    class S:
        def __call__(self, status):
            pass

    t, st = T(), S()
    refs = [weakref.ref(t), weakref.ref(st)]
    store.sync_start(transport=t, on_status=st, **FAST)
    token = store._sync.token
    idle(store)
    store.sync_stop()
    del t, st
    gc.collect()
    assert token not in _sync._active and store._sync is None
    assert [r() for r in refs] == [None, None]


def test_stop_from_on_status(store, server):
    """``sync_stop`` from the sync's own thread returns at once; the context goes with the
    thread's final status."""
    stopped = threading.Event()

    def on_status(status):
        if status["state"] == "stopped":
            stopped.set()
        elif status["pushed"] >= 1:
            store.sync_stop()

    store.mutate([put("x", "k", {})])
    start(store, server, on_status=on_status)
    token = store._sync.token
    assert stopped.wait(DEADLINE)
    assert wait_for(lambda: token not in _sync._active)
    assert store._sync is None
    assert store.sync_status()["state"] == "stopped"
    start(store, server)  # a new sync may start
    idle(store)


def test_sync_changes_carry_status_and_sync_cause(store, server):
    seen = []
    store.subscribe(lambda changes: seen.extend(changes))
    server.fault = lambda endpoint, request: (503, "") if endpoint == "push" else None
    mid = store.mutate([put("e", "k", {"v": 1})])
    start(store, server)
    assert wait_for(lambda: store.sync_status()["state"] == "backoff")
    server.fault = None
    idle(store)
    assert store.status(mid) == "committed"
    causes = [c.cause for c in seen if c.key == "k"]
    assert causes[0] == "mutate" and "commit" in causes
    assert all(c.cause in ("mutate", "sync", "commit", "fail", "retry", "server") for c in seen)
    assert all(c.status == "pending" and c.pending for c in seen[:causes.index("commit")])
    assert seen[-1].status == "confirmed" and not seen[-1].pending


def test_interpreter_exits_with_a_sync_running(tmp_path):
    """A program that never stops its sync (a Python transport and listeners still being
    called) exits cleanly, and its mutation is kept in the store file."""
    import os
    import subprocess
    import sys

    from conftest import SRC, library_path

    script = tmp_path / "prog.py"
    db = tmp_path / "exit.db"
    script.write_text(f"""
import sys, time
sys.path.insert(0, {str(SRC)!r})
import optimist

def transport(endpoint, url, body, headers, timeout_ms):
    time.sleep(0.01)
    raise ConnectionRefusedError("nobody")

s = optimist.Store({str(db)!r})
s.subscribe(lambda changes: None)
s.sync_start(transport=transport, pull_interval_ms=1, backoff_base_ms=1, backoff_max_ms=2,
             on_status=lambda status: None)
s.mutate([optimist.put("a", "k", {{"v": 1}})])
s.flush()
time.sleep(0.2)
print("bye")
""")
    env = {**os.environ, "OPTIMIST_LIBRARY": library_path()}
    done = subprocess.run([sys.executable, str(script)], env=env, capture_output=True, text=True, timeout=DEADLINE)
    assert done.returncode == 0, done.stderr
    assert done.stdout.strip() == "bye"
    with optimist.Store(db) as s:
        assert s.get("a", "k") == {"v": 1} and s.pending_count() == 1
