"""Live queries from Python: rows, len, deltas through a subscription (and a mirror built from
them), statuses moving rows, groups, callback exceptions re-raised, bad specs, closing."""

import pytest

import optimist
from optimist import apply_deltas, delete, incr, put


def keys(rows):
    return [r["key"] for r in rows]


def test_rows_follow_mutations_rollbacks_and_the_server(store):
    store.server_apply([put("logs", "a", {"habit": "run", "day": 1}),
                        put("logs", "b", {"habit": "read", "day": 3})])
    q = store.query({"collection": "logs", "order": [{"field": "day", "desc": True}]})
    assert keys(q.rows()) == ["b", "a"] and len(q) == 2
    assert q.rows()[0] == {"key": "b", "value": {"habit": "read", "day": 3}, "status": "confirmed"}
    mirror, calls = q.rows(), []

    def follow(deltas):
        calls.append(deltas)
        apply_deltas(mirror, deltas)

    q.subscribe(follow)
    m = store.mutate([put("logs", "c", {"habit": "run", "day": 9})])
    assert keys(q.rows()) == ["c", "b", "a"] and mirror == q.rows()
    assert calls[-1] == [{"op": "insert", "index": 0,
                          "row": {"key": "c", "value": {"habit": "run", "day": 9}, "status": "pending"}}]
    store.commit(m)
    assert calls[-1] == [{"op": "update", "index": 0,
                          "row": {"key": "c", "value": {"habit": "run", "day": 9}, "status": "confirmed"}}]
    m2 = store.mutate([incr("logs", "a", "day", 10)])  # a moves to the top
    assert keys(q.rows()) == ["a", "c", "b"] and mirror == q.rows()
    assert [d["op"] for d in calls[-1]] == ["delete", "insert"]
    store.rollback(m2)  # and back
    assert keys(q.rows()) == ["c", "b", "a"] and mirror == q.rows()
    store.server_apply([delete("logs", "b")])
    assert keys(mirror) == ["c", "a"] == keys(q.rows())
    n = len(calls)
    store.mutate([put("other", "x", {})])  # another collection: no call
    assert len(calls) == n


def test_limit_window_and_status_predicate(store):
    q = store.query({"collection": "msgs", "where": {"status": "failed"}, "order": [{"field": "at"}], "limit": 2})
    ids = [store.mutate([put("msgs", f"m{i}", {"at": i})], policy="keep") for i in range(4)]
    assert q.rows() == []
    mirror = []
    q.subscribe(lambda d: apply_deltas(mirror, d))
    for mid in ids:
        store.fail(mid, False, "refused", 0)
    assert keys(q.rows()) == ["m0", "m1"] == keys(mirror)
    assert all(r["status"] == "failed" for r in q.rows())
    store.retry(ids[0])  # m0 is pending again: m2 enters the window
    assert keys(q.rows()) == ["m1", "m2"] == keys(mirror)


def test_groups(store):
    store.server_apply([put("logs", "a", {"habit": "run", "minutes": 20}),
                        put("logs", "b", {"habit": "run", "minutes": 10}),
                        put("logs", "c", {"habit": "read"})])
    q = store.query('{"collection": "logs", "group": {"by": ["habit"], '
                    '"aggregates": {"n": "count", "total": "sum:minutes", "most": "max:minutes"}}}')
    assert q.rows() == [{"group": {"habit": "read"}, "values": {"n": 1, "total": 0, "most": None}},
                        {"group": {"habit": "run"}, "values": {"n": 2, "total": 30, "most": 20}}]
    mirror = q.rows()
    q.subscribe(lambda d: apply_deltas(mirror, d))
    store.mutate([delete("logs", "a")])  # the max leaves its group
    assert q.rows()[1] == {"group": {"habit": "run"}, "values": {"n": 1, "total": 10, "most": 10}}
    assert mirror == q.rows()


def test_callback_exception_is_reraised_after_the_change(store):
    q = store.query({"collection": "t"})

    def boom(deltas):
        raise RuntimeError("from the query callback")

    q.subscribe(boom)
    with pytest.raises(RuntimeError, match="from the query callback"):
        store.mutate([put("t", "a", {})])
    assert keys(q.rows()) == ["a"]


@pytest.mark.parametrize("spec,member", [
    ({"where": {}}, "collection"),
    ({"collection": "t", "limit": 0}, "limit"),
    ({"collection": "t", "order": [{"field": "x", "desc": "yes"}]}, "desc"),
    ({"collection": "t", "colour": 1}, "colour"),
    ({"collection": "t", "group": {"by": []}}, "by"),
    ({"collection": "t", "where": {"status": "lost"}}, "status"),
])
def test_bad_specs_name_the_member(store, spec, member):
    with pytest.raises(optimist.InvalidError) as e:
        store.query(spec)
    assert member in str(e.value)


def test_bad_spec_types(store):
    with pytest.raises(optimist.InvalidError):
        store.query("{not json")
    with pytest.raises(optimist.InvalidError):
        store.query({"collection": "t", "where": {"field": "x", "eq": float("nan")}})
    with pytest.raises(TypeError):
        store.query(42)


