"""Decoding the JSON the library hands out, and encoding records for it: with orjson when it is
installed, else with the standard library.

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
from typing import Any, Callable, Dict, Optional, Tuple, Union

from . import _ffi

__all__ = ["DECODER", "encode_record", "loads", "loads_bytearray", "ReadBuffer", "take_json"]

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


_PLAIN = frozenset((str, int, bool, type(None)))


def _plain(value: Any, depth: int = 0) -> bool:
    """Whether every value inside ``value`` (a dict, list or tuple) is of a type the two
    encoders write alike: ``str``, ``int``, ``bool``, None, finite ``float``, and dicts, lists
    and tuples of them, to a modest depth. Not subclasses (an ``IntEnum``), not NaN (orjson
    writes null where ``json`` refuses it), nor anything orjson knows and ``json`` does not
    (``Enum``, ``UUID``, ``datetime``, numpy)."""
    for x in value.values() if type(value) is dict else value:
        t = type(x)
        if t in _PLAIN:
            continue
        if t is float:
            if x - x != 0.0:  # NaN or an infinity
                return False
            continue
        if (t is dict or t is list or t is tuple) and depth < 32 and _plain(x, depth + 1):
            continue
        return False
    return True


def _choose_encoder() -> Optional[Callable[[Dict[str, Any]], Optional[bytes]]]:
    if DECODER != "orjson":
        return None
    import orjson  # type: ignore[import-not-found]

    dumps, refused = orjson.dumps, orjson.JSONEncodeError

    def encode(record: Dict[str, Any]) -> Optional[bytes]:
        if _plain(record):
            try:
                return dumps(record)  # type: ignore[no-any-return]
            except refused:
                pass  # a name not a str, an int beyond 64 bits, a lone surrogate
        return None

    return encode


#: Encodes a record (a ``dict``) to JSON in UTF-8 with orjson, or returns None for the
#: standard library to do it; None itself when orjson is not in use. It takes only values that
#: ``json`` writes as the same JSON values (see ``_plain``); anything else, including every
#: value ``json`` refuses, is left to ``json``, so what a ``put`` accepts, refuses and stores
#: does not depend on orjson.
encode_record = _choose_encoder()


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
