"""Runs every ``Tests/Scenarios/*.scn`` through the Pythonic API: one test per file.

The format is described in ``Tests/Scenarios/README.md``. Values are compared as parsed JSON
(so ``1`` and ``1.0`` are equal); result codes are compared through the exception class each
code maps to. Where the Pythonic API turns a code into a value (``get``/``confirmed`` of an
absent record return None, ``outbox_next`` with nothing due returns None), None stands for
``NOTFOUND``.

Sync scenarios run the package's background sync with :class:`ScriptedServer` as its
transport and ``on_status`` listener: the server the scenario scripts with ``reply`` lines.
"""

import json
import os
import threading
import time
from pathlib import Path
from typing import Any, Dict, List, Optional, Tuple

import pytest

import optimist

from conftest import ROOT

#: Tests/Scenarios, or the directory in $OPTIMIST_SCENARIOS (to run drafts).
SCENARIOS = sorted(Path(os.environ.get("OPTIMIST_SCENARIOS") or ROOT / "Tests" / "Scenarios").glob("*.scn"))
CODES = {"OK", "MISUSE", "NOTFOUND", "STATE", "INVALID", "DUPLICATE", "IO", "CORRUPT", "BUSY"}
CODE_OF = {cls: name for name, cls in {
    "INTERNAL": optimist.InternalError, "MISUSE": optimist.MisuseError,
    "NOTFOUND": optimist.NotFoundError, "STATE": optimist.StateError,
    "INVALID": optimist.InvalidError, "DUPLICATE": optimist.DuplicateError,
    "IO": optimist.StoreIOError, "CORRUPT": optimist.CorruptError, "BUSY": optimist.BusyError,
}.items()}

NOTFOUND = ("code", "NOTFOUND")
#: Commands whose expected value is plain text, not JSON.
TEXT_VALUES = {"status", "next", "syncstate", "syncerror", "header"}


def now_ms() -> float:
    return time.monotonic() * 1000.0


class ScriptedServer:
    """The server a sync scenario scripts (README: "Sync scenarios"). Its :meth:`transport`
    answers each request with the next queued reply (whose endpoint must match) and blocks
    while none is queued; :meth:`heard` (``on_status``) keeps the last *settled* status, one
    that is not ``pushing``/``pulling``. Both run on the sync's thread; everything is guarded
    by :attr:`cond`."""

    def __init__(self) -> None:
        self.cond = threading.Condition()
        #: ``(endpoint, reply)``: reply None is "no answer", else ``(status, body, retry_after)``.
        self.replies: List[Tuple[str, Optional[Tuple[int, str, Optional[int]]]]] = []
        #: Answered since the last ``requests``: ``(endpoint, parsed body)``.
        self.requests: List[Tuple[str, Dict[str, Any]]] = []
        #: When each answered request reached the transport (ms).
        self.entered: List[float] = []
        self.answered = 0
        self.blocked = False
        self.mismatch: Optional[str] = None
        self.stop_requested = False
        self.stopped_seen = False
        self.running = False
        self.settled: Optional[Dict[str, Any]] = None
        self.settled_after = 0
        self.last_headers: Dict[str, str] = {}
        self.store: Optional[optimist.Store] = None

    def transport(self, endpoint: str, url: str, body: str, headers: Dict[str, str],
                  timeout_ms: int) -> Tuple[Any, ...]:
        with self.cond:
            entered = now_ms()
            while True:
                if self.stop_requested:
                    self.blocked = False
                    self.cond.notify_all()
                    store = self.store
                    break
                if self.mismatch is None and self.replies:
                    wanted, reply = self.replies[0]
                    if wanted == endpoint:
                        self.replies.pop(0)
                        self.blocked = False
                        self.requests.append((endpoint, json.loads(body)))
                        self.entered.append(entered)
                        self.last_headers = dict(headers)
                        self.answered += 1
                        self.cond.notify_all()
                        if reply is None:
                            raise ConnectionError("scripted: no answer")
                        return reply
                    self.mismatch = (f"request {self.answered + 1} is a {endpoint}, "
                                     f"the next scripted reply is for {wanted}")
                self.blocked = True
                self.cond.notify_all()
                if now_ms() - entered > 60000:
                    self.blocked = False
                    raise TimeoutError("no reply scripted for 60 s")
                self.cond.wait(0.05)
        if store is not None:
            store.sync_stop()  # from the sync's own thread: asks it to stop, returns at once
        raise ConnectionError("the scenario stopped the sync")

    def heard(self, status: Dict[str, Any]) -> None:
        with self.cond:
            if status.get("state") not in ("pushing", "pulling"):
                self.settled = status
                self.settled_after = self.answered
            if status.get("state") == "stopped":
                self.stopped_seen = True
            self.cond.notify_all()


