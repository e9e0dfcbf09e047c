"""A small pure-Python reference implementation of the model described in docs/concepts.md
(the three states C, P and V, mutations and ops, ending a mutation, statuses, rebasing,
freshness), written from that description (not from the library), for the stateful test.

It keeps the confirmed dict ``C`` and the list of not-yet-ended mutations ``P`` and computes
the visible state from scratch every time, as ``V = fold(P, C)`` with the re-application rule
(an op that no longer applies is skipped in ``V``). No incremental bookkeeping: it is slow and
obviously right, which is the point.
"""

import copy
import math
from typing import Any, Dict, List, Optional, Tuple

Addr = Tuple[str, str]
Record = Dict[str, Any]


class Invalid(Exception):
    """An op that cannot apply (strict evaluation)."""


class Code(Exception):
    """A result code the binding must raise (NOTFOUND, STATE, DUPLICATE ...)."""

    def __init__(self, code: str, existing: Optional[int] = None) -> None:
        super().__init__(code)
        self.code = code
        self.existing = existing


def is_number(v: Any) -> bool:
    return isinstance(v, (int, float)) and not isinstance(v, bool)


def merge_patch(target: Any, patch: Any) -> Any:
    """RFC 7396."""
    if not isinstance(patch, dict):
        return copy.deepcopy(patch)
    result = dict(target) if isinstance(target, dict) else {}
    for k, v in patch.items():
        if v is None:
            result.pop(k, None)
        else:
            result[k] = merge_patch(result.get(k), v)
    return result


def apply_op(op: Dict[str, Any], current: Optional[Record]) -> Optional[Record]:
    """One op (wire form) on a record; raises Invalid when it cannot apply."""
    kind = op["op"]
    if kind == "put":
        return copy.deepcopy(op["value"])
    if kind == "patch":
        return merge_patch(current or {}, op["value"])
    if kind == "delete":
        return None
    if kind == "incr":
        rec = dict(current or {})
        old = rec.get(op["field"], 0)
        if not is_number(old):
            raise Invalid(op)
        new = old + op["delta"]
        if not math.isfinite(new):
            raise Invalid(op)
        rec[op["field"]] = new
        return rec
    raise ValueError(kind)


def evaluate(ops: List[Dict[str, Any]], base: Dict[Addr, Record], skip: bool) -> Dict[Addr, Optional[Record]]:
    """The records ``ops`` produce on ``base``, all or nothing (``skip``: failing ops are
    skipped instead, the re-application rule)."""
    out: Dict[Addr, Optional[Record]] = {}
    for op in ops:
        a = (op["coll"], op["key"])
        cur = out[a] if a in out else base.get(a)
        try:
            out[a] = apply_op(op, cur)
        except Invalid:
            if not skip:
                raise
            out[a] = cur
    return out


def write(records: Dict[Addr, Optional[Record]], into: Dict[Addr, Record]) -> None:
    for a, v in records.items():
        if v is None:
            into.pop(a, None)
        else:
            into[a] = v


class Mutation:
    def __init__(self, mid: int, ops: List[Dict[str, Any]], dedupe: Optional[str], policy: str) -> None:
        self.id = mid
        self.ops = ops
        self.dedupe = dedupe
        self.policy = policy
        self.status = "pending"
        self.attempts = 0
        #: Send order: a fresh mutation queues at its id; a retried failed one after every
        #: mutation queued when it was retried (and before the next fresh one).
        self.position = mid
        self.fresh = True
        #: The reason given with the last failure; the app's retries of a kept failure.
        self.last_error: Optional[str] = None
        self.retry = 0

    def send_order(self) -> Tuple[int, int, int]:
        return (self.position, 1 if self.fresh else 0, self.id)


