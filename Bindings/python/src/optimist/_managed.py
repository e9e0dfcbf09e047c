"""An owner for one C pointer the library handed out: freed exactly once.

The package holds few C objects of its own (stores have their own class, strings are copied
out at once by :func:`optimist._ffi.take_string`); a batch, built for one call and freed right
after it, is the one made over and over. :class:`Managed` owns such a pointer so each call site
reads ``with make_batch(ops) as b: call(..., b, ...)`` instead of repeating try/finally:

- :meth:`Managed.close` frees it (idempotent); leaving a ``with`` block closes it; an owner
  garbage-collected while still open frees it then (a last resort, not the plan);
- the owner passes straight to ctypes (``_as_parameter_``), and raises :class:`ValueError` once
  closed, so a freed pointer never reaches the library.
"""

from __future__ import annotations

import ctypes
from typing import Any, Callable, ClassVar, Optional

__all__ = ["Managed"]


class Managed:
    """Owns the C pointer ``ptr``; a subclass names the function that frees it (``_free``)."""

    __slots__ = ("_ptr",)

    #: Frees the pointer (e.g. ``optimist_batch_free``); set by each subclass.
    _free: ClassVar[Callable[[Any], None]]

    def __init__(self, ptr: ctypes.c_void_p) -> None:
        if not ptr:
            raise ValueError(f"{type(self).__name__}: NULL pointer")
        self._ptr: Optional[ctypes.c_void_p] = ptr

    @property
    def _as_parameter_(self) -> ctypes.c_void_p:
        """What ctypes passes for this object: the pointer, while it is owned."""
        if self._ptr is None:
            raise ValueError(f"{type(self).__name__} used after close")
        return self._ptr

    @property
    def closed(self) -> bool:
        return self._ptr is None

    def close(self) -> None:
        """Frees the pointer, once; later calls do nothing."""
        ptr, self._ptr = self._ptr, None
        if ptr is not None:
            type(self)._free(ptr)

    def __enter__(self) -> "Managed":
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def __del__(self) -> None:
        try:
            self.close()
        except Exception:  # noqa: BLE001 - e.g. the library already gone at interpreter exit
            pass
