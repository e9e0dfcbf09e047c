"""Subscriptions: filtering, Change objects, re-entrant callbacks, and callback exceptions
re-raised from the call that triggered them."""

import gc
import logging
import sys

import pytest

import optimist
from optimist import Change, delete, incr, put


def test_changes_and_filters(store):
    everything, habits_h1 = [], []
    store.subscribe(everything.append)
    store.subscribe(habits_h1.append, coll="habits", prefix="h1")
    mid = store.mutate([put("habits", "h1", {"d": 1}), put("habits", "h2", {"d": 2}), put("other", "h1", {"d": 3})])
    assert habits_h1 == [[Change("habits", "h1", {"d": 1}, True, "mutate")]]
    assert len(everything) == 1 and [(c.collection, c.key) for c in everything[0]] == [
        ("habits", "h1"), ("habits", "h2"), ("other", "h1")]
    store.commit(mid)
    assert habits_h1[-1] == [Change("habits", "h1", {"d": 1}, False, "commit")]
    m2 = store.mutate([delete("habits", "h1")])
    c = habits_h1[-1][0]
    assert c.value is None and c.pending is True and c.cause == "mutate"
    store.rollback(m2)
    assert habits_h1[-1] == [Change("habits", "h1", {"d": 1}, False, "rollback")]
    store.server_apply([put("habits", "h1", {"d": 9})])
    assert habits_h1[-1][0].cause == "server"


def test_fail_and_retry_causes(store):
    seen = []
    store.subscribe(seen.append)
    a = store.mutate([put("q", "a", {})], policy="keep")
    b = store.mutate([put("q", "b", {})])
    store.outbox_next(0)
    store.outbox_next(0)
    assert len(seen) == 2  # handing out changes no record
    store.fail(a, False, "no", 0)  # kept: status failed, record unchanged
    store.retry(a)
    store.fail(b, False, "no", 0)  # rolled back by policy
    assert seen[-1] == [Change("q", "b", None, False, "fail")]


def test_change_status_for_a_kept_failure_and_a_retry():
    s = optimist.Store()
    got = []
    s.subscribe(lambda ch: got.extend(ch))
    m = s.mutate([put("c", "k", {"a": 1})], policy="keep")
    assert got == [Change("c", "k", {"a": 1}, True, "mutate", "pending")]
    s.outbox_next(0)
    got.clear()
    s.fail(m, False, "403", 0)
    assert got == [Change("c", "k", {"a": 1}, True, "fail", "failed")]
    assert s.status(m) == "failed" and s.is_pending("c", "k")
    got.clear()
    s.retry(m)
    assert got == [Change("c", "k", {"a": 1}, True, "retry", "pending")]
    got.clear()
    s.commit(m)
    assert got == [Change("c", "k", {"a": 1}, False, "commit", "confirmed")]
    s.close()


def test_change_status_transient_failure_is_an_event(store):
    """A transient failure leaves value and status alone, and is still reported (every
    status change is an event)."""
    got = []
    store.subscribe(lambda ch: got.extend(ch))
    m = store.mutate([incr("c", "n", "v", 1)])
    store.outbox_next(0)
    got.clear()
    store.fail(m, True, "timeout", 0)
    assert got == [Change("c", "n", {"v": 1}, True, "fail", "pending")]
    assert store.status(m) == "pending"


def test_change_status_when_a_kept_failure_ends_under_a_pending_edit(store):
    """The record stays pending (another mutation touches it) and its value stays, but its
    status goes from failed to pending: that is a change."""
    got = []
    store.subscribe(lambda ch: got.extend(ch))
    failed = store.mutate([put("c", "k", {"v": 1})], policy="keep")
    store.outbox_next(0)
    store.fail(failed, False, "rejected", 0)
    store.mutate([put("c", "k", {"v": 2})])
    assert got[-1].status == "failed"  # a kept failure still touches it
    got.clear()
    store.rollback(failed)
    assert got == [Change("c", "k", {"v": 2}, True, "rollback", "pending")]


def test_change_defaults_and_shape():
    c = Change("c", "k", None, True, "mutate")
    assert c.status == "pending" and Change("c", "k", {}, False, "commit").status == "confirmed"
    assert c._replace(status="failed").status == "failed"
    assert Change._make(["c", "k", None, True, "fail", "failed"]) == ("c", "k", None, True, "fail", "failed")
    assert "status='pending'" in repr(c)
    import pickle
    assert pickle.loads(pickle.dumps(Change("c", "k", {"a": 1}, True, "fail", "failed"))).status == "failed"


def test_unsubscribe_and_handle_close(store):
    seen = []
    sub = store.subscribe(seen.append)
    assert sub.active
    store.mutate([put("c", "k", {})])
    sub.close()
    sub.close()  # safe twice
    assert not sub.active
    store.mutate([put("c", "k2", {})])
    assert len(seen) == 1
    with pytest.raises(optimist.NotFoundError):
        store.unsubscribe(sub)
    s2 = store.subscribe(seen.append)
    store.unsubscribe(s2)
    with pytest.raises(optimist.NotFoundError):
        store.unsubscribe(s2.id)
    with store.subscribe(seen.append):
        store.mutate([put("c", "k3", {})])
    store.mutate([put("c", "k4", {})])
    assert len(seen) == 2


