"""Argument conversion and result checking shared by every call into the library.

Python values are checked here before they reach ctypes because ctypes converts some of them
silently and wrongly: a ``bytes`` with a NUL inside is cut short at the NUL, and a negative or
too-large int given for ``uint64_t``/``int64_t`` wraps around. Such arguments raise instead.
"""

from __future__ import annotations

import operator
from typing import Dict, Optional

from . import _ffi
from ._error import DuplicateError, InvalidError, MisuseError, error_for

__all__ = ["check", "cstr", "opt_cstr", "u64", "i64", "raise_for"]

_U64_MAX = (1 << 64) - 1
_I64_MIN = -(1 << 63)
_I64_MAX = (1 << 63) - 1


def raise_for(rc: int, existing_id: int = 0) -> None:
    """Raises the exception for a nonzero result code, with this thread's last error message."""
    message = _ffi.last_error() or _ffi.errstr(rc)
    if rc == _ffi.DUPLICATE:
        raise DuplicateError(message, rc, existing_id)
    raise error_for(rc, message)


def check(rc: int) -> None:
    """Raises unless ``rc`` is ``OPTIMIST_OK``."""
    if rc != 0:
        raise_for(rc)


def cstr(s: str, what: str) -> bytes:
    """``s`` as NUL-terminated UTF-8 for the library.

    Raises:
        TypeError: ``s`` is not a ``str``.
        InvalidError: ``s`` holds a NUL character or a lone surrogate (not valid UTF-8).
    """
    if type(s) is not str and not isinstance(s, str):
        raise TypeError(f"{what} must be a str, not {type(s).__name__}")
    try:
        b = s.encode("utf-8")
    except UnicodeEncodeError as e:
        raise InvalidError(f"{what} is not valid UTF-8 text: {e}") from None
    if b"\0" in b:
        raise InvalidError(f"{what} must not contain a NUL character")
    return b


_COLLECTIONS: Dict[str, bytes] = {}


def coll_cstr(coll: str) -> bytes:
    """:func:`cstr` of a collection name, remembered: an app names a handful of collections
    on every call, and encoding and checking the name again each time is a visible share of
    a read. At most 1,024 names are kept; others are encoded each time."""
    if type(coll) is str:
        b = _COLLECTIONS.get(coll)
        if b is not None:
            return b
    b = cstr(coll, "collection")
    if type(coll) is str and len(_COLLECTIONS) < 1024:
        _COLLECTIONS[coll] = b
    return b


def opt_cstr(s: Optional[str], what: str) -> Optional[bytes]:
    """Like :func:`cstr`, with None passed through as a NULL pointer."""
    return None if s is None else cstr(s, what)


def u64(n: int, what: str) -> int:
    """An int that fits ``uint64_t`` (mutation and subscription ids)."""
    n = operator.index(n)
    if not 0 <= n <= _U64_MAX:
        raise MisuseError(f"{what} must be between 0 and 2**64-1, not {n}")
    return n


def i64(n: int, what: str) -> int:
    """An int that fits ``int64_t`` (times and durations in milliseconds)."""
    n = operator.index(n)
    if not _I64_MIN <= n <= _I64_MAX:
        raise MisuseError(f"{what} must fit a signed 64-bit integer, not {n}")
    return n
