"""The optional C accelerator of the hot calls (``optimist._speedups``), bound to the loaded
library: :data:`SPEEDUPS` is ``True`` when it is in use.

Through ctypes a foreign call costs more than a cached read does inside the library, so the
package builds, where a C compiler and Python's headers are, a small extension that makes the
same calls from C: ``optimist_get_into``, ``optimist_get_confirmed_into`` (for
:meth:`Store.get` and :meth:`Store.confirmed`), ``optimist_put`` (for :meth:`Store.mutate` of
one put) and ``optimist_view_get`` (for :meth:`Store.view_get`); it also builds a put op's arguments (:func:`optimist.put`: the names' UTF-8 and the
record's JSON, by orjson when it is in use, for the records ``_json.encode_record`` gives it). It is an accelerator beside the ctypes binding, not a second binding:

- it links nothing: it is handed the addresses of those functions in the library ctypes loaded
  (one loader, one library in the process);
- it takes only the common case (a ``str`` collection and key, or an op's checked ``bytes``) and
  answers :data:`FALLBACK` before calling the library for anything else, so odd input gets the
  ctypes path's errors and messages;
- a library error is raised by the same ``raise_for`` as on the ctypes path; records are decoded
  by the same :func:`optimist._json.loads`.

Without the extension, or with ``OPTIMIST_PYTHON_SPEEDUPS=0`` set before ``import optimist``,
every call goes through ctypes. Results are the same either way (the tests run both).
"""

from __future__ import annotations

import os
from ctypes import c_void_p, cast
from typing import Any, Callable, Optional

from . import _ffi, _json
from ._json import loads
from ._util import raise_for

__all__ = ["FALLBACK", "SPEEDUPS", "get", "confirmed", "put", "put_args", "view_get"]

#: What an accelerated call returns for input it leaves to the ctypes path.
FALLBACK = object()


def _load() -> Optional[Any]:
    if os.environ.get("OPTIMIST_PYTHON_SPEEDUPS", "") == "0":
        return None
    try:
        from . import _speedups  # type: ignore[attr-defined]
    except ImportError:
        return None

    def address(name: str) -> int:
        return cast(_ffi.lib[name], c_void_p).value  # type: ignore[return-value]

    dumps = refused = None
    if _json.encode_record is not None:  # orjson is in use: it encodes plain records here too
        import orjson  # type: ignore[import-not-found]

        dumps, refused = orjson.dumps, orjson.JSONEncodeError
    _speedups.bind(address("optimist_get_into"), address("optimist_get_confirmed_into"),
                   address("optimist_put"), address("optimist_view_get"), loads, raise_for, FALLBACK, dumps,
                   refused)
    return _speedups


_module = _load()

#: Whether the accelerator is in use in this process.
SPEEDUPS: bool = _module is not None
#: ``get(handle, coll, key)``: the visible record, ``None``, or :data:`FALLBACK`.
get: Optional[Callable[[int, Any, Any], Any]] = _module.get if _module else None
#: ``confirmed(handle, coll, key)``: the confirmed record, ``None``, or :data:`FALLBACK`.
confirmed: Optional[Callable[[int, Any, Any], Any]] = _module.confirmed if _module else None
#: ``put(handle, coll, key, json)`` (an op's bytes): the new mutation's id, or :data:`FALLBACK`.
put: Optional[Callable[[int, bytes, bytes, bytes], Any]] = _module.put if _module else None
#: ``put_args(coll, key, value)``: the ``(coll, key, json)`` bytes of a put op, or None for
#: :func:`optimist.put` to build them (and raise what it raises).
put_args: Optional[Callable[[Any, Any, Any], Any]] = _module.put_args if _module else None
#: ``view_get(handle, name)``: the view's value, or :data:`FALLBACK`.
view_get: Optional[Callable[[int, Any], Any]] = _module.view_get if _module else None
