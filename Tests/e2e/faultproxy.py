"""A fault-injecting HTTP/1.1 proxy for the end-to-end tests.

It listens on 127.0.0.1 (port 0: the system picks one) in front of one or more
optimist-servers and forwards each request whole, then the server's answer, unless the current
mode says otherwise. The modes can be switched at any time from the test (``set_mode``,
``refuse_for``):

- ``pass``: forwards as is.
- ``delay``: sleeps ``delay_ms`` before each chunk it forwards, in both directions.
- ``drop_before``: forwards the request, reads the server's whole answer, and closes the
  client's connection before any of it (the server applied it, the client never hears).
- ``drop_mid``: the same, but sends the client a random part of the answer first (cut in
  the status line, the headers or the body; ``cut="status"``, ``"headers"`` or ``"body"``
  picks one, ``cut="after-status"`` cuts right after the status line, an int after that
  many bytes).
- ``cut_request``: closes the client's connection after reading its request, forwarding
  nothing (the server never sees it).
- ``refuse``: closes every new connection at once, before reading anything.
  ``refuse_for(seconds)`` refuses for a while whatever the mode.
- ``stall``: holds the request ``stall_ms`` without answering (the client times out), then
  forwards it anyway and throws the answer away: a late duplicate reaching the server.
- ``error_before``: answers 503 (with ``Retry-After: 0``) without forwarding.
- ``error_after``: forwards, lets the server answer, and tells the client 502.
- ``mix``: each request draws one of the above from ``weights`` with the proxy's seeded
  random generator (``refuse`` then closes the request's connection at once).

``rate`` (0..1) makes a mode apply to that share of requests only (the rest pass),
``endpoints`` to some paths only (``("push",)``), and ``count`` to that many requests only
(then the proxy passes everything until the mode is set again). Closing a client's connection
early (``drop_*``, ``cut_request``, ``refuse``) is a reset or a plain close at random, or as
``close="rst"`` / ``close="fin"`` says.

A `GET /events` stream (the real-time stream) is relayed as it comes, byte by byte, for as long
as both ends hold it; ``cut_streams()`` resets every stream open through the proxy (and
``refuse``, ``cut_request`` and ``error_before`` apply to it as to any request).

The upstream is connected anew for each client connection, so the proxy keeps working while
the server is down (the client's connection is reset) and after it restarts on the same port.
``set_upstreams`` puts several servers behind it: each new connection goes to the next.

It also watches the protocol: every push and pull it forwards, and every answer a server
gives (also those the client never gets, and how much of it the client got), go to
``events``; ``violations()`` checks from them the protocol's rules for clients (mutations in id
order, k+1 never before the server answered k, a lost answer resolved by a pull, nothing the
client heard was "ok" sent again); ``dump()`` writes them out for a post-mortem.
"""

import bisect
import collections
import json
import random
import select
import socket
import threading
import time

MODES = ("pass", "delay", "drop_before", "drop_mid", "cut_request", "refuse", "stall",
         "error_before", "error_after", "mix")
MAX_HEAD = 64 * 1024
MAX_BODY = 256 * 1024 * 1024
IO_TIMEOUT_S = 30.0
CHUNK = 16 * 1024


class ProtocolEvent:
    """One thing the proxy saw: a request forwarded, or what became of its answer."""

    __slots__ = ("kind", "client", "ids", "statuses", "late", "conn", "accepted", "at", "delivery", "told_at")

    def __init__(self, kind, client, ids, statuses=None, late=False, conn=0, accepted=0.0):
        # "push_sent" / "pull_sent": forwarded to the server (ids: the push's mutations, the
        # pull's unacked); "push_answered" / "pull_answered": the server answered 200 (ids:
        # those with a result or outcome); "push_unanswered": the server never answered.
        self.kind = kind
        self.client = client          # client_id
        self.ids = ids
        self.statuses = statuses or {}  # answered: id -> "ok" / "rejected" / "retry"
        self.late = late              # sent by the proxy after the client gave up (stall)
        self.conn = conn              # the client connection's number
        self.accepted = accepted      # when the proxy accepted that connection
        self.at = time.monotonic()
        self.delivery = None          # answered: what the client got of it
        self.told_at = None           # answered and delivered whole: when

    def __repr__(self):
        return f"<{self.kind} {self.client[:8]} ids={self.ids[:12]}{'…' if len(self.ids) > 12 else ''}{' late' if self.late else ''} conn={self.conn}>"


