"""Op constructors: :func:`put`, :func:`patch`, :func:`delete`, :func:`incr`.

An :class:`Op` is an immutable value; a list of them is one mutation (or one server change).
Arguments are checked and the record encoded to JSON when the op is made, so a bad value is
reported where it was written, and a mutation built once can be sent many times cheaply.
"""

from __future__ import annotations

import ctypes
import json
import math
from typing import Any, Dict, Iterable, Mapping, Optional, Tuple, Union

from . import _ffi
from ._error import InvalidError
from ._util import check, cstr

__all__ = ["Op", "put", "patch", "delete", "incr", "OpLike", "Batch"]

_dumps = json.JSONEncoder(ensure_ascii=False, allow_nan=False, separators=(",", ":")).encode


def _encode_record(value: Mapping[str, Any], what: str) -> bytes:
    if not isinstance(value, Mapping):
        raise TypeError(f"{what} must be a dict (a JSON object), not {type(value).__name__}")
    try:
        text = _dumps(dict(value) if not isinstance(value, dict) else value)
    except ValueError as e:  # NaN or infinity, or a circular reference
        raise InvalidError(f"{what} is not valid JSON: {e}") from None
    return cstr(text, what)


class Op:
    """One operation of a mutation. Make them with :func:`put`, :func:`patch`,
    :func:`delete` and :func:`incr`.

    Attributes:
        kind: ``"put"``, ``"patch"``, ``"delete"`` or ``"incr"``.
        collection, key: the record's address.
        value: the record (``put``) or merge patch (``patch``); None otherwise.
        field, delta: the numeric field and amount (``incr``); None otherwise.
    """

    __slots__ = ("kind", "collection", "key", "value", "field", "delta", "_args")

    kind: str
    collection: str
    key: str
    value: Optional[Dict[str, Any]]
    field: Optional[str]
    delta: Optional[float]
    _args: Tuple[Any, ...]

    def __init__(self, kind: str, collection: str, key: str, value: Optional[Mapping[str, Any]] = None,
                 field: Optional[str] = None, delta: Optional[float] = None) -> None:
        coll_b = cstr(collection, "collection")
        key_b = cstr(key, "key")
        if kind in ("put", "patch"):
            args: Tuple[Any, ...] = (coll_b, key_b, _encode_record(value, "value"))  # type: ignore[arg-type]
            value = dict(value)  # type: ignore[arg-type]
        elif kind == "delete":
            args = (coll_b, key_b)
        elif kind == "incr":
            if isinstance(delta, bool) or not isinstance(delta, (int, float)):
                raise TypeError(f"delta must be a number, not {type(delta).__name__}")
            try:
                d = float(delta)
            except OverflowError:
                raise InvalidError(f"delta {delta} is too large") from None
            if not math.isfinite(d):
                raise InvalidError("delta must be a finite number")
            delta = d
            args = (coll_b, key_b, cstr(field, "field"), d)  # type: ignore[arg-type]
        else:
            raise ValueError(f"unknown op kind {kind!r}")
        object.__setattr__(self, "kind", kind)
        object.__setattr__(self, "collection", collection)
        object.__setattr__(self, "key", key)
        object.__setattr__(self, "value", value)
        object.__setattr__(self, "field", field)
        object.__setattr__(self, "delta", delta)
        object.__setattr__(self, "_args", args)

    def __setattr__(self, name: str, value: Any) -> None:
        raise AttributeError("Op is immutable")

    def to_dict(self) -> Dict[str, Any]:
        """The op's wire form, as ``outbox_next`` returns it:
        ``{"op": "put", "coll": C, "key": K, "value": {...}}`` and so on."""
        d: Dict[str, Any] = {"op": self.kind, "coll": self.collection, "key": self.key}
        if self.kind in ("put", "patch"):
            d["value"] = self.value
        elif self.kind == "incr":
            d["field"] = self.field
            d["delta"] = self.delta
        return d

    @classmethod
    def from_dict(cls, d: Mapping[str, Any]) -> "Op":
        """Parses the wire form written by :meth:`to_dict` (and by ``outbox_next``)."""
        try:
            kind = d["op"]
            if kind in ("put", "patch"):
                return cls(kind, d["coll"], d["key"], value=d["value"])
            if kind == "delete":
                return cls(kind, d["coll"], d["key"])
            if kind == "incr":
                return cls(kind, d["coll"], d["key"], field=d["field"], delta=d["delta"])
        except KeyError as e:
            raise InvalidError(f"op {dict(d)!r} lacks member {e}") from None
        raise InvalidError(f"unknown op {kind!r}")

    def __eq__(self, other: object) -> bool:
        return isinstance(other, Op) and self.to_dict() == other.to_dict()

    def __hash__(self) -> int:
        return hash((self.kind, self.collection, self.key, self.field, self.delta))

    def __repr__(self) -> str:
        if self.kind in ("put", "patch"):
            return f"optimist.{self.kind}({self.collection!r}, {self.key!r}, {self.value!r})"
        if self.kind == "delete":
            return f"optimist.delete({self.collection!r}, {self.key!r})"
        return f"optimist.incr({self.collection!r}, {self.key!r}, {self.field!r}, {self.delta!r})"


def put(coll: str, key: str, value: Mapping[str, Any]) -> Op:
    """Replace the record ``coll/key`` with ``value`` (a dict)."""
    return Op("put", coll, key, value=value)


def patch(coll: str, key: str, value: Mapping[str, Any]) -> Op:
    """JSON merge patch (RFC 7396) ``value`` onto the record; a missing record counts as
    ``{}``, a ``None`` member removes that field."""
    return Op("patch", coll, key, value=value)


def delete(coll: str, key: str) -> Op:
    """Remove the record (no error if it is absent)."""
    return Op("delete", coll, key)


def incr(coll: str, key: str, field: str, delta: float) -> Op:
    """Add ``delta`` to the top-level numeric ``field``; a missing record or field counts
    as 0. Re-applies correctly on a new base when the server's value changes."""
    return Op("incr", coll, key, field=field, delta=delta)


#: What the store accepts as an op: an :class:`Op`, or its wire-form dict.
OpLike = Union[Op, Mapping[str, Any]]

_lib = _ffi.lib
_ADD = {
    "put": _lib.optimist_batch_put,
    "patch": _lib.optimist_batch_patch,
    "delete": _lib.optimist_batch_delete,
    "incr": _lib.optimist_batch_incr,
}
_batch_new = _lib.optimist_batch_new
_batch_free = _lib.optimist_batch_free


class Batch:
    """A C ``optimist_batch`` holding ``ops``, freed on leaving the ``with`` block."""

    __slots__ = ("handle",)

    def __init__(self, ops: Iterable[OpLike]) -> None:
        if isinstance(ops, (Op, Mapping, str, bytes)):
            raise TypeError("ops must be a list of ops, e.g. [optimist.put(...)]")
        h = ctypes.c_void_p()
        check(_batch_new(ctypes.byref(h)))
        self.handle = h
        try:
            for op in ops:
                if not isinstance(op, Op):
                    if not isinstance(op, Mapping):
                        raise TypeError(f"expected an optimist op, not {type(op).__name__}")
                    op = Op.from_dict(op)
                check(_ADD[op.kind](h, *op._args))
        except BaseException:
            _batch_free(h)
            raise

    def __enter__(self) -> ctypes.c_void_p:
        return self.handle

    def __exit__(self, *exc: object) -> None:
        _batch_free(self.handle)
