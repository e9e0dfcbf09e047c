"""What a subscription callback receives: a list of :class:`Change`."""

from __future__ import annotations

from typing import Any, Dict, NamedTuple, Optional

__all__ = ["Change"]


class Change(NamedTuple):
    """A record whose visible value or pending flag changed in one store call.

    Attributes:
        collection: the record's collection.
        key: the record's key.
        value: the new visible record, or None when the record is gone.
        pending: whether a not-yet-ended mutation still touches the record (the flag a UI
            dims or badges).
        cause: what changed it: ``"mutate"``, ``"commit"``, ``"rollback"``, ``"server"``,
            ``"fail"`` or ``"retry"``.
    """

    collection: str
    key: str
    value: Optional[Dict[str, Any]]
    pending: bool
    cause: str
