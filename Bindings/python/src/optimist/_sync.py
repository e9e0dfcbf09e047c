"""Background sync: the library pushes the outbox and pulls server changes on a thread of its
own (``optimist_sync_*``). :class:`SyncMixin` gives :class:`Store` its ``sync_*`` methods.

Why two module-level C callbacks instead of ``CFUNCTYPE`` objects per sync: as with
subscriptions, a thunk freed while the library may still call it would let C jump into freed
memory. :data:`TRANSPORT_THUNK` and :data:`STATUS_THUNK` live as long as the module; the
``ctx`` the library hands back is a token looked up in :data:`_active`, and a token that is
gone is answered with "no answer" (transport) or ignored (status).

What a running sync holds on the Python side (the transport and ``on_status`` callables, the
C strings of the options, and the last reply body handed to the library, which must stay
valid until the next transport call or the stop) lives in one :class:`_SyncContext`, kept in
:data:`_active` and on the store while the sync runs. It is released when ``sync_stop()`` or
``close()`` returns, the library having joined the sync thread by then. When the stop comes
from the sync's own thread (an ``on_status`` callback, the transport, or a subscription
callback fired by the sync), the library cannot join that thread: the context is then
released when the thread reports its final ``"stopped"`` status, its last act.

Callbacks never raise into C (ctypes could not propagate it): an exception in the transport
is "no answer" with the exception as the reason; one in ``on_status`` is logged to the
``optimist`` logger.
"""

from __future__ import annotations

import atexit
import ctypes
import itertools
import logging
import math
import threading
import time
from ctypes import POINTER, byref, c_char_p, c_int, c_void_p, cast
from typing import Any, Callable, Dict, List, Mapping, Optional, Tuple

from . import _ffi
from ._callbacks import call_changing
from ._error import MisuseError
from ._json import loads as _loads
from ._json import take_json
from ._util import check, cstr, i64, raise_for

__all__ = ["SyncMixin", "Transport", "StatusCallback", "TRANSPORT_THUNK", "STATUS_THUNK"]

#: ``transport(endpoint, url, body, headers, timeout_ms)`` -> ``(status, body)`` or
#: ``(status, body, retry_after_ms)``; raising means "no answer".
Transport = Callable[[str, str, str, Dict[str, str], int], Tuple[Any, ...]]
#: ``on_status(status)``: called on the sync thread with each new status dict.
StatusCallback = Callable[[Dict[str, Any]], Any]

_lib = _ffi.lib
_sync_start = _lib.optimist_sync_start
_sync_stop = _lib.optimist_sync_stop
_sync_now = _lib.optimist_sync_now
_sync_set_headers = _lib.optimist_sync_set_headers
_sync_wait_idle = _lib.optimist_sync_wait_idle
_sync_status = _lib.optimist_sync_status
_log = logging.getLogger("optimist")

_U32_MAX = (1 << 32) - 1
_I64_MAX = (1 << 63) - 1
_INT_MIN, _INT_MAX = -(1 << 31), (1 << 31) - 1
#: ``sync_wait_idle`` waits in the library at most this long per call (then Python's signal
#: handlers get a chance), and at most ``_MAX_WAIT_S`` in all (about 31 years).
_WAIT_SLICE_MS = 200
_MAX_WAIT_S = 1e9

#: Token -> the context of a running sync (see the module docstring).
_active: Dict[int, "_SyncContext"] = {}
#: Orders ``sync_start``'s bookkeeping before a stop's (reentrant: a subscription callback run
#: by the start may call the store's sync methods).
_lock = threading.RLock()
_tokens = itertools.count(1)  # 0 would be a NULL ctx


class _SyncContext:
    """What one running sync keeps alive on the Python side."""

    __slots__ = ("token", "handle", "transport", "on_status", "keep", "body", "thread_ident", "detached")

    def __init__(self, handle: Optional[c_void_p], transport: Optional[Transport],
                 on_status: Optional[StatusCallback]) -> None:
        self.token = next(_tokens)
        #: The store's C handle (never freed by the library, so safe to use after a close).
        self.handle = handle
        self.transport = transport
        self.on_status = on_status
        #: C strings and arrays the options point to.
        self.keep: List[Any] = []
        #: The last reply body handed to the library (valid until the next call or stop).
        self.body: Optional[ctypes.Array] = None  # type: ignore[type-arg]
        #: The sync thread, once a callback has run on it.
        self.thread_ident: Optional[int] = None
        #: Stopped from its own thread: released on the final "stopped" status.
        self.detached = False


# C callbacks ----------------------------------------------------------------------------


