"""The C ABI as ctypes sees it: the loaded library and ONE table of every entry point.

Every function the package calls is declared in :data:`SIGNATURES` with its exact
``restype`` and ``argtypes``; :func:`_bind` applies the whole table when the module is
imported, so a library that lacks a symbol fails at import with an error naming it, instead
of failing later in the middle of some call.

Why strings handed out by the library are declared ``POINTER(c_void_p)`` and not
``POINTER(c_char_p)``: ctypes converts a ``c_char_p`` it reads into a Python ``bytes`` and
drops the address, and then the string can never be given back to ``optimist_free``. A
``c_void_p`` keeps the address; :func:`take_string` copies the bytes and frees it.
Borrowed strings (``optimist_version``, ``optimist_errstr``, ``optimist_last_error``, and the
fields of ``optimist_change`` during a listener call) are never freed, so ``c_char_p`` is
right for them.

CDLL (not PyDLL) releases the GIL during every foreign call, so other Python threads run
while one thread is inside the library, and listener callbacks re-acquire it.
"""

from __future__ import annotations

import ctypes
from ctypes import (
    CFUNCTYPE,
    POINTER,
    Structure,
    c_char,
    c_char_p,
    c_double,
    c_int,
    c_int64,
    c_size_t,
    c_uint,
    c_uint32,
    c_uint64,
    c_void_p,
)
from typing import Any, Dict, List, Optional, Tuple

from ._loader import load_library

__all__ = [
    "OK", "ERROR", "MISUSE", "NOTFOUND", "STATE", "INVALID", "DUPLICATE", "IO", "CORRUPT", "BUSY",
    "POLICIES", "STATUSES", "CAUSES", "RECORD_STATUSES", "FIELD_TYPES", "SIGNATURES", "ChangeStruct",
    "FieldStruct", "LISTENER", "QUERY_LISTENER", "QUERY_NUMBERED_LISTENER", "TRANSPORT", "SYNC_LISTENER", "SyncOptions", "SYNC_OPTIONS_VERSION",
    "OpenOptions", "OPEN_OPTIONS_VERSION", "CACHE_BYTES_DEFAULT", "MutateOptions", "MUTATE_OPTIONS_VERSION",
    "lib", "library_path",
    "take_string", "MissingSymbolError",
]

# Result codes (fixed values, as in optimist.h).
OK, ERROR, MISUSE, NOTFOUND, STATE, INVALID, DUPLICATE, IO, CORRUPT, BUSY = range(10)

#: Policy names to ``OPTIMIST_POLICY_*`` values.
POLICIES: Dict[str, int] = {"rollback": 0, "keep": 1}
#: ``OPTIMIST_*`` status values to names.
STATUSES: Dict[int, str] = {1: "pending", 2: "inflight", 3: "failed", 4: "committed", 5: "rolled_back"}
#: ``OPTIMIST_CAUSE_*`` values to names.
CAUSES: Dict[int, str] = {1: "mutate", 2: "commit", 3: "rollback", 4: "server", 5: "fail", 6: "retry", 7: "sync"}
#: ``OPTIMIST_RECORD_*`` values (``optimist_change.pending``) to ``Change.status`` names.
RECORD_STATUSES: Dict[int, str] = {0: "confirmed", 1: "pending", 2: "failed"}
#: ``OPTIMIST_FIELD_*`` type names to values.
FIELD_TYPES: Dict[str, int] = {"null": 0, "bool": 1, "number": 2, "text": 3}


class ChangeStruct(Structure):
    """``optimist_change``: borrowed strings, valid only during the listener call. ``pending``
    carries the record status (``OPTIMIST_RECORD_*``, see :data:`RECORD_STATUSES`)."""

    _fields_ = [
        ("collection", c_char_p),
        ("key", c_char_p),
        ("value_json", c_char_p),
        ("pending", c_int),
        ("cause", c_int),
    ]


class FieldStruct(Structure):
    """``optimist_field``: one typed field of a flat record (C hosts' alternative to JSON text;
    the package itself sends records as JSON, which is faster to build from Python)."""

    _fields_ = [
        ("name", c_char_p),
        ("text", c_char_p),
        ("number", c_double),
        ("type", c_int),
    ]


#: ``void (*optimist_listener)(void *ctx, const optimist_change *changes, size_t n)``
LISTENER = CFUNCTYPE(None, c_void_p, POINTER(ChangeStruct), c_size_t)

