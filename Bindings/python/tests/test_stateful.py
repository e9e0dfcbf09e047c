"""Stateful property test: random sequences of store calls, compared after every step with
the pure-Python reference implementation of the model of docs/concepts.md in ``reference.py``.

Checked after each step: every record's visible and confirmed value and pending flag, prefix
scans in byte order, the pending count, every mutation's status, two views, freshness
(needs_reload after mark_loaded), and the changes
two subscribers received (one batch per call at most, exactly the records whose visible value
or status changed, plus every record of a mutation that ``fail`` or ``retry`` acted on, since
every status change is an event; with the call's cause and the record's ``Change.status``).
"""

import shutil
import tempfile
from pathlib import Path
from typing import Any, Dict, List, Optional

import hypothesis.strategies as st
from hypothesis import settings
from hypothesis.stateful import RuleBasedStateMachine, initialize, invariant, rule

import optimist
from reference import Code, Reference, reopened

COLLS = ["a", "b"]
KEYS = ["k1", "k2", "x", "\u00e9"]
FIELDS = ["n", "s", "o"]
ADDRS = [(c, k) for c in COLLS for k in KEYS]
MAX_ATTEMPTS = 3
FAR_FUTURE = 10 ** 9  # past every backoff (fail uses now 0, delays are capped at 100 ms)

scalars = st.one_of(st.none(), st.booleans(), st.integers(-5, 5), st.sampled_from([0.5, -1.5, 2.25]),
                    st.text(alphabet="ab\u00fc", max_size=2))
values = st.recursive(scalars, lambda inner: st.one_of(
    st.lists(inner, max_size=2), st.dictionaries(st.sampled_from(FIELDS), inner, max_size=2)), max_leaves=4)
records = st.dictionaries(st.sampled_from(FIELDS), values, max_size=3)
deltas = st.one_of(st.integers(-3, 3), st.sampled_from([0.5, -0.25]))


@st.composite
def ops(draw) -> Dict[str, Any]:
    coll, key = draw(st.sampled_from(ADDRS))
    kind = draw(st.sampled_from(["put", "patch", "delete", "incr", "incr"]))
    if kind in ("put", "patch"):
        return {"op": kind, "coll": coll, "key": key, "value": draw(records)}
    if kind == "delete":
        return {"op": "delete", "coll": coll, "key": key}
    return {"op": "incr", "coll": coll, "key": key, "field": draw(st.sampled_from(FIELDS)), "delta": float(draw(deltas))}


op_lists = st.lists(ops(), min_size=1, max_size=3)


def json_key(v: Any) -> Any:
    """A comparison key that tells JSON values apart as JSON does: booleans are not numbers,
    and numbers compare by value (``1`` and ``1.0`` are the same JSON number)."""
    if isinstance(v, bool):
        return ("bool", v)
    if isinstance(v, (int, float)):
        return ("number", float(v))
    if isinstance(v, dict):
        return ("object", tuple(sorted((k, json_key(x)) for k, x in v.items())))
    if isinstance(v, (list, tuple)):
        return ("array", tuple(json_key(x) for x in v))
    return (type(v).__name__, v)


def to_ops(wire: List[Dict[str, Any]]) -> List[optimist.Op]:
    return [optimist.Op.from_dict(o) for o in wire]


