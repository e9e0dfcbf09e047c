"""Callbacks from the library into Python: one C listener for the whole process, and a
per-thread frame so that exceptions raised in callbacks are never lost.

This module sits below :mod:`optimist._store`, :mod:`optimist._subscriptions` and
:mod:`optimist._sync`, which all use it, and imports none of them.

Why one module-level callback instead of one ``CFUNCTYPE`` object per subscription: the
library calls listeners outside its lock, from a list it took under the lock, so a listener
may still be called (on another thread) just after ``optimist_unsubscribe`` returned. Freeing
a per-subscription ctypes thunk at that moment would let C jump into freed memory. Instead
:data:`TRAMPOLINE` lives as long as the module, and the ``ctx`` pointer the library hands back
is a token looked up in :data:`_registry`; a token that is gone (unsubscribed, store closed)
is ignored. So no delivery that starts after :meth:`Subscription.close` returns calls the
callback (one already running on another thread may still finish, as in the C API).

Why exceptions go through a thread-local frame: ctypes cannot propagate an exception out of a
callback into C (it prints it and carries on). Every store call that can trigger callbacks
runs inside a *frame* (:func:`call_changing`); the trampoline appends any exception the user's
callback raises to the innermost frame of its thread (listeners run synchronously on the
calling thread), and the frame re-raises it when the C call has returned, i.e. after the
change is applied. A callback that calls the store again opens a nested frame, so its own
errors surface inside the callback and, if uncaught there, in the outer call. A callback run
with no frame on its thread is reported through the ``optimist`` logger instead: that is the
case of changes made by the background sync (``Store.sync_start``), delivered on the sync's
own thread, where no store call of the application could re-raise it.
"""

from __future__ import annotations

import builtins
import itertools
import logging
import threading
from typing import Any, Callable, Dict, List, Optional

from . import _ffi
from ._changes import Change
from ._json import loads as _loads
from ._util import raise_for

__all__ = ["TRAMPOLINE", "QUERY_NUMBERED_TRAMPOLINE", "InOrder", "call_changing", "register", "registered", "unregister", "Callback"]

#: A subscription callback: called with the batch of changes of one store call.
Callback = Callable[[List[Change]], Any]

_log = logging.getLogger("optimist")
_tls = threading.local()
_registry: Dict[int, Callback] = {}
_tokens = itertools.count(1)  # 0 would be a NULL ctx
_CAUSES = _ffi.CAUSES
_RECORD = _ffi.RECORD_STATUSES
_new_change = tuple.__new__  # every field given: skips Change.__new__'s default for status


def register(callback: Callback) -> int:
    """Registers ``callback``; returns the token to pass as the listener's ``ctx``."""
    token = next(_tokens)
    _registry[token] = callback
    return token


def unregister(token: int) -> None:
    """Forgets a token: later deliveries for it are dropped."""
    _registry.pop(token, None)


def registered(token: int) -> bool:
    """Whether ``token`` still delivers: registered, and not unregistered since."""
    return token in _registry


def _deliver(ctx: Optional[int], changes: Any, n: int) -> None:
    """The body of :data:`TRAMPOLINE`: converts the C array and calls the user's callback."""
    try:
        callback = _registry.get(ctx or 0)
        if callback is None:
            return
        batch: List[Change] = []
        for i in range(n):
            c = changes[i]
            v = c.value_json
            st = c.pending  # the record status: OPTIMIST_RECORD_CONFIRMED 0, PENDING 1, FAILED 2
            batch.append(_new_change(Change, (
                c.collection.decode("utf-8"),
                c.key.decode("utf-8"),
                None if v is None else _loads(v),
                st != 0,
                _CAUSES.get(c.cause, str(c.cause)),
                _RECORD.get(st, "pending"),
            )))
        callback(batch)
    except BaseException as e:  # noqa: BLE001 - every exception is handed on, none dropped
        _hand_on(e, "subscription")


def _hand_on(e: BaseException, what: str) -> None:
    """Hands a callback's exception to the innermost frame of this thread, to be re-raised
    from the store call; with no frame (the sync's thread), logs it."""
    frame = getattr(_tls, "errors", None)
    if frame is None:
        _log.error("exception in an optimist %s callback (outside a store call, e.g. on the sync thread)",
                   what, exc_info=e)
    else:
        frame.append(e)


#: The one C listener every subscription uses (kept alive by this module).
TRAMPOLINE = _ffi.LISTENER(_deliver)