class _Closed(Exception):
    pass


class _Reader:
    """Buffered reads from a socket."""

    def __init__(self, sock):
        self.sock = sock
        self.buf = bytearray()

    def _fill(self):
        data = self.sock.recv(65536)
        if not data:
            raise _Closed("end of stream")
        self.buf += data

    def at_eof(self):
        """True when the peer closed before sending anything more."""
        if self.buf:
            return False
        try:
            self._fill()
        except _Closed:
            return True
        return False

    def until(self, sep, limit):
        while True:
            i = self.buf.find(sep)
            if i >= 0:
                out = bytes(self.buf[:i + len(sep)])
                del self.buf[:i + len(sep)]
                return out
            if len(self.buf) > limit:
                raise _Closed("header too long")
            self._fill()

    def exact(self, n):
        while len(self.buf) < n:
            self._fill()
        out = bytes(self.buf[:n])
        del self.buf[:n]
        return out

    def to_eof(self):
        while True:
            try:
                self._fill()
            except _Closed:
                break
            if len(self.buf) > MAX_BODY:
                raise _Closed("body too long")
        out = bytes(self.buf)
        self.buf.clear()
        return out


class _Message:
    """One HTTP message: its exact bytes (to forward) and what the proxy needs of it."""

    def __init__(self, start, headers, body, raw, until_eof=False):
        self.start = start            # request line or status line (str)
        self.headers = headers        # {lower-case name: value}
        self.body = body              # decoded body bytes (chunked framing removed)
        self.raw = raw                # the wire bytes
        self.until_eof = until_eof    # the body ran to the end of the connection

    @property
    def keep_alive(self):
        conn = self.headers.get("connection", "").lower()
        if self.until_eof or "close" in conn:
            return False
        return not self.start.endswith("HTTP/1.0") or "keep-alive" in conn


def _read_message(reader, response_to=None):
    """Reads one request (response_to None) or the response to a request of that method."""
    head = reader.until(b"\r\n\r\n", MAX_HEAD)
    lines = head[:-4].decode("latin-1").split("\r\n")
    start, headers = lines[0], {}
    for line in lines[1:]:
        name, _, value = line.partition(":")
        headers[name.strip().lower()] = value.strip()
    raw = bytearray(head)
    status = None
    if response_to is not None:
        parts = start.split(" ", 2)
        status = int(parts[1]) if len(parts) > 1 and parts[1].isdigit() else 0
    no_body = status is not None and (100 <= status < 200 or status in (204, 304) or response_to == "HEAD")
    body = bytearray()
    until_eof = False
    if no_body:
        pass
    elif "chunked" in headers.get("transfer-encoding", "").lower():
        while True:
            size_line = reader.until(b"\r\n", MAX_HEAD)
            raw += size_line
            size = int(size_line.split(b";")[0].strip() or b"0", 16)
            if size == 0:
                # Trailers, up to the empty line.
                while True:
                    t = reader.until(b"\r\n", MAX_HEAD)
                    raw += t
                    if t == b"\r\n":
                        break
                break
            if len(body) + size > MAX_BODY:
                raise _Closed("body too long")
            chunk = reader.exact(size + 2)
            raw += chunk
            body += chunk[:-2]
    elif "content-length" in headers:
        n = int(headers["content-length"])
        if n > MAX_BODY:
            raise _Closed("body too long")
        data = reader.exact(n)
        raw += data
        body += data
    elif response_to is not None:
        data = reader.to_eof()
        raw += data
        body += data
        until_eof = True
    return _Message(start, headers, bytes(body), bytes(raw), until_eof)