class Reference:
    """The model. Ids are not predicted: the caller passes the id the store returned."""

    def __init__(self, max_attempts: int) -> None:
        self.C: Dict[Addr, Record] = {}
        self.P: List[Mutation] = []
        self.ended: Dict[int, str] = {}
        self.max_attempts = max_attempts
        #: The id the next mutation gets (ids are the store's: the last one plus one).
        self.next_id = 1
        #: Loaded key ranges per collection: (from_key, to_key, at_ms).
        self.loaded: Dict[str, List[Tuple[str, str, int]]] = {}

    # Derived state ------------------------------------------------------------------

    def visible(self) -> Dict[Addr, Record]:
        V = copy.deepcopy(self.C)
        for m in self.P:
            write(evaluate(m.ops, V, skip=True), V)
        return V

    def pending_flag(self, a: Addr) -> bool:
        return any((op["coll"], op["key"]) == a for m in self.P for op in m.ops)

    def record_status(self, a: Addr) -> str:
        """``Change.status``: failed when a kept failure touches the record, pending when
        another not-ended mutation does, else confirmed."""
        touching = [m for m in self.P if any((op["coll"], op["key"]) == a for op in m.ops)]
        if any(m.status == "failed" for m in touching):
            return "failed"
        return "pending" if touching else "confirmed"

    def explain(self, a: Addr) -> Dict[str, Any]:
        """``store.explain``: the confirmed value, each not-ended mutation on the record with
        its ops there and the value after them (ops that cannot apply skipped), the visible
        value."""
        value = copy.deepcopy(self.C.get(a))
        layers = []
        for m in self.P:
            mine = [op for op in m.ops if (op["coll"], op["key"]) == a]
            if not mine:
                continue
            for op in mine:
                try:
                    value = apply_op(op, value)
                except Invalid:
                    pass
            layers.append({"id": m.id, "status": m.status, "ops": mine, "value": copy.deepcopy(value)})
        return {"confirmed": self.C.get(a), "layers": layers, "visible": self.visible().get(a)}

    def touched(self, mid: int) -> List[Addr]:
        """The records a not-ended mutation's ops name (none for an unknown or ended id)."""
        for m in self.P:
            if m.id == mid:
                return [(op["coll"], op["key"]) for op in m.ops]
        return []

    def live(self, mid: int) -> Mutation:
        for m in self.P:
            if m.id == mid:
                return m
        if mid in self.ended:
            raise Code("STATE")
        raise Code("NOTFOUND")

    def status(self, mid: int) -> str:
        if mid in self.ended:
            return self.ended[mid]
        return self.live(mid).status

    def _end(self, m: Mutation, status: str) -> None:
        self.P.remove(m)
        self.ended[m.id] = status

    # Calls ----------------------------------------------------------------------------

    def check_mutate(self, ops: List[Dict[str, Any]], dedupe: Optional[str]) -> None:
        """Raises what mutate must raise, without changing anything."""
        if dedupe is not None:
            for m in self.P:
                if m.dedupe == dedupe:
                    raise Code("DUPLICATE", m.id)
        try:
            evaluate(ops, self.visible(), skip=False)
        except Invalid:
            raise Code("INVALID") from None

    def mutate(self, mid: int, ops: List[Dict[str, Any]], dedupe: Optional[str], policy: str) -> None:
        assert all(mid > m.id for m in self.P) and all(mid > i for i in self.ended)
        self.P.append(Mutation(mid, ops, dedupe, policy))
        self.next_id = mid + 1

    def commit(self, mid: int, server_ops: Optional[List[Dict[str, Any]]]) -> None:
        m = self.live(mid)
        if server_ops is None:
            records = evaluate(m.ops, self.C, skip=True)
        else:
            try:
                records = evaluate(server_ops, self.C, skip=False)
            except Invalid:
                raise Code("INVALID") from None
        write(records, self.C)
        self._end(m, "committed")

    def rollback(self, mid: int) -> None:
        self._end(self.live(mid), "rolled_back")

    def server_apply(self, ops: List[Dict[str, Any]]) -> None:
        try:
            records = evaluate(ops, self.C, skip=False)
        except Invalid:
            raise Code("INVALID") from None
        write(records, self.C)

    def outbox_next(self) -> Optional[Mutation]:
        """With a clock far past every backoff: the first pending mutation in send order."""
        queued = sorted((m for m in self.P if m.status == "pending"), key=Mutation.send_order)
        if not queued:
            return None
        m = queued[0]
        m.status = "inflight"
        m.attempts += 1
        return m

    def fail(self, mid: int, transient: bool, reason: Optional[str] = None) -> None:
        m = self.live(mid)
        if m.status == "pending":
            m.attempts += 1  # sent without the outbox: still an attempt
        elif m.status != "inflight":
            raise Code("STATE")
        m.last_error = reason
        if transient and m.attempts < self.max_attempts:
            m.status = "pending"
        elif m.policy == "rollback":
            self._end(m, "rolled_back")
        else:
            m.status = "failed"

    def mark_loaded(self, coll: str, frm: str, to: str, at: int) -> None:
        if to.encode() < frm.encode():
            raise Code("MISUSE")
        self.loaded.setdefault(coll, []).append((frm, to, at))

    def needs_reload(self, coll: str, key: str, now: int, max_age: int) -> bool:
        """Outside every loaded range, or only in ranges older than ``max_age``."""
        k = key.encode()
        return not any(f.encode() <= k <= t.encode() and now - at <= max_age
                       for f, t, at in self.loaded.get(coll, []))

    def retry(self, mid: int) -> None:
        m = self.live(mid)
        if m.status == "failed":
            m.attempts = 0
            m.retry += 1
            m.position = self.next_id
            m.fresh = False
        elif m.status != "pending":
            raise Code("STATE")
        m.status = "pending"


def reopened(ref: Reference) -> None:
    """What a clean close and reopen does to the model: everything is kept, except that a
    mutation handed to the sender (inflight) comes back pending, since its send may not have
    happened."""
    for m in ref.P:
        if m.status == "inflight":
            m.status = "pending"
