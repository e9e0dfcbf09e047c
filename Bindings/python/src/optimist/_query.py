"""``Query``: a live query, what :meth:`Store.query` returns.

A live query is defined once and kept equal to its result over the store's visible records
after every call, incrementally (the library follows each changed record; it never re-runs the
query). Its rows are read with :meth:`Query.rows`; :meth:`Query.subscribe` delivers, once per
call that changed them, the deltas that turn the rows before the call into the rows after it,
in call order even when calls are made on several threads at once (each delivery carries its
number; :class:`optimist._callbacks.InOrder` hands them on in that order).

Callbacks go through the same machinery as the store's subscriptions (:mod:`optimist._callbacks`):
one C listener for the process, a token per subscription, and exceptions re-raised from the
store call that triggered them.
"""

from __future__ import annotations

import json
from ctypes import byref, c_size_t, c_uint64, c_void_p
from typing import Any, Callable, Dict, List, Mapping, Optional, Tuple, Union

from . import _ffi
from ._callbacks import QUERY_NUMBERED_TRAMPOLINE, InOrder, register, unregister
from ._error import InvalidError
from ._subscriptions import Subscription
from ._json import take_json
from ._util import check, raise_for, u64

__all__ = ["Query", "QuerySubscription", "apply_deltas"]

_lib = _ffi.lib
_open = _lib.optimist_query_open
_count = _lib.optimist_query_count
_rows = _lib.optimist_query_rows
_subscribe = _lib.optimist_query_subscribe_numbered
_unsubscribe = _lib.optimist_query_unsubscribe
_close = _lib.optimist_query_close

#: A query callback: called with one call's deltas (a list of dicts).
QueryCallback = Callable[[List[Dict[str, Any]]], Any]


def apply_deltas(rows: List[Dict[str, Any]], deltas: List[Dict[str, Any]]) -> None:
    """Applies a callback's ``deltas`` to ``rows`` in place, as a screen's copy of a query
    follows it: ``insert`` at ``index``, ``delete`` at ``index``, ``update`` at ``index``."""
    for d in deltas:
        op, i = d["op"], d["index"]
        if op == "insert":
            rows.insert(i, d["row"])
        elif op == "delete":
            del rows[i]
        elif op == "update":
            rows[i] = d["row"]
        else:
            raise ValueError(f"unknown delta op {op!r}")


#: What :meth:`Query.subscribe` returns: the store's own :class:`Subscription` (``close()``,
#: ``active``, a context manager), whose owner is the query.
QuerySubscription = Subscription


