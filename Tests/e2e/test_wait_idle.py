"""sync_wait_idle and the idle state on a link slower than the pull interval.

docs/sync.md: "sync_wait_idle(timeout) returns true once nothing is pending or inflight (failed
mutations excepted) and a pull has completed after the last push", and the sync pulls "every
pull_interval_ms". Here each exchange goes through the proxy with a delay each way, so a pull
takes longer than the pull interval (a phone 60 ms from its server, pulling every 100 ms).
Pulls complete one after another (the state goes back to "idle" after each) and the mutation
is committed, so wait_idle must say so.
"""

import time

import pytest

import optimist

CASES = [
    # (pull_interval_ms, proxy delay each way in ms): a pull takes about twice the delay.
    (1000, 60),   # pulls faster than the interval: the baseline
    (100, 60),
]
WAIT_S = 5


@pytest.mark.parametrize("interval_ms,delay_ms", CASES, ids=[f"every {i} ms, {d} ms each way" for i, d in CASES])
def test_wait_idle_when_a_pull_takes_longer_than_the_interval(server, proxy, interval_ms, delay_ms):
    proxy.set_mode("delay", delay_ms=delay_ms)
    store = optimist.Store()
    states = []
    try:
        store.sync_start(proxy.url, pull_interval_ms=interval_ms, on_status=lambda s: states.append(s["state"]))
        mid = store.mutate([optimist.incr("c", "k", "n", 1)])
        started = time.monotonic()
        idle = store.sync_wait_idle(WAIT_S)
        waited = time.monotonic() - started
        status = store.sync_status()
        committed = store.status(mid)
    finally:
        store.close()
    assert committed == "committed", status
    pulls = sum(1 for e in proxy.snapshot() if e.kind == "pull_answered")
    assert idle, (f"sync_wait_idle({WAIT_S}) gave up after {waited:.1f} s though mutation {mid} is {committed}, nothing is "
                  f"pending and {pulls} pulls completed; status {status}; the state was 'idle' "
                  f"{states.count('idle')} times in {len(states)} changes, the last ones {states[-6:]}")