def parse_op(text: str) -> optimist.Op:
    """``put COLL KEY JSON`` / ``patch COLL KEY JSON`` / ``delete COLL KEY`` /
    ``incr COLL KEY FIELD DELTA``."""
    kind = text.split(" ", 1)[0]
    if kind in ("put", "patch"):
        _, coll, key, value = text.split(" ", 3)
        return optimist.Op(kind, coll, key, value=json.loads(value))
    if kind == "delete":
        _, coll, key = text.split(" ")
        return optimist.delete(coll, key)
    if kind == "incr":
        _, coll, key, field, delta = text.split(" ")
        return optimist.incr(coll, key, field, float(delta))
    raise ValueError(f"unknown op {text!r}")


def _name_char(c: str) -> bool:
    return c.isascii() and (c.isalnum() or c == "_")


class Runner:
    """One scenario's store, names and subscriptions."""

    def __init__(self, path: Optional[Path]) -> None:
        self.path = path
        self.store = optimist.Store(path)
        self.ids: Dict[str, int] = {}
        self.subs: Dict[str, optimist.Subscription] = {}
        self.queries: Dict[str, Tuple[optimist.Query, List[Any]]] = {}
        self.received: Dict[str, List[Any]] = {}
        #: Guards ``received`` (the sync's changes arrive on its thread).
        self.received_lock = threading.Lock()
        self.server = ScriptedServer()

    def mid(self, name: str) -> int:
        return int(name) if name.isdigit() else self.ids[name]

    def name_of(self, mid: int) -> str:
        for name, i in self.ids.items():
            if i == mid:
                return name
        return str(mid)

    def substitute(self, text: str) -> str:
        """``text`` with each ``@NAME`` replaced by the id bound to NAME."""
        out, i = [], 0
        while i < len(text):
            if text[i] == "@" and i + 1 < len(text) and _name_char(text[i + 1]):
                j = i + 1
                while j < len(text) and _name_char(text[j]):
                    j += 1
                out.append(str(self.mid(text[i + 1:j])))
                i = j
            else:
                out.append(text[i])
                i += 1
        return "".join(out)

    def queue_reply(self, command: str) -> None:
        """``reply push|pull unreachable`` / ``reply push|pull STATUS [retry-after=MS] [BODY]``."""
        words = command.split(" ")
        endpoint = words[1]
        assert endpoint in ("push", "pull"), "reply push|pull ..."
        reply: Optional[Tuple[int, str, Optional[int]]] = None
        if not (words[2] == "unreachable" and len(words) == 3):
            status, after, skip = int(words[2]), None, 3
            if len(words) > 3 and words[3].startswith("retry-after="):
                after, skip = int(words[3][len("retry-after="):]), 4
            parts = command.split(" ", skip)
            body = self.substitute(parts[skip] if len(parts) > skip else "")
            reply = (status, body, after)
        with self.server.cond:
            self.server.replies.append((endpoint, reply))
            self.server.cond.notify_all()

    def start_sync(self, args: List[str]) -> None:
        """``sync start [batch=N] [header=NAME:VALUE ...]``."""
        batch, headers = 100, {}
        for a in args:
            k, _, v = a.partition("=")
            if k == "batch":
                batch = int(v)
            elif k == "header":
                name, _, value = v.partition(":")
                headers[name] = value
            else:
                raise ValueError(f"unknown sync start option {a!r}")
        server = self.server
        with server.cond:
            server.stopped_seen = False
            server.stop_requested = False
            server.store = self.store
        self.store.sync_start(None, headers=headers or None, pull_interval_ms=0, max_batch=batch,
                              timeout_ms=10000, transport=server.transport, on_status=server.heard,
                              backoff_base_ms=1, backoff_max_ms=20)
        with server.cond:
            server.running = True

    def stop_sync(self) -> None:
        """Stops the sync: a request blocked in the transport (or one reaching it now) stops
        the sync from its own thread and gets no answer; then waits for the final
        ``stopped`` status."""
        server = self.server
        with server.cond:
            server.stop_requested = True
            server.cond.notify_all()
            was_running = server.running
        self.store.sync_stop()
        with server.cond:
            if was_running:
                deadline = time.monotonic() + 10
                while not server.stopped_seen and time.monotonic() < deadline:
                    server.cond.wait(deadline - time.monotonic())
                assert server.stopped_seen, "the sync did not report stopped within 10 s"
            server.running = False
            server.stop_requested = False

    def settled_status(self) -> Dict[str, Any]:
        """The last status the sync published that is not pushing/pulling (none yet: the
        store's sync status)."""
        with self.server.cond:
            settled = self.server.settled
        return dict(settled) if settled is not None else self.store.sync_status()

    def sync_wait(self, n: int) -> None:
        """Waits (10 s at most) until exactly ``n`` requests have been answered and the sync
        has dealt with the last: it waits in request n+1 with no reply queued, or it is at rest
        (not running; or it settled after request n as ``unauthorized``, or idle per
        ``sync_wait_idle(0)``)."""
        server = self.server
        deadline = now_ms() + 10000
        while True:
            with server.cond:
                answered, queued, blocked = server.answered, len(server.replies), server.blocked
                mismatch, running, after = server.mismatch, server.running, server.settled_after
                state = server.settled.get("state") if server.settled else None
            assert mismatch is None, mismatch
            assert answered <= n, f"{answered} requests were answered already"
            if answered == n:
                if queued == 0 and blocked:
                    return
                rest = not running
                if not rest and after == n:
                    rest = state == "unauthorized" or self.store.sync_wait_idle(0)
                if rest:
                    assert queued == 0, f"the sync is at rest with {queued} scripted replies unused"
                    return
            assert now_ms() <= deadline, (f"timed out: {answered} answered, {queued} replies queued, "
                                          f"blocked {blocked}, settled state {state}")
            time.sleep(0.001)

    def render_requests(self) -> List[Any]:
        with self.server.cond:
            taken, self.server.requests = self.server.requests, []
        out: List[Any] = []
        for endpoint, body in taken:
            if endpoint == "push":
                out.append(["push", [self.name_of(m["id"]) + (f"/{m['retry']}" if m["retry"] else "")
                                     for m in body["mutations"]]])
            else:
                out.append(["pull", body["cursor"], [self.name_of(i) for i in body["unacked"]]])
        return out

    def run(self, command: str, ops: List[optimist.Op]) -> Tuple[str, Any]:
        """Runs one command; returns ``("value", v)`` or ``("code", NAME)``."""
        try:
            return self._run(command, ops)
        except optimist.DuplicateError as e:
            return ("code", "DUPLICATE " + self.name_of(e.existing_id))
        except optimist.Error as e:
            return ("code", CODE_OF[type(e)])

    def _run(self, command: str, ops: List[optimist.Op]) -> Tuple[str, Any]:
        words = command.split(" ")
        verb, args = words[0], words[1:]
        s = self.store
        ok = ("code", "OK")
        if verb == "mutate":
            name, dedupe, policy = args[0], None, "rollback"
            for a in args[1:]:
                k, _, v = a.partition("=")
                if k == "dedupe":
                    dedupe = v
                elif k == "policy":
                    policy = v
                else:
                    raise ValueError(f"unknown mutate option {a!r}")
            self.ids[name] = s.mutate(ops, dedupe_key=dedupe, policy=policy)
            return ok
        if verb == "commit":
            s.commit(self.mid(args[0]), ops if ops else None)
            return ok
        if verb == "rollback":
            reason = command.split(" ", 2)[2] if len(args) > 1 else None
            s.rollback(self.mid(args[0]), reason)
            return ok
        if verb == "server":
            s.server_apply(ops)
            return ok
        if verb in ("get", "confirmed"):
            v = s.get(*args) if verb == "get" else s.confirmed(*args)
            return NOTFOUND if v is None else ("value", v)
        if verb == "pending":
            return ("value", s.is_pending(*args))
        if verb == "scan":
            coll, prefix, limit = args
            return ("value", [[k, v] for k, v in s.scan(coll, "" if prefix == "*" else prefix, int(limit))])
        if verb == "status":
            return ("value", s.status(self.mid(args[0])))
        if verb == "count":
            return ("value", s.pending_count())
        if verb == "next":
            got = s.outbox_next(int(args[0]))
            return NOTFOUND if got is None else ("value", self.name_of(got[0]))
        if verb == "fail":
            name, kind, now = args
            assert kind in ("transient", "permanent")
            s.fail(self.mid(name), kind == "transient", None, int(now))
            return ok
        if verb == "retry":
            s.retry(self.mid(args[0]))
            return ok
        if verb == "loaded":
            coll, frm, to, at = args
            s.mark_loaded(coll, frm, to, int(at))
            return ok
        if verb == "stale":
            coll, key, now, max_age = args
            return ("value", s.needs_reload(coll, key, int(now), int(max_age)))
        if verb == "view":
            view, coll, prefix, kind = args
            s.view_define(view, coll, "" if prefix == "*" else prefix, kind)
            return ok
        if verb == "viewget":
            return ("value", s.view_get(args[0]))
        if verb == "subscribe":
            name, coll, prefix = args
            box = self.received.setdefault(name, [])

            def collect(changes: List[optimist.Change], box: List[Any] = box) -> None:
                with self.received_lock:
                    box.extend(changes)
            self.subs[name] = s.subscribe(collect, None if coll == "*" else coll,
                                          None if prefix == "*" else prefix)
            return ok
        if verb == "unsubscribe":
            s.unsubscribe(self.subs[args[0]])
            return ok
        if verb == "changes":
            with self.received_lock:
                box = self.received.setdefault(args[0], [])
                out = [[c.collection, c.key, c.value, c.pending, c.cause, c.status] for c in box]
                box.clear()
            return ("value", out)
        if verb == "index":
            s.index_define(args[0], args[1])
            return ok
        if verb == "query":
            name = args[0]
            assert name not in self.queries, f"query {name} opened twice"
            spec = command.split(" ", 2)[2]
            q = s.query(spec)
            box: List[Any] = []

            def collect_deltas(deltas: List[Any], box: List[Any] = box) -> None:
                with self.received_lock:
                    box.extend(deltas)
            q.subscribe(collect_deltas)
            self.queries[name] = (q, box)
            return ok
        if verb == "rows":
            return ("value", self.queries[args[0]][0].rows())
        if verb == "deltas":
            q, box = self.queries[args[0]]
            with self.received_lock:
                out = list(box)
                box.clear()
            return ("value", out)
        if verb == "qclose":
            self.queries[args[0]][0].close()
            return ok
        if verb == "reply":
            self.queue_reply(command)
            return ok
        if verb == "sync":
            what = args[0]
            if what == "start":
                self.start_sync(args[1:])
            elif what == "stop":
                self.stop_sync()
            elif what == "now":
                s.sync_now()
            elif what == "headers":
                s.sync_set_headers({n: v for n, _, v in (a.partition(":") for a in args[1:])})
            else:
                raise ValueError(f"unknown sync command {what!r}")
            return ok
        if verb == "syncwait":
            self.sync_wait(int(args[0]))
            return ok
        if verb == "requests":
            return ("value", self.render_requests())
        if verb == "syncstate":
            return ("value", self.settled_status()["state"])
        if verb == "syncerror":
            error = self.settled_status()["last_error"]
            return ("value", "null" if error is None else error)
        if verb == "syncstatus":
            status = self.settled_status()
            status.pop("last_error", None)
            return ("value", status)
        if verb == "gap":
            k, ms = int(args[0]), float(args[1])
            with self.server.cond:
                times = list(self.server.entered)
            assert 2 <= k <= len(times), f"no request {k} yet"
            return ("value", times[k - 1] - times[k - 2] >= ms - 5)
        if verb == "header":
            with self.server.cond:
                value = self.server.last_headers.get(args[0])
            return ("value", "null" if value is None else value)
        if verb == "reopen":
            assert self.path is not None, "reopen needs a file-backed scenario"
            self.stop_sync()
            s.flush()
            s.close()
            self.store = optimist.Store(self.path)
            return ok
        raise ValueError(f"unknown command {verb!r}")