def test_close_and_store_close(store):
    q = store.query({"collection": "t"})
    sub = q.subscribe(lambda d: None)
    with q:
        assert len(q) == 0
    assert q.closed and not sub.active
    with pytest.raises(optimist.MisuseError):
        q.rows()
    q.close()  # twice: no-op
    q2 = store.query({"collection": "t"})
    store.close()
    with pytest.raises(optimist.MisuseError):
        len(q2)
    q2.close()


def test_an_index_gives_the_same_rows_and_is_kept_in_a_store_file(tmp_path):
    path = str(tmp_path / "logs.optimist")
    spec = {"collection": "logs", "where": {"field": "meta.habit", "in": ["run", "swim"]},
            "order": [{"field": "n", "desc": True}], "limit": 5}
    plain = {"collection": "logs", "where": {"or": [{"not": {"field": "meta.habit", "ne": "run"}},
                                                    {"not": {"field": "meta.habit", "ne": "swim"}}]},
             "order": [{"field": "n", "desc": True}], "limit": 5}
    with optimist.Store(path) as s:
        s.server_apply([put("logs", f"k{i:03}", {"meta": {"habit": ["run", "read", "nap"][i % 3]}, "n": i})
                        for i in range(300)])
        s.index_define("logs", "meta.habit")
        s.index_define("logs", ["meta", "habit"])  # the same path: nothing new
        q = s.query(spec)
        seen = q.rows()
        q.subscribe(lambda deltas: apply_deltas(seen, deltas))
        # A pending change moves a row in at once; the index is read again by the next open.
        s.mutate([put("logs", "k001", {"meta": {"habit": "swim"}, "n": 1000})])
        assert q.rows() == s.query(plain).rows() == seen
        assert keys(q.rows())[0] == "k001"
        s.flush()
    with optimist.Store(path) as s:
        assert s.query(spec).rows() == s.query(plain).rows()
        assert keys(s.query(spec).rows()) == ["k001", "k297", "k294", "k291", "k288"]


def test_a_bad_index_field_is_refused(store):
    for field in ("$key", "", "a..b", []):
        with pytest.raises(optimist.InvalidError):
            store.index_define("logs", field)
    store.close()
    with pytest.raises(optimist.MisuseError):
        store.index_define("logs", "habit")


def test_a_mirror_starts_from_the_rows_and_follows_them(store):
    store.server_apply([put("logs", "a", {"day": 1}), put("logs", "b", {"day": 3})])
    q = store.query({"collection": "logs", "order": [{"field": "day", "desc": True}], "limit": 2})
    seen = []
    screen, sub = q.mirror(on_change=seen.append)
    assert keys(screen) == ["b", "a"]
    store.mutate([put("logs", "c", {"day": 5})])
    assert screen == q.rows() and keys(screen) == ["c", "b"]
    assert [d["op"] for d in seen[-1]] == ["insert", "delete"]
    sub.close()
    store.mutate([put("logs", "d", {"day": 9})])
    assert keys(screen) == ["c", "b"]  # closed: no longer followed
    with pytest.raises(TypeError):
        q.mirror(on_change=3)


def test_a_change_made_in_a_callback_is_heard_after_it_returns(store):
    q = store.query({"collection": "logs", "order": [{"field": "day"}]})
    screen, _ = q.mirror()
    events = []

    def react(deltas):
        events.append(("start", [d["row"]["key"] for d in deltas if "row" in d]))
        if len(events) == 1:
            store.mutate([put("logs", "echo", {"day": 0})])
        events.append(("end",))

    q.subscribe(react)
    store.mutate([put("logs", "a", {"day": 1})])
    # The echo's deltas come after the first callback returned, not inside it.
    assert events == [("start", ["a"]), ("end",), ("start", ["echo"]), ("end",)]
    assert screen == q.rows() and keys(screen) == ["echo", "a"]


def test_in_order_hands_on_early_deliveries_after_the_ones_before(store):
    from optimist._callbacks import InOrder
    got = []
    order = InOrder(got.append)
    order.take(3, ["third"])      # before start(): held
    order.take(2, ["second"])
    order.start(1)                # the rows include delivery 1
    assert got == [["second"], ["third"]]
    order.take(1, ["first"])      # already in the rows: dropped
    order.take(5, ["fifth"])      # early: held until 4 comes
    assert got == [["second"], ["third"]]
    order.take(4, ["fourth"])
    assert got == [["second"], ["third"], ["fourth"], ["fifth"]]


def test_a_mirror_fed_from_several_threads_equals_the_rows(store):
    import threading
    q = store.query({"collection": "logs", "where": {"field": "w", "ge": 0},
                     "order": [{"field": "i", "desc": True}], "limit": 10})
    screen, _ = q.mirror()
    errors = []

    def writer(w):
        try:
            for i in range(300):
                m = store.mutate([put("logs", f"w{w}-{i:04d}", {"w": w, "i": i})])
                if i % 2:
                    store.rollback(m)
                else:
                    store.commit(m)
        except BaseException as e:  # noqa: BLE001 - reported below
            errors.append(e)

    threads = [threading.Thread(target=writer, args=(w,)) for w in range(3)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert not errors
    assert screen == q.rows()
    assert keys(screen)[:3] == ["w0-0298", "w1-0298", "w2-0298"]


def test_the_query_module_examples_run():
    import doctest
    import optimist._query as module
    result = doctest.testmod(module)
    assert result.attempted >= 2 and result.failed == 0
