"""Op constructors: :func:`put`, :func:`patch`, :func:`delete`, :func:`incr`.

An :class:`Op` is an immutable value; a list of them is one mutation (or one server change).
Arguments are checked and the record encoded to JSON when the op is made, so a bad value is
reported where it was written, and a mutation built once can be sent many times cheaply.

``Op`` is a tuple underneath because building one is on the hot path of every ``mutate``: a
tuple is created in one step, where a class with guarded attributes costs a call per field.
"""

from __future__ import annotations

import ctypes
import json
import math
from operator import itemgetter
from typing import Any, Callable, Dict, Iterable, Mapping, Optional, Tuple, Union

from . import _fast, _ffi, _json
from ._error import InvalidError
from ._managed import Managed
from ._util import check, coll_cstr, cstr

__all__ = ["Op", "put", "patch", "delete", "incr", "OpLike", "Batch", "make_batch"]

_public_dumps = json.JSONEncoder(ensure_ascii=False, allow_nan=False, separators=(",", ":")).encode


def _fast_dumps() -> Optional[Callable[[Any], str]]:
    """The C encoder that ``JSONEncoder.encode`` builds on every call, built once.

    Encoding the record is the largest Python cost of ``put``/``patch`` (about half of it is
    re-creating this encoder per call). It is the same object ``json`` uses internally with
    the same arguments, minus the circular-reference check (a cycle ends in RecursionError,
    reported as InvalidError). If this Python's ``json`` differs in any way the self-check
    below notices, the public encoder is used instead.
    """
    try:
        from json.encoder import c_make_encoder, encode_basestring  # type: ignore[attr-defined]
        if c_make_encoder is None:
            return None
        default = json.JSONEncoder().default
        enc = c_make_encoder(None, default, encode_basestring, None, ":", ",", False, False, False)

        def dumps(value: Any) -> str:
            return "".join(enc(value, 0))

        sample = {"a": [1, 2.5, -0.0, 1e300, None, True, False, "\u00e9\n\"\\\x00"], "b": {"c": {}}, 3: []}
        if dumps(sample) != _public_dumps(sample):
            return None
        try:
            dumps({"x": float("nan")})
            return None
        except ValueError:
            pass
        try:
            dumps({"x": object()})
            return None
        except TypeError:
            pass
        return dumps
    except Exception:  # noqa: BLE001 - any surprise: use the public encoder
        return None


_dumps: Callable[[Any], str] = _fast_dumps() or _public_dumps


#: orjson's encoder for the records it writes as ``json`` would (see ``_json.encode_record``).
_fast_encode = _json.encode_record
_fast_put_args = _fast.put_args


def _encode_record(value: Mapping[str, Any]) -> bytes:
    """``value`` as JSON text in UTF-8. (JSON escapes control characters, so the text never
    holds a NUL byte.)"""
    if type(value) is not dict:
        if not isinstance(value, Mapping):
            raise TypeError(f"value must be a dict (a JSON object), not {type(value).__name__}")
        value = dict(value)
    if _fast_encode is not None:
        text = _fast_encode(value)
        if text is not None:
            return text
    try:
        return _dumps(value).encode("utf-8")
    except (ValueError, RecursionError) as e:  # NaN or infinity, a cycle, a lone surrogate
        raise InvalidError(f"value is not valid JSON: {e}") from None


