"""No chosen names slow the server down: member names made to share one hash under the unkeyed
key hash of before (Tests/Adversarial/colliding_names.c) are parsed and stored like any others.
Before keys were hashed with a per-process secret, the 100,000 names below took minutes to
parse (20,000 took 3.9 s and 40,000 took 15.7 s, growing with the square); the push must now
be answered well within the request's timeout, and the server stay responsive."""

import json
import pathlib
import subprocess
import time

import pytest

from conftest import Client, http, mutation, put

ROOT = pathlib.Path(__file__).resolve().parents[2]


@pytest.fixture(scope="session")
def colliding_names(tmp_path_factory):
    """A function returning N names (JSON string bodies) that collided under the old hash."""
    exe = tmp_path_factory.mktemp("names") / "colliding_names"
    subprocess.run(["cc", "-O2", "-o", str(exe), str(ROOT / "Tests/Adversarial/colliding_names.c")], check=True)

    def names(n):
        out = subprocess.run([str(exe), str(n)], check=True, capture_output=True, text=True).stdout
        return out.split("\n")[:n]
    return names


def test_colliding_member_names_do_not_stall_a_push(server, colliding_names):
    names = colliding_names(100_000)
    value = "{" + ",".join(f'"{n}":{i}' for i, n in enumerate(names)) + "}"
    cid = "33333333-2222-3333-4444-555555555555"
    body = ('{"protocol":1,"client_id":"%s","mutations":[{"id":1,"retry":0,"ops":'
            '[{"op":"put","coll":"c","key":"flood","value":%s}]}]}' % (cid, value)).encode()
    started = time.monotonic()
    r = http("POST", server.url + "/push", body, timeout=60)
    took = time.monotonic() - started
    assert r.status == 200, r
    assert r.json["results"][0]["status"] == "ok", r
    # The record arrived whole: every name, each with its own value.
    client = Client(server)
    state = client.state()
    assert state[("c", "flood")] == {json.loads(f'"{n}"'): i for i, n in enumerate(names)}
    assert http("GET", server.url + "/health").status == 200
    print(f"push of {len(names)} colliding member names answered in {took:.2f} s")


def test_colliding_record_keys_do_not_stall_a_push(server, colliding_names):
    # The same names as record keys, spread over 10 mutations of 1,000 ops in one push.
    names = colliding_names(10_000)
    mutations = []
    for m in range(10):
        ops = [put("c", json.loads(f'"{n}"'), {"i": m * 1000 + i})
               for i, n in enumerate(names[m * 1000:(m + 1) * 1000])]
        mutations.append(mutation(m + 1, *ops))
    client = Client(server)
    r = client.push_raw(mutations)
    assert r.status == 200, r
    assert [x["status"] for x in r.json["results"]] == ["ok"] * 10
    assert len(client.state()) == len(names)
