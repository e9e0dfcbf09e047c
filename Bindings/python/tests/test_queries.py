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
