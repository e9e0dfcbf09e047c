"""Shared spaces (protocol 2, docs/protocol.md "Shared spaces"): a collection `S/NAME` lives in the
space `S`, whose members are the records of `S/$members`; pulls carry every space a user is a
member of and drop the ones they left; writes are refused with `forbidden` where the author may
not make them."""

import json
import threading
import time

import pytest

from conftest import Client, delete, incr, mutation, patch, put


@pytest.fixture
def people(start_server, tmp_path):
    tokens = tmp_path / "tokens.json"
    names = ["alice", "bob", "carol", "dave", "erin"]
    tokens.write_text(json.dumps({f"tok-{n}": n for n in names}))
    server = start_server("--tokens", str(tokens))
    return server, {n: Member(server, n) for n in names}


class Member:
    """One device of a user speaking protocol 2: it keeps the records it pulled, applies `drop`
    before a reply's changes, and numbers its mutations."""

    def __init__(self, server, user, page_size=None):
        self.user = user
        self.client = Client(server, token=f"tok-{user}", protocol=2)
        self.records = {}
        self.cursor = None
        self.next_id = 1
        self.drops = []

    def write(self, *ops):
        """Pushes one mutation; returns its result."""
        m = mutation(self.next_id, *ops)
        self.next_id += 1
        [result] = self.client.push([m])
        return result

    def sync(self):
        """Pulls one whole round; returns its pages."""
        pages = []
        while True:
            page = self.client.pull(self.cursor)
            pages.append(page)
            if page.get("reset"):
                self.records = {}
            for space in page.get("drop", []):
                self.drops.append(space)
                for k in [k for k in self.records if k[0].startswith(space + "/")]:
                    del self.records[k]
            for c in page["changes"]:
                if c["op"] == "put":
                    self.records[(c["coll"], c["key"])] = c["value"]
                else:
                    self.records.pop((c["coll"], c["key"]), None)
            self.cursor = page["cursor"]
            if not page["more"]:
                return pages

    def space(self, name):
        return {k: v for k, v in self.records.items() if k[0].startswith(name + "/")}


def forbidden(result):
    return result["status"] == "rejected" and result["error"].startswith("forbidden")


def create_room(owner, name="room", **others):
    ops = [put(f"{name}/$members", owner.user, {"role": "owner"})]
    ops += [put(f"{name}/$members", user, {"role": role}) for user, role in others.items()]
    result = owner.write(*ops)
    assert result["status"] == "ok", result
    return result


def test_three_users_share_a_room_with_each_role(people):
    _, p = people
    alice, bob, carol, dave = p["alice"], p["bob"], p["carol"], p["dave"]
    create_room(alice, bob="writer", carol="reader")
    assert alice.write(put("room/messages", "m1", {"text": "hi", "from": "alice"}))["status"] == "ok"
    assert bob.write(put("room/messages", "m2", {"text": "hello", "from": "bob"}))["status"] == "ok"
    # A reader reads only; a non-member neither reads nor writes.
    assert forbidden(carol.write(put("room/messages", "m3", {"text": "may I?"})))
    assert forbidden(dave.write(put("room/messages", "m4", {"text": "let me in"})))
    expected = {
        ("room/$members", "alice"): {"role": "owner"}, ("room/$members", "bob"): {"role": "writer"},
        ("room/$members", "carol"): {"role": "reader"},
        ("room/messages", "m1"): {"text": "hi", "from": "alice"}, ("room/messages", "m2"): {"text": "hello", "from": "bob"},
    }
    for member in (alice, bob, carol):
        member.sync()
        assert member.space("room") == expected, member.user
    dave.sync()
    assert dave.records == {}
    # A writer may not change the members; an owner may.
    assert forbidden(bob.write(put("room/$members", "dave", {"role": "reader"})))
    assert forbidden(bob.write(put("room/$members", "bob", {"role": "owner"})))
    assert forbidden(carol.write(put("room/$members", "carol", {"role": "writer"})))
    assert alice.write(put("room/$members", "dave", {"role": "reader"}))["status"] == "ok"
    dave.sync()
    assert dave.space("room") == {**expected, ("room/$members", "dave"): {"role": "reader"}}


