"""A server (or anyone on an http:// path) cannot hang a client's pull with chosen names.

The names come from Tests/Adversarial/colliding_names.c: they all shared one hash under the
unkeyed key hash the library used before its keys were hashed with a per-process secret, which
made parsing a pull reply that held them quadratic (100,000 such member names: minutes). The
pull must now apply within the deadline, which only a hang or a quadratic blow-up reaches.
"""

import json
import pathlib
import shutil
import subprocess

import pytest

ROOT = pathlib.Path(__file__).resolve().parents[3]
DEADLINE = 60.0


@pytest.fixture(scope="module")
def colliding_names(tmp_path_factory):
    cc = shutil.which("cc") or shutil.which("gcc") or shutil.which("clang")
    if cc is None:
        pytest.skip("no C compiler to build Tests/Adversarial/colliding_names.c")
    exe = tmp_path_factory.mktemp("names") / "colliding_names"
    subprocess.run([cc, "-O2", "-o", str(exe), str(ROOT / "Tests/Adversarial/colliding_names.c")], check=True)

    def names(n):
        out = subprocess.run([str(exe), str(n)], check=True, capture_output=True, text=True).stdout
        return [json.loads(f'"{line}"') for line in out.split("\n")[:n]]
    return names


def test_a_pull_of_colliding_member_names_applies(store, colliding_names):
    names = colliding_names(100_000)
    record = {name: i for i, name in enumerate(names)}
    reply = json.dumps({"cursor": "1", "more": False, "outcomes": [],
                        "changes": [{"op": "put", "coll": "c", "key": "flood", "value": record}]})

    def transport(endpoint, url, body, headers, timeout_ms):
        if endpoint == "pull":
            return 200, reply
        return 200, json.dumps({"results": []})

    store.sync_start(transport=transport, pull_interval_ms=0, backoff_base_ms=5, backoff_max_ms=50)
    assert store.sync_wait_idle(DEADLINE), store.sync_status()
    assert store.confirmed("c", "flood") == record


def test_colliding_record_keys_apply(store, colliding_names):
    keys = colliding_names(20_000)
    reply = json.dumps({"cursor": "1", "more": False, "outcomes": [],
                        "changes": [{"op": "put", "coll": "c", "key": k, "value": {"i": i}} for i, k in enumerate(keys)]})

    def transport(endpoint, url, body, headers, timeout_ms):
        return (200, reply) if endpoint == "pull" else (200, json.dumps({"results": []}))

    store.sync_start(transport=transport, pull_interval_ms=0, backoff_base_ms=5, backoff_max_ms=50)
    assert store.sync_wait_idle(DEADLINE), store.sync_status()
    assert store.get("c", keys[-1]) == {"i": len(keys) - 1}
    assert len(store.scan("c")) == len(keys)