def _reset(sock):
    """Closes with a TCP reset (SO_LINGER 0)."""
    try:
        sock.setsockopt(socket.SOL_SOCKET, socket.SO_LINGER, b"\x01\x00\x00\x00\x00\x00\x00\x00")
    except OSError:
        pass
    _close(sock)


def _close(sock):
    try:
        sock.close()
    except OSError:
        pass


class FaultProxy:
    def __init__(self, upstream_port, seed=0, upstream_host="127.0.0.1", lifetime_s=1800):
        """lifetime_s: the proxy stops accepting connections after that long, whatever happens
        (a test that forgets to close it leaves nothing running for ever)."""
        self._lifetime_s = lifetime_s
        self.upstreams = [(upstream_host, upstream_port)]
        self._next_upstream = 0
        self._restarts = collections.defaultdict(list)  # client_id -> times its process was replaced
        self._rng = random.Random(seed)
        self._lock = threading.Lock()
        self._mode = {"mode": "pass"}
        self._refuse_until = 0.0
        self._closing = threading.Event()
        self._conns = set()       # open client sockets
        self._streams = set()     # (client, upstream) of the GET /events streams being relayed
        self._stream_threads = set()
        self._threads = set()
        self._conn_no = 0
        self.events = []          # ProtocolEvent, in the order the proxy saw them
        self.stats = collections.Counter()
        self._listener = None
        self.port = None

    # -- life --------------------------------------------------------------------------

    def start(self):
        s = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
        s.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        s.bind(("127.0.0.1", 0))
        s.listen(128)
        s.settimeout(0.2)
        self._listener = s
        self.port = s.getsockname()[1]
        t = threading.Thread(target=self._accept_loop, name="faultproxy-accept", daemon=True)
        t.start()
        self._accept_thread = t
        return self

    @property
    def url(self):
        return f"http://127.0.0.1:{self.port}"

    def close(self):
        self._closing.set()
        if self._listener:
            _close(self._listener)
        self.cut_streams()
        with self._lock:
            conns = list(self._conns)
            threads = list(self._threads)
        for c in conns:
            _reset(c)
        for t in threads:
            t.join(5)
        self._accept_thread.join(5)

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        self.close()

    # -- control -----------------------------------------------------------------------

    @property
    def upstream(self):
        with self._lock:
            return self.upstreams[0]

    def set_upstream(self, port, host="127.0.0.1"):
        self.set_upstreams([port], host)

    def set_upstreams(self, ports, host="127.0.0.1"):
        """Each new client connection goes to the next of these servers, in turn."""
        with self._lock:
            self.upstreams = [(host, p) for p in ports]

    def mark_restart(self, client_id):
        """The test replaced client_id's process (killed it, and will start another): the
        connections the proxy accepts from now on are the new process's. The ordering checks
        hold each process to what it was told itself."""
        with self._lock:
            self._restarts[client_id].append(time.monotonic())

    def set_mode(self, mode, *, delay_ms=50, stall_ms=2000, rate=1.0, endpoints=None, weights=None, cut="any",
                 count=None, close="any"):
        """Switches the mode for requests that start from now on (see the module's docstring)."""
        if mode not in MODES:
            raise ValueError(f"unknown mode {mode!r}")
        if mode == "mix":
            weights = dict(weights or {m: 1 for m in MODES if m != "mix"})
            bad = [m for m in weights if m not in MODES or m == "mix"]
            if bad:
                raise ValueError(f"unknown modes in weights: {bad}")
        if cut not in ("any", "status", "after-status", "headers", "body") and not isinstance(cut, int):
            raise ValueError(f"unknown cut {cut!r}")
        if close not in ("any", "rst", "fin"):
            raise ValueError(f"unknown close {close!r}")
        with self._lock:
            self._mode = {"mode": mode, "delay_ms": delay_ms, "stall_ms": stall_ms, "rate": rate,
                          "endpoints": tuple(endpoints) if endpoints else None, "weights": weights, "cut": cut,
                          "left": count, "close": close}
            self.stats[f"mode:{mode}"] += 1

    @property
    def mode(self):
        with self._lock:
            return self._mode["mode"]

    def cut_streams(self):
        """Resets every GET /events stream open through the proxy; returns how many."""
        with self._lock:
            streams = list(self._streams)
            self._streams.clear()
        for client, upstream in streams:
            # shutdown first: a close alone does not wake the relay's thread blocked in recv.
            for sock in (client, upstream):
                try:
                    sock.shutdown(socket.SHUT_RDWR)
                except OSError:
                    pass
            _reset(client)
            _close(upstream)
        self._count("streams_cut")
        return len(streams)

    def open_streams(self):
        with self._lock:
            return len(self._streams)

    def refuse_for(self, seconds):
        """Closes every new connection at once for `seconds`, whatever the mode."""
        with self._lock:
            self._refuse_until = time.monotonic() + seconds

    def quiesce(self, timeout):
        """Waits up to `timeout` s until no request's connection is open; True if none is.
        Event streams do not count: they are held open by design, and hold no request."""
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            with self._lock:
                stream_clients = {c for c, _ in self._streams}
                if not (self._conns - stream_clients) and not (self._threads - self._stream_threads):
                    return True
            time.sleep(0.02)
        return False

    # -- the proxy ---------------------------------------------------------------------

    def _accept_loop(self):
        deadline = time.monotonic() + self._lifetime_s
        while not self._closing.is_set() and time.monotonic() < deadline:
            try:
                sock, _ = self._listener.accept()
            except socket.timeout:
                continue
            except OSError:
                return
            with self._lock:
                self._conn_no += 1
                no = self._conn_no
                # A refusal limited to some endpoints must read the request to know its path.
                refusing = time.monotonic() < self._refuse_until or (
                    self._mode["mode"] == "refuse" and not self._mode.get("endpoints"))
                if refusing:
                    close = self._mode.get("close", "any")
                    rst = close == "rst" or (close == "any" and self._rng.random() < 0.5)
                    self.stats["refused"] += 1
            if refusing:
                (_reset if rst else _close)(sock)
                continue
            t = threading.Thread(target=self._serve, args=(sock, no, time.monotonic()), name=f"faultproxy-{no}", daemon=True)
            with self._lock:
                self._conns.add(sock)
                self._threads.add(t)
            t.start()

    def _choose(self, endpoint):
        """The fault for one request, and its parameters."""
        with self._lock:
            m = self._mode
            if time.monotonic() < self._refuse_until:
                return "refuse", m
            mode = m["mode"]
            if m.get("endpoints") and endpoint not in m["endpoints"]:
                return "pass", m
            if mode == "mix":
                kinds = sorted(m["weights"])
                mode = self._rng.choices(kinds, [m["weights"][k] for k in kinds])[0]
            if mode != "pass" and self._rng.random() >= m.get("rate", 1.0):
                mode = "pass"
            if mode != "pass" and m.get("left") is not None:
                if m["left"] <= 0:
                    mode = "pass"
                else:
                    m["left"] -= 1
            return mode, m

    def _use_reset(self, params):
        """Close a client's connection with a reset (else a plain close)?"""
        close = params.get("close", "any")
        if close == "any":
            with self._lock:
                return self._rng.random() < 0.5
        return close == "rst"

    def _count(self, key):
        with self._lock:
            self.stats[key] += 1

    def _log(self, event):
        with self._lock:
            self.events.append(event)

    @staticmethod
    def _client_of(msg):
        try:
            body = json.loads(msg.body)
        except ValueError:
            return None, None
        if not isinstance(body, dict):
            return None, None
        return str(body.get("client_id")), body

    def _sniff_request(self, endpoint, msg, conn, accepted, late=False):
        """Logs a push or pull that is being forwarded to the server."""
        client, body = self._client_of(msg)
        if client is None:
            return
        if endpoint == "push":
            ids = [m.get("id") for m in body.get("mutations") or [] if isinstance(m, dict)]
            self._log(ProtocolEvent("push_sent", client, ids, late=late, conn=conn, accepted=accepted))
        elif endpoint == "pull":
            self._log(ProtocolEvent("pull_sent", client, list(body.get("unacked") or []), late=late, conn=conn,
                                    accepted=accepted))

    def _sniff_answer(self, endpoint, req, resp, conn, accepted, late=False):
        """Logs what the server answered (before the client gets any of it); returns the event
        (None when it was not a protocol answer), whose delivery the caller records."""
        if resp is not None and resp.start.split(" ")[1:2] != ["200"]:
            return None
        client, body = self._client_of(req)
        if client is None:
            return None
        if resp is None:  # the server died or hung up mid-request
            if endpoint != "push":
                return None
            ids = [m.get("id") for m in body.get("mutations") or [] if isinstance(m, dict)]
            event = ProtocolEvent("push_unanswered", client, ids, late=late, conn=conn, accepted=accepted)
            event.delivery = "no answer (the server hung up)"
            self._log(event)
            return event
        try:
            answer = json.loads(resp.body)
        except ValueError:
            return None
        items = answer.get("results") if endpoint == "push" else answer.get("outcomes")
        statuses = {r.get("id"): r.get("status") for r in items or [] if isinstance(r, dict)}
        event = ProtocolEvent(f"{endpoint}_answered", client, list(statuses), statuses, late=late, conn=conn,
                              accepted=accepted)
        event.delivery = "never (sent late)" if late else "not yet"
        self._log(event)
        return event

    def _sleep(self, ms):
        self._closing.wait(ms / 1000.0)

    def _send(self, sock, data, delay_ms=0):
        if not delay_ms:
            sock.sendall(data)
            return
        for i in range(0, len(data), CHUNK):
            self._sleep(delay_ms)
            sock.sendall(data[i:i + CHUNK])

    def _serve(self, client, no, accepted):
        upstream = None
        client.settimeout(IO_TIMEOUT_S)
        reader = _Reader(client)
        try:
            for _ in range(1000):  # requests on one kept-alive connection
                if self._closing.is_set() or reader.at_eof():
                    break
                req = _read_message(reader)
                method, _, rest = req.start.partition(" ")
                path = rest.split(" ")[0]
                endpoint = path.strip("/").split("?")[0]
                fault, params = self._choose(endpoint)
                self._count(f"{fault}:{endpoint}")
                if fault == "refuse":
                    _reset(client)
                    return
                if fault == "cut_request":
                    (_reset if self._use_reset(params) else _close)(client)
                    return
                if req.headers.get("expect", "").lower() == "100-continue":
                    client.sendall(b"HTTP/1.1 100 Continue\r\n\r\n")
                if fault == "error_before":
                    body = b'{"error":"faultproxy: service unavailable"}'
                    client.sendall(b"HTTP/1.1 503 Service Unavailable\r\nContent-Type: application/json\r\n"
                                   b"Retry-After: 0\r\nConnection: close\r\nContent-Length: "
                                   + str(len(body)).encode() + b"\r\n\r\n" + body)
                    return
                if fault == "stall":
                    self._sleep(params.get("stall_ms", 2000))
                    _close(client)
                    # A stream forwarded late would never end (the server keeps it alive),
                    # and nobody would read it: only requests with an answer go on late.
                    if endpoint != "events":
                        self._forward(req, method, endpoint, no, accepted, delay_ms=0, late=True)
                    return
                if endpoint == "events" and method == "GET":
                    self._relay_stream(client, req)
                    return
                delay = params.get("delay_ms", 0) if fault == "delay" else 0
                if upstream is None:
                    upstream = self._connect()
                    if upstream is None:
                        self._count("upstream_down")
                        _reset(client)
                        return
                    up_reader = _Reader(upstream)
                self._sniff_request(endpoint, req, no, accepted)
                try:
                    self._send(upstream, req.raw, delay)
                    resp = _read_message(up_reader, response_to=method)
                    while resp.start.split(" ")[1:2] and resp.start.split(" ")[1].startswith("1"):
                        resp = _read_message(up_reader, response_to=method)  # interim answers
                except (OSError, _Closed, ValueError):
                    self._count("upstream_lost")  # the server died or closed mid-request
                    self._sniff_answer(endpoint, req, None, no, accepted)
                    _reset(client)
                    return
                answered = self._sniff_answer(endpoint, req, resp, no, accepted)

                def delivered(how):
                    if answered is not None:
                        answered.delivery = how

                if fault == "drop_before":
                    rst = self._use_reset(params)
                    delivered(f"drop_before ({'reset' if rst else 'closed'}, nothing sent)")
                    (_reset if rst else _close)(client)
                    return
                if fault == "drop_mid":
                    head = resp.raw.find(b"\r\n\r\n") + 4
                    lo, hi = 1, max(1, len(resp.raw) - 1)
                    how = params.get("cut", "any")
                    if how == "status":
                        lo, hi = 1, resp.raw.find(b"\r\n") + 1
                    elif how == "after-status":
                        lo = hi = resp.raw.find(b"\r\n") + 2
                    elif how == "headers":
                        lo, hi = resp.raw.find(b"\r\n") + 2, head - 1
                    elif how == "body" and len(resp.raw) > head + 1:
                        lo = head + 1
                    elif isinstance(how, int):
                        lo = hi = min(max(1, how), len(resp.raw) - 1)
                    cut = self._rng.randint(lo, max(lo, hi))
                    rst = self._use_reset(params)
                    status_end = resp.raw.find(b"\r\n") + 2
                    length_at = resp.raw.lower().find(b"\r\ncontent-length:")
                    length_end = resp.raw.find(b"\r\n", length_at + 2) + 2 if length_at >= 0 else head
                    where = ("status line" if cut < status_end else
                             "headers, before its Content-Length" if cut < length_end else
                             "headers" if cut < head else "body")
                    delivered(f"drop_mid ({'reset' if rst else 'closed'} after {cut} of {len(resp.raw)} bytes, inside the {where})")
                    client.sendall(resp.raw[:cut])
                    (_reset if rst else _close)(client)
                    return
                if fault == "error_after":
                    delivered("error_after (502 instead)")
                    body = b'{"error":"faultproxy: bad gateway"}'
                    client.sendall(b"HTTP/1.1 502 Bad Gateway\r\nContent-Type: application/json\r\n"
                                   b"Connection: close\r\nContent-Length: " + str(len(body)).encode()
                                   + b"\r\n\r\n" + body)
                    return
                delivered("being sent")
                try:
                    self._send(client, resp.raw, delay)
                except OSError:
                    delivered("lost (the client's connection failed)")
                    raise
                delivered("whole" + (f" (delayed {delay} ms a chunk)" if delay else ""))
                if answered is not None:
                    answered.told_at = time.monotonic()
                if not (req.keep_alive and resp.keep_alive):
                    return
        except (OSError, _Closed, ValueError):
            pass
        finally:
            _close(client)
            if upstream is not None:
                _close(upstream)
            with self._lock:
                self._conns.discard(client)
                self._threads.discard(threading.current_thread())

    def _relay_stream(self, client, req):
        """Relays a GET /events stream: the request, then whatever the server sends, as it
        comes, until either end closes or ``cut_streams`` resets it."""
        up = self._connect()
        if up is None:
            self._count("upstream_down")
            _reset(client)
            return
        up.settimeout(None)
        with self._lock:
            self._streams.add((client, up))
            self._stream_threads.add(threading.current_thread())
        self._count("streams")
        try:
            up.sendall(req.raw)
            # Both ends are watched: a client that goes away (killed) ends the relay at once,
            # not at the server's next keepalive, so the proxy quiesces when its clients do.
            while not self._closing.is_set():
                readable, _, _ = select.select([client, up], [], [], 0.5)
                if client in readable and not client.recv(CHUNK):
                    break
                if up in readable:
                    data = up.recv(CHUNK)
                    if not data:
                        break
                    client.sendall(data)
        except (OSError, ValueError):
            pass
        finally:
            with self._lock:
                self._streams.discard((client, up))
                self._stream_threads.discard(threading.current_thread())
            _close(up)

    def _connect(self):
        with self._lock:
            addr = self.upstreams[self._next_upstream % len(self.upstreams)]
            self._next_upstream += 1
        try:
            s = socket.create_connection(addr, timeout=5)
        except OSError:
            return None
        s.settimeout(IO_TIMEOUT_S)
        return s

    def _forward(self, req, method, endpoint, no, accepted, delay_ms, late):
        """Sends one request upstream on a connection of its own; its answer is logged only."""
        up = self._connect()
        if up is None:
            self._count("upstream_down")
            return
        try:
            self._sniff_request(endpoint, req, no, accepted, late=late)
            self._send(up, req.raw, delay_ms)
            resp = _read_message(_Reader(up), response_to=method)
            self._sniff_answer(endpoint, req, resp, no, accepted, late=late)
        except (OSError, _Closed, ValueError):
            self._count("upstream_lost")
        finally:
            _close(up)

    # -- what the proxy saw ------------------------------------------------------------

    def snapshot(self):
        with self._lock:
            return list(self.events)

    def violations(self):
        """Breaches of the protocol's rules by the clients, as text, from what the proxy saw.

        For each client id, over the requests forwarded to the server in order:

        1. a push lists its ids in increasing order;
        2. a push carrying id k is forwarded only when every lower id of that client already
           forwarded has been answered by the server (in a push result or a pull outcome) or
           comes before k in the same push: k+1 never reaches the server before the server
           answered k (this workload has no kept failures);
        3. an id a pull left out of its "unacked" while it was sent and unanswered (the client
           forgot it: its process was killed before it was on disk) is never pushed again;

        and for each client process (``mark_restart`` says when the test replaced one):

        4. an id is never pushed again once the process was told the server's "ok" for it (an
           answer carrying it reached the process whole);
        5. after a push whose answer the process did not get whole (the proxy dropped, cut or
           replaced it, or the server hung up), its next request is a pull that names those
           ids in "unacked": a lost answer is resolved by the server's outcomes, never by
           sending the mutations again ("Nothing is sent twice to a server that applied it").

        Requests the proxy itself sent late (stall) are not the client's sends and are skipped,
        but the server's answers to them count as answers. A process sends one request at a
        time: once it sent another, it gave up on the earlier one (timed out), so an answer to
        that one reaches nobody, whatever the proxy managed to write (4 and 5 skip it).
        """
        out = []
        sent = collections.defaultdict(set)       # client -> ids forwarded in a push
        answered = collections.defaultdict(dict)  # client -> id -> status of the server's answer
        forgotten = collections.defaultdict(set)
        told = collections.defaultdict(dict)      # (client, process) -> id -> the answer that told it ok
        owed_pull = {}                            # (client, process) -> the push answer it lost
        events = self.snapshot()
        with self._lock:
            restarts = {c: list(ts) for c, ts in self._restarts.items()}

        def process(e):
            return bisect.bisect_right(restarts.get(e.client, []), e.accepted)

        sent_at = {}                              # conn -> when its request was forwarded
        sends = collections.defaultdict(list)     # (client, process) -> times of its requests
        for e in events:
            if e.kind in ("push_sent", "pull_sent") and not e.late:
                sent_at.setdefault(e.conn, e.at)
                sends[(e.client, process(e))].append(e.at)

        def abandoned(answer, until):
            """The answer's process sent another request after this one and before `until`."""
            start = sent_at.get(answer.conn)
            times = sends[(answer.client, process(answer))]
            return start is not None and bisect.bisect_right(times, until) > bisect.bisect_right(times, start)

        # An answer tells its process when it is delivered, which is after the proxy logged
        # it: order the "told" moments by their time.
        tellings = sorted((e.told_at, i, e) for i, e in enumerate(events)
                          if e.told_at is not None and not e.late and not abandoned(e, e.told_at))
        t_i = 0
        for e in events:
            while t_i < len(tellings) and tellings[t_i][0] <= e.at:
                a = tellings[t_i][2]
                for i, st in a.statuses.items():
                    if st == "ok":
                        told[(a.client, process(a))].setdefault(i, a)
                t_i += 1
            key = (e.client, process(e))
            if e.kind in ("push_answered", "pull_answered", "push_unanswered"):
                for i, st in e.statuses.items():
                    if st in ("ok", "rejected"):
                        answered[e.client][i] = st
                if (e.kind != "pull_answered" and not e.late and not (e.delivery or "").startswith("whole")
                        and not abandoned(e, e.at)):
                    owed_pull.setdefault(key, e)
                continue
            if e.late:
                if e.kind == "push_sent":
                    sent[e.client].update(e.ids)
                continue
            lost = owed_pull.pop(key, None)
            if lost is not None:
                missing = [i for i in lost.ids if i not in e.ids] if e.kind == "pull_sent" else lost.ids
                if e.kind != "pull_sent" or missing:
                    out.append(f"{e}: a push of ids {lost.ids[:5]} lost its answer (on conn {lost.conn}; the client "
                               f"got: {lost.delivery}) and the next request is not a pull naming them in unacked")
            if e.kind == "pull_sent":
                asked = set(e.ids)
                for i in sent[e.client]:
                    if i not in answered[e.client] and i not in asked:
                        forgotten[e.client].add(i)
                continue
            ids = e.ids
            if any(not isinstance(i, int) for i in ids) or ids != sorted(set(ids)):
                out.append(f"{e}: ids not strictly increasing")
            before = set()
            for i in ids:
                if isinstance(i, int):
                    owed = [j for j in sent[e.client]
                            if j < i and j not in answered[e.client] and j not in before and j not in forgotten[e.client]]
                    if owed:
                        out.append(f"{e}: id {i} pushed while lower id(s) {sorted(owed)[:5]} were unanswered")
                    if i in forgotten[e.client]:
                        out.append(f"{e}: id {i} pushed after a pull left it out of unacked while unanswered")
                    if i in told[key]:
                        out.append(f"{e}: id {i} pushed again after this process was told the server's ok "
                                   f"(on conn {told[key][i].conn})")
                before.add(i)
            sent[e.client].update(ids)
        return out

    def dump(self, path):
        """Writes every event, one a line, for a post-mortem."""
        t0 = self.events[0].at if self.events else 0.0
        with open(path, "w") as f:
            for e in self.snapshot():
                f.write(f"{e.at - t0:9.3f} {e.kind:14} {e.client} conn={e.conn}{' late' if e.late else ''} "
                        f"ids={e.ids} {e.statuses if e.statuses else ''}{' -> ' + e.delivery if e.delivery else ''}\n")

    def summary(self):
        evs = self.snapshot()
        kinds = collections.Counter(e.kind + (" late" if e.late else "") for e in evs)
        return {"stats": dict(self.stats), "events": dict(kinds)}


if __name__ == "__main__":  # a manual run: python faultproxy.py UPSTREAM_PORT [MODE [SECONDS]]
    import sys

    seconds = float(sys.argv[3]) if len(sys.argv) > 3 else 600
    p = FaultProxy(int(sys.argv[1]), seed=1, lifetime_s=seconds).start()
    if len(sys.argv) > 2:
        p.set_mode(sys.argv[2])
    print(f"listening on {p.url} for {seconds:.0f} s", flush=True)
    try:
        time.sleep(seconds)
    except KeyboardInterrupt:
        pass
    p.close()
    print(json.dumps(p.summary()), flush=True)