def test_private_spaces_stay_private(people):
    _, p = people
    alice, bob = p["alice"], p["bob"]
    create_room(alice, bob="writer")
    assert alice.write(put("notes", "n", {"secret": 1}))["status"] == "ok"
    bob.sync()
    assert ("notes", "n") not in bob.records
    alice.sync()
    assert alice.records[("notes", "n")] == {"secret": 1}


def test_creating_a_space_must_make_its_author_an_owner(people):
    _, p = people
    alice, bob = p["alice"], p["bob"]
    # Writing in a space nobody created, or creating it for someone else, is refused.
    assert forbidden(alice.write(put("club/posts", "p", {})))
    assert forbidden(alice.write(put("club/$members", "bob", {"role": "owner"})))
    assert forbidden(alice.write(put("club/$members", "alice", {"role": "writer"})))
    bob.sync()
    assert bob.records == {}
    # Creating it with its first content in the same mutation is fine.
    assert alice.write(put("club/$members", "alice", {"role": "owner"}), put("club/posts", "p", {"t": 1}))["status"] == "ok"
    alice.sync()
    assert alice.space("club") == {("club/$members", "alice"): {"role": "owner"}, ("club/posts", "p"): {"t": 1}}


def test_an_existing_space_cannot_be_claimed(people):
    _, p = people
    alice, dave = p["alice"], p["dave"]
    create_room(alice)
    for ops in ([put("room/$members", "dave", {"role": "owner"})],
                [put("room/$members", "dave", {"role": "owner"}), put("room/$members", "alice", {"role": "reader"})],
                [delete("room/$members", "alice")]):
        assert forbidden(dave.write(*ops)), ops
    alice.sync()
    assert alice.space("room") == {("room/$members", "alice"): {"role": "owner"}}


def test_roles_must_be_valid_and_a_space_keeps_an_owner(people):
    _, p = people
    alice, bob = p["alice"], p["bob"]
    create_room(alice, bob="writer")
    for value in ({"role": "admin"}, {}, {"role": 1}):
        assert forbidden(alice.write(put("room/$members", "carol", value))), value
    # The last owner can neither leave nor step down; with a second owner they can.
    assert forbidden(alice.write(delete("room/$members", "alice")))
    assert forbidden(alice.write(put("room/$members", "alice", {"role": "writer"})))
    assert alice.write(put("room/$members", "bob", {"role": "owner"}))["status"] == "ok"
    assert alice.write(delete("room/$members", "alice"))["status"] == "ok"
    bob.sync()
    assert ("room/$members", "alice") not in bob.records
    # An op that is not a put still ends in a value the rules check.
    assert forbidden(bob.write(patch("room/$members", "bob", {"role": "boss"})))
    assert bob.write(patch("room/$members", "bob", {"name": "Bob"}))["status"] == "ok"


def test_reserved_names_are_refused(people):
    _, p = people
    alice = p["alice"]
    assert forbidden(alice.write(put("$sys/$members", "alice", {"role": "owner"})))
    create_room(alice)
    assert forbidden(alice.write(put("room/$settings", "k", {})))
    # A private collection whose name starts with $ is not a space's.
    assert alice.write(put("$private", "k", {}))["status"] == "ok"


def test_a_mutation_is_all_or_nothing_across_spaces(people):
    _, p = people
    alice, bob = p["alice"], p["bob"]
    create_room(alice, bob="reader")
    assert forbidden(bob.write(put("mine", "k", {"v": 1}), put("room/messages", "m", {})))
    bob.sync()
    assert ("mine", "k") not in bob.records
    # Private and shared in one mutation, when allowed, apply together.
    assert alice.write(put("mine", "k", {"v": 1}), put("room/messages", "m", {"v": 2}))["status"] == "ok"
    alice.sync()
    assert alice.records[("mine", "k")] == {"v": 1} and alice.records[("room/messages", "m")] == {"v": 2}