#: ``int (*optimist_transport)(void *ctx, const char *endpoint, const char *url, const char *body,
#: const char *const *headers, int64_t timeout_ms, int *out_status, const char **out_body,
#: int64_t *out_retry_after_ms)``. ``out_body`` is ``POINTER(c_void_p)``: the host writes the
#: address of a buffer it keeps alive (a ``c_char_p`` store would not keep it).
TRANSPORT = CFUNCTYPE(c_int, c_void_p, c_char_p, c_char_p, c_char_p, POINTER(c_char_p), c_int64,
                      POINTER(c_int), POINTER(c_void_p), POINTER(c_int64))
#: ``void (*optimist_sync_listener)(void *ctx, const char *status_json)``
SYNC_LISTENER = CFUNCTYPE(None, c_void_p, c_char_p)
#: optimist_query_listener: (ctx, deltas_json, n_deltas).
QUERY_LISTENER = CFUNCTYPE(None, c_void_p, c_char_p, c_size_t)
#: optimist_query_numbered_listener: (ctx, number, deltas_json, n_deltas).
QUERY_NUMBERED_LISTENER = CFUNCTYPE(None, c_void_p, c_uint64, c_char_p, c_size_t)

#: ``OPTIMIST_OPEN_OPTIONS_VERSION`` and ``OPTIMIST_CACHE_BYTES_DEFAULT``.
OPEN_OPTIONS_VERSION = 3
CACHE_BYTES_DEFAULT = 32 << 20
#: The retry policy of ``OPTIMIST_OPEN_OPTIONS_INIT``: max_attempts, base_delay_ms, max_delay_ms.
RETRY_POLICY_DEFAULT = (5, 1000, 60000)


class OpenOptions(Structure):
    """``optimist_open_options`` (version 3), passed by reference to ``optimist_open_ext``.
    :meth:`defaults` is ``OPTIMIST_OPEN_OPTIONS_INIT``."""

    _fields_ = [
        ("version", c_uint),
        ("cache_bytes", c_size_t),
        ("max_attempts", c_int),
        ("base_delay_ms", c_int64),
        ("max_delay_ms", c_int64),
        ("local_only", c_int),
        ("read_only", c_int),
    ]

    @classmethod
    def defaults(cls) -> "OpenOptions":
        return cls(OPEN_OPTIONS_VERSION, CACHE_BYTES_DEFAULT, *RETRY_POLICY_DEFAULT, 0, 0)


#: ``OPTIMIST_MUTATE_OPTIONS_VERSION``: the members :class:`MutateOptions` has.
MUTATE_OPTIONS_VERSION = 1


class MutateOptions(Structure):
    """``optimist_mutate_options`` (version 1), passed by reference to ``optimist_mutate_ext``.
    The dedupe key is borrowed for that call only."""

    _fields_ = [
        ("version", c_uint),
        ("dedupe_key", c_char_p),
        ("policy", c_int),
    ]


#: ``OPTIMIST_SYNC_OPTIONS_VERSION``: the members :class:`SyncOptions` has.
SYNC_OPTIONS_VERSION = 2


class SyncOptions(Structure):
    """``optimist_sync_options`` (version 2), passed by reference to ``optimist_sync_start``.
    Strings and arrays are borrowed for that call only (the library copies them)."""

    _fields_ = [
        ("version", c_uint),
        ("url", c_char_p),
        ("headers", POINTER(c_char_p)),
        ("pull_interval_ms", c_int64),
        ("max_batch", c_uint32),
        ("timeout_ms", c_int64),
        ("backoff_base_ms", c_int64),
        ("backoff_max_ms", c_int64),
        ("transport", TRANSPORT),
        ("transport_ctx", c_void_p),
        ("on_status", SYNC_LISTENER),
        ("status_ctx", c_void_p),
        ("events", c_int),
    ]


_store = c_void_p            # optimist_store *
_batch = c_void_p            # optimist_batch * (const or not)
_query = c_void_p            # optimist_query *
_out_handle = POINTER(c_void_p)   # optimist_store ** / optimist_batch **
_out_string = POINTER(c_void_p)   # char ** (owned by the caller: see the module docstring)

