"""Runs every ``Tests/Scenarios/*.scn`` through the Pythonic API: one test per file.

The format is described in ``Tests/Scenarios/README.md``. Values are compared as parsed JSON
(so ``1`` and ``1.0`` are equal); result codes are compared through the exception class each
code maps to. Where the Pythonic API turns a code into a value (``get``/``confirmed`` of an
absent record return None, ``outbox_next`` with nothing due returns None), None stands for
``NOTFOUND``.
"""

import json
from pathlib import Path
from typing import Any, Dict, List, Optional, Tuple

import pytest

import optimist

from conftest import ROOT

SCENARIOS = sorted((ROOT / "Tests" / "Scenarios").glob("*.scn"))
CODES = {"OK", "MISUSE", "NOTFOUND", "STATE", "INVALID", "DUPLICATE", "IO", "CORRUPT", "BUSY"}
CODE_OF = {cls: name for name, cls in {
    "INTERNAL": optimist.InternalError, "MISUSE": optimist.MisuseError,
    "NOTFOUND": optimist.NotFoundError, "STATE": optimist.StateError,
    "INVALID": optimist.InvalidError, "DUPLICATE": optimist.DuplicateError,
    "IO": optimist.StoreIOError, "CORRUPT": optimist.CorruptError, "BUSY": optimist.BusyError,
}.items()}

NOTFOUND = ("code", "NOTFOUND")


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


class Runner:
    """One scenario's store, names and subscriptions."""

    def __init__(self, path: Optional[Path]) -> None:
        self.path = path
        self.store = optimist.Store(path)
        self.ids: Dict[str, int] = {}
        self.subs: Dict[str, optimist.Subscription] = {}
        self.received: Dict[str, List[Any]] = {}

    def mid(self, name: str) -> int:
        return int(name) if name.isdigit() else self.ids[name]

    def name_of(self, mid: int) -> str:
        for name, i in self.ids.items():
            if i == mid:
                return name
        return str(mid)

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
            self.subs[name] = s.subscribe(box.extend, None if coll == "*" else coll,
                                          None if prefix == "*" else prefix)
            return ok
        if verb == "unsubscribe":
            s.unsubscribe(self.subs[args[0]])
            return ok
        if verb == "changes":
            box = self.received.setdefault(args[0], [])
            out = [[c.collection, c.key, c.value, c.pending, c.cause] for c in box]
            box.clear()
            return ("value", out)
        if verb == "reopen":
            assert self.path is not None, "reopen needs a file-backed scenario"
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
    if verb in ("status", "next"):
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
            got = r.run(command, ops)
            assert got == want, f"{file.name}:{n}: {line}\n  expected {want}\n  got      {got}"
    finally:
        r.store.close()


@pytest.mark.parametrize("file", SCENARIOS, ids=[f.stem for f in SCENARIOS])
def test_scenario(file: Path, tmp_path: Path) -> None:
    run_scenario(file, tmp_path)


def test_corpus_is_not_empty() -> None:
    assert len(SCENARIOS) >= 10
