"""Concurrent clients, and several server processes on one database: exact totals, every pair
applied once, each client's mutations in order."""

import threading

from conftest import Client, http, incr, mutation

BATCH = 5


def run_threads(targets):
    errors = []

    def guard(fn):
        def run():
            try:
                fn()
            except BaseException as e:  # noqa: BLE001 - reported below
                errors.append(e)
        return run

    threads = [threading.Thread(target=guard(t)) for t in targets]
    for t in threads:
        t.start()
    for t in threads:
        t.join(300)
    assert not any(t.is_alive() for t in threads), "a client thread hung"
    if errors:
        raise errors[0]


def send_all(server, client_id, count, answers, lock):
    """Sends mutations 1..count of `client_id` in order, as a client does: a mutation only after
    every earlier one is answered; a transient refusal (503, "retry") sends the rest again."""
    c = Client(server, client_id=client_id)
    next_id = 1
    while next_id <= count:
        batch = [mutation(i, incr("counters", "total", "n", 1), incr("counters", client_id, "n", 1))
                 for i in range(next_id, min(count, next_id + BATCH - 1) + 1)]
        r = c.push_raw(batch)
        if r.status == 503:
            continue
        assert r.status == 200, r
        for result in r.json["results"]:
            assert result["id"] == next_id, "answers come in send order"
            if result["status"] == "retry":
                break
            assert result["status"] == "ok", result
            with lock:
                answers.append((client_id, result))
            next_id += 1


def check_answers(answers, clients, count):
    for client_id, result in answers:
        [mine] = [op for op in result["ops"] if op["key"] == client_id]
        # Processed in order and once: after mutation k of a client its counter is at least k
        # (exactly k when answered fresh; a re-sent pair reports the current, later value).
        assert mine["value"]["n"] >= result["id"], (client_id, result)
        assert mine["value"]["n"] <= count
    for client_id in clients:
        fresh = sorted({r["id"] for c, r in answers if c == client_id})
        assert fresh == list(range(1, count + 1))


def test_concurrent_clients_incr_exact_totals(server):
    clients = [f"client-{i}" for i in range(8)]
    count = 30
    answers, lock = [], threading.Lock()
    run_threads([lambda cid=cid: send_all(server, cid, count, answers, lock) for cid in clients])
    state = Client(server).state()
    assert state[("counters", "total")] == {"n": len(clients) * count}
    for cid in clients:
        assert state[("counters", cid)] == {"n": count}
    check_answers(answers, clients, count)


def test_two_server_processes_with_resends_apply_each_pair_once(db, start_server):
    """Two processes on one database; every client id is sent by two threads at once, one per
    server (a re-send of each pair racing the original): each pair takes effect exactly once."""
    a = start_server()
    b = start_server()
    clients = [f"dup-{i}" for i in range(4)]
    count = 25
    answers, lock = [], threading.Lock()
    targets = []
    for cid in clients:
        targets.append(lambda cid=cid: send_all(a, cid, count, answers, lock))
        targets.append(lambda cid=cid: send_all(b, cid, count, answers, lock))
    run_threads(targets)
    for server in (a, b):
        state = Client(server).state()
        assert state[("counters", "total")] == {"n": len(clients) * count}
        for cid in clients:
            assert state[("counters", cid)] == {"n": count}
    check_answers(answers, clients, count)
    # Both processes answer every pair as ok, from the record.
    for cid in clients:
        outcomes = Client(b, client_id=cid).pull(unacked=range(1, count + 1))["outcomes"]
        assert [o["id"] for o in outcomes] == list(range(1, count + 1))
        assert all(o["status"] == "ok" for o in outcomes)
    assert http("GET", a.url + "/health").status == 200
