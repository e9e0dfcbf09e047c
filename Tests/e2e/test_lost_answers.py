"""A push whose answer the client never gets whole, though the server applied it.

docs/sync.md, "Lost answers": when a push gets no answer the server may have applied it, so the
next exchange is a pull naming those ids as `unacked`, and the server's outcomes end them:
"Nothing is sent twice to a server that applied it". The state meanwhile is `offline` (no
answer) or `backoff` (5xx), never `error` (which says the server spoke something that is not
the protocol).

Each case lets the server apply one push and then spoils its answer on the way back (the
proxy closes the connection before the answer, inside its status line, inside its headers,
inside its body, or answers 502 instead), once; after that the proxy passes everything. The
client must then pull (with the mutation in `unacked`) before it pushes again, never push the
mutation again, end with the mutation committed, and the server's counter must be 1.
"""

import time

import pytest

import optimist

CASES = {
    "reset before the answer": dict(mode="drop_before", close="rst"),
    "closed before the answer": dict(mode="drop_before", close="fin"),
    "closed inside the status line": dict(mode="drop_mid", cut="status", close="fin"),
    # curl takes a reply that ends after its status line for a complete one: HTTP 200 with an
    # empty body (CURLE_OK), as long as no Content-Length said more was coming.
    "closed right after the status line": dict(mode="drop_mid", cut="after-status", close="fin"),
    "reset right after the status line": dict(mode="drop_mid", cut="after-status", close="rst"),
    "closed inside the body": dict(mode="drop_mid", cut="body", close="fin"),
    "502 from a gateway": dict(mode="error_after"),
}


@pytest.mark.parametrize("case", list(CASES))
def test_a_push_answer_lost_on_the_way_back_is_resolved_by_a_pull(server, proxy, case):
    spec = dict(CASES[case])
    mode = spec.pop("mode")
    proxy.set_mode(mode, endpoints=("push",), count=1, **spec)
    states = []
    store = optimist.Store()
    try:
        store.sync_start(proxy.url, pull_interval_ms=0, timeout_ms=3000, backoff_base_ms=20, backoff_max_ms=100,
                         on_status=lambda s: states.append((s["state"], s["last_error"])))
        mid = store.mutate([optimist.incr("c", "total", "n", 1)])
        assert store.sync_wait_idle(30), store.sync_status()
        assert store.status(mid) == "committed"
        assert store.confirmed("c", "total") == {"n": 1}
    finally:
        store.close()
    assert server.everything() == {("c", "total"): {"n": 1}}

    events = [e for e in proxy.snapshot() if not e.late]
    oks = [e for e in events if e.kind == "push_answered" and e.statuses.get(mid) == "ok"]
    assert oks, f"the server never answered the push: {events}"
    first_ok = oks[0]
    assert first_ok.delivery and first_ok.delivery.startswith(mode), \
        f"the proxy did not spoil the answer as asked ({first_ok.delivery})"
    after = [e for e in events if e.at > first_ok.at and e.kind in ("push_sent", "pull_sent")]
    assert after, "the client sent nothing after the lost answer"
    assert after[0].kind == "pull_sent" and mid in after[0].ids, (
        f"after a push answer it never got whole ({first_ok.delivery}), the client's next request was "
        f"{after[0]} instead of a pull with mutation {mid} in unacked; its states: {states}")
    bad = proxy.violations()
    assert not bad, "\n".join(bad)
    errors = [s for s in states if s[0] == "error"]
    assert not errors, f"a lost answer ({first_ok.delivery}) reported as state error: {errors}"
