"""``Store``: an optimistic store over the C ABI.

Every method is one call into ``liboptimist`` (plus building a batch for the ones that take
ops). Methods that can change visible state run inside a callback-error frame (see
``_callbacks``), so an exception raised by a subscription callback is re-raised from the
call that triggered it, after the change is applied.

A closed store keeps its (tombstoned) C handle, so every later call reaches the library and
fails with :class:`MisuseError`, from the C layer, the same way on every thread.
"""

from __future__ import annotations

import json
import os
from ctypes import byref, c_double, c_int, c_uint64, c_void_p
from typing import Any, Dict, List, Optional, Sequence, Tuple, Union

from . import _fast, _ffi
from ._callbacks import TRAMPOLINE, Callback, call_changing, register, unregister
from ._error import InvalidError, MisuseError
from ._json import ReadBuffer, take_json
from ._json import loads_bytearray as _loads_bytearray
from ._ops import Op, OpLike, make_batch
from ._query import Query
from ._subscriptions import Subscription
from ._sync import SyncMixin
from ._util import check, coll_cstr, cstr, i64, opt_cstr, raise_for, u64

__all__ = ["Store"]

_lib = _ffi.lib
_NOTFOUND = _ffi.NOTFOUND
_DUPLICATE = _ffi.DUPLICATE
_POLICIES = _ffi.POLICIES
_STATUSES = _ffi.STATUSES
_take = _ffi.take_string

_open = _lib.optimist_open
_open_ext = _lib.optimist_open_ext
_close = _lib.optimist_close
_flush = _lib.optimist_flush
_client_id = _lib.optimist_client_id
_set_retry_policy = _lib.optimist_set_retry_policy
_mutate = _lib.optimist_mutate
_mutate_with_policy = _lib.optimist_mutate_with_policy
_put = _ffi.unchecked("optimist_put")  # hot: see _ffi.unchecked
_commit = _lib.optimist_commit
_commit_with_renames = _lib.optimist_commit_with_renames
_rollback = _lib.optimist_rollback
_server_apply = _lib.optimist_server_apply
_get_into = _ffi.unchecked("optimist_get_into")  # hot: see _ffi.unchecked
_get_confirmed_into = _ffi.unchecked("optimist_get_confirmed_into")  # hot: see _ffi.unchecked
_buffer = ReadBuffer()
# The C accelerator's versions of the three hot calls, or None (see _fast).
_FALLBACK = _fast.FALLBACK
_fast_get = _fast.get
_fast_confirmed = _fast.confirmed
_fast_put = _fast.put
_fast_view_get = _fast.view_get
_is_pending = _lib.optimist_is_pending
_scan = _lib.optimist_scan
_status = _lib.optimist_status
_pending_count = _lib.optimist_pending_count
_mutations = _lib.optimist_mutations
_mutation = _lib.optimist_mutation
_wait_settled = _lib.optimist_wait_settled
_explain = _lib.optimist_explain
_STATUS_CODES = {name: code for code, name in _STATUSES.items()}
_outbox_next = _lib.optimist_outbox_next
_outbox_wait = _lib.optimist_outbox_wait
_fail = _lib.optimist_fail
_retry = _lib.optimist_retry
_mark_loaded = _lib.optimist_mark_loaded
_needs_reload = _lib.optimist_needs_reload
_view_define = _lib.optimist_view_define
_index_define = _lib.optimist_index_define
_view_get = _lib.optimist_view_get
_subscribe = _lib.optimist_subscribe
_unsubscribe = _lib.optimist_unsubscribe

Record = Dict[str, Any]
PathLike = Union[str, "os.PathLike[str]"]