def expected_outcome(verb: str, expected: Optional[str]) -> Tuple[str, Any]:
    if expected is None:
        return ("code", "OK")
    if expected in CODES or expected.startswith("DUPLICATE "):
        return ("code", expected)
    if verb in TEXT_VALUES:
        return ("value", expected)
    return ("value", json.loads(expected))


def run_scenario(file: Path, tmp_path: Path) -> None:
    text = file.read_text(encoding="utf-8")
    path = tmp_path / "store.db" if any(l.strip() == "reopen" for l in text.splitlines()) else None
    r = Runner(path)
    try:
        for n, raw in enumerate(text.splitlines(), 1):
            line = raw.strip()
            if not line or line.startswith("#"):
                continue
            body, sep, expected = line.partition(" => ")
            segments = body.split(" | ")
            command = segments[0].strip()
            ops = [parse_op(seg.strip()) for seg in segments[1:]]
            want = expected_outcome(command.split(" ")[0], expected.strip() if sep else None)
            try:
                got = r.run(command, ops)
            except AssertionError as e:  # a sync command's own check (syncwait, ...)
                raise AssertionError(f"{file.name}:{n}: {line}\n  {e}") from None
            assert got == want, f"{file.name}:{n}: {line}\n  expected {want}\n  got      {got}"
    finally:
        try:
            r.stop_sync()
        finally:
            r.store.close()


@pytest.mark.parametrize("file", SCENARIOS, ids=[f.stem for f in SCENARIOS])
def test_scenario(file: Path, tmp_path: Path) -> None:
    run_scenario(file, tmp_path)


def test_corpus_is_not_empty() -> None:
    assert len(SCENARIOS) >= 10