def _headers_dict(headers: Any) -> Dict[str, str]:
    """The NULL-terminated ``"Name: value"`` array as a dict."""
    out: Dict[str, str] = {}
    if not headers:
        return out
    i = 0
    while True:
        h = headers[i]
        if h is None:
            return out
        name, _, value = h.decode("utf-8", "replace").partition(":")
        out[name.strip()] = value.strip()
        i += 1


def _reply(result: Any) -> Tuple[int, bytes, int]:
    """Checks what a Python transport returned: ``(status, body_bytes, retry_after_ms or -1)``.

    Raises:
        TypeError, ValueError: not a ``(status, body[, retry_after_ms])`` tuple of the right
            types (the caller turns it into "no answer" with this message).
    """
    if not isinstance(result, (tuple, list)) or len(result) not in (2, 3):
        raise TypeError(f"the transport must return (status, body) or (status, body, retry_after_ms), "
                        f"not {result!r:.200}")
    status, body = result[0], result[1]
    retry = result[2] if len(result) == 3 else None
    if isinstance(status, bool) or not isinstance(status, int) or not _INT_MIN <= status <= _INT_MAX:
        raise TypeError(f"the transport's status must be an int, not {status!r:.100}")
    if body is None:
        data = b""
    elif isinstance(body, str):
        data = body.encode("utf-8")  # a lone surrogate raises UnicodeEncodeError (a ValueError)
    elif isinstance(body, (bytes, bytearray, memoryview)):
        data = bytes(body)
    else:
        raise TypeError(f"the transport's body must be str or bytes, not {type(body).__name__}")
    if b"\0" in data:
        raise ValueError("the transport's body holds a NUL byte (not a protocol answer)")
    if retry is None:
        after = -1
    elif isinstance(retry, bool) or not isinstance(retry, (int, float)) or math.isnan(retry):
        raise TypeError(f"the transport's retry_after_ms must be a number or None, not {retry!r:.100}")
    else:
        after = -1 if retry < 0 else int(min(retry, _I64_MAX))
    return status, data, after


def _transport_entry(ctx: Optional[int], endpoint: Optional[bytes], url: Optional[bytes], body: Optional[bytes],
                     headers: Any, timeout_ms: int, out_status: Any, out_body: Any, out_retry_after: Any) -> int:
    """The body of :data:`TRANSPORT_THUNK`: calls the Python transport and hands its reply to
    the library. Returns 0 with a reply, 1 for "no answer" (with the reason as the body).
    Never raises."""
    try:
        sync = _active.get(ctx or 0)
        if sync is None or sync.transport is None:
            raise RuntimeError("the sync was stopped")
        sync.thread_ident = threading.get_ident()
        result = sync.transport(
            (endpoint or b"").decode("utf-8", "replace"),
            (url or b"").decode("utf-8", "replace"),
            (body or b"").decode("utf-8", "replace"),
            _headers_dict(headers),
            int(timeout_ms),
        )
        status, data, after = _reply(result)
        rc = 0
    except BaseException as e:  # noqa: BLE001 - nothing may propagate into C
        _log.debug("optimist sync transport: no answer", exc_info=e)
        text = str(e)
        reason = f"{type(e).__name__}: {text}" if text else type(e).__name__
        status, data, after, rc = 0, reason.encode("utf-8", "replace").replace(b"\0", b" "), -1, 1
        sync = _active.get(ctx or 0)
    try:
        buf = ctypes.create_string_buffer(data, len(data) + 1)
        if sync is not None:
            sync.body = buf  # replaces (frees) the previous reply: the library is done with it
        else:
            _orphans.append(buf)
            del _orphans[:-4]
        if out_status:
            out_status[0] = status
        if out_body:
            cast(out_body, POINTER(c_void_p))[0] = ctypes.addressof(buf)
        if out_retry_after:
            out_retry_after[0] = after
    except BaseException as e:  # noqa: BLE001 - nothing may propagate into C
        _log.error("optimist sync transport: cannot hand the reply to the library", exc_info=e)
        return 1
    return rc


#: Replies of transport calls for a sync that is already gone (kept briefly: the library may
#: still read the last one).
_orphans: List[Any] = []


