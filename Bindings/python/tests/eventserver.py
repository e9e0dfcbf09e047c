"""A small sync server over real HTTP on loopback, with an event stream: protocol versions 1
and 2 over a dict of records, and ``GET /events`` (Server-Sent Events). The event stream tests
(test_events.py) run the library's built-in transport against it, and the end-to-end suite
(Tests/e2e/test_urlsession.py) the URLSession transport. Standard library only."""

import json
import queue
import threading
import time
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer


class EventServer:
    """Protocol versions 1 and 2 over a dict of records (``put`` and ``delete`` ops, every
    push ``ok``), on ``http://127.0.0.1:PORT``, with an event stream.

    ``events``: how ``GET /events`` answers: ``"sse"`` (200, ``event: ready`` and then a
    ``poke`` per :meth:`poke`, ``: keepalive`` every ``keepalive_s``), or an HTTP status (e.g.
    404, or 503 with ``Retry-After: 1``). ``events_token``: when set, ``/events`` needs
    ``Authorization: Bearer <it>`` (401 otherwise); push and pull take any.
    """

    def __init__(self):
        self.lock = threading.Lock()
        self.records = {}
        self.changed_at = {}
        self.seq = 0
        self.pulls = 0
        self.streams = []        # the headers of each GET /events, in order
        self.answered = []       # the status each GET /events got
        self.violations = []
        self.events = "sse"
        self.events_token = None
        self.keepalive_s = 60.0
        self.subscribers = []    # one queue per open stream
        self.stopping = False
        server = self

        class Handler(BaseHTTPRequestHandler):
            def log_message(self, *args):
                pass

            def do_POST(self):
                body = self.rfile.read(int(self.headers.get("Content-Length", 0)))
                status, reply = server.answer(self.path, json.loads(body))
                self.reply(status, reply)

            def do_GET(self):
                if self.path != "/events":
                    return self.reply(404, '{"error": "no such endpoint"}')
                server.stream(self)

            def reply(self, status, body, extra=()):
                data = body.encode()
                self.send_response(status)
                self.send_header("Content-Type", "application/json")
                self.send_header("Content-Length", str(len(data)))
                for name, value in extra:
                    self.send_header(name, value)
                self.end_headers()
                self.wfile.write(data)

        self.httpd = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.httpd.daemon_threads = True
        self.url = f"http://127.0.0.1:{self.httpd.server_address[1]}"
        self.thread = threading.Thread(target=self.httpd.serve_forever, daemon=True)
        self.thread.start()

    def close(self):
        with self.lock:
            self.stopping = True
        self.httpd.shutdown()
        self.httpd.server_close()

    # The server's own writes (another device), and its pokes.
    def write(self, coll, key, value):
        with self.lock:
            self.seq += 1
            self.records[(coll, key)] = value
            self.changed_at[(coll, key)] = self.seq

    def poke(self):
        with self.lock:
            for q in self.subscribers:
                q.put(b"event: poke\ndata: {}\n\n")

    def cut(self):
        """Ends every open stream mid-way (the server closes the connection)."""
        with self.lock:
            for q in self.subscribers:
                q.put(None)

    def open_streams(self):
        with self.lock:
            return len(self.subscribers)

    def stream_count(self, status=None):
        with self.lock:
            return len([s for s in self.answered if status is None or s == status])

    def pull_count(self):
        with self.lock:
            return self.pulls

    # The protocol.
    def answer(self, path, request):
        with self.lock:
            if request.get("protocol") not in (1, 2) or not request.get("client_id"):
                self.violations.append(("bad request", request))
            if path == "/push":
                for m in request["mutations"]:
                    for op in m["ops"]:
                        self.seq += 1
                        at = (op["coll"], op["key"])
                        self.changed_at[at] = self.seq
                        if op["op"] == "put":
                            self.records[at] = op["value"]
                        elif op["op"] == "delete":
                            self.records.pop(at, None)
                        else:
                            self.violations.append(("unexpected op", op))
                return 200, json.dumps({"results": [{"id": m["id"], "status": "ok"} for m in request["mutations"]]})
            if path == "/pull":
                self.pulls += 1
                since = int(request["cursor"] or 0)
                changes = []
                for at, s in sorted(self.changed_at.items(), key=lambda kv: kv[1]):
                    if s > since:
                        v = self.records.get(at)
                        changes.append({"op": "delete", "coll": at[0], "key": at[1]} if v is None else
                                       {"op": "put", "coll": at[0], "key": at[1], "value": v})
                return 200, json.dumps({"cursor": str(self.seq), "more": False, "outcomes": [], "changes": changes})
            return 404, '{"error": "no such endpoint"}'

    def stream(self, handler):
        headers = dict(handler.headers.items())
        with self.lock:
            self.streams.append(headers)
            mode, token = self.events, self.events_token
            if mode == "sse" and token is not None and headers.get("Authorization") != f"Bearer {token}":
                mode = 401
            self.answered.append(200 if mode == "sse" else mode)
        if mode != "sse":
            extra = [("Retry-After", "1")] if mode == 503 else []
            body = '{"error": "token expired"}' if mode == 401 else '{"error": "no streams here"}'
            return handler.reply(mode, body, extra)
        q = queue.Queue()
        with self.lock:
            self.subscribers.append(q)
        try:
            handler.send_response(200)
            handler.send_header("Content-Type", "text/event-stream")
            handler.send_header("Cache-Control", "no-cache")
            handler.end_headers()
            handler.wfile.write(b"event: ready\ndata: {}\n\n")
            last = time.monotonic()
            while True:
                with self.lock:
                    if self.stopping:
                        return
                try:
                    item = q.get(timeout=0.05)
                except queue.Empty:
                    if time.monotonic() - last < self.keepalive_s:
                        continue
                    item = b": keepalive\n\n"
                if item is None:
                    return
                handler.wfile.write(item)
                last = time.monotonic()
        except OSError:
            pass  # the client went away
        finally:
            with self.lock:
                self.subscribers.remove(q)