class InOrder:
    """Hands a live query's numbered deliveries to ``callback`` in the order of their numbers.

    The library delivers each call's deltas on the thread that made the call, outside its
    locks, so calls made on two threads at once (a tap and the sync's pull) may deliver in
    either order, or at once. Each list of deltas applies to the rows as the call before it
    left them, so they must be applied in number order. A delivery that comes before its turn
    is kept; the thread that delivers the one before it then delivers it too, after. Callbacks
    of one subscription therefore never run at once, and a callback that changes the store
    gets that change's deltas after it returns, not inside it.
    """

    __slots__ = ("callback", "_lock", "_next", "_held", "_busy")

    def __init__(self, callback: Callable[[List[Dict[str, Any]]], Any]) -> None:
        self.callback = callback
        self._lock = threading.Lock()
        self._next = 0            # the number of the next delivery to hand on; 0: not started
        self._held: Dict[int, List[Dict[str, Any]]] = {}
        self._busy = True         # until start(): deliveries wait

    def start(self, delivered: int) -> None:
        """The subscription is made and its rows (if read) include every delivery up to
        ``delivered``: hands on what came meanwhile, from ``delivered + 1``."""
        with self._lock:
            self._next = delivered + 1
            for n in [n for n in self._held if n <= delivered]:
                del self._held[n]
        self._drain()

    def take(self, number: int, deltas: List[Dict[str, Any]]) -> None:
        """One delivery: handed on now if it is its turn and no other thread is handing on."""
        with self._lock:
            if self._next and number < self._next:
                return  # included in the rows read with the subscription
            self._held[number] = deltas
            if self._busy:
                return  # the thread handing on (or start()) will hand it on
            self._busy = True
        self._drain()

    def _drain(self) -> None:
        """Hands on the held deliveries in turn; the caller holds the turn (``_busy``)."""
        errors: List[BaseException] = []
        while True:
            with self._lock:
                deltas = self._held.pop(self._next, None)
                if deltas is None:
                    self._busy = False
                    break
                self._next += 1
            try:
                self.callback(deltas)
            except BaseException as e:  # noqa: BLE001 - handed on below, none dropped
                errors.append(e)
        for e in errors:
            _hand_on(e, "query")


def _deliver_query_numbered(ctx: Optional[int], number: int, deltas_json: Optional[bytes], n: int) -> None:
    """The body of :data:`QUERY_NUMBERED_TRAMPOLINE`: a numbered delivery, decoded, to the
    subscription's :class:`InOrder`."""
    try:
        order = _registry.get(ctx or 0)
        if order is None or deltas_json is None:
            return
        order.take(number, _loads(deltas_json))  # type: ignore[attr-defined]
    except BaseException as e:  # noqa: BLE001 - every exception is handed on, none dropped
        _hand_on(e, "query")


#: The one numbered C listener every live query's subscription uses (kept alive by this module).
QUERY_NUMBERED_TRAMPOLINE = _ffi.QUERY_NUMBERED_LISTENER(_deliver_query_numbered)


def _reraise(errors: List[BaseException], what: str) -> None:
    """Raises what callbacks raised during ``what``: the exception itself when there is one,
    a ``BaseExceptionGroup`` when several callbacks raised (before Python 3.11: the first,
    with the others logged to the ``optimist`` logger)."""
    note = f"raised by an optimist subscription callback during Store.{what}(); the change was applied"
    for e in errors:
        if hasattr(e, "add_note"):
            e.add_note(note)
    if len(errors) == 1:
        raise errors[0]
    group = getattr(builtins, "BaseExceptionGroup", None)
    if group is not None:
        raise group(f"{len(errors)} subscription callbacks raised during Store.{what}()", errors)
    # Before Python 3.11 there are no exception groups: raise the first, log the others.
    for e in errors[1:]:
        _log.error("another exception in an optimist subscription callback during Store.%s()", what, exc_info=e)
    raise errors[0]


def call_changing(what: str, fn: Callable[..., int], *args: Any) -> int:
    """Calls a state-changing C function inside a callback-error frame.

    Returns the result code (the caller turns a nonzero one into an exception, since some
    need out-values, e.g. ``DUPLICATE``). When the call succeeded and callbacks raised,
    raises their exception(s) instead.
    """
    errors: List[BaseException] = []
    outer = getattr(_tls, "errors", None)
    _tls.errors = errors
    try:
        rc = fn(*args)
    finally:
        _tls.errors = outer
    if errors:
        if rc != 0:
            # Not expected (listeners run only after a change succeeded), but never drop them.
            try:
                raise_for(rc)
            except BaseException as e:
                raise e from errors[0]
        _reraise(errors, what)
    return rc

