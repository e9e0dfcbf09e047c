"""What a subscription callback receives: a list of :class:`Change`."""

from __future__ import annotations

from typing import Any, Dict, NamedTuple, Optional

__all__ = ["Change"]


class _ChangeFields(NamedTuple):
    collection: str
    key: str
    value: Optional[Dict[str, Any]]
    pending: bool
    cause: str
    status: str


class Change(_ChangeFields):
    """A record whose visible value or status changed in one store call (or one step of the
    background sync).

    Attributes:
        collection: the record's collection.
        key: the record's key.
        value: the new visible record, or None when the record is gone.
        pending: whether a not-yet-ended mutation still touches the record (the flag a UI
            dims or badges): ``status != "confirmed"``.
        cause: what changed it: ``"mutate"``, ``"commit"``, ``"rollback"``, ``"server"``,
            ``"fail"``, ``"retry"``, or ``"sync"`` (the sync changed a mutation's status and
            left the value alone).
        status: the record's status: ``"confirmed"`` (nothing pending on it), ``"pending"``
            (a pending or inflight mutation touches it) or ``"failed"`` (a kept failure
            touches it: show a "not saved, retry?" badge).

    ``Change(collection, key, value, pending, cause)`` without ``status`` derives it from
    ``pending`` (``"pending"`` or ``"confirmed"``).
    """

    __slots__ = ()

    def __new__(cls, collection: str, key: str, value: Optional[Dict[str, Any]], pending: bool, cause: str,
                status: Optional[str] = None) -> "Change":
        if status is None:
            status = "pending" if pending else "confirmed"
        return tuple.__new__(cls, (collection, key, value, pending, cause, status))

    def __repr__(self) -> str:
        return (f"Change(collection={self[0]!r}, key={self[1]!r}, value={self[2]!r}, pending={self[3]!r}, "
                f"cause={self[4]!r}, status={self[5]!r})")