class Store(SyncMixin):
    """An optimistic store: confirmed state, pending mutations, and the visible state every
    read returns (the pending mutations re-applied, in order, on the confirmed state).

    ``Store()`` (or ``Store(None)``) is in memory; ``Store(path)`` opens or creates a store
    file. A store file keeps its records in the file and reads them on demand through a cache
    of at most ``cache_bytes`` of parsed records (default 32 MiB; as much again at most for
    the records gets found, kept so that a repeated get takes no lock: mostly the same
    records, shared); opening reads only what is pending, so it costs O(pending mutations), not O(records). ``cache_bytes`` must be
    positive (:class:`MisuseError` otherwise); values above 2**48 are clamped to it. Use it as a context manager, or call :meth:`close`. One store may be used from many
    threads at once. :meth:`sync_start` lets the library send and pull by itself (the
    ``sync_*`` methods come from :class:`optimist._sync.SyncMixin`).

    ``local_only=True`` opens a store with no server: each mutation commits once the
    background writer has it on disk (in memory: at once), so after :meth:`flush` every
    mutation made before it is committed; one the file held pending commits at the open. A
    failed disk write rolls the mutations it held back (or, policy ``"keep"``, leaves them
    ``"failed"``), with the failure as their ``last_error``. Such a store has no outbox to
    send: :meth:`outbox_next`, :meth:`outbox_wait` and :meth:`sync_start` raise
    :class:`MisuseError`. Give it at each open (the file does not remember it)::

        with optimist.Store("habits.db", local_only=True) as store:
            mid = store.mutate([optimist.incr("habits", "run", "count", 1)])
            store.flush()
            assert store.status(mid) == "committed"

    ``read_only=True`` opens a store file that another process may have open (a worker, a
    tool, a widget) without waiting for it or disturbing it (never :class:`BusyError`): the
    store shows the file as it was at the open, everything the other process had flushed by
    then (its pending mutations too, as the visible state). Reads, queries and subscriptions
    work; every change raises :class:`MisuseError`. The open copies the file into a private
    temporary directory (removed at :meth:`close`); open again to see later changes.

    Raises:
        StoreIOError, CorruptError, BusyError: the file could not be opened.
    """

    def __init__(self, path: Optional[PathLike] = None, *, cache_bytes: Optional[int] = None,
                 local_only: bool = False, read_only: bool = False) -> None:
        self._h: Optional[c_void_p] = None
        #: The handle as an int, for the C accelerator (see _fast); it stays valid after close.
        self._hv = 0
        self._closed = False
        self._subs: Dict[int, Subscription] = {}
        #: Live queries' subscriptions on this store: while there are any, a tap goes through
        #: a callback-error frame too (their callbacks' exceptions surface from it).
        self._query_listeners = 0
        p = None if path is None else os.fsencode(path)
        if p is not None and b"\0" in p:
            raise MisuseError("path must not contain a NUL character")
        h = c_void_p()
        if not isinstance(local_only, bool):
            raise MisuseError(f"local_only must be True or False, not {local_only!r}")
        if not isinstance(read_only, bool):
            raise MisuseError(f"read_only must be True or False, not {read_only!r}")
        if cache_bytes is None and not local_only and not read_only:
            check(_open(p, byref(h)))
        else:
            opts = _ffi.OpenOptions.defaults()
            if cache_bytes is not None:
                if isinstance(cache_bytes, bool) or not isinstance(cache_bytes, int) or cache_bytes <= 0:
                    raise MisuseError(f"cache_bytes must be a positive int, not {cache_bytes!r}")
                opts.cache_bytes = min(cache_bytes, 1 << 48)
            opts.local_only = 1 if local_only else 0
            opts.read_only = 1 if read_only else 0
            check(_open_ext(p, byref(opts), byref(h)))
        self._h = h
        self._hv = h.value
        #: The path the store was opened on (None: in memory).
        self.path: Optional[str] = None if path is None else os.fsdecode(p)  # type: ignore[arg-type]

    # Life -------------------------------------------------------------------------------

    def close(self) -> None:
        """Stops the sync if one runs (waiting for a transport call in progress), flushes and
        closes the store. Safe to call twice; every other method raises :class:`MisuseError`
        afterwards. Ends every subscription and releases the sync's callbacks."""
        if self._closed or self._h is None:
            return
        self._closed = True
        for sub in list(self._subs.values()):
            unregister(sub._token)
        self._subs.clear()
        sync = self._current_sync()
        try:
            check(_close(self._h))
        finally:
            self._release_sync(sync)
            self._release_sync(self._current_sync())  # one started meanwhile was stopped too

    @property
    def closed(self) -> bool:
        """Whether :meth:`close` was called."""
        return self._closed

    def flush(self) -> None:
        """Returns once everything that happened before the call is durable (a no-op for an
        in-memory store)."""
        check(_flush(self._h))

    def __enter__(self) -> "Store":
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def __del__(self) -> None:
        try:
            if not self._closed and self._h is not None:
                self.close()
        except Exception:  # noqa: BLE001 - nowhere to report from a finalizer
            pass

    def __repr__(self) -> str:
        where = "memory" if self.path is None else repr(self.path)
        return f"<optimist.Store {where}{' closed' if self._closed else ''}>"

    @property
    def client_id(self) -> str:
        """The store's stable client id (a UUID made at creation, kept with the store): send
        it with each mutation id as the idempotency key."""
        out = c_void_p()
        check(_client_id(self._h, byref(out)))
        return _take(out)

    def set_retry_policy(self, max_attempts: int, base_delay_ms: int, max_delay_ms: int) -> None:
        """Sets how transient failures are retried: at most ``max_attempts`` sends, waiting
        about ``base_delay_ms * 2**(attempts-1)`` (with jitter, capped at ``max_delay_ms``)
        between them."""
        n = int(max_attempts)
        if not -(1 << 31) <= n < (1 << 31):
            raise MisuseError(f"max_attempts {n} is out of range")
        check(_set_retry_policy(self._h, n, i64(base_delay_ms, "base_delay_ms"),
                                i64(max_delay_ms, "max_delay_ms")))

    # Mutations --------------------------------------------------------------------------

    def mutate(self, ops: Sequence[OpLike], *, dedupe_key: Optional[str] = None,
               policy: str = "rollback") -> int:
        """Applies ``ops`` to the visible state at once, as one atomic mutation, and returns
        its id (increasing, never reused).

        Args:
            ops: a list of :func:`put`/:func:`patch`/:func:`delete`/:func:`incr` ops.
            dedupe_key: while a not-yet-ended mutation holds this key, a new mutation with it
                is refused (the double-tap guard).
            policy: what a final failure does: ``"rollback"`` (default) or ``"keep"`` (stays
                visible with status ``"failed"``).

        Raises:
            InvalidError: an op cannot apply (e.g. ``incr`` of a string); nothing changed.
            DuplicateError: ``dedupe_key`` is held; ``.existing_id`` is the holder.
        """
        # The tap's shape (one put, the default options) with no subscription (no callback to
        # catch errors from) goes straight to the C accelerator when there is one.
        if (_fast_put is not None and dedupe_key is None and policy == "rollback" and type(ops) is list
                and len(ops) == 1 and not self._subs and not self._query_listeners):
            op = ops[0]
            if type(op) is Op and op[0] == "put":
                mid = _fast_put(self._hv, *op[6])
                if mid is not _FALLBACK:
                    return mid  # type: ignore[no-any-return]
        pol = _POLICIES.get(policy)
        if pol is None:
            raise MisuseError(f"policy must be 'rollback' or 'keep', not {policy!r}")
        out = c_uint64()
        # The tap's shape, one put with the default options, needs no C batch: optimist_put.
        if dedupe_key is None and pol == 0 and type(ops) is list and len(ops) == 1:
            op = ops[0]
            if type(op) is Op and op[0] == "put":
                if self._subs or self._query_listeners:
                    rc = call_changing("mutate", _put, self._h, *op[6], byref(out))
                else:
                    rc = _put(self._h, *op[6], byref(out))
                if rc:
                    raise_for(rc)
                return out.value
        dk = None if dedupe_key is None else cstr(dedupe_key, "dedupe_key")
        with make_batch(ops) as b:
            if pol == 0:
                rc = call_changing("mutate", _mutate, self._h, b, dk, byref(out))
            else:
                rc = call_changing("mutate", _mutate_with_policy, self._h, b, dk, pol, byref(out))
        if rc:
            raise_for(rc, out.value if rc == _DUPLICATE else 0)
        return out.value

    def commit(self, mid: int, server_ops: Optional[Sequence[OpLike]] = None,
               renames: Optional[Sequence[Tuple[str, str, str]]] = None) -> None:
        """The authority accepted mutation ``mid``: the confirmed state takes ``server_ops``
        (the server's canonical result) or, when None, the mutation's own ops.

        ``renames`` is for a backend that gave records it created keys of its own: a list of
        ``(coll, from_key, to_key)``, applied in order before the commit. Each moves the record
        and its pending edits from the temporary key to the server's (later edits are sent
        under the real key), as a sync does with a push answer ``ok`` that carries renames::

            mid = store.mutate([optimist.put("todos", "tmp-1", {"title": "Milk"})])
            # ... the backend answered {"id": "812"} ...
            store.commit(mid, renames=[("todos", "tmp-1", "812")])

        Raises:
            NotFoundError: unknown id. StateError: already committed or rolled back.
            InvalidError: a server op cannot apply, or a rename is malformed (nothing changed,
                renames included).
        """
        mid = u64(mid, "mutation id")
        # With renames, the C commit that takes them; without, the plain one (its hot path).
        fn, extra = (_commit_with_renames, (_renames_json(renames),)) if renames else (_commit, ())
        if server_ops is None:
            rc = call_changing("commit", fn, self._h, mid, None, *extra)
        else:
            with make_batch(server_ops) as b:
                rc = call_changing("commit", fn, self._h, mid, b, *extra)
        check(rc)

    def rollback(self, mid: int, reason: Optional[str] = None) -> None:
        """Mutation ``mid`` failed: the visible state becomes what it would be had it never
        been applied; every other pending mutation keeps its effect.

        Raises:
            NotFoundError: unknown id. StateError: already committed or rolled back.
        """
        check(call_changing("rollback", _rollback, self._h, u64(mid, "mutation id"),
                            opt_cstr(reason, "reason")))

    def server_apply(self, ops: Sequence[OpLike]) -> None:
        """An authoritative change from outside, applied to the confirmed state; pending
        mutations are re-applied on top (rebase).

        Raises:
            InvalidError: an op cannot apply to the confirmed state (nothing changed).
        """
        with make_batch(ops) as b:
            check(call_changing("server_apply", _server_apply, self._h, b))

    # Reads ------------------------------------------------------------------------------

    def get(self, coll: str, key: str) -> Optional[Record]:
        """The visible record, or None."""
        if _fast_get is not None:
            r = _fast_get(self._hv, coll, key)
            if r is not _FALLBACK:
                return r  # type: ignore[no-any-return]
        # _read_record's common case written out: a Python call is a visible share of a read.
        # cstr's checks, inline for a str: encodable (no lone surrogate) and without NUL.
        try:
            k = key.encode() if type(key) is str else None
        except UnicodeEncodeError:
            k = None
        if k is None or b"\0" in k:
            k = cstr(key, "key")  # raises the right error
        data, cbuf, cap, length, length_ref = _buffer.state
        rc = _get_into(self._h, coll_cstr(coll), k, cbuf, cap, length_ref)
        if rc:
            if rc == _NOTFOUND:
                return None
            raise_for(rc)
        n = length.value
        if n < len(data):
            value: Record = _loads_bytearray(data[:n])
            return value
        return self._read_record(_get_into, coll, key)  # larger than the buffer

    def confirmed(self, coll: str, key: str) -> Optional[Record]:
        """The confirmed record (what the authority acknowledged), or None."""
        if _fast_confirmed is not None:
            r = _fast_confirmed(self._hv, coll, key)
            if r is not _FALLBACK:
                return r  # type: ignore[no-any-return]
        return self._read_record(_get_confirmed_into, coll, key)

    def _read_record(self, fn: Any, coll: str, key: str) -> Optional[Record]:
        """One record through ``optimist_get_into`` (or ``_confirmed_into``) and this thread's
        read buffer; NOTFOUND is None. A record larger than the buffer grows it, and is read
        again (it may have changed in between)."""
        c, k = coll_cstr(coll), cstr(key, "key")
        while True:
            data, cbuf, cap, length, length_ref = _buffer.state
            rc = fn(self._h, c, k, cbuf, cap, length_ref)
            if rc:
                if rc == _NOTFOUND:
                    return None
                raise_for(rc)
            n = length.value
            if n < len(data):
                value: Record = _loads_bytearray(data[:n])
                return value
            _buffer.resize(max(n + 1, 2 * len(data)))

    def is_pending(self, coll: str, key: str) -> bool:
        """Whether a pending, inflight or failed mutation touches the record."""
        out = c_int()
        check(_is_pending(self._h, coll_cstr(coll), cstr(key, "key"), byref(out)))
        return bool(out.value)

    def scan(self, coll: str, prefix: str = "", limit: int = 0) -> List[Tuple[str, Record]]:
        """Visible records whose key starts with ``prefix``, in bytewise key order, as
        ``(key, record)`` pairs; ``limit`` 0 means all."""
        limit = int(limit)
        if limit < 0:
            raise MisuseError("limit must not be negative")
        out = c_void_p()
        check(_scan(self._h, coll_cstr(coll), cstr(prefix, "prefix"), limit, byref(out)))
        return [(k, v) for k, v in take_json(out)]

    def status(self, mid: int) -> str:
        """``"pending"``, ``"inflight"``, ``"failed"``, ``"committed"`` or ``"rolled_back"``.

        Raises:
            NotFoundError: unknown id.
        """
        out = c_int()
        check(_status(self._h, u64(mid, "mutation id"), byref(out)))
        return _STATUSES.get(out.value, str(out.value))

    def pending_count(self) -> int:
        """The number of mutations not yet ended (pending, inflight or failed)."""
        out = c_uint64()
        check(_pending_count(self._h, byref(out)))
        return out.value

    # Status you can see -----------------------------------------------------------------

    def mutations(self, status: Optional[str] = None) -> List[Dict[str, Any]]:
        """The mutations not yet ended, in id order: all of them, or those whose status is
        ``status`` (``"pending"``, ``"inflight"`` or ``"failed"``). Each is a dict with the keys
        ``id``, ``status``, ``ops`` (wire form, as :meth:`outbox_next` gives them),
        ``attempts`` (sends so far), ``last_error`` (str or None), ``next_attempt_ms`` (not
        handed out before this time, on the clock passed to :meth:`fail`; 0 when due at once),
        ``created_ms`` (always None: the library never reads a clock), ``policy``
        (``"rollback"`` or ``"keep"``), ``dedupe_key`` (str or None) and ``retry`` (the app's
        retries of a kept failure).

        Raises:
            MisuseError: ``status`` is not one of those three (the store keeps nothing of
                committed or rolled back mutations but their :meth:`status`).
        """
        code = 0
        if status is not None:
            code = _STATUS_CODES.get(status, -1) if isinstance(status, str) else -1
            if code < 0:
                raise MisuseError(f"status must be None, 'pending', 'inflight' or 'failed', not {status!r}")
        out = c_void_p()
        check(_mutations(self._h, code, byref(out)))
        listed: List[Dict[str, Any]] = take_json(out)
        return listed

    def mutation(self, mid: int) -> Dict[str, Any]:
        """Mutation ``mid`` as a dict of the form :meth:`mutations` lists: for a mutation not
        yet ended, and for each of the last 1,000 that ended since the store was opened, with
        its final ``status`` and ``last_error`` (why it was undone)::

            if store.wait_settled(mid, 5.0) == "rolled_back":
                print("not saved:", store.mutation(mid)["last_error"])

        Raises:
            NotFoundError: unknown id, or one that ended before the last 1,000 (or before the
                store was opened): :meth:`status` still gives its status.
        """
        out = c_void_p()
        check(_mutation(self._h, u64(mid, "mutation id"), byref(out)))
        found: Dict[str, Any] = take_json(out)
        return found

    def wait_settled(self, mid: int, timeout_s: Optional[float] = None) -> Optional[str]:
        """Waits until mutation ``mid`` settles and returns its final status (``"committed"``,
        ``"rolled_back"``, or ``"failed"`` under policy ``"keep"``), or None when ``timeout_s``
        seconds pass first (None: no limit; 0: look once). Other Python threads run meanwhile
        (the wait releases the GIL), and it wakes when a change ends the mutation (no polling).

        Raises:
            NotFoundError: unknown id. MisuseError: the store is closed (also while waiting).
        """
        out = c_int()
        check(_wait_settled(self._h, u64(mid, "mutation id"), _timeout_ms(timeout_s), byref(out)))
        status = _STATUSES.get(out.value, str(out.value))
        return status if status in ("committed", "rolled_back", "failed") else None

    def explain(self, coll: str, key: str) -> Dict[str, Any]:
        """Why a record shows what it shows: a dict with ``confirmed`` (the acknowledged
        value, or None), ``layers`` (each mutation not yet ended that touches the record,
        oldest first: a dict with ``id``, ``status``, ``ops`` (its ops on this record, wire
        form) and ``value`` (the record after it, None when deleted)) and ``visible`` (what
        :meth:`get` returns). An op that cannot apply on the value below it is skipped, as in
        the visible state."""
        out = c_void_p()
        check(_explain(self._h, coll_cstr(coll), cstr(key, "key"), byref(out)))
        explained: Dict[str, Any] = take_json(out)
        return explained

    # Outbox -----------------------------------------------------------------------------

    def outbox_next(self, now_ms: int) -> Optional[Tuple[int, List[Dict[str, Any]]]]:
        """Hands out the oldest pending mutation due at ``now_ms`` and marks it inflight:
        ``(id, ops)`` with the ops in wire form, or None when nothing is due. For hosts that
        send by hand; while a sync runs (:meth:`sync_start`) it owns the outbox.

        Raises:
            MisuseError: a sync runs on the store.
        """
        mid = c_uint64()
        ops = c_void_p()
        rc = call_changing("outbox_next", _outbox_next, self._h, i64(now_ms, "now_ms"), byref(mid), byref(ops))
        if rc:
            if rc == _NOTFOUND:
                return None
            raise_for(rc)
        return mid.value, take_json(ops)

    def outbox_wait(self, timeout_s: Optional[float] = None) -> bool:
        """Waits until some mutation is pending (made, retried, or backing off; not inflight)
        or ``timeout_s`` seconds pass (None: no limit; 0: look once): True if one is. It hands
        nothing out (:meth:`outbox_next` does, and judges a backing-off mutation's time). What
        a sender to the app's own backend blocks on instead of polling::

            while store.outbox_wait():
                taken = store.outbox_next(now_ms())
                if taken is None:          # all pending ones back off
                    time.sleep(0.05)
                    continue
                mid, ops = taken
                ...                        # send; then commit, or fail

        Raises:
            MisuseError: a sync runs on the store (it sends the outbox itself), or the store
                is closed (also while waiting).
        """
        out = c_int()
        check(_outbox_wait(self._h, _timeout_ms(timeout_s), byref(out)))
        return out.value != 0

    def fail(self, mid: int, transient: bool, reason: Optional[str], now_ms: int) -> None:
        """A send failed. A transient failure comes back pending after exponential backoff
        (with jitter) from ``now_ms``; a permanent one, or one past the retry limit, is
        handled by the mutation's policy (rolled back, or kept as ``"failed"``).

        Raises:
            NotFoundError: unknown id. StateError: the mutation is not pending or inflight.
        """
        check(call_changing("fail", _fail, self._h, u64(mid, "mutation id"), 1 if transient else 0,
                            opt_cstr(reason, "reason"), i64(now_ms, "now_ms")))

    def retry(self, mid: int) -> None:
        """Makes a failed (or backing-off) mutation due again at once.

        Raises:
            NotFoundError: unknown id. StateError: it is inflight or ended.
        """
        check(call_changing("retry", _retry, self._h, u64(mid, "mutation id")))

    # Freshness --------------------------------------------------------------------------

    def mark_loaded(self, coll: str, from_key: str, to_key: str, at_ms: int) -> None:
        """Records that keys ``from_key..to_key`` (inclusive) of ``coll`` were loaded from the
        authority at ``at_ms``."""
        check(call_changing("mark_loaded", _mark_loaded, self._h, coll_cstr(coll),
                            cstr(from_key, "from_key"), cstr(to_key, "to_key"), i64(at_ms, "at_ms")))

    def needs_reload(self, coll: str, key: str, now_ms: int, max_age_ms: int) -> bool:
        """Whether ``key`` lies outside every loaded range of ``coll``, or only in ranges
        loaded more than ``max_age_ms`` before ``now_ms``."""
        out = c_int()
        check(_needs_reload(self._h, coll_cstr(coll), cstr(key, "key"),
                            i64(now_ms, "now_ms"), i64(max_age_ms, "max_age_ms"), byref(out)))
        return bool(out.value)

    # Views ------------------------------------------------------------------------------

    def view_define(self, name: str, coll: str, prefix: str, kind: str) -> None:
        """Defines (or redefines) an aggregate over the visible records of ``coll`` whose key
        starts with ``prefix``: ``kind`` is ``"count"`` or ``"sum:<field>"``. It is kept up to
        date on every change; read it with :meth:`view_get`."""
        check(_view_define(self._h, cstr(name, "name"), coll_cstr(coll),
                           cstr(prefix or "", "prefix"), cstr(kind, "kind")))

    def view_get(self, name: str) -> float:
        """The current value of a view (O(1)).

        Raises:
            NotFoundError: no such view.
        """
        if _fast_view_get is not None:
            r = _fast_view_get(self._hv, name)
            if r is not _FALLBACK:
                return r  # type: ignore[no-any-return]
        out = c_double()
        check(_view_get(self._h, cstr(name, "name"), byref(out)))
        return out.value

    # Live queries -----------------------------------------------------------------------

    def index_define(self, coll: str, field: Union[str, Sequence[str]]) -> None:
        """Defines an ordered secondary index on ``field`` of the records of ``coll``, so that
        a query whose ``where`` narrows that field (``eq``, ``in``, ``lt``..``ge`` or ``prefix``
        on it, alone, in an ``and``, or in every item of an ``or``) reads only the records the
        index points to when it opens, instead of its whole range.

        ``field`` is a path as a spec writes it: dotted (``"meta.day"``) or a list of names;
        not ``"$key"``. The index is built once from the records there (on a store file,
        inside the file) and kept up to date on every change; a store file keeps it across
        reopens. Defining an index that exists does nothing.

            >>> import optimist
            >>> with optimist.Store() as s:
            ...     _ = s.mutate([optimist.put("logs", "a", {"habit": "run"}), optimist.put("logs", "b", {"habit": "read"})])
            ...     s.index_define("logs", "habit")
            ...     [r["key"] for r in s.query({"collection": "logs", "where": {"field": "habit", "eq": "run"}}).rows()]
            ['a']

        Raises:
            InvalidError: ``field`` is ``"$key"``, empty or has an empty name.
            StoreIOError: the disk failed.
            MisuseError: the store is closed.
        """
        text = field if isinstance(field, str) else json.dumps(list(field), ensure_ascii=False)
        check(_index_define(self._h, coll_cstr(coll), cstr(text, "field")))

    def query(self, spec: Union[str, Dict[str, Any]]) -> Query:
        """Opens a live query: its rows are the query's result over the visible records now,
        and stay so after every call, kept current incrementally (never re-run).

        ``spec`` is a dict (or its JSON text)::

            {"collection": "logs",                                  # required
             "range": {"prefix": "2026-11-"} or {"from": K1, "to": K2},  # keys; to exclusive
             "where": {"field": "habit", "eq": "run"},              # and/or/not, in, prefix,
                                                                    # exists, lt..ge, status
             "order": [{"field": "day", "desc": True}],             # then by key
             "limit": 50,
             "group": {"by": ["habit"], "aggregates": {"n": "count", "total": "sum:minutes"}}}

        Field paths are dotted (``"meta.tags"``) or lists of names; ``"$key"`` is the key.
        Rows are ``{"key", "value", "status"}``, or ``{"group", "values"}`` when grouped.
        See docs/queries.md for every predicate, the order over values and the aggregates.

            >>> import optimist
            >>> with optimist.Store() as s:
            ...     _ = s.mutate([optimist.put("logs", "a", {"day": 2}), optimist.put("logs", "b", {"day": 5})])
            ...     q = s.query({"collection": "logs", "order": [{"field": "day", "desc": True}]})
            ...     [r["key"] for r in q.rows()]
            ['b', 'a']

        Raises:
            InvalidError: not a valid spec (the message names the offending member).
            MisuseError: the store is closed.
        """
        return Query(self, spec)

    # Subscriptions ----------------------------------------------------------------------

    def subscribe(self, callback: Callback, coll: Optional[str] = None,
                  prefix: Optional[str] = None) -> Subscription:
        """Calls ``callback(changes)`` once per state-changing call with the list of
        :class:`Change` (records of ``coll`` whose key starts with ``prefix``; None: all)
        whose visible value or pending flag changed.

        The callback runs synchronously on the thread that made the call, after the change
        is visible; it may read and mutate the store. An exception it raises is re-raised
        from the store call that triggered it, after the change was applied (several at
        once: a ``BaseExceptionGroup``). Changes made by the background sync
        (:meth:`sync_start`) are delivered on the sync's thread; an exception raised there
        has no call to surface from and is logged to the ``optimist`` logger.

        Returns a :class:`Subscription`; ``.close()`` (or :meth:`unsubscribe`) ends it.
        """
        if not callable(callback):
            raise TypeError("callback must be callable")
        c = opt_cstr(coll, "collection")
        p = opt_cstr(prefix, "prefix")
        token = register(callback)
        out = c_uint64()
        rc = _subscribe(self._h, c, p, TRAMPOLINE, token, byref(out))
        if rc:
            unregister(token)
            raise_for(rc)
        sub = Subscription(self, out.value, token)
        self._subs[out.value] = sub
        return sub

    def unsubscribe(self, sub: Union[Subscription, int]) -> None:
        """Ends a subscription (a :class:`Subscription` or its id).

        Raises:
            NotFoundError: no such subscription (e.g. already ended).
        """
        sid = sub.id if isinstance(sub, Subscription) else u64(sub, "subscription id")
        known = self._subs.pop(sid, None)
        if known is not None:
            unregister(known._token)
        check(_unsubscribe(self._h, sid))

    def _forget_subscription(self, sub: Subscription, quiet: bool) -> None:
        """Ends ``sub`` in the library, for :meth:`Subscription.close`."""
        if self._subs.pop(sub.id, None) is None or self._closed:
            return
        rc = _unsubscribe(self._h, sub.id)
        if rc and not quiet:
            raise_for(rc)


def _timeout_ms(timeout_s: Optional[float]) -> int:
    """Seconds (None: no limit) as the C waits' milliseconds (negative: no limit)."""
    if timeout_s is None:
        return -1
    if isinstance(timeout_s, bool) or not isinstance(timeout_s, (int, float)):
        raise MisuseError(f"timeout_s must be a number of seconds or None, not {timeout_s!r}")
    if timeout_s != timeout_s or timeout_s < 0:
        raise MisuseError(f"timeout_s must not be negative, not {timeout_s!r}")
    return min(int(timeout_s * 1000), 2**62)


def _renames_json(renames: Sequence[Tuple[str, str, str]]) -> bytes:
    """``(coll, from_key, to_key)`` triples as the JSON array the C commit takes."""
    out = []
    for r in renames:
        if isinstance(r, (str, bytes)) or len(r) != 3 or not all(isinstance(x, str) for x in r):
            raise InvalidError(f"a rename is a (coll, from_key, to_key) tuple of strings, not {r!r}")
        out.append({"coll": r[0], "from": r[1], "to": r[2]})
    return json.dumps(out, ensure_ascii=False).encode("utf-8", "surrogatepass")