class StoreVersusReference(RuleBasedStateMachine):
    #: Where the store lives: None for memory (the file-backed variant sets a path).
    def store_path(self) -> Optional[Path]:
        return None

    def __init__(self) -> None:
        super().__init__()
        self.store = optimist.Store(self.store_path())
        self.ref = Reference(MAX_ATTEMPTS)
        self.ids: List[int] = []
        self.all_batches: List[List[optimist.Change]] = []
        self.b_batches: List[List[optimist.Change]] = []
        self.snapshot = self._observe_ref()

    @initialize()
    def setup(self) -> None:
        self.configure()

    def configure(self) -> None:
        """Retry policy, views and subscriptions: set up again after a reopen."""
        self.store.set_retry_policy(MAX_ATTEMPTS, 10, 100)
        self.store.view_define("count_k", "a", "k", "count")
        self.store.view_define("sum_n", "a", "", "sum:n")
        self.store.subscribe(self.all_batches.append)
        self.store.subscribe(self.b_batches.append, coll="b")

    def teardown(self) -> None:
        self.store.close()

    # Helpers --------------------------------------------------------------------------

    def _observe_ref(self):
        V = self.ref.visible()
        return {a: (V.get(a), self.ref.pending_flag(a), self.ref.record_status(a)) for a in ADDRS}

    @staticmethod
    def _same(x, y) -> bool:
        """Equal as JSON: ``False`` is not ``0`` (Python's ``==`` says it is), ``1`` is ``1.0``."""
        return json_key(x) == json_key(y)

    def call(self, cause: Optional[str], do_store, do_ref, forced=()) -> Any:
        """Runs the same call on both; checks the outcome code and the change batches.
        ``forced``: records reported by a successful call even when unchanged (those of a
        mutation whose status the call changed)."""
        self.all_batches.clear()
        self.b_batches.clear()
        want: Optional[Code] = None
        try:
            want_value = do_ref()
        except Code as c:
            want = c
        try:
            got = do_store()
        except optimist.Error as e:
            assert want is not None, f"store raised {e!r}, reference succeeded"
            expected_cls = {"MISUSE": optimist.MisuseError, "NOTFOUND": optimist.NotFoundError, "STATE": optimist.StateError,
                            "INVALID": optimist.InvalidError, "DUPLICATE": optimist.DuplicateError}[want.code]
            assert type(e) is expected_cls, (e, want.code)
            if want.code == "DUPLICATE":
                assert e.existing_id == want.existing
            got = None
        else:
            assert want is None, f"reference expected {want.code}, store succeeded"
        before, self.snapshot = self.snapshot, self._observe_ref()
        changed = {a: self.snapshot[a] for a in ADDRS
                   if not self._same(before[a], self.snapshot[a]) or (want is None and a in forced)}
        for batches, wanted in ((self.all_batches, lambda a: True), (self.b_batches, lambda a: a[0] == "b")):
            exp = sorted((a, v, p, st) for a, (v, p, st) in changed.items() if wanted(a))
            assert len(batches) <= 1, f"{len(batches)} batches for one call"
            batch = batches[0] if batches else []
            assert sorted(((c.collection, c.key), c.value, c.pending, c.status) for c in batch) == exp
            assert all(c.cause == cause for c in batch)
        return got, None if want else want_value

    def pick_id(self, data) -> int:
        return data.draw(st.sampled_from(self.ids + [10 ** 6]), label="id")

    # Rules ----------------------------------------------------------------------------

    @rule(wire=op_lists, dedupe=st.one_of(st.none(), st.sampled_from(["d1", "d2"])),
          policy=st.sampled_from(["rollback", "keep"]))
    def mutate(self, wire, dedupe, policy) -> None:
        def do_store():
            mid = self.store.mutate(to_ops(wire), dedupe_key=dedupe, policy=policy)
            # Ids are the store's to choose: the reference takes the one it returned.
            self.ref.mutate(mid, wire, dedupe, policy)
            self.ids.append(mid)

        self.call("mutate", do_store, lambda: self.ref.check_mutate(wire, dedupe))

    @rule(data=st.data(), server=st.one_of(st.none(), st.lists(ops(), max_size=2)))
    def commit(self, data, server) -> None:
        mid = self.pick_id(data)
        self.call("commit", lambda: self.store.commit(mid, None if server is None else to_ops(server)),
                  lambda: self.ref.commit(mid, server))

    @rule(data=st.data())
    def rollback(self, data) -> None:
        mid = self.pick_id(data)
        self.call("rollback", lambda: self.store.rollback(mid, "test"), lambda: self.ref.rollback(mid))

    @rule(wire=op_lists)
    def server_apply(self, wire) -> None:
        self.call("server", lambda: self.store.server_apply(to_ops(wire)), lambda: self.ref.server_apply(wire))

    @rule()
    def outbox_next(self) -> None:
        got, want = self.call(None, lambda: self.store.outbox_next(FAR_FUTURE), self.ref.outbox_next)
        if want is None:
            assert got is None
        else:
            assert got == (want.id, want.ops)

    @rule(transient=st.booleans())
    def send_then_fail(self, transient) -> None:
        """The sender's loop: take the next mutation, and its send fails (so attempts pile up
        and the retry limit is reached within a short run)."""
        got, want = self.call(None, lambda: self.store.outbox_next(FAR_FUTURE), self.ref.outbox_next)
        if got is not None:
            mid = got[0]
            self.call("fail", lambda: self.store.fail(mid, transient, "boom", 0),
                      lambda: self.ref.fail(mid, transient, "boom"), forced=self.ref.touched(mid))

    @rule(data=st.data(), transient=st.booleans())
    def fail(self, data, transient) -> None:
        mid = self.pick_id(data)
        self.call("fail", lambda: self.store.fail(mid, transient, "boom", 0),
                  lambda: self.ref.fail(mid, transient, "boom"), forced=self.ref.touched(mid))

    @rule(data=st.data())
    def retry(self, data) -> None:
        mid = self.pick_id(data)
        self.call("retry", lambda: self.store.retry(mid), lambda: self.ref.retry(mid), forced=self.ref.touched(mid))

    @rule(coll=st.sampled_from(COLLS), frm=st.sampled_from(KEYS), to=st.sampled_from(KEYS),
          at=st.integers(0, 10))
    def mark_loaded(self, coll, frm, to, at) -> None:
        self.call(None, lambda: self.store.mark_loaded(coll, frm, to, at),
                  lambda: self.ref.mark_loaded(coll, frm, to, at))

    # Invariants -----------------------------------------------------------------------

    @invariant()
    def same_state(self) -> None:
        s, ref = self.store, self.ref
        V = ref.visible()
        for a in ADDRS:
            assert s.get(*a) == V.get(a), a
            assert s.confirmed(*a) == ref.C.get(a), a
            assert s.is_pending(*a) == ref.pending_flag(a), a
        for c in COLLS:
            want = sorted(((k, v) for (cc, k), v in V.items() if cc == c), key=lambda kv: kv[0].encode())
            assert s.scan(c) == want
            assert s.scan(c, "k", 1) == [kv for kv in want if kv[0].startswith("k")][:1]
        assert s.pending_count() == len(ref.P)
        for mid in self.ids:
            assert s.status(mid) == ref.status(mid), mid
        for coll, key in ADDRS:
            for now, max_age in ((10, 0), (10, 5), (20, 100)):
                assert s.needs_reload(coll, key, now, max_age) == ref.needs_reload(coll, key, now, max_age)
        assert s.view_get("count_k") == sum(1 for (c, k) in V if c == "a" and k.startswith("k"))
        numbers = [r.get("n") for (c, _), r in V.items() if c == "a"]
        assert s.view_get("sum_n") == sum(n for n in numbers if isinstance(n, (int, float)) and not isinstance(n, bool))


    @invariant()
    def status_you_can_see(self) -> None:
        """``mutations()`` lists the model's not-ended mutations as it keeps them, in id
        order, and ``explain`` folds each record's layers as the model does (docs/status.md)."""
        got = self.store.mutations()
        assert [m["id"] for m in got] == [m.id for m in self.ref.P]
        for g, m in zip(got, self.ref.P):
            assert set(g) == {"id", "status", "ops", "attempts", "last_error", "next_attempt_ms", "created_ms",
                              "policy", "dedupe_key", "retry"}
            assert (g["status"], g["attempts"], g["policy"], g["dedupe_key"], g["last_error"], g["retry"]) == \
                (m.status, m.attempts, m.policy, m.dedupe, m.last_error, m.retry), m.id
            assert self._same(g["ops"], m.ops) and g["created_ms"] is None
            assert isinstance(g["next_attempt_ms"], int) and g["next_attempt_ms"] >= 0
        for status in ("pending", "inflight", "failed"):
            assert [m["id"] for m in self.store.mutations(status)] == [m.id for m in self.ref.P if m.status == status]
        for a in ADDRS:
            x, want = self.store.explain(*a), self.ref.explain(a)
            assert self._same(x, want), (a, x, want)


class FileStoreVersusReference(StoreVersusReference):
    """The same, on a store file, with a rule that flushes, closes and reopens it: after the
    reopen the store must equal the reference (durability of C, the pending list, statuses,
    dedupe keys and policies)."""

    def store_path(self) -> Optional[Path]:
        self.dir = Path(tempfile.mkdtemp(prefix="optimist-stateful-"))
        return self.dir / "store.db"

    def teardown(self) -> None:
        super().teardown()
        shutil.rmtree(self.dir, ignore_errors=True)

    @rule()
    def reopen(self) -> None:
        path = self.store.path
        self.store.flush()
        self.store.close()
        self.store = optimist.Store(path)
        self.all_batches, self.b_batches = [], []
        self.configure()
        reopened(self.ref)
        self.snapshot = self._observe_ref()


StoreVersusReference.TestCase.settings = settings(max_examples=200, stateful_step_count=40, deadline=None)
TestStoreVersusReference = StoreVersusReference.TestCase
FileStoreVersusReference.TestCase.settings = settings(max_examples=60, stateful_step_count=30, deadline=None)
TestFileStoreVersusReference = FileStoreVersusReference.TestCase