class Query:
    """A live query of a :class:`Store` (see :meth:`Store.query` for the spec).

        >>> import optimist
        >>> with optimist.Store() as s:
        ...     _ = s.mutate([optimist.put("logs", "a", {"habit": "run", "minutes": 20})])
        ...     with s.query({"collection": "logs", "where": {"field": "habit", "eq": "run"}}) as q:
        ...         [r["key"] for r in q.rows()], len(q)
        (['a'], 1)

    A context manager: leaving the ``with`` block closes it. After :meth:`close`, or once its
    store is closed, every method raises :class:`MisuseError`.
    """

    def __init__(self, store: Any, spec: Union[str, Mapping[str, Any]]) -> None:
        self._closed = True  # until it opens (a finalizer of a failed open has nothing to close)
        self._subs: Dict[int, Subscription] = {}
        if isinstance(spec, str):
            text = spec
        elif isinstance(spec, Mapping):
            try:
                text = json.dumps(spec, ensure_ascii=False, allow_nan=False)
            except (TypeError, ValueError) as e:
                raise InvalidError(f"the query spec cannot be written as JSON: {e}") from None
        else:
            raise TypeError(f"a query spec is a dict or JSON text, not {type(spec).__name__}")
        try:
            encoded = text.encode("utf-8")
        except UnicodeEncodeError as e:
            raise InvalidError(f"the query spec is not valid UTF-8 text: {e}") from None
        out = c_void_p()
        check(_open(store._h, encoded, byref(out)))
        # The store object stays alive while its query does (its finalizer would close it).
        self._store = store
        self._h = out
        self._closed = False

    def rows(self, offset: int = 0, limit: int = 0) -> List[Dict[str, Any]]:
        """The rows at ``offset`` on, at most ``limit`` of them (0: all): dicts
        ``{"key", "value", "status"}``, or ``{"group", "values"}`` for a grouped query."""
        out = c_void_p()
        check(_rows(self._h, u64(offset, "offset"), u64(limit, "limit"), byref(out)))
        rows: List[Dict[str, Any]] = take_json(out)
        return rows

    def __len__(self) -> int:
        out = c_size_t()
        check(_count(self._h, byref(out)))
        return out.value

    def subscribe(self, callback: QueryCallback) -> Subscription:
        """Calls ``callback(deltas)`` once per store call that changed the rows, with the list
        of deltas (``{"op": "insert"|"delete"|"update", "index": i, "row": ...}``, ``row``
        absent for a delete) which, applied in order (:func:`apply_deltas`), turn the rows
        before the call into the rows after it. No first call: read :meth:`rows` first, or use
        :meth:`mirror`, which reads them in the same step and keeps a copy.

        The callback runs as :meth:`Store.subscribe`'s do: on the thread that made the call,
        after the change is visible; an exception it raises is re-raised from that call.
        Deliveries come in call order, also when calls are made on several threads at once
        (a tap on one, the background sync on its own): one that comes while the delivery
        before it is still running on another thread is made by that thread, after it. So
        calls of one subscription never overlap, and a callback that changes the store hears
        of that change once it has returned.
        """
        return self._subscribe(callback, into=None)

    def mirror(self, on_change: Optional[QueryCallback] = None) -> Tuple[List[Dict[str, Any]], Subscription]:
        """A list of the rows kept equal to :meth:`rows` by the deltas alone, and the
        subscription that keeps it (close it to stop). The rows are read in the same step as
        the subscription is made, and every delivery is applied in call order, whatever
        threads the changes come from. ``on_change(deltas)``, if given, is called after each
        delivery's deltas are applied.

            >>> import optimist
            >>> with optimist.Store() as s:
            ...     with s.query({"collection": "logs", "order": [{"field": "minutes"}]}) as q:
            ...         screen, sub = q.mirror()
            ...         _ = s.mutate([optimist.put("logs", "a", {"minutes": 20})])
            ...         _ = s.mutate([optimist.put("logs", "b", {"minutes": 5})])
            ...         [r["key"] for r in screen], screen == q.rows()
            (['b', 'a'], True)

        The list is changed by the thread that delivers (any thread making a change, the
        background sync's included), one delivery at a time: a reader on another thread may
        see it between two deltas of one delivery.
        """
        rows: List[Dict[str, Any]] = []

        def keep(deltas: List[Dict[str, Any]]) -> None:
            apply_deltas(rows, deltas)
            if on_change is not None:
                on_change(deltas)

        if on_change is not None and not callable(on_change):
            raise TypeError("on_change must be callable")
        return rows, self._subscribe(keep, into=rows)

    def _subscribe(self, callback: QueryCallback, into: Optional[List[Dict[str, Any]]]) -> Subscription:
        """Subscribes ``callback`` through an :class:`InOrder`; with ``into``, fills it with the
        rows read in the same step, before any delivery is handed on."""
        if not callable(callback):
            raise TypeError("callback must be callable")
        order = InOrder(callback)
        token = register(order)  # type: ignore[arg-type]
        out = c_uint64()
        delivered = c_uint64()
        text = c_void_p()
        rc = _subscribe(self._h, QUERY_NUMBERED_TRAMPOLINE, token, byref(out),
                        None if into is None else byref(text), byref(delivered))
        if rc:
            unregister(token)
            raise_for(rc)
        if into is not None:
            into[:] = take_json(text)
        sub = Subscription(self, out.value, token)
        self._subs[out.value] = sub
        self._store._query_listeners += 1
        order.start(delivered.value)
        return sub

    def _forget_subscription(self, sub: Subscription, quiet: bool) -> None:
        """Ends ``sub`` in the library, for :meth:`Subscription.close` (always quietly: the
        query may have ended with its store)."""
        if self._subs.pop(sub.id, None) is None:
            return
        self._store._query_listeners -= 1
        if not self._closed:
            _unsubscribe(self._h, sub.id)

    def close(self) -> None:
        """Closes the query and ends its subscriptions. Safe to call twice."""
        if self._closed:
            return
        self._closed = True
        for sub in list(self._subs.values()):
            unregister(sub._token)
        self._store._query_listeners -= len(self._subs)
        self._subs.clear()
        check(_close(self._h))

    @property
    def closed(self) -> bool:
        """Whether :meth:`close` was called."""
        return self._closed

    def __enter__(self) -> "Query":
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def __del__(self) -> None:
        try:
            if not self._closed:
                self.close()
        except Exception:  # noqa: BLE001 - nowhere to report from a finalizer
            pass
