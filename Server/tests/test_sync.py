"""Push and pull semantics: exactly once, rejections, retries, refusal rules, cursors, outcomes."""

from conftest import Client, cursor_seq, delete, http, incr, mutation, patch, put


def test_health(server):
    r = http("GET", server.url + "/health")
    assert r.status == 200 and r.json == {"status": "ok"}


def test_push_then_pull_with_null_cursor(server):
    c = Client(server)
    results = c.push([
        mutation(1, put("todos", "a", {"title": "A", "done": False})),
        mutation(2, patch("todos", "a", {"done": True}), put("todos", "b", {"title": "B"})),
        mutation(3, delete("todos", "b")),
    ])
    assert results == [
        {"id": 1, "status": "ok", "ops": [put("todos", "a", {"title": "A", "done": False})]},
        {"id": 2, "status": "ok", "ops": [put("todos", "a", {"title": "A", "done": True}), put("todos", "b", {"title": "B"})]},
        {"id": 3, "status": "ok", "ops": [delete("todos", "b")]},
    ]
    page = Client(server).pull(None)
    assert page["more"] is False
    assert isinstance(page["cursor"], str) and cursor_seq(page["cursor"]) == 3
    assert page["outcomes"] == []
    changes = {(ch["coll"], ch["key"]): ch for ch in page["changes"]}
    assert changes[("todos", "a")] == put("todos", "a", {"title": "A", "done": True})
    assert changes[("todos", "b")] == delete("todos", "b")
    # Nothing new since the cursor: no changes, the same cursor.
    again = Client(server).pull(page["cursor"])
    assert again["changes"] == [] and again["cursor"] == page["cursor"] and again["more"] is False


def test_pull_from_a_cursor_returns_only_later_changes(server):
    c = Client(server)
    c.push([mutation(1, put("n", "x", {"v": 1}))])
    cursor = c.pull()["cursor"]
    c.push([mutation(2, put("n", "y", {"v": 2})), mutation(3, incr("n", "x", "v", 5))])
    page = c.pull(cursor)
    assert [(ch["key"], ch["value"]) for ch in page["changes"]] == [("y", {"v": 2}), ("x", {"v": 6})]
    assert cursor_seq(page["cursor"]) > cursor_seq(cursor)


def test_idempotent_repush_has_one_effect_and_the_same_answer(server):
    c = Client(server)
    m = mutation(7, incr("counters", "c", "n", 1), put("log", "l", {"last": 7}))
    first = c.push([m])
    second = c.push([m])
    assert first == second
    assert first[0]["status"] == "ok"
    assert c.state()[("counters", "c")] == {"n": 1}


def test_incr_is_applied_once_whatever_the_resends(server):
    c = Client(server)
    m = mutation(1, incr("counters", "c", "n", 2.5))
    c.push([m])
    c.push([m, m])
    assert c.push([m]) == [{"id": 1, "status": "ok", "ops": [put("counters", "c", {"n": 2.5})]}]
    assert c.state()[("counters", "c")] == {"n": 2.5}
    # Another client's mutation with the same id is a different pair.
    Client(server).push([m])
    assert c.state()[("counters", "c")] == {"n": 5}


def test_resent_ok_answers_with_current_values(server):
    """A late duplicate answer carries the record as it is now, never an older value."""
    c = Client(server)
    c.push([mutation(1, put("r", "k", {"v": 1}))])
    c.push([mutation(2, put("r", "k", {"v": 2}))])
    assert c.push([mutation(1, put("r", "k", {"v": 1}))])[0]["ops"] == [put("r", "k", {"v": 2})]


def test_incr_on_a_string_rejects_the_whole_mutation(server):
    c = Client(server)
    c.push([mutation(1, put("items", "i", {"name": "x"}))])
    results = c.push([mutation(2, put("items", "other", {"a": 1}), incr("items", "i", "name", 1))])
    assert results[0]["id"] == 2 and results[0]["status"] == "rejected"
    assert "not a number" in results[0]["error"]
    assert "ops" not in results[0]
    state = c.state()
    assert ("items", "other") not in state  # all or nothing
    assert state[("items", "i")] == {"name": "x"}


def test_later_ops_see_earlier_ops_of_the_same_mutation(server):
    c = Client(server)
    results = c.push([mutation(1, put("a", "k", {"n": 1}), incr("a", "k", "n", 2), patch("a", "k", {"m": True}))])
    assert results[0]["ops"] == [put("a", "k", {"n": 3, "m": True})]