class Op(Tuple[Any, ...]):
    """One operation of a mutation. Make them with :func:`put`, :func:`patch`,
    :func:`delete` and :func:`incr`.

    Attributes:
        kind: ``"put"``, ``"patch"``, ``"delete"`` or ``"incr"``.
        collection, key: the record's address.
        value: the record (``put``) or merge patch (``patch``); None otherwise.
        field, delta: the numeric field and amount (``incr``); None otherwise.
    """

    __slots__ = ()

    kind: str = property(itemgetter(0), doc="The op: put, patch, delete or incr.")  # type: ignore[assignment]
    collection: str = property(itemgetter(1), doc="The record's collection.")  # type: ignore[assignment]
    key: str = property(itemgetter(2), doc="The record's key.")  # type: ignore[assignment]
    value: Optional[Dict[str, Any]] = property(itemgetter(3), doc="The record or patch.")  # type: ignore[assignment]
    field: Optional[str] = property(itemgetter(4), doc="incr's field.")  # type: ignore[assignment]
    delta: Optional[float] = property(itemgetter(5), doc="incr's amount.")  # type: ignore[assignment]
    #: The C arguments after the batch handle, encoded once.
    c_args: Tuple[Any, ...] = property(itemgetter(6))  # type: ignore[assignment]

    def __new__(cls, kind: str, collection: str, key: str, value: Optional[Mapping[str, Any]] = None,
                field: Optional[str] = None, delta: Optional[float] = None) -> "Op":
        coll_b = coll_cstr(collection)
        key_b = cstr(key, "key")
        args: Tuple[Any, ...]
        if kind == "put" or kind == "patch":
            args = (coll_b, key_b, _encode_record(value))  # type: ignore[arg-type]
            value = value if type(value) is dict else dict(value)  # type: ignore[arg-type]
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
        return tuple.__new__(cls, (kind, collection, key, value, field, delta, args))

    def to_dict(self) -> Dict[str, Any]:
        """The op's wire form, as ``outbox_next`` returns it:
        ``{"op": "put", "coll": C, "key": K, "value": {...}}`` and so on."""
        kind = self[0]
        d: Dict[str, Any] = {"op": kind, "coll": self[1], "key": self[2]}
        if kind == "put" or kind == "patch":
            d["value"] = self[3]
        elif kind == "incr":
            d["field"] = self[4]
            d["delta"] = self[5]
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

    def __reduce__(self) -> Tuple[Any, ...]:
        """Pickles (and copies) as the constructor call, re-checking on load."""
        return (Op, tuple(self[:6]))

    def __eq__(self, other: object) -> bool:
        return isinstance(other, Op) and self.to_dict() == other.to_dict()

    def __ne__(self, other: object) -> bool:
        return not self == other

    def __hash__(self) -> int:
        return hash((self[0], self[1], self[2], self[4], self[5]))

    def __repr__(self) -> str:
        kind = self[0]
        if kind in ("put", "patch"):
            return f"optimist.{kind}({self[1]!r}, {self[2]!r}, {self[3]!r})"
        if kind == "delete":
            return f"optimist.delete({self[1]!r}, {self[2]!r})"
        return f"optimist.incr({self[1]!r}, {self[2]!r}, {self[4]!r}, {self[5]!r})"


_new_op = tuple.__new__


def put(coll: str, key: str, value: Mapping[str, Any]) -> Op:
    """Replace the record ``coll/key`` with ``value`` (a dict)."""
    # Op.__new__'s put branch, written out: building the op is on every tap's path (and the
    # C accelerator builds its arguments when it can: see _fast).
    args = _fast_put_args(coll, key, value) if _fast_put_args is not None else None
    if args is None:
        args = (coll_cstr(coll), cstr(key, "key"), _encode_record(value))
    return _new_op(Op, ("put", coll, key, value if type(value) is dict else dict(value), None, None, args))  # type: ignore[arg-type]


def patch(coll: str, key: str, value: Mapping[str, Any]) -> Op:
    """JSON merge patch (RFC 7396) ``value`` onto the record; a missing record counts as
    ``{}``, a ``None`` member removes that field."""
    return Op("patch", coll, key, value)


def delete(coll: str, key: str) -> Op:
    """Remove the record (no error if it is absent)."""
    return Op("delete", coll, key)


def incr(coll: str, key: str, field: str, delta: float) -> Op:
    """Add ``delta`` to the top-level numeric ``field``; a missing record or field counts
    as 0. Re-applies correctly on a new base when the server's value changes."""
    return Op("incr", coll, key, None, field, delta)


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
_byref = ctypes.byref
_void_p = ctypes.c_void_p


class Batch(Managed):
    """An ``optimist_batch`` the package made for one call: freed by ``with`` or ``close()``."""

    __slots__ = ()
    _free = staticmethod(_lib.optimist_batch_free)


def make_batch(ops: Iterable[OpLike]) -> Batch:
    """A new C ``optimist_batch`` holding ``ops``, owned by the returned :class:`Batch`: use it
    as ``with make_batch(ops) as b: ...`` and pass ``b`` to the library."""
    if isinstance(ops, (Op, Mapping, str, bytes)):
        raise TypeError("ops must be a list of ops, e.g. [optimist.put(...)]")
    h = _void_p()
    check(_batch_new(_byref(h)))
    batch = Batch(h)
    try:
        for op in ops:
            if not isinstance(op, Op):
                if not isinstance(op, Mapping):
                    raise TypeError(f"expected an optimist op, not {type(op).__name__}")
                op = Op.from_dict(op)
            rc = _ADD[op[0]](h, *op[6])
            if rc:
                check(rc)
    except BaseException:
        batch.close()
        raise
    return batch
