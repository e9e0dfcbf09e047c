"""``Subscription``: the handle :meth:`Store.subscribe` returns.

The machinery behind it (the one C listener every subscription shares, the token registry
and the callback-error frames of :func:`call_changing`) lives in :mod:`optimist._callbacks`,
which explains why it works that way. This module needs nothing of :mod:`optimist._store`:
the store a subscription belongs to is typed by the :class:`SubscriptionOwner` protocol.
"""

from __future__ import annotations

from typing import Protocol

# TRAMPOLINE, Callback, call_changing, register and unregister are re-exported: their home was
# this module before they moved to _callbacks.
from ._callbacks import TRAMPOLINE, Callback, call_changing, register, registered, unregister

__all__ = ["TRAMPOLINE", "Subscription", "SubscriptionOwner", "call_changing", "register", "unregister",
           "Callback"]


class SubscriptionOwner(Protocol):
    """What a :class:`Subscription` needs of its owner (:class:`optimist.Store` and
    :class:`optimist.Query` are ones)."""

    def _forget_subscription(self, sub: Subscription, quiet: bool) -> None:
        """Ends ``sub`` in the library (for :meth:`Subscription.close`)."""


class Subscription:
    """A live subscription, returned by :meth:`Store.subscribe` and :meth:`Query.subscribe`.

    ``close()`` ends it (safe to call twice, and after the store is closed); no delivery
    that starts after it returns calls the callback. Also a context manager.
    """

    __slots__ = ("_store", "id", "_token", "__weakref__")

    def __init__(self, store: SubscriptionOwner, sub_id: int, token: int) -> None:
        self._store = store
        #: The library's subscription id.
        self.id: int = sub_id
        self._token = token

    @property
    def active(self) -> bool:
        """Whether the subscription still delivers."""
        return registered(self._token)

    def close(self) -> None:
        """Unsubscribes. Idempotent; never raises for an already-ended subscription."""
        if not registered(self._token):
            return
        unregister(self._token)
        self._store._forget_subscription(self, quiet=True)

    def __enter__(self) -> "Subscription":
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def __repr__(self) -> str:
        return f"<optimist.Subscription id={self.id} {'active' if self.active else 'closed'}>"