def test_a_removed_member_is_dropped_and_gets_nothing_later(people):
    _, p = people
    alice, bob = p["alice"], p["bob"]
    create_room(alice, bob="writer")
    assert bob.write(put("room/messages", "m1", {"text": "one"}))["status"] == "ok"
    bob.sync()
    assert bob.space("room")
    before = bob.cursor
    assert alice.write(delete("room/$members", "bob"))["status"] == "ok"
    assert alice.write(put("room/messages", "m2", {"text": "after bob left"}))["status"] == "ok"
    # Bob's pending write, sent after the removal, is refused.
    assert forbidden(bob.write(put("room/messages", "m3", {"text": "still here?"})))
    [page] = bob.sync()
    assert page["drop"] == ["room"]
    assert not any(c["coll"].startswith("room/") for c in page["changes"])
    assert bob.space("room") == {}
    # Later changes never reach him, and the drop is said once.
    assert alice.write(put("room/messages", "m4", {"text": "later"}))["status"] == "ok"
    [page] = bob.sync()
    assert "drop" not in page and page["changes"] == []
    # His old cursor, sent again, still drops the space rather than sending it.
    again = bob.client.pull(before)
    assert again["drop"] == ["room"] and again["changes"] == []


def test_leaving_drops_the_space(people):
    _, p = people
    alice, carol = p["alice"], p["carol"]
    create_room(alice, carol="reader")
    carol.sync()
    assert carol.write(delete("room/$members", "carol"))["status"] == "ok"
    [page] = carol.sync()
    assert page["drop"] == ["room"] and carol.space("room") == {}
    alice.sync()
    assert ("room/$members", "carol") not in alice.records


def test_joining_brings_the_whole_space_with_its_history(people):
    _, p = people
    alice, erin = p["alice"], p["erin"]
    create_room(alice)
    for i in range(30):
        assert alice.write(put("room/messages", f"m{i:02}", {"n": i}))["status"] == "ok"
    assert alice.write(delete("room/messages", "m00"))["status"] == "ok"
    assert erin.write(put("own", "k", {}))["status"] == "ok"
    erin.sync()
    assert erin.space("room") == {}
    assert alice.write(put("room/$members", "erin", {"role": "reader"}))["status"] == "ok"
    erin.sync()
    assert erin.space("room") == {k: v for k, v in alice.sync() and alice.space("room").items()}
    assert len([k for k in erin.space("room") if k[0] == "room/messages"]) == 29
    # Removed and added again: the space comes again whole.
    assert alice.write(delete("room/$members", "erin"))["status"] == "ok"
    erin.sync()
    assert erin.space("room") == {}
    assert alice.write(put("room/$members", "erin", {"role": "writer"}))["status"] == "ok"
    erin.sync()
    assert len([k for k in erin.space("room") if k[0] == "room/messages"]) == 29


def test_pages_fill_from_several_spaces(start_server, tmp_path):
    tokens = tmp_path / "tokens.json"
    tokens.write_text(json.dumps({"tok-alice": "alice", "tok-bob": "bob"}))
    server = start_server("--tokens", str(tokens), "--page-size", "4")
    alice, bob = Member(server, "alice"), Member(server, "bob")
    expected = {}
    for space in ("a", "b", "c"):
        create_room(alice, space, bob="writer")
        for i in range(5):
            assert alice.write(put(f"{space}/x", str(i), {"i": i}))["status"] == "ok"
            expected[(f"{space}/x", str(i))] = {"i": i}
    for i in range(3):
        assert bob.write(put("own", str(i), {}))["status"] == "ok"
    pages = bob.sync()
    assert len(pages) >= 5 and all(len(p["changes"]) <= 4 for p in pages)
    assert {k: v for k, v in bob.records.items() if k[1] != "bob" and not k[0].endswith("$members")} == \
        {**expected, **{("own", str(i)): {} for i in range(3)}}
    # Nothing new: one empty page.
    assert [p["changes"] for p in bob.sync()] == [[]]


