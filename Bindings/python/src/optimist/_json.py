"""Decoding the JSON the library hands out: with orjson when it is installed, else with the
standard library.

Decoding is most of what a read costs in Python: ``json.loads`` of a 100-byte record takes
several times the foreign call that fetched it, and orjson about a fifth of ``json.loads``.
orjson is optional (``pip install 'optimist[fast]'``); the binding stays ctypes either way, and
nothing else changes with it.

Both decoders give the same Python values for what the library writes: canonical JSON in valid
UTF-8, with no duplicate member names and integral numbers below 2**53 written without a
fraction (larger or fractional numbers as floats). Should orjson refuse a text anyway (it stops
at 1,024 levels of nesting), that text is decoded by ``json.loads``.

Set ``OPTIMIST_PYTHON_JSON=stdlib`` in the environment, before ``import optimist``, to use the
standard library even when orjson is installed. :data:`DECODER` names the one in use.
"""

from __future__ import annotations

import json
import os
import threading
from ctypes import byref, c_char, c_char_p, c_size_t, c_void_p
from typing import Any, Callable, Tuple, Union

from . import _ffi

__all__ = ["DECODER", "loads", "loads_bytearray", "ReadBuffer", "take_json"]

_free = _ffi.unchecked("optimist_free")


def _stdlib_loads(text: Union[bytes, str]) -> Any:
    # json.loads of bytes first guesses their encoding in Python code; the library's text is
    # always UTF-8, so it is decoded here directly.
    return json.loads(text.decode("utf-8") if type(text) is bytes else text)


def _choose() -> Tuple[str, Callable[[Union[bytes, str]], Any]]:
    if os.environ.get("OPTIMIST_PYTHON_JSON", "") == "stdlib":
        return "json", _stdlib_loads
    try:
        import orjson  # type: ignore[import-not-found]
    except ImportError:
        return "json", _stdlib_loads
    fast, refused = orjson.loads, orjson.JSONDecodeError

    def loads(text: Union[bytes, str]) -> Any:
        try:
            return fast(text)
        except refused:
            return _stdlib_loads(text)

    return "orjson", loads


#: ``"orjson"`` or ``"json"``: the decoder this process uses.
DECODER: str
#: Decodes JSON text (``bytes`` in UTF-8, or ``str``) into Python values.
loads: Callable[[Union[bytes, str]], Any]
DECODER, loads = _choose()


def _choose_slice_loads() -> Callable[[bytearray], Any]:
    if DECODER == "orjson":
        return loads  # orjson reads a bytearray as it is
    return lambda b: json.loads(b.decode("utf-8"))


#: Decodes JSON text held in a ``bytearray`` (a slice of a read buffer).
loads_bytearray: Callable[[bytearray], Any] = _choose_slice_loads()


class ReadBuffer(threading.local):
    """A buffer per thread for ``optimist_get_into``, so a read allocates nothing in C and
    frees nothing. ``state`` is ``(data, buffer, capacity, length, length_ref)``: the
    ``bytearray``, then the C arguments made once over it (a ``size_t`` passed as a Python
    int would go as a C ``int``), and the length's out-parameter. One attribute, as each
    read of a thread-local attribute is a lookup. Grown (never shrunk) when a record does
    not fit."""

    def __init__(self) -> None:
        self.resize(1024)

    def resize(self, size: int) -> None:
        data = bytearray(size)
        length = c_size_t()
        self.state = (data, (c_char * size).from_buffer(data), c_size_t(size), length, byref(length))


def take_json(p: c_void_p) -> Any:
    """Decodes a library-owned JSON string and frees it with ``optimist_free``. The text is
    read in place as a ``char *`` and handed to the decoder as bytes: no foreign call to copy
    it, and no ``str`` made first when orjson decodes it."""
    try:
        text = c_char_p.from_buffer(p).value
        return loads(b"" if text is None else text)
    finally:
        _free(p)
