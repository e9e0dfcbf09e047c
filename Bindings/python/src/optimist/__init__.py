"""Optimist: an optimistic-state store (confirmed state + pending mutations), over the C ABI
of ``liboptimist`` through ctypes.

    >>> import optimist
    >>> with optimist.Store() as s:
    ...     mid = s.mutate([optimist.put("habits", "h1", {"name": "run"})])
    ...     s.get("habits", "h1"), s.is_pending("habits", "h1")
    ({'name': 'run'}, True)

Finding the library (first that loads wins):

1. ``OPTIMIST_LIBRARY``: the path of the library file. When set, only it is tried.
2. The copy bundled in the package (``optimist/_lib/liboptimist.so``), put there by
   ``pip install`` when it finds a built library (see the README).
3. When running from a source checkout: ``build/liboptimist.so``,
   ``.build/release/liboptimist.so``, ``.build/debug/liboptimist.so`` at the checkout root.
4. The system: ``ctypes.util.find_library("optimist")``, ``liboptimist.so.1``,
   ``liboptimist.so`` (``LD_LIBRARY_PATH``, the ``ldconfig`` cache, default directories).

If none loads, importing the package raises :class:`LibraryNotFoundError` (an
``ImportError``) listing every path tried and why it failed.

Subscription callbacks: an exception raised in a callback is re-raised from the store call
that triggered it, after the change was applied (see :meth:`Store.subscribe`); changes the
background sync makes are delivered on its thread, and exceptions there are logged to the
``optimist`` logger.

Background sync: :meth:`Store.sync_start` lets the library push the outbox to a server and
pull its changes on a thread of its own (wire protocol v2), over its built-in HTTP client or
a Python ``transport`` callable; see :meth:`Store.sync_status` for what it is doing.
"""

from __future__ import annotations

import re as _re
from pathlib import Path as _Path

from ._loader import ENV_VAR, LibraryNotFoundError
from ._ffi import MissingSymbolError, lib as _lib, library_path
from ._error import (
    CLASSES,
    BusyError,
    CorruptError,
    DuplicateError,
    Error,
    InternalError,
    InvalidError,
    IOError_,
    MisuseError,
    NotFoundError,
    StateError,
    StoreIOError,
)
from ._changes import Change
from ._ops import Op, delete, incr, patch, put
from ._store import Store
from ._subscriptions import Subscription
from ._query import Query, QuerySubscription, apply_deltas



def _package_version() -> str:
    """The package's version: ``_version.py``, which ``pip install`` writes from
    ``OPTIMIST_VERSION`` in ``Include/optimist.h``; in a source checkout, that header itself."""
    try:
        from ._version import __version__ as v  # type: ignore[import-not-found]
        return str(v)
    except ImportError:
        pass
    header = _Path(__file__).resolve().parents[4] / "Include" / "optimist.h"
    try:
        m = _re.search(r'^#define OPTIMIST_VERSION\s+"([^"]+)"', header.read_text(), _re.M)
    except OSError:
        m = None
    return m.group(1) if m else "0+unknown"


__version__ = _package_version()

__all__ = [
    "Store", "Op", "put", "patch", "delete", "incr", "Change", "Subscription",
    "Query", "QuerySubscription", "apply_deltas",
    "Error", "InternalError", "MisuseError", "NotFoundError", "StateError", "InvalidError",
    "DuplicateError", "StoreIOError", "IOError_", "CorruptError", "BusyError", "CLASSES",
    "LibraryNotFoundError", "MissingSymbolError", "ENV_VAR", "library_path", "library_version",
]


def library_version() -> str:
    """The version string of the loaded ``liboptimist`` (``optimist_version()``)."""
    v = _lib.optimist_version()
    return v.decode("utf-8") if v else ""


# Public classes show (and pickle) under the package name, not the private module they are
# defined in: ``optimist.NotFoundError`` rather than ``optimist._error.NotFoundError``.
for _cls in (Store, Op, Change, Subscription, Error, InternalError, MisuseError, NotFoundError,
             StateError, InvalidError, DuplicateError, StoreIOError, CorruptError, BusyError,
             LibraryNotFoundError, MissingSymbolError):
    _cls.__module__ = __name__
del _cls