def test_protocol_1_clients_see_and_write_their_private_space_only(people):
    server, p = people
    alice = p["alice"]
    create_room(alice)
    assert alice.write(put("room/messages", "shared", {}))["status"] == "ok"
    old = Client(server, token="tok-alice")  # protocol 1
    assert old.state() == {}
    # Under protocol 1, room/messages is a private collection of that name.
    assert old.push([mutation(1, put("room/messages", "private", {}))])[0]["status"] == "ok"
    assert old.state() == {("room/messages", "private"): {}}
    bob = Member(server, "bob")
    assert alice.write(put("room/$members", "bob", {"role": "reader"}))["status"] == "ok"
    bob.sync()
    assert ("room/messages", "private") not in bob.records and ("room/messages", "shared") in bob.records


def test_cursors_of_one_protocol_reset_the_other(people):
    server, p = people
    alice = p["alice"]
    assert alice.write(put("own", "k", {}))["status"] == "ok"
    old = Client(server, token="tok-alice")
    v1 = old.pull()["cursor"]
    v2 = alice.client.pull()["cursor"]
    assert alice.client.pull(v1).get("reset") is True
    assert old.pull(v2).get("reset") is True
    for garbled in (v2 + ",zz:1", v2.replace(".2.", ".2.x"), v2 + ",6162:1,6162:2"):
        assert alice.client.pull(garbled).get("reset") is True, garbled


def test_replayed_mutation_after_leaving_is_answered_without_the_space(people):
    _, p = people
    alice, bob = p["alice"], p["bob"]
    create_room(alice, bob="writer")
    m = mutation(1, put("room/messages", "m", {"v": 1}))
    [first] = bob.client.push([m])
    assert first["status"] == "ok" and first["ops"]
    assert alice.write(delete("room/$members", "bob"))["status"] == "ok"
    [again] = bob.client.push([m])
    assert again["status"] == "ok" and "ops" not in again


def test_pushes_to_one_space_from_many_users_serialize(people):
    """Eight devices of four users write one space at once: every write lands once, every
    member ends with the same records."""
    server, p = people
    alice = p["alice"]
    create_room(alice, bob="writer", carol="writer", erin="owner")
    writers = [Member(server, u) for u in ("alice", "bob", "carol", "erin") for _ in range(2)]
    errors = []

    def run(n, w):
        try:
            w.next_id = 1000 * (n + 1)
            for i in range(20):
                r = w.write(put("room/log", f"{n}-{i}", {"n": n, "i": i}), incr("room/counts", "all", "n", 1))
                assert r["status"] == "ok", r
        except Exception as e:  # noqa: BLE001
            errors.append(e)

    threads = [threading.Thread(target=run, args=(n, w)) for n, w in enumerate(writers)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert not errors, errors
    states = []
    for u in ("alice", "bob", "carol", "erin"):
        m = Member(server, u)
        m.sync()
        states.append(m.space("room"))
    assert all(s == states[0] for s in states)
    assert states[0][("room/counts", "all")] == {"n": 160}
    assert len([k for k in states[0] if k[0] == "room/log"]) == 160


def test_different_spaces_push_in_parallel(db, people):
    """A push waits for the spaces it writes only: with one space's row locked by another
    session, a push to that space waits while pushes to another space go through."""
    if db.kind != "postgres":
        pytest.skip("holds a row lock from a second PostgreSQL session")
    from test_limits import hold_space_lock

    _, p = people
    alice, bob, carol = p["alice"], p["bob"], p["carol"]
    create_room(alice, "red", carol="writer")
    create_room(alice, "blue", bob="writer")
    release = hold_space_lock(db, None, space="red")
    waiting = {}

    def carol_writes():
        waiting["result"] = carol.write(put("red/x", "1", {}))

    t = threading.Thread(target=carol_writes)
    try:
        t.start()
        t.join(1.5)
        assert t.is_alive(), "a push to a locked space went through"
        # Another space, another user: not held up.
        start = time.monotonic()
        assert bob.write(put("blue/x", "1", {}))["status"] == "ok"
        assert time.monotonic() - start < 10
    finally:
        release()
    t.join(30)
    assert waiting["result"]["status"] == "ok"
