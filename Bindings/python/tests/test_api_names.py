"""The Python surface is exactly as Bindings/python/README.md ("API") and docs/python-guide.md
name it: functions, parameter names and defaults (so keyword calls written from those docs
work)."""

import inspect

import optimist

SIGNATURES = {
    "mutate": "(self, ops, *, dedupe_key=None, policy='rollback')",
    "commit": "(self, mid, server_ops=None, renames=None)",
    "rollback": "(self, mid, reason=None)",
    "server_apply": "(self, ops)",
    "get": "(self, coll, key)",
    "confirmed": "(self, coll, key)",
    "is_pending": "(self, coll, key)",
    "scan": "(self, coll, prefix='', limit=0)",
    "status": "(self, mid)",
    "pending_count": "(self)",
    "outbox_next": "(self, now_ms)",
    # The app developer's path (docs/python-guide.md, "Your own backend", "Waiting for one change").
    "outbox_wait": "(self, timeout_s=None)",
    "wait_settled": "(self, mid, timeout_s=None)",
    "mutation": "(self, mid)",
    "fail": "(self, mid, transient, reason, now_ms)",
    "retry": "(self, mid)",
    "mark_loaded": "(self, coll, from_key, to_key, at_ms)",
    "needs_reload": "(self, coll, key, now_ms, max_age_ms)",
    "view_define": "(self, name, coll, prefix, kind)",
    "view_get": "(self, name)",
    "subscribe": "(self, callback, coll=None, prefix=None)",
    "query": "(self, spec)",
    "set_retry_policy": "(self, max_attempts, base_delay_ms, max_delay_ms)",
    "close": "(self)",
    "flush": "(self)",
    # The sync's options as docs/sync.md and docs/python-guide.md ("Sync") give them: the URL,
    # headers, pull interval, batch size and timeout, then the transport, listener and backoff.
    "sync_start": "(self, url=None, *, headers=None, pull_interval_ms=5000, max_batch=100, timeout_ms=10000, "
                  "transport=None, on_status=None, backoff_base_ms=500, backoff_max_ms=30000, events=True)",
    "sync_stop": "(self)",
    "sync_now": "(self)",
    "sync_set_headers": "(self, headers)",
    "sync_wait_idle": "(self, timeout_s)",
    "sync_status": "(self)",
}


def bare(sig: inspect.Signature) -> str:
    """The signature without annotations."""
    return str(sig.replace(parameters=[p.replace(annotation=inspect.Parameter.empty) for p in sig.parameters.values()],
                           return_annotation=inspect.Signature.empty))


def test_store_methods():
    for name, want in SIGNATURES.items():
        assert bare(inspect.signature(getattr(optimist.Store, name))) == want, name
    # The path (docs/python-guide.md, "A store"), then cache_bytes (keyword only: storage that scales).
    assert bare(inspect.signature(optimist.Store.__init__)) == "(self, path=None, *, cache_bytes=None, local_only=False, read_only=False)"
    assert isinstance(inspect.getattr_static(optimist.Store, "client_id"), property)


def test_op_constructors():
    assert bare(inspect.signature(optimist.put)) == "(coll, key, value)"
    assert bare(inspect.signature(optimist.patch)) == "(coll, key, value)"
    assert bare(inspect.signature(optimist.delete)) == "(coll, key)"
    assert bare(inspect.signature(optimist.incr)) == "(coll, key, field, delta)"


def test_change_fields():
    assert optimist.Change._fields == ("collection", "key", "value", "pending", "cause", "status")


def test_everything_documented():
    for name in optimist.__all__:
        obj = getattr(optimist, name)
        if callable(obj):
            assert obj.__doc__, name
    for name in SIGNATURES:
        assert getattr(optimist.Store, name).__doc__, name