def test_callback_kept_alive_without_references(store):
    """The store keeps what it needs: a lambda with no other reference still runs after gc."""
    box = []
    store.subscribe(lambda changes: box.extend(changes))
    gc.collect()
    store.mutate([put("c", "k", {"v": 1})])
    assert box == [Change("c", "k", {"v": 1}, True, "mutate")]


def test_callback_reads_and_mutates(store):
    """A callback may read the store and mutate it (no deadlock); its mutation notifies
    listeners in turn."""
    log = []

    def on_change(changes):
        for c in changes:
            log.append((c.key, c.cause, store.get(c.collection, c.key), store.is_pending(c.collection, c.key)))
            if c.collection == "tasks" and c.cause == "mutate" and c.value is not None:
                store.mutate([incr("stats", "tasks", "count", 1)])

    store.subscribe(on_change)
    store.mutate([put("tasks", "t1", {"title": "x"})])
    assert store.get("stats", "tasks") == {"count": 1}
    assert log == [("t1", "mutate", {"title": "x"}, True), ("tasks", "mutate", {"count": 1}, True)]
    assert store.pending_count() == 2


def test_callback_exception_reraised_after_change(store):
    class Boom(Exception):
        pass

    def bad(changes):
        raise Boom("from callback")

    sub = store.subscribe(bad)
    with pytest.raises(Boom, match="from callback") as e:
        store.mutate([put("c", "k", {"v": 1})])
    if sys.version_info >= (3, 11):  # exception notes are 3.11+
        assert any("change was applied" in n for n in e.value.__notes__)
    # The change happened anyway.
    assert store.get("c", "k") == {"v": 1}
    assert store.pending_count() == 1
    with pytest.raises(Boom):
        store.commit(1)
    assert store.status(1) == "committed"
    with pytest.raises(Boom):
        store.server_apply([put("c", "z", {})])
    assert store.confirmed("c", "z") == {}
    sub.close()
    store.mutate([put("c", "k", {"v": 2})])  # no longer raises


@pytest.mark.skipif(sys.version_info < (3, 11), reason="BaseExceptionGroup is Python 3.11+")
def test_exceptions_from_several_callbacks(store):
    def bad1(changes):
        raise KeyError("one")

    def bad2(changes):
        raise ValueError("two")

    store.subscribe(bad1)
    store.subscribe(bad2)
    with pytest.raises(BaseExceptionGroup) as e:  # noqa: F821 (3.11+)
        store.mutate([put("c", "k", {})])
    assert sorted(type(x).__name__ for x in e.value.exceptions) == ["KeyError", "ValueError"]
    assert store.get("c", "k") == {}


@pytest.mark.skipif(sys.version_info >= (3, 11), reason="exception groups exist from 3.11")
def test_several_callback_exceptions_before_311(store, caplog):
    def bad1(changes):
        raise KeyError("one")

    def bad2(changes):
        raise ValueError("two")

    store.subscribe(bad1)
    store.subscribe(bad2)
    with caplog.at_level(logging.ERROR, logger="optimist"):
        with pytest.raises(KeyError):
            store.mutate([put("c", "k", {})])
    assert "ValueError: two" in caplog.text


def test_nested_callback_exception(store):
    """A callback's store call whose own callback raises: the inner exception surfaces in the
    outer callback, and (uncaught there) from the outer call."""
    def chain(changes):
        if changes[0].collection == "a":
            store.mutate([put("b", "k", {})])
        else:
            raise RuntimeError("inner")

    store.subscribe(chain)
    with pytest.raises(RuntimeError, match="inner"):
        store.mutate([put("a", "k", {})])
    assert store.get("a", "k") == {} and store.get("b", "k") == {}


def test_exception_with_no_frame_is_logged(caplog):
    """A delivery outside any store call (not something the library does) is logged."""
    from optimist import _callbacks as callbacks

    def bad(changes):
        raise RuntimeError("orphan")

    token = callbacks.register(bad)
    try:
        with caplog.at_level(logging.ERROR, logger="optimist"):
            callbacks._deliver(token, None, 0)
        assert "subscription callback" in caplog.text and "orphan" in caplog.text
    finally:
        callbacks.unregister(token)


def test_close_ends_subscriptions():
    seen = []
    s = optimist.Store()
    sub = s.subscribe(seen.append)
    s.close()
    assert not sub.active
    sub.close()  # fine after the store is closed


def test_callback_may_close_the_store():
    s = optimist.Store()
    s.subscribe(lambda changes: s.close())
    mid = s.mutate([put("c", "k", {})])  # the call that triggered the close completes
    assert mid >= 1 and s.closed
    with pytest.raises(optimist.MisuseError):
        s.get("c", "k")


def test_callback_unsubscribes_itself(store):
    seen = []

    def once(changes):
        seen.append(changes)
        sub.close()

    sub = store.subscribe(once)
    store.mutate([put("c", "k", {})])
    store.mutate([put("c", "k2", {})])
    assert len(seen) == 1 and not sub.active