def test_rejected_is_answered_again_until_retried_with_a_higher_retry(server):
    c = Client(server)
    c.push([mutation(1, put("items", "i", {"count": "many"}))])
    bad = [incr("items", "i", "count", 1)]
    r0 = c.push([mutation(2, *bad, retry=0)])
    assert r0[0]["status"] == "rejected"
    # Make the mutation applicable; a re-send at the same retry still gets the recorded rejection.
    c.push([mutation(3, put("items", "i", {"count": 10}))])
    assert c.push([mutation(2, *bad, retry=0)]) == r0
    assert c.state()[("items", "i")] == {"count": 10}
    # The user pressed retry: processed again.
    r1 = c.push([mutation(2, *bad, retry=1)])
    assert r1 == [{"id": 2, "status": "ok", "ops": [put("items", "i", {"count": 11})]}]
    # Now ok is recorded: any retry count gets ok, with no second effect.
    c.push([mutation(2, *bad, retry=5)])
    c.push([mutation(2, *bad, retry=0)])
    assert c.state()[("items", "i")] == {"count": 11}
    outcome = c.pull(unacked=[2])["outcomes"]
    assert outcome == [{"id": 2, "status": "ok", "retry": 1}]


def test_refusal_rules(start_server):
    server = start_server("--refuse", "locked", "--refuse", "todos/admin-=admins are read-only")
    c = Client(server)
    results = c.push([
        mutation(1, put("locked", "anything", {"x": 1})),
        mutation(2, put("todos", "admin-1", {"x": 1})),
        mutation(3, put("todos", "user-1", {"x": 1}), put("todos", "admin-2", {"x": 1})),
        mutation(4, put("todos", "user-1", {"x": 1})),
    ])
    assert results[0] == {"id": 1, "status": "rejected", "error": "refused by rule: locked"}
    assert results[1] == {"id": 2, "status": "rejected", "error": "refused by rule: admins are read-only"}
    assert results[2]["status"] == "rejected"  # one op on a refused key refuses the mutation
    assert results[3]["status"] == "ok"
    assert c.state() == {("todos", "user-1"): {"x": 1}}


def test_paging_with_a_small_page_size(start_server):
    server = start_server("--page-size", "2")
    c = Client(server)
    c.push([mutation(i, put("p", f"k{i}", {"i": i})) for i in range(1, 6)])
    # One mutation writing three records: a page never splits it (it travels alone, being
    # more than a page).
    c.push([mutation(6, put("p", "m1", {}), put("p", "m2", {}), put("p", "m3", {}))])
    c.push([mutation(7, put("p", "last", {}))])
    pages, cursor = [], None
    while True:
        page = c.pull(cursor, unacked=[1, 6, 99])
        pages.append(page)
        if page["more"]:
            assert page["outcomes"] == []  # outcomes only on the last page
        cursor = page["cursor"]
        if not page["more"]:
            break
    assert [len(p["changes"]) for p in pages] == [2, 2, 1, 3, 1]
    assert pages[0]["more"] is True
    keys = [ch["key"] for p in pages for ch in p["changes"]]
    assert keys == ["k1", "k2", "k3", "k4", "k5", "m1", "m2", "m3", "last"]
    assert pages[-1]["outcomes"] == [{"id": 1, "status": "ok", "retry": 0}, {"id": 6, "status": "ok", "retry": 0}]
    assert c.pull(cursor)["changes"] == []


def test_outcomes_only_for_processed_unacked_ids(server):
    c = Client(server)
    c.push([mutation(1, put("o", "a", {"s": "x"}))])
    c.push([mutation(2, incr("o", "a", "s", 1), retry=3)])
    page = c.pull(unacked=[1, 2, 3, 2])
    assert page["outcomes"] == [
        {"id": 1, "status": "ok", "retry": 0},
        {"id": 2, "status": "rejected", "retry": 3, "error": page["outcomes"][1]["error"]},
    ]
    assert "not a number" in page["outcomes"][1]["error"]
    # Another client's ids are not this client's outcomes.
    assert Client(server).pull(unacked=[1, 2])["outcomes"] == []


def test_deleting_and_recreating(server):
    c = Client(server)
    c.push([mutation(1, put("d", "k", {"v": 1}))])
    cursor = c.pull()["cursor"]
    assert c.push([mutation(2, delete("d", "k"))])[0]["ops"] == [delete("d", "k")]
    assert c.pull(cursor)["changes"] == [delete("d", "k")]
    assert c.push([mutation(3, incr("d", "k", "v", 1))])[0]["ops"] == [put("d", "k", {"v": 1})]
    assert c.state() == {("d", "k"): {"v": 1}}


def test_a_cursor_from_another_database_starts_over(server):
    c = Client(server)
    c.push([mutation(1, put("z", "k", {}))])
    page = c.pull("999999")
    assert page["changes"] == [put("z", "k", {})]
    assert page["reset"] is True