def _status_entry(ctx: Optional[int], status_json: Optional[bytes]) -> None:
    """The body of :data:`STATUS_THUNK`: parses the status and calls ``on_status``. Never
    raises; an exception in ``on_status`` is logged to the ``optimist`` logger."""
    try:
        sync = _active.get(ctx or 0)
        if sync is None:
            return
        sync.thread_ident = threading.get_ident()
        status = _loads(status_json) if status_json else {}
        callback = sync.on_status
        try:
            if callback is not None:
                callback(status)
        finally:
            if status.get("state") == "stopped" and sync.detached:
                _active.pop(sync.token, None)  # the thread's last act: it is done with us
    except BaseException as e:  # noqa: BLE001 - nothing may propagate into C
        _log.error("exception in an optimist sync on_status callback", exc_info=e)


def _stop_all_at_exit() -> None:
    """Stops every sync still running when the interpreter exits (``atexit``), while Python
    can still run their callbacks: a sync thread calling into a finalizing interpreter could
    hang or crash the exit. Stores left open are otherwise closed by the library's own exit."""
    for ctx in list(_active.values()):
        if ctx.handle is not None and not ctx.detached:
            try:
                _sync_stop(ctx.handle)
            except BaseException:  # noqa: BLE001 - best effort at exit
                pass
        _active.pop(ctx.token, None)


atexit.register(_stop_all_at_exit)

#: The library's ``optimist_transport`` for every Python transport (kept alive by the module).
TRANSPORT_THUNK = _ffi.TRANSPORT(_transport_entry)
#: The library's ``optimist_sync_listener`` for every ``on_status`` (kept alive by the module).
STATUS_THUNK = _ffi.SYNC_LISTENER(_status_entry)


# Arguments ------------------------------------------------------------------------------


def _header_array(headers: Optional[Mapping[str, str]], keep: List[Any]) -> Any:
    """``headers`` as a NULL-terminated C array of ``"Name: value"`` (None: NULL); the
    encoded strings and the array are appended to ``keep``."""
    if headers is None:
        return None
    if not isinstance(headers, Mapping):
        raise TypeError(f"headers must be a dict of str to str, not {type(headers).__name__}")
    lines = []
    for name, value in headers.items():
        if not isinstance(name, str) or not isinstance(value, str):
            raise TypeError(f"header names and values must be str, not {name!r:.60}: {value!r:.60}")
        lines.append(cstr(f"{name}: {value}", f"header {name!r}"))
    arr = (c_char_p * (len(lines) + 1))(*lines, None)
    keep.append(lines)
    keep.append(arr)
    return arr


def _int_arg(n: int, what: str, low: int, high: int) -> int:
    """An int argument within ``low..high``, else :class:`MisuseError` (bools refused)."""
    if isinstance(n, bool):
        raise TypeError(f"{what} must be an int, not bool")
    n = i64(n, what)
    if not low <= n <= high:
        raise MisuseError(f"{what} must be between {low} and {high}, not {n}")
    return n


# The mixin ------------------------------------------------------------------------------