#: Every C function the package uses: name -> (restype, argtypes). Applied at import.
SIGNATURES: Dict[str, Tuple[Any, List[Any]]] = {
    "optimist_version": (c_char_p, []),
    "optimist_errstr": (c_char_p, [c_int]),
    "optimist_last_error": (c_char_p, []),
    "optimist_free": (None, [c_void_p]),

    "optimist_open": (c_int, [c_char_p, _out_handle]),
    "optimist_open_ext": (c_int, [c_char_p, c_void_p, _out_handle]),
    "optimist_close": (c_int, [_store]),
    "optimist_flush": (c_int, [_store]),
    "optimist_client_id": (c_int, [_store, _out_string]),
    "optimist_set_retry_policy": (c_int, [_store, c_int, c_int64, c_int64]),

    "optimist_batch_new": (c_int, [_out_handle]),
    "optimist_batch_free": (None, [_batch]),
    "optimist_batch_put": (c_int, [_batch, c_char_p, c_char_p, c_char_p]),
    "optimist_batch_patch": (c_int, [_batch, c_char_p, c_char_p, c_char_p]),
    "optimist_batch_put_fields": (c_int, [_batch, c_char_p, c_char_p, POINTER(FieldStruct), c_size_t]),
    "optimist_batch_patch_fields": (c_int, [_batch, c_char_p, c_char_p, POINTER(FieldStruct), c_size_t]),
    "optimist_batch_delete": (c_int, [_batch, c_char_p, c_char_p]),
    "optimist_batch_incr": (c_int, [_batch, c_char_p, c_char_p, c_char_p, c_double]),

    "optimist_mutate": (c_int, [_store, _batch, c_char_p, POINTER(c_uint64)]),
    "optimist_mutate_with_policy": (c_int, [_store, _batch, c_char_p, c_int, POINTER(c_uint64)]),
    "optimist_mutate_ext": (c_int, [_store, _batch, c_void_p, POINTER(c_uint64)]),
    "optimist_put": (c_int, [_store, c_char_p, c_char_p, c_char_p, POINTER(c_uint64)]),
    "optimist_put_fields": (c_int, [_store, c_char_p, c_char_p, POINTER(FieldStruct), c_size_t, POINTER(c_uint64)]),
    "optimist_commit": (c_int, [_store, c_uint64, _batch]),
    "optimist_commit_with_renames": (c_int, [_store, c_uint64, _batch, c_char_p]),
    "optimist_rollback": (c_int, [_store, c_uint64, c_char_p]),
    "optimist_server_apply": (c_int, [_store, _batch]),

    "optimist_get": (c_int, [_store, c_char_p, c_char_p, _out_string]),
    "optimist_get_confirmed": (c_int, [_store, c_char_p, c_char_p, _out_string]),
    "optimist_get_into": (c_int, [_store, c_char_p, c_char_p, POINTER(c_char), c_size_t, POINTER(c_size_t)]),
    "optimist_get_confirmed_into": (c_int, [_store, c_char_p, c_char_p, POINTER(c_char), c_size_t, POINTER(c_size_t)]),
    "optimist_is_pending": (c_int, [_store, c_char_p, c_char_p, POINTER(c_int)]),
    "optimist_scan": (c_int, [_store, c_char_p, c_char_p, c_size_t, _out_string]),
    "optimist_status": (c_int, [_store, c_uint64, POINTER(c_int)]),
    "optimist_pending_count": (c_int, [_store, POINTER(c_uint64)]),

    "optimist_mutations": (c_int, [_store, c_int, _out_string]),
    "optimist_mutation": (c_int, [_store, c_uint64, _out_string]),
    "optimist_wait_settled": (c_int, [_store, c_uint64, c_int64, POINTER(c_int)]),
    "optimist_explain": (c_int, [_store, c_char_p, c_char_p, _out_string]),

    "optimist_outbox_next": (c_int, [_store, c_int64, POINTER(c_uint64), _out_string]),
    "optimist_outbox_wait": (c_int, [_store, c_int64, POINTER(c_int)]),
    "optimist_fail": (c_int, [_store, c_uint64, c_int, c_char_p, c_int64]),
    "optimist_retry": (c_int, [_store, c_uint64]),

    "optimist_mark_loaded": (c_int, [_store, c_char_p, c_char_p, c_char_p, c_int64]),
    "optimist_needs_reload": (c_int, [_store, c_char_p, c_char_p, c_int64, c_int64, POINTER(c_int)]),

    "optimist_view_define": (c_int, [_store, c_char_p, c_char_p, c_char_p, c_char_p]),
    "optimist_view_get": (c_int, [_store, c_char_p, POINTER(c_double)]),

    "optimist_subscribe": (c_int, [_store, c_char_p, c_char_p, LISTENER, c_void_p, POINTER(c_uint64)]),
    "optimist_unsubscribe": (c_int, [_store, c_uint64]),

    "optimist_index_define": (c_int, [_store, c_char_p, c_char_p]),
    "optimist_query_open": (c_int, [_store, c_char_p, _out_handle]),
    "optimist_query_count": (c_int, [_query, POINTER(c_size_t)]),
    "optimist_query_rows": (c_int, [_query, c_size_t, c_size_t, _out_string]),
    "optimist_query_subscribe": (c_int, [_query, QUERY_LISTENER, c_void_p, POINTER(c_uint64)]),
    "optimist_query_subscribe_numbered": (c_int, [_query, QUERY_NUMBERED_LISTENER, c_void_p, POINTER(c_uint64),
                                                  _out_string, POINTER(c_uint64)]),
    "optimist_query_unsubscribe": (c_int, [_query, c_uint64]),
    "optimist_query_close": (c_int, [_query]),

    # opts: const optimist_sync_options * (the caller passes byref() of its struct);
    # headers: const char *const *, a NULL-terminated (c_char_p * (n + 1)) array, or None.
    "optimist_sync_start": (c_int, [_store, c_void_p]),
    "optimist_sync_stop": (c_int, [_store]),
    "optimist_sync_now": (c_int, [_store]),
    "optimist_sync_set_headers": (c_int, [_store, POINTER(c_char_p)]),
    "optimist_sync_wait_idle": (c_int, [_store, c_int64, POINTER(c_int)]),
    "optimist_sync_status": (c_int, [_store, _out_string]),
}


