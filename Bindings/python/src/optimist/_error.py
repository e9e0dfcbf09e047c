"""The exceptions the package raises: one class per C result code.

Every failure from the library becomes an instance of :class:`Error` (or a subclass), carrying
the result code in ``.code`` and the library's message for the failing call (from
``optimist_last_error``, which is per thread, read right after the call on the same thread).
:data:`CLASSES` maps each code to its class, so the mapping is checkable in one place.
"""

from __future__ import annotations

from typing import Dict, Optional, Type

__all__ = [
    "Error", "InternalError", "MisuseError", "NotFoundError", "StateError", "InvalidError",
    "DuplicateError", "StoreIOError", "IOError_", "CorruptError", "BusyError", "CLASSES",
    "error_for",
]


class Error(Exception):
    """Base class of every error the store reports.

    Attributes:
        code: the C result code (``OPTIMIST_*``).
        message: the library's explanation of the failure.
    """

    #: The result code this class stands for (overridden per subclass).
    default_code: int = 1

    def __init__(self, message: str = "", code: Optional[int] = None) -> None:
        self.code: int = self.default_code if code is None else code
        self.message: str = message
        super().__init__(message)


class InternalError(Error):
    """``OPTIMIST_ERROR`` (1): an internal failure in the library (a bug)."""

    default_code = 1


class MisuseError(Error):
    """``OPTIMIST_MISUSE`` (2): a closed store, or a bad argument."""

    default_code = 2


class NotFoundError(Error):
    """``OPTIMIST_NOTFOUND`` (3): no such mutation, view or subscription."""

    default_code = 3


class StateError(Error):
    """``OPTIMIST_STATE`` (4): the mutation is not in a state that allows this call (e.g. it
    was already committed or rolled back)."""

    default_code = 4


class InvalidError(Error):
    """``OPTIMIST_INVALID`` (5): malformed JSON or text, not an object, or an op that cannot
    apply (``incr`` of a non-number). Nothing changed."""

    default_code = 5


class DuplicateError(Error):
    """``OPTIMIST_DUPLICATE`` (6): a not-yet-ended mutation holds the dedupe key.

    Attributes:
        existing_id: the id of the mutation that holds the key.
    """

    default_code = 6

    def __init__(self, message: str = "", code: Optional[int] = None, existing_id: int = 0) -> None:
        super().__init__(message, code)
        self.existing_id: int = existing_id


class StoreIOError(Error):
    """``OPTIMIST_IO`` (7): the store file could not be created, read or written.

    Named so as not to shadow Python's built-in ``IOError`` (an alias of ``OSError``);
    ``optimist.IOError_`` is the same class under its documented name.
    """

    default_code = 7


#: The documented name (docs/python-guide.md) for :class:`StoreIOError`.
IOError_ = StoreIOError


class CorruptError(Error):
    """``OPTIMIST_CORRUPT`` (8): the file is not an Optimist store, or is damaged."""

    default_code = 8


class BusyError(Error):
    """``OPTIMIST_BUSY`` (9): the store file is held by another process."""

    default_code = 9


#: Result code -> exception class; every nonzero code the C ABI defines is here.
CLASSES: Dict[int, Type[Error]] = {
    cls.default_code: cls
    for cls in (InternalError, MisuseError, NotFoundError, StateError, InvalidError,
                DuplicateError, StoreIOError, CorruptError, BusyError)
}


def error_for(code: int, message: str) -> Error:
    """The exception for a result code; an unknown code becomes :class:`Error` itself."""
    cls = CLASSES.get(code)
    if cls is None:
        return Error(message or f"unknown result code {code}", code)
    return cls(message, code)