class SyncMixin:
    """The ``sync_*`` methods of :class:`Store` (needs ``self._h``)."""

    _h: Optional[c_void_p]
    #: The context of the sync this object started (None: none runs from here).
    _sync: Optional[_SyncContext] = None

    def sync_start(self, url: Optional[str] = None, *, headers: Optional[Mapping[str, str]] = None,
                   pull_interval_ms: int = 5000, max_batch: int = 100, timeout_ms: int = 10000,
                   transport: Optional[Transport] = None, on_status: Optional[StatusCallback] = None,
                   backoff_base_ms: int = 500, backoff_max_ms: int = 30000, events: bool = True) -> None:
        """Starts the background sync: a thread of the library pushes the store's pending
        mutations to ``{url}/push`` in id order and pulls server changes from ``{url}/pull``
        (wire protocol version 2), until :meth:`sync_stop` or :meth:`close`. One sync per
        store. Changes it makes reach subscribers on the sync's thread (with causes
        ``commit``, ``rollback``, ``fail``, ``retry``, ``server`` and ``sync``); an exception
        a subscription callback raises there has no store call to surface from and is logged
        to the ``optimist`` logger.

        Args:
            url: the server's base URL (``http://HOST:PORT``). May be None with a
                ``transport``, which then gets an empty ``url``.
            headers: sent with every request, e.g. ``{"Authorization": "Bearer …"}``;
                replace them with :meth:`sync_set_headers`.
            pull_interval_ms: how often to pull when nothing else happens; 0: only at start,
                after pushes and on :meth:`sync_now`. While the event stream is live (see
                ``events``) the sync does not pull on the interval.
            max_batch: the most mutations one push carries.
            timeout_ms: a request's timeout (handed to ``transport`` as ``timeout_ms``).
            transport: your own HTTP stack instead of the built-in one:
                ``transport(endpoint, url, body, headers, timeout_ms)`` with ``endpoint``
                ``"push"`` or ``"pull"``, ``url`` the full URL (``{url}/push``), ``body`` the
                JSON request text and ``headers`` a dict (the host's headers: send
                ``Content-Type: application/json`` too, servers answer 415 without it). It
                returns ``(status, body)`` or ``(status, body, retry_after_ms)``: the HTTP
                status, the reply body (``str`` or ``bytes``) and the ``Retry-After`` wait in
                ms (None: none). Raising any
                exception means "no answer" (connection refused, timeout…), with the
                exception as the reason (state ``"offline"``). It is called on the sync's
                thread, one request at a time; :meth:`sync_stop` and :meth:`close` wait for a
                call in progress to return, so honour ``timeout_ms``.
            on_status: ``on_status(status)``, called on the sync's thread with each new
                status (the dict :meth:`sync_status` returns), the last one with state
                ``"stopped"``. An exception it raises is logged to the ``optimist`` logger.
            backoff_base_ms, backoff_max_ms: the first wait after a failed request (doubled
                per failure, with jitter) and its cap.
            events: keep an event stream open to the server (``GET {url}/events``,
                Server-Sent Events) while the sync runs: the server pokes it when something
                changed and the sync pulls at once. A stream that fails is reconnected with
                backoff, and the sync pulls every ``pull_interval_ms`` meanwhile; a 401 or 403
                there is state ``"unauthorized"`` until :meth:`sync_set_headers`. False: poll
                only. A ``transport`` has no stream: the sync then only polls, whatever this
                says.

        Raises:
            MisuseError: a sync already runs on the store, the store is closed, there is
                neither ``url`` nor ``transport``, the URL is not ``http(s)://``, or an
                option is out of range (a bad header name, ``max_batch`` 0, …).
            TypeError: ``headers`` is not a dict of str, a callback is not callable, or
                ``events`` is not a bool.
        """
        if not isinstance(events, bool):
            raise TypeError(f"events must be a bool, not {type(events).__name__}")
        if transport is not None and not callable(transport):
            raise TypeError("transport must be callable")
        if on_status is not None and not callable(on_status):
            raise TypeError("on_status must be callable")
        ctx = _SyncContext(self._h, transport, on_status)
        opts = _ffi.SyncOptions()
        opts.version = _ffi.SYNC_OPTIONS_VERSION
        if url is not None:
            u = cstr(url, "url")
            ctx.keep.append(u)
            opts.url = u
        opts.headers = _header_array(headers, ctx.keep)
        opts.pull_interval_ms = _int_arg(pull_interval_ms, "pull_interval_ms", 0, _I64_MAX)
        opts.max_batch = _int_arg(max_batch, "max_batch", 1, _U32_MAX)
        opts.timeout_ms = _int_arg(timeout_ms, "timeout_ms", 1, _I64_MAX)
        opts.backoff_base_ms = _int_arg(backoff_base_ms, "backoff_base_ms", 1, _I64_MAX)
        opts.backoff_max_ms = _int_arg(backoff_max_ms, "backoff_max_ms", 1, _I64_MAX)
        opts.events = 1 if events else 0
        if transport is not None:
            opts.transport = TRANSPORT_THUNK
            opts.transport_ctx = ctx.token
        opts.on_status = STATUS_THUNK
        opts.status_ctx = ctx.token
        _active[ctx.token] = ctx
        # Held until the store knows its context: a callback that stops the sync from its own
        # thread before this returns waits for it, and so finds the context to release.
        codes: List[int] = []

        def start_sync(h: Any, o: Any) -> int:
            codes.append(_sync_start(h, o))
            return codes[-1]

        with _lock:
            try:
                # A subscription callback may run here (mutations left inflight are requeued):
                # its exception is raised after the start, like any store call's.
                rc = call_changing("sync_start", start_sync, self._h, byref(opts))
            except BaseException:
                if codes == [0]:
                    self._sync = ctx  # started; a callback raised
                else:
                    _active.pop(ctx.token, None)
                raise
            if rc:
                _active.pop(ctx.token, None)
                raise_for(rc)
            self._sync = ctx

    def sync_stop(self) -> None:
        """Stops the sync and waits for its thread to end: a transport call in progress is
        waited for and its answer ignored; its mutations stay queued as pending and are sent
        by the next sync. ``on_status`` hears ``"stopped"`` before this returns. Releases the
        callables and buffers the package held for the sync. No sync running: nothing
        happens. Called from the sync's own thread (``on_status``, the transport, a
        subscription callback fired by the sync) it asks the sync to stop and returns
        without waiting.

        Raises:
            MisuseError: the store is closed.
        """
        ctx = self._current_sync()
        try:
            check(_sync_stop(self._h))
        finally:
            self._release_sync(ctx)

    def _current_sync(self) -> Optional[_SyncContext]:
        """The context of the sync this store runs (waits for a ``sync_start`` in progress)."""
        with _lock:
            return self._sync

    def _release_sync(self, ctx: Optional[_SyncContext]) -> None:
        """Forgets what a stopped sync held (after ``optimist_sync_stop`` or
        ``optimist_close`` returned). On the sync's own thread the library could not join it:
        the context is released by the thread's final ``"stopped"`` status instead."""
        if ctx is None:
            return
        with _lock:
            if self._sync is ctx:
                self._sync = None
        if ctx.thread_ident is not None and ctx.thread_ident == threading.get_ident():
            ctx.detached = True
            ctx.transport = None  # a late transport call answers "no answer"
            return
        _active.pop(ctx.token, None)
        ctx.body = None
        ctx.keep.clear()

    def sync_now(self) -> None:
        """Pushes and pulls at once, forgetting any backoff (the app's "online again").

        Raises:
            MisuseError: no sync runs on the store, or it is closed.
        """
        check(_sync_now(self._h))

    def sync_set_headers(self, headers: Mapping[str, str]) -> None:
        """Replaces the headers sent with every request (e.g. a refreshed token) and lifts an
        ``"unauthorized"`` pause.

        Raises:
            MisuseError: no sync runs, the store is closed, or a header name is not a token
                or a value holds a line break.
            TypeError: ``headers`` is not a dict of str.
        """
        if headers is None:
            raise TypeError("headers must be a dict of str to str, not None")
        keep: List[Any] = []
        check(_sync_set_headers(self._h, _header_array(headers, keep)))

    def sync_wait_idle(self, timeout_s: float) -> bool:
        """Waits until nothing is pending or inflight (failed mutations excepted) and a pull
        has completed after the last push. Returns True then, False when ``timeout_s``
        seconds pass first, or when the sync stops (or the store closes) meanwhile; 0 just
        looks. Releases the GIL while it waits, in slices, so Ctrl-C and signal handlers
        still run. Not from the sync's own thread (``on_status``, the transport): it would
        wait for itself and only time out.

        Raises:
            MisuseError: no sync runs on the store, or it is closed.
        """
        if isinstance(timeout_s, bool) or not isinstance(timeout_s, (int, float)):
            raise TypeError(f"timeout_s must be a number, not {type(timeout_s).__name__}")
        if math.isnan(timeout_s):
            raise MisuseError("timeout_s must not be NaN")
        deadline = time.monotonic() + max(0.0, min(float(timeout_s), _MAX_WAIT_S))
        out = c_int()
        first = True
        while True:
            left_ms = max(0, math.ceil((deadline - time.monotonic()) * 1000))
            slice_ms = min(left_ms, _WAIT_SLICE_MS)
            rc = _sync_wait_idle(self._h, slice_ms, byref(out))
            if rc:
                if not first and rc == _ffi.MISUSE:
                    return False  # the sync stopped, or the store closed, while we waited
                raise_for(rc)
            if out.value:
                return True
            if slice_ms >= left_ms:
                return False
            first = False

    def sync_status(self) -> Dict[str, Any]:
        """The sync's status as a dict:

        - ``state``: ``"idle"``, ``"pushing"``, ``"pulling"``, ``"backoff"`` (HTTP 429 or
          5xx), ``"offline"`` (no answer), ``"unauthorized"`` (HTTP 401/403: paused until
          :meth:`sync_set_headers`), ``"error"`` (another 4xx or a reply that is not the
          protocol; tried again after backoff, nothing lost) or ``"stopped"`` (none runs);
        - ``last_error``: the reason of the last failure, or None;
        - ``pending``, ``inflight``, ``failed``: not-yet-ended mutations by status;
        - ``cursor``: the pull cursor kept with the store (None before the first pull);
        - ``pushed``, ``pulled``: mutations the server accepted and changes pulled, in this
          sync's life;
        - ``stream``: the event stream (see :meth:`sync_start`'s ``events``): ``"live"``
          (open and ready: pokes bring pulls), ``"connecting"`` (none at the moment:
          connecting or waiting to try again; the sync polls meanwhile) or ``"off"`` (none is
          tried: turned off, a ``transport``, or no sync runs).

        Raises:
            MisuseError: the store is closed.
        """
        out = c_void_p()
        check(_sync_status(self._h, byref(out)))
        status: Dict[str, Any] = take_json(out)
        return status