class MissingSymbolError(ImportError):
    """The library loaded but lacks an entry point this package needs (a stale or foreign
    build)."""

    def __init__(self, symbol: str, path: str) -> None:
        self.symbol = symbol
        self.path = path
        super().__init__(f"{path} has no symbol {symbol}: it is not a (current) liboptimist build")


def _bind(dll: ctypes.CDLL, path: str) -> None:
    """Applies :data:`SIGNATURES` to ``dll``; raises :class:`MissingSymbolError` naming the
    first symbol it lacks."""
    for name, (restype, argtypes) in SIGNATURES.items():
        try:
            fn = getattr(dll, name)
        except AttributeError:
            raise MissingSymbolError(name, path) from None
        fn.restype = restype
        fn.argtypes = argtypes


lib, library_path = load_library()
_bind(lib, library_path)



def unchecked(name: str) -> Any:
    """``name`` bound a second time, with its ``restype`` only: for the hot calls (get, put).

    With ``argtypes`` set, ctypes runs every argument through its type's ``from_param`` on
    every call, a third of a cached get's time in the binding. The callers of an unchecked
    function pass arguments that already are C values: the handle as the store's
    ``c_void_p``, strings as ``bytes``, out-parameters through ``byref``. (A bare ``int``
    would go as a C ``int`` and cut a pointer to 32 bits: never pass one.) The typed binding
    in :data:`SIGNATURES` stays for every other caller and for the header test.
    """
    fn = lib[name]  # item access makes a new function object; lib.<name> keeps its argtypes
    fn.restype = SIGNATURES[name][0]
    return fn


_free = unchecked("optimist_free")


def take_string(p: c_void_p) -> str:
    """Copies a library-owned string out (UTF-8) and frees it with ``optimist_free``."""
    if not p.value:
        return ""
    try:
        # The pointer read in place as a char *: no foreign call, where string_at is one.
        return c_char_p.from_buffer(p).value.decode("utf-8")  # type: ignore[union-attr]
    finally:
        _free(p)


def last_error() -> Optional[str]:
    """The message of the last failed call on this thread, if the library kept one."""
    m = lib.optimist_last_error()
    return m.decode("utf-8", "replace") if m else None


def errstr(rc: int) -> str:
    """The library's name for a result code."""
    m = lib.optimist_errstr(rc)
    return m.decode("utf-8", "replace") if m else f"result code {rc}"
